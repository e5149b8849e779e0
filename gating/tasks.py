"""Celery tasks of the gate: webhook delivery and the outbox's upkeep, as thin wrappers."""

from datetime import timedelta

from celery import shared_task
from django.utils import timezone

from gating import outbox, webhooks

# Published outbox rows are kept this long, to see what was sent when, then pruned.
OUTBOX_KEEP = timedelta(days=7)


@shared_task
def webhook_deliver(delivery_id: int) -> None:
    """Make the next attempt at one delivery, and schedule the one after if it failed.

    It schedules itself rather than using ``self.retry``: the limit is a time window
    (WEBHOOK_RETRY_HOURS after the event), not a number of retries, and delivery_attempt
    applies it. Running twice for one attempt is harmless: delivery_attempt claims each
    attempt with a conditional UPDATE.
    """
    delay = webhooks.delivery_attempt(delivery_id)
    if delay is not None:
        # Straight to the broker: this runs in a worker, and a countdown lost with the
        # broker is found again by webhook_deliveries_resume.
        webhook_deliver.apply_async((delivery_id,), countdown=delay)


@shared_task
def webhook_deliveries_resume() -> int:
    """Queue again the pending deliveries whose task was lost; returns how many.

    A broker restart can drop the countdowns it held. Meant for beat, every few minutes.
    """
    ids = webhooks.deliveries_resume()
    for pk in ids:
        webhook_deliver.delay(pk)
    return len(ids)


@shared_task
def outbox_prune() -> int:
    """Delete outbox rows published more than OUTBOX_KEEP ago. Meant for beat, daily."""
    return outbox.outbox_prune(older_than=timezone.now() - OUTBOX_KEEP)
