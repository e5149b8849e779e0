"""Admins inspect the queue, decisions, webhooks and the audit log in the Django admin."""

import pytest

from gating.roles import Role

pytestmark = pytest.mark.django_db

PAGES = [
    "/admin/gating/reviewitem/",
    "/admin/gating/review/",
    "/admin/gating/auditevent/",
    "/admin/gating/webhook/",
    "/admin/gating/webhookdelivery/",
    "/admin/gating/tasktype/",
    "/admin/auth/user/",
]


@pytest.mark.parametrize("path", PAGES)
def test_admins_can_open_each_page(client, user_in, path, held_outputs):
    held_outputs(1)
    client.force_login(user_in(Role.ADMIN))
    assert client.get(path).status_code == 200


@pytest.mark.parametrize("role", [Role.REVIEWER, Role.LEAD, Role.GATEWAY])
def test_other_roles_are_sent_to_the_admin_login(client, user_in, role):
    client.force_login(user_in(role))
    response = client.get("/admin/gating/auditevent/")
    assert response.status_code == 302
    assert response["Location"].startswith("/admin/login/")


def test_audit_events_cannot_be_added_from_the_admin(client, user_in):
    client.force_login(user_in(Role.ADMIN))
    assert client.get("/admin/gating/auditevent/add/").status_code == 403
