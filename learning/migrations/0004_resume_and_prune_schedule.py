"""Once seeded two more entries of the default schedule; it is now written once in
dashboard/schedule.py and seeded from there after every migrate."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("learning", "0003_beat_schedule"),
        ("gating", "0010_outbox"),
    ]

    operations = []
