from django.conf import settings
from django.db import models


class SimulatedTruth(models.Model):
    """The hidden quality the simulator drew for one of its outputs.

    Kept in the learning app, apart from the output: the gate never imports this app, and
    no product page shows it. Learning evaluations and benchmarks read it to tell whether
    the gate got better.
    """

    class Truth(models.TextChoices):
        GOOD = "good", "Good"
        NEEDS_EDIT = "needs_edit", "Needs edit"
        BAD = "bad", "Bad"

    output = models.OneToOneField(
        "gating.Output", on_delete=models.CASCADE, primary_key=True, related_name="+"
    )
    truth = models.CharField(max_length=20, choices=Truth.choices)
    seed = models.BigIntegerField()

    def __str__(self) -> str:
        return f"output {self.output_id}: {self.truth}"


class CycleRun(models.Model):
    """One run of a learning cycle for one window: what it read, what it changed, how it ended.

    (kind, window_end) is unique, which is what makes a run idempotent: a duplicate beat,
    a retry or a redelivered message finds the succeeded run and changes nothing.
    """

    class Kind(models.TextChoices):
        VALIDATORS = "validators", "Validator weights"
        THRESHOLDS = "thresholds", "Thresholds"
        TIERS = "tiers", "Model tiers"
        AGREEMENT = "agreement", "Reviewer agreement"
        ALERTS = "alerts", "Alerts"

    class Status(models.TextChoices):
        RUNNING = "running", "Running"
        SUCCEEDED = "succeeded", "Succeeded"
        FAILED = "failed", "Failed"

    kind = models.CharField(max_length=20, choices=Kind.choices)
    window_start = models.DateTimeField()
    window_end = models.DateTimeField()
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.RUNNING)
    started_at = models.DateTimeField()
    finished_at = models.DateTimeField(null=True, blank=True)
    attempts = models.PositiveIntegerField(default=0)
    counts = models.JSONField(default=dict, blank=True)
    changes = models.JSONField(default=list, blank=True)
    error = models.TextField(blank=True)

    class Meta:
        ordering = ["-window_end", "kind"]
        constraints = [
            models.UniqueConstraint(fields=["kind", "window_end"], name="cycle_run_once_per_window")
        ]
        indexes = [models.Index(fields=["kind", "-window_end"], name="cycle_run_latest")]
        permissions = [("run_cycle", "Can run a learning cycle now")]

    def __str__(self) -> str:
        return f"{self.kind} cycle up to {self.window_end:%Y-%m-%d %H:%M} ({self.status})"


class ValidatorAssessment(models.Model):
    """A validator's accuracy, importance and weight change in one validators cycle."""

    cycle = models.ForeignKey(CycleRun, on_delete=models.CASCADE, related_name="validators")
    validator = models.ForeignKey(
        "gating.Validator", on_delete=models.CASCADE, related_name="assessments"
    )
    n = models.PositiveIntegerField()
    accuracy = models.FloatField(null=True)
    importance = models.FloatField(null=True)
    # The log odds ratio of error, failed against passed, in the cycle's logistic model;
    # None where the weight held (``held`` says why).
    coefficient = models.FloatField(null=True)
    held = models.CharField(max_length=200, blank=True)
    old_weight = models.FloatField()
    new_weight = models.FloatField()

    class Meta:
        ordering = ["cycle", "-importance"]
        constraints = [
            models.UniqueConstraint(fields=["cycle", "validator"], name="validator_once_per_cycle")
        ]

    def __str__(self) -> str:
        return f"{self.validator} in {self.cycle}"


