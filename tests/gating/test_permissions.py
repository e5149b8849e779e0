"""Every API route with every role (and anonymous, and a bad token); the Django admin's
user and group editors with every role and a superuser."""

from itertools import count

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group, Permission
from django.test import Client
from rest_framework.test import APIClient

from gating.models import AuditEvent
from gating.roles import Role, user_role
from tests.factories import SubmissionFactory, TaskTypeFactory, UserFactory

ANON, BAD_TOKEN = "anonymous", "bad-token"
ROLES = [ANON, BAD_TOKEN, *Role]


def _client(who, user_in, client_for):
    if who == ANON:
        return APIClient()
    if who == BAD_TOKEN:
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION="Bearer gh_not-a-real-token")
        return client
    return client_for(user_in(who))


ROUTES = {
    # (method, path, body): {role: expected status}
    ("post", "/api/v1/outputs/", "submission"): {
        Role.GATEWAY: 201, Role.REVIEWER: 403, Role.LEAD: 403, Role.ADMIN: 403,
    },
    ("post", "/api/v1/outputs/batch/", "batch"): {
        Role.GATEWAY: 201, Role.REVIEWER: 403, Role.LEAD: 403, Role.ADMIN: 403,
    },
    ("get", "/api/v1/outputs/", None): {
        Role.GATEWAY: 200, Role.REVIEWER: 200, Role.LEAD: 200, Role.ADMIN: 200,
    },
    ("get", "/api/v1/task-types/", None): {
        Role.GATEWAY: 200, Role.REVIEWER: 200, Role.LEAD: 200, Role.ADMIN: 200,
    },
    # The gateway has sent no output of it, and it is not shared: not one it may see.
    ("get", "/api/v1/task-types/summarize/", None): {
        Role.GATEWAY: 404, Role.REVIEWER: 200, Role.LEAD: 200, Role.ADMIN: 200,
    },
    ("patch", "/api/v1/task-types/summarize/", "thresholds"): {
        Role.GATEWAY: 403, Role.REVIEWER: 403, Role.LEAD: 403, Role.ADMIN: 200,
    },
    ("get", "/api/v1/ping/", None): {
        Role.GATEWAY: 200, Role.REVIEWER: 200, Role.LEAD: 200, Role.ADMIN: 200,
    },
    ("get", "/api/v1/queue/", None): {
        Role.GATEWAY: 403, Role.REVIEWER: 200, Role.LEAD: 200, Role.ADMIN: 200,
    },
    ("get", "/api/v1/queue/summary/", None): {
        Role.GATEWAY: 403, Role.REVIEWER: 200, Role.LEAD: 200, Role.ADMIN: 200,
    },
    # The queue is empty: a permitted claim finds nothing.
    ("post", "/api/v1/queue/claim/", None): {
        Role.GATEWAY: 403, Role.REVIEWER: 204, Role.LEAD: 204, Role.ADMIN: 204,
    },
    ("post", "/api/v1/queue/bulk-decision/", "bulk"): {
        Role.GATEWAY: 403, Role.REVIEWER: 403, Role.LEAD: 200, Role.ADMIN: 200,
    },
    # No such item: permitted roles get 404, the rest never learn that much.
    ("post", "/api/v1/queue/999999/heartbeat/", None): {
        Role.GATEWAY: 403, Role.REVIEWER: 404, Role.LEAD: 404, Role.ADMIN: 404,
    },
    ("post", "/api/v1/queue/999999/release/", None): {
        Role.GATEWAY: 403, Role.REVIEWER: 404, Role.LEAD: 404, Role.ADMIN: 404,
    },
    ("post", "/api/v1/queue/999999/decision/", "decision"): {
        Role.GATEWAY: 403, Role.REVIEWER: 404, Role.LEAD: 404, Role.ADMIN: 404,
    },
    ("get", "/api/schema/", None): {
        ANON: 200, BAD_TOKEN: 401, Role.GATEWAY: 200, Role.REVIEWER: 200, Role.LEAD: 200,
        Role.ADMIN: 200,
    },
}  # fmt: skip

BODIES = {
    None: None,
    "submission": lambda: SubmissionFactory(),
    "batch": lambda: {"outputs": [SubmissionFactory()]},
    "thresholds": lambda: {"review_threshold": 3.5},
    "bulk": lambda: {"action": "reject", "reason": "broken model"},
    "decision": lambda: {"action": "approve"},
}

