import time
from datetime import datetime

from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from learning import cycles
from learning.models import CycleRun


def _timestamp(text: str) -> datetime:
    try:
        moment = datetime.fromisoformat(text)
    except ValueError as exc:
        raise CommandError(f"--at {text!r}: expected ISO 8601, e.g. 2026-03-02T12:00Z") from exc
    if moment.tzinfo is None:
        raise CommandError(f"--at {text!r}: give a time zone, e.g. 2026-03-02T12:00Z")
    if moment > timezone.now():
        # A window is learned from once it has ended: a future one would be marked done
        # before its verdicts exist, and its real run would then change nothing.
        raise CommandError(f"--at {text!r} is in the future; give a time up to now.")
    return moment


class Command(BaseCommand):
    help = (
        "Run one learning cycle now, for the window that --at (default: now) falls in. "
        "A window that already ran successfully is reported, not run again."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "kind", choices=[*CycleRun.Kind.values, "all"], help="a cycle, or all of them in turn"
        )
        parser.add_argument("--at", help="ISO 8601 timestamp with a time zone")

    def handle(self, *args, **opts):
        at = _timestamp(opts["at"]) if opts["at"] else None
        kinds = CycleRun.Kind.values if opts["kind"] == "all" else [opts["kind"]]
        for kind in kinds:
            started = time.perf_counter()
            try:
                run = cycles.cycle_run(kind, at)
            except Exception as exc:
                raise CommandError(f"The {kind} cycle failed: {exc}") from exc
            self.stdout.write(
                self.style.SUCCESS(
                    f"{run} (window {run.window_start:%Y-%m-%d %H:%M} to "
                    f"{run.window_end:%Y-%m-%d %H:%M}, attempt {run.attempts}, "
                    f"{time.perf_counter() - started:.1f} s): {run.counts}"
                )
            )
            for change in run.changes:
                self.stdout.write(f"  {change}")
