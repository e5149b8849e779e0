"""The registry's promises: the validators scorer's label is the one the gate records, and
a task type naming a scorer this version does not have still gets its outputs scored."""

import pytest

from gating import scorers, scoring
from gating.models import Output
from tests.factories import SubmissionFactory, TaskTypeFactory


def test_the_validators_label_is_the_gates():
    assert scorers.label(scorers.REGISTRY[scorers.DEFAULT]) == scoring.SCORER_NAME


@pytest.mark.django_db
def test_a_scorer_that_is_gone_gives_way_to_validators(gateway_api):
    TaskTypeFactory(name="old", scorer="retired_scorer")
    response = gateway_api.post(
        "/api/v1/outputs/", SubmissionFactory(task_type="old"), format="json"
    )
    assert response.status_code == 201
    data = response.json()
    assert data["scorer"] == scoring.SCORER_NAME
    assert data["reasons"][0].startswith("This task type's scorer is not in this version")
    assert Output.objects.count() == 1
