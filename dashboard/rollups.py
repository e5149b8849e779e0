"""Keeping the dashboard's rollups current: the refresh every minute, the queue snapshot
every five, and the full rebuild (docs/performance.md, "Rollups").

Every rollup unit is recomputed whole: its rows are deleted and inserted again by one
``INSERT … SELECT … GROUP BY``, so running a refresh twice, or after a crash, can never count
anything twice. Units are recomputed in batches, one transaction each: a run killed halfway
leaves every unit either as it was or recomputed, and the rollups that pages read always
add up to the rows beneath them.

The units: outputs are recomputed by block of OUTPUT_BLOCK_SIZE consecutive ids
(OutputBlockRollup), and then each hour those blocks touch is summed again from its blocks
(OutputRollup); reviews, which come at a human pace, are recomputed by decided hour straight
from the raw rows (ReviewRollup, ReviewerRollup, ScorerRollup).

Which units are dirty comes from the rows that are new since an earlier refresh, found by
id rather than by timestamp, because history can arrive with old timestamps (the
simulator replays weeks in minutes):

* each new output makes its block dirty;
* each new review makes its decided hour dirty, and its output's block (the output's
  status may have changed);
* each new backlog relief in the audit log makes its output's block dirty (relief changes
  an output's decision and status without a review).

Those are every way an output's decision or status changes (``gating.reviews``); a new
one must make its outputs dirty here too. Deleted rows are not seen: after
``simulate --reset``, run ``manage.py rollups_rebuild``.

Late commits. A row's id is drawn when it is inserted, not when its transaction commits:
a batch still open while the refresh runs can commit later with ids below ones the refresh
saw. So each refresh records a checkpoint, the largest id of each table, and the next
refresh reads new rows not from the previous checkpoint but from the newest one that no
late commit can lie below. On PostgreSQL that is the newest checkpoint read before the
oldest transaction still open when the previous refresh began had itself begun: a row
below its ids was drawn by a transaction that began before it, which had then ended before
the previous refresh took its snapshot, so the previous refresh (or an earlier one) saw
the row, or it was rolled back. In steady state that is a refresh or two back, and of the
blocks below the previous checkpoint only those that now hold more outputs than they
counted are recomputed again. A transaction left open holds the checkpoint back (more is
read again, nothing is missed) until it ends. The open
transactions are read from pg_stat_activity, which shows their start only for sessions of
the refresh's own role (or to members of pg_read_all_stats): every writer of outputs and
reviews must be such a session, as the app's are. SQLite allows one writer at a time, so
its ids are committed in order, and the previous checkpoint is that one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

import numpy as np
from django.db import connection, transaction
from django.db.models import (
    BigIntegerField,
    Case,
    Count,
    DateTimeField,
    DurationField,
    Expression,
    ExpressionWrapper,
    F,
    FloatField,
    IntegerField,
    Max,
    Min,
    Model,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
    Sum,
    Value,
    When,
)
from django.db.models.expressions import CombinedExpression
from django.db.models.fields.json import KeyTextTransform, KeyTransform
from django.db.models.functions import Cast, Coalesce, Floor, Least, Trunc, TruncDate
from django.db.models.lookups import GreaterThanOrEqual
from django.utils import timezone

from dashboard.models import (
    DECISION_TIME_EDGES,
    OUTPUT_BLOCK_SIZE,
    OUTPUT_BUCKET_WIDTH,
    OUTPUT_BUCKETS,
    QUEUE_AGE_EDGES_HOURS,
    REVIEW_BUCKET_WIDTH,
    REVIEW_BUCKETS,
    TOP_SCORE,
    TOP_SCORE_BUCKET,
    OutputBlockRollup,
    OutputDayRollup,
    OutputRollup,
    QueueAgeSnapshot,
    QueueSnapshot,
    QueueSnapshotMoment,
    ReviewerRollup,
    ReviewRollup,
    RolledUpModel,
    RollupCheckpoint,
    ScorerRollup,
    day_start,
)
from gating import scorers
from gating.models import AuditEvent, Output, Review, ReviewItem
from learning.models import SimulatedTruth

# Units recomputed per transaction: a day of reviews, or 50,000 outputs, at a time: short
# enough that a killed rebuild loses little and pages never wait long on its locks.
HOURS_PER_TRANSACTION = 24
BLOCKS_PER_TRANSACTION = 10
# Queue snapshots are kept this long; the queue page shows weeks at most.
QUEUE_SNAPSHOT_RETENTION = timedelta(days=90)
# A PostgreSQL advisory lock that one refresh or rebuild holds at a time: two would both
# delete an hour and insert it again, and the second insert would collide with the first.
_LOCK_KEY = 7_310_420_001
HOUR = timedelta(hours=1)


@dataclass(frozen=True)
class RefreshReport:
    ran: bool  # False when another refresh or rebuild held the lock
    output_blocks: int = 0
    output_hours: int = 0
    review_hours: int = 0


# --------------------------------------------------------------------------- SQL pieces


def _hour_of(field: str) -> Trunc:
    return Trunc(field, "hour", output_field=DateTimeField(), tzinfo=UTC)


def _bucket_of(field: str | Expression, width: float, buckets: int) -> Cast:
    """The score's bucket: floor(score / width), with 10.0 in the last bucket. Multiplied by
    the whole number 1 / width rather than divided by width, so that a score on an edge
    (4.0, 0.3) is not a rounding error below it."""
    per_point = round(1 / width)
    score = F(field) if isinstance(field, str) else field
    return Cast(
        Least(Floor(score * Value(per_point)), Value(buckets - 1)), output_field=IntegerField()
    )


def _decision_time_bucket() -> Case:
    """Which DECISION_TIME_EDGES bucket the time from claim to decision falls in; none for
    a bulk decision or a decision with no claim."""
    return Case(
        When(Q(is_bulk=True) | Q(item__claimed_at__isnull=True), then=Value(None)),
        *[
            When(item__claimed_at__gt=F("decided_at") - timedelta(seconds=edge), then=Value(i))
            for i, edge in enumerate(DECISION_TIME_EDGES[1:])
        ],
        default=Value(len(DECISION_TIME_EDGES) - 1),
        output_field=IntegerField(),
    )


def _block_of(field: str) -> CombinedExpression:
    return F(field) / Value(OUTPUT_BLOCK_SIZE, output_field=BigIntegerField())


def _outputs_by_block(first: int, end: int) -> QuerySet:
    """Outputs of blocks [first, end), from the raw rows, by the primary key."""
    return (
        Output.objects.filter(pk__gte=first * OUTPUT_BLOCK_SIZE, pk__lt=end * OUTPUT_BLOCK_SIZE)
        .order_by()
        .values(
            r_block=_block_of("id"),
            r_hour=_hour_of("created_at"),
            r_task_type=F("task_type_id"),
            r_model=F("model"),
            r_decision=F("decision"),
            r_status=F("status"),
            r_score_bucket=_bucket_of("score", OUTPUT_BUCKET_WIDTH, OUTPUT_BUCKETS),
        )
        .annotate(r_outputs=Count("id"), r_score_sum=Sum("score"))
    )


def _outputs_by_hour(since: datetime, until: datetime) -> QuerySet:
    """Outputs of hours [since, until), summed from their blocks."""
    return (
        OutputBlockRollup.objects.filter(hour__gte=since, hour__lt=until)
        .order_by()
        .values(
            r_hour=F("hour"),
            r_task_type=F("task_type_id"),
            r_model=F("model"),
            r_decision=F("decision"),
            r_status=F("status"),
            r_score_bucket=F("score_bucket"),
        )
        .annotate(r_outputs=Sum("outputs"), r_score_sum=Sum("score_sum"))
    )


def _reviews_by_hour(since: datetime, until: datetime) -> QuerySet:
    return (
        Review.objects.filter(decided_at__gte=since, decided_at__lt=until)
        .order_by()
        .values(
            r_hour=_hour_of("decided_at"),
            r_task_type=F("output__task_type_id"),
            r_model=F("output__model"),
            r_decision=F("output__decision"),
            r_kind=F("item__kind"),
            r_is_audit=F("item__is_audit"),
            r_is_bulk=F("is_bulk"),
            r_action=F("action"),
            r_score_bucket=_bucket_of("output__score", REVIEW_BUCKET_WIDTH, REVIEW_BUCKETS),
        )
        .annotate(
            r_reviews=Count("id"),
            r_weight_sum=Sum(
                Value(1.0) / F("item__inclusion_probability"), output_field=FloatField()
            ),
        )
    )


def _scorers_by_hour(since: datetime, until: datetime) -> list[QuerySet]:
    """First reviews of [since, until) once per scorer that scored their output: the
    deciding scorer by the output's score, the others by their shadow scores; a score at
    the top in TOP_SCORE_BUCKET, past the 0.1-wide ones."""
    first_reviews = Review.objects.filter(
        decided_at__gte=since,
        decided_at__lt=until,
        item__kind__in=ReviewItem.FIRST_KINDS,
        is_bulk=False,
    ).order_by()
    truth = Subquery(
        SimulatedTruth.objects.filter(output_id=OuterRef("output_id")).values("truth")[:1]
    )
    weight = Sum(Value(1.0) / F("item__inclusion_probability"), output_field=FloatField())
    sources = []
    for name in scorers.names():
        # One aggregate per scorer, so that a key (hour, task type, model, scorer, bucket,
        # action, truth) comes out once even where this scorer decided some outputs of a
        # task type and shadowed others (a fallback, or a change of scorer within the hour).
        decided = Q(output__scorer__startswith=f"{name}-v")
        score = Case(
            When(decided, then=F("output__score")),
            default=Cast(
                KeyTextTransform("score", KeyTransform(name, "output__shadow_scores")),
                FloatField(),
            ),
            output_field=FloatField(),
        )
        sources.append(
            first_reviews.filter(decided | Q(output__shadow_scores__has_key=name))
            .values(
                r_hour=_hour_of("decided_at"),
                r_task_type=F("output__task_type_id"),
                r_model=F("output__model"),
                r_scorer=Value(name),
                r_score_bucket=Case(
                    When(GreaterThanOrEqual(score, Value(TOP_SCORE)), then=TOP_SCORE_BUCKET),
                    default=_bucket_of(score, REVIEW_BUCKET_WIDTH, REVIEW_BUCKETS),
                    output_field=IntegerField(),
                ),
                r_action=F("action"),
                r_truth=Coalesce(truth, Value("")),
            )
            .annotate(r_reviews=Count("id"), r_weight_sum=weight)
        )
    return sources


def _reviewers_by_hour(since: datetime, until: datetime) -> QuerySet:
    decision_time = ExpressionWrapper(
        F("decided_at") - F("item__claimed_at"), output_field=DurationField()
    )
    return (
        Review.objects.filter(decided_at__gte=since, decided_at__lt=until)
        .order_by()
        .values(
            r_hour=_hour_of("decided_at"),
            r_task_type=F("output__task_type_id"),
            r_model=F("output__model"),
            r_reviewer=F("reviewer_id"),
            r_action=F("action"),
            r_is_bulk=F("is_bulk"),
            r_time_bucket=_decision_time_bucket(),
        )
        .annotate(
            r_reviews=Count("id"),
            r_decision_time_sum=Sum(decision_time, filter=Q(is_bulk=False)),
        )
    )


@dataclass(frozen=True)
class _Rollup:
    table: type[Model]
    # One aggregate, or several whose rows together fill the table.
    source: Callable[[datetime, datetime], QuerySet | list[QuerySet]]


OUTPUTS = (_Rollup(OutputRollup, _outputs_by_hour),)
REVIEWS = (
    _Rollup(ReviewRollup, _reviews_by_hour),
    _Rollup(ReviewerRollup, _reviewers_by_hour),
    _Rollup(ScorerRollup, _scorers_by_hour),
)


def _insert_select(table: type[Model], rows: QuerySet) -> None:
    """``INSERT INTO table SELECT …``: the aggregation stays in the database. Each selected
    alias is ``r_`` and the name of the table's field it fills."""
    select, params = rows.query.sql_with_params()
    compiler = rows.query.get_compiler(connection=connection)
    aliases = [alias for _, _, alias in compiler.get_select()[0]]
    quote = connection.ops.quote_name
    columns = ", ".join(quote(table._meta.get_field(alias[2:]).column) for alias in aliases)
    with connection.cursor() as cursor:
        cursor.execute(f"INSERT INTO {quote(table._meta.db_table)} ({columns}) {select}", params)


