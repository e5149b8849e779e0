"""Users' access: who may give which role, the services that give it, and the audit record
of every change to a user's groups, permissions, superuser or staff flag.

Who may give what (the admin's help text and the README say the same):

- nobody changes their own role or superuser flag: another account does, so that nobody
  raises themselves and nobody locks themselves out by a slip;
- a superuser, or the console (manage.py, which has no actor), gives any role and the
  superuser flag;
- an admin gives gateway, reviewer and lead, or takes them away, on accounts that are
  neither admins nor superusers; those accounts are a superuser's to change, password
  included, so that an admin cannot take over a stronger account;
- no other role changes anyone's access.

A user has at most one role (one group), and is staff, which opens the Django admin,
exactly when it is an admin or a superuser.

Every change is recorded, whatever door it came through (the admin, these services,
create_user, a shell): receivers on the user's flags, on User.groups, User.user_permissions
and Group.permissions (from either side) and on group deletion write an ACCESS_CHANGE event
with the fields that changed, before and after. Inside ``access_changes_by(actor)`` (the
services and the admin's user editor) a block's changes make one event per user, by that
actor; elsewhere each change is its own event with no actor. QuerySet.update, bulk_create on
the through tables and raw SQL send no signals and so are not recorded.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractUser, Group, Permission
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.db.models.signals import m2m_changed, post_delete, post_save, pre_delete, pre_save

from gating.audit import audit_record_many
from gating.models import AuditEvent
from gating.roles import Role, user_role


class AccessChangeRefused(PermissionDenied):
    """The actor may not make this change to this user's access (a 403 in the admin)."""


_OWN = "Nobody changes their own access: another superuser does."
_ADMIN_GIVES = {Role.GATEWAY, Role.REVIEWER, Role.LEAD}


# --------------------------------------------------------------------------- the rule


def role_change_refusal(
    *, actor: AbstractUser | None, user: AbstractUser, role: Role | None
) -> str | None:
    """Why ``actor`` may not give ``user`` the role ``role`` (None: no role), or None if it
    may. ``actor`` None is the console; ``user`` may be an account not saved yet."""
    if actor is None:
        return None
    if actor.pk == user.pk:
        return _OWN
    if actor.is_superuser:
        return None
    if user_role(actor) is not Role.ADMIN:
        return "Only admins and superusers change roles."
    if _is_admin_level(user):
        return "Only a superuser changes an admin's or a superuser's access."
    if role is not None and role not in _ADMIN_GIVES:
        return "Only a superuser gives the admin role."
    return None


def superuser_change_refusal(*, actor: AbstractUser | None, user: AbstractUser) -> str | None:
    """Why ``actor`` may not give or take ``user``'s superuser flag, or None if it may."""
    if actor is None:
        return None
    if actor.pk == user.pk:
        return _OWN
    if actor.is_superuser:
        return None
    return "Only a superuser gives or takes the superuser flag."


def roles_grantable(*, actor: AbstractUser | None, user: AbstractUser) -> list[Role]:
    """The roles ``actor`` may give ``user``: what the user editor offers."""
    return [role for role in Role if role_change_refusal(actor=actor, user=user, role=role) is None]


def account_editable_by(*, actor: AbstractUser, user: AbstractUser) -> bool:
    """Whether ``actor`` may change ``user``'s account at all (details, password, role) in
    the admin: a superuser any account; an admin the accounts below admin; nobody else."""
    if actor.is_superuser:
        return True
    return user_role(actor) is Role.ADMIN and not _is_admin_level(user)


def _is_admin_level(user: AbstractUser) -> bool:
    return user.is_superuser or (user.pk is not None and user_role(user) is Role.ADMIN)


def _refuse(reason: str | None) -> None:
    if reason is not None:
        raise AccessChangeRefused(reason)


# --------------------------------------------------------------------------- the services


def user_role_set(*, user: AbstractUser, role: Role | None, actor: AbstractUser | None) -> None:
    """Give ``user`` exactly the role ``role`` (None: no role) if ``actor`` may, with staff
    following the admin role, recorded as one event by ``actor``."""
    _refuse(role_change_refusal(actor=actor, user=user, role=role))
    with access_changes_by(actor):
        user.groups.set([Group.objects.get(name=role.value)] if role else [])
        staff = role is Role.ADMIN or user.is_superuser
        if user.is_staff != staff:
            user.is_staff = staff
            user.save(update_fields=["is_staff"])


