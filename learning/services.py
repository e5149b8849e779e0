"""Writes of the learning app outside the cycles themselves."""

from __future__ import annotations

from datetime import datetime

from django.utils import timezone

from gating.outbox import outbox_enqueue

CYCLE_TASK = "learning.tasks.cycle"


def cycle_queue(kind: str, at: datetime | None = None) -> None:
    """Queue one cycle for the window ``at`` (default now) falls in, through the outbox: the
    relay hands it to a worker, at once or as soon as the broker is reachable."""
    outbox_enqueue(CYCLE_TASK, kind, (at or timezone.now()).isoformat())
