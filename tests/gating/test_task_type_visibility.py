"""A gateway sees the task types it submits to and those an admin shared, and of them only
what its own decisions need; staff roles see every task type in full
(gating.selectors.task_types_visible_to)."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from gating.models import AuditEvent, TaskType
from gating.roles import Role
from learning.models import CycleRun, TierAssessment
from tests.factories import SubmissionFactory, TaskTypeFactory, ingested

LIST = "/api/v1/task-types/"
STATES = "/api/v1/thresholds/states/"
ROUTING = "/api/v1/routing/"
GATEWAY_FIELDS = {"name", "scorer", "review_threshold", "approve_threshold", "auto_approve"}


def detail(name: str) -> str:
    return f"/api/v1/task-types/{name}/"


@pytest.fixture
def other_gateway(user_in):
    return user_in(Role.GATEWAY, username="gateway-2")


@pytest.fixture
def task_types(gateway, other_gateway):
    """The gateway has sent outputs of "mine"; the other gateway of "theirs"; nobody of
    "unused"; an admin shared "common"."""
    for name in ("mine", "theirs", "unused", "common"):
        TaskTypeFactory(name=name, shared=name == "common")
    ingested(gateway, task_type="mine")
    ingested(other_gateway, task_type="theirs")


def names(api, url=LIST) -> list[str]:
    return [row["name"] for row in api.get(url).json()]


def test_a_gateway_lists_the_task_types_it_submits_to_and_the_shared_ones(task_types, gateway_api):
    assert names(gateway_api) == ["common", "mine"]


def test_another_gateways_task_type_is_not_found(task_types, gateway_api):
    assert gateway_api.get(detail("theirs")).status_code == 404
    assert gateway_api.get(detail("unused")).status_code == 404
    assert gateway_api.get(detail("mine")).status_code == 200


def test_a_gateway_sees_only_what_its_decisions_need(task_types, gateway_api):
    rows = gateway_api.get(LIST).json()
    assert {frozenset(row) for row in rows} == {frozenset(GATEWAY_FIELDS)}
    assert set(gateway_api.get(detail("mine")).json()) == GATEWAY_FIELDS


@pytest.mark.parametrize("role", [Role.REVIEWER, Role.LEAD, Role.ADMIN])
def test_staff_roles_see_every_task_type_in_full(task_types, user_in, client_for, role):
    api = client_for(user_in(role))

    rows = api.get(LIST).json()

    assert [row["name"] for row in rows] == ["common", "mine", "theirs", "unused"]
    assert {"reviewed_count", "created_at", "in_cold_start", "shared"} <= set(rows[0])


def test_the_threshold_states_and_routing_show_only_visible_task_types(
    task_types, gateway_api, user_in, client_for
):
    now = timezone.now()
    cycle = CycleRun.objects.create(
        kind=CycleRun.Kind.TIERS,
        status=CycleRun.Status.SUCCEEDED,
        window_start=now,
        window_end=now,
        started_at=now,
        changes=[],
    )
    for name in ("mine", "theirs"):
        TierAssessment.objects.create(
            cycle=cycle,
            task_type=TaskType.objects.get(name=name),
            model="model-a",
            tier="fast",
            reviews=0,
            confidence=0.0,
            adjusted_score=0.0,
            rank=1,
        )
    lead_api = client_for(user_in(Role.LEAD))

    assert sorted({row["task_type"] for row in gateway_api.get(STATES).json()}) == [
        "common",
        "mine",
    ]
    assert [row["task_type"] for row in gateway_api.get(ROUTING).json()] == ["mine"]
    assert len({row["task_type"] for row in lead_api.get(STATES).json()}) == 4
    assert len(lead_api.get(ROUTING).json()) == 2


def test_a_first_output_makes_a_task_type_visible_and_later_ones_write_nothing_more(
    gateway, gateway_api
):
    TaskTypeFactory(name="fresh")
    assert gateway_api.get(detail("fresh")).status_code == 404

    ingested(gateway, task_type="fresh")
    assert names(gateway_api) == ["fresh"]

    with CaptureQueriesContext(connection) as queries:
        ingested(gateway, task_type="fresh")
    assert not [q for q in queries if "task_type_use" in q["sql"].lower()]


def test_a_refused_batch_makes_nothing_visible(gateway_api):
    TaskTypeFactory(name="kept")
    TaskTypeFactory(name="refused")
    sent = SubmissionFactory(task_type="kept")
    assert gateway_api.post("/api/v1/outputs/", sent, format="json").status_code == 201
    # The same external_id with another body: a conflict, and nothing of the batch stays.
    batch = [{**sent, "model": "other"}, SubmissionFactory(task_type="refused")]

    response = gateway_api.post("/api/v1/outputs/batch/", {"outputs": batch}, format="json")

    assert response.status_code == 409, response.content
    assert names(gateway_api) == ["kept"]


def test_an_admin_shares_a_task_type_through_the_api_and_it_is_audited(
    task_types, admin_api, gateway_api
):
    response = admin_api.patch(detail("theirs"), {"shared": True}, format="json")

    assert response.status_code == 200, response.content
    assert response.json()["shared"] is True
    assert names(gateway_api) == ["common", "mine", "theirs"]
    event = AuditEvent.objects.get(
        action=AuditEvent.Action.ACCESS_CHANGE, object_type="gating.tasktype"
    )
    assert (event.before, event.after) == ({"shared": False}, {"shared": True})


def test_a_gateway_cannot_share_a_task_type(task_types, gateway_api):
    response = gateway_api.patch(detail("mine"), {"shared": True}, format="json")

    assert response.status_code == 403
    assert not TaskType.objects.get(name="mine").shared


def test_an_admin_shares_a_task_type_in_the_admin(task_types, user_in, client, gateway_api):
    admin = user_in(Role.ADMIN)
    client.force_login(admin)
    task_type = TaskType.objects.get(name="theirs")
    url = f"/admin/gating/tasktype/{task_type.pk}/change/"
    form = client.get(url).context["adminform"].form
    data = {
        name: value
        for name, value in form.initial.items()
        if value is not None and name in form.fields
    }
    data |= {
        "shared": "on",
        "reason": "Every gateway may send summaries.",
        "validators-TOTAL_FORMS": "0",
        "validators-INITIAL_FORMS": "0",
    }
    data = {k: ("on" if v is True else v) for k, v in data.items() if v is not False}

    response = client.post(url, data)

    assert response.status_code == 302, response.context["adminform"].form.errors
    assert TaskType.objects.get(name="theirs").shared
    assert "theirs" in names(gateway_api)
    assert AuditEvent.objects.filter(
        action=AuditEvent.Action.ACCESS_CHANGE, actor=admin, after={"shared": True}
    ).exists()


def test_the_migration_records_the_pairs_of_the_outputs_stored_before(gateway, other_gateway):
    from importlib import import_module

    from django.apps import apps

    from gating.models import TaskTypeCreation, TaskTypeUse

    TaskTypeFactory(name="mine")
    ingested(gateway, task_type="mine")
    ingested(gateway, task_type="mine")
    created = TaskTypeFactory(name="created")
    TaskTypeCreation.objects.create(task_type=created, gateway=other_gateway)
    # As before the ingest recorded them.
    TaskTypeUse.objects.all().delete()

    import_module("gating.migrations.0021_task_type_sharing").record_uses(apps, None)

    assert set(TaskTypeUse.objects.values_list("gateway__username", "task_type__name")) == {
        ("gateway-1", "mine"),
        ("gateway-2", "created"),
    }
