"""The review queue: enqueueing, claims under a lease, decisions exactly once.

Claims and decisions are short transactions. A claim locks the one row it takes with
``FOR UPDATE SKIP LOCKED`` (so concurrent claimers pass each other by instead of queueing)
and commits at once: nobody holds a row lock while a person reads. What keeps a claimed
item from everyone else afterwards is its lease, a timestamp, so a reviewer who walks away
leaves nothing locked: the next claim after the lease lapses simply takes the item.
"""

from __future__ import annotations

import hashlib
import random
from collections import Counter, defaultdict
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.contrib.auth.models import AbstractUser
from django.db import connection, transaction
from django.db.models import Count, Exists, F, OuterRef, Q, QuerySet
from django.db.models.lookups import In
from django.utils import timezone

from gating import bulk, rounds, rubrics, selectors, webhooks
from gating.audit import audit_record, audit_record_each
from gating.exceptions import DecisionInvalid, FieldInvalid, NotFound, ReviewConflict
from gating.models import AuditEvent, Output, Review, ReviewItem, Rubric, TaskModelStats, TaskType
from gating.rounds import Round
from gating.scoring import Decision

Kind = ReviewItem.Kind
Action = Review.Action
_FINAL_STATUS = {
    Action.APPROVE: Output.Status.APPROVED,
    Action.MODIFY: Output.Status.MODIFIED,
    Action.REJECT: Output.Status.REJECTED,
}


# --------------------------------------------------------------------------- enqueueing


def review_items_for(
    outputs: list[Output], *, rng: random.Random | None = None
) -> list[ReviewItem]:
    """The queue items that newly gated outputs need (unsaved).

    Every held output gets a review. A delivered output is sampled into an audit at its
    task type's rate for its decision, and the rate is stored as its inclusion probability.
    A withheld one (a would-be approval delivered as a warning) is sampled at the approved
    rate: it is what the approve threshold's certification reads.
    """
    draw = (rng or random).random
    items = []
    for output in outputs:
        task_type = output.task_type
        if output.decision == Decision.PENDING_REVIEW:
            kind, probability = Kind.REVIEW, 1.0
        else:
            probability = (
                task_type.audit_rate_approved
                if output.decision == Decision.APPROVED or output.withheld
                else task_type.audit_rate_warning
            )
            if not draw() < probability:
                continue
            kind = Kind.AUDIT
        items.append(
            ReviewItem.for_output(
                output,
                kind=kind,
                is_audit=kind == Kind.AUDIT,
                inclusion_probability=probability,
                needs_second_review=draw() < task_type.double_review_rate,
                queued_at=output.created_at,
            )
        )
    return items


def _follow_up_item(item: ReviewItem, kind: Kind, now) -> ReviewItem:
    """The next round's slot for the item's output (unsaved), in the first round's turn."""
    return ReviewItem.for_output(
        item.output,
        kind=kind,
        is_audit=item.is_audit,
        inclusion_probability=item.inclusion_probability,
        queued_at=now,
        turn_at=item.turn_at,
    )


# --------------------------------------------------------------------------- claims


def _lease() -> timedelta:
    return timedelta(seconds=settings.REVIEW_LEASE_SECONDS)


