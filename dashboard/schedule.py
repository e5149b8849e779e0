"""The default schedule of the periodic work, written once, beside the Celery app.

It is seeded into django-celery-beat's tables after every ``migrate`` (``schedule_seed``,
connected in ``DashboardConfig.ready``), rather than given to beat in settings, so that an
admin's change in the Django admin stays: beat copies a settings schedule over the tables
at every start. Entries that exist by name are left alone.

The learning cycles fire once per their period in ``learning.cycles.PERIODS``, which is
also what aligns their windows; the crontab is worked out from it here.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import timedelta

from django.db import transaction

from learning.cycles import PERIODS, Kind


@dataclass(frozen=True)
class Entry:
    name: str
    task: str
    minute: str
    hour: str = "*"
    args: tuple[str, ...] = ()
    # A late run is dropped rather than piled up behind the next one, which does the same.
    expire_seconds: int | None = None


def _crontab(period: timedelta, minute: int) -> tuple[str, str]:
    """The crontab minute and hour that fire once every ``period`` at ``minute`` past the
    hour, on the hours ``learning.cycles.window_end`` aligns windows to (from midnight)."""
    if period < timedelta(hours=1):
        minutes = period // timedelta(minutes=1)
        if period != timedelta(minutes=minutes) or 60 % minutes:
            raise ValueError(f"a period of {period} has no daily crontab")
        return f"*/{minutes}", "*"
    hours = period // timedelta(hours=1)
    if period != timedelta(hours=hours) or 24 % hours:
        raise ValueError(f"a period of {period} has no daily crontab")
    return str(minute), "0" if hours == 24 else f"*/{hours}"


def _cycle(kind: Kind, name: str, *, minute: int = 0, expire_seconds: int | None = None):
    cron_minute, cron_hour = _crontab(PERIODS[kind], minute)
    return Entry(
        name=name,
        task="learning.tasks.cycle",
        minute=cron_minute,
        hour=cron_hour,
        args=(str(kind),),
        expire_seconds=expire_seconds,
    )


DEFAULT_SCHEDULE = (
    # Minutes apart, so that the cycles of one hour do not start together; each window
    # still ends on the hour (learning.cycles.window_end).
    _cycle(Kind.VALIDATORS, "learning: validator weights (6h)", minute=5),
    _cycle(Kind.THRESHOLDS, "learning: thresholds (12h)", minute=10),
    _cycle(Kind.TIERS, "learning: model tiers (24h)", minute=15),
    _cycle(Kind.AGREEMENT, "learning: reviewer agreement (6h)"),
    _cycle(Kind.ALERTS, "learning: alerts (5 min)", expire_seconds=240),
    # A cycle whose worker was killed waits for no visibility timeout: within minutes.
    Entry(
        "learning: resume lost cycles (1 min)",
        "learning.tasks.cycles_resume",
        "*",
        expire_seconds=50,
    ),
    Entry(
        "webhooks: resume lost deliveries (5 min)",
        "gating.tasks.webhook_deliveries_resume",
        "*/5",
        expire_seconds=240,
    ),
    Entry("outbox: prune published tasks (daily)", "gating.tasks.outbox_prune", "40", "3"),
    # Charts may be a minute behind: each run recomputes the hours that new outputs and
    # reviews made dirty, seconds of work at a steady pace.
    Entry("dashboard: rollups (1 min)", "dashboard.tasks.rollups_refresh", "*", expire_seconds=50),
    # Often enough to draw the queue's size over a day; each snapshot is a few rows per
    # task type, model and kind.
    Entry(
        "dashboard: queue snapshot (5 min)",
        "dashboard.tasks.queue_snapshot_take",
        "*/5",
        expire_seconds=240,
    ),
)


def schedule_seed(*, using: str = "default", **kwargs) -> int:
    """Create the entries of ``DEFAULT_SCHEDULE`` that do not exist by name; returns how
    many. A ``post_migrate`` receiver: it runs after every migrate and every flush."""
    from django_celery_beat.models import CrontabSchedule, PeriodicTask

    tasks = PeriodicTask.objects.using(using)
    existing = set(tasks.values_list("name", flat=True))
    missing = [e for e in DEFAULT_SCHEDULE if e.name not in existing]
    with transaction.atomic(using=using):
        for entry in missing:
            crontab, _ = CrontabSchedule.objects.using(using).get_or_create(
                minute=entry.minute,
                hour=entry.hour,
                day_of_week="*",
                day_of_month="*",
                month_of_year="*",
                timezone="UTC",
            )
            tasks.create(
                name=entry.name,
                task=entry.task,
                crontab=crontab,
                args=json.dumps(list(entry.args)),
                expire_seconds=entry.expire_seconds,
            )
    return len(missing)
