from django.apps import AppConfig
from django.db.models.signals import post_migrate


class DashboardConfig(AppConfig):
    name = "dashboard"

    def ready(self):
        from dashboard.schedule import schedule_seed

        # Once per migrate (and per flush), after every app's migrations.
        post_migrate.connect(schedule_seed, sender=self, dispatch_uid="dashboard.schedule_seed")