def _recompute(
    hours: Iterable[datetime], rollups: tuple[_Rollup, ...], on_progress=lambda done: None
) -> None:
    """Replace the rows of ``hours`` in each of ``rollups`` with a fresh aggregate,
    HOURS_PER_TRANSACTION hours per transaction; for the output rollup, the days those
    hours fall in too, in the same transaction."""
    ordered = sorted(hours)
    for start in range(0, len(ordered), HOURS_PER_TRANSACTION):
        batch = ordered[start : start + HOURS_PER_TRANSACTION]
        with transaction.atomic():
            for since, until in _runs(batch, HOUR):
                for rollup in rollups:
                    rollup.table.objects.filter(hour__gte=since, hour__lt=until).delete()
                    rows = rollup.source(since, until)
                    for part in rows if isinstance(rows, list) else [rows]:
                        _insert_select(rollup.table, part)
            if rollups is OUTPUTS:
                output_days_recompute({hour.astimezone(UTC).date() for hour in batch})
        on_progress(len(batch))


def _outputs_by_day(first: date, end: date) -> QuerySet:
    """OutputRollup of days [first, end) (UTC), summed per day."""
    return (
        OutputRollup.objects.filter(hour__gte=day_start(first), hour__lt=day_start(end))
        .order_by()
        .values(
            r_day=TruncDate("hour", tzinfo=UTC),
            r_task_type=F("task_type_id"),
            r_model=F("model"),
            r_decision=F("decision"),
            r_status=F("status"),
            r_score_bucket=F("score_bucket"),
        )
        .annotate(r_outputs=Sum("outputs"), r_score_sum=Sum("score_sum"))
    )


