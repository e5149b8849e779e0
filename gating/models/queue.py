"""The review queue: one row per review slot, and one decision per slot."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from gating import bulk
from gating.models.outputs import Output, TaskType
from gating.rounds import Round


class ReviewItem(models.Model):
    """A review slot: one human judgment that Gatehouse is waiting for.

    The filter columns (task type, model, score) are copied from the output so that a claim
    reads one table through one partial index, whatever the queue's size.
    """

    class Kind(models.TextChoices):
        # The rounds and their order are gating.rounds'.
        REVIEW = Round.REVIEW.value, "Review"
        AUDIT = Round.AUDIT.value, "Audit"
        SECOND = Round.SECOND.value, "Second review"
        ADJUDICATION = Round.ADJUDICATION.value, "Adjudication"
        GOLD = Round.GOLD.value, "Gold check"

    FIRST_KINDS = (Kind.REVIEW, Kind.AUDIT)
    # The rounds after an output's first: nobody who judged the output may take one.
    FOLLOW_UP_KINDS = (Kind.SECOND, Kind.ADJUDICATION, Kind.GOLD)
    # The rounds only a lead may take.
    LEAD_KINDS = (Kind.ADJUDICATION, Kind.GOLD)

    class State(models.TextChoices):
        OPEN = "open", "Open"
        DECIDED = "decided", "Decided"
        # Delivered without review by backlog relief (docs/learning.md).
        RELIEVED = "relieved", "Released by backlog relief"

    output = models.ForeignKey(Output, on_delete=models.CASCADE, related_name="review_items")
    kind = models.CharField(max_length=20, choices=Kind.choices)
    # Whether this slot judges a delivered output (an audit, or the second review or
    # adjudication of one) rather than one the gate held back.
    is_audit = models.BooleanField(default=False)
    # The probability that this output was sampled into the queue: 1 for held outputs,
    # the audit rate for audits. Weighting by its inverse gives unbiased error estimates.
    inclusion_probability = models.FloatField(default=1.0)
    # Drawn when the slot is created, so a reviewer cannot tell from the page.
    needs_second_review = models.BooleanField(default=False)
    state = models.CharField(max_length=10, choices=State.choices, default=State.OPEN)

    task_type = models.ForeignKey(TaskType, on_delete=models.PROTECT, related_name="+")
    model = models.CharField(max_length=200)
    score = models.FloatField()
    # When this slot was created: its age, and what the queue's history is rebuilt from.
    queued_at = models.DateTimeField()
    # Its place in line: when its output first entered the queue. A second review or an
    # adjudication keeps the first round's turn, so under a backlog it is taken up next
    # rather than behind everything queued since, and an output's judgment (a held one's
    # release, an audit's evidence) is not left half done for days. Null only on slots
    # decided before turns were kept; every open slot has one.
    turn_at = models.DateTimeField(null=True, blank=True)

    claimed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="claimed_items",
    )
    claimed_at = models.DateTimeField(null=True, blank=True)
    lease_expires_at = models.DateTimeField(null=True, blank=True)
    # A skip keeps the item away from the one who skipped it for a while.
    released_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    released_at = models.DateTimeField(null=True, blank=True)
    decided_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        permissions = [
            ("review_items", "Can claim and decide review items"),
            ("adjudicate_items", "Can adjudicate disagreeing reviews"),
            ("bulk_decide", "Can decide a filtered set of held outputs at once"),
        ]
        indexes = [
            # The claim's scan: the open item whose turn came first. Partial, so decided
            # history, however long, never slows it down.
            models.Index(
                fields=["turn_at", "id"], name="item_open_by_turn", condition=Q(state="open")
            ),
            models.Index(
                fields=["task_type", "turn_at", "id"],
                name="item_open_task_by_turn",
                condition=Q(state="open"),
            ),
            # The first adjudications in line, which are few among many open items: without
            # this, finding them means reading every open item.
            models.Index(
                fields=["turn_at", "id"],
                name="item_open_adjud_by_turn",
                condition=Q(state="open", kind="adjudication"),
            ),
            models.Index(
                fields=["claimed_by", "lease_expires_at"],
                name="item_open_claims",
                condition=Q(state="open") & Q(claimed_by__isnull=False),
            ),
            # The claim's scan while the reviewer is short of the audit share: the first open
            # audit in line, then (with none left to them) the first item, in one index scan.
            models.Index(
                fields=["-is_audit", "turn_at", "id"],
                name="item_open_audits_by_turn",
                condition=Q(state="open"),
            ),
            # The claim's scan otherwise: held outputs in line before any audit (they keep
            # their turn however many audits are drawn), then the audits, in one index scan.
            models.Index(
                fields=["is_audit", "turn_at", "id"],
                name="item_open_held_by_turn",
                condition=Q(state="open"),
            ),
            # A reviewer's claims of the last hour, which the audit share counts on each claim.
            models.Index(
                fields=["claimed_by", "claimed_at"],
                name="item_claims_by_time",
                condition=Q(claimed_by__isnull=False),
            ),
            # The outputs drawn in a window (held ones and audits), open or decided, that
            # selectors.draw_coverage counts for the learning cycles: every first round.
            models.Index(
                fields=["queued_at"],
                name="item_draws_by_time",
                condition=Q(kind__in=["review", "audit"]),
            ),
        ]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} of output {self.output_id}"

    @classmethod
    def for_output(
        cls,
        output: Output,
        *,
        kind: str,
        is_audit: bool,
        inclusion_probability: float,
        queued_at,
        turn_at=None,
        needs_second_review: bool = False,
    ) -> ReviewItem:
        """A new slot (unsaved) for ``output``, with its filter columns copied from it; its
        turn is ``turn_at``, or ``queued_at`` for an output's first round.

        Built without ``Model.__init__`` (``bulk.unsaved``): the gate builds one for every
        output it holds, and the constructor's per-field work costs more than the rest of
        enqueueing. ``output_id`` is the output's id as it is now: for outputs not yet
        saved, whoever inserts them sets their items' once they have ids.
        """
        item = bulk.unsaved(
            cls,
            {
                "output_id": output.pk,
                "kind": kind,
                "is_audit": is_audit,
                "inclusion_probability": inclusion_probability,
                "needs_second_review": needs_second_review,
                "task_type_id": output.task_type_id,
                "model": output.model,
                "score": output.score,
                "queued_at": queued_at,
                "turn_at": queued_at if turn_at is None else turn_at,
            },
        )
        cls.output.field.set_cached_value(item, output)
        return item


class Review(models.Model):
    """One decision on one review slot. The unique slot is what makes it exactly once."""

    class Action(models.TextChoices):
        APPROVE = "approve", "Approve"
        MODIFY = "modify", "Modify"
        REJECT = "reject", "Reject"

    item = models.OneToOneField(ReviewItem, on_delete=models.CASCADE, related_name="review")
    output = models.ForeignKey(Output, on_delete=models.CASCADE, related_name="reviews")
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="reviews"
    )
    action = models.CharField(max_length=10, choices=Action.choices)
    # NULL unless the action is modify.
    edited_output = models.TextField(null=True, blank=True)  # noqa: DJ001
    reason = models.CharField(max_length=50, blank=True)
    note = models.TextField(blank=True)
    # A modification the reviewer marked as taste: the output was fine as it was, so the
    # learning cycles do not count it as an error. Only ever set on a modify.
    style_only = models.BooleanField(default=False)
    # Bulk decisions are one lead's call on many outputs, not independent judgments: the
    # learning cycles leave them out.
    is_bulk = models.BooleanField(default=False)
    decided_at = models.DateTimeField()
    # The rubric version the reviewer scored against, and the scores by dimension name as
    # gating.rubrics.scores_clean left them; null and empty where the task type had no
    # rubric, and for bulk decisions.
    rubric = models.ForeignKey(
        "gating.Rubric", on_delete=models.PROTECT, null=True, blank=True, related_name="reviews"
    )
    scores = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["-decided_at", "-id"]
        indexes = [
            models.Index(fields=["output", "reviewer"], name="review_output_reviewer"),
            models.Index(fields=["reviewer", "decided_at"], name="review_reviewer_time"),
            models.Index(fields=["decided_at"], name="review_time"),
        ]
        constraints = [
            models.CheckConstraint(
                name="review_modify_has_text",
                condition=Q(action="modify", edited_output__isnull=False)
                | (~Q(action="modify") & Q(edited_output__isnull=True)),
            ),
            models.CheckConstraint(
                name="review_style_only_is_modify",
                condition=Q(style_only=False) | Q(action="modify"),
            ),
        ]

    def __str__(self) -> str:
        return f"{self.action} by {self.reviewer} on output {self.output_id}"

    @property
    def finds_fault(self) -> bool:
        """The reviewer found the output wrong: a reject, or a modify not marked style only."""
        return self.action == self.Action.REJECT or (
            self.action == self.Action.MODIFY and not self.style_only
        )
