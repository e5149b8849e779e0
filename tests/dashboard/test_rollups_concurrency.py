"""The rollups on PostgreSQL with real transactions: ingest and reviews while the refresh
runs, outputs whose transaction commits after a refresh passed them, two refreshes at once."""

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

import pytest
from django.db import connection, transaction
from django.utils import timezone

from dashboard import rollups
from dashboard.models import OutputRollup, RollupCheckpoint
from gating import reviews, services
from gating.models import Output
from gating.roles import Role
from tests.dashboard.test_rollups import (
    assert_rollups_equal_raw,
    decide_some,
    ingest,
    ingest_at,
    submissions,
)
from tests.factories import UserFactory

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("requires_postgres")]


def test_ingest_and_reviews_while_the_refresh_runs_add_up(gateway):
    ingest(gateway, 100, task_type="busy")
    reviewer = UserFactory(role=Role.REVIEWER)
    done = threading.Event()
    refreshes = []

    def ingester(n: int) -> None:
        try:
            for batch in range(5):
                services.output_ingest_batch(
                    source=gateway,
                    submissions=submissions(40, task_type="busy", seed=100 * n + batch),
                )
        finally:
            connection.close()

    def decider() -> None:
        try:
            for _ in range(5):
                decide_some(reviewer, 8, now=timezone.now())
        finally:
            connection.close()

    def refresher() -> None:
        try:
            while not done.is_set():
                refreshes.append(rollups.rollups_refresh())
        finally:
            connection.close()

    watcher = threading.Thread(target=refresher)
    watcher.start()
    with ThreadPoolExecutor(5) as pool:
        for future in [pool.submit(ingester, n) for n in range(4)] + [pool.submit(decider)]:
            future.result()
    done.set()
    watcher.join()
    rollups.rollups_refresh()

    assert sum(1 for r in refreshes if r.ran) > 1, "the refresh never ran during the ingest"
    assert Output.objects.count() == 100 + 4 * 5 * 40
    assert_rollups_equal_raw()


def _held_open(gateway, opened: threading.Event, commit: threading.Event) -> None:
    """Ingest a batch in a transaction that commits only when told to."""
    try:
        with transaction.atomic():
            services.output_ingest_batch(
                source=gateway, submissions=submissions(10, task_type="late", seed=7)
            )
            opened.set()
            assert commit.wait(30)
    finally:
        connection.close()


def test_an_output_committed_after_a_refresh_passed_its_id_is_counted_by_the_next(gateway):
    # The task type's validators exist before the batch that stays open: its own would
    # hold up everyone's ingest until it commits.
    ingest(gateway, 5, task_type="late", seed=6)
    opened, commit = threading.Event(), threading.Event()
    late = threading.Thread(target=_held_open, args=(gateway, opened, commit))
    late.start()
    assert opened.wait(30)
    # Committed now, with ids above the open batch's.
    ingest(gateway, 10, task_type="late", seed=8)
    start = timezone.now()
    rollups.rollups_refresh(start)
    assert sum(r.outputs for r in OutputRollup.objects.all()) == 15

    commit.set()
    late.join()
    rollups.rollups_refresh(start + timedelta(minutes=1))

    assert sum(r.outputs for r in OutputRollup.objects.all()) == 25
    assert_rollups_equal_raw()


def test_a_batch_open_across_several_refreshes_is_counted_when_it_commits(gateway):
    # The task type's validators exist before the batch that stays open: its own would
    # hold up everyone's ingest until it commits.
    ingest(gateway, 5, task_type="late", seed=6)
    opened, commit = threading.Event(), threading.Event()
    late = threading.Thread(target=_held_open, args=(gateway, opened, commit))
    late.start()
    assert opened.wait(30)
    ingest(gateway, 10, task_type="late", seed=8)
    start = timezone.now()
    # Refreshes minutes apart while the batch stays open: the checkpoints they take are
    # not trusted while it is.
    for minutes in range(4):
        rollups.rollups_refresh(start + timedelta(minutes=minutes))

    commit.set()
    late.join()
    rollups.rollups_refresh(start + timedelta(minutes=5))

    assert sum(r.outputs for r in OutputRollup.objects.all()) == 25
    assert_rollups_equal_raw()


def test_once_settled_a_refresh_reads_only_new_rows_and_keeps_few_checkpoints(gateway, monkeypatch):
    monkeypatch.setattr(rollups, "OUTPUT_BLOCK_SIZE", 5)
    for days in (1, 2, 3):
        ingest_at(gateway, 5, at=timezone.now() - timedelta(days=days), seed=days)
    start = timezone.now()
    minute = timedelta(minutes=1)
    reports = [rollups.rollups_refresh(start)]
    # Simulated minutes pass at once, real time slowly: a checkpoint settles once every
    # transaction running when it was taken has ended, in any database of the server.
    deadline = time.monotonic() + 60
    while reports[-1].output_blocks and time.monotonic() < deadline:
        time.sleep(0.2)
        reports.append(rollups.rollups_refresh(start + len(reports) * minute))
    assert reports[0].output_blocks >= 3
    assert reports[-1].output_blocks == 0

    ingest(gateway, 5, seed=9)
    report = rollups.rollups_refresh(start + len(reports) * minute)

    # The five new outputs' block, and the one before it if they straddle two.
    assert 1 <= report.output_blocks <= 2
    assert RollupCheckpoint.objects.count() <= 8
    assert_rollups_equal_raw()


def test_a_refresh_while_another_holds_the_lock_does_nothing(gateway):
    ingest(gateway, 5)
    holding, release = threading.Event(), threading.Event()

    def hold() -> None:
        try:
            with rollups._exclusive(wait=True):
                holding.set()
                assert release.wait(30)
        finally:
            connection.close()

    holder = threading.Thread(target=hold)
    holder.start()
    assert holding.wait(30)
    skipped = rollups.rollups_refresh()
    release.set()
    holder.join()

    assert not skipped.ran
    assert not OutputRollup.objects.exists()
    assert rollups.rollups_refresh().ran
    assert_rollups_equal_raw()


def test_decisions_in_many_old_hours_at_once(gateway):
    """The bulk-recorded history of the simulator: decisions of old outputs, spread over
    many hours, committed in one transaction."""
    for hours in range(1, 40, 3):
        ingest_at(gateway, 4, at=timezone.now() - timedelta(hours=hours), seed=hours)
    rollups.rollups_refresh()
    reviewer = UserFactory(role=Role.REVIEWER)
    items = list(
        Output.objects.filter(decision="pending_review").values_list("review_items", flat=True)
    )
    from gating.models import ReviewItem

    reviews.decisions_record(
        [
            reviews.RecordedDecision(
                item, reviewer, reviews.DecisionInput("approve"), item.queued_at + timedelta(1)
            )
            for item in ReviewItem.objects.filter(pk__in=items, kind="review")
        ]
    )
    rollups.rollups_refresh()

    assert_rollups_equal_raw()
