from datetime import UTC, datetime

from django.core.management.base import BaseCommand, CommandError
from rich.progress import Progress

from dashboard import rollups


def _moment(text: str) -> datetime:
    """An ISO 8601 date or time; UTC unless it names its offset."""
    try:
        moment = datetime.fromisoformat(text)
    except ValueError as exc:
        raise CommandError(f"{text!r} is not an ISO 8601 date or time") from exc
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


class Command(BaseCommand):
    help = (
        "Recompute the dashboard's rollups from the raw outputs and reviews: every hour, or "
        "those in --since/--until. Run it after `simulate --reset`, whose deletions the "
        "minutely refresh does not see."
    )

    def add_arguments(self, parser):
        parser.add_argument("--since", type=_moment, help="first hour (ISO 8601, UTC)")
        parser.add_argument("--until", type=_moment, help="end, exclusive (ISO 8601, UTC)")
        parser.add_argument(
            "--queue-history",
            action="store_true",
            help="also store hourly queue snapshots over the range, as the queue was then "
            "(for replayed history, which beat's snapshots never saw)",
        )

    def handle(self, *args, since, until, queue_history, **options):
        if since and until and since >= until:
            raise CommandError("--since must be before --until")
        with Progress(disable=options["verbosity"] == 0) as progress:
            task = progress.add_task("Rebuilding rollups (hours)", total=None)
            hours = rollups.rollups_rebuild(
                since,
                until,
                on_progress=lambda done, total: progress.update(task, completed=done, total=total),
            )
        self.stdout.write(f"Rebuilt {hours} hours of rollups.")
        if queue_history:
            moments = rollups.queue_snapshots_backfill(since, until)
            self.stdout.write(f"Stored {moments} hourly queue snapshots.")