def output_days_recompute(days: set[date]) -> None:
    """Replace the rows of ``days`` (UTC) in OutputDayRollup with the sums of their hours
    in OutputRollup."""
    for first, end in _runs(sorted(days), timedelta(days=1)):
        OutputDayRollup.objects.filter(day__gte=first, day__lt=end).delete()
        _insert_select(OutputDayRollup, _outputs_by_day(first, end))


def _blocks_recompute(
    blocks: Iterable[int], *, with_hours: bool, on_progress=lambda done: None
) -> set[datetime]:
    """Replace the rows of ``blocks`` in OutputBlockRollup with a fresh aggregate of their
    outputs, BLOCKS_PER_TRANSACTION blocks per transaction, and with ``with_hours`` the
    hours they touch (before or after) in OutputRollup in the same transaction. Returns
    the hours touched."""
    ordered = sorted(blocks)
    touched: set[datetime] = set()
    for start in range(0, len(ordered), BLOCKS_PER_TRANSACTION):
        batch = ordered[start : start + BLOCKS_PER_TRANSACTION]
        rows = OutputBlockRollup.objects.filter(block__in=batch)
        with transaction.atomic():
            hours = set(rows.values_list("hour", flat=True).distinct())
            for first, end in _runs(batch, 1):
                OutputBlockRollup.objects.filter(block__gte=first, block__lt=end).delete()
                _insert_select(OutputBlockRollup, _outputs_by_block(first, end))
            hours |= set(rows.values_list("hour", flat=True).distinct())
            RolledUpModel.objects.bulk_create(
                [RolledUpModel(name=n) for n in rows.values_list("model", flat=True).distinct()],
                ignore_conflicts=True,
            )
            if with_hours:
                _recompute(hours, OUTPUTS)
        touched |= hours
        on_progress(len(batch))
    return touched


