"""Waits for the web server that ``make run`` starts beside it to answer, then prints where
it is and how to log in once more: the first time they were printed, 500 lines of start-up
scrolled them away. Then it waits, quietly, until ``make run`` stops (honcho ends every
process when one of them exits)."""

import signal
import sys
import time
import urllib.error
import urllib.request

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from dashboard import demo

# How long the web server may take to answer before this says so and goes on waiting.
PATIENCE_SECONDS = 120


class Command(BaseCommand):
    help = "Print the demo's address and logins once the web server answers; then wait."

    def add_arguments(self, parser):
        parser.add_argument("--port", type=int, required=True)
        parser.add_argument(
            "--once", action="store_true", help="exit after printing (for scripts and tests)"
        )

    def handle(self, *args, port, once, **options):
        if not 1 <= port <= 65535:
            raise CommandError(f"--port must be between 1 and 65535, not {port}")
        base_url = f"http://127.0.0.1:{port}"
        started = time.monotonic()
        warned = False
        while not _answers(f"{base_url}/healthz"):
            if not warned and time.monotonic() - started > PATIENCE_SECONDS:
                self.stderr.write(f"The web server has not answered at {base_url} yet.")
                warned = True
            time.sleep(0.5)
        credentials = demo.credentials_load(settings.VAR_DIR / "demo-credentials.json")
        said = credentials.as_text(base_url) if credentials else f"Gatehouse at {base_url}"
        self.stdout.write(self.style.SUCCESS(said))
        self.stdout.flush()
        if once:
            return
        # Stopped by honcho's SIGTERM (or Ctrl-C): a clean exit, not a traceback.
        for stop in (signal.SIGTERM, signal.SIGINT):
            signal.signal(stop, lambda *_: sys.exit(0))
        while True:
            signal.pause()


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return response.status == 200
    except (urllib.error.URLError, OSError):
        return False
