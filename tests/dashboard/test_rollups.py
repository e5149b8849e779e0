"""The rollups equal the raw rows: after ingest, after reviews, after a run again, after a
run killed halfway, and for history replayed with old timestamps.

"Equal" is checked against a computation of the test's own, in plain Python over the
Output and Review rows (``raw_*``), never through the rollups' SQL.
"""

from __future__ import annotations

import random
from collections import defaultdict
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from dashboard import rollups
from dashboard.models import (
    DECISION_TIME_EDGES,
    OutputBlockRollup,
    OutputDayRollup,
    OutputRollup,
    QueueSnapshotMoment,
    ReviewerRollup,
    ReviewRollup,
    RolledUpModel,
)
from gating import reviews, services
from gating.models import Output, Review, ReviewItem
from gating.reviews import DecisionInput
from gating.roles import Role
from gating.submissions import OutputSubmission
from tests.factories import (
    SubmissionFactory,
    TaskTypeFactory,
    UserFactory,
    ingested_many,
    valid_submission,
)

pytestmark = pytest.mark.django_db


# --------------------------------------------------------------------------- the raw side


def _hour(moment: datetime) -> datetime:
    return moment.astimezone(UTC).replace(minute=0, second=0, microsecond=0)


def _bucket(score: float, width: str, buckets: int) -> int:
    # Decimal arithmetic on the printed score: a different road to the same bucket.
    return min(int(Decimal(repr(score)) / Decimal(width)), buckets - 1)


def raw_outputs(period=_hour) -> dict:
    """Outputs per ``period`` of their creation (the hour, or the UTC day), task type,
    model, decision, status and half-point bucket: (count, score sum)."""
    counts = defaultdict(lambda: [0, 0.0])
    for o in Output.objects.only("created_at", "task_type", "model", "decision", "status", "score"):
        key = (
            period(o.created_at),
            o.task_type_id,
            o.model,
            o.decision,
            o.status,
            _bucket(o.score, "0.5", 20),
        )
        counts[key][0] += 1
        counts[key][1] += o.score
    return {key: (n, round(total, 6)) for key, (n, total) in counts.items()}


def raw_days() -> dict:
    return raw_outputs(period=lambda moment: moment.astimezone(UTC).date())


def rolled_days() -> dict:
    return {
        (r.day, r.task_type_id, r.model, r.decision, r.status, r.score_bucket): (
            r.outputs,
            round(r.score_sum, 6),
        )
        for r in OutputDayRollup.objects.all()
    }


def raw_blocks() -> dict:
    counts = defaultdict(lambda: [0, 0.0])
    for o in Output.objects.only("created_at", "task_type", "model", "decision", "status", "score"):
        key = (
            o.pk // rollups.OUTPUT_BLOCK_SIZE,
            _hour(o.created_at),
            o.task_type_id,
            o.model,
            o.decision,
            o.status,
            _bucket(o.score, "0.5", 20),
        )
        counts[key][0] += 1
        counts[key][1] += o.score
    return {key: (n, round(total, 6)) for key, (n, total) in counts.items()}


def rolled_blocks() -> dict:
    return {
        (r.block, r.hour, r.task_type_id, r.model, r.decision, r.status, r.score_bucket): (
            r.outputs,
            round(r.score_sum, 6),
        )
        for r in OutputBlockRollup.objects.all()
    }


def rolled_outputs() -> dict:
    return {
        (r.hour, r.task_type_id, r.model, r.decision, r.status, r.score_bucket): (
            r.outputs,
            round(r.score_sum, 6),
        )
        for r in OutputRollup.objects.all()
    }


def raw_reviews() -> dict:
    counts = defaultdict(lambda: [0, 0.0])
    for r in Review.objects.select_related("output", "item"):
        key = (
            _hour(r.decided_at),
            r.output.task_type_id,
            r.output.model,
            r.output.decision,
            r.item.kind,
            r.item.is_audit,
            r.is_bulk,
            r.action,
            _bucket(r.output.score, "0.1", 100),
        )
        counts[key][0] += 1
        counts[key][1] += 1 / r.item.inclusion_probability
    return {key: (n, round(weight, 6)) for key, (n, weight) in counts.items()}