def _runs(ordered: list, step) -> Iterator[tuple]:
    """Sorted hours (or blocks) as [since, until) runs of consecutive ones: one statement
    each."""
    since = previous = ordered[0]
    for value in ordered[1:]:
        if value != previous + step:
            yield since, previous + step
            since = value
        previous = value
    yield since, previous + step


# --------------------------------------------------------------------------- dirty hours


def _hours_of(rows: QuerySet, field: str) -> set[datetime]:
    return set(rows.order_by().annotate(h=_hour_of(field)).values_list("h", flat=True).distinct())


def _blocks_of(rows: QuerySet, field: str = "id") -> set[int]:
    return set(rows.order_by().annotate(b=_block_of(field)).values_list("b", flat=True).distinct())


def _checkpoint_take(now: datetime) -> RollupCheckpoint:
    """The largest ids now, and on PostgreSQL when the oldest open transaction began and
    when the ids were read (unsaved)."""
    quote = connection.ops.quote_name
    tables = [quote(m._meta.db_table) for m in (Output, Review, AuditEvent)]
    largest = ", ".join(f"(SELECT COALESCE(MAX(id), 0) FROM {t})" for t in tables)
    oldest_open_since = read_at = None
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            # Before the ids, in a statement of its own: a transaction that commits between
            # the two is then either seen as open or has its rows in the snapshot below.
            cursor.execute(
                "SELECT MIN(xact_start) FROM pg_stat_activity WHERE datname = current_database()"
                " AND backend_type = 'client backend' AND pid <> pg_backend_pid()"
            )
            (oldest_open_since,) = cursor.fetchone()
            cursor.execute(f"SELECT {largest}, clock_timestamp()")
            output_id, review_id, audit_event_id, read_at = cursor.fetchone()
        else:
            cursor.execute(f"SELECT {largest}")
            output_id, review_id, audit_event_id = cursor.fetchone()
    return RollupCheckpoint(
        taken_at=now,
        output_id=output_id,
        review_id=review_id,
        audit_event_id=audit_event_id,
        read_at=read_at,
        oldest_open_since=oldest_open_since,
    )


