"""Celery tasks of the learning engine: thin wrappers over learning.cycles."""

from datetime import datetime

from celery import shared_task
from django.db import InterfaceError, OperationalError
from django.utils import timezone

from learning import cycles

RETRY_DELAYS = (60, 300, 900, 1800, 3600)
# What a later attempt can get past: the database gone, restarting or refusing connections.
# Anything else is a fault in the cycle or its data, which the same window would meet again:
# it fails at once, recorded on the run (CycleRun.error) for a person to read.
TRANSIENT_ERRORS = (OperationalError, InterfaceError)


@shared_task(bind=True, acks_late=True, reject_on_worker_lost=True)
def cycle(self, kind: str, at: str | None = None) -> dict:
    """Run one learning cycle for the window that ``at`` (ISO 8601, default now) falls in.

    Late acknowledgement: a worker that dies mid-cycle leaves the message on the broker,
    and the redelivery finds the window's run incomplete (its transaction rolled back)
    and does it again. A transient failure (``TRANSIENT_ERRORS``) is retried with backoff
    for the same window: the retry carries the moment the first attempt resolved, so it
    cannot slide into the next one.
    A duplicate that arrives after a success changes nothing.
    """
    moment = datetime.fromisoformat(at) if at else timezone.now()
    try:
        run = cycles.cycle_run(kind, moment)
    except TRANSIENT_ERRORS as exc:
        retries = self.request.retries
        if retries >= len(RETRY_DELAYS):
            raise
        raise self.retry(
            args=(kind, moment.isoformat()), exc=exc, countdown=RETRY_DELAYS[retries]
        ) from exc
    return {"run": run.pk, "status": run.status, "counts": run.counts}


@shared_task
def cycles_resume() -> int:
    """Queue again the cycles whose worker died mid-run; returns how many. Meant for beat,
    every minute: a cycle message a killed worker held stays unacknowledged on the broker
    until its visibility timeout (an hour), far longer than anyone should wait."""
    return len(cycles.cycles_resume())
