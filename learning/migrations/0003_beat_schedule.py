"""The default schedule of the periodic work, in django-celery-beat's tables.

Seeded here rather than in settings so that an admin's change in the Django admin stays:
beat copies a settings schedule over the tables at every start. Entries that exist are
left alone.
"""

from django.db import migrations

# name: (task, crontab minute, crontab hour, args)
SCHEDULE = {
    "learning: validator weights (6h)": ("learning.tasks.cycle", "5", "*/6", ["validators"]),
    "learning: thresholds (12h)": ("learning.tasks.cycle", "10", "*/12", ["thresholds"]),
    "learning: model tiers (24h)": ("learning.tasks.cycle", "15", "0", ["tiers"]),
    "learning: reviewer agreement (6h)": ("learning.tasks.cycle", "0", "*/6", ["agreement"]),
    "learning: alerts (5 min)": ("learning.tasks.cycle", "*/5", "*", ["alerts"]),
    "webhooks: resume lost deliveries (5 min)": (
        "gating.tasks.webhook_deliveries_resume",
        "*/5",
        "*",
        [],
    ),
}
# A run that starts late is dropped rather than piled up behind the next one.
EXPIRES_SECONDS = {"*/5": 240}


def seed(apps, schema_editor):
    seed_entries(apps, SCHEDULE, EXPIRES_SECONDS)


def seed_entries(apps, schedule: dict, expires_seconds: dict) -> None:
    """Create the entries of ``schedule`` that do not exist (later migrations add theirs)."""
    import json

    CrontabSchedule = apps.get_model("django_celery_beat", "CrontabSchedule")
    PeriodicTask = apps.get_model("django_celery_beat", "PeriodicTask")
    for name, (task, minute, hour, args) in schedule.items():
        if PeriodicTask.objects.filter(name=name).exists():
            continue
        crontab, _ = CrontabSchedule.objects.get_or_create(
            minute=minute,
            hour=hour,
            day_of_week="*",
            day_of_month="*",
            month_of_year="*",
            timezone="UTC",
        )
        PeriodicTask.objects.create(
            name=name,
            task=task,
            crontab=crontab,
            args=json.dumps(args),
            expire_seconds=expires_seconds.get(minute),
        )


def unseed(apps, schema_editor):
    apps.get_model("django_celery_beat", "PeriodicTask").objects.filter(
        name__in=list(SCHEDULE)
    ).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("learning", "0002_cycles_and_alerts"),
        ("django_celery_beat", "0019_alter_periodictasks_options"),
    ]

    operations = [migrations.RunPython(seed, unseed)]
