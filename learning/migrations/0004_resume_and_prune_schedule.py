"""Two more entries of the default schedule: lost cycles are queued again every minute, and
published outbox rows are pruned daily (docs/reliability.md)."""

import importlib

from django.db import migrations

SCHEDULE = {
    # A cycle whose worker was killed waits for no visibility timeout: within minutes.
    "learning: resume lost cycles (1 min)": ("learning.tasks.cycles_resume", "*", "*", []),
    "outbox: prune published tasks (daily)": ("gating.tasks.outbox_prune", "40", "3", []),
}
# A late run is dropped: the next minute's does the same.
EXPIRES_SECONDS = {"*": 50}

_first = importlib.import_module("learning.migrations.0003_beat_schedule")


def seed(apps, schema_editor):
    _first.seed_entries(apps, SCHEDULE, EXPIRES_SECONDS)


def unseed(apps, schema_editor):
    apps.get_model("django_celery_beat", "PeriodicTask").objects.filter(
        name__in=list(SCHEDULE)
    ).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("learning", "0003_beat_schedule"),
        ("gating", "0010_outbox"),
    ]

    operations = [migrations.RunPython(seed, unseed)]
