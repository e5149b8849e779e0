"""The append-only audit log."""

from django.conf import settings
from django.db import models


class AppendOnlyError(Exception):
    """Audit events are never changed or deleted."""


class AuditEvent(models.Model):
    class Action(models.TextChoices):
        CLAIM = "claim", "Claim"
        RELEASE = "release", "Release"
        DECISION = "decision", "Decision"
        ADJUDICATION = "adjudication", "Adjudication"
        BULK_DECISION = "bulk_decision", "Bulk decision"
        THRESHOLD_EDIT = "threshold_edit", "Threshold edit"
        WEBHOOK_EDIT = "webhook_edit", "Webhook edit"
        BACKLOG_RELIEF = "backlog_relief", "Backlog relief"
        ACCESS_CHANGE = "access_change", "Access change"
        ALERT_ACKNOWLEDGE = "alert_acknowledge", "Alert acknowledged"
        ALERT_RESOLVE = "alert_resolve", "Alert resolved"
        SCORING_FAULT = "scoring_fault", "Scoring fault"
        COMMENT = "comment", "Comment"
        RUBRIC_EDIT = "rubric_edit", "Rubric edit"
        DATASET_EDIT = "dataset_edit", "Dataset edit"
        DATASET_EXPORT = "dataset_export", "Dataset export"

    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="audit_events",
        help_text="Empty for the system's own actions (learning cycles) and for access "
        "changes that no signed-in user made (manage.py, a shell).",
    )
    at = models.DateTimeField(db_index=True)
    action = models.CharField(max_length=30, choices=Action.choices, db_index=True)
    object_type = models.CharField(max_length=50)
    object_id = models.CharField(max_length=50)
    before = models.JSONField(null=True, blank=True)
    after = models.JSONField(null=True, blank=True)

    class Meta:
        ordering = ["-at", "-id"]
        indexes = [models.Index(fields=["object_type", "object_id"], name="audit_object")]

    def __str__(self) -> str:
        return f"{self.at:%Y-%m-%d %H:%M:%S} {self.actor} {self.action} {self.object_type}"

    def save(self, *args, **kwargs):
        if self.pk is not None and not self._state.adding:
            raise AppendOnlyError("Audit events cannot be changed.")
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        raise AppendOnlyError("Audit events cannot be deleted.")