def claimable_items(
    items: QuerySet[ReviewItem], *, reviewer: AbstractUser, now, audits_first: bool = False
) -> QuerySet:
    """Open items that this reviewer may take now: the held outputs' rounds in turn
    (``ReviewItem.turn_at``: a follow-up round keeps its output's first turn), then the
    audits in turn; with ``audits_first``, the audits first. Held outputs go first past
    the audit share because a held output is one the gateway waits for, and audits drawn
    faster than the reviewers' capacity would otherwise push them back by days
    (docs/review-queue.md). An index serves each order in one scan, so a claim stays one
    locking query.

    Not: items under someone's live lease; items this reviewer skipped a moment ago; second
    reviews, adjudications or gold checks of an output this reviewer already judged;
    adjudications and gold checks, unless the reviewer is a lead.
    """
    claimable = (
        items.filter(state=ReviewItem.State.OPEN)
        .filter(Q(lease_expires_at__isnull=True) | Q(lease_expires_at__lte=now))
        .exclude(
            released_by=reviewer,
            released_at__gt=now - timedelta(seconds=settings.REVIEW_SKIP_COOLDOWN_SECONDS),
        )
        # The kind test sits inside the subquery, not beside it: "first review, or no review
        # of this output by this reviewer" is an OR that PostgreSQL answers by hashing every
        # review the reviewer ever made, on each claim that reaches a second review or an
        # adjudication (160-400 ms at 242,000 reviews, docs/performance.md); inside, it is
        # an anti-join that probes the review index for the few rows scanned.
        .exclude(
            Exists(
                Review.objects.filter(
                    In(OuterRef("kind"), list(ReviewItem.FOLLOW_UP_KINDS)),
                    output=OuterRef("output"),
                    reviewer=reviewer,
                )
            )
        )
    )
    if not selectors.may_adjudicate(reviewer):
        claimable = claimable.exclude(kind__in=ReviewItem.LEAD_KINDS)
    return claimable.order_by("-is_audit" if audits_first else "is_audit", "turn_at", "id")


# What a claimed item's representation reads, fetched with the claim itself.
CLAIM_RELATED = ("task_type", "output", "output__task_type")

# How far back a reviewer's claims count towards their audit share.
AUDIT_SHARE_WINDOW = timedelta(hours=1)


def audit_due(reviewer: AbstractUser, *, now) -> bool:
    """Whether the reviewer's next claim takes the first open audit in line: audits are under
    REVIEW_AUDIT_SHARE of their claims in the last AUDIT_SHARE_WINDOW, this one included.

    With share s, a reviewer's claims then go audit, held, held, held, audit, … (s = 0.25)
    for as long as audits are open: of every n claims, about s·n are audits. Counting this
    claim (the + 1) makes the rule defined on an empty hour (an audit first) and makes
    s = 1 mean always and s = 0 never.

    The count is the reviewer's own, not the whole team's:
    - A reviewer holds one item at a time, so their claims come one after another and each
      sees the one before it. Team-wide counts read by many claimers at once would all show
      the same shortfall, and every one of them would take an audit.
    - It reads the reviewer's last hour through ``item_claims_by_time`` (a few dozen rows
      at a person's pace), however busy the team is.
    - Each reviewer giving s of their claims to audits gives the team's capacity the same.
    A skip clears ``claimed_by``, so an audit skipped does not count as one taken; an item
    whose lapsed lease went to someone else counts for the one who holds it now. Whatever
    this answers, the claim itself stays ``FOR UPDATE SKIP LOCKED``: no item twice.
    """
    share = settings.REVIEW_AUDIT_SHARE
    if share in (0.0, 1.0):
        return share == 1.0
    recent = ReviewItem.objects.filter(
        claimed_by=reviewer, claimed_at__gt=now - AUDIT_SHARE_WINDOW, claimed_at__lte=now
    ).aggregate(claims=Count("id"), audits=Count("id", filter=Q(is_audit=True)))
    return recent["audits"] < share * (recent["claims"] + 1)


def item_held_by(reviewer: AbstractUser, *, now) -> ReviewItem | None:
    return (
        ReviewItem.objects.filter(
            state=ReviewItem.State.OPEN, claimed_by=reviewer, lease_expires_at__gt=now
        )
        .select_related(*CLAIM_RELATED)
        .order_by("claimed_at")
        .first()
    )


