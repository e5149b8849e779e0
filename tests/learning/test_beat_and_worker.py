"""End to end: celery beat, as its own process, schedules a learning cycle from
django-celery-beat's tables, and a real worker process runs it against the test's
PostgreSQL database over Redis."""

import os
import time

import pytest
from django_celery_beat.models import IntervalSchedule, PeriodicTask

from dashboard import schedule
from learning.models import CycleRun
from tests.gating.test_webhook_worker import broker_url  # noqa: F401
from tests.processes import celery_process, process_env

pytestmark = [pytest.mark.redis, pytest.mark.django_db(transaction=True)]

WAIT_SECONDS = 45


def test_beat_schedules_a_cycle_that_a_worker_runs(
    requires_postgres,
    transactional_db,
    broker_url,  # noqa: F811
    tmp_path,
):
    # The default schedule is there for admins to see and edit: seeded after migrate and
    # after an earlier transactional test's flush; seeding again adds nothing.
    assert schedule.schedule_seed() == 0
    seeded = set(PeriodicTask.objects.values_list("name", flat=True))
    assert {entry.name for entry in schedule.DEFAULT_SCHEDULE} <= seeded
    # ...and an entry an admin adds runs the same task, here every second.
    every_second, _ = IntervalSchedule.objects.get_or_create(every=1, period="seconds")
    PeriodicTask.objects.create(
        name="test: tiers every second",
        task="learning.tasks.cycle",
        interval=every_second,
        args='["tiers"]',
    )

    env = process_env(broker_url)
    worker_log, beat_log = tmp_path / "worker.log", tmp_path / "beat.log"
    worker_args = [
        "worker",
        "--pool", "solo", "--concurrency", "1",
        "--hostname", f"beat-test-{os.getpid()}@%h",
        "--without-mingle", "--without-gossip", "--loglevel", "INFO",
    ]  # fmt: skip
    beat_args = ["beat", "--loglevel", "INFO", "--schedule", str(tmp_path / "beat-schedule")]
    with (
        celery_process(worker_args, env, worker_log) as worker,
        celery_process(beat_args, env, beat_log) as beat,
    ):
        deadline = time.monotonic() + WAIT_SECONDS
        run = None
        while time.monotonic() < deadline and worker.poll() is None and beat.poll() is None:
            run = CycleRun.objects.filter(kind="tiers", status="succeeded").first()
            if run:
                break
            time.sleep(0.5)

    logs = f"worker:\n{worker_log.read_text()}\nbeat:\n{beat_log.read_text()}"
    assert run is not None, logs
    assert "Sending due task test: tiers every second" in beat_log.read_text(), logs
    # Many beats fell in the same daily window: one run, done once.
    assert CycleRun.objects.filter(kind="tiers").count() == 1
    assert run.attempts == 1