def rolled_reviews() -> dict:
    return {
        (
            r.hour,
            r.task_type_id,
            r.model,
            r.decision,
            r.kind,
            r.is_audit,
            r.is_bulk,
            r.action,
            r.score_bucket,
        ): (r.reviews, round(r.weight_sum, 6))
        for r in ReviewRollup.objects.all()
    }


def _time_bucket(review: Review) -> int | None:
    if review.is_bulk or review.item.claimed_at is None:
        return None
    seconds = (review.decided_at - review.item.claimed_at).total_seconds()
    return sum(1 for edge in DECISION_TIME_EDGES[1:] if seconds >= edge)


def raw_reviewers() -> dict:
    counts = defaultdict(lambda: [0, None])
    for r in Review.objects.select_related("output", "item"):
        bucket = _time_bucket(r)
        key = (
            _hour(r.decided_at),
            r.output.task_type_id,
            r.output.model,
            r.reviewer_id,
            r.action,
            r.is_bulk,
            bucket,
        )
        counts[key][0] += 1
        if bucket is not None:
            took = r.decided_at - r.item.claimed_at
            counts[key][1] = took if counts[key][1] is None else counts[key][1] + took
    return {key: tuple(value) for key, value in counts.items()}


def rolled_reviewers() -> dict:
    return {
        (r.hour, r.task_type_id, r.model, r.reviewer_id, r.action, r.is_bulk, r.time_bucket): (
            r.reviews,
            r.decision_time_sum,
        )
        for r in ReviewerRollup.objects.all()
    }


def assert_rollups_equal_raw() -> None:
    assert rolled_blocks() == raw_blocks()
    assert rolled_outputs() == raw_outputs()
    assert rolled_days() == raw_days()
    assert rolled_reviews() == raw_reviews()
    assert rolled_reviewers() == raw_reviewers()
    # The filter bar's models: those of the outputs, read from a table of their own.
    assert set(RolledUpModel.objects.values_list("name", flat=True)) == set(
        Output.objects.values_list("model", flat=True)
    )


# --------------------------------------------------------------------------- traffic


def submissions(count: int, *, task_type: str, seed: int = 0, models=("model-a", "model-b")):
    """Outputs of every score band: ``passed`` of four validators, clarity and coherence
    drawn, no fact check (so the score is 2·passed + clarity/2 + 1.5·coherence)."""
    rng = random.Random(seed)
    sent = []
    for _ in range(count):
        passed = rng.randrange(5)
        sent.append(
            OutputSubmission(
                **SubmissionFactory(
                    task_type=task_type,
                    model=rng.choice(models),
                    validators=[
                        {"name": name, "passed": i < passed}
                        for i, name in enumerate(("facts", "schema", "grammar", "length"))
                    ],
                    input_clarity=rng.choice((0.0, 0.5, 1.0)),
                    coherence=rng.choice((0.0, 0.5, 1.0)),
                    requires_fact_check=False,
                )
            )
        )
    return sent


def ingest(gateway, count: int, *, task_type: str = "summarize", seed: int = 0, **kw):
    TaskTypeFactory(name=task_type, **kw)
    return ingested_many(gateway, submissions(count, task_type=task_type, seed=seed))


def decide_some(reviewer, count: int, *, now: datetime) -> list[Review]:
    """``count`` claims and decisions, each taking a different time."""
    decided = []
    actions = ["approve", "modify", "reject"]
    for n in range(count):
        item = reviews.item_claim(reviewer=reviewer, now=now)
        if item is None:
            break
        action = actions[n % 3]
        decision = DecisionInput(
            action,
            edited_output="edited" if action == "modify" else None,
            reason="other" if action == "reject" else "",
        )
        took = timedelta(seconds=[3, 25, 70, 400, 4000][n % 5])
        decided.append(
            reviews.item_decide(
                item_id=item.pk, reviewer=reviewer, decision=decision, now=now + took
            )
        )
    return decided