def item_claim(
    *, reviewer: AbstractUser, items: QuerySet[ReviewItem] | None = None, now=None
) -> ReviewItem | None:
    """Give the reviewer the first claimable item in line under a fresh lease, or None; the
    first audit in line while the reviewer is short of the audit share (``audit_due``).

    A reviewer holds one item at a time: while a lease is live, claiming again renews and
    returns that item, so a reloaded page or a double click never strands a claim.
    """
    now = now or timezone.now()
    items = ReviewItem.objects.all() if items is None else items
    with transaction.atomic():
        item = item_held_by(reviewer, now=now)
        previous_holder = item.claimed_by_id if item else None
        if item is None:
            audits_first = audit_due(reviewer, now=now)
            item = (
                claimable_items(items, reviewer=reviewer, now=now, audits_first=audits_first)
                .select_related(*CLAIM_RELATED)
                .select_for_update(skip_locked=True, of=("self",))
                .first()
            )
            if item is None:
                return None
            previous_holder = item.claimed_by_id
        item.claimed_by = reviewer
        item.claimed_at = now
        item.lease_expires_at = now + _lease()
        item.save(update_fields=["claimed_by", "claimed_at", "lease_expires_at"])
        audit_record(
            actor=reviewer,
            action=AuditEvent.Action.CLAIM,
            obj=item,
            at=now,
            before={"claimed_by": previous_holder},
            after={
                "claimed_by": reviewer.pk,
                "lease_expires_at": item.lease_expires_at.isoformat(),
            },
        )
    return item


def _held_item(item_id: int, reviewer: AbstractUser) -> ReviewItem:
    """Lock the item and check that the reviewer holds its claim (NotFound / ReviewConflict
    otherwise)."""
    item = (
        ReviewItem.objects.select_for_update(of=("self",))
        .select_related("output", "output__task_type")
        .filter(pk=item_id)
        .first()
    )
    if item is None:
        raise NotFound(f"There is no review item {item_id}.")
    if item.state != ReviewItem.State.OPEN:
        raise ReviewConflict(f"Item {item_id} is already decided.")
    if item.claimed_by_id != reviewer.pk:
        raise ReviewConflict(
            f"You do not hold the claim on item {item_id}: claim it first "
            "(its lease may have lapsed and gone to another reviewer)."
        )
    return item


def item_heartbeat(*, item_id: int, reviewer: AbstractUser, now=None) -> ReviewItem:
    """Renew the reviewer's lease while the review page is open."""
    now = now or timezone.now()
    with transaction.atomic():
        item = _held_item(item_id, reviewer)
        item.lease_expires_at = now + _lease()
        item.save(update_fields=["lease_expires_at"])
    return item


def item_release(*, item_id: int, reviewer: AbstractUser, now=None) -> ReviewItem:
    """Give the item back to the queue at once (skip)."""
    now = now or timezone.now()
    with transaction.atomic():
        item = _held_item(item_id, reviewer)
        item.claimed_by = None
        item.lease_expires_at = None
        item.released_by = reviewer
        item.released_at = now
        item.save(update_fields=["claimed_by", "lease_expires_at", "released_by", "released_at"])
        audit_record(
            actor=reviewer,
            action=AuditEvent.Action.RELEASE,
            obj=item,
            at=now,
            before={"claimed_by": reviewer.pk},
            after={"claimed_by": None},
        )
    return item


# --------------------------------------------------------------------------- decisions


@dataclass(frozen=True)
class DecisionInput:
    action: str
    edited_output: str | None = None
    reason: str = ""
    note: str = ""
    # A modify of taste: the output was fine (docs/review-queue.md).
    style_only: bool = False
    # The rubric's scores by dimension name (gating.rubrics), and the version the reviewer
    # was shown: a decision scored against an older version than the one in force is
    # refused rather than stored against dimensions it was not given for.
    scores: dict | None = None
    rubric_version: int | None = None


@dataclass(frozen=True)
class Scored:
    """A checked decision's rubric version and scores, as they are stored."""

    rubric: Rubric | None
    scores: dict


