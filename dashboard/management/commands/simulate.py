import os
from datetime import date, timedelta

from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone
from rich.progress import Progress

from simulator import run, world


def _drift(text: str) -> world.Drift:
    """``model=gpt-x,day=10,severity=0.5``."""
    try:
        parts = dict(part.split("=", 1) for part in text.split(","))
        return world.Drift(
            model=parts["model"], day=int(parts["day"]), severity=float(parts["severity"])
        )
    except (KeyError, ValueError) as exc:
        raise CommandError(
            f"--drift {text!r}: expected model=NAME,day=N,severity=0..1 ({exc})"
        ) from exc


def _pick(defaults: tuple, count: int | None, what: str) -> tuple:
    if count is None:
        return defaults
    if not 1 <= count <= len(defaults):
        raise CommandError(f"--{what} must be between 1 and {len(defaults)}")
    return defaults[:count]


def _cycles_run_due():
    # Imported only when the cycles run: the statistics libraries take seconds to load.
    from learning import cycles

    return cycles.cycles_run_due


class Command(BaseCommand):
    help = (
        "Simulate gateway traffic with known ground truth through the real gate, and "
        "reviewers working the queue at simulated times. Deterministic for a given --seed."
    )

    def add_arguments(self, parser):
        parser.add_argument("--seed", type=int, default=1)
        parser.add_argument("--days", type=int, default=14)
        parser.add_argument("--outputs-per-day", type=int, default=2000)
        parser.add_argument("--task-types", type=int, help="how many of the default task types")
        parser.add_argument(
            "--agent-task-types",
            action="store_true",
            help="add the agent task types, whose outputs carry evidence and provenance "
            "(docs/simulation.md)",
        )
        parser.add_argument("--models", type=int, help="how many of the default models")
        parser.add_argument("--reviewers", type=int, help="how many of the default reviewers")
        parser.add_argument(
            "--reviews-per-hour",
            type=int,
            default=run.DEFAULT_REVIEWS_PER_HOUR,
            help="each reviewer's decisions per working hour",
        )
        parser.add_argument(
            "--live-days",
            type=int,
            default=run.DEFAULT_LIVE_DAYS,
            help="how many of the last days are worked through live claims "
            "(the days before them are recorded in bulk, which is much faster)",
        )
        parser.add_argument(
            "--processes",
            type=int,
            default=os.cpu_count() or 1,
            help="worker processes that gate outputs side by side, on PostgreSQL "
            "(default: one per core); the stored history is the same for any number",
        )
        parser.add_argument(
            "--start", type=date.fromisoformat, help="first day (default: --days ago)"
        )
        parser.add_argument("--drift", type=_drift, help="model=NAME,day=N,severity=0..1")
        parser.add_argument(
            "--reset", action="store_true", help="delete earlier simulated data first"
        )
        parser.add_argument(
            "--no-learning",
            action="store_true",
            help="do not run the learning cycles at their simulated times",
        )

    def handle(self, *args, **opts):
        start = opts["start"] or timezone.now().date() - timedelta(days=opts["days"])
        try:
            config = world.SimulationConfig(
                seed=opts["seed"],
                days=opts["days"],
                outputs_per_day=opts["outputs_per_day"],
                start=start,
                task_types=_pick(world.DEFAULT_TASK_TYPES, opts["task_types"], "task-types")
                + (world.AGENT_TASK_TYPES if opts["agent_task_types"] else ()),
                models=_pick(world.DEFAULT_MODELS, opts["models"], "models"),
                drift=opts["drift"],
            )
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        reviewers = _pick(world.DEFAULT_REVIEWERS, opts["reviewers"], "reviewers")
        if opts["reviews_per_hour"] < 0:
            raise CommandError("--reviews-per-hour must be 0 or more")
        if opts["processes"] < 1:
            raise CommandError("--processes must be 1 or more")
        if opts["live_days"] < 0:
            raise CommandError("--live-days must be 0 or more")

        if opts["reset"]:
            self.stdout.write(f"Deleted {run.simulation_reset()} simulated outputs.")
        with Progress(disable=opts["verbosity"] == 0) as progress:
            task = progress.add_task("Simulating", total=config.days * config.outputs_per_day)
            report = run.simulation_run(
                config,
                reviewers=reviewers,
                reviews_per_hour=opts["reviews_per_hour"],
                live_days=opts["live_days"],
                processes=opts["processes"],
                on_hour_end=None if opts["no_learning"] else _cycles_run_due(),
                on_progress=lambda n: progress.advance(task, n),
            )
        self.stdout.write(
            self.style.SUCCESS(
                f"Simulated {report.outputs} outputs from {start} over {config.days} days: "
                f"{report.reviews} reviews, {report.open_items} items left in the queue."
            )
        )