# --------------------------------------------------------------------------- tests


def test_a_refresh_after_ingest_equals_the_raw_outputs(gateway):
    ingest(gateway, 300, audit_rate_approved=0.3, audit_rate_warning=1.0)

    report = rollups.rollups_refresh()

    assert report.ran
    assert OutputRollup.objects.exists()
    assert_rollups_equal_raw()
    assert sum(r.outputs for r in OutputRollup.objects.all()) == 300


def test_reviews_move_outputs_to_their_final_status_in_their_created_hour(gateway):
    ingest(gateway, 200, audit_rate_approved=0.5, audit_rate_warning=1.0, double_review_rate=0.3)
    rollups.rollups_refresh()
    pending_before = sum(r.outputs for r in OutputRollup.objects.filter(status="pending"))
    # Hours later, as reviews come: the outputs' rows move within their created hour.
    later = timezone.now() + timedelta(hours=3)
    reviewer, other = UserFactory(role=Role.REVIEWER), UserFactory(role=Role.LEAD)

    decided = decide_some(reviewer, 40, now=later) + decide_some(other, 40, now=later)
    rollups.rollups_refresh()

    assert decided
    assert_rollups_equal_raw()
    pending_after = sum(r.outputs for r in OutputRollup.objects.filter(status="pending"))
    assert pending_after < pending_before
    assert ReviewRollup.objects.filter(hour=_hour(later)).exists()
    assert ReviewRollup.objects.filter(is_audit=True).exists()
    assert ReviewerRollup.objects.exclude(time_bucket=None).values("time_bucket").distinct()


def test_bulk_decisions_and_backlog_relief_are_seen(gateway):
    ingest(gateway, 200, task_type="relieved")
    rollups.rollups_refresh()
    relieved_type = Output.objects.first().task_type
    lead = UserFactory(role=Role.LEAD)
    now = timezone.now()

    relieved = reviews.backlog_relieve(task_type=relieved_type, now=now)
    bulk = reviews.bulk_decide(
        lead=lead, items=ReviewItem.objects.all(), action="reject", reason="broken", now=now
    )
    rollups.rollups_refresh()

    assert relieved and bulk
    assert_rollups_equal_raw()
    assert not OutputRollup.objects.filter(status="pending").exists()
    assert ReviewerRollup.objects.filter(is_bulk=True, time_bucket=None).exists()


def test_a_second_run_of_the_same_window_counts_nothing_twice(gateway):
    ingest(gateway, 150)
    decide_some(UserFactory(role=Role.REVIEWER), 20, now=timezone.now())
    now = timezone.now()

    rollups.rollups_refresh(now)
    first = rolled_outputs(), rolled_reviews(), rolled_reviewers()
    rollups.rollups_refresh(now)
    rollups.rollups_rebuild()
    rollups.rollups_refresh(now + timedelta(minutes=1))

    assert (rolled_outputs(), rolled_reviews(), rolled_reviewers()) == first
    assert_rollups_equal_raw()


def hours_of_blocks() -> dict:
    """OutputRollup as the sum of the block rows beneath it."""
    sums = defaultdict(lambda: [0, 0.0])
    for (_, *key), (n, total) in rolled_blocks().items():
        sums[tuple(key)][0] += n
        sums[tuple(key)][1] += total
    return {key: (n, round(total, 6)) for key, (n, total) in sums.items()}


