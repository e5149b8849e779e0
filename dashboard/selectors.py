"""What the dashboard's pages and metric endpoints read: the rollups (dashboard.models),
never the raw outputs and reviews.

Every selector takes the filter bar's filters as keywords: outputs created (or reviews
decided, or snapshots taken) in [since, until), to the hour for the hourly rollups, of
these task types and models by name (empty: all). Each returns plain rows, lists of dicts
whose keys are those of the chart rows in dashboard.charts where a chart draws them as
they are.

The human label of an output, for calibration, approval rates and AUROC, is its first
review (the slot its output was held or audited in; one per output), bulk decisions left
out: "approved" is approved unchanged, anything else is not approved.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

from django.db.models import Max, Min, QuerySet, Sum
from django.db.models.functions import Trunc, TruncDate

from dashboard.models import (
    DECISION_TIME_EDGES,
    OUTPUT_BUCKET_WIDTH,
    QUEUE_AGE_EDGES_HOURS,
    REVIEW_BUCKET_WIDTH,
    TOP_SCORE_BUCKET,
    OutputDayRollup,
    OutputRollup,
    QueueAgeSnapshot,
    QueueSnapshot,
    QueueSnapshotMoment,
    ReviewerRollup,
    ReviewRollup,
    RolledUpModel,
    ScorerRollup,
    day_start,
)
from gating.models import ReviewItem, TaskType

SCORE_MAX = 10.0
# The slots whose review is an output's human label (its first review: held or audited);
# the later rounds are not.
_FIRST_KINDS = ReviewItem.FIRST_KINDS
_GRAINS = ("hour", "day")


# --------------------------------------------------------------------------- filtering


def _filtered(
    table,
    *,
    since: datetime,
    until: datetime,
    task_types: Sequence[str],
    models: Sequence[str],
    time_field: str = "hour",
) -> QuerySet:
    if time_field == "hour":
        # The hour that ``since`` falls in counts whole: rollups know no finer time.
        since = since.astimezone(UTC).replace(minute=0, second=0, microsecond=0)
    rows = table.objects.filter(**{f"{time_field}__gte": since, f"{time_field}__lt": until})
    if task_types:
        rows = rows.filter(task_type__in=TaskType.objects.filter(name__in=task_types))
    if models:
        rows = rows.filter(model__in=models)
    return rows.order_by()


def _outputs_per_day(
    *,
    since: datetime,
    until: datetime,
    task_types: Sequence[str],
    models: Sequence[str],
    keys: Sequence[str],
) -> list[dict]:
    """OutputRollup summed per UTC day and ``keys``: [{day, *keys, outputs, score_sum}].

    Whole days come from OutputDayRollup, the hours of a day that the range cuts (at
    either end) from OutputRollup, so that a month reads one row per day and key rather
    than twenty-four, and the sums are those of the hours either way."""
    since = since.astimezone(UTC).replace(minute=0, second=0, microsecond=0)
    first_whole = since.date() if since.hour == 0 else since.date() + timedelta(days=1)
    end_whole = until.astimezone(UTC).date()
    filters = {"task_types": task_types, "models": models}
    parts = []
    if first_whole < end_whole:
        whole = _filtered(
            OutputDayRollup, since=first_whole, until=end_whole, time_field="day", **filters
        )
        parts.append(whole.values(*keys, "day"))
        cuts = [(since, day_start(first_whole)), (day_start(end_whole), until)]
    else:
        cuts = [(since, until)]
    for cut_since, cut_until in cuts:
        if cut_since < cut_until:
            hours = _filtered(OutputRollup, since=cut_since, until=cut_until, **filters)
            parts.append(hours.values(*keys, day=TruncDate("hour", tzinfo=UTC)))
    totals: dict[tuple, list] = defaultdict(lambda: [0, 0.0])
    for part in parts:
        for row in part.annotate(total=Sum("outputs"), score_total=Sum("score_sum")):
            total = totals[(row["day"], *(row[key] for key in keys))]
            total[0] += row["total"]
            total[1] += row["score_total"]
    return [
        {"day": key[0], **dict(zip(keys, key[1:], strict=True)), "outputs": n, "score_sum": sum_}
        for key, (n, sum_) in sorted(totals.items())
    ]


def _first_reviews(**filters) -> QuerySet:
    return _filtered(ReviewRollup, **filters).filter(kind__in=_FIRST_KINDS, is_bulk=False)


def _edges(bucket: int, table_width: float, width: float) -> tuple[float, float]:
    """The [lower, upper) scores of the ``width``-wide band that a rollup bucket
    ``table_width`` wide lies in; ``width`` is a whole multiple of ``table_width``."""
    per_band = round(width / table_width)
    if per_band < 1 or abs(per_band * table_width - width) > 1e-9:
        raise ValueError(f"A band of {width} is not a whole number of {table_width} buckets.")
    band = bucket // per_band
    return round(band * width, 6), round(min((band + 1) * width, SCORE_MAX), 6)


def _period(grain: str):
    if grain not in _GRAINS:
        raise ValueError(f"grain is one of {', '.join(_GRAINS)}, not {grain!r}")
    return Trunc("hour", grain, tzinfo=UTC)


# --------------------------------------------------------------------------- outputs


def outputs_by_decision_and_status(
    *,
    since: datetime,
    until: datetime,
    task_types: Sequence[str] = (),
    models: Sequence[str] = (),
    grain: str = "day",
) -> list[dict]:
    """Outputs created per hour or day, by the gate's decision and their status now (which
    changes when a human decides): [{at, decision, status, count}]."""
    period = _period(grain)  # refuses an unknown grain
    if grain == "day":
        days = _outputs_per_day(
            since=since,
            until=until,
            task_types=task_types,
            models=models,
            keys=["decision", "status"],
        )
        return [
            {
                "at": day_start(r["day"]),
                "decision": r["decision"],
                "status": r["status"],
                "count": r["outputs"],
            }
            for r in days
        ]
    rows = (
        _filtered(OutputRollup, since=since, until=until, task_types=task_types, models=models)
        .values("decision", "status", at=period)
        .annotate(count=Sum("outputs"))
        .order_by("at", "decision", "status")
    )
    return list(rows)


def review_share(
    *,
    since: datetime,
    until: datetime,
    task_types: Sequence[str] = (),
    models: Sequence[str] = (),
    grain: str = "day",
) -> list[dict]:
    """Per hour or day, how many outputs were created and how many the gate held for
    review: [{at, outputs, held}]. (An output released by backlog relief counts as a
    warning, the decision it was delivered with.)"""
    totals: dict = defaultdict(lambda: {"outputs": 0, "held": 0})
    for row in outputs_by_decision_and_status(
        since=since, until=until, task_types=task_types, models=models, grain=grain
    ):
        totals[row["at"]]["outputs"] += row["count"]
        if row["decision"] == "pending_review":
            totals[row["at"]]["held"] += row["count"]
    return [{"at": at, **counts} for at, counts in sorted(totals.items())]


def score_histogram(
    *,
    since: datetime,
    until: datetime,
    task_types: Sequence[str] = (),
    models: Sequence[str] = (),
    width: float = OUTPUT_BUCKET_WIDTH,
) -> list[dict]:
    """Outputs per score bucket and decision: [{lower, upper, decision, count}]
    (dashboard.charts.ScoreBucket). ``width``: a multiple of 0.5."""
    rows = (
        _filtered(OutputRollup, since=since, until=until, task_types=task_types, models=models)
        .values("score_bucket", "decision")
        .annotate(count=Sum("outputs"))
    )
    counts: dict = defaultdict(int)
    for row in rows:
        edges = _edges(row["score_bucket"], OUTPUT_BUCKET_WIDTH, width)
        counts[(*edges, row["decision"])] += row["count"]
    return [
        {"lower": lower, "upper": upper, "decision": decision, "count": n}
        for (lower, upper, decision), n in sorted(counts.items())
    ]


def first_output_hour(
    *,
    since: datetime,
    until: datetime,
    task_types: Sequence[str] = (),
    models: Sequence[str] = (),
) -> datetime | None:
    """The hour of the first output in the range (None: no output), from the rollups."""
    rows = _filtered(OutputRollup, since=since, until=until, task_types=task_types, models=models)
    return rows.aggregate(first=Min("hour"))["first"]


def score_heatmap(
    *,
    since: datetime,
    until: datetime,
    task_types: Sequence[str] = (),
    models: Sequence[str] = (),
    width: float = OUTPUT_BUCKET_WIDTH,
) -> list[dict]:
    """Outputs per day (UTC) and score bucket: [{day, lower, upper, count}]
    (dashboard.charts.DayScoreCount)."""
    rows = _outputs_per_day(
        since=since, until=until, task_types=task_types, models=models, keys=["score_bucket"]
    )
    counts: dict = defaultdict(int)
    for row in rows:
        counts[(row["day"], *_edges(row["score_bucket"], OUTPUT_BUCKET_WIDTH, width))] += row[
            "outputs"
        ]
    return [
        {"day": day, "lower": lower, "upper": upper, "count": n}
        for (day, lower, upper), n in sorted(counts.items())
    ]


def mean_score_by_day(
    *,
    since: datetime,
    until: datetime,
    task_types: Sequence[str] = (),
    models: Sequence[str] = (),
) -> list[dict]:
    """Each model's mean score per day (UTC), exact: [{day, model, mean_score, outputs}]."""
    rows = _outputs_per_day(
        since=since, until=until, task_types=task_types, models=models, keys=["model"]
    )
    return [
        {
            "day": r["day"],
            "model": r["model"],
            "mean_score": r["score_sum"] / r["outputs"],
            "outputs": r["outputs"],
        }
        for r in rows
        if r["outputs"]
    ]


