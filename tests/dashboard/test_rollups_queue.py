"""Queue snapshots, the Celery tasks and their beat entries."""

from collections import Counter, defaultdict
from datetime import timedelta

import pytest
from django.db.models import F
from django.utils import timezone
from django_celery_beat.models import PeriodicTask

from dashboard import rollups, tasks
from dashboard.models import (
    OUTPUT_BLOCK_SIZE,
    QUEUE_AGE_EDGES_HOURS,
    QueueAgeSnapshot,
    QueueSnapshot,
    QueueSnapshotMoment,
)
from gating.models import Output, Review, ReviewItem
from gating.roles import Role
from tests.dashboard.test_rollups import decide_some, ingest, ingest_at
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def raw_queue(at) -> tuple[dict, Counter]:
    """Open items at ``at`` per (task type, model, kind): (count, longest waiting since), and
    per bucket of time waiting: open from when queued until decided, waiting from their turn."""
    sizes = defaultdict(lambda: [0, None])
    ages = Counter()
    for item in ReviewItem.objects.all():
        if item.queued_at > at or (item.decided_at is not None and item.decided_at <= at):
            continue
        key = (item.task_type_id, item.model, item.kind)
        sizes[key][0] += 1
        since = item.turn_at or item.queued_at
        sizes[key][1] = min(filter(None, (sizes[key][1], since)))
        hours = (at - since).total_seconds() / 3600
        ages[(*key, sum(1 for edge in QUEUE_AGE_EDGES_HOURS[1:] if hours >= edge))] += 1
    return {k: tuple(v) for k, v in sizes.items()}, ages


def snapshot_at(taken_at) -> tuple[dict, Counter]:
    sizes = {
        (s.task_type_id, s.model, s.kind): (s.open_items, s.oldest_queued_at)
        for s in QueueSnapshot.objects.filter(taken_at=taken_at)
    }
    ages = Counter(
        {
            (a.task_type_id, a.model, a.kind, a.age_bucket): a.open_items
            for a in QueueAgeSnapshot.objects.filter(taken_at=taken_at)
        }
    )
    return sizes, ages


@pytest.fixture
def aged_queue(gateway):
    now = timezone.now()
    for hours in (0.5, 2, 10, 30, 100, 200):
        ingest_at(gateway, 12, at=now - timedelta(hours=hours), seed=int(hours * 10))
    ingest(gateway, 20, audit_rate_approved=1.0, audit_rate_warning=1.0, seed=3)
    # Decided before now: the slowest decision takes over an hour.
    decide_some(UserFactory(role=Role.REVIEWER), 3, now=now - timedelta(hours=2))
    # Follow-up rounds, queued long after their outputs' turn: their wait is counted from
    # the turn, into an older bucket than their own age would give.
    follow_ups = ReviewItem.objects.filter(
        state="open", queued_at__range=(now - timedelta(hours=11), now - timedelta(hours=9))
    )
    ReviewItem.objects.filter(pk__in=list(follow_ups.values_list("pk", flat=True)[:5])).update(
        kind="second", turn_at=F("queued_at") - timedelta(hours=40)
    )
    return now


def test_a_snapshot_counts_the_open_items_and_their_ages(aged_queue):
    now = aged_queue

    rollups.queue_snapshot_take(now)

    taken_at = now.replace(second=0, microsecond=0)
    assert snapshot_at(taken_at) == raw_queue(now)
    assert {a.age_bucket for a in QueueAgeSnapshot.objects.all()} == set(range(6))


def test_a_second_snapshot_in_the_same_minute_replaces_the_first(aged_queue):
    now = aged_queue.replace(second=10)
    rollups.queue_snapshot_take(now)
    first = snapshot_at(now.replace(second=0))

    rollups.queue_snapshot_take(now + timedelta(seconds=30))

    assert QueueSnapshot.objects.values("taken_at").distinct().count() == 1
    assert snapshot_at(now.replace(second=0)) == first


def test_old_snapshots_are_dropped(aged_queue):
    now = aged_queue
    rollups.queue_snapshot_take(now - rollups.QUEUE_SNAPSHOT_RETENTION - timedelta(minutes=5))

    rollups.queue_snapshot_take(now)

    assert QueueSnapshot.objects.values("taken_at").distinct().count() == 1
    assert QueueAgeSnapshot.objects.values("taken_at").distinct().count() == 1


def test_the_backfill_rebuilds_the_queue_as_it_was(aged_queue):
    now = aged_queue
    since = now - timedelta(hours=50)

    moments = rollups.queue_snapshots_backfill(since, now)

    assert moments == 51
    hours = sorted(QueueSnapshotMoment.objects.values_list("taken_at", flat=True))
    assert len(hours) == 51
    for at in hours:
        assert snapshot_at(at) == raw_queue(at)
    assert {a.age_bucket for a in QueueAgeSnapshot.objects.all()} == set(range(6))


def test_a_second_backfill_replaces_its_moments_and_keeps_beats(aged_queue):
    now = aged_queue
    since = now - timedelta(hours=5)
    beat = now.replace(minute=7)
    rollups.queue_snapshot_take(beat)
    beats = snapshot_at(beat.replace(second=0, microsecond=0))

    rollups.queue_snapshots_backfill(since, now)
    rows = QueueSnapshot.objects.count(), QueueAgeSnapshot.objects.count()
    rollups.queue_snapshots_backfill(since, now)

    assert (QueueSnapshot.objects.count(), QueueAgeSnapshot.objects.count()) == rows
    assert snapshot_at(beat.replace(second=0, microsecond=0)) == beats


def test_the_tasks_run_the_jobs(aged_queue):
    created_hours = {
        at.replace(minute=0, second=0, microsecond=0)
        for at in Output.objects.values_list("created_at", flat=True)
    }
    decided_hours = {
        at.replace(minute=0, second=0, microsecond=0)
        for at in Review.objects.values_list("decided_at", flat=True)
    }

    # The outputs' ids run on from the tests before in this process: they may straddle two
    # blocks.
    blocks = {pk // OUTPUT_BLOCK_SIZE for pk in Output.objects.values_list("pk", flat=True)}

    assert tasks.rollups_refresh() == {
        "ran": True,
        "output_blocks": len(blocks),
        "output_hours": len(created_hours),
        "review_hours": len(decided_hours),
    }
    assert tasks.queue_snapshot_take() == QueueSnapshot.objects.count() > 0


def test_beat_runs_the_refresh_every_minute_and_the_snapshot_every_five():
    entries = {
        e.task: e
        for e in PeriodicTask.objects.select_related("crontab").filter(
            task__startswith="dashboard."
        )
    }

    refresh = entries["dashboard.tasks.rollups_refresh"]
    snapshot = entries["dashboard.tasks.queue_snapshot_take"]
    assert (refresh.crontab.minute, refresh.expire_seconds) == ("*", 50)
    assert (snapshot.crontab.minute, snapshot.expire_seconds) == ("*/5", 240)


def test_a_snapshot_of_an_empty_queue_is_recorded_as_a_moment():
    now = timezone.now()

    rollups.queue_snapshot_take(now)

    assert not QueueSnapshot.objects.exists()
    assert QueueSnapshotMoment.objects.get().taken_at == now.replace(second=0, microsecond=0)