def _check_scores(decision: DecisionInput, rubric: Rubric | None) -> Scored:
    if rubric is None:
        if decision.scores:
            raise DecisionInvalid("scores", "This task type has no rubric: send no scores.")
        if decision.rubric_version is not None:
            raise DecisionInvalid("rubric_version", "This task type has no rubric.")
        return Scored(rubric=None, scores={})
    if decision.rubric_version is not None and decision.rubric_version != rubric.version:
        raise DecisionInvalid(
            "rubric_version",
            f"The rubric is now version {rubric.version}, not {decision.rubric_version}: "
            "reload the item and score it again.",
        )
    try:
        scores = rubrics.scores_clean(rubric.dimensions, decision.scores or {})
    except FieldInvalid as error:
        raise DecisionInvalid(error.field, str(error)) from None
    return Scored(rubric=rubric, scores=scores)


def _check_decision(decision: DecisionInput, original: str, rubric: Rubric | None) -> Scored:
    """Raise DecisionInvalid naming the field, before anything is written; the rubric's
    scores as they are stored otherwise."""
    if decision.action not in Action.values:
        raise DecisionInvalid("action", f"Must be one of {', '.join(Action.values)}.")
    if decision.action == Action.MODIFY:
        if decision.edited_output is None:
            raise DecisionInvalid("output", "Required when the action is modify.")
        if not decision.edited_output.strip():
            # An empty edit would be delivered as the final text: a reviewer who finds
            # nothing worth keeping rejects instead.
            raise DecisionInvalid("output", "Must not be empty; reject the output instead.")
        if decision.edited_output == original:
            raise DecisionInvalid("output", "Must differ from the original output to modify it.")
    elif decision.edited_output is not None:
        raise DecisionInvalid("output", "Only a modify decision takes an edited output.")
    if decision.style_only and decision.action != Action.MODIFY:
        raise DecisionInvalid("style_only", "Only a modify decision can be style only.")
    reasons = settings.REVIEW_REJECT_REASONS
    if decision.action == Action.REJECT and decision.reason not in reasons:
        raise DecisionInvalid("reason", f"A reject needs one of: {', '.join(reasons)}.")
    if decision.action != Action.REJECT and decision.reason:
        raise DecisionInvalid("reason", "Only a reject takes a reason code; use note instead.")
    return _check_scores(decision, rubric)


def reason_label(code: str) -> str:
    """A reject reason's code as people read it: "factual_error" is "Factual error". The codes
    (REVIEW_REJECT_REASONS) are what the API and webhooks carry; the pages show these."""
    words = code.replace("_", " ").strip()
    return words[:1].upper() + words[1:]


def item_decide(
    *, item_id: int, reviewer: AbstractUser, decision: DecisionInput, now=None
) -> Review:
    """Record the claim holder's decision on an open slot, exactly once, and move on:
    finalize the output, or queue its second review or adjudication."""
    now = now or timezone.now()
    with transaction.atomic():
        item = _held_item(item_id, reviewer)
        rubric = rubrics.rubric_in_force(item.task_type_id)
        scored = _check_decision(decision, item.output.output_text, rubric)
        (review,) = _reviews_store([(item, reviewer, decision, now, scored)])
    return review


@dataclass(frozen=True)
class RecordedDecision:
    """A decision taken in the past by ``reviewer`` on ``item`` (claimed and decided at
    ``decided_at``), for replaying history."""

    item: ReviewItem
    reviewer: AbstractUser
    decision: DecisionInput
    decided_at: datetime


