"""Gold checks: a random share of settled audits gets one more round, a lead's, unseen; it
changes nothing the gateway or the gate sees (docs/review-queue.md)."""

import pytest

from gating import reviews, selectors, services
from gating.exceptions import DecisionInvalid
from gating.models import Output, ReviewItem, TaskType, Webhook, WebhookDelivery
from gating.reviews import DecisionInput, RecordedDecision
from gating.roles import Role
from tests.factories import TaskTypeFactory, valid_submission

GOLD = ReviewItem.Kind.GOLD


@pytest.mark.parametrize("share", [0.05, 0.3])
def test_the_share_of_outputs_drawn_is_the_setting(settings, share):
    settings.REVIEW_GOLD_SHARE = share
    ids = range(1, 40_001)
    drawn = sum(reviews.gold_drawn(i) for i in ids) / len(ids)
    # Binomial: four standard errors at 40,000 draws.
    assert abs(drawn - share) < 4 * (share * (1 - share) / len(ids)) ** 0.5


def test_the_draw_is_independent_of_the_fit_certify_split(settings):
    # Both hash the output id; the gold draw is keyed apart, so among the outputs one draws
    # the other's share is its own.
    settings.REVIEW_GOLD_SHARE = 0.5
    ids = range(1, 40_001)
    low_half = [i for i in ids if (i * 2654435761) % 2**32 < 2**31]
    drawn = sum(reviews.gold_drawn(i) for i in low_half) / len(low_half)
    assert abs(drawn - 0.5) < 4 * (0.25 / len(low_half)) ** 0.5


def test_none_or_every_output_at_the_ends(settings):
    settings.REVIEW_GOLD_SHARE = 0.0
    assert not any(reviews.gold_drawn(i) for i in range(1, 2001))
    settings.REVIEW_GOLD_SHARE = 1.0
    assert all(reviews.gold_drawn(i) for i in range(1, 2001))


@pytest.fixture
def audited(gateway, settings):
    """One delivered output with an open audit, and every settled audit drawn for gold."""
    settings.REVIEW_GOLD_SHARE = 1.0
    TaskTypeFactory(
        name="warm", audit_rate_approved=1.0, audit_rate_warning=1.0, double_review_rate=0.0
    )
    Webhook.objects.create(owner=gateway, url="https://hooks.example.com/gh", secret="s")
    output = services.output_ingest(
        source=gateway, submission=valid_submission(task_type="warm")
    ).output
    assert ReviewItem.objects.get(output=output).kind == ReviewItem.Kind.AUDIT
    return output


def decide(user, item_id=None, action="approve", **fields):
    item = reviews.item_claim(reviewer=user) if item_id is None else None
    reviews.item_decide(
        item_id=item_id or item.pk, reviewer=user, decision=DecisionInput(action, **fields)
    )


@pytest.mark.django_db
def test_a_settled_audit_gets_a_gold_round_that_only_another_lead_takes(audited, user_in):
    first_lead, other_lead, reviewer = user_in(Role.LEAD), user_in(Role.LEAD), user_in("reviewer")
    decide(first_lead)  # the audit, by a lead
    gold = ReviewItem.objects.get(output=audited, kind=GOLD, state="open")
    assert gold.is_audit and gold.inclusion_probability == 1.0

    # Not a reviewer's, and not the lead's who judged the output already.
    assert reviews.item_claim(reviewer=reviewer) is None
    assert reviews.item_claim(reviewer=first_lead) is None
    listed, waiting_for_a_lead = selectors.queue_listing(ReviewItem.objects.all(), viewer=reviewer)
    assert (list(listed.filter(state="open")), waiting_for_a_lead) == ([], 1)
    assert reviews.item_claim(reviewer=other_lead).pk == gold.pk


@pytest.mark.django_db
def test_a_gold_verdict_changes_nothing_the_gateway_or_the_gate_sees(audited, user_in):
    decide(user_in("reviewer"))  # the audit approves
    deliveries = WebhookDelivery.objects.count()
    before = Output.objects.values().get(pk=audited.pk)
    counted = TaskType.objects.get(name="warm").reviewed_count

    decide(user_in(Role.LEAD), action="reject", reason="other")

    assert ReviewItem.objects.get(output=audited, kind=GOLD).state == "decided"
    assert Output.objects.values().get(pk=audited.pk) == before
    assert WebhookDelivery.objects.count() == deliveries
    assert TaskType.objects.get(name="warm").reviewed_count == counted
    # No round follows a gold check, whatever it found.
    assert not ReviewItem.objects.filter(output=audited, state="open").exists()


@pytest.mark.django_db
def test_held_outputs_get_no_gold_round(held_outputs, settings, user_in):
    settings.REVIEW_GOLD_SHARE = 1.0
    held_outputs(1)
    decide(user_in("reviewer"))
    assert not ReviewItem.objects.filter(kind=GOLD).exists()


@pytest.mark.django_db
def test_replayed_history_keeps_gold_checks_to_leads(audited, user_in):
    reviews.decisions_record(
        [
            RecordedDecision(
                ReviewItem.objects.get(output=audited),
                user_in("reviewer"),
                DecisionInput("approve"),
                audited.created_at,
            )
        ]
    )
    gold = ReviewItem.objects.get(output=audited, kind=GOLD)
    with pytest.raises(DecisionInvalid, match="may not take this gold check: only a lead may"):
        reviews.decisions_record(
            [
                RecordedDecision(
                    gold, user_in("reviewer"), DecisionInput("approve"), audited.created_at
                )
            ]
        )
    assert gold.state == "open"
