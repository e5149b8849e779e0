"""The gating app's models, one module per concern."""

from gating.models.audit import AuditEvent
from gating.models.comments import COMMENT_MAX_CHARS, Comment
from gating.models.gateways import GatewaySettings, TaskTypeCreation
from gating.models.outbox import OutboxMessage
from gating.models.outputs import (
    DEFAULT_FACT_CHECK_VALIDATORS,
    ApiToken,
    Output,
    TaskModelStats,
    TaskType,
    TaskTypeUse,
    Validator,
)
from gating.models.queue import Review, ReviewItem
from gating.models.rubrics import Rubric
from gating.models.webhooks import Webhook, WebhookAttempt, WebhookDelivery

__all__ = [
    "COMMENT_MAX_CHARS",
    "DEFAULT_FACT_CHECK_VALIDATORS",
    "ApiToken",
    "AuditEvent",
    "Comment",
    "GatewaySettings",
    "OutboxMessage",
    "Output",
    "Review",
    "ReviewItem",
    "Rubric",
    "TaskModelStats",
    "TaskType",
    "TaskTypeCreation",
    "TaskTypeUse",
    "Validator",
    "Webhook",
    "WebhookAttempt",
    "WebhookDelivery",
]
