"""The run command's demo: accounts and simulated traffic on an empty database only."""

import json
from datetime import UTC, datetime

import pytest
import time_machine
from django.contrib.auth import get_user_model
from django.core.management import call_command

from dashboard.demo import DEMO_SCORERS
from gating.models import Output, Review, ReviewItem
from learning.models import CycleRun, SimulatedTruth

# Slow (seeds the demo): `make check` leaves it out.
pytestmark = [pytest.mark.slow, pytest.mark.django_db]


@pytest.fixture
def var_dir(settings, tmp_path):
    settings.VAR_DIR = tmp_path
    return tmp_path


# A Wednesday afternoon: the demo's three days are Monday, Tuesday and Wednesday so far.
NOW = datetime(2026, 3, 4, 15, 30, tzinfo=UTC)
WEDNESDAY = datetime(2026, 3, 4, tzinfo=UTC)


def test_an_empty_database_gets_accounts_and_traffic_up_to_the_last_hour(var_dir, capsys):
    with time_machine.travel(NOW):
        call_command("demo_setup", "--days", "3", "--outputs-per-day", "120", "--verbosity", "0")

    users = set(get_user_model().objects.values_list("username", flat=True))
    assert {"admin", "lead", "reviewer", "gateway"} <= users
    # Monday and Tuesday whole, Wednesday until 15:00, when its last whole hour ended.
    assert Output.objects.filter(created_at__lt=WEDNESDAY).count() == 2 * 120
    today = Output.objects.filter(created_at__gte=WEDNESDAY)
    assert 0 < today.count() < 120
    assert today.latest("created_at").created_at < NOW.replace(minute=0)
    assert SimulatedTruth.objects.count() == Output.objects.count()
    assert ReviewItem.objects.exists()
    # Nothing in the future: the reviewers worked Wednesday morning live, until now.
    assert Review.objects.filter(decided_at__gte=WEDNESDAY).exists()
    assert Review.objects.latest("decided_at").decided_at <= NOW
    assert CycleRun.objects.exists()
    assert CycleRun.objects.order_by("window_end").last().window_end <= NOW
    # The agent task types are scored by their own scorers, the others shadowing them.
    for name, scorer in DEMO_SCORERS.items():
        outputs = Output.objects.filter(task_type__name=name)
        assert outputs.exists()
        assert set(outputs.values_list("scorer", flat=True)) == {f"{scorer}-v1"}
        assert all(
            "validators" in shadow for shadow in outputs.values_list("shadow_scores", flat=True)
        )
    assert Output.objects.filter(
        task_type__name="claim_check", interval_lower__isnull=False
    ).exists()
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
