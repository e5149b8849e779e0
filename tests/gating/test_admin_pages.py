"""Admins inspect the queue, decisions, webhooks and the audit log in the Django admin."""

import re

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.test import Client

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


# --------------------------------------------------------------------------- the user editor


def _page(user, path) -> str:
    client = Client()
    client.force_login(user)
    response = client.get(path)
    assert response.status_code == 200
    return response.content.decode()


def _role_options(page: str) -> list[str]:
    select = re.search(r'<select name="role"[^>]*>(.*?)</select>', page, re.S)
    assert select, "no role choice on the page"
    return re.findall(r'<option value="([^"]*)"', select.group(1))


RAW_FIELDS = ['name="is_superuser"', 'name="is_staff"', 'name="groups"', 'name="user_permissions"']


def test_an_admin_edits_one_role_among_those_below_admin(user_in):
    reviewer = user_in(Role.REVIEWER)

    page = _page(user_in(Role.ADMIN), f"/admin/auth/user/{reviewer.pk}/change/")

    assert _role_options(page) == ["", "gateway", "reviewer", "lead"]
    assert '<option value="reviewer" selected>' in page
    assert "Only a superuser gives the admin role" in page
    for raw in [*RAW_FIELDS, 'name="superuser"']:
        assert raw not in page


def test_an_admin_adds_users_with_a_role_below_admin(user_in):
    page = _page(user_in(Role.ADMIN), "/admin/auth/user/add/")

    assert _role_options(page) == ["", "gateway", "reviewer", "lead"]
    for raw in [*RAW_FIELDS, 'name="superuser"']:
        assert raw not in page


def test_an_admin_sees_another_admins_account_read_only(user_in):
    other = user_in(Role.ADMIN)

    page = _page(user_in(Role.ADMIN), f"/admin/auth/user/{other.pk}/change/")

    assert 'name="role"' not in page and 'name="_save"' not in page
    assert "admin" in page  # the role, shown


def test_a_superuser_edits_every_role_and_the_superuser_flag(user_in):
    root = get_user_model().objects.create_superuser("root")
    lead = user_in(Role.LEAD)

    page = _page(root, f"/admin/auth/user/{lead.pk}/change/")

    assert _role_options(page) == ["", "gateway", "reviewer", "lead", "admin"]
    assert 'name="superuser"' in page
    for raw in RAW_FIELDS:
        assert raw not in page


def test_a_superuser_sees_their_own_access_but_cannot_edit_it(db):
    root = get_user_model().objects.create_superuser("root")

    page = _page(root, f"/admin/auth/user/{root.pk}/change/")

    assert 'name="role"' in page and 'name="superuser"' in page
    assert page.count("disabled") >= 2


def test_the_user_list_shows_each_users_role(user_in):
    user_in(Role.LEAD, username="lena")

    page = _page(user_in(Role.ADMIN), "/admin/auth/user/")

    assert '<td class="field-role">lead</td>' in page


def test_a_superuser_reads_the_roles_groups_but_cannot_change_them(db):
    root = get_user_model().objects.create_superuser("root")
    group = Group.objects.get(name=Role.LEAD.value)

    page = _page(root, f"/admin/auth/group/{group.pk}/change/")

    assert 'name="_save"' not in page
    assert "Can adjudicate disagreeing reviews" in page
