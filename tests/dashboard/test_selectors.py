"""The dashboard's selectors over rollup rows with known counts, and end to end from
outputs and reviews through a refresh."""

from collections import defaultdict
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal

import pytest
from django.utils import timezone

from dashboard import rollups, selectors
from dashboard.models import (
    OutputRollup,
    QueueAgeSnapshot,
    QueueSnapshot,
    QueueSnapshotMoment,
    ReviewerRollup,
    ReviewRollup,
)
from gating import services
from gating.models import Review
from gating.roles import Role
from gating.submissions import OutputSubmission
from tests.dashboard.test_rollups import decide_some, ingest
from tests.factories import SubmissionFactory, TaskTypeFactory, UserFactory

pytestmark = pytest.mark.django_db

MONDAY = datetime(2026, 3, 2, tzinfo=UTC)
WEEK = {"since": MONDAY, "until": MONDAY + timedelta(days=7)}


@pytest.fixture
def summarize():
    return TaskTypeFactory(name="summarize")


@pytest.fixture
def classify():
    return TaskTypeFactory(name="classify")


def outputs(hour, task_type, *, model="model-a", decision="approved", status="approved", **kw):
    fields = {"score_bucket": 16, "outputs": 1, "score_sum": 8.0} | kw
    row = OutputRollup.objects.create(
        hour=hour, task_type=task_type, model=model, decision=decision, status=status, **fields
    )
    # As the refresh does after writing hours: the day's sums follow.
    rollups.output_days_recompute({hour.astimezone(UTC).date()})
    return row


def reviews(hour, task_type, *, action="approve", bucket=50, n=1, **kw):
    fields = {
        "model": "model-a",
        "decision": "pending_review",
        "kind": "review",
        "is_audit": False,
        "is_bulk": False,
        "weight_sum": float(n),
    } | kw
    return ReviewRollup.objects.create(
        hour=hour, task_type=task_type, action=action, score_bucket=bucket, reviews=n, **fields
    )


# --------------------------------------------------------------------------- outputs


def test_outputs_by_decision_and_status_per_day(summarize, classify):
    outputs(MONDAY + timedelta(hours=3), summarize, outputs=4)
    outputs(MONDAY + timedelta(hours=9), summarize, outputs=2)
    outputs(MONDAY + timedelta(hours=9), summarize, decision="pending_review", status="pending")
    outputs(MONDAY + timedelta(days=1), summarize, decision="pending_review", status="rejected")
    outputs(MONDAY, classify, outputs=50)
    outputs(MONDAY, summarize, model="model-b", outputs=70)

    rows = selectors.outputs_by_decision_and_status(
        **WEEK, task_types=["summarize"], models=["model-a"]
    )

    assert rows == [
        {"at": MONDAY, "decision": "approved", "status": "approved", "count": 6},
        {"at": MONDAY, "decision": "pending_review", "status": "pending", "count": 1},
        {
            "at": MONDAY + timedelta(days=1),
            "decision": "pending_review",
            "status": "rejected",
            "count": 1,
        },
    ]


def test_the_range_takes_the_hour_that_since_falls_in_and_stops_before_until(summarize):
    for hours in (0, 1, 2):
        outputs(MONDAY + timedelta(hours=hours), summarize, outputs=10**hours)

    rows = selectors.outputs_by_decision_and_status(
        since=MONDAY + timedelta(minutes=30), until=MONDAY + timedelta(hours=2), grain="hour"
    )

    assert [(r["at"], r["count"]) for r in rows] == [
        (MONDAY, 1),
        (MONDAY + timedelta(hours=1), 10),
    ]


def test_the_share_that_went_to_review(summarize):
    outputs(MONDAY, summarize, outputs=3)
    outputs(MONDAY, summarize, decision="warning", outputs=1)
    outputs(MONDAY, summarize, decision="pending_review", status="pending", outputs=4)

    assert selectors.review_share(**WEEK) == [{"at": MONDAY, "outputs": 8, "held": 4}]


