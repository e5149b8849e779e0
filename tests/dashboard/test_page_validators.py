"""The validators page against the validators cycles' assessments and the weights the gate
uses now."""

from datetime import UTC, date, datetime, timedelta

import pytest
from django.test import Client

from gating.models import Validator
from gating.roles import Role
from learning.cycles import cycle_run
from learning.models import ValidatorAssessment
from simulator import run, world
from tests.factories import TaskTypeFactory, UserFactory

pytestmark = pytest.mark.django_db

START = date(2026, 3, 2)
RANGE = "?range=custom&since=2026-03-01&until=2026-03-10"


@pytest.fixture
def assessed():
    """A simulated day of summaries with plenty of verdicts, then two validators cycles six
    hours apart, so that each validator has a history of two."""
    config = world.SimulationConfig(
        seed=5,
        days=1,
        outputs_per_day=600,
        start=START,
        task_types=(world.TaskType("summarize", requires_fact_check=True),),
    )
    run.simulation_run(config, reviews_per_hour=40, live_days=0)
    end = datetime.combine(START + timedelta(days=1), datetime.min.time(), UTC)
    return [cycle_run("validators", end), cycle_run("validators", end + timedelta(hours=6))]


def _get(user, query=RANGE):
    client = Client()
    client.force_login(user)
    return client.get("/dashboard/validators/" + query)


def test_the_charts_are_the_assessments(assessed):
    response = _get(UserFactory(role=Role.LEAD), RANGE + "&task_type=summarize")
    assert response.status_code == 200
    context = response.context
    latest = ValidatorAssessment.objects.filter(cycle=assessed[-1]).select_related("validator")
    assert latest.count() >= 3
    importance = context["importance"]["data"]
    drawn = dict(zip(importance[0]["y"], importance[0]["x"], strict=True))
    assert drawn == {a.validator.name: pytest.approx(a.importance) for a in latest}
    weights_now = dict(zip(importance[1]["y"], importance[1]["x"], strict=True))
    assert weights_now == dict(
        Validator.objects.filter(task_type__name="summarize").values_list("name", "weight")
    )
    for chart, field in (("accuracy", "accuracy"), ("weights", "new_weight")):
        series = {t["name"]: t["y"] for t in context[chart]["data"]}
        for name, values in series.items():
            expected = ValidatorAssessment.objects.filter(validator__name=name).order_by(
                "cycle__window_end"
            )
            assert values == [pytest.approx(getattr(a, field)) for a in expected]
    assert "task-type-note" not in response.content.decode()


def test_with_no_task_type_chosen_the_first_is_shown_and_said(assessed):
    TaskTypeFactory(name="translate")
    response = _get(UserFactory(role=Role.LEAD))
    assert response.context["task_type"] == "summarize"
    page = response.content.decode()
    assert 'id="task-type-note"' in page
    assert "these charts show summarize, the first by name" in page


@pytest.mark.parametrize(
    ("role", "status"),
    [(Role.GATEWAY, 403), (Role.REVIEWER, 403), (Role.LEAD, 200), (Role.ADMIN, 200)],
)
def test_the_roles(db, role, status):
    assert _get(UserFactory(role=role)).status_code == status


def test_a_bad_filter_is_a_400_that_names_it(db):
    response = _get(UserFactory(role=Role.LEAD), "?task_type=nothing")
    assert response.status_code == 400
    assert 'data-field="task_type"' in response.content.decode()


def test_an_empty_range_says_so(assessed):
    response = _get(UserFactory(role=Role.LEAD), "?range=custom&since=2020-01-01&until=2020-01-02")
    assert response.status_code == 200
    assert response.context["importance"] is None
    assert "No data in this range." in response.content.decode()
