"""The dashboard's rollups: serving tables that pages and metric endpoints read instead of
raw outputs and reviews (docs/performance.md, "Rollups").

Each table is keyed by exactly the dimensions that pages filter or split on, and holds
counts (and sums, where a chart needs a mean or a weighted rate) for that key. They are
written only by ``dashboard.rollups``, which recomputes whole hours at a time.

Time is the hour an output was created (its outputs' charts) or the hour a review was
decided (the reviews' charts), both in UTC. An output's status changes when a human
decides, hours or days after it was created: its row moves from one status to another
within its created hour, which the refresh recomputes.
"""

from datetime import UTC, date, datetime, time

from django.conf import settings
from django.db import models

from gating.models import TaskType

# Score buckets. An output's score is in [0, 10]; bucket k holds [k·width, (k+1)·width),
# and the last bucket also holds 10.0, so a score on an edge lands in the bucket that starts
# there (4.0 in [4.0, 4.5)) and 10.0 in the last one.
#
# Outputs: 0.5 wide, 20 buckets. Histograms and the day x score heatmap need no finer
# grain, and this table is the largest (one row per created hour, task type, model,
# decision, status and bucket).
OUTPUT_BUCKET_WIDTH = 0.5
OUTPUT_BUCKETS = 20
# Reviews: 0.1 wide, 100 buckets. The reliability diagram and the approval rate by band
# add buckets up to any multiple of 0.1; AUROC per task type and model is computed from
# approved / not-approved counts per bucket, counting pairs within one bucket as ties,
# and 0.1 keeps that error small. Reviews are a fraction of outputs, so the finer key
# costs little.
REVIEW_BUCKET_WIDTH = 0.1
REVIEW_BUCKETS = 100
# The scorer rollup's one bucket past the last: scores at the top of the scale, 10 or near
# enough to show as 10.000. No threshold separates outputs tied there, so the calibration
# page shows each scorer's share of them, which the last 0.1-wide bucket would blur with
# 9.9.
TOP_SCORE = 9.9995
TOP_SCORE_BUCKET = REVIEW_BUCKETS

# How long a reviewer took from claim to decision, in buckets that start at these many
# seconds (the last is open-ended). The median per reviewer is read off these counts by
# interpolating inside the bucket that holds it; the exact mean comes from the sum.
DECISION_TIME_EDGES = (0, 10, 30, 60, 120, 300, 600, 1800, 3600)

# The age of an open queue item, in buckets that start at these many hours. Seven days is
# when backlog relief may start (docs/learning.md).
QUEUE_AGE_EDGES_HOURS = (0, 1, 4, 24, 72, 168)


# Outputs per block of this many consecutive ids (OutputBlockRollup).
OUTPUT_BLOCK_SIZE = 5000


class OutputCounts(models.Model):
    """What the output rollups count, per task type, model, decision, status now and score
    bucket; each adds the time (and block) it counts over."""

    task_type = models.ForeignKey(TaskType, on_delete=models.CASCADE, related_name="+")
    model = models.CharField(max_length=200)
    decision = models.CharField(max_length=20)
    status = models.CharField(max_length=20)
    score_bucket = models.PositiveSmallIntegerField()
    outputs = models.PositiveIntegerField()
    # For the mean score of any slice (drift), which buckets only approximate.
    score_sum = models.FloatField()

    class Meta:
        abstract = True


def day_start(day: date) -> datetime:
    """The first instant of a UTC day, as the day rollup's hours begin."""
    return datetime.combine(day, time(0), tzinfo=UTC)


class OutputBlockRollup(OutputCounts):
    """The refresh's step between raw outputs and OutputRollup, never read by pages: outputs
    of one block of OUTPUT_BLOCK_SIZE consecutive ids, per created hour, task type, model,
    decision, status and score bucket.

    Why: a refresh recomputes whole units from the raw rows, and new outputs (and those a
    review just decided) are found by id. Recomputing the blocks they fall in reads a few
    thousand outputs each; recomputing their created hours would read every output of the
    hour, which at a high ingest rate is millions, each minute. An hour of OutputRollup is
    then the sum of its blocks' rows, a few hundred rows.
    """

    block = models.BigIntegerField()
    hour = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=[
                    "block",
                    "hour",
                    "task_type",
                    "model",
                    "decision",
                    "status",
                    "score_bucket",
                ],
                name="output_block_rollup_key",
            ),
        ]
        # Summing an hour's blocks into OutputRollup.
        indexes = [models.Index(fields=["hour"], name="output_block_rollup_hour")]

    def __str__(self) -> str:
        return f"block {self.block}, {self.hour:%Y-%m-%d %H}h {self.model}: {self.outputs}"