# --------------------------------------------------------------------------- human labels


def approval_rate_by_band(
    *,
    since: datetime,
    until: datetime,
    task_types: Sequence[str] = (),
    models: Sequence[str] = (),
    width: float = 2.0,
) -> list[dict]:
    """Per score band and day (UTC) of review, how many outputs reviewers approved
    unchanged of those they reviewed: [{day, band, approved, reviewed}]
    (dashboard.charts.BandDay), bands from the lowest. ``width``: a multiple of 0.1."""
    rows = (
        _first_reviews(since=since, until=until, task_types=task_types, models=models)
        .values("score_bucket", "action", day=TruncDate("hour", tzinfo=UTC))
        .annotate(reviews=Sum("reviews"))
    )
    counts: dict = defaultdict(lambda: [0, 0])
    for row in rows:
        edges = _edges(row["score_bucket"], REVIEW_BUCKET_WIDTH, width)
        cell = counts[(edges, row["day"])]
        cell[0] += row["reviews"] if row["action"] == "approve" else 0
        cell[1] += row["reviews"]
    return [
        {"day": day, "band": f"{lower:g} to {upper:g}", "approved": approved, "reviewed": n}
        for ((lower, upper), day), (approved, n) in sorted(counts.items())
    ]


def calibration_buckets(
    *,
    since: datetime,
    until: datetime,
    task_types: Sequence[str] = (),
    models: Sequence[str] = (),
    width: float = 0.5,
) -> list[dict]:
    """The reliability diagram's counts: per score bucket, how many reviewed outputs
    reviewers approved unchanged: [{lower, upper, approved, reviewed}] (the caller adds an
    interval for dashboard.charts.ReliabilityBucket). ``width``: a multiple of 0.1."""
    counts: dict = defaultdict(lambda: [0, 0])
    for row in _label_counts(since, until, task_types, models, ("score_bucket", "action")):
        cell = counts[_edges(row["score_bucket"], REVIEW_BUCKET_WIDTH, width)]
        cell[0] += row["reviews"] if row["action"] == "approve" else 0
        cell[1] += row["reviews"]
    return [
        {"lower": lower, "upper": upper, "approved": approved, "reviewed": n}
        for (lower, upper), (approved, n) in sorted(counts.items())
    ]