class ThresholdChange(models.Model):
    """One threshold decision of a thresholds cycle (also when it held the value)."""

    class Which(models.TextChoices):
        REVIEW = "review", "Review"
        APPROVE = "approve", "Approve"

    class State(models.TextChoices):
        """The guarded policy's finding (docs/learning.md); blank for ADR-0003's rule."""

        CERTIFIED = "certified", "Certified"
        UNDERPOWERED = "underpowered", "Underpowered"
        NOT_ATTAINABLE = "not_attainable", "Not attainable"

    cycle = models.ForeignKey(CycleRun, on_delete=models.CASCADE, related_name="thresholds")
    task_type = models.ForeignKey(
        "gating.TaskType", on_delete=models.CASCADE, related_name="threshold_changes"
    )
    which = models.CharField(max_length=10, choices=Which.choices)
    policy = models.CharField(max_length=20)
    state = models.CharField(max_length=20, choices=State.choices, blank=True)
    old_value = models.FloatField()
    new_value = models.FloatField()
    n = models.PositiveIntegerField(default=0)
    not_approved = models.FloatField(null=True)
    bound = models.FloatField(null=True)
    reason = models.TextField()
    evidence = models.JSONField(default=dict)
    at = models.DateTimeField()

    class Meta:
        ordering = ["-at", "task_type", "which"]
        indexes = [models.Index(fields=["task_type", "which", "at"], name="threshold_history")]

    def __str__(self) -> str:
        return f"{self.task_type} {self.which}: {self.old_value} -> {self.new_value}"


class TierAssessment(models.Model):
    """One model on one task type in a tiers cycle."""

    cycle = models.ForeignKey(CycleRun, on_delete=models.CASCADE, related_name="tiers")
    task_type = models.ForeignKey(
        "gating.TaskType", on_delete=models.CASCADE, related_name="tier_assessments"
    )
    model = models.CharField(max_length=200)
    tier = models.CharField(max_length=50, blank=True)
    reviews = models.PositiveIntegerField()
    accuracy = models.FloatField(null=True)
    mean_score = models.FloatField(null=True)
    confidence = models.FloatField()
    adjusted_score = models.FloatField()
    rank = models.PositiveIntegerField()

    class Meta:
        ordering = ["cycle", "task_type", "rank"]

    def __str__(self) -> str:
        return f"{self.model} on {self.task_type}: #{self.rank}"


class ReviewerReliability(models.Model):
    """A reviewer's reliability and agreement in one agreement cycle."""

    cycle = models.ForeignKey(CycleRun, on_delete=models.CASCADE, related_name="reliabilities")
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="reliabilities"
    )
    n = models.PositiveIntegerField()
    reliability_raw = models.FloatField()
    reliability = models.FloatField()
    agreement_with_gate = models.FloatField(null=True)
    kappa_with_gate = models.FloatField(null=True)

    class Meta:
        ordering = ["cycle", "-reliability"]

    def __str__(self) -> str:
        return f"{self.reviewer}: {self.reliability:.2f}"


class PairAgreement(models.Model):
    """Two reviewers' agreement on the outputs both judged, in one agreement cycle."""

    cycle = models.ForeignKey(CycleRun, on_delete=models.CASCADE, related_name="pairs")
    first = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    second = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    n = models.PositiveIntegerField()
    raw_agreement = models.FloatField(null=True)
    kappa = models.FloatField(null=True)

    class Meta:
        ordering = ["cycle", "first", "second"]

    def __str__(self) -> str:
        return f"{self.first} / {self.second}: kappa {self.kappa}"


class Alert(models.Model):
    """A condition worth a lead's attention, open from when it was first seen until it
    clears. One open alert per (rule, subject) at a time."""

    class Rule(models.TextChoices):
        BACKLOG = "backlog", "Review backlog"
        THRESHOLD_DRIFT = "threshold_drift", "Threshold drift"
        VALIDATOR_ACCURACY = "validator_accuracy", "Validator accuracy drop"
        SCORE_SHIFT = "score_shift", "Score distribution shift"
        INSUFFICIENT_EVIDENCE = "insufficient_evidence", "Insufficient evidence"
        NOT_ATTAINABLE = "not_attainable", "Error budget not attainable"
        SCORING_FAULT = "scoring_fault", "Scoring fault"

    class State(models.TextChoices):
        OPEN = "open", "Open"
        ACKNOWLEDGED = "acknowledged", "Acknowledged"
        RESOLVED = "resolved", "Resolved"

    rule = models.CharField(max_length=30, choices=Rule.choices)
    subject = models.CharField(max_length=200)
    state = models.CharField(max_length=20, choices=State.choices, default=State.OPEN)
    message = models.TextField()
    value = models.FloatField(null=True)
    limit = models.FloatField(null=True)
    link = models.CharField(max_length=300, blank=True)
    first_seen = models.DateTimeField()
    last_seen = models.DateTimeField()
    acknowledged_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
    )
    acknowledged_at = models.DateTimeField(null=True, blank=True)
    note = models.TextField(blank=True)
    resolved_at = models.DateTimeField(null=True, blank=True)
    notified_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-first_seen"]
        constraints = [
            models.UniqueConstraint(
                fields=["rule", "subject"],
                condition=~models.Q(state="resolved"),
                name="alert_one_live_per_subject",
            )
        ]
        permissions = [("acknowledge_alert", "Can acknowledge an alert")]

    def __str__(self) -> str:
        return f"{self.get_rule_display()}: {self.subject} ({self.state})"


