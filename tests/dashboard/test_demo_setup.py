"""The run command's demo: accounts and simulated traffic on an empty database only."""

import json

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command

from gating.models import Output, ReviewItem
from learning.models import SimulatedTruth

pytestmark = pytest.mark.django_db


@pytest.fixture
def var_dir(settings, tmp_path):
    settings.VAR_DIR = tmp_path
    return tmp_path


def test_an_empty_database_gets_accounts_and_traffic(var_dir, capsys):
    call_command("demo_setup", "--days", "3", "--outputs-per-day", "120", "--verbosity", "0")

    users = set(get_user_model().objects.values_list("username", flat=True))
    assert {"admin", "lead", "reviewer", "gateway"} <= users
    assert Output.objects.count() == 360
    assert SimulatedTruth.objects.count() == 360
    assert ReviewItem.objects.exists()
    saved = json.loads((var_dir / "demo-credentials.json").read_text())
    printed = capsys.readouterr().out
    assert saved["passwords"]["admin"] in printed
    assert saved["token"] in printed
    assert "http://127.0.0.1:8000" in printed


def test_a_database_with_data_is_left_alone(var_dir):
    call_command("demo_setup", "--days", "1", "--outputs-per-day", "50", "--verbosity", "0")
    before = Output.objects.count()

    call_command("demo_setup", "--days", "1", "--outputs-per-day", "50", "--verbosity", "0")

    assert Output.objects.count() == before
    assert get_user_model().objects.filter(username="admin").count() == 1