def score_histogram_by_action(
    *,
    since: datetime,
    until: datetime,
    task_types: Sequence[str] = (),
    models: Sequence[str] = (),
    width: float = 0.5,
) -> list[dict]:
    """Reviewed outputs per score bucket and the reviewer's action: [{lower, upper, action,
    count}] (dashboard.charts.ActionBucket). ``width``: a multiple of 0.1."""
    counts: dict = defaultdict(int)
    for row in _label_counts(since, until, task_types, models, ("score_bucket", "action")):
        edges = _edges(row["score_bucket"], REVIEW_BUCKET_WIDTH, width)
        counts[(*edges, row["action"])] += row["reviews"]
    return [
        {"lower": lower, "upper": upper, "action": action, "count": n}
        for (lower, upper, action), n in sorted(counts.items())
    ]


def _label_counts(since, until, task_types, models, keys: tuple[str, ...]) -> QuerySet:
    return (
        _first_reviews(since=since, until=until, task_types=task_types, models=models)
        .values(*keys)
        .annotate(reviews=Sum("reviews"))
    )


def approval_counts_by_pair(
    *,
    since: datetime,
    until: datetime,
    task_types: Sequence[str] = (),
    models: Sequence[str] = (),
) -> list[dict]:
    """Per task type and model, reviewed outputs approved and not approved per 0.1-wide
    score bucket, from the lowest, for AUROC (``auroc``): [{task_type, model, approved:
    [100 counts], not_approved: [100 counts]}]."""
    pairs: dict = {}
    rows = _label_counts(
        since, until, task_types, models, ("task_type__name", "model", "score_bucket", "action")
    )
    for row in rows:
        key = (row["task_type__name"], row["model"])
        counts = pairs.setdefault(key, {"approved": [0] * 100, "not_approved": [0] * 100})
        side = "approved" if row["action"] == "approve" else "not_approved"
        counts[side][row["score_bucket"]] += row["reviews"]
    return [
        {"task_type": task_type, "model": model, **counts}
        for (task_type, model), counts in sorted(pairs.items())
    ]


