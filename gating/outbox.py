"""The transactional outbox: what must reach the broker goes through a table first.

``outbox_enqueue`` stores a task in the caller's transaction, so it exists exactly when
the change that needs it commits, and a request never waits on the broker or fails
because it is away. ``outbox_relay`` publishes stored tasks from outside any request
(``manage.py outbox_relay`` runs it in a loop) and keeps every task the broker did not
take, so everything is published once the broker is back.

Publishing is at least once: a relay that dies between the broker taking a task and its
row being marked may publish that task again. Every task sent this way is idempotent
(webhook attempts are claimed by a conditional UPDATE; a cycle runs once per window), so
its effect happens exactly once.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from celery import current_app
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from gating.models import OutboxMessage

log = logging.getLogger(__name__)

RELAY_BATCH = 500


def outbox_enqueue(task: str, *args) -> OutboxMessage:
    """Store ``task(*args)`` (a registered Celery task name, JSON arguments) to publish
    once the caller's transaction commits."""
    return OutboxMessage.objects.create(task=task, args=list(args))


def outbox_enqueue_many(task: str, arg_lists: Iterable[list]) -> list[OutboxMessage]:
    return OutboxMessage.objects.bulk_create(
        OutboxMessage(task=task, args=list(args)) for args in arg_lists
    )


def _send(message: OutboxMessage) -> None:
    # retry=False: the relay has its own back-off, and must not sit in kombu's retry loop.
    current_app.send_task(message.task, args=message.args, retry=False)


@dataclass(frozen=True)
class RelayResult:
    published: int
    waiting: bool  # the broker refused one: what is left waits for the next pass
    error: str = ""


def outbox_relay(*, send: Callable[[OutboxMessage], None] = _send, limit: int = RELAY_BATCH):
    """Publish up to ``limit`` waiting tasks, oldest first, and mark them published.

    Stops at the first the broker refuses: that one records the error and waits, with
    everything after it, for the next pass. Concurrent relays take disjoint rows.
    """
    now = timezone.now()
    with transaction.atomic():
        messages = list(
            OutboxMessage.objects.select_for_update(skip_locked=True)
            .filter(published_at__isnull=True)
            .order_by("id")[:limit]
        )
        published: list[int] = []
        error = ""
        for message in messages:
            try:
                send(message)
            except Exception as exc:  # any broker or transport failure means the same here
                error = f"{type(exc).__name__}: {exc}"
                OutboxMessage.objects.filter(pk=message.pk).update(
                    attempts=F("attempts") + 1, last_error=error[:2000]
                )
                break
            published.append(message.pk)
        if published:
            OutboxMessage.objects.filter(pk__in=published).update(published_at=now)
    return RelayResult(published=len(published), waiting=bool(error), error=error)


def outbox_prune(*, older_than) -> int:
    """Delete published rows older than ``older_than``; returns how many."""
    deleted, _ = OutboxMessage.objects.filter(
        published_at__isnull=False, published_at__lt=older_than
    ).delete()
    return deleted