def test_the_score_histogram_by_decision_in_buckets_and_wider_bands(summarize):
    outputs(MONDAY, summarize, decision="warning", score_bucket=8, outputs=2)  # [4.0, 4.5)
    outputs(MONDAY, summarize, decision="warning", score_bucket=9, outputs=3)  # [4.5, 5.0)
    outputs(MONDAY, summarize, score_bucket=19, outputs=5)  # [9.5, 10]

    assert selectors.score_histogram(**WEEK) == [
        {"lower": 4.0, "upper": 4.5, "decision": "warning", "count": 2},
        {"lower": 4.5, "upper": 5.0, "decision": "warning", "count": 3},
        {"lower": 9.5, "upper": 10.0, "decision": "approved", "count": 5},
    ]
    assert selectors.score_histogram(**WEEK, width=1.0) == [
        {"lower": 4.0, "upper": 5.0, "decision": "warning", "count": 5},
        {"lower": 9.0, "upper": 10.0, "decision": "approved", "count": 5},
    ]
    with pytest.raises(ValueError, match="whole number"):
        selectors.score_histogram(**WEEK, width=0.75)


def test_a_score_of_four_and_of_ten_in_the_histogram_from_ingest(gateway):
    TaskTypeFactory(name="edges")
    validators = ("facts", "schema", "grammar", "length")
    common = {"task_type": "edges", "requires_fact_check": False}
    common |= {"input_clarity": 1.0, "coherence": 1.0}
    sent = [
        SubmissionFactory(
            validators=[{"name": n, "passed": n == "facts"} for n in validators], **common
        ),
        SubmissionFactory(validators=[{"name": n, "passed": True} for n in validators], **common),
    ]
    results = services.output_ingest_batch(
        source=gateway, submissions=[OutputSubmission(**s) for s in sent]
    )
    assert sorted(r.output.score for r in results) == [4.0, 10.0]
    rollups.rollups_refresh()
    now = timezone.now()

    rows = selectors.score_histogram(since=now - timedelta(hours=1), until=now + timedelta(1))

    assert [(r["lower"], r["upper"], r["count"]) for r in rows] == [(4.0, 4.5, 1), (9.5, 10.0, 1)]


def test_the_heatmap_is_days_by_score_buckets(summarize):
    outputs(MONDAY + timedelta(hours=1), summarize, score_bucket=4, outputs=2)
    outputs(MONDAY + timedelta(hours=20), summarize, score_bucket=4, outputs=3)
    outputs(MONDAY + timedelta(days=1), summarize, score_bucket=12, outputs=7)

    assert selectors.score_heatmap(**WEEK) == [
        {"day": date(2026, 3, 2), "lower": 2.0, "upper": 2.5, "count": 5},
        {"day": date(2026, 3, 3), "lower": 6.0, "upper": 6.5, "count": 7},
    ]


def test_days_a_range_cuts_count_only_their_hours_in_the_range(summarize):
    # Whole days are read from the day rollup, the cut ends from the hours: one output in
    # each of these hours, the range from Monday 10:30 to Wednesday 05:00.
    for day, hour in [(0, 9), (0, 10), (0, 11), (1, 12), (1, 23), (2, 4), (2, 5)]:
        outputs(MONDAY + timedelta(days=day, hours=hour), summarize, score_bucket=4)

    rows = selectors.score_heatmap(
        since=MONDAY + timedelta(hours=10, minutes=30), until=MONDAY + timedelta(days=2, hours=5)
    )

    # The hour 10:30 falls in counts whole; the range stops before 05:00.
    assert [(r["day"], r["count"]) for r in rows] == [
        (date(2026, 3, 2), 2),
        (date(2026, 3, 3), 2),
        (date(2026, 3, 4), 1),
    ]


def test_the_mean_score_per_model_and_day_is_exact(summarize):
    outputs(MONDAY, summarize, outputs=2, score_sum=15.0)
    outputs(MONDAY + timedelta(hours=5), summarize, outputs=2, score_sum=1.0)
    outputs(MONDAY, summarize, model="model-b", outputs=1, score_sum=3.5)

    assert selectors.mean_score_by_day(**WEEK) == [
        {"day": date(2026, 3, 2), "model": "model-a", "mean_score": 4.0, "outputs": 4},
        {"day": date(2026, 3, 2), "model": "model-b", "mean_score": 3.5, "outputs": 1},
    ]


# --------------------------------------------------------------------------- human labels