# What a scorer's AUROC is measured against: the reviewer's first decision (approved
# unchanged or not), or, for simulated outputs, the truth (good, or needs an edit or bad).
AGAINST_REVIEWERS = "reviewers"
AGAINST_TRUTH = "truth"


def scorer_counts(
    *,
    since: datetime,
    until: datetime,
    task_types: Sequence[str] = (),
    models: Sequence[str] = (),
) -> list[dict]:
    """Per task type and scorer, reviewed outputs positive and negative per bucket of that
    scorer's score (0.1 wide, then TOP_SCORE_BUCKET for the top), against the reviewers and
    against the truth (simulated outputs only), with their weights (1 / inclusion
    probability) in all and at the top: [{task_type, scorer, against, positive:
    [TOP_SCORE_BUCKET + 1 counts], negative: [...], weight, top_weight}], for ``auroc`` and
    ``tied_at_10``.
    Every scorer is counted on the outputs it scored: the deciding one and those it shadowed.
    """
    cells: dict = {}
    rows = (
        _filtered(ScorerRollup, since=since, until=until, task_types=task_types, models=models)
        .values("task_type__name", "scorer", "score_bucket", "action", "truth")
        .annotate(reviews=Sum("reviews"), weight=Sum("weight_sum"))
    )
    buckets = TOP_SCORE_BUCKET + 1
    for row in rows:
        labels = [(AGAINST_REVIEWERS, row["action"] == "approve")]
        if row["truth"]:
            labels.append((AGAINST_TRUTH, row["truth"] == "good"))
        for against, positive in labels:
            key = (row["task_type__name"], row["scorer"], against)
            counts = cells.setdefault(
                key,
                {
                    "positive": [0] * buckets,
                    "negative": [0] * buckets,
                    "weight": 0.0,
                    "top_weight": 0.0,
                },
            )
            counts["positive" if positive else "negative"][row["score_bucket"]] += row["reviews"]
            counts["weight"] += row["weight"]
            if row["score_bucket"] == TOP_SCORE_BUCKET:
                counts["top_weight"] += row["weight"]
    return [
        {"task_type": task_type, "scorer": scorer, "against": against, **counts}
        for (task_type, scorer, against), counts in sorted(cells.items())
    ]