def _reread_from(previous: RollupCheckpoint | None) -> RollupCheckpoint | None:
    """The newest checkpoint that no row committed after ``previous`` can lie below (module
    docstring); None to read every row."""
    if previous is None or previous.oldest_open_since is None:
        return previous
    return (
        RollupCheckpoint.objects.filter(read_at__lte=previous.oldest_open_since)
        .order_by("-id")
        .first()
    )


def _dirty(
    low: RollupCheckpoint, previous: RollupCheckpoint, high: RollupCheckpoint
) -> tuple[set[int], set[datetime]]:
    """The output blocks and the review hours that rows with ids in (low, high] make dirty.
    ``previous`` is the last refresh's checkpoint: its blocks below it are recomputed again
    only if a late commit added outputs to them."""

    def new(model: type[Model], attname: str, since: RollupCheckpoint = low) -> QuerySet:
        return model.objects.filter(pk__gt=getattr(since, attname), pk__lte=getattr(high, attname))

    reviews = new(Review, "review_id")
    reliefs = (
        new(AuditEvent, "audit_event_id")
        .filter(action=AuditEvent.Action.BACKLOG_RELIEF, object_type=Output._meta.label_lower)
        .annotate(output=Cast("object_id", BigIntegerField()))
    )
    blocks = (
        _blocks_of(new(Output, "output_id", since=previous))
        | _blocks_of(reviews, "output_id")
        | _blocks_of(reliefs, "output")
    )
    seen = Output.objects.filter(pk__gt=low.output_id, pk__lte=previous.output_id)
    return blocks | _grown(_blocks_of(seen) - blocks), _hours_of(reviews, "decided_at")


def _grown(blocks: set[int]) -> set[int]:
    """Of blocks recomputed before, those that hold more outputs now than they counted
    then: a transaction open at the time has committed since. (Outputs are only ever
    added, so the same count is the same outputs.)"""
    if not blocks:
        return set()
    counted = dict(
        OutputBlockRollup.objects.filter(block__in=blocks)
        .values("block")
        .annotate(n=Sum("outputs"))
        .values_list("block", "n")
    )
    now = dict(
        Output.objects.filter(
            pk__gte=min(blocks) * OUTPUT_BLOCK_SIZE, pk__lt=(max(blocks) + 1) * OUTPUT_BLOCK_SIZE
        )
        .order_by()
        .values(b=_block_of("id"))
        .annotate(n=Count("id"))
        .values_list("b", "n")
    )
    return {block for block in blocks if now.get(block, 0) != counted.get(block, 0)}


_NOTHING_READ = RollupCheckpoint(taken_at=datetime.min, output_id=0, review_id=0, audit_event_id=0)


@contextmanager
def _exclusive(*, wait: bool) -> Iterator[bool]:
    """Hold the rollups' lock (PostgreSQL), waiting for it or not; yields whether it is
    held. A session lock, not a transaction's: a run is many transactions. A killed run's
    connection closes, which releases it."""
    if connection.vendor != "postgresql":
        yield True
        return
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT {'pg_advisory_lock' if wait else 'pg_try_advisory_lock'}(%s)", [_LOCK_KEY]
        )
        held = wait or cursor.fetchone()[0]
    try:
        yield held
    finally:
        if held:
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_advisory_unlock(%s)", [_LOCK_KEY])


