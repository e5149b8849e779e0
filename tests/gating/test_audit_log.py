"""The audit log is append-only and records threshold edits and every change of a user's
access (groups, permissions, superuser and staff flags) with before and after."""

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group, Permission
from django.db import DatabaseError, connection, transaction
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

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


def test_a_flag_saved_with_update_fields_is_logged(db):
    user = UserFactory()

    user.is_staff = True
    user.save(update_fields=["is_staff"])

    [event] = _access_events(user)
    assert (event.before, event.after) == ({"is_staff": False}, {"is_staff": True})


def test_a_save_that_cannot_change_access_does_not_read_it(db, django_assert_num_queries):
    # Every sign-in saves last_login: that save stays the one UPDATE it was.
    user = UserFactory(role=Role.REVIEWER)
    user.last_login = timezone.now()

    with django_assert_num_queries(1):
        user.save(update_fields=["last_login"])


def _reads(queries, marker: str) -> list[str]:
    return [query["sql"] for query in queries.captured_queries if marker in query["sql"]]


def test_a_block_reads_a_users_access_once_however_many_changes(db):
    admin, user = UserFactory(role=Role.ADMIN), UserFactory()
    change_user = Permission.objects.get(codename="change_user")

    with users.access_changes_by(admin):
        user.groups.add(_group(Role.REVIEWER))
        with CaptureQueriesContext(connection) as second_change:
            user.user_permissions.add(change_user)

    # The access is read as auth_user's flags with the groups and permissions.
    assert _reads(second_change, '"auth_user"."is_superuser"') == []
    [event] = _access_events(user)
    assert event.actor == admin
    assert event.after == {"groups": ["reviewer"], "permissions": ["auth.change_user"]}


def test_a_roles_permissions_changed_in_a_block_are_one_event_by_its_actor(db):
    admin = UserFactory(role=Role.ADMIN)
    UserFactory(role=Role.REVIEWER)
    reviewer = _group(Role.REVIEWER)
    change_user = Permission.objects.get(codename="change_user")
    add_user = Permission.objects.get(codename="add_user")
    already = len(_access_events(reviewer))

    with users.access_changes_by(admin):
        reviewer.permissions.add(change_user)
        with CaptureQueriesContext(connection) as second_change:
            reviewer.permissions.add(add_user)

    # A group's permissions are read with their app labels (auth.change_user).
    assert _reads(second_change, '"django_content_type"."app_label"') == []
    [event] = _access_events(reviewer)[already:]
    assert event.actor == admin
    added = set(event.after["permissions"]) - set(event.before["permissions"])
    assert added == {"auth.add_user", "auth.change_user"}
    assert set(event.before["permissions"]) <= set(event.after["permissions"])


def test_a_permission_given_to_a_role_from_the_permissions_side_is_logged(db):
    UserFactory(role=Role.REVIEWER)
    reviewer = _group(Role.REVIEWER)
    already = len(_access_events(reviewer))

    Permission.objects.get(codename="change_user").group_set.add(reviewer)

    [event] = _access_events(reviewer)[already:]
    added = set(event.after["permissions"]) - set(event.before["permissions"])
    assert added == {"auth.change_user"}


def test_a_permission_cleared_from_the_permissions_side_is_logged_on_each_role(db):
    # Of the roles, only admin has auth.change_user, and only admin has a member here.
    UserFactory(role=Role.ADMIN)
    admin = _group(Role.ADMIN)
    already = len(_access_events(admin))

    Permission.objects.get(codename="change_user").group_set.clear()

    [event] = _access_events(admin)[already:]
    removed = set(event.before["permissions"]) - set(event.after["permissions"])
    assert removed == {"auth.change_user"}
    assert set(event.after["permissions"]) <= set(event.before["permissions"])


def test_connecting_the_receivers_again_still_records_each_change_once(db):
    # Django may call AppConfig.ready() more than once (tests that change the installed
    # apps): each receiver's dispatch_uid keeps it from being connected twice.
    users.access_audit_connect()

    root = get_user_model().objects.create_superuser("root")

    [event] = _access_events(root)
    assert event.after == {"is_superuser": True, "is_staff": True}


def test_permissions_are_listed_by_app_then_codename(db):
    user = UserFactory()
    # Neither the order given nor the permissions' ids (view_group is older than add_user)
    # nor the codenames alone (add_output < add_user) give this order.
    for app_label, codename in [
        ("auth", "view_group"),
        ("auth", "add_user"),
        ("gating", "add_output"),
    ]:
        user.user_permissions.add(
            Permission.objects.get(content_type__app_label=app_label, codename=codename)
        )

    assert _access_events(user)[-1].after == {
        "permissions": ["auth.add_user", "auth.view_group", "gating.add_output"]
    }


def test_a_block_that_changes_users_and_roles_records_both(db):
    admin, user = UserFactory(role=Role.ADMIN), UserFactory()
    UserFactory(role=Role.REVIEWER)
    reviewer = _group(Role.REVIEWER)
    already = len(_access_events())

    with users.access_changes_by(admin):
        user.groups.add(_group(Role.LEAD))
        reviewer.permissions.add(Permission.objects.get(codename="change_user"))

    events = _access_events()[already:]
    assert sorted((e.object_type, e.object_id) for e in events) == [
        ("auth.group", str(reviewer.pk)),
        ("auth.user", str(user.pk)),
    ]
    assert all(e.actor == admin for e in events)