def tied_at_10(weight: float, top_weight: float) -> float | None:
    """The estimated share of outputs a scorer scored at the top (TOP_SCORE): the reviewed
    ones weighted by 1 / inclusion probability, since held outputs are all reviewed and
    delivered ones only sampled. No threshold can separate outputs tied there. None
    without weights (only rows rolled up before weights were counted)."""
    return top_weight / weight if weight > 0 else None


def auroc(approved: Sequence[int], not_approved: Sequence[int]) -> float | None:
    """The area under the ROC curve of the score as a predictor of approval, from counts
    per score bucket (lowest first): the chance that an approved output scored higher than
    a not-approved one, a tie (the same bucket) counting half (Hanley and McNeil, 1982).
    None without both kinds."""
    positives, negatives = sum(approved), sum(not_approved)
    if not positives or not negatives:
        return None
    below = 0
    wins = 0.0
    for pos, neg in zip(approved, not_approved, strict=True):
        wins += pos * below + pos * neg / 2
        below += neg
    return wins / (positives * negatives)


def audit_weighted_rates(
    *,
    since: datetime,
    until: datetime,
    task_types: Sequence[str] = (),
    models: Sequence[str] = (),
    width: float | None = None,
) -> list[dict]:
    """The share of delivered outputs (auto-approved, warning) that a human would not have
    approved unchanged, estimated from the audits, each weighted by 1 / its inclusion
    probability (the Hajek ratio: weighted not approved / weight). Per decision, or per
    decision and score bucket with ``width`` (a multiple of 0.1): [{decision, lower,
    upper, audits, weight, weighted_not_approved, rate}] (no lower and upper without
    ``width``)."""
    rows = (
        _filtered(ReviewRollup, since=since, until=until, task_types=task_types, models=models)
        .filter(kind=ReviewItem.Kind.AUDIT, is_bulk=False)
        .values("decision", "score_bucket", "action")
        .annotate(audits=Sum("reviews"), weight=Sum("weight_sum"))
    )
    cells: dict = defaultdict(lambda: [0, 0.0, 0.0])
    for row in rows:
        edges = _edges(row["score_bucket"], REVIEW_BUCKET_WIDTH, width) if width else ()
        cell = cells[(row["decision"], *edges)]
        cell[0] += row["audits"]
        cell[1] += row["weight"]
        cell[2] += row["weight"] if row["action"] != "approve" else 0.0
    result = []
    for key, (audits, weight, not_approved) in sorted(cells.items()):
        row = {"decision": key[0]}
        if width:
            row |= {"lower": key[1], "upper": key[2]}
        result.append(
            row
            | {
                "audits": audits,
                "weight": weight,
                "weighted_not_approved": not_approved,
                "rate": not_approved / weight if weight else None,
            }
        )
    return result


# --------------------------------------------------------------------------- reviewers


def decisions_per_reviewer_per_day(
    *,
    since: datetime,
    until: datetime,
    task_types: Sequence[str] = (),
    models: Sequence[str] = (),
    include_bulk: bool = False,
) -> list[dict]:
    """Decisions each reviewer made per day (UTC): [{day, reviewer, decisions}]
    (dashboard.charts.ReviewerDay). Bulk decisions (one lead's call on thousands) only with
    ``include_bulk``."""
    rows = _filtered(ReviewerRollup, since=since, until=until, task_types=task_types, models=models)
    if not include_bulk:
        rows = rows.filter(is_bulk=False)
    rows = (
        rows.values("reviewer__username", day=TruncDate("hour", tzinfo=UTC))
        .annotate(decisions=Sum("reviews"))
        .order_by("day", "reviewer__username")
    )
    return [
        {"day": r["day"], "reviewer": r["reviewer__username"], "decisions": r["decisions"]}
        for r in rows
    ]


