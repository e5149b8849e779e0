"""The default schedule, written once in dashboard/schedule.py and seeded after migrate."""

from datetime import timedelta

import pytest
from celery.schedules import crontab
from django_celery_beat.models import PeriodicTask

from dashboard import schedule
from learning.cycles import PERIODS

pytestmark = pytest.mark.django_db


def test_each_learning_cycle_fires_once_a_period_as_celery_reads_its_crontab():
    cycles = [e for e in schedule.DEFAULT_SCHEDULE if e.task == "learning.tasks.cycle"]
    assert {e.args[0] for e in cycles} == {str(kind) for kind in PERIODS}
    for entry in cycles:
        parsed = crontab(minute=entry.minute, hour=entry.hour)
        fires_a_day = len(parsed.hour) * len(parsed.minute)
        assert fires_a_day == timedelta(days=1) / PERIODS[entry.args[0]], entry.name
        # On the hours the windows align to: midnight is one of them.
        assert 0 in parsed.hour


def test_the_seeded_schedule_is_the_one_the_migrations_seeded_before():
    seeded = {
        e.name: (e.task, e.crontab.minute, e.crontab.hour, e.args, e.expire_seconds)
        for e in PeriodicTask.objects.select_related("crontab")
    }
    assert seeded["learning: validator weights (6h)"][1:] == ("5", "*/6", '["validators"]', None)
    assert seeded["learning: thresholds (12h)"][1:] == ("10", "*/12", '["thresholds"]', None)
    assert seeded["learning: model tiers (24h)"][1:] == ("15", "0", '["tiers"]', None)
    assert seeded["learning: alerts (5 min)"][1:] == ("*/5", "*", '["alerts"]', 240)
    assert seeded["outbox: prune published tasks (daily)"] == (
        "gating.tasks.outbox_prune", "40", "3", "[]", None,
    )  # fmt: skip
    assert len(seeded) == len(schedule.DEFAULT_SCHEDULE)


def test_seeding_again_leaves_an_admins_change_and_restores_what_was_deleted():
    thresholds = PeriodicTask.objects.get(name="learning: thresholds (12h)")
    thresholds.enabled = False
    thresholds.save()
    PeriodicTask.objects.filter(name="learning: alerts (5 min)").delete()

    assert schedule.schedule_seed() == 1

    assert PeriodicTask.objects.get(name="learning: thresholds (12h)").enabled is False
    assert PeriodicTask.objects.filter(name="learning: alerts (5 min)").exists()


@pytest.mark.parametrize(
    "period", [timedelta(hours=7), timedelta(minutes=90), timedelta(minutes=7)]
)
def test_a_period_with_no_daily_crontab_is_refused(period):
    with pytest.raises(ValueError, match="no daily crontab"):
        schedule._crontab(period, 0)
