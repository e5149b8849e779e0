import logging
import signal
import time
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand
from django.db import close_old_connections

from gating.outbox import outbox_relay

log = logging.getLogger("gating.outbox")


class Command(BaseCommand):
    help = (
        "Publish the tasks that requests stored in the outbox to the Celery broker, in a "
        "loop. Run one (or more) beside the web server, the worker and beat."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--once", action="store_true", help="One pass over what is waiting, then exit."
        )
        parser.add_argument(
            "--heartbeat-file",
            type=Path,
            help="Touched at every pass, for a health check that the relay is not stuck.",
        )

    def handle(self, *args, once: bool, heartbeat_file: Path | None, **options):
        if once:
            result = outbox_relay()
            self.stdout.write(
                f"published {result.published}" + (f"; {result.error}" if result.error else "")
            )
            return
        stopping = []
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, lambda *_: stopping.append(True))
        idle = settings.OUTBOX_POLL_SECONDS
        backoff = idle
        broker_down = False
        log.info("Outbox relay started, polling every %.2f s", idle)
        while not stopping:
            if heartbeat_file:
                heartbeat_file.touch()
            close_old_connections()
            result = outbox_relay()
            if result.waiting:
                if not broker_down:
                    log.warning("Broker unreachable, tasks wait in the outbox: %s", result.error)
                broker_down = True
                # Back off while the broker is away, but never so long that recovery waits.
                backoff = min(backoff * 2, settings.OUTBOX_MAX_BACKOFF_SECONDS)
                time.sleep(backoff)
                continue
            if broker_down:
                log.info("Broker reachable again; publishing what waited")
                broker_down = False
            backoff = idle
            if result.published == 0:
                time.sleep(idle)
        log.info("Outbox relay stopped")