def reviewer_decision_times(
    *,
    since: datetime,
    until: datetime,
    task_types: Sequence[str] = (),
    models: Sequence[str] = (),
) -> list[dict]:
    """Each reviewer's median time from claim to decision, estimated from the rollup's
    time buckets (``median_from_buckets``), over their decisions with a claim (bulk ones
    have none): [{reviewer, median_seconds, decisions}] (dashboard.charts.ReviewerTime),
    and the exact ``mean_seconds``."""
    rows = (
        _filtered(ReviewerRollup, since=since, until=until, task_types=task_types, models=models)
        .filter(time_bucket__isnull=False)
        .values("reviewer__username", "time_bucket")
        .annotate(reviews=Sum("reviews"), took=Sum("decision_time_sum"))
    )
    per_reviewer: dict = defaultdict(lambda: ([0] * len(DECISION_TIME_EDGES), [timedelta()]))
    for row in rows:
        counts, total = per_reviewer[row["reviewer__username"]]
        counts[row["time_bucket"]] += row["reviews"]
        total[0] += row["took"] or timedelta()
    result = []
    for reviewer, (counts, (total,)) in sorted(per_reviewer.items()):
        decisions = sum(counts)
        result.append(
            {
                "reviewer": reviewer,
                "median_seconds": median_from_buckets(counts, DECISION_TIME_EDGES),
                "decisions": decisions,
                "mean_seconds": total.total_seconds() / decisions,
            }
        )
    return result


def median_from_buckets(counts: Sequence[int], edges: Sequence[float]) -> float:
    """The median of values counted in buckets [edges[i], edges[i+1]) (the last one
    open-ended), by linear interpolation inside the bucket that holds the middle value;
    the last bucket's lower edge if it falls there."""
    total = sum(counts)
    if not total:
        raise ValueError("No values to take a median of.")
    middle = total / 2
    seen = 0
    for i, n in enumerate(counts):
        if n and seen + n >= middle:
            if i + 1 == len(edges):
                return float(edges[i])
            return edges[i] + (middle - seen) / n * (edges[i + 1] - edges[i])
        seen += n
    raise AssertionError("unreachable: the counts add up to more than their middle")


# --------------------------------------------------------------------------- the queue


def _snapshots(table, since, until, task_types, models, kinds) -> QuerySet:
    rows = _filtered(
        table,
        since=since,
        until=until,
        task_types=task_types,
        models=models,
        time_field="taken_at",
    )
    return rows.filter(kind__in=kinds) if kinds else rows


def _moments(since: datetime, until: datetime) -> QuerySet:
    return QueueSnapshotMoment.objects.filter(taken_at__gte=since, taken_at__lt=until)


def queue_size_series(
    *,
    since: datetime,
    until: datetime,
    task_types: Sequence[str] = (),
    models: Sequence[str] = (),
    kinds: Sequence[str] = (),
) -> list[dict]:
    """Open review items at each snapshot in [since, until) (every five minutes), of these
    kinds (empty: all), zero when none was open: [{at, open_items}]
    (dashboard.charts.QueuePoint)."""
    sizes = dict(
        _snapshots(QueueSnapshot, since, until, task_types, models, kinds)
        .values("taken_at")
        .annotate(n=Sum("open_items"))
        .values_list("taken_at", "n")
    )
    return [
        {"at": at, "open_items": sizes.get(at, 0)}
        for at in _moments(since, until).order_by("taken_at").values_list("taken_at", flat=True)
    ]


def queue_oldest_series(
    *,
    since: datetime,
    until: datetime,
    task_types: Sequence[str] = (),
    models: Sequence[str] = (),
    kinds: Sequence[str] = (),
) -> list[dict]:
    """How long the oldest open item had waited at each snapshot, None when none was open:
    [{at, oldest_seconds}]."""
    oldest = dict(
        _snapshots(QueueSnapshot, since, until, task_types, models, kinds)
        .values("taken_at")
        .annotate(oldest=Min("oldest_queued_at"))
        .values_list("taken_at", "oldest")
    )
    return [
        {
            "at": at,
            "oldest_seconds": max(0.0, (at - oldest[at]).total_seconds()) if at in oldest else None,
        }
        for at in _moments(since, until).order_by("taken_at").values_list("taken_at", flat=True)
    ]


