"""The outbox: Celery tasks written in the transaction that asks for them.

A request never talks to the broker. It stores the task it wants run as a row of this
table, in its own transaction, so the row exists exactly when the change that needs it
does. The relay (``manage.py outbox_relay``) publishes the rows to the broker outside any
request, and keeps them until the broker takes them, so nothing is lost while it is away.
"""

from django.db import models
from django.db.models import Q
from django.utils import timezone


class OutboxMessage(models.Model):
    task = models.CharField(max_length=200, help_text="The Celery task's registered name.")
    args = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    published_at = models.DateTimeField(null=True, blank=True)
    attempts = models.PositiveIntegerField(default=0)
    last_error = models.TextField(blank=True)

    class Meta:
        ordering = ["id"]
        indexes = [
            # The relay reads only what is still to publish, oldest first.
            models.Index(
                fields=["id"], condition=Q(published_at__isnull=True), name="outbox_unpublished"
            ),
        ]

    def __str__(self) -> str:
        state = "published" if self.published_at else "waiting"
        return f"{self.task}{tuple(self.args)} ({state})"