CASES = [
    (route, who, expected.get(who, 401)) for route, expected in ROUTES.items() for who in ROLES
]


@pytest.mark.parametrize(
    ("route", "who", "expected"), CASES, ids=[f"{r[0]} {r[1]} as {w}" for r, w, _ in CASES]
)
def test_route_status_by_role(route, who, expected, user_in, client_for):
    TaskTypeFactory(name="summarize")
    method, path, body_kind = route
    client = _client(who, user_in, client_for)
    body = BODIES[body_kind]() if body_kind else None
    response = getattr(client, method)(path, body, format="json")
    assert response.status_code == expected, response.content


def test_gateway_sees_only_its_own_outputs(gateway_api, user_in, client_for):
    mine = gateway_api.post("/api/v1/outputs/", SubmissionFactory(), format="json").json()
    other = client_for(user_in(Role.GATEWAY))
    theirs = other.post("/api/v1/outputs/", SubmissionFactory(), format="json").json()

    assert gateway_api.get(f"/api/v1/outputs/{theirs['id']}/").status_code == 404
    listed = [o["id"] for o in gateway_api.get("/api/v1/outputs/").json()["results"]]
    assert listed == [mine["id"]]
    reviewer = client_for(user_in(Role.REVIEWER))
    assert reviewer.get(f"/api/v1/outputs/{theirs['id']}/").status_code == 200


def test_unknown_output_is_404(gateway_api):
    assert gateway_api.get("/api/v1/outputs/999999/").status_code == 404


# --------------------------------------------------------------------------- the user editor
# Who may give which role is gating.users' rule: an admin gives gateway, reviewer and lead
# to accounts that are neither admins nor superusers; only a superuser gives the admin role
# or the superuser flag, or edits an admin's or a superuser's account; nobody changes their
# own access. Raw groups, permissions and flags are never edited in the admin.

SUPERUSER = "superuser"
EDITORS = [*Role, SUPERUSER]
_numbers = count()


def _account(who):
    if who == SUPERUSER:
        return get_user_model().objects.create_superuser(f"root-{next(_numbers)}")
    return UserFactory(role=who)


def _signed_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


ADMIN_PAGES = {
    # (path, whose account or group): {who: expected status}. The other roles are not
    # staff: the admin sends them to its login page.
    ("/admin/auth/user/", None): {Role.ADMIN: 200, SUPERUSER: 200},
    ("/admin/auth/user/add/", None): {Role.ADMIN: 200, SUPERUSER: 200},
    ("/admin/auth/user/{id}/change/", Role.REVIEWER): {Role.ADMIN: 200, SUPERUSER: 200},
    # An admin may look at another admin's or a superuser's account, read-only.
    ("/admin/auth/user/{id}/change/", Role.ADMIN): {Role.ADMIN: 200, SUPERUSER: 200},
    ("/admin/auth/user/{id}/change/", SUPERUSER): {Role.ADMIN: 200, SUPERUSER: 200},
    ("/admin/auth/user/{id}/password/", Role.LEAD): {Role.ADMIN: 200, SUPERUSER: 200},
    ("/admin/auth/user/{id}/password/", Role.ADMIN): {Role.ADMIN: 403, SUPERUSER: 200},
    ("/admin/auth/user/{id}/password/", SUPERUSER): {Role.ADMIN: 403, SUPERUSER: 200},
    ("/admin/auth/group/", None): {Role.ADMIN: 403, SUPERUSER: 200},
    ("/admin/auth/group/{group}/change/", None): {Role.ADMIN: 403, SUPERUSER: 200},
    ("/admin/auth/group/add/", None): {Role.ADMIN: 403, SUPERUSER: 403},
}  # fmt: skip

ADMIN_CASES = [
    (page, who, expected.get(who, 302)) for page, expected in ADMIN_PAGES.items() for who in EDITORS
]


