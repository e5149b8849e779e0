"""Webhook events: what Gatehouse tells a gateway when a human decides one of its outputs.

Events are written to WebhookDelivery rows inside the deciding transaction (an outbox), and
a Celery task is queued for each only after that transaction commits, so a decision and its
event are stored together or not at all, and no task ever runs for a rolled-back decision.
"""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from gating.models import Output, Webhook, WebhookDelivery

OUTPUT_DECIDED = "output.decided"
OUTPUT_AUDIT_REJECTED = "output.audit_rejected"


def event_payload(*, output: Output, event_type: str, review=None) -> dict:
    """The JSON body of an event about one output."""
    payload = {
        "type": event_type,
        "output": {
            "id": output.pk,
            "external_id": output.external_id,
            "task_type": output.task_type.name,
            "model": output.model,
            "decision": output.decision,
            "status": output.status,
            "final_output": output.final_output_text,
            "decided_at": output.decided_at.isoformat() if output.decided_at else None,
        },
    }
    if review is not None:
        payload["review"] = {
            "action": review.action,
            "reason": review.reason,
            "note": review.note,
            "is_bulk": review.is_bulk,
        }
    return payload


def webhook_events_emit(*, outputs_with_reviews: list[tuple[Output, object]], event_type: str):
    """Queue one delivery per (output, active webhook of its source), after commit."""
    by_owner: dict[int, list[Webhook]] = {}
    owners = {o.source_id for o, _ in outputs_with_reviews}
    for hook in Webhook.objects.filter(owner_id__in=owners, is_active=True):
        by_owner.setdefault(hook.owner_id, []).append(hook)
    if not by_owner:
        return []
    now = timezone.now()
    deliveries = WebhookDelivery.objects.bulk_create(
        WebhookDelivery(
            webhook=hook,
            event_type=event_type,
            payload=event_payload(output=output, event_type=event_type, review=review),
            next_attempt_at=now,
        )
        for output, review in outputs_with_reviews
        for hook in by_owner.get(output.source_id, [])
    )
    ids = [d.pk for d in deliveries]

    def enqueue():
        from gating.tasks import webhook_deliver

        for pk in ids:
            webhook_deliver.delay(pk)

    transaction.on_commit(enqueue)
    return deliveries
