"""A cycle whose worker died mid-run is queued again within minutes, and runs once."""

import logging
import threading
from datetime import UTC, datetime, timedelta

import pytest
from django.db import InterfaceError, OperationalError, connection, transaction

from gating.models import OutboxMessage
from learning import cycles, tasks
from learning.models import CycleRun

END = datetime(2026, 3, 3, tzinfo=UTC)


def left_running(kind="tiers", started_minutes_ago=3.0) -> CycleRun:
    """What a worker killed mid-cycle leaves: its committed start, nothing else."""
    end = cycles.window_end(kind, END)
    cycles._start(CycleRun.Kind(kind), end - timedelta(days=30), end)
    run = CycleRun.objects.get(kind=kind, window_end=end)
    run.started_at = datetime.now(UTC) - timedelta(minutes=started_minutes_ago)
    run.save(update_fields=["started_at"])
    return run


@pytest.mark.django_db
def test_a_run_left_running_is_queued_again_once_and_then_completes():
    run = left_running()
    assert (run.status, run.attempts) == ("running", 1)

    assert [r.pk for r in cycles.cycles_resume()] == [run.pk]
    (message,) = OutboxMessage.objects.all()
    assert message.task == "learning.tasks.cycle"
    assert message.args == ["tiers", END.isoformat()]
    # While the message waits for a worker, the next passes leave the run alone.
    assert cycles.cycles_resume() == []
    assert tasks.cycles_resume() == 0

    outcome = tasks.cycle(*message.args)

    run.refresh_from_db()
    assert outcome["run"] == run.pk
    assert (run.status, run.attempts) == ("succeeded", 2)
    assert CycleRun.objects.filter(kind="tiers").count() == 1
    # A late redelivery of the dead worker's message changes nothing.
    assert tasks.cycle("tiers", END.isoformat())["run"] == run.pk
    run.refresh_from_db()
    assert run.attempts == 2


@pytest.mark.django_db
def test_a_run_that_started_a_moment_ago_is_left_alone():
    left_running(started_minutes_ago=1)
    assert cycles.cycles_resume() == []
    assert not OutboxMessage.objects.exists()


@pytest.mark.django_db
def test_succeeded_and_failed_runs_are_not_resumed():
    done = cycles.cycle_run("tiers", END)
    CycleRun.objects.filter(pk=done.pk).update(started_at=datetime.now(UTC) - timedelta(hours=2))
    CycleRun.objects.create(
        kind="alerts",
        window_start=END - timedelta(minutes=5),
        window_end=END,
        started_at=datetime.now(UTC) - timedelta(hours=2),
        status="failed",
        attempts=6,
    )
    assert cycles.cycles_resume() == []


@pytest.mark.django_db(transaction=True)
def test_a_live_run_holding_its_row_is_never_resumed(requires_postgres):
    """However long it has taken: a transaction holds its row, so its worker is alive."""
    run = left_running(started_minutes_ago=30)
    holding, release = threading.Event(), threading.Event()

    def live_worker():
        try:
            with transaction.atomic():
                CycleRun.objects.select_for_update().get(pk=run.pk)
                holding.set()
                release.wait(10)
        finally:
            connection.close()

    worker = threading.Thread(target=live_worker)
    worker.start()
    try:
        assert holding.wait(10)
        assert cycles.cycles_resume() == []
    finally:
        release.set()
        worker.join()
    # Once the transaction is gone with nothing committed, the run is found.
    assert [r.pk for r in cycles.cycles_resume()] == [run.pk]


@pytest.mark.django_db
def test_a_duplicate_never_turns_a_success_back_into_running():
    done = cycles.cycle_run("tiers", END)
    cycles._start(CycleRun.Kind.TIERS, done.window_start, done.window_end)
    done.refresh_from_db()
    assert (done.status, done.attempts) == ("succeeded", 1)


@pytest.mark.django_db
def test_a_lost_run_is_logged_as_a_warning_naming_its_cycle_and_window(caplog):
    left_running()

    with caplog.at_level(logging.WARNING, logger="learning.cycles"):
        cycles.cycles_resume()

    assert [(r.levelname, r.getMessage()) for r in caplog.records] == [
        (
            "WARNING",
            "tiers cycle for the window ending 2026-03-03 00:00:00+00:00 was lost; queued again",
        )
    ]


@pytest.mark.django_db
def test_where_rows_cannot_be_skipped_only_an_hour_old_run_is_taken_for_lost(monkeypatch):
    # SQLite: no lock tells a live run from a dead one, so only STALLED_AFTER (1 h) does.
    monkeypatch.setattr(connection.features, "has_select_for_update_skip_locked", False)
    run = left_running(started_minutes_ago=59)
    assert cycles.cycles_resume() == []

    CycleRun.objects.filter(pk=run.pk).update(started_at=datetime.now(UTC) - timedelta(minutes=61))
    assert [r.pk for r in cycles.cycles_resume()] == [run.pk]


@pytest.mark.django_db
def test_a_new_attempt_restarts_its_own_failed_run_and_no_other():
    end = cycles.window_end("tiers", END)
    long_ago = datetime.now(UTC) - timedelta(hours=2)

    def failed(kind, window_end):
        return CycleRun.objects.create(
            kind=kind,
            window_start=window_end - timedelta(days=30),
            window_end=window_end,
            started_at=long_ago,
            status="failed",
            attempts=1,
        )

    own = failed("tiers", end)
    other_kind, other_window = failed("alerts", end), failed("tiers", end - timedelta(days=1))
    before = datetime.now(UTC)

    # The lookback is shorter now (LEARNING_LOOKBACK_DAYS changed between attempts).
    cycles._start(CycleRun.Kind.TIERS, end - timedelta(days=7), end)

    own.refresh_from_db()
    assert (own.status, own.attempts) == ("running", 2)
    assert own.window_start == end - timedelta(days=7)
    assert own.started_at >= before
    for run in (other_kind, other_window):
        run.refresh_from_db()
        assert (run.status, run.attempts, run.started_at) == ("failed", 1, long_ago)


class _Retried(Exception):
    pass


@pytest.mark.parametrize(
    ("error", "retried"),
    [
        (OperationalError("the database is restarting"), True),
        (InterfaceError("connection already closed"), True),
        (ValueError("a fault in the cycle"), False),
    ],
)
def test_only_transient_errors_are_retried_for_the_same_window(monkeypatch, error, retried):
    asked = {}

    def fail(kind, moment):
        raise error

    def retry(*, args, exc, countdown):
        asked.update(args=args, exc=exc, countdown=countdown)
        return _Retried()

    monkeypatch.setattr(tasks.cycles, "cycle_run", fail)
    monkeypatch.setattr(tasks.cycle, "retry", retry)
    at = END.isoformat()
    with pytest.raises(_Retried if retried else ValueError):
        tasks.cycle("alerts", at)
    if retried:
        # The first delay, and the same moment: the retry cannot slide into the next window.
        assert asked == {"args": ("alerts", at), "exc": error, "countdown": 60}
    else:
        assert not asked
