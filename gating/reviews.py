"""The review queue: enqueueing, claims under a lease, decisions exactly once.

Claims and decisions are short transactions. A claim locks the one row it takes with
``FOR UPDATE SKIP LOCKED`` (so concurrent claimers pass each other by instead of queueing)
and commits at once: nobody holds a row lock while a person reads. What keeps a claimed
item from everyone else afterwards is its lease, a timestamp, so a reviewer who walks away
leaves nothing locked: the next claim after the lease lapses simply takes the item.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.contrib.auth.models import AbstractUser
from django.db import transaction
from django.db.models import Exists, F, OuterRef, Q, QuerySet
from django.shortcuts import get_object_or_404
from django.utils import timezone

from gating import webhooks
from gating.audit import audit_record, audit_record_many
from gating.exceptions import DecisionInvalid, ReviewConflict
from gating.models import AuditEvent, Output, Review, ReviewItem, TaskModelStats, TaskType
from gating.scoring import Decision

Kind = ReviewItem.Kind
Action = Review.Action
_FIRST_KINDS = (Kind.REVIEW, Kind.AUDIT)
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
                if output.decision == Decision.APPROVED
                else task_type.audit_rate_warning
            )
            if not draw() < probability:
                continue
            kind = Kind.AUDIT
        items.append(
            ReviewItem(
                output=output,
                kind=kind,
                is_audit=kind == Kind.AUDIT,
                inclusion_probability=probability,
                needs_second_review=draw() < task_type.double_review_rate,
                task_type_id=output.task_type_id,
                model=output.model,
                score=output.score,
                queued_at=output.created_at,
            )
        )
    return items


def _follow_up_item(item: ReviewItem, kind: Kind, now) -> ReviewItem:
    return ReviewItem.objects.create(
        output=item.output,
        kind=kind,
        is_audit=item.is_audit,
        inclusion_probability=item.inclusion_probability,
        task_type_id=item.task_type_id,
        model=item.model,
        score=item.score,
        queued_at=now,
    )


# --------------------------------------------------------------------------- claims


def _lease() -> timedelta:
    return timedelta(seconds=settings.REVIEW_LEASE_SECONDS)


def claimable_items(items: QuerySet[ReviewItem], *, reviewer: AbstractUser, now) -> QuerySet:
    """Open items that this reviewer may take now, oldest first.

    Not: items under someone's live lease; items this reviewer skipped a moment ago; second
    reviews or adjudications of an output this reviewer already judged; adjudications,
    unless the reviewer is a lead.
    """
    claimable = (
        items.filter(state=ReviewItem.State.OPEN)
        .filter(Q(lease_expires_at__isnull=True) | Q(lease_expires_at__lte=now))
        .exclude(
            released_by=reviewer,
            released_at__gt=now - timedelta(seconds=settings.REVIEW_SKIP_COOLDOWN_SECONDS),
        )
        .exclude(
            Q(kind__in=[Kind.SECOND, Kind.ADJUDICATION])
            & Exists(Review.objects.filter(output=OuterRef("output"), reviewer=reviewer))
        )
    )
    if not reviewer.has_perm("gating.adjudicate_items"):
        claimable = claimable.exclude(kind=Kind.ADJUDICATION)
    return claimable.order_by("queued_at", "id")


# What a claimed item's representation reads, fetched with the claim itself.
_CLAIM_RELATED = ("task_type", "output", "output__task_type")


def item_held_by(reviewer: AbstractUser, *, now) -> ReviewItem | None:
    return (
        ReviewItem.objects.filter(
            state=ReviewItem.State.OPEN, claimed_by=reviewer, lease_expires_at__gt=now
        )
        .select_related(*_CLAIM_RELATED)
        .order_by("claimed_at")
        .first()
    )


def item_claim(
    *, reviewer: AbstractUser, items: QuerySet[ReviewItem] | None = None, now=None
) -> ReviewItem | None:
    """Give the reviewer the oldest claimable item under a fresh lease, or None.

    A reviewer holds one item at a time: while a lease is live, claiming again renews and
    returns that item, so a reloaded page or a double click never strands a claim.
    """
    now = now or timezone.now()
    items = ReviewItem.objects.all() if items is None else items
    with transaction.atomic():
        item = item_held_by(reviewer, now=now)
        previous_holder = item.claimed_by_id if item else None
        if item is None:
            item = (
                claimable_items(items, reviewer=reviewer, now=now)
                .select_related(*_CLAIM_RELATED)
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
    """Lock the item and check that the reviewer holds its claim (404 / 409 otherwise)."""
    item = get_object_or_404(
        ReviewItem.objects.select_for_update(of=("self",)).select_related(
            "output", "output__task_type"
        ),
        pk=item_id,
    )
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


def _check_decision(decision: DecisionInput, original: str) -> None:
    """Raise DecisionInvalid naming the field, before anything is written."""
    if decision.action not in Action.values:
        raise DecisionInvalid("action", f"Must be one of {', '.join(Action.values)}.")
    if decision.action == Action.MODIFY:
        if decision.edited_output is None:
            raise DecisionInvalid("output", "Required when the action is modify.")
        if decision.edited_output == original:
            raise DecisionInvalid("output", "Must differ from the original output to modify it.")
    elif decision.edited_output is not None:
        raise DecisionInvalid("output", "Only a modify decision takes an edited output.")
    reasons = settings.REVIEW_REJECT_REASONS
    if decision.action == Action.REJECT and decision.reason not in reasons:
        raise DecisionInvalid("reason", f"A reject needs one of: {', '.join(reasons)}.")
    if decision.action != Action.REJECT and decision.reason:
        raise DecisionInvalid("reason", "Only a reject takes a reason code; use note instead.")


def item_decide(
    *, item_id: int, reviewer: AbstractUser, decision: DecisionInput, now=None
) -> Review:
    """Record the claim holder's decision on an open slot, exactly once, and move on:
    finalize the output, or queue its second review or adjudication."""
    now = now or timezone.now()
    with transaction.atomic():
        item = _held_item(item_id, reviewer)
        _check_decision(decision, item.output.output_text)
        review = Review.objects.create(
            item=item,
            output=item.output,
            reviewer=reviewer,
            action=decision.action,
            edited_output=decision.edited_output,
            reason=decision.reason,
            note=decision.note,
            decided_at=now,
        )
        item.state = ReviewItem.State.DECIDED
        item.decided_at = now
        item.lease_expires_at = None
        item.save(update_fields=["state", "decided_at", "lease_expires_at"])
        audit_record(
            actor=reviewer,
            action=AuditEvent.Action.ADJUDICATION
            if item.kind == Kind.ADJUDICATION
            else AuditEvent.Action.DECISION,
            obj=review,
            at=now,
            before={"item": item.pk, "kind": item.kind, "output_status": item.output.status},
            after=_review_summary(review),
        )
        _advance(item, review, now)
    return review


def _review_summary(review: Review) -> dict:
    return {
        "action": review.action,
        "edited_output": review.edited_output,
        "reason": review.reason,
        "note": review.note,
        "is_bulk": review.is_bulk,
    }


def _first_review(item: ReviewItem) -> Review:
    return (
        Review.objects.filter(
            output=item.output, item__kind__in=_FIRST_KINDS, item__is_audit=item.is_audit
        )
        .order_by("decided_at", "id")
        .first()
    )


def _advance(item: ReviewItem, review: Review, now) -> None:
    if item.kind in _FIRST_KINDS:
        if item.needs_second_review:
            _follow_up_item(item, Kind.SECOND, now)
        else:
            _finalize(item, review, now)
    elif item.kind == Kind.SECOND:
        first = _first_review(item)
        if first.action == review.action:
            # Two agreeing judgments: the first one's wording stands for a modify.
            _finalize(item, first, now)
        else:
            _follow_up_item(item, Kind.ADJUDICATION, now)
    else:
        _finalize(item, review, now)


def _finalize(item: ReviewItem, review: Review, now) -> None:
    output = item.output
    if not item.is_audit:
        output.status = _FINAL_STATUS[review.action]
        output.final_output_text = {
            Action.APPROVE: output.output_text,
            Action.MODIFY: review.edited_output,
            Action.REJECT: None,
        }[review.action]
        output.decided_at = now
        output.save(update_fields=["status", "final_output_text", "decided_at"])
        webhooks.webhook_events_emit(
            outputs_with_reviews=[(output, review)], event_type=webhooks.OUTPUT_DECIDED
        )
    elif review.action == Action.REJECT:
        webhooks.webhook_events_emit(
            outputs_with_reviews=[(output, review)], event_type=webhooks.OUTPUT_AUDIT_REJECTED
        )
    _count_human_review(output, approved_unchanged=review.action == Action.APPROVE)


def _count_human_review(output: Output, *, approved_unchanged: bool) -> None:
    """Keep the gate's counters current, so that scoring never counts history."""
    TaskType.objects.filter(pk=output.task_type_id).update(reviewed_count=F("reviewed_count") + 1)
    increments = {
        "reviewed_count": F("reviewed_count") + 1,
        "approved_unchanged_count": F("approved_unchanged_count") + int(approved_unchanged),
    }
    pair = TaskModelStats.objects.filter(task_type_id=output.task_type_id, model=output.model)
    if not pair.update(**increments):
        TaskModelStats.objects.bulk_create(
            [TaskModelStats(task_type_id=output.task_type_id, model=output.model)],
            ignore_conflicts=True,
        )
        pair.update(**increments)


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
        ReviewItem.objects.filter(pk__in=[s.pk for s in slots]).update(
            state=ReviewItem.State.DECIDED, decided_at=now, lease_expires_at=None
        )
        for output in outputs.values():
            output.status = _FINAL_STATUS[action]
            output.final_output_text = output.output_text if action == Action.APPROVE else None
            output.decided_at = now
        Output.objects.bulk_update(
            outputs.values(), ["status", "final_output_text", "decided_at"], batch_size=1000
        )
        review_by_output = {r.output_id: r for r in reviews}
        audit_record_many(
            actor=lead,
            action=AuditEvent.Action.BULK_DECISION,
            at=now,
            rows=[
                (
                    output,
                    {"status": Output.Status.PENDING},
                    {"status": output.status, "is_bulk": True, "reason": reason},
                )
                for output in outputs.values()
            ],
        )
        webhooks.webhook_events_emit(
            outputs_with_reviews=[(o, review_by_output[o.pk]) for o in outputs.values()],
            event_type=webhooks.OUTPUT_DECIDED,
        )
    return len(outputs)
