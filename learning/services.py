"""Writes of the learning app outside the cycles themselves."""

from __future__ import annotations

import logging

log = logging.getLogger(__name__)


def cycle_queue(kind: str) -> bool:
    """Queue one cycle for the current window on the worker. False if the broker is down."""
    from learning.tasks import cycle

    try:
        cycle.apply_async((kind,), retry=False)
    except Exception:
        log.warning("Could not queue the %s cycle: broker unreachable", kind, exc_info=True)
        return False
    return True
