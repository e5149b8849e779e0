"""Celery tasks of the learning engine: thin wrappers over learning.cycles."""

from datetime import datetime

from celery import shared_task

from learning import cycles


@shared_task(
    acks_late=True,
    reject_on_worker_lost=True,
    autoretry_for=(Exception,),
    retry_backoff=60,
    retry_backoff_max=1800,
    max_retries=5,
)
def cycle(kind: str, at: str | None = None) -> dict:
    """Run one learning cycle for the window that ``at`` (ISO 8601, default now) falls in.

    Late acknowledgement: a worker that dies mid-cycle leaves the message on the broker,
    and the redelivery finds the window's run incomplete (its transaction rolled back)
    and does it again. A duplicate that arrives after a success changes nothing.
    """
    run = cycles.cycle_run(kind, datetime.fromisoformat(at) if at else None)
    return {"run": run.pk, "status": run.status, "counts": run.counts}
