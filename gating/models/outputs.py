from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import F, Q

from gating import scorers
from gating.scoring import ApproveRequires, Decision, GatePolicy, Guarantee

# Validators whose failure on an output that requires fact checking triggers the
# hallucination penalty, unless an admin says otherwise for a task type.
DEFAULT_FACT_CHECK_VALIDATORS = frozenset({"facts"})


class TaskType(models.Model):
    # The gate's settings' words, ranges and choices are declared in gating.gate_settings,
    # which the settings service checks edits against and every form is derived from. The
    # constraints below keep the database itself from holding what would break the gate.
    name = models.CharField(max_length=100, unique=True)
    review_threshold = models.FloatField(default=4.0)
    approve_threshold = models.FloatField(default=7.0)
    cold_start_reviews = models.PositiveIntegerField(default=20)
    cold_start_margin = models.FloatField(default=1.0)
    # Review sampling: audits of delivered outputs measure the gate's error above the review
    # threshold; second reviews measure reviewers against each other.
    audit_rate_approved = models.FloatField(default=0.02)
    audit_rate_warning = models.FloatField(default=0.10)
    double_review_rate = models.FloatField(default=0.10)
    audit_rate_budget = models.FloatField(default=0.25)

    # How the learning cycles move the thresholds (docs/learning.md).
    class ThresholdPolicy(models.TextChoices):
        GUARDED = "guarded", "Guarded (bounded error)"
        ADR0003 = "adr0003", "ADR-0003 rule as written"

    threshold_policy = models.CharField(
        max_length=20, choices=ThresholdPolicy.choices, default=ThresholdPolicy.GUARDED
    )
    alpha_approve = models.FloatField(default=0.05)
    alpha_bad = models.FloatField(default=0.01)
    alpha_warning = models.FloatField(default=0.25)
    delta = models.FloatField(default=0.05)
    review_threshold_pinned = models.BooleanField(default=False)
    approve_threshold_pinned = models.BooleanField(default=False)
    scorer = models.CharField(max_length=40, choices=scorers.choices, default=scorers.DEFAULT)
    # Scores are capped at 10, so no threshold turns approval off on its own: outputs that
    # reach the cap pass a threshold of 10.
    auto_approve = models.BooleanField(default=True)
    # "estimate" for new task types: at a team's scale the uncertified 7.0 approves outputs
    # of which up to a quarter need an edit or are bad, and certification takes weeks
    # (docs/gate.md, bench.team_scale).
    approve_requires = models.CharField(
        max_length=20,
        choices=[(r.value, r.value) for r in ApproveRequires],
        default=ApproveRequires.ESTIMATE,
    )
    # Written only by the thresholds cycle (and reset when a person moves what it certified):
    # with the guarantee "estimated", the lowest score the estimates approve.
    estimated_approve_threshold = models.FloatField(null=True, blank=True, editable=False)
    # Written only by the thresholds cycle (and reset when a person moves what it certified).
    approve_guarantee = models.CharField(
        max_length=20,
        choices=[(g.value, g.value) for g in Guarantee],
        default=Guarantee.NONE,
        editable=False,
    )
    backlog_relief = models.BooleanField(default=False)
    shared = models.BooleanField(
        default=False,
        help_text="Every gateway sees it through the API. Otherwise a gateway sees only the "
        "task types it has sent outputs of.",
    )
    recommended_tier = models.CharField(max_length=50, blank=True, editable=False)
    # Maintained by the review service so that the gate never counts history.
    reviewed_count = models.PositiveIntegerField(default=0, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.CheckConstraint(
                name="task_type_thresholds_ordered",
                condition=Q(review_threshold__gte=0)
                & Q(approve_threshold__lte=10)
                & Q(review_threshold__lt=F("approve_threshold")),
            ),
            models.CheckConstraint(
                name="task_type_rates_in_unit_interval",
                condition=Q(audit_rate_approved__gte=0, audit_rate_approved__lte=1)
                & Q(audit_rate_warning__gte=0, audit_rate_warning__lte=1)
                & Q(double_review_rate__gte=0, double_review_rate__lte=1),
            ),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def in_cold_start(self) -> bool:
        return self.reviewed_count < self.cold_start_reviews

    @property
    def gate_policy(self) -> GatePolicy:
        """The gate's settings of this task type as the gate reads them."""
        return GatePolicy(
            review_threshold=self.review_threshold,
            approve_threshold=self.approve_threshold,
            cold_start_reviews=self.cold_start_reviews,
            cold_start_margin=self.cold_start_margin,
            task_type_reviewed=self.reviewed_count,
            auto_approve=self.auto_approve,
            approve_requires=ApproveRequires(self.approve_requires),
            approve_guarantee=Guarantee(self.approve_guarantee),
            estimated_approve=self.estimated_approve_threshold,
        )


# A validator's weight counts only against the others' (a share of the validators' 8
# points), so a ratio of 100:1 is more than any task type needs, and the ceiling keeps their
# sum far from overflowing to a NaN score. 0 leaves the validator out of the score.
WEIGHT_RANGE = (0.0, 100.0)


class TaskTypeUse(models.Model):
    """A gateway has sent outputs of this task type, which lets it see the task type
    (gating.selectors.task_types_visible_to). Recorded by the ingest, once per pair: asking
    the outputs which task types a gateway used would read millions of rows."""

    gateway = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="task_type_uses"
    )
    task_type = models.ForeignKey(TaskType, on_delete=models.CASCADE, related_name="uses")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["gateway", "task_type"], name="task_type_use_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.task_type} used by {self.gateway}"