def test_approval_by_band_counts_first_reviews_without_bulk_decisions(summarize):
    reviews(MONDAY, summarize, bucket=41, n=3)  # 4.1: band 4 to 6
    reviews(MONDAY, summarize, bucket=59, action="reject", n=1)
    reviews(MONDAY, summarize, bucket=20, action="modify", n=2)  # band 2 to 4
    reviews(MONDAY, summarize, bucket=41, kind="second", n=9)
    reviews(MONDAY, summarize, bucket=41, action="reject", is_bulk=True, n=9)
    reviews(MONDAY + timedelta(days=1), summarize, bucket=99, kind="audit", decision="approved")

    assert selectors.approval_rate_by_band(**WEEK) == [
        {"day": date(2026, 3, 2), "band": "2 to 4", "approved": 0, "reviewed": 2},
        {"day": date(2026, 3, 2), "band": "4 to 6", "approved": 3, "reviewed": 4},
        {"day": date(2026, 3, 3), "band": "8 to 10", "approved": 1, "reviewed": 1},
    ]


def test_calibration_and_the_histogram_by_action(summarize):
    reviews(MONDAY, summarize, bucket=40, n=3)
    reviews(MONDAY, summarize, bucket=44, action="modify", n=1)
    reviews(MONDAY, summarize, bucket=45, action="reject", n=2)

    assert selectors.calibration_buckets(**WEEK) == [
        {"lower": 4.0, "upper": 4.5, "approved": 3, "reviewed": 4},
        {"lower": 4.5, "upper": 5.0, "approved": 0, "reviewed": 2},
    ]
    assert selectors.score_histogram_by_action(**WEEK, width=1.0) == [
        {"lower": 4.0, "upper": 5.0, "action": "approve", "count": 3},
        {"lower": 4.0, "upper": 5.0, "action": "modify", "count": 1},
        {"lower": 4.0, "upper": 5.0, "action": "reject", "count": 2},
    ]


def test_calibration_from_reviews_through_a_refresh(gateway):
    ingest(gateway, 150, audit_rate_approved=0.5, audit_rate_warning=1.0)
    decide_some(UserFactory(role=Role.REVIEWER), 60, now=timezone.now())
    rollups.rollups_refresh()
    now = timezone.now()
    expected = defaultdict(lambda: [0, 0])
    for review in Review.objects.select_related("output", "item"):
        assert review.item.kind in ("review", "audit")
        lower = min(int(Decimal(repr(review.output.score)) / Decimal("0.5")), 19) / 2
        expected[lower][0] += review.action == "approve"
        expected[lower][1] += 1

    rows = selectors.calibration_buckets(since=now - timedelta(hours=1), until=now + timedelta(1))

    assert {r["lower"]: [r["approved"], r["reviewed"]] for r in rows} == expected
    assert len(rows) > 3


def test_auroc_from_bucket_counts():
    assert selectors.auroc([0, 0, 5], [5, 0, 0]) == 1.0
    assert selectors.auroc([5, 0, 0], [0, 0, 5]) == 0.0
    assert selectors.auroc([0, 4, 0], [0, 2, 0]) == 0.5
    # Approved at 1, 2, 2; not approved at 0, 2: of six pairs, three wins, two ties, a loss.
    assert selectors.auroc([0, 1, 2], [1, 0, 1]) == pytest.approx(4 / 6)
    assert selectors.auroc([0, 3], [0, 0]) is None


def test_approval_counts_per_pair_for_auroc(summarize, classify):
    reviews(MONDAY, summarize, bucket=80, n=4)
    reviews(MONDAY, summarize, bucket=30, action="reject", n=2)
    reviews(MONDAY, classify, model="model-b", bucket=10, n=1)

    rows = selectors.approval_counts_by_pair(**WEEK)

    assert [(r["task_type"], r["model"]) for r in rows] == [
        ("classify", "model-b"),
        ("summarize", "model-a"),
    ]
    summarize_row = rows[1]
    assert summarize_row["approved"][80] == 4
    assert summarize_row["not_approved"][30] == 2
    assert selectors.auroc(summarize_row["approved"], summarize_row["not_approved"]) == 1.0


