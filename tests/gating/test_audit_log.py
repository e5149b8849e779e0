"""The audit log is append-only and records threshold edits and every change of a user's
access (groups, permissions, superuser and staff flags) with before and after."""

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group, Permission
from django.db import DatabaseError, connection, transaction

from gating import users
from gating.models import AuditEvent
from gating.models.audit import AppendOnlyError
from gating.roles import Role, ensure_roles
from tests.factories import TaskTypeFactory, UserFactory

pytestmark = pytest.mark.django_db


def test_a_threshold_edit_is_logged_with_before_and_after(user_in, client_for):
    TaskTypeFactory(name="summarize", review_threshold=4.0, approve_threshold=7.0)
    admin = user_in(Role.ADMIN)

    response = client_for(admin).patch(
        "/api/v1/task-types/summarize/",
        {"approve_threshold": 7.5, "reason": "too many false approvals"},
        format="json",
    )

    assert response.status_code == 200
    event = AuditEvent.objects.get(action="threshold_edit")
    assert (event.actor, event.action, event.object_type) == (
        admin,
        "threshold_edit",
        "gating.tasktype",
    )
    assert event.before == {"approve_threshold": 7.0}
    assert event.after == {
        "approve_threshold": 7.5,
        "reason": "too many false approvals",
        "source": "api",
    }


def test_a_refused_threshold_edit_logs_nothing(admin_api):
    TaskTypeFactory(name="summarize")
    response = admin_api.patch(
        "/api/v1/task-types/summarize/", {"approve_threshold": 1.0}, format="json"
    )
    assert response.status_code == 400
    assert not AuditEvent.objects.filter(action="threshold_edit").exists()


def _event(user_in):
    task_type = TaskTypeFactory(name="t")
    return AuditEvent.objects.create(
        actor=user_in(Role.ADMIN),
        at="2026-01-01T00:00:00Z",
        action="threshold_edit",
        object_type="gating.tasktype",
        object_id=str(task_type.pk),
    )


def test_events_cannot_be_changed_or_deleted_through_the_orm(user_in):
    event = _event(user_in)
    event.action = "claim"
    with pytest.raises(AppendOnlyError):
        event.save()
    with pytest.raises(AppendOnlyError):
        event.delete()


def test_postgresql_refuses_updates_and_deletes_too(user_in, requires_postgres):
    event = _event(user_in)
    for sql in (
        "UPDATE gating_auditevent SET action = 'claim' WHERE id = %s",
        "DELETE FROM gating_auditevent WHERE id = %s",
    ):
        with (
            pytest.raises(DatabaseError, match="append-only"),
            transaction.atomic(),
            connection.cursor() as cursor,
        ):
            cursor.execute(sql, [event.pk])
    assert AuditEvent.objects.get(pk=event.pk).action == "threshold_edit"


# --------------------------------------------------------------------------- access changes
# Whatever the door (the admin, a service, create_user, a shell), a change of a user's
# groups, permissions, superuser or staff flag is in the log.


def _access_events(obj=None) -> list[AuditEvent]:
    events = AuditEvent.objects.filter(action=AuditEvent.Action.ACCESS_CHANGE).order_by("id")
    if obj is not None:
        events = events.filter(object_type=obj._meta.label_lower, object_id=str(obj.pk))
    return list(events)


def _group(role: Role) -> Group:
    return Group.objects.get(name=role.value)


def test_a_role_given_from_a_shell_is_logged_without_an_actor(db):
    user = UserFactory()

    user.groups.add(_group(Role.ADMIN))

    [event] = _access_events(user)
    assert (event.actor, event.object_type) == (None, "auth.user")
    assert (event.before, event.after) == ({"groups": []}, {"groups": ["admin"]})


def test_a_member_added_from_the_groups_side_is_logged(db):
    user = UserFactory()

    _group(Role.LEAD).user_set.add(user)

    [event] = _access_events(user)
    assert event.after == {"groups": ["lead"]}


def test_clearing_a_groups_members_logs_each_member(db):
    alice, bob = UserFactory(role=Role.REVIEWER), UserFactory(role=Role.REVIEWER)
    already = len(_access_events())

    _group(Role.REVIEWER).user_set.clear()

    events = _access_events()[already:]
    assert {e.object_id for e in events} == {str(alice.pk), str(bob.pk)}
    assert all(e.after == {"groups": []} for e in events)


def test_deleting_a_group_logs_each_member(db):
    user = UserFactory(role=Role.REVIEWER)
    already = len(_access_events(user))

    _group(Role.REVIEWER).delete()

    [event] = _access_events(user)[already:]
    assert (event.before, event.after) == ({"groups": ["reviewer"]}, {"groups": []})


def test_a_raw_permission_is_logged(db):
    user = UserFactory(role=Role.REVIEWER)
    already = len(_access_events(user))

    user.user_permissions.add(Permission.objects.get(codename="change_user"))

    [event] = _access_events(user)[already:]
    assert (event.before, event.after) == (
        {"permissions": []},
        {"permissions": ["auth.change_user"]},
    )


@pytest.mark.parametrize("flag", ["is_superuser", "is_staff"])
def test_a_flag_saved_from_a_shell_is_logged(db, flag):
    user = UserFactory()

    setattr(user, flag, True)
    user.save()

    [event] = _access_events(user)
    assert (event.before, event.after) == ({flag: False}, {flag: True})


def test_a_superuser_created_from_a_shell_is_logged(db):
    root = get_user_model().objects.create_superuser("root")

    [event] = _access_events(root)
    assert event.before == {"is_superuser": False, "is_staff": False}
    assert event.after == {"is_superuser": True, "is_staff": True}


def test_saves_that_change_no_access_log_nothing(db):
    user = UserFactory(role=Role.REVIEWER)
    already = len(_access_events())

    user.first_name = "Alice"
    user.save()
    user.set_password("another-pass")
    user.save(update_fields=["password"])

    assert len(_access_events()) == already


def test_changes_made_by_a_named_actor_are_one_event_by_that_actor(db):
    admin, user = UserFactory(role=Role.ADMIN), UserFactory()

    with users.access_changes_by(admin):
        user.groups.add(_group(Role.ADMIN))
        user.is_staff = True
        user.save()

    [event] = _access_events(user)
    assert event.actor == admin
    assert event.after == {"groups": ["admin"], "is_staff": True}


def test_a_changed_permission_of_a_role_with_members_is_logged_on_the_group(db):
    UserFactory(role=Role.REVIEWER)
    reviewer = _group(Role.REVIEWER)
    permission = Permission.objects.get(codename="change_user")

    reviewer.permissions.add(permission)
    ensure_roles()  # puts the role back as roles.py defines it

    added, removed = _access_events(reviewer)
    assert "auth.change_user" in added.after["permissions"]
    assert "auth.change_user" not in added.before["permissions"]
    assert (removed.before, removed.after) == (added.after, added.before)


def test_a_roles_definition_is_not_logged_while_nobody_has_the_role(db):
    # Installing roles.py in an empty database (every migrate, every test database) gives
    # nobody any access; who later gets the role is logged on the user.
    reviewer = _group(Role.REVIEWER)

    reviewer.permissions.add(Permission.objects.get(codename="change_user"))
    ensure_roles()

    assert _access_events() == []