# --------------------------------------------------------------------------- the jobs


def rollups_refresh(now: datetime | None = None) -> RefreshReport:
    """Recompute what rows new since an earlier refresh make dirty (module docstring).
    Meant for beat, every minute; never on the ingest path. Returns without doing anything
    while another refresh or a rebuild runs: the next minute's catches up."""
    now = now or timezone.now()
    with _exclusive(wait=False) as held:
        if not held:
            return RefreshReport(ran=False)
        previous = RollupCheckpoint.objects.first()
        low = _reread_from(previous)
        high = _checkpoint_take(now)
        blocks, review_hours = _dirty(low or _NOTHING_READ, previous or _NOTHING_READ, high)
        output_hours = _blocks_recompute(blocks, with_hours=True)
        _recompute(review_hours, REVIEWS)
        # Recorded last: a run killed before this line is done again from the same rows.
        high.save()
        if low is not None:
            # Later refreshes read from ``low`` or a newer checkpoint, never an older one.
            RollupCheckpoint.objects.filter(id__lt=low.id).delete()
    return RefreshReport(
        ran=True,
        output_blocks=len(blocks),
        output_hours=len(output_hours),
        review_hours=len(review_hours),
    )


def rollups_rebuild(
    since: datetime | None = None,
    until: datetime | None = None,
    *,
    now: datetime | None = None,
    on_progress: Callable[[int, int], None] = lambda done, total: None,
) -> int:
    """Recompute every hour in [since, until) (to the hour), by default every hour that
    has outputs, reviews or rollup rows, with the output blocks in them; returns how many
    hours. ``on_progress`` is called with the units (blocks and hours) done so far and
    their total. Waits for a running refresh to finish.

    A whole rebuild (no bounds) also records a checkpoint, so that the refresh goes on
    from it rather than from the beginning.
    """
    now = now or timezone.now()
    with _exclusive(wait=True):
        checkpoint = _checkpoint_take(now) if since is None and until is None else None
        first, last = _span()
        since = _hour_floor(since) if since else first
        until = _hour_ceil(until) if until else last
        if since is None or until is None:
            return 0
        blocks = _blocks_of(
            Output.objects.filter(created_at__gte=since, created_at__lt=until)
        ) | set(
            OutputBlockRollup.objects.filter(hour__gte=since, hour__lt=until)
            .values_list("block", flat=True)
            .distinct()
        )
        hours = {since + n * HOUR for n in range((until - since) // HOUR)}
        progress = {"done": 0, "total": len(blocks) + 2 * len(hours)}

        def advance(count: int) -> None:
            progress["done"] += count
            on_progress(progress["done"], progress["total"])

        # Blocks may reach past the range: the hours they touch are summed again too.
        touched = _blocks_recompute(blocks, with_hours=False, on_progress=advance)
        progress["total"] += len(touched - hours)
        _recompute(hours | touched, OUTPUTS, advance)
        _recompute(hours, REVIEWS, advance)
        if checkpoint is not None:
            checkpoint.save()
    return len(hours)


def _span() -> tuple[datetime | None, datetime | None]:
    """The first hour and the end of the last one that has raw rows or rollup rows."""
    bounds = [
        Output.objects.aggregate(first=Min("created_at"), last=Max("created_at")),
        Review.objects.aggregate(first=Min("decided_at"), last=Max("decided_at")),
        *(
            table.objects.aggregate(first=Min("hour"), last=Max("hour"))
            for table in (
                OutputBlockRollup,
                OutputRollup,
                ReviewRollup,
                ReviewerRollup,
                ScorerRollup,
            )
        ),
    ]
    # A day row's midnight is enough: recomputing any hour of a day recomputes the day.
    days = OutputDayRollup.objects.aggregate(first=Min("day"), last=Max("day"))
    bounds.append({end: day and day_start(day) for end, day in days.items()})
    firsts = [b["first"] for b in bounds if b["first"] is not None]
    lasts = [b["last"] for b in bounds if b["last"] is not None]
    if not firsts:
        return None, None
    return _hour_floor(min(firsts)), _hour_floor(max(lasts)) + HOUR


def _hour_floor(moment: datetime) -> datetime:
    return moment.astimezone(UTC).replace(minute=0, second=0, microsecond=0)


def _hour_ceil(moment: datetime) -> datetime:
    floor = _hour_floor(moment)
    return floor if floor == moment else floor + HOUR


# --------------------------------------------------------------------------- the queue


def _waiting_since() -> Coalesce:
    """Since when an item has waited: its turn (a follow-up round keeps its output's, see
    ``ReviewItem.turn_at``), or when it was queued for slots decided before turns were kept.
    Whether it was open at a moment still goes by when it was queued and decided."""
    return Coalesce("turn_at", "queued_at")


def _age_bucket(at: datetime) -> Case:
    """Which QUEUE_AGE_EDGES_HOURS bucket an item's wait at ``at`` falls in (annotated as
    ``waiting_since``)."""
    return Case(
        *[
            When(waiting_since__gt=at - timedelta(hours=edge), then=Value(i))
            for i, edge in enumerate(QUEUE_AGE_EDGES_HOURS[1:])
        ],
        default=Value(len(QUEUE_AGE_EDGES_HOURS) - 1),
        output_field=IntegerField(),
    )


def _snapshot_store(taken_at: datetime, open_items: QuerySet, at: datetime) -> int:
    """Store the snapshot of ``open_items`` (ages as of ``at``) under ``taken_at``,
    replacing one stored there before; returns how many QueueSnapshot rows."""
    keys = ("task_type_id", "model", "kind")
    open_items = open_items.annotate(waiting_since=_waiting_since())
    sizes = (
        open_items.order_by()
        .values(*keys)
        .annotate(open_items=Count("id"), oldest_queued_at=Min("waiting_since"))
    )
    ages = (
        open_items.order_by()
        .annotate(age_bucket=_age_bucket(at))
        .values(*keys, "age_bucket")
        .annotate(open_items=Count("id"))
    )
    with transaction.atomic():
        for table in (QueueSnapshot, QueueAgeSnapshot):
            table.objects.filter(taken_at=taken_at).delete()
        QueueSnapshotMoment.objects.get_or_create(taken_at=taken_at)
        rows = QueueSnapshot.objects.bulk_create(
            QueueSnapshot(taken_at=taken_at, **row) for row in sizes
        )
        QueueAgeSnapshot.objects.bulk_create(
            QueueAgeSnapshot(taken_at=taken_at, **row) for row in ages
        )
    return len(rows)


def queue_snapshot_take(now: datetime | None = None) -> int:
    """Snapshot the open queue now, under the minute it is taken in (a second run in the
    same minute replaces the first), and drop snapshots past QUEUE_SNAPSHOT_RETENTION.
    Meant for beat, every five minutes. Returns how many QueueSnapshot rows it stored."""
    now = now or timezone.now()
    taken_at = now.replace(second=0, microsecond=0)
    # Through the claim's partial index of open items, however long the decided history.
    stored = _snapshot_store(
        taken_at, ReviewItem.objects.filter(state=ReviewItem.State.OPEN, queued_at__lte=now), now
    )
    cutoff = now - QUEUE_SNAPSHOT_RETENTION
    for table in (QueueSnapshot, QueueAgeSnapshot, QueueSnapshotMoment):
        table.objects.filter(taken_at__lt=cutoff).delete()
    return stored


def queue_snapshots_backfill(
    since: datetime | None = None, until: datetime | None = None, *, every: timedelta = HOUR
) -> int:
    """Snapshots of the queue as it was at each ``every`` from ``since`` (to the hour;
    default: when the first item was queued) up to ``until`` (default now), from the items'
    queued and decided times: for history that was replayed rather than lived (the demo, a
    simulation), which beat's snapshots never saw. Returns how many moments.

    One read of the items for all the moments, counted in memory, and the rows written a
    day at a time: a pair of aggregate queries and five writes for each hour took a fifth of
    the demo's seeding (docs/performance.md). The counts are the live snapshot's
    (``_snapshot_store``); tests/dashboard/test_rollups_queue.py holds both to the raw items.
    """
    since = since or ReviewItem.objects.aggregate(first=Min("queued_at"))["first"]
    until = until or timezone.now()
    if since is None:
        return 0
    moments = []
    at = _hour_floor(since)
    while at < until:
        moments.append(at)
        at += every
    if not moments:
        return 0
    # Every item open at some moment: queued by the last, not decided by the first.
    items = (
        ReviewItem.objects.filter(queued_at__lte=moments[-1])
        .exclude(decided_at__lte=moments[0])
        .annotate(waiting_since=_waiting_since())
        .values_list("task_type_id", "model", "kind", "queued_at", "decided_at", "waiting_since")
    )
    counted = _QueueHistory(items.iterator(chunk_size=20_000))
    with transaction.atomic():
        # A day of moments at a time, so that the rows in memory stay a day's.
        for start in range(0, len(moments), 24):
            chunk = moments[start : start + 24]
            # Only the moments rebuilt: beat's snapshots between them stay.
            for table in (QueueSnapshot, QueueAgeSnapshot):
                table.objects.filter(taken_at__in=chunk).delete()
            QueueSnapshotMoment.objects.bulk_create(
                (QueueSnapshotMoment(taken_at=m) for m in chunk), ignore_conflicts=True
            )
            QueueSnapshot.objects.bulk_create(
                QueueSnapshot(taken_at=m, **key, open_items=n, oldest_queued_at=oldest)
                for m in chunk
                for key, n, oldest in counted.sizes_at(m)
            )
            QueueAgeSnapshot.objects.bulk_create(
                QueueAgeSnapshot(taken_at=m, **key, age_bucket=bucket, open_items=n)
                for m in chunk
                for key, bucket, n in counted.ages_at(m)
            )
    return len(moments)


_MICROSECOND = timedelta(microseconds=1)
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _microseconds(at: datetime) -> int:
    return (at - _EPOCH) // _MICROSECOND


class _QueueHistory:
    """Review items' (task type, model, kind, queued, decided, waiting since) as columns, to
    count the items open at any moment (queued at or before it and not decided by it) and
    how long they had waited."""

    _AGE_EDGES = np.array([hours * 3_600_000_000 for hours in QUEUE_AGE_EDGES_HOURS[1:]])

    def __init__(self, rows: Iterable[tuple]):
        index: dict[tuple, int] = {}
        keys, queued, decided, since = [], [], [], []
        never = np.iinfo(np.int64).max
        for task_type_id, model, kind, queued_at, decided_at, waiting_since in rows:
            keys.append(index.setdefault((task_type_id, model, kind), len(index)))
            queued.append(_microseconds(queued_at))
            decided.append(never if decided_at is None else _microseconds(decided_at))
            since.append(_microseconds(waiting_since))
        self.names = [{"task_type_id": t, "model": m, "kind": k} for t, m, k in index]
        self.key = np.array(keys, dtype=np.int64)
        self.queued = np.array(queued, dtype=np.int64)
        self.decided = np.array(decided, dtype=np.int64)
        self.since = np.array(since, dtype=np.int64)

    def _open(self, at: datetime) -> tuple[np.ndarray, int]:
        now = _microseconds(at)
        return (self.queued <= now) & (self.decided > now), now

    def sizes_at(self, at: datetime) -> Iterator[tuple[dict, int, datetime]]:
        """(key, open items, longest waiting since) per key with items open at ``at``."""
        is_open, _ = self._open(at)
        key, since = self.key[is_open], self.since[is_open]
        counts = np.bincount(key, minlength=len(self.names))
        oldest = np.full(len(self.names), np.iinfo(np.int64).max)
        np.minimum.at(oldest, key, since)
        for k in np.flatnonzero(counts):
            yield self.names[k], int(counts[k]), _EPOCH + int(oldest[k]) * _MICROSECOND

    def ages_at(self, at: datetime) -> Iterator[tuple[dict, int, int]]:
        """(key, age bucket, open items) per key and QUEUE_AGE_EDGES_HOURS bucket: the
        bucket is how many edges the item's wait at ``at`` has reached."""
        is_open, now = self._open(at)
        buckets = len(self._AGE_EDGES) + 1
        bucket = np.searchsorted(self._AGE_EDGES, now - self.since[is_open], side="right")
        counts = np.bincount(
            self.key[is_open] * buckets + bucket, minlength=len(self.names) * buckets
        )
        for cell in np.flatnonzero(counts):
            yield self.names[cell // buckets], int(cell % buckets), int(counts[cell])
