"""Celery tasks of the dashboard: thin wrappers over dashboard.rollups, for beat.

No retries: each runs again within minutes on its own schedule and does the same work,
from whatever the failed run left (a rollup hour is replaced whole, or not at all).
"""

from dataclasses import asdict

from celery import shared_task

from dashboard import rollups


@shared_task
def rollups_refresh() -> dict:
    return asdict(rollups.rollups_refresh())


@shared_task
def queue_snapshot_take() -> int:
    return rollups.queue_snapshot_take()
