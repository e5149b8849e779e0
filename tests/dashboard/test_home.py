"""The overview page: who may open it, and whose outputs it lists."""

import pytest
from django.test import Client

from gating.roles import Role
from tests.factories import UserFactory, valid_submission

pytestmark = pytest.mark.django_db


def _page(user) -> tuple[int, str]:
    client = Client()
    client.force_login(user)
    response = client.get("/")
    return response.status_code, response.content.decode()


@pytest.fixture
def two_gateways_outputs(gateway, user_in):
    """A warning from the ``gateway`` fixture's user and one from another gateway: a task
    type out of cold start whose thresholds make every score a warning."""
    from gating import services
    from tests.factories import TaskTypeFactory

    TaskTypeFactory(
        name="flagged", review_threshold=0.0, approve_threshold=10.0, reviewed_count=1000
    )
    other = user_in(Role.GATEWAY, username="gateway-2")
    outputs = [
        services.output_ingest(
            source=source,
            submission=valid_submission(task_type="flagged"),
        ).output
        for source in (gateway, other)
    ]
    assert {o.decision for o in outputs} == {"warning"}
    return outputs


def test_anonymous_visitors_go_to_the_login_page(client):
    response = client.get("/")
    assert response.status_code == 302
    assert response["Location"].startswith("/login/?next=/")


def test_a_gateway_user_is_refused_and_told_to_use_the_api(gateway, two_gateways_outputs):
    mine, theirs = two_gateways_outputs

    status, page = _page(gateway)

    assert status == 403
    assert "Gateway accounts use the API" in page
    assert 'href="/api/docs/"' in page
    for output in (mine, theirs):
        assert output.external_id not in page


@pytest.mark.parametrize("role", [Role.REVIEWER, Role.LEAD, Role.ADMIN])
def test_staff_roles_see_every_gateways_latest_warnings(role, user_in, two_gateways_outputs):
    status, page = _page(user_in(role))

    assert status == 200
    for output in two_gateways_outputs:
        assert output.external_id in page


def test_a_user_without_a_role_sees_no_one_elses_outputs(two_gateways_outputs):
    # outputs_visible_to decides what is listed, as it does for the API: a signed-in
    # account that may not see every output sees only its own, here none.
    status, page = _page(UserFactory())

    assert status == 200
    assert "No warnings in this range." in page
    for output in two_gateways_outputs:
        assert output.external_id not in page
