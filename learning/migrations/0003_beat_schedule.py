"""Once seeded the default schedule of the periodic work into django-celery-beat's tables.

The schedule is now written once in dashboard/schedule.py and seeded from there after
every migrate; this migration is kept, empty, for the history it is part of.
"""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("learning", "0002_cycles_and_alerts"),
        ("django_celery_beat", "0019_alter_periodictasks_options"),
    ]

    operations = []
