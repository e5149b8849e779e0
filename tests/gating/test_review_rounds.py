"""Second reviews, adjudication, audit samples and bulk decisions."""

import random
from datetime import timedelta

import pytest

from gating import reviews
from gating.models import (
    AuditEvent,
    Output,
    Review,
    ReviewItem,
    TaskModelStats,
    TaskType,
    Webhook,
    WebhookDelivery,
)
from gating.reviews import DecisionInput
from gating.roles import Role
from gating.scoring import Decision
from tests.factories import valid_submission

pytestmark = pytest.mark.django_db


@pytest.fixture
def reviewers(user_in):
    return [user_in(Role.REVIEWER) for _ in range(2)]


@pytest.fixture
def lead(user_in):
    return user_in(Role.LEAD)


def claim_and_decide(user, action="approve", **fields):
    item = reviews.item_claim(reviewer=user)
    assert item is not None, f"{user} found nothing to claim"
    reviews.item_decide(
        item_id=item.pk, reviewer=user, decision=DecisionInput(action=action, **fields)
    )
    return item


def test_two_agreeing_reviews_are_final(held_outputs, reviewers):
    output = held_outputs(1, double_review_rate=1.0)[0]
    first, second = reviewers

    claim_and_decide(first, "approve")
    assert Output.objects.get(pk=output.pk).status == "pending"
    # The first reviewer never gets the second review of the same output.
    assert reviews.item_claim(reviewer=first) is None

    item = reviews.item_claim(reviewer=second)
    assert item.kind == "second"
    reviews.item_decide(item_id=item.pk, reviewer=second, decision=DecisionInput("approve"))

    assert Output.objects.get(pk=output.pk).status == "approved"
    # One output, one human-review count, however many slots it took.
    assert TaskType.objects.get(name="held").reviewed_count == 1


def test_a_second_review_is_queued_at_the_first_decision_like_its_first_round(
    held_outputs, reviewers
):
    output = held_outputs(1, double_review_rate=1.0)[0]
    first = reviews.item_claim(reviewer=reviewers[0])
    decided_at = first.claimed_at + timedelta(minutes=3)
    reviews.item_decide(
        item_id=first.pk, reviewer=reviewers[0], decision=DecisionInput("approve"), now=decided_at
    )

    second = ReviewItem.objects.get(output=output, kind="second")

    columns = ("task_type_id", "model", "score", "is_audit", "inclusion_probability")
    assert [getattr(second, c) for c in columns] == [getattr(first, c) for c in columns]
    assert (second.state, second.queued_at, second.needs_second_review) == (
        "open",
        decided_at,
        False,
    )
    # Its place in line is its output's: the first round's.
    assert second.turn_at == first.turn_at == first.queued_at


def test_follow_up_rounds_keep_their_outputs_turn(held_outputs, reviewers, lead):
    # A is held first, B and C after it. A's second review and then its adjudication are
    # queued only after B and C arrived, yet are taken before them: under a backlog, an
    # output half judged is not put behind everything held since.
    (a,) = held_outputs(1, double_review_rate=1.0)
    later = held_outputs(2, task_type="later")
    first = claim_and_decide(reviewers[0], "approve")
    assert first.output_id == a.pk

    second = claim_and_decide(reviewers[1], "reject", reason="other")
    assert (second.output_id, second.kind) == (a.pk, "second")
    adjudication = reviews.item_claim(reviewer=lead)
    assert (adjudication.output_id, adjudication.kind) == (a.pk, "adjudication")
    assert second.queued_at > max(o.created_at for o in later)
    assert adjudication.turn_at == second.turn_at == first.queued_at


def test_a_second_reviewer_is_not_shown_the_first_decision(held_outputs, reviewers, client_for):
    held_outputs(1, double_review_rate=1.0)
    claim_and_decide(reviewers[0], "reject", reason="other", note="looks wrong")

    body = client_for(reviewers[1]).post("/api/v1/queue/claim/").json()

    assert body["kind"] == "second"
    assert body["prior_reviews"] == []
    assert "looks wrong" not in str(body)