def test_audit_rates_weight_each_audit_by_its_inverse_inclusion_probability(summarize):
    audit = {"kind": "audit", "is_audit": True}
    # Auto-approved outputs audited at 2%: each stands for 50.
    reviews(MONDAY, summarize, decision="approved", bucket=75, n=3, weight_sum=150.0, **audit)
    reviews(
        MONDAY,
        summarize,
        decision="approved",
        bucket=91,
        action="reject",
        n=1,
        weight_sum=50.0,
        **audit,
    )
    # Warnings audited at 10%.
    reviews(
        MONDAY,
        summarize,
        decision="warning",
        bucket=55,
        action="modify",
        n=2,
        weight_sum=20.0,
        **audit,
    )
    reviews(MONDAY, summarize, decision="warning", bucket=60, n=2, weight_sum=20.0, **audit)
    reviews(MONDAY, summarize, bucket=60, action="reject", n=5)  # a held output: no audit

    assert selectors.audit_weighted_rates(**WEEK) == [
        {
            "decision": "approved",
            "audits": 4,
            "weight": 200.0,
            "weighted_not_approved": 50.0,
            "rate": 0.25,
        },
        {
            "decision": "warning",
            "audits": 4,
            "weight": 40.0,
            "weighted_not_approved": 20.0,
            "rate": 0.5,
        },
    ]
    by_band = selectors.audit_weighted_rates(**WEEK, width=5.0)
    assert [(r["decision"], r["lower"], r["upper"], r["rate"]) for r in by_band] == [
        ("approved", 5.0, 10.0, 0.25),
        ("warning", 5.0, 10.0, 0.5),
    ]


# --------------------------------------------------------------------------- reviewers


def reviewer_row(hour, task_type, reviewer, *, bucket, n, took, is_bulk=False):
    return ReviewerRollup.objects.create(
        hour=hour,
        task_type=task_type,
        model="model-a",
        reviewer=reviewer,
        action="approve",
        is_bulk=is_bulk,
        time_bucket=bucket,
        reviews=n,
        decision_time_sum=took,
    )


def test_decisions_per_reviewer_per_day_leave_bulk_decisions_out(summarize):
    ana, lead = UserFactory(username="ana"), UserFactory(username="lead")
    reviewer_row(MONDAY, summarize, ana, bucket=1, n=3, took=timedelta(seconds=60))
    reviewer_row(
        MONDAY + timedelta(hours=5), summarize, ana, bucket=2, n=2, took=timedelta(seconds=90)
    )
    reviewer_row(MONDAY, summarize, lead, bucket=None, n=500, took=None, is_bulk=True)
    reviewer_row(MONDAY + timedelta(days=1), summarize, lead, bucket=0, n=1, took=timedelta(0))

    assert selectors.decisions_per_reviewer_per_day(**WEEK) == [
        {"day": date(2026, 3, 2), "reviewer": "ana", "decisions": 5},
        {"day": date(2026, 3, 3), "reviewer": "lead", "decisions": 1},
    ]
    with_bulk = selectors.decisions_per_reviewer_per_day(**WEEK, include_bulk=True)
    assert {"day": date(2026, 3, 2), "reviewer": "lead", "decisions": 500} in with_bulk


def test_a_reviewers_median_time_is_read_off_the_buckets_and_the_mean_is_exact(summarize):
    ana = UserFactory(username="ana")
    # Buckets from 10 s, 30 s and 60 s: 2, 4 and 2 decisions.
    reviewer_row(MONDAY, summarize, ana, bucket=1, n=2, took=timedelta(seconds=40))
    reviewer_row(MONDAY, summarize, ana, bucket=2, n=4, took=timedelta(seconds=160))
    reviewer_row(MONDAY, summarize, ana, bucket=3, n=2, took=timedelta(seconds=200))
    reviewer_row(MONDAY, summarize, ana, bucket=None, n=9, took=None, is_bulk=True)

    assert selectors.reviewer_decision_times(**WEEK) == [
        # The 4th of 8 is halfway through the 30-60 s bucket.
        {"reviewer": "ana", "median_seconds": 45.0, "decisions": 8, "mean_seconds": 50.0}
    ]


def test_median_from_buckets():
    edges = (0, 10, 30, 60)
    assert selectors.median_from_buckets([1, 1, 0, 0], edges) == 10.0
    assert selectors.median_from_buckets([0, 4, 0, 0], edges) == 20.0
    assert selectors.median_from_buckets([0, 0, 0, 3], edges) == 60.0
    with pytest.raises(ValueError):
        selectors.median_from_buckets([0, 0, 0, 0], edges)