def decisions_record(decisions: list[RecordedDecision]) -> list[Review]:
    """Record many decisions on open, unleased items at once, with what claiming and deciding
    each with ``item_decide`` would have left: reviews, audit entries, the next rounds,
    final outputs, the gate's counters and webhook events (no claim entries in the audit
    log, as there were no live claims).

    For replaying history (the simulator's older days), where a claim and a decision per
    item would take hours at a million outputs. The rules a live claim enforces are
    checked here: one decision per output per call (rounds follow each other), later rounds
    by someone who has not judged that output, adjudications and gold checks by leads. A
    broken rule raises DecisionInvalid and nothing is stored.
    """
    if not decisions:
        return []
    if len({d.item.output_id for d in decisions}) != len(decisions):
        raise DecisionInvalid("items", "At most one decision per output in one call.")
    with transaction.atomic():
        ids = [d.item.pk for d in decisions]
        items = {
            i.pk: i
            for i in ReviewItem.objects.select_for_update(of=("self",))
            .select_related("output")
            .filter(pk__in=ids, state=ReviewItem.State.OPEN, lease_expires_at__isnull=True)
        }
        if missing := [pk for pk in ids if pk not in items]:
            raise ReviewConflict(f"Items not open or under a lease: {missing[:10]}.")
        judged = set(
            Review.objects.filter(output_id__in=[d.item.output_id for d in decisions]).values_list(
                "output_id", "reviewer_id"
            )
        )
        rubric_of = rubrics.rubrics_in_force(i.task_type_id for i in items.values())
        scored = {}
        for d in decisions:
            item = items[d.item.pk]
            scored[item.pk] = _check_decision(
                d.decision, item.output.output_text, rubric_of.get(item.task_type_id)
            )
            if (item.output_id, d.reviewer.pk) in judged:
                raise DecisionInvalid(
                    "reviewer", f"{d.reviewer} already judged output {item.output_id}."
                )
            if item.kind in ReviewItem.LEAD_KINDS and not selectors.may_adjudicate(d.reviewer):
                raise DecisionInvalid(
                    "reviewer",
                    f"{d.reviewer} may not take this {item.get_kind_display().lower()}: "
                    "only a lead may.",
                )
        return _reviews_store(
            [
                (items[d.item.pk], d.reviewer, d.decision, d.decided_at, scored[d.item.pk])
                for d in decisions
            ]
        )


def _reviews_store(decided: list[tuple]) -> list[Review]:
    """Store checked (item, reviewer, decision, at, scored) decisions on locked open items,
    and close each slot with its review (``_slots_close``)."""
    reviews = Review.objects.bulk_create(
        (
            Review(
                item=item,
                output=item.output,
                reviewer=reviewer,
                action=decision.action,
                edited_output=decision.edited_output,
                style_only=decision.style_only,
                reason=decision.reason,
                note=decision.note,
                decided_at=at,
                rubric=scored.rubric,
                scores=scored.scores,
            )
            for item, reviewer, decision, at, scored in decided
        ),
        batch_size=5000,
    )
    _slots_close(
        [
            Closing(item=item, at=at, review=review)
            for (item, _, _, at, _), review in zip(decided, reviews, strict=True)
        ]
    )
    return reviews


# --------------------------------------------------------------------------- the one transition


@dataclass(frozen=True)
class Closing:
    """An open slot closing at ``at``: decided by ``review`` (a reviewer's verdict or a lead's
    bulk decision), or relieved without one (``review`` None: backlog relief)."""

    item: ReviewItem
    at: datetime
    review: Review | None = None

    @property
    def verdict(self) -> bool:
        """A person's independent judgment: what the next round, the gate's counters and the
        learning cycles read. A bulk decision is one lead's call over a whole set."""
        return self.review is not None and not self.review.is_bulk


def _slots_close(closings: list[Closing]) -> None:
    """The queue's one transition: open slots close, and each output moves on to its next
    round or its final state, with the audit log, the gate's counters and webhooks.

    Every way a slot closes comes here: a live decision and a replayed one, a bulk decision
    and backlog relief. The caller has locked the open items (and, for a bulk decision,
    their pending outputs) and stored the reviews.
    """
    for closing in closings:
        item, review = closing.item, closing.review
        item.state = ReviewItem.State.DECIDED if review else ReviewItem.State.RELIEVED
        item.decided_at = closing.at
        item.lease_expires_at = None
        if review and item.claimed_by_id != review.reviewer_id:
            # Replayed history or a bulk decision: the claim is implicit, taken at the
            # moment of deciding.
            item.claimed_by_id = review.reviewer_id
            item.claimed_at = closing.at
    fields = ["state", "decided_at", "lease_expires_at", "claimed_by", "claimed_at"]
    bulk.update_rows([c.item for c in closings], fields)
    _closings_audit(closings)
    _advance(closings)