def test_disagreement_goes_to_a_lead_who_sees_both_and_decides(
    held_outputs, reviewers, lead, client_for
):
    output = held_outputs(1, double_review_rate=1.0)[0]
    claim_and_decide(reviewers[0], "approve")
    claim_and_decide(reviewers[1], "reject", reason="other")

    assert Output.objects.get(pk=output.pk).status == "pending"
    assert reviews.item_claim(reviewer=reviewers[0]) is None  # reviewers cannot adjudicate

    body = client_for(lead).post("/api/v1/queue/claim/").json()
    assert body["kind"] == "adjudication"
    assert [r["action"] for r in body["prior_reviews"]] == ["approve", "reject"]

    edited = "Revenue grew about 4%."
    reviews.item_decide(
        item_id=body["id"], reviewer=lead, decision=DecisionInput("modify", edited_output=edited)
    )
    output.refresh_from_db()
    assert (output.status, output.final_output_text) == ("modified", edited)
    assert AuditEvent.objects.filter(action="adjudication", actor=lead).count() == 1


def test_an_audit_samples_delivered_outputs_at_the_task_types_rate():
    task_type = TaskType(name="t", audit_rate_approved=0.1, audit_rate_warning=0.5)
    task_type.double_review_rate = 0.0
    outputs = [
        Output(task_type=task_type, decision=d, model="m", score=8.0, created_at=None)
        for d in [Decision.APPROVED] * 20_000 + [Decision.WARNING] * 20_000
    ]

    items = reviews.review_items_for(outputs, rng=random.Random(3))

    approved = [i for i in items if i.output.decision == Decision.APPROVED]
    warned = [i for i in items if i.output.decision == Decision.WARNING]
    # Binomial(20,000, p): within 4 standard deviations of n·p.
    assert abs(len(approved) - 2_000) < 4 * (20_000 * 0.1 * 0.9) ** 0.5
    assert abs(len(warned) - 10_000) < 4 * (20_000 * 0.5 * 0.5) ** 0.5
    assert {i.inclusion_probability for i in approved} == {0.1}
    assert {i.inclusion_probability for i in warned} == {0.5}
    assert {i.kind for i in items} == {"audit"}


def test_every_held_output_is_queued_with_probability_one():
    task_type = TaskType(name="t", audit_rate_approved=0.0, audit_rate_warning=0.0)
    outputs = [
        Output(task_type=task_type, decision=Decision.PENDING_REVIEW, score=1.0, model="m")
        for _ in range(50)
    ]
    items = reviews.review_items_for(outputs, rng=random.Random(1))
    assert len(items) == 50
    assert {(i.kind, i.inclusion_probability) for i in items} == {("review", 1.0)}


def test_a_rejected_audit_leaves_the_delivery_alone_and_tells_the_gateway(
    gateway, reviewers, held_outputs
):
    from gating import services
    from tests.factories import TaskTypeFactory

    TaskTypeFactory(
        name="warm", audit_rate_approved=1.0, audit_rate_warning=1.0, double_review_rate=0.0
    )
    Webhook.objects.create(owner=gateway, url="https://hooks.example.com/gh", secret="s")
    output = services.output_ingest(
        source=gateway, submission=valid_submission(task_type="warm")
    ).output
    assert output.status == "approved"  # delivered at once

    item = claim_and_decide(reviewers[0], "reject", reason="other")
    assert item.kind == "audit" and item.is_audit
    # A fault found by an audit is checked by a second reviewer before it stands.
    assert not WebhookDelivery.objects.exists()
    second = claim_and_decide(reviewers[1], "reject", reason="other")
    assert second.kind == "second" and second.is_audit

    output.refresh_from_db()
    assert (output.status, output.final_output_text) == ("approved", output.output_text)
    delivery = WebhookDelivery.objects.get()
    assert delivery.event_type == "output.audit_rejected"
    assert delivery.payload["output"]["id"] == output.pk


@pytest.fixture
def audited(gateway):
    """An output delivered at once and drawn for audit (never for a drawn second review)."""
    from gating import services
    from tests.factories import TaskTypeFactory

    TaskTypeFactory(
        name="warm", audit_rate_approved=1.0, audit_rate_warning=1.0, double_review_rate=0.0
    )
    output = services.output_ingest(
        source=gateway, submission=valid_submission(task_type="warm")
    ).output
    assert output.status == "approved"
    assert not ReviewItem.objects.get(output=output).needs_second_review
    return output


def _rounds(output) -> list[tuple[str, str]]:
    return list(
        ReviewItem.objects.filter(output=output).order_by("id").values_list("kind", "state")
    )