class Dataset(models.Model):
    """A named set of reviewed outputs for training and evals: a saved filter over the
    outputs whose label is settled, plus outputs added by hand (learning.datasets).

    ``filter`` is as learning.datasets.filter_clean leaves it; null takes the hand-added
    outputs only. ``fields`` are the row fields its versions carry (DATASET_FIELDS)."""

    name = models.CharField(max_length=100, unique=True)
    description = models.TextField(blank=True)
    filter = models.JSONField(null=True, blank=True)
    fields = models.JSONField(default=list)
    outputs = models.ManyToManyField(
        "gating.Output", through="DatasetOutput", related_name="+", blank=True
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, null=True, related_name="+"
    )
    created_at = models.DateTimeField()

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class DatasetOutput(models.Model):
    """An output a lead added to a dataset by hand."""

    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="hand_added")
    output = models.ForeignKey("gating.Output", on_delete=models.CASCADE, related_name="+")
    added_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, null=True, related_name="+"
    )
    added_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["dataset", "output"], name="dataset_output_once")
        ]

    def __str__(self) -> str:
        return f"output {self.output_id} in {self.dataset_id}"


class DatasetVersion(models.Model):
    """A snapshot of a dataset: its rows as they were when it was taken, never changed
    after. The filter and fields it was taken with are copied, as the dataset may change."""

    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="versions")
    number = models.PositiveIntegerField()
    filter = models.JSONField(null=True, blank=True)
    fields = models.JSONField(default=list)
    row_count = models.PositiveIntegerField(default=0)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, null=True, related_name="+"
    )
    created_at = models.DateTimeField()

    class Meta:
        ordering = ["dataset", "-number"]
        constraints = [
            models.UniqueConstraint(fields=["dataset", "number"], name="dataset_version_once")
        ]

    def __str__(self) -> str:
        return f"{self.dataset_id} v{self.number}"


class DatasetRow(models.Model):
    """One output in a dataset version, with the values it had at snapshot time. Only the
    version's fields are filled; the others stay null. No foreign key to the output: the
    row is a copy, and stays what it was whatever happens to the output later."""

    version = models.ForeignKey(DatasetVersion, on_delete=models.CASCADE, related_name="rows")
    # The export order (by output id), unique in the version: the index the exports read.
    position = models.PositiveIntegerField()
    output_id = models.BigIntegerField()
    external_id = models.CharField(max_length=200, null=True)  # noqa: DJ001
    task_type = models.CharField(max_length=100, null=True)  # noqa: DJ001
    model = models.CharField(max_length=200, null=True)  # noqa: DJ001
    input = models.TextField(null=True)  # noqa: DJ001
    original = models.TextField(null=True)  # noqa: DJ001
    corrected = models.TextField(null=True)  # noqa: DJ001
    label = models.CharField(max_length=20, null=True)  # noqa: DJ001
    reject_reason = models.CharField(max_length=50, null=True)  # noqa: DJ001
    agreement = models.CharField(max_length=20, null=True)  # noqa: DJ001
    scores = models.JSONField(null=True)
    weighted_label = models.FloatField(null=True)
    decided_at = models.DateTimeField(null=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["version", "position"], name="dataset_row_position")
        ]

    def __str__(self) -> str:
        return f"output {self.output_id} in version {self.version_id}"
