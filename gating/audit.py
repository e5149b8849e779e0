"""Writing to the append-only audit log: one function, called inside the change's own
transaction, so an action and its record commit or roll back together."""

from __future__ import annotations

from django.db import models
from django.utils import timezone

from gating.models import AuditEvent


def audit_record(
    *,
    actor,
    action: AuditEvent.Action,
    obj: models.Model,
    before: dict | None = None,
    after: dict | None = None,
    at=None,
) -> AuditEvent:
    return AuditEvent.objects.create(
        actor=actor,
        at=at or timezone.now(),
        action=action,
        object_type=obj._meta.label_lower,
        object_id=str(obj.pk),
        before=before,
        after=after,
    )


def audit_record_many(*, actor, action: AuditEvent.Action, rows: list[tuple], at=None) -> None:
    """Record one event per (obj, before, after) by one actor at one moment, in one INSERT."""
    at = at or timezone.now()
    audit_record_each(action=action, rows=[(actor, at, *row) for row in rows])


def audit_record_each(*, action: AuditEvent.Action, rows: list[tuple]) -> None:
    """Record one event per (actor, at, obj, before, after), in one INSERT."""
    AuditEvent.objects.bulk_create(
        (
            AuditEvent(
                actor=actor,
                at=at,
                action=action,
                object_type=obj._meta.label_lower,
                object_id=str(obj.pk),
                before=before,
                after=after,
            )
            for actor, at, obj, before, after in rows
        ),
        batch_size=5000,
    )