class RolledUpModel(models.Model):
    """Every model name the output rollups have seen, for the filter bar that every page
    draws. Why a table: a DISTINCT over the rollups on each page view grows with history;
    this grows with the number of models. Written by ``dashboard.rollups`` as it rolls up
    outputs; a model whose outputs are all gone stays listed (its charts say no data)."""

    name = models.CharField(max_length=200, unique=True)

    def __str__(self) -> str:
        return self.name


class OutputRollup(OutputCounts):
    """Outputs created in an hour, per task type, model, decision, status and score bucket."""

    hour = models.DateTimeField()

    class Meta:
        constraints = [
            # Leads with the hour: every page reads a time range, and the refresh deletes
            # whole hours.
            models.UniqueConstraint(
                fields=["hour", "task_type", "model", "decision", "status", "score_bucket"],
                name="output_rollup_key",
            ),
        ]
        indexes = [
            models.Index(fields=["task_type", "model", "hour"], name="output_rollup_pair_hour"),
        ]

    def __str__(self) -> str:
        return (
            f"{self.hour:%Y-%m-%d %H}h {self.model} {self.decision}/{self.status}: {self.outputs}"
        )


class OutputDayRollup(OutputCounts):
    """OutputRollup summed over each UTC day: what the charts of days read for the whole
    days of their range (``dashboard.selectors``), so that a month reads thirty rows per
    key, not seven hundred. Written only from OutputRollup, whenever one of the day's
    hours is recomputed."""

    day = models.DateField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["day", "task_type", "model", "decision", "status", "score_bucket"],
                name="output_day_rollup_key",
            ),
        ]
        indexes = [
            models.Index(fields=["task_type", "model", "day"], name="output_day_rollup_pair_day"),
        ]

    def __str__(self) -> str:
        return f"{self.day} {self.model} {self.decision}/{self.status}: {self.outputs}"


class ReviewRollup(models.Model):
    """Reviews decided in an hour, per task type, model, the output's decision, the slot's
    kind, the action and the output's score bucket (fine): the human approval rate by
    score, and the audits' estimate of the gate's error."""

    hour = models.DateTimeField()
    task_type = models.ForeignKey(TaskType, on_delete=models.CASCADE, related_name="+")
    model = models.CharField(max_length=200)
    decision = models.CharField(max_length=20)
    kind = models.CharField(max_length=20)
    is_audit = models.BooleanField()
    is_bulk = models.BooleanField()
    action = models.CharField(max_length=10)
    score_bucket = models.PositiveSmallIntegerField()
    reviews = models.PositiveIntegerField()
    # The sum of 1 / inclusion probability: audits are a sample, and weighting each by its
    # inverse gives unbiased rates for everything the gate delivered (Horvitz-Thompson).
    weight_sum = models.FloatField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=[
                    "hour",
                    "task_type",
                    "model",
                    "decision",
                    "kind",
                    "is_audit",
                    "is_bulk",
                    "action",
                    "score_bucket",
                ],
                name="review_rollup_key",
            ),
        ]
        indexes = [
            models.Index(fields=["task_type", "model", "hour"], name="review_rollup_pair_hour"),
        ]

    def __str__(self) -> str:
        return f"{self.hour:%Y-%m-%d %H}h {self.model} {self.kind} {self.action}: {self.reviews}"


class ScorerRollup(models.Model):
    """First reviews (held or audited, bulk decisions left out) decided in an hour, per task
    type, model, scorer, that scorer's score bucket (fine, as ReviewRollup's, plus
    TOP_SCORE_BUCKET), the action and, for simulated outputs, the true quality (blank
    otherwise): the calibration page compares the scorers' AUROC on the same outputs, the
    deciding one by its score and the others by their shadow scores, and the share of
    outputs each ties at the top."""

    hour = models.DateTimeField()
    task_type = models.ForeignKey(TaskType, on_delete=models.CASCADE, related_name="+")
    model = models.CharField(max_length=200)
    scorer = models.CharField(max_length=40)
    score_bucket = models.PositiveSmallIntegerField()
    action = models.CharField(max_length=10)
    truth = models.CharField(max_length=20, blank=True)
    reviews = models.PositiveIntegerField()
    # The sum of 1 / inclusion probability, as ReviewRollup's: held outputs are all
    # reviewed and delivered ones only sampled, so shares of all outputs are estimated with
    # these weights (Horvitz-Thompson). 0 in rows rolled up before it was counted, which
    # those shares leave out until ``rollups_rebuild`` recomputes them.
    weight_sum = models.FloatField(default=0.0)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["hour", "task_type", "model", "scorer", "score_bucket", "action", "truth"],
                name="scorer_rollup_key",
            ),
        ]
        indexes = [models.Index(fields=["hour"], name="scorer_rollup_hour")]

    def __str__(self) -> str:
        return f"{self.hour:%Y-%m-%d %H}h {self.scorer} {self.action}: {self.reviews}"