def user_superuser_set(
    *, user: AbstractUser, is_superuser: bool, actor: AbstractUser | None
) -> None:
    """Give or take ``user``'s superuser flag if ``actor`` may; staff follows it."""
    _refuse(superuser_change_refusal(actor=actor, user=user))
    with access_changes_by(actor):
        user.is_superuser = is_superuser
        user.is_staff = is_superuser or user_role(user) is Role.ADMIN
        user.save(update_fields=["is_superuser", "is_staff"])


# --------------------------------------------------------------------------- the record


def _no_access() -> dict:
    """A user's access before it existed."""
    return {"groups": [], "permissions": [], "is_superuser": False, "is_staff": False}


def _users_access(pks: Iterable[int]) -> dict[int, dict]:
    """Each user's access as the audit log shows it, in three queries."""
    access = {
        pk: {"groups": [], "permissions": [], "is_superuser": superuser, "is_staff": staff}
        for pk, superuser, staff in get_user_model()
        .objects.filter(pk__in=list(pks))
        .values_list("pk", "is_superuser", "is_staff")
    }
    memberships = Group.objects.filter(user__in=list(access)).order_by("name")
    for pk, name in memberships.values_list("user", "name"):
        access[pk]["groups"].append(name)
    for pk, name in _permission_names(Permission.objects.filter(user__in=list(access)), "user"):
        access[pk]["permissions"].append(name)
    return access


def _groups_access(pks: Iterable[int]) -> dict[int, dict]:
    """Each group's permissions as the audit log shows them."""
    access = {pk: {"permissions": []} for pk in pks}
    for pk, name in _permission_names(Permission.objects.filter(group__in=list(access)), "group"):
        access[pk]["permissions"].append(name)
    return access


def _permission_names(permissions, holder: str) -> Iterator[tuple[int, str]]:
    rows = permissions.order_by("content_type__app_label", "codename").values_list(
        holder, "content_type__app_label", "codename"
    )
    for pk, app_label, codename in rows:
        yield pk, f"{app_label}.{codename}"


class _Changes:
    """The access changes made by one actor: what each user and group touched had before
    its first change, recorded against what it has at the end."""

    def __init__(self, actor: AbstractUser | None):
        self.actor = actor
        self.users: dict[int, dict] = {}
        self.groups: dict[int, dict] = {}

    def note(self, *, users: dict[int, dict], groups: dict[int, dict]) -> None:
        for pk, access in users.items():
            self.users.setdefault(pk, access)
        for pk, access in groups.items():
            self.groups.setdefault(pk, access)

    def record(self) -> None:
        rows = []
        if self.users:
            after = _users_access(self.users)
            people = get_user_model().objects.in_bulk(list(self.users))
            rows += _differences(self.users, after, people)
        if self.groups:
            after = _groups_access(self.groups)
            # An empty group's permissions are a role's definition, which roles.py holds:
            # changing them changes nobody's access. Whoever later joins is recorded then.
            with_members = Group.objects.filter(pk__in=list(self.groups), user__isnull=False)
            rows += _differences(self.groups, after, with_members.distinct().in_bulk())
        if rows:
            audit_record_many(actor=self.actor, action=AuditEvent.Action.ACCESS_CHANGE, rows=rows)


def _differences(before: dict[int, dict], after: dict[int, dict], objects: dict) -> list[tuple]:
    """(object, the fields that changed before, and after) for each object that changed."""
    rows = []
    for pk, obj in objects.items():
        changed = [key for key in before[pk] if before[pk][key] != after[pk][key]]
        if changed:
            rows.append(
                (
                    obj,
                    {key: before[pk][key] for key in changed},
                    {key: after[pk][key] for key in changed},
                )
            )
    return rows


_open_changes: ContextVar[_Changes | None] = ContextVar("gating_access_changes", default=None)


