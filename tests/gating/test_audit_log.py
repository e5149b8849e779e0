"""The audit log is append-only and records threshold edits with before and after."""

import pytest
from django.db import DatabaseError, connection, transaction

from gating.models import AuditEvent
from gating.models.audit import AppendOnlyError
from gating.roles import Role
from tests.factories import TaskTypeFactory

pytestmark = pytest.mark.django_db


def test_a_threshold_edit_is_logged_with_before_and_after(user_in, client_for):
    TaskTypeFactory(name="summarize", review_threshold=4.0, approve_threshold=7.0)
    admin = user_in(Role.ADMIN)

    response = client_for(admin).patch(
        "/api/v1/task-types/summarize/", {"approve_threshold": 7.5}, format="json"
    )

    assert response.status_code == 200
    event = AuditEvent.objects.get()
    assert (event.actor, event.action, event.object_type) == (
        admin,
        "threshold_edit",
        "gating.tasktype",
    )
    assert event.before == {"approve_threshold": 7.0}
    assert event.after == {"approve_threshold": 7.5}


def test_a_refused_threshold_edit_logs_nothing(admin_api):
    TaskTypeFactory(name="summarize")
    response = admin_api.patch(
        "/api/v1/task-types/summarize/", {"approve_threshold": 1.0}, format="json"
    )
    assert response.status_code == 400
    assert not AuditEvent.objects.exists()


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
    assert AuditEvent.objects.get().action == "threshold_edit"