class ReviewerRollup(models.Model):
    """Decisions per reviewer in an hour, per task type, model and action, with how long
    each took from claim to decision."""

    hour = models.DateTimeField()
    task_type = models.ForeignKey(TaskType, on_delete=models.CASCADE, related_name="+")
    model = models.CharField(max_length=200)
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+"
    )
    action = models.CharField(max_length=10)
    is_bulk = models.BooleanField()
    # Index into DECISION_TIME_EDGES; NULL for bulk decisions, which have no claim.
    time_bucket = models.PositiveSmallIntegerField(null=True)
    reviews = models.PositiveIntegerField()
    decision_time_sum = models.DurationField(null=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=[
                    "hour",
                    "task_type",
                    "model",
                    "reviewer",
                    "action",
                    "is_bulk",
                    "time_bucket",
                ],
                # Bulk decisions' NULL time bucket is not checked for uniqueness here; the
                # refresh's GROUP BY makes one row per key all the same.
                name="reviewer_rollup_key",
            ),
        ]
        indexes = [
            models.Index(fields=["task_type", "model", "hour"], name="reviewer_rollup_pair_hour"),
        ]

    def __str__(self) -> str:
        return f"{self.hour:%Y-%m-%d %H}h reviewer {self.reviewer_id} {self.action}: {self.reviews}"


class QueueSnapshotMoment(models.Model):
    """When a queue snapshot was taken: a queue with nothing open leaves no QueueSnapshot
    rows, and is then a snapshot of zero items rather than a gap."""

    taken_at = models.DateTimeField(unique=True)

    def __str__(self) -> str:
        return f"queue snapshot at {self.taken_at:%Y-%m-%d %H:%M}"


class QueueSnapshot(models.Model):
    """The open queue at one moment, per task type, model and kind: taken every few
    minutes, so that its size over time is a read of these rows."""

    taken_at = models.DateTimeField()
    task_type = models.ForeignKey(TaskType, on_delete=models.CASCADE, related_name="+")
    model = models.CharField(max_length=200)
    kind = models.CharField(max_length=20)
    open_items = models.PositiveIntegerField()
    oldest_queued_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["taken_at", "task_type", "model", "kind"], name="queue_snapshot_key"
            ),
        ]
        indexes = [
            models.Index(fields=["task_type", "model", "taken_at"], name="queue_snapshot_pair"),
        ]

    def __str__(self) -> str:
        return f"{self.taken_at:%Y-%m-%d %H:%M} {self.model} {self.kind}: {self.open_items} open"


class QueueAgeSnapshot(models.Model):
    """The same moments' open items by age bucket, for the age distribution. Apart from
    QueueSnapshot so that a series over weeks reads one row per key, not one per bucket."""

    taken_at = models.DateTimeField()
    task_type = models.ForeignKey(TaskType, on_delete=models.CASCADE, related_name="+")
    model = models.CharField(max_length=200)
    kind = models.CharField(max_length=20)
    # Index into QUEUE_AGE_EDGES_HOURS.
    age_bucket = models.PositiveSmallIntegerField()
    open_items = models.PositiveIntegerField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["taken_at", "task_type", "model", "kind", "age_bucket"],
                name="queue_age_snapshot_key",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.taken_at:%Y-%m-%d %H:%M} {self.model} {self.kind} age {self.age_bucket}"


class RollupCheckpoint(models.Model):
    """What one refresh saw: the largest id of each table it reads new rows from. On
    PostgreSQL also when it read them (``read_at``, the database's clock) and when the
    oldest transaction then open in the database had begun (``oldest_open_since``; None if
    none was). A later refresh reads new rows from an older checkpoint on
    (``dashboard.rollups``), so that rows committed late are not missed."""

    taken_at = models.DateTimeField()
    output_id = models.BigIntegerField()
    review_id = models.BigIntegerField()
    audit_event_id = models.BigIntegerField()
    read_at = models.DateTimeField(null=True)
    oldest_open_since = models.DateTimeField(null=True)

    class Meta:
        ordering = ["-id"]

    def __str__(self) -> str:
        return f"checkpoint at {self.taken_at:%Y-%m-%d %H:%M:%S}"
