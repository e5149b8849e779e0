"""Who may give which role (gating.users), and that each change is audit-logged once with
its before and after."""

from io import StringIO
from itertools import count

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command

from gating import users
from gating.models import AuditEvent
from gating.roles import Role, user_role
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

GATEWAY, REVIEWER, LEAD, ADMIN = Role.GATEWAY, Role.REVIEWER, Role.LEAD, Role.ADMIN


def _access_events(user) -> list[AuditEvent]:
    return list(
        AuditEvent.objects.filter(
            action=AuditEvent.Action.ACCESS_CHANGE,
            object_type="auth.user",
            object_id=str(user.pk),
        ).order_by("id")
    )


@pytest.fixture
def superuser(db):
    return get_user_model().objects.create_superuser("root", password="pw-for-tests")


# --------------------------------------------------------------------------- the rule

# Who may give whom which role: (actor, target's role now) -> the roles actor may set.
# Nobody else changes a role; nobody changes their own (see test_nobody_changes_their_own_role).
GRANTS = [
    (ADMIN, None, {None, GATEWAY, REVIEWER, LEAD}),
    (ADMIN, REVIEWER, {None, GATEWAY, REVIEWER, LEAD}),
    (ADMIN, LEAD, {None, GATEWAY, REVIEWER, LEAD}),
    (ADMIN, ADMIN, set()),
    (ADMIN, "superuser", set()),
    ("superuser", REVIEWER, {None, *Role}),
    ("superuser", ADMIN, {None, *Role}),
    ("superuser", "superuser", {None, *Role}),
    (LEAD, REVIEWER, set()),
    (REVIEWER, None, set()),
    (GATEWAY, None, set()),
]


_numbers = count()


def _make(who):
    if who == "superuser":
        return get_user_model().objects.create_superuser(f"root-{next(_numbers)}")
    return UserFactory(role=who)


@pytest.mark.parametrize(("actor_is", "target_is", "allowed"), GRANTS)
def test_who_may_set_which_role(actor_is, target_is, allowed):
    actor, target = _make(actor_is), _make(target_is)

    for role in [None, *Role]:
        if role in allowed:
            users.user_role_set(user=target, role=role, actor=actor)
            assert user_role(target) is role
        else:
            with pytest.raises(users.AccessChangeRefused):
                users.user_role_set(user=target, role=role, actor=actor)


@pytest.mark.parametrize("actor_is", [ADMIN, "superuser"])
def test_nobody_changes_their_own_role(actor_is):
    actor = _make(actor_is)
    before = list(actor.groups.values_list("name", flat=True))

    with pytest.raises(users.AccessChangeRefused, match="own"):
        users.user_role_set(user=actor, role=LEAD, actor=actor)

    assert list(actor.groups.values_list("name", flat=True)) == before


def test_only_a_superuser_sets_the_superuser_flag(superuser):
    admin, reviewer = UserFactory(role=ADMIN), UserFactory(role=REVIEWER)

    with pytest.raises(users.AccessChangeRefused):
        users.user_superuser_set(user=reviewer, is_superuser=True, actor=admin)
    with pytest.raises(users.AccessChangeRefused, match="own"):
        users.user_superuser_set(user=superuser, is_superuser=False, actor=superuser)
    users.user_superuser_set(user=reviewer, is_superuser=True, actor=superuser)

    reviewer.refresh_from_db()
    assert reviewer.is_superuser and reviewer.is_staff


def test_the_console_may_give_any_role():
    # manage.py create_user runs with the server's own access: it has no actor.
    user = UserFactory()
    users.user_role_set(user=user, role=ADMIN, actor=None)
    assert user_role(user) is ADMIN


# --------------------------------------------------------------------------- what it sets


def test_a_role_replaces_the_previous_one_and_staff_follows_the_admin_role(superuser):
    user = UserFactory(role=REVIEWER)

    users.user_role_set(user=user, role=ADMIN, actor=superuser)
    user.refresh_from_db()
    assert list(user.groups.values_list("name", flat=True)) == ["admin"]
    assert user.is_staff and user.has_perm("auth.change_user")

    users.user_role_set(user=user, role=LEAD, actor=superuser)
    user = get_user_model().objects.get(pk=user.pk)
    assert list(user.groups.values_list("name", flat=True)) == ["lead"]
    assert not user.is_staff and not user.has_perm("auth.change_user")


