"""A gateway creates task types by naming them only as its GatewaySettings allow: whether it
may at all, and how many (counting the task types it created itself)."""

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import connection
from rest_framework.test import APIClient

from gating.models import AuditEvent, GatewaySettings, Output, TaskType, TaskTypeCreation
from gating.models.gateways import DEFAULT_TASK_TYPE_LIMIT
from gating.roles import Role
from tests.factories import SubmissionFactory, TaskTypeFactory, UserFactory, token_for

OUTPUTS = "/api/v1/outputs/"
BATCH = "/api/v1/outputs/batch/"


def submit(api, task_type):
    return api.post(OUTPUTS, SubmissionFactory(task_type=task_type), format="json")


def test_by_default_a_gateway_creates_task_types_and_is_recorded_as_their_creator(
    gateway, gateway_api
):
    assert submit(gateway_api, "fresh").status_code == 201

    creation = TaskTypeCreation.objects.get(task_type__name="fresh")
    assert creation.gateway == gateway
    assert GatewaySettings.objects.get(user=gateway).task_type_limit == DEFAULT_TASK_TYPE_LIMIT


def test_a_gateway_that_may_not_create_task_types_uses_existing_ones_only(gateway, gateway_api):
    GatewaySettings.objects.create(user=gateway, may_create_task_types=False)
    TaskTypeFactory(name="known")

    refused = submit(gateway_api, "fresh")

    assert refused.status_code == 400
    assert list(refused.json()) == ["task_type"]
    assert "'fresh'" in refused.json()["task_type"][0]
    assert not TaskType.objects.filter(name="fresh").exists()
    assert not Output.objects.exists()
    assert submit(gateway_api, "known").status_code == 201


def test_a_refused_batch_names_each_item_and_stores_nothing(gateway, gateway_api):
    GatewaySettings.objects.create(user=gateway, may_create_task_types=False)
    TaskTypeFactory(name="known")
    names = ["known", "fresh", "known", "fresh", "other"]
    bodies = [SubmissionFactory(task_type=name) for name in names]

    response = gateway_api.post(BATCH, {"outputs": bodies}, format="json")

    assert response.status_code == 400
    errors = response.json()["outputs"]
    assert set(errors) == {"1", "3", "4"}
    assert "'fresh'" in errors["1"]["task_type"][0]
    assert "'other'" in errors["4"]["task_type"][0]
    assert not Output.objects.exists()
    assert list(TaskType.objects.values_list("name", flat=True)) == ["known"]


def test_the_limit_counts_only_the_task_types_this_gateway_created(
    gateway, gateway_api, user_in, client_for
):
    GatewaySettings.objects.create(user=gateway, task_type_limit=2)
    TaskTypeFactory(name="by-admin")
    other_gateway = client_for(user_in(Role.GATEWAY))
    assert submit(other_gateway, "by-other").status_code == 201

    assert submit(gateway_api, "a").status_code == 201
    assert submit(gateway_api, "b").status_code == 201
    assert submit(gateway_api, "by-admin").status_code == 201
    assert submit(gateway_api, "by-other").status_code == 201
    refused = submit(gateway_api, "c")

    assert refused.status_code == 400
    assert "2 of the 2" in refused.json()["task_type"][0]
    GatewaySettings.objects.filter(user=gateway).update(task_type_limit=3)
    assert submit(gateway_api, "c").status_code == 201


def test_a_batch_over_the_limit_creates_none_of_its_task_types(gateway, gateway_api):
    GatewaySettings.objects.create(user=gateway, task_type_limit=2)
    names = ["c", "a", "b", "c"]
    bodies = [SubmissionFactory(task_type=name) for name in names]

    response = gateway_api.post(BATCH, {"outputs": bodies}, format="json")

    assert response.status_code == 400
    # Created in name order: a and b fit, c does not.
    assert set(response.json()["outputs"]) == {"0", "3"}
    assert not TaskType.objects.exists()
    assert not TaskTypeCreation.objects.exists()


def test_admins_edit_a_gateways_settings_in_the_admin_and_it_is_audited(client, gateway, user_in):
    admin = user_in(Role.ADMIN)
    client.force_login(admin)
    assert client.get("/admin/gating/gatewaysettings/").status_code == 200

    response = client.post(
        "/admin/gating/gatewaysettings/add/",
        {"user": gateway.pk, "task_type_limit": "5"},
    )

    assert response.status_code == 302, response.content[:2000]
    stored = GatewaySettings.objects.get(user=gateway)
    assert (stored.may_create_task_types, stored.task_type_limit) == (False, 5)
    event = AuditEvent.objects.get(object_type="gating.gatewaysettings")
    assert event.actor == admin
    assert event.after == {"may_create_task_types": False, "task_type_limit": 5}


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("requires_postgres")
def test_two_requests_at_once_cannot_both_take_the_last_place():
    gateway = UserFactory(role=Role.GATEWAY)
    GatewaySettings.objects.create(user=gateway, task_type_limit=1)
    token = token_for(gateway)
    start = threading.Barrier(2)

    def submit_new(task_type: str) -> int:
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
        start.wait()
        try:
            return submit(client, task_type).status_code
        finally:
            connection.close()

    with ThreadPoolExecutor(2) as pool:
        codes = sorted(pool.map(submit_new, ["first", "second"]))

    assert codes == [201, 400]
    assert TaskTypeCreation.objects.filter(gateway=gateway).count() == 1
