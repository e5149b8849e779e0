"""Webhooks: where a gateway user wants final decisions delivered, and every attempt."""

import uuid
from urllib.parse import urlsplit, urlunsplit

from django.conf import settings
from django.db import models


class Webhook(models.Model):
    class Kind(models.TextChoices):
        DECISIONS = "decisions", "Decisions on the owner's outputs"
        ALERTS = "alerts", "Alerts (Slack-compatible JSON)"

    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        related_name="webhooks",
        help_text="For decisions: the gateway user whose outputs' decisions are sent here. "
        "For alerts: the admin who set it up.",
    )
    kind = models.CharField(max_length=20, choices=Kind.choices, default=Kind.DECISIONS)
    url = models.URLField(max_length=500)
    # The HMAC key must be readable to sign with, so unlike API tokens it cannot be hashed.
    secret = models.CharField(max_length=100, editable=False)
    is_active = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["owner", "url"]
        constraints = [
            models.UniqueConstraint(fields=["owner", "url"], name="webhook_unique_url"),
        ]

    def __str__(self) -> str:
        return self.url_redacted

    @property
    def url_redacted(self) -> str:
        """The URL as every page but the webhook's admin editor shows it: scheme, host, port
        and path. A user name and password, a query or a fragment can carry the receiver's
        credentials, and deliveries are shown to reviewers."""
        try:
            parts = urlsplit(self.url)
        except ValueError:
            return "(not a valid URL)"
        host = parts.netloc.rpartition("@")[2]
        return urlunsplit((parts.scheme, host, parts.path, "", ""))


class WebhookDelivery(models.Model):
    """One event to one webhook, delivered by a Celery task with retries."""

    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        DELIVERED = "delivered", "Delivered"
        FAILED = "failed", "Failed"

    webhook = models.ForeignKey(Webhook, on_delete=models.CASCADE, related_name="deliveries")
    event_id = models.UUIDField(default=uuid.uuid4, editable=False)
    event_type = models.CharField(max_length=50)
    payload = models.JSONField()
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.PENDING)
    attempt_count = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    delivered_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name_plural = "webhook deliveries"
        indexes = [
            # webhook_deliveries_resume looks for overdue pending deliveries.
            models.Index(
                fields=["next_attempt_at"],
                name="delivery_pending_due",
                condition=models.Q(status="pending"),
            ),
        ]
        constraints = [
            models.UniqueConstraint(fields=["webhook", "event_id"], name="delivery_unique_event"),
        ]

    def __str__(self) -> str:
        return f"{self.event_type} → {self.webhook}"


class WebhookAttempt(models.Model):
    delivery = models.ForeignKey(WebhookDelivery, on_delete=models.CASCADE, related_name="attempts")
    at = models.DateTimeField()
    status_code = models.PositiveIntegerField(null=True, blank=True)
    error = models.TextField(blank=True)
    duration_ms = models.FloatField()

    class Meta:
        ordering = ["-at", "-id"]

    def __str__(self) -> str:
        return f"{self.at:%Y-%m-%d %H:%M:%S} {self.status_code or self.error[:40]}"