class Validator(models.Model):
    task_type = models.ForeignKey(TaskType, on_delete=models.CASCADE, related_name="validators")
    name = models.CharField(max_length=100)
    weight = models.FloatField(
        default=1.0,
        validators=[MinValueValidator(WEIGHT_RANGE[0]), MaxValueValidator(WEIGHT_RANGE[1])],
    )
    is_fact_check = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["task_type", "name"]
        constraints = [
            models.UniqueConstraint(fields=["task_type", "name"], name="validator_unique_per_task"),
            # The writer's rule (services.weight_problem), kept by the database too: on
            # PostgreSQL NaN compares above every number, so it fails this check as well.
            models.CheckConstraint(
                name="validator_weight_in_range",
                condition=Q(weight__gte=WEIGHT_RANGE[0], weight__lte=WEIGHT_RANGE[1]),
            ),
        ]

    def __str__(self) -> str:
        return f"{self.task_type.name}/{self.name}"


class TaskModelStats(models.Model):
    """Human-review counters per (task type, model), kept current by the review service."""

    task_type = models.ForeignKey(TaskType, on_delete=models.CASCADE, related_name="model_stats")
    model = models.CharField(max_length=200)
    reviewed_count = models.PositiveIntegerField(default=0)
    approved_unchanged_count = models.PositiveIntegerField(default=0)

    class Meta:
        verbose_name_plural = "task model stats"
        constraints = [
            models.UniqueConstraint(fields=["task_type", "model"], name="stats_unique_pair"),
        ]

    def __str__(self) -> str:
        return f"{self.task_type.name}/{self.model}"