@pytest.mark.parametrize(
    ("action", "fields"),
    [("reject", {"reason": "other"}), ("modify", {"edited_output": "Better."})],
)
def test_an_audit_that_finds_fault_gets_a_second_review(audited, reviewers, action, fields):
    claim_and_decide(reviewers[0], action, **fields)
    assert _rounds(audited) == [("audit", "decided"), ("second", "open")]
    # The second reviewer disagrees: the lead adjudicates, as for any second review.
    claim_and_decide(reviewers[1], "approve")
    assert _rounds(audited) == [
        ("audit", "decided"),
        ("second", "decided"),
        ("adjudication", "open"),
    ]
    second = ReviewItem.objects.get(output=audited, kind="second")
    assert (second.is_audit, second.inclusion_probability) == (True, 1.0)


@pytest.mark.parametrize(
    ("action", "fields"),
    [("approve", {}), ("modify", {"edited_output": "Nicer.", "style_only": True})],
)
def test_an_audit_that_finds_no_fault_is_final(audited, reviewers, action, fields):
    before = TaskType.objects.get(name="warm").reviewed_count
    claim_and_decide(reviewers[0], action, **fields)
    assert _rounds(audited) == [("audit", "decided")]
    assert TaskType.objects.get(name="warm").reviewed_count == before + 1


def test_a_held_output_rejected_once_is_final_unless_drawn(held_outputs, reviewers):
    # What the gate held was never delivered: a reject decides it, as before.
    output = held_outputs(1, double_review_rate=0.0)[0]
    claim_and_decide(reviewers[0], "reject", reason="other")
    assert _rounds(output) == [("review", "decided")]
    assert Output.objects.get(pk=output.pk).status == "rejected"


def test_a_lead_bulk_rejects_a_broken_model(held_outputs, lead, client_for, reviewers):
    broken = held_outputs(3, model="broken")
    fine = held_outputs(2, model="fine")
    api = client_for(lead)

    preview = api.post(
        "/api/v1/queue/bulk-decision/?model=broken",
        {"action": "reject", "reason": "model returned garbage", "dry_run": True},
        format="json",
    )
    assert preview.json() == {"outputs": 3, "dry_run": True}
    assert not Review.objects.exists()

    response = api.post(
        "/api/v1/queue/bulk-decision/?model=broken",
        {"action": "reject", "reason": "model returned garbage"},
        format="json",
    )

    assert response.json() == {"outputs": 3, "dry_run": False}
    assert set(Output.objects.filter(status="rejected").values_list("pk", flat=True)) == {
        o.pk for o in broken
    }
    assert all(r.is_bulk for r in Review.objects.all())
    assert set(ReviewItem.objects.filter(state="open").values_list("output_id", flat=True)) == {
        o.pk for o in fine
    }
    # Not an independent judgment: the gate's counters do not move.
    assert TaskType.objects.get(name="held").reviewed_count == 0
    assert not TaskModelStats.objects.filter(model="broken").exists()
    events = AuditEvent.objects.filter(action="bulk_decision")
    assert {e.object_id for e in events} == {str(o.pk) for o in broken}
    assert {e.after["reason"] for e in events} == {"model returned garbage"}


def test_a_bulk_decision_needs_a_reason_and_a_lead(held_outputs, lead, reviewers, client_for):
    held_outputs(1)
    no_reason = client_for(lead).post(
        "/api/v1/queue/bulk-decision/", {"action": "reject", "reason": ""}, format="json"
    )
    assert no_reason.status_code == 400 and "reason" in no_reason.json()
    modify = client_for(lead).post(
        "/api/v1/queue/bulk-decision/", {"action": "modify", "reason": "x"}, format="json"
    )
    assert modify.status_code == 400 and "action" in modify.json()
    as_reviewer = client_for(reviewers[0]).post(
        "/api/v1/queue/bulk-decision/", {"action": "reject", "reason": "x"}, format="json"
    )
    assert as_reviewer.status_code == 403
    assert Output.objects.get().status == "pending"


def test_a_bulk_decision_over_the_limit_is_refused(held_outputs, lead, client_for, settings):
    settings.BULK_DECISION_LIMIT = 2
    held_outputs(3)
    response = client_for(lead).post(
        "/api/v1/queue/bulk-decision/", {"action": "approve", "reason": "fine"}, format="json"
    )
    assert response.status_code == 400
    assert "Narrow the filters" in response.json()["filters"][0]
    assert not Review.objects.exists()
