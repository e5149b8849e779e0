"""Every way a held output's slot closes leaves the same footprint: the slot closed with no
lease, the output final, one audit entry, one webhook delivery, and the gate's counters
moved only by an independent verdict. The four ways are a live decision, a replayed one,
a lead's bulk decision and backlog relief (``gating.reviews._slots_close``)."""

from datetime import UTC, datetime

import pytest

from gating import reviews
from gating.models import (
    AuditEvent,
    Output,
    ReviewItem,
    TaskModelStats,
    TaskType,
    Webhook,
    WebhookDelivery,
)
from gating.reviews import DecisionInput, RecordedDecision
from gating.roles import Role
from gating.webhooks import OUTPUT_DECIDED

AT = datetime(2025, 3, 4, 10, 30, tzinfo=UTC)
Action = AuditEvent.Action
CLOSING_ACTIONS = [
    Action.DECISION,
    Action.ADJUDICATION,
    Action.BULK_DECISION,
    Action.BACKLOG_RELIEF,
]


def _live(output, user_in):
    reviewer = user_in(Role.REVIEWER)
    item = reviews.item_claim(reviewer=reviewer, now=AT)
    reviews.item_decide(
        item_id=item.pk, reviewer=reviewer, decision=DecisionInput("approve"), now=AT
    )
    return reviewer, AuditEvent.Action.DECISION


def _replayed(output, user_in):
    reviewer = user_in(Role.REVIEWER)
    item = ReviewItem.objects.get(output=output)
    reviews.decisions_record([RecordedDecision(item, reviewer, DecisionInput("approve"), AT)])
    return reviewer, AuditEvent.Action.DECISION


def _bulk(output, user_in):
    lead = user_in(Role.LEAD)
    reviews.bulk_decide(
        lead=lead, items=ReviewItem.objects.all(), action="approve", reason="known good", now=AT
    )
    return lead, AuditEvent.Action.BULK_DECISION


def _relieved(output, user_in):
    TaskType.objects.filter(name="held").update(cold_start_reviews=0, review_threshold=4.0)
    Output.objects.filter(pk=output.pk).update(score=3.5)
    ReviewItem.objects.filter(output=output).update(score=3.5)
    reviews.backlog_relieve(task_type=TaskType.objects.get(name="held"), now=AT)
    return None, AuditEvent.Action.BACKLOG_RELIEF


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("close", "counted"),
    [(_live, True), (_replayed, True), (_bulk, False), (_relieved, False)],
    ids=["live", "replayed", "bulk", "relief"],
)
def test_every_way_of_closing_leaves_the_same_footprint(
    held_outputs, gateway, user_in, close, counted
):
    Webhook.objects.create(owner=gateway, url="https://hooks.example.com/gh", secret="s")
    (output,) = held_outputs(1)

    closer, action = close(output, user_in)

    slot = ReviewItem.objects.get(output=output, kind=ReviewItem.Kind.REVIEW)
    closed_as = ReviewItem.State.RELIEVED if closer is None else ReviewItem.State.DECIDED
    assert (slot.state, slot.decided_at, slot.lease_expires_at) == (closed_as, AT, None)
    # Who closed it is on the slot, claimed or not beforehand.
    assert slot.claimed_by_id == (closer.pk if closer else None)
    output.refresh_from_db()
    assert (output.status, output.final_output_text, output.decided_at) == (
        Output.Status.APPROVED,
        output.output_text,
        AT,
    )
    closings = AuditEvent.objects.filter(action__in=CLOSING_ACTIONS).order_by("id")
    assert [e.action for e in closings] == [action]
    assert list(WebhookDelivery.objects.values_list("event_type", flat=True)) == [OUTPUT_DECIDED]
    task_type = TaskType.objects.get(name="held")
    assert task_type.reviewed_count == int(counted)
    pair = TaskModelStats.objects.filter(task_type=task_type).first()
    assert (pair.reviewed_count if pair else 0) == int(counted)
