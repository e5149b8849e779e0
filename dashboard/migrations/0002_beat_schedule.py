"""The dashboard's entries of the default schedule (learning/migrations/0003_beat_schedule.py
says why the schedule is seeded into django-celery-beat's tables)."""

import importlib

from django.db import migrations

SCHEDULE = {
    # Charts may be a minute behind: each run recomputes the hours that new outputs and
    # reviews made dirty, seconds of work at a steady pace.
    "dashboard: rollups (1 min)": ("dashboard.tasks.rollups_refresh", "*", "*", []),
    # Often enough to draw the queue's size over a day; each snapshot is a few rows per
    # task type, model and kind.
    "dashboard: queue snapshot (5 min)": ("dashboard.tasks.queue_snapshot_take", "*/5", "*", []),
}
# A late run is dropped rather than piled up behind the next one, which does the same work.
EXPIRES_SECONDS = {"*": 50, "*/5": 240}

_first = importlib.import_module("learning.migrations.0003_beat_schedule")


def seed(apps, schema_editor):
    _first.seed_entries(apps, SCHEDULE, EXPIRES_SECONDS)


def unseed(apps, schema_editor):
    apps.get_model("django_celery_beat", "PeriodicTask").objects.filter(
        name__in=list(SCHEDULE)
    ).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("dashboard", "0001_initial"),
        ("learning", "0004_resume_and_prune_schedule"),
        ("django_celery_beat", "0019_alter_periodictasks_options"),
    ]

    operations = [migrations.RunPython(seed, unseed)]