def _closings_audit(closings: list[Closing]) -> None:
    """One audit entry per closing: a verdict on its review, a bulk decision or a relief on
    the output it finalized."""
    verdict_actions = (AuditEvent.Action.DECISION, AuditEvent.Action.ADJUDICATION)
    for action in verdict_actions:
        audit_record_each(
            action=action,
            rows=[
                (
                    c.review.reviewer,
                    c.at,
                    c.review,
                    {"item": c.item.pk, "kind": c.item.kind, "output_status": c.item.output.status},
                    _review_summary(c.review),
                )
                for c in closings
                if c.verdict
                and (c.item.kind == Kind.ADJUDICATION) == (action == AuditEvent.Action.ADJUDICATION)
            ],
        )
    audit_record_each(
        action=AuditEvent.Action.BULK_DECISION,
        rows=[
            (
                c.review.reviewer,
                c.at,
                c.item.output,
                {"status": Output.Status.PENDING},
                {"status": _final_status(c), "is_bulk": True, "reason": c.review.note},
            )
            for c in closings
            if c.review is not None and c.review.is_bulk
        ],
    )
    audit_record_each(
        action=AuditEvent.Action.BACKLOG_RELIEF,
        rows=[
            (
                None,
                c.at,
                c.item.output,
                {"status": Output.Status.PENDING},
                {"status": _final_status(c), "decision": c.item.output.decision},
            )
            for c in closings
            if c.review is None
        ],
    )


def _review_summary(review: Review) -> dict:
    return {
        "action": review.action,
        "edited_output": review.edited_output,
        "style_only": review.style_only,
        "reason": review.reason,
        "note": review.note,
        "is_bulk": review.is_bulk,
        **rubrics.review_scores(review),
    }


def _first_reviews(output_ids: list[int]) -> dict[int, Review]:
    first: dict[int, Review] = {}
    for review in Review.objects.filter(
        output_id__in=output_ids, item__kind__in=ReviewItem.FIRST_KINDS
    ).order_by("decided_at", "id"):
        first.setdefault(review.output_id, review)
    return first


def gold_drawn(output_id: int) -> bool:
    """Whether an audited output gets a gold check once its audit is settled: a share
    REVIEW_GOLD_SHARE of them, by a keyed hash of the output's id. The hash reads nothing
    of the output or its verdicts, so the gold checks are a random sample of the audits;
    and it takes no random draw, so a seeded simulation draws what it drew without them."""
    digest = hashlib.blake2b(str(output_id).encode(), key=b"gold", digest_size=8).digest()
    return int.from_bytes(digest) < settings.REVIEW_GOLD_SHARE * 2**64


def _advance(closings: list[Closing]) -> None:
    """Queue the next round for each verdict that needs one; the rest are final, a bulk
    decision and a relief always. A settled audit drawn for a gold check gets one more
    round, and a gold check ends with its verdict: the audit's settled it already."""
    follow_ups: list[ReviewItem] = []
    finals: list[Closing] = []
    seconds = [c.item.output_id for c in closings if c.verdict and c.item.kind == Kind.SECOND]
    first = _first_reviews(seconds) if seconds else {}
    for closing in closings:
        item, review, now = closing.item, closing.review, closing.at
        if item.kind == Kind.GOLD:
            continue
        if not closing.verdict:
            finals.append(closing)
            continue
        following = rounds.round_after(
            Round(item.kind),
            needs_second_review=item.needs_second_review,
            finds_fault=review.finds_fault,
            agrees_with_first=(
                first[item.output_id].action == review.action if item.kind == Kind.SECOND else None
            ),
        )
        if following is not None:
            follow_ups.append(_follow_up_item(item, following, now))
        elif item.kind == Kind.SECOND:
            # Two agreeing judgments: the first one's wording stands for a modify.
            finals.append(Closing(item=item, at=now, review=first[item.output_id]))
        else:
            finals.append(closing)
    follow_ups += [
        _follow_up_item(c.item, Kind.GOLD, c.at)
        for c in finals
        if c.verdict and c.item.is_audit and gold_drawn(c.item.output_id)
    ]
    ReviewItem.objects.bulk_create(follow_ups, batch_size=5000)
    _finalize(finals)


