from django.conf import settings
from django.core.management.base import BaseCommand

from dashboard import demo

BASE_URL = "http://127.0.0.1:8000"


class Command(BaseCommand):
    help = "Seed the demo on an empty database and print how to log in; otherwise do nothing."

    def handle(self, *args, **options):
        credentials_file = settings.VAR_DIR / "demo-credentials.json"
        if demo.demo_needed():
            credentials = demo.demo_accounts_create()
            demo.credentials_save(credentials, credentials_file)
            self.stdout.write(self.style.SUCCESS("Demo seeded."))
        else:
            credentials = demo.credentials_load(credentials_file)
            if credentials is None:
                self.stdout.write(f"Database has data already; serving it at {BASE_URL}")
                return
        self.stdout.write(credentials.as_text(BASE_URL))
        self.stdout.write(f"(saved in {credentials_file})")