@pytest.mark.parametrize(
    ("page", "who", "expected"),
    ADMIN_CASES,
    ids=[f"{p[0]} of {p[1]} as {w}" for p, w, _ in ADMIN_CASES],
)
def test_admin_page_status_by_role(page, who, expected, db):
    path, whose = page
    target = _account(whose) if whose else None
    group = Group.objects.get(name=Role.ADMIN.value)
    path = path.format(id=target.pk if target else "", group=group.pk)

    response = _signed_in(_account(who)).get(path)

    assert response.status_code == expected
    if expected == 302:
        assert response["Location"].startswith("/admin/login/")


def _change_form(user, **fields) -> dict:
    """What the user editor posts for ``user``, with ``fields`` changed. The date fields
    are Django's stock editor's, so that a post that escalates would succeed there."""
    role = user_role(user)
    return {
        "username": user.username,
        "first_name": "",
        "last_name": "",
        "email": "",
        "is_active": "on",
        "role": role.value if role else "",
        "date_joined_0": "2026-01-01",
        "date_joined_1": "00:00:00",
        "last_login_0": "",
        "last_login_1": "",
        **fields,
    }


def _change(client, user, **fields):
    return client.post(f"/admin/auth/user/{user.pk}/change/", _change_form(user, **fields))


def _access(user) -> tuple:
    user = get_user_model().objects.get(pk=user.pk)
    return (
        user_role(user),
        user.is_superuser,
        user.is_staff,
        sorted(user.user_permissions.values_list("codename", flat=True)),
    )


def _raw_fields():
    admin_group = Group.objects.get(name=Role.ADMIN.value)
    change_user = Permission.objects.get(codename="change_user")
    return {
        "is_superuser": "on",
        "is_staff": "on",
        "groups": str(admin_group.pk),
        "user_permissions": str(change_user.pk),
    }


@pytest.mark.parametrize("raw", ["is_superuser", "is_staff", "groups", "user_permissions"])
@pytest.mark.parametrize("whose", ["own", Role.REVIEWER])
def test_an_admin_cannot_post_raw_flags_groups_or_permissions(raw, whose, db):
    admin = _account(Role.ADMIN)
    target = admin if whose == "own" else _account(whose)
    before = _access(target)

    response = _change(_signed_in(admin), target, **{raw: _raw_fields()[raw]})

    assert response.status_code == 403
    assert _access(target) == before


@pytest.mark.parametrize("raw", ["is_superuser", "is_staff", "groups", "user_permissions"])
def test_an_admin_cannot_create_an_account_with_raw_flags_groups_or_permissions(raw, db):
    client = _signed_in(_account(Role.ADMIN))
    form = {"username": "mallory", "password1": "a-long-pass-phrase", "role": "reviewer"}
    form["password2"] = form["password1"]

    response = client.post("/admin/auth/user/add/", {**form, raw: _raw_fields()[raw]})

    assert response.status_code == 403
    assert not get_user_model().objects.filter(username="mallory").exists()


@pytest.mark.parametrize("whose", ["own", Role.ADMIN, SUPERUSER])
def test_an_admin_cannot_change_an_admins_or_a_superusers_account(whose, db):
    admin = _account(Role.ADMIN)
    target = admin if whose == "own" else _account(whose)
    before = _access(target)

    response = _change(_signed_in(admin), target, role="reviewer")

    assert response.status_code == 403
    assert _access(target) == before


def test_an_admin_cannot_give_the_admin_role(db):
    admin, reviewer = _account(Role.ADMIN), _account(Role.REVIEWER)

    response = _change(_signed_in(admin), reviewer, role="admin")

    assert response.status_code == 200  # the form again, with the refusal
    assert "Select a valid choice" in response.content.decode()
    assert _access(reviewer) == (Role.REVIEWER, False, False, [])


def test_an_admin_cannot_add_an_admin(db):
    client = _signed_in(_account(Role.ADMIN))
    form = {"username": "mallory", "password1": "a-long-pass-phrase", "role": "admin"}

    response = client.post("/admin/auth/user/add/", {**form, "password2": form["password1"]})

    assert response.status_code == 200
    assert not get_user_model().objects.filter(username="mallory").exists()


@pytest.mark.parametrize("role", [Role.GATEWAY, Role.LEAD, None])
def test_an_admin_gives_a_lower_role_and_it_is_logged(role, db):
    admin, reviewer = _account(Role.ADMIN), _account(Role.REVIEWER)

    response = _change(_signed_in(admin), reviewer, role=role.value if role else "")

    assert response.status_code == 302
    assert _access(reviewer) == (role, False, False, [])
    events = AuditEvent.objects.filter(action="access_change", object_id=str(reviewer.pk))
    event = events.order_by("id").last()
    assert event.actor == admin
    assert event.after == {"groups": [role.value] if role else []}