def test_a_superuser_stays_staff_without_the_admin_role(superuser):
    other = get_user_model().objects.create_superuser("root-2")
    users.user_role_set(user=other, role=REVIEWER, actor=superuser)
    other.refresh_from_db()
    assert other.is_staff


# --------------------------------------------------------------------------- the audit log


def test_a_role_change_is_one_event_with_before_and_after():
    admin, user = UserFactory(role=ADMIN), UserFactory(role=REVIEWER)
    already = len(_access_events(user))

    users.user_role_set(user=user, role=LEAD, actor=admin)

    [event] = _access_events(user)[already:]
    assert event.actor == admin
    assert event.before == {"groups": ["reviewer"]}
    assert event.after == {"groups": ["lead"]}


def test_granting_admin_records_staff_too(superuser):
    user = UserFactory(role=LEAD)
    already = len(_access_events(user))

    users.user_role_set(user=user, role=ADMIN, actor=superuser)

    [event] = _access_events(user)[already:]
    assert event.actor == superuser
    assert event.before == {"groups": ["lead"], "is_staff": False}
    assert event.after == {"groups": ["admin"], "is_staff": True}


def test_a_refused_change_changes_and_records_nothing():
    admin, user = UserFactory(role=ADMIN), UserFactory(role=REVIEWER)
    events = AuditEvent.objects.count()

    with pytest.raises(users.AccessChangeRefused):
        users.user_role_set(user=user, role=ADMIN, actor=admin)

    assert user_role(user) is REVIEWER
    assert AuditEvent.objects.count() == events


def test_setting_the_role_a_user_has_records_nothing():
    admin, user = UserFactory(role=ADMIN), UserFactory(role=REVIEWER)
    events = AuditEvent.objects.count()

    users.user_role_set(user=user, role=REVIEWER, actor=admin)

    assert AuditEvent.objects.count() == events


@pytest.mark.parametrize("role", list(Role))
def test_create_user_gives_the_role_through_the_service_and_records_it(role):
    call_command("create_user", "alice", "--role", role.value, stdout=StringIO())

    alice = get_user_model().objects.get(username="alice")
    assert user_role(alice) is role
    assert alice.is_staff is (role is ADMIN)
    [event] = _access_events(alice)
    assert event.actor is None
    assert event.after["groups"] == [role.value]
    assert event.after.get("is_staff", False) is (role is ADMIN)


def test_each_refusal_says_why():
    admin, other_admin = UserFactory(role=ADMIN), UserFactory(role=ADMIN)
    lead, reviewer = UserFactory(role=LEAD), UserFactory(role=REVIEWER)

    assert users.role_change_refusal(actor=lead, user=reviewer, role=GATEWAY) == (
        "Only admins and superusers change roles."
    )
    assert users.role_change_refusal(actor=admin, user=other_admin, role=LEAD) == (
        "Only a superuser changes an admin's or a superuser's access."
    )
    assert users.role_change_refusal(actor=admin, user=reviewer, role=ADMIN) == (
        "Only a superuser gives the admin role."
    )
    assert users.role_change_refusal(actor=admin, user=admin, role=LEAD) == (
        "Nobody changes their own access: another superuser does."
    )
    assert users.superuser_change_refusal(actor=admin, user=reviewer) == (
        "Only a superuser gives or takes the superuser flag."
    )


def test_an_access_change_writes_only_the_flags_it_changes(superuser):
    user = UserFactory(role=LEAD, first_name="Al")
    # Another request renames the account after this one read it.
    get_user_model().objects.filter(pk=user.pk).update(first_name="Alice")

    users.user_role_set(user=user, role=ADMIN, actor=superuser)
    assert get_user_model().objects.get(pk=user.pk).first_name == "Alice"
    users.user_superuser_set(user=user, is_superuser=True, actor=superuser)

    user.refresh_from_db()
    assert (user.first_name, user.is_staff, user.is_superuser) == ("Alice", True, True)


def test_the_superuser_flag_is_one_event_by_the_superuser_who_gave_it(superuser):
    user = UserFactory(role=REVIEWER)
    already = len(_access_events(user))

    users.user_superuser_set(user=user, is_superuser=True, actor=superuser)

    [event] = _access_events(user)[already:]
    assert event.actor == superuser
    assert event.before == {"is_superuser": False, "is_staff": False}
    assert event.after == {"is_superuser": True, "is_staff": True}