class Output(models.Model):
    class Status(models.TextChoices):
        PENDING = "pending", "Pending review"
        APPROVED = "approved", "Approved"
        MODIFIED = "modified", "Modified"
        REJECTED = "rejected", "Rejected"

    # No index of their own for source and task_type: the unique (source, external_id) and
    # the (task_type, created_at) indexes lead with them, and every index costs each insert.
    source = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="outputs", db_index=False
    )
    external_id = models.CharField(max_length=200)
    # sha256 of the canonical request, to tell an idempotent replay from a conflict.
    request_hash = models.CharField(max_length=64)
    task_type = models.ForeignKey(
        TaskType, on_delete=models.PROTECT, related_name="outputs", db_index=False
    )
    model = models.CharField(max_length=200)
    tier = models.CharField(max_length=50, blank=True)
    input_text = models.TextField()
    output_text = models.TextField()
    input_clarity = models.FloatField()
    coherence = models.FloatField()
    requires_fact_check = models.BooleanField(default=False)
    # [{"name", "passed", "detail"}] as the gateway reported them, in its order.
    validator_results = models.JSONField(default=list)
    evidence = models.JSONField(null=True, blank=True)
    provenance = models.JSONField(null=True, blank=True)
    metadata = models.JSONField(default=dict, blank=True)

    score = models.FloatField()
    base_score = models.FloatField()
    decision = models.CharField(max_length=20, choices=[(d.value, d.value) for d in Decision])
    review_threshold = models.FloatField()
    approve_threshold = models.FloatField()
    # A would-be approval that a task type's switch delivered as a warning
    # (scoring.GateResult.withheld): audited at the approved rate, in a stratum of its own.
    withheld = models.BooleanField(default=False)
    # What stood behind the approve threshold when the output was gated.
    approve_guarantee = models.CharField(
        max_length=20, choices=[(g.value, g.value) for g in Guarantee], default=Guarantee.NONE
    )
    scorer = models.CharField(max_length=40)
    impacts = models.JSONField(default=list)
    reasons = models.JSONField(default=list)
    # The interval scorer's bounds on 0-10, whether it scored the output or shadowed it:
    # the queue's filter for uncertain outputs reads them.
    interval_lower = models.FloatField(null=True, blank=True)
    interval_upper = models.FloatField(null=True, blank=True)
    # {scorer name: {"version", "score", "level", "interval"}} for every scorer other than
    # the one that decided, where the payload had its inputs: the calibration page compares
    # them on the same outputs.
    shadow_scores = models.JSONField(default=dict, blank=True)

    status = models.CharField(max_length=20, choices=Status.choices)
    # NULL until decided: an empty string is a valid decided text.
    final_output_text = models.TextField(null=True, blank=True)  # noqa: DJ001
    created_at = models.DateTimeField(db_index=True)
    decided_at = models.DateTimeField(null=True, blank=True)
    # The W3C trace of the request that stored it (32 lowercase hex digits, from the
    # gateway's traceparent or the gate's own span), empty when there was none: how a trace
    # in the gateway's tool and the output find each other.
    trace_id = models.CharField(max_length=32, blank=True, default="")

    class Meta:
        ordering = ["-id"]
        permissions = [("view_all_outputs", "Can view every gateway's outputs")]
        constraints = [
            models.UniqueConstraint(
                fields=["source", "external_id"], name="output_unique_external"
            ),
            # The gate holds what it cannot score at 0 (scoring.fault_result), so a stored
            # score is always a number on the scale; NaN fails the check on PostgreSQL.
            models.CheckConstraint(
                name="output_scores_on_scale",
                condition=Q(score__gte=0, score__lte=10, base_score__gte=0, base_score__lte=10),
            ),
        ]
        indexes = [
            models.Index(fields=["task_type", "created_at"], name="output_task_created"),
            models.Index(fields=["task_type", "model", "created_at"], name="output_pair_created"),
            models.Index(fields=["decision", "created_at"], name="output_decision_created"),
            models.Index(fields=["status", "created_at"], name="output_status_created"),
        ]

    def __str__(self) -> str:
        return f"{self.external_id} ({self.decision})"

    # What finalize sets, for saving many finalized outputs in one statement.
    FINAL_FIELDS = ("status", "final_output_text", "decided_at")

    def finalize(self, status: str, *, at, edited_text: str | None = None) -> list[str]:
        """Give the output its final status, decided at ``at``, and the text delivered
        with it: its own when approved, the edit when modified, none when rejected.

        Returns the fields set, for the caller to save: the queue finalizes outputs in
        batches and saves each batch at once (``bulk.update_rows``).
        """
        delivered = {
            self.Status.APPROVED: self.output_text,
            self.Status.MODIFIED: edited_text,
            self.Status.REJECTED: None,
        }
        if status not in delivered:
            raise ValueError(f"{status!r} is not a final status.")
        if (status == self.Status.MODIFIED) != (edited_text is not None):
            raise ValueError("An edited text goes with a modified status, and only with it.")
        self.status = status
        self.final_output_text = delivered[status]
        self.decided_at = at
        return list(self.FINAL_FIELDS)


class ApiToken(models.Model):
    """A bearer token. Only its sha256 is stored; the token itself is shown once."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens"
    )
    name = models.CharField(max_length=100, blank=True)
    key_hash = models.CharField(max_length=64, unique=True)
    prefix = models.CharField(
        max_length=12, help_text="The token's first characters, to tell tokens apart."
    )
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"{self.prefix}… ({self.user})"