def _final_status(closing: Closing) -> str:
    """What the output becomes: what its review decided; a relieved one, delivered as a
    warning, approved."""
    if closing.review is None:
        return Output.Status.APPROVED
    return _FINAL_STATUS[closing.review.action]


def _finalize(finals: list[Closing]) -> None:
    """Give each held output its final status and tell the webhooks; an audit leaves its
    (delivered) output as it is, and only a reject is news."""
    delivered: list[tuple[Output, Review | None]] = []
    audit_rejects: list[tuple[Output, Review]] = []
    for closing in finals:
        output, review = closing.item.output, closing.review
        if closing.item.is_audit:
            if review.action == Action.REJECT:
                audit_rejects.append((output, review))
            continue
        output.finalize(
            _final_status(closing),
            at=closing.at,
            edited_text=review.edited_output if review else None,
        )
        delivered.append((output, review))
    bulk.update_rows([o for o, _ in delivered], ["decision", *Output.FINAL_FIELDS])
    for event_type, pairs in (
        (webhooks.OUTPUT_DECIDED, delivered),
        (webhooks.OUTPUT_AUDIT_REJECTED, audit_rejects),
    ):
        if pairs:
            webhooks.webhook_events_emit(outputs_with_reviews=pairs, event_type=event_type)
    _count_human_reviews(
        [(c.item.output, c.review.action == Action.APPROVE) for c in finals if c.verdict]
    )


def _count_human_reviews(finals: list[tuple[Output, bool]]) -> None:
    """Keep the gate's counters current, so that scoring never counts history."""
    per_task_type: Counter[int] = Counter()
    per_pair: dict[tuple[int, str], list[int]] = defaultdict(lambda: [0, 0])
    for output, approved_unchanged in finals:
        per_task_type[output.task_type_id] += 1
        counts = per_pair[(output.task_type_id, output.model)]
        counts[0] += 1
        counts[1] += int(approved_unchanged)
    # In a fixed order, so that two batches deciding at once cannot deadlock on these rows.
    for task_type_id, n in sorted(per_task_type.items()):
        TaskType.objects.filter(pk=task_type_id).update(reviewed_count=F("reviewed_count") + n)
    if per_pair:
        _pair_counts_add([(*pair, *counts) for pair, counts in sorted(per_pair.items())])


def _pair_counts_add(rows: list[tuple[int, str, int, int]]) -> None:
    """Add (task type id, model, reviewed, approved unchanged) to each pair's counters,
    creating the pairs seen for the first time: one upsert rather than a query or two per
    pair. Its rows are inserted, and so locked, in the order given."""
    quote = connection.ops.quote_name
    table = quote(TaskModelStats._meta.db_table)
    columns = ["task_type_id", "model", "reviewed_count", "approved_unchanged_count"]
    counters = [quote(c) for c in columns[2:]]
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {table} ({', '.join(quote(c) for c in columns)}) "
            f"VALUES {', '.join(['(%s, %s, %s, %s)'] * len(rows))} "
            f"ON CONFLICT ({quote('task_type_id')}, {quote('model')}) DO UPDATE SET "
            + ", ".join(f"{c} = {table}.{c} + EXCLUDED.{c}" for c in counters),
            [value for row in rows for value in row],
        )


# --------------------------------------------------------------------------- backlog relief

RELIEF_MARGIN = 1.0


