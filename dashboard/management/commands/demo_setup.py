from django.conf import settings
from django.core.management.base import BaseCommand
from django.utils import timezone
from rich.progress import Progress

from dashboard import demo
from simulator import run


class Command(BaseCommand):
    help = "Seed the demo on an empty database and print how to log in; otherwise do nothing."

    def add_arguments(self, parser):
        parser.add_argument("--days", type=int, default=demo.DEMO_DAYS)
        parser.add_argument("--outputs-per-day", type=int, default=demo.DEMO_OUTPUTS_PER_DAY)
        parser.add_argument("--port", type=int, default=8000, help="where make run serves it")

    def handle(self, *args, days, outputs_per_day, port, **options):
        base_url = f"http://127.0.0.1:{port}"
        credentials_file = settings.VAR_DIR / "demo-credentials.json"
        if demo.demo_needed():
            credentials = demo.demo_accounts_create()
            demo.credentials_save(credentials, credentials_file)
            until = timezone.now()
            config = demo.demo_config(days=days, outputs_per_day=outputs_per_day, until=until)
            with Progress(disable=options["verbosity"] == 0) as progress:
                task = progress.add_task(
                    "Simulating traffic", total=run.outputs_before(config, until)
                )
                report = demo.demo_traffic_seed(
                    config, until=until, on_progress=lambda n: progress.advance(task, n)
                )
                rolled = progress.add_task("Building the dashboard's rollups (hours)", total=None)
                demo.demo_rollups_build(
                    until=until,
                    on_progress=lambda done, total: progress.update(
                        rolled, completed=done, total=total
                    ),
                )
            self.stdout.write(
                self.style.SUCCESS(
                    f"Demo seeded: {report.outputs} outputs over {days} days up to now, "
                    f"{report.reviews} reviews, {report.open_items} items in the queue."
                )
            )
        else:
            credentials = demo.credentials_load(credentials_file)
            if credentials is None:
                self.stdout.write(f"Database has data already; serving it at {base_url}")
                return
        self.stdout.write(credentials.as_text(base_url))
        self.stdout.write(f"(saved in {credentials_file})")