def test_a_run_killed_halfway_leaves_whole_batches_and_the_next_run_completes(gateway, monkeypatch):
    # Blocks of ten outputs, one block a transaction: the run below has many to do.
    monkeypatch.setattr(rollups, "OUTPUT_BLOCK_SIZE", 10)
    monkeypatch.setattr(rollups, "BLOCKS_PER_TRANSACTION", 1)
    ingest(gateway, 30)
    decide_some(UserFactory(role=Role.REVIEWER), 5, now=timezone.now())
    rollups.rollups_refresh()
    before = rolled_blocks()
    for n, hours in enumerate((30, 20, 10)):
        ingest_at(gateway, 15, at=timezone.now() - timedelta(hours=hours), seed=n)
    decide_some(UserFactory(role=Role.REVIEWER), 5, now=timezone.now())
    raw = raw_blocks()
    of_block = lambda counts, block: {k: v for k, v in counts.items() if k[0] == block}  # noqa: E731
    changed = sorted(b for b in {k[0] for k in raw} if of_block(before, b) != of_block(raw, b))
    assert len(changed) >= 3
    real_rows = rollups._outputs_by_block

    def killed_in_the_second_changed_block(first, end):
        # After its old rows were deleted, in the block's own transaction.
        if first == changed[1]:
            raise RuntimeError("worker killed")
        return real_rows(first, end)

    monkeypatch.setattr(rollups, "_outputs_by_block", killed_in_the_second_changed_block)

    with pytest.raises(RuntimeError):
        rollups.rollups_refresh()

    after = rolled_blocks()
    assert of_block(after, changed[0]) == of_block(raw, changed[0])
    for block in changed[1:]:
        assert of_block(after, block) == of_block(before, block)
    # Each hour is the sum of its blocks as they stand; the reviews' hours come later.
    assert rolled_outputs() == hours_of_blocks()
    assert rolled_reviews() != raw_reviews()

    monkeypatch.setattr(rollups, "_outputs_by_block", real_rows)
    rollups.rollups_refresh()

    assert_rollups_equal_raw()


def ingest_at(gateway, count: int, *, at: datetime, task_type="summarize", seed=0):
    """Outputs with a past arrival time, as the simulator stores them."""
    TaskTypeFactory(name=task_type)
    return ingested_many(gateway, submissions(count, task_type=task_type, seed=seed), at=at)


def test_history_stored_with_old_timestamps_is_rolled_up_by_the_next_refresh(gateway):
    ingest(gateway, 50)
    rollups.rollups_refresh()
    last_week = timezone.now() - timedelta(days=7)

    ingest_at(gateway, 40, at=last_week, seed=1)
    item = ReviewItem.objects.filter(state="open", output__created_at=last_week).first()
    reviews.decisions_record(
        [
            reviews.RecordedDecision(
                item, UserFactory(role=Role.REVIEWER), DecisionInput("approve"), last_week
            )
        ]
    )
    rollups.rollups_refresh()

    assert OutputRollup.objects.filter(hour=_hour(last_week)).exists()
    assert ReviewRollup.objects.filter(hour=_hour(last_week)).exists()
    assert_rollups_equal_raw()


@pytest.mark.slow
def test_a_simulation_is_rolled_up_by_the_refresh():
    from simulator import run, world

    config = world.SimulationConfig(
        seed=3, days=2, outputs_per_day=150, start=datetime(2026, 3, 2, tzinfo=UTC).date()
    )
    run.simulation_run(config, reviews_per_hour=4, live_days=1)

    rollups.rollups_refresh(datetime(2026, 3, 5, tzinfo=UTC))

    assert sum(r.outputs for r in OutputRollup.objects.all()) == 300
    assert Review.objects.exists()
    assert_rollups_equal_raw()


def test_the_rebuild_command_recomputes_every_hour_and_clears_stale_ones(gateway):
    ingest(gateway, 80)
    decide_some(UserFactory(role=Role.REVIEWER), 10, now=timezone.now())
    rollups.rollups_refresh()
    # Rows the raw data no longer has (a reset simulation, say).
    stale = OutputRollup.objects.first()
    OutputRollup.objects.create(
        hour=stale.hour - timedelta(days=2),
        task_type_id=stale.task_type_id,
        model="gone",
        decision="approved",
        status="approved",
        score_bucket=3,
        outputs=5,
        score_sum=8.0,
    )
    OutputRollup.objects.filter(pk=stale.pk).update(outputs=999)

    call_command("rollups_rebuild", "--verbosity", "0")

    assert_rollups_equal_raw()