def queue_age_distribution(
    *,
    since: datetime,
    until: datetime,
    task_types: Sequence[str] = (),
    models: Sequence[str] = (),
    kinds: Sequence[str] = (),
) -> list[dict]:
    """The open items of the latest snapshot in [since, until), by how long they had
    waited: [{lower_seconds, upper_seconds, count}] (dashboard.charts.AgeBucket; no upper:
    or longer), every bucket, empty ones too; no rows when no snapshot was taken."""
    latest = _moments(since, until).aggregate(at=Max("taken_at"))["at"]
    if latest is None:
        return []
    counts = dict(
        _snapshots(QueueAgeSnapshot, since, until, task_types, models, kinds)
        .filter(taken_at=latest)
        .values("age_bucket")
        .annotate(n=Sum("open_items"))
        .values_list("age_bucket", "n")
    )
    hours = [*QUEUE_AGE_EDGES_HOURS, None]
    return [
        {
            "lower_seconds": lower * 3600.0,
            "upper_seconds": None if upper is None else upper * 3600.0,
            "count": counts.get(i, 0),
        }
        for i, (lower, upper) in enumerate(itertools.pairwise(hours))
    ]


def audit_cells(
    *,
    since: datetime,
    until: datetime,
    task_types: Sequence[str] = (),
    models: Sequence[str] = (),
) -> list[dict]:
    """The audits of delivered outputs in cells of one inclusion probability (task type and
    model, which set it, and the hour it held in): [{decision, audits, weight,
    not_approved}], for dashboard.estimates.weighted_rate."""
    rows = (
        _filtered(ReviewRollup, since=since, until=until, task_types=task_types, models=models)
        .filter(kind=ReviewItem.Kind.AUDIT, is_bulk=False)
        .values("decision", "hour", "task_type", "model", "action")
        .annotate(audits=Sum("reviews"), weight=Sum("weight_sum"))
    )
    return [
        {
            "decision": row["decision"],
            "audits": row["audits"],
            "weight": row["weight"],
            "not_approved": row["action"] != "approve",
        }
        for row in rows
    ]


def model_names() -> list[str]:
    """Every model the rollups have seen, for the filter bar."""
    return list(RolledUpModel.objects.order_by("name").values_list("name", flat=True))


def filter_choices() -> dict[str, list[str]]:
    """What the filter bar may name: every task type and every model the rollups have seen,
    as ``dashboard.filters.filter_parse`` takes them."""
    return {
        "task_types": list(TaskType.objects.order_by("name").values_list("name", flat=True)),
        "models": model_names(),
    }


# --------------------------------------------------------------------------- drift

# One-point bins, as learning.statistics.drift.SCORE_BINS: two 0.5-wide rollup buckets each.
_PSI_BINS = 10


def daily_score_bins(
    *,
    since: datetime,
    until: datetime,
    task_types: Sequence[str] = (),
    models: Sequence[str] = (),
) -> dict[tuple[str, str], dict]:
    """Each (task type, model)'s outputs per day (UTC) in ten one-point score bins (a 10 in
    the last): {(task_type, model): {day: [10 counts]}}, for the PSI series."""
    rows = _outputs_per_day(
        since=since,
        until=until,
        task_types=task_types,
        models=models,
        keys=["task_type__name", "model", "score_bucket"],
    )
    per_bin = round(1.0 / OUTPUT_BUCKET_WIDTH)
    result: dict = defaultdict(lambda: defaultdict(lambda: [0] * _PSI_BINS))
    for row in rows:
        index = min(row["score_bucket"] // per_bin, _PSI_BINS - 1)
        result[(row["task_type__name"], row["model"])][row["day"]][index] += row["outputs"]
    return {key: dict(days) for key, days in result.items()}


# --------------------------------------------------------------------------- reviewers


def reviewer_actions(
    *,
    since: datetime,
    until: datetime,
    task_types: Sequence[str] = (),
    models: Sequence[str] = (),
) -> list[dict]:
    """Each reviewer's decisions (bulk ones left out) by action: [{reviewer, action,
    decisions}]."""
    rows = (
        _filtered(ReviewerRollup, since=since, until=until, task_types=task_types, models=models)
        .filter(is_bulk=False)
        .values("reviewer__username", "action")
        .annotate(decisions=Sum("reviews"))
        .order_by("reviewer__username", "action")
    )
    return [
        {"reviewer": r["reviewer__username"], "action": r["action"], "decisions": r["decisions"]}
        for r in rows
    ]
