"""Writes of the learning app outside the cycles themselves."""

from __future__ import annotations

from dashboard.celery import publish


def cycle_queue(kind: str) -> bool:
    """Queue one cycle for the current window on the worker. False if the broker is down."""
    from learning.tasks import cycle

    return publish(cycle, kind)