def backlog_relieve(*, task_type: TaskType, now, rng: random.Random | None = None) -> int:
    """Deliver, as warnings, the held outputs of ``task_type`` still waiting for their first
    review and scoring within RELIEF_MARGIN below its review threshold; returns how many.

    For a backlog that has lasted a week (the alerts cycle calls this, when the task type
    allows it). Items under a live lease are left to their reviewer. Each released output
    is in the audit log, and audit-sampled at the task type's warning rate like any warning.
    """
    draw = (rng or random).random
    if task_type.in_cold_start:
        return 0
    with transaction.atomic():
        slots = list(
            ReviewItem.objects.select_for_update(of=("self",), skip_locked=True)
            .select_related("output")
            .filter(
                task_type=task_type,
                kind=Kind.REVIEW,
                state=ReviewItem.State.OPEN,
                score__gte=task_type.review_threshold - RELIEF_MARGIN,
                # Only what the thresholds held: not what cold start or a new model's
                # raised threshold held from higher up.
                score__lt=task_type.review_threshold,
                output__status=Output.Status.PENDING,
            )
            .filter(Q(lease_expires_at__isnull=True) | Q(lease_expires_at__lte=now))
        )
        if not slots:
            return 0
        for slot in slots:
            slot.output.decision = Decision.WARNING.value
        _slots_close([Closing(item=slot, at=now) for slot in slots])
        rate = task_type.audit_rate_warning
        ReviewItem.objects.bulk_create(
            ReviewItem.for_output(
                slot.output,
                kind=Kind.AUDIT,
                is_audit=True,
                inclusion_probability=rate,
                queued_at=now,
            )
            for slot in slots
            if draw() < rate
        )
    return len(slots)


# --------------------------------------------------------------------------- bulk


def bulk_decide(
    *, lead: AbstractUser, items: QuerySet[ReviewItem], action: str, reason: str, now=None
) -> int:
    """Decide every held output with an open item in ``items`` at once; returns how many.

    For when a lead knows the answer for a whole set (a broken model, say). Each closed slot
    gets a Review marked ``is_bulk``, which the learning cycles and the gate's counters leave
    out: these are one person's call, not independent judgments. Audits are left alone.
    """
    if action not in (Action.APPROVE, Action.REJECT):
        raise DecisionInvalid("action", "A bulk decision is approve or reject.")
    if not reason.strip():
        raise DecisionInvalid("reason", "A bulk decision needs a reason.")
    now = now or timezone.now()
    with transaction.atomic():
        output_ids = set(
            items.filter(state=ReviewItem.State.OPEN, is_audit=False).values_list(
                "output_id", flat=True
            )
        )
        if len(output_ids) > settings.BULK_DECISION_LIMIT:
            raise DecisionInvalid(
                "filters",
                f"{len(output_ids)} outputs match; a bulk decision takes at most "
                f"{settings.BULK_DECISION_LIMIT}. Narrow the filters.",
            )
        slots = list(
            ReviewItem.objects.select_for_update(of=("self",))
            .filter(output_id__in=output_ids, state=ReviewItem.State.OPEN, is_audit=False)
            .order_by("id")
        )
        outputs = {
            o.pk: o
            for o in Output.objects.select_for_update(of=("self",))
            .select_related("task_type")
            .filter(pk__in={s.output_id for s in slots}, status=Output.Status.PENDING)
        }
        slots = [s for s in slots if s.output_id in outputs]
        reviews = Review.objects.bulk_create(
            Review(
                item=slot,
                output_id=slot.output_id,
                reviewer=lead,
                action=action,
                reason="bulk",
                note=reason,
                is_bulk=True,
                decided_at=now,
            )
            for slot in slots
        )
        for slot in slots:
            # The outputs locked above, so that each is finalized as it was read under lock.
            slot.output = outputs[slot.output_id]
        _slots_close(
            [
                Closing(item=slot, at=now, review=review)
                for slot, review in zip(slots, reviews, strict=True)
            ]
        )
    return len(outputs)