def test_reviewer_times_from_reviews_through_a_refresh(gateway):
    ingest(gateway, 100)
    ana = UserFactory(role=Role.REVIEWER, username="ana")
    decided = decide_some(ana, 10, now=timezone.now() - timedelta(hours=2))
    rollups.rollups_refresh()
    took = sorted((r.decided_at - r.item.claimed_at).total_seconds() for r in decided)

    (row,) = selectors.reviewer_decision_times(
        since=timezone.now() - timedelta(hours=3), until=timezone.now()
    )

    assert row["decisions"] == len(decided) == 10
    assert row["mean_seconds"] == pytest.approx(sum(took) / len(took))
    # The true median (4th and 5th of ten: 25 s and 70 s) lies in the buckets around it.
    assert 10 <= row["median_seconds"] <= 120


# --------------------------------------------------------------------------- the queue


def snapshot(at, task_type, *, kind="review", n=1, oldest=None, ages=None):
    QueueSnapshotMoment.objects.get_or_create(taken_at=at)
    QueueSnapshot.objects.create(
        taken_at=at,
        task_type=task_type,
        model="model-a",
        kind=kind,
        open_items=n,
        oldest_queued_at=oldest or at - timedelta(hours=1),
    )
    for bucket, count in (ages or {0: n}).items():
        QueueAgeSnapshot.objects.create(
            taken_at=at,
            task_type=task_type,
            model="model-a",
            kind=kind,
            age_bucket=bucket,
            open_items=count,
        )


def test_the_queue_size_over_time_is_zero_when_nothing_was_open(summarize):
    snapshot(MONDAY, summarize, n=4)
    snapshot(MONDAY, summarize, kind="audit", n=2)
    QueueSnapshotMoment.objects.create(taken_at=MONDAY + timedelta(minutes=5))
    snapshot(MONDAY + timedelta(minutes=10), summarize, n=1, oldest=MONDAY)

    assert selectors.queue_size_series(**WEEK) == [
        {"at": MONDAY, "open_items": 6},
        {"at": MONDAY + timedelta(minutes=5), "open_items": 0},
        {"at": MONDAY + timedelta(minutes=10), "open_items": 1},
    ]
    assert selectors.queue_size_series(**WEEK, kinds=["audit"])[0]["open_items"] == 2
    assert [r["oldest_seconds"] for r in selectors.queue_oldest_series(**WEEK)] == [
        3600.0,
        None,
        600.0,
    ]


def test_the_age_distribution_is_the_latest_snapshots_with_every_bucket(summarize, classify):
    snapshot(MONDAY, summarize, n=100, ages={5: 100})
    snapshot(MONDAY + timedelta(minutes=5), summarize, n=3, ages={0: 1, 3: 2})
    snapshot(MONDAY + timedelta(minutes=5), classify, n=7, ages={3: 7})

    rows = selectors.queue_age_distribution(**WEEK, task_types=["summarize"])

    assert rows == [
        {"lower_seconds": 0.0, "upper_seconds": 3600.0, "count": 1},
        {"lower_seconds": 3600.0, "upper_seconds": 4 * 3600.0, "count": 0},
        {"lower_seconds": 4 * 3600.0, "upper_seconds": 24 * 3600.0, "count": 0},
        {"lower_seconds": 24 * 3600.0, "upper_seconds": 72 * 3600.0, "count": 2},
        {"lower_seconds": 72 * 3600.0, "upper_seconds": 168 * 3600.0, "count": 0},
        {"lower_seconds": 168 * 3600.0, "upper_seconds": None, "count": 0},
    ]
    assert selectors.queue_age_distribution(since=MONDAY - timedelta(1), until=MONDAY) == []


def test_the_rows_feed_the_charts_as_they_are(summarize):
    from dashboard import charts

    outputs(MONDAY, summarize, decision="warning", score_bucket=8)
    snapshot(MONDAY, summarize, n=2)

    assert charts.score_histogram(
        selectors.score_histogram(**WEEK), review_threshold=4.0, approve_threshold=7.0
    )
    assert charts.queue_size_chart(selectors.queue_size_series(**WEEK))
    assert charts.queue_age_chart(selectors.queue_age_distribution(**WEEK))