@contextmanager
def access_changes_by(actor: AbstractUser | None) -> Iterator[None]:
    """Make the block's access changes in one transaction and record them, when it ends,
    as one event per user (and group) by ``actor``. A nested block joins the outer one."""
    if _open_changes.get() is not None:
        yield
        return
    changes = _Changes(actor)
    token = _open_changes.set(changes)
    try:
        with transaction.atomic():
            yield
            changes.record()
    finally:
        _open_changes.reset(token)


def _noted(*, users: dict[int, dict] | None = None, groups: dict[int, dict] | None = None):
    """Hand what was there before a change to the open block, or record it at once."""
    changes = _open_changes.get()
    if changes is None:
        changes = _Changes(actor=None)
        changes.note(users=users or {}, groups=groups or {})
        changes.record()
    else:
        changes.note(users=users or {}, groups=groups or {})


def _users_before(pks: Iterable[int]) -> dict[int, dict]:
    """The access of the users about to change, but for those an open block already holds."""
    changes = _open_changes.get()
    fresh = [pk for pk in pks if changes is None or pk not in changes.users]
    return _users_access(fresh) if fresh else {}


def _groups_before(pks: Iterable[int]) -> dict[int, dict]:
    changes = _open_changes.get()
    fresh = [pk for pk in pks if changes is None or pk not in changes.groups]
    return _groups_access(fresh) if fresh else {}


# Each pair of receivers notes the access before a change on the instance that the signal
# carries, and hands it on once the change is made. Saves that cannot touch a flag
# (last_login on every sign-in) cost nothing.
_FLAGS = {"is_superuser", "is_staff"}


def _before_user_save(sender, instance, update_fields=None, **kwargs):
    if update_fields is not None and not _FLAGS & set(update_fields):
        return
    if not instance._state.adding:
        instance._users_before = _users_before([instance.pk])


def _after_user_save(sender, instance, created, **kwargs):
    before = instance.__dict__.pop("_users_before", None)
    if created:
        before = {instance.pk: _no_access()}
    if before:
        _noted(users=before)


def _touched(instance, reverse: bool, pk_set: set | None, related: str) -> list[int]:
    """The pks on the far side of an m2m change: the instance's own when changed from its
    side, else those named, or every holder when the other side is cleared."""
    if pk_set is not None and not pk_set:
        return []
    if not reverse:
        return [instance.pk]
    if pk_set is None:
        return list(getattr(instance, related).values_list("pk", flat=True))
    return list(pk_set)


def _user_m2m_changed(sender, instance, action, reverse, pk_set, **kwargs):
    """User.groups or User.user_permissions, changed from either side."""
    if action.startswith("pre_"):
        instance._users_before = _users_before(_touched(instance, reverse, pk_set, "user_set"))
    else:
        before = instance.__dict__.pop("_users_before", None)
        if before:
            _noted(users=before)


def _group_permissions_changed(sender, instance, action, reverse, pk_set, **kwargs):
    """Group.permissions, changed from either side."""
    if action.startswith("pre_"):
        instance._groups_before = _groups_before(_touched(instance, reverse, pk_set, "group_set"))
    else:
        before = instance.__dict__.pop("_groups_before", None)
        if before:
            _noted(groups=before)


def _before_group_delete(sender, instance, **kwargs):
    instance._users_before = _users_before(instance.user_set.values_list("pk", flat=True))


def _after_group_delete(sender, instance, **kwargs):
    before = instance.__dict__.pop("_users_before", None)
    if before:
        _noted(users=before)


def access_audit_connect() -> None:
    """Connect the receivers that record every access change (GatingConfig.ready)."""
    user_model = get_user_model()
    for signal, receiver, sender in [
        (pre_save, _before_user_save, user_model),
        (post_save, _after_user_save, user_model),
        (m2m_changed, _user_m2m_changed, user_model.groups.through),
        (m2m_changed, _user_m2m_changed, user_model.user_permissions.through),
        (m2m_changed, _group_permissions_changed, Group.permissions.through),
        (pre_delete, _before_group_delete, Group),
        (post_delete, _after_group_delete, Group),
    ]:
        signal.connect(receiver, sender=sender, dispatch_uid=f"gating.users.{receiver.__name__}")