def test_a_rebuild_of_a_range_recomputes_its_hours_and_leaves_other_hours(gateway):
    ingest(gateway, 30)
    reviewer = UserFactory(role=Role.REVIEWER)
    decide_some(reviewer, 3, now=timezone.now() - timedelta(days=3))
    decide_some(reviewer, 3, now=timezone.now())
    rollups.rollups_refresh()
    OutputRollup.objects.update(outputs=0)
    ReviewRollup.objects.update(reviews=0)
    since = _hour(timezone.now())

    hours = rollups.rollups_rebuild(since, since + timedelta(hours=1))

    assert hours == 1
    assert rolled_outputs() == raw_outputs()
    assert not ReviewRollup.objects.filter(hour=since, reviews=0).exists()
    assert not ReviewRollup.objects.filter(hour__lt=since).exclude(reviews=0).exists()


def test_score_edges_land_in_the_bucket_that_starts_there(gateway):
    TaskTypeFactory(name="edges")
    edge = {"task_type": "edges", "requires_fact_check": False, "coherence": 1.0}
    four = [  # one of four validators: 2.0 + 0.5 + 1.5
        {"name": n, "passed": n == "facts"} for n in ("facts", "schema", "grammar", "length")
    ]
    ten = [{"name": n, "passed": True} for n in ("facts", "schema", "grammar", "length")]
    sent = [
        valid_submission(validators=four, input_clarity=1.0, **edge),
        valid_submission(validators=ten, input_clarity=1.0, **edge),
    ]
    results = services.output_ingest_batch(source=gateway, submissions=sent)
    assert [r.output.score for r in results] == [4.0, 10.0]
    for r in results:  # and reviewed, for the fine buckets
        if r.output.review_items.exists():
            continue
        ReviewItem.objects.create(
            output=r.output,
            kind="review",
            task_type_id=r.output.task_type_id,
            model=r.output.model,
            score=r.output.score,
            queued_at=r.output.created_at,
        )
    decide_some(UserFactory(role=Role.REVIEWER), 2, now=timezone.now())

    rollups.rollups_refresh()

    assert sorted(OutputRollup.objects.values_list("score_bucket", flat=True)) == [8, 19]
    assert sorted(ReviewRollup.objects.values_list("score_bucket", flat=True)) == [40, 99]
    assert_rollups_equal_raw()


@pytest.mark.slow
def test_the_demo_opens_with_its_rollups_and_queue_history_built(settings, tmp_path):
    import time_machine

    settings.VAR_DIR = tmp_path
    now = datetime(2026, 3, 4, 15, 30, tzinfo=UTC)
    with time_machine.travel(now):
        call_command("demo_setup", "--days", "2", "--outputs-per-day", "100", "--verbosity", "0")

    assert_rollups_equal_raw()
    moments = QueueSnapshotMoment.objects.values_list("taken_at", flat=True)
    # Every hour since the first item was queued, and the present.
    assert len(moments) > 24
    assert max(moments) == now.replace(second=0)


def test_the_rebuild_command_takes_a_range_and_the_queue_history(gateway, capsys):
    ingest_at(gateway, 20, at=timezone.now() - timedelta(hours=5), seed=2)
    since = _hour(timezone.now() - timedelta(hours=6))

    call_command(
        "rollups_rebuild",
        "--since",
        since.isoformat(),
        "--until",
        (since + timedelta(hours=3)).isoformat(),
        "--queue-history",
        "--verbosity",
        "0",
    )

    assert "Rebuilt 3 hours" in capsys.readouterr().out
    assert rolled_outputs() == raw_outputs()
    assert QueueSnapshotMoment.objects.count() == 3


def test_the_rebuild_command_refuses_a_range_that_ends_before_it_starts():
    with pytest.raises(CommandError, match="before"):
        call_command("rollups_rebuild", "--since", "2026-03-02", "--until", "2026-03-01")