def test_an_admin_adds_a_reviewer_in_one_logged_step(db):
    admin = _account(Role.ADMIN)
    form = {"username": "alice", "password1": "a-long-pass-phrase", "role": "reviewer"}

    response = _signed_in(admin).post(
        "/admin/auth/user/add/", {**form, "password2": form["password1"]}
    )

    assert response.status_code == 302
    alice = get_user_model().objects.get(username="alice")
    assert _access(alice) == (Role.REVIEWER, False, False, [])
    [event] = AuditEvent.objects.filter(action="access_change", object_id=str(alice.pk))
    assert (event.actor, event.after) == (admin, {"groups": ["reviewer"]})


def test_a_superuser_gives_the_admin_role_and_the_superuser_flag(db):
    root, lead = _account(SUPERUSER), _account(Role.LEAD)
    client = _signed_in(root)

    assert _change(client, lead, role="admin").status_code == 302
    assert _access(lead) == (Role.ADMIN, False, True, [])
    assert _change(client, lead, role="admin", superuser="on").status_code == 302
    assert _access(lead) == (Role.ADMIN, True, True, [])
    assert _change(client, lead, role="lead", superuser="on").status_code == 302
    assert _access(lead) == (Role.LEAD, True, True, [])  # still a superuser, so still staff
    assert _change(client, lead, role="lead").status_code == 302
    assert _access(lead) == (Role.LEAD, False, False, [])
    events = AuditEvent.objects.filter(action="access_change", object_id=str(lead.pk))
    assert {event.actor for event in events.order_by("-id")[:4]} == {root}


@pytest.mark.parametrize("raw", ["is_superuser", "is_staff", "groups", "user_permissions"])
def test_a_superuser_cannot_post_raw_flags_groups_or_permissions_either(raw, db):
    root, reviewer = _account(SUPERUSER), _account(Role.REVIEWER)

    response = _change(_signed_in(root), reviewer, **{raw: _raw_fields()[raw]})

    assert response.status_code == 403
    assert _access(reviewer) == (Role.REVIEWER, False, False, [])


def test_a_superuser_cannot_change_their_own_access_in_the_editor(db):
    root = _account(SUPERUSER)

    response = _change(_signed_in(root), root, role="reviewer", superuser="")

    assert response.status_code == 302  # the rest of the form saves; the access fields are
    assert _access(root) == (None, True, True, [])  # shown, disabled, and ignored


def test_nobody_edits_a_role_groups_permissions_in_the_admin(db):
    group = Group.objects.get(name=Role.REVIEWER.value)
    client = _signed_in(_account(SUPERUSER))

    response = client.post(f"/admin/auth/group/{group.pk}/change/", {"name": "reviewer"})

    assert response.status_code == 403


# --------------------------------------------------------------------------- refusals


def test_a_refusal_names_the_roles_that_may():
    from gating.roles import WATCH_LEARNING, refusal, roles_with

    # By hand from ROLE_PERMISSIONS: leads and admins watch the learning; reviewers and up
    # review; only admins change a task type; no role has a permission nobody was given.
    assert roles_with(WATCH_LEARNING) == [Role.LEAD, Role.ADMIN]
    assert refusal(WATCH_LEARNING) == "This is for leads and admins."
    assert refusal("gating.review_items") == "This is for reviewers, leads and admins."
    assert refusal("gating.change_tasktype") == "This is for admins."
    assert refusal("gating.nobody") == "No role may do this."


def test_a_refused_page_is_the_sites_403_with_the_reason(user_in):
    from django.test import Client

    client = Client()
    client.force_login(user_in(Role.REVIEWER))
    response = client.get("/dashboard/drift/")
    assert response.status_code == 403
    page = response.content.decode()
    assert "This is for leads and admins. You are signed in as a reviewer." in page
    assert '<a href="/queue/">Queue</a>' in page  # the site's navigation, the reviewer's own
    # The API keeps its own shape.
    assert client.get("/api/v1/no-such-route/").json() == {"detail": "Not found."}
