"""Once seeded the dashboard's entries of the default schedule; it is now written once in
dashboard/schedule.py and seeded from there after every migrate."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("dashboard", "0001_initial"),
        ("learning", "0004_resume_and_prune_schedule"),
        ("django_celery_beat", "0019_alter_periodictasks_options"),
    ]

    operations = []
