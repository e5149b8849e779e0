"""Recording past decisions in bulk leaves what live claims and decisions would have left."""

from datetime import UTC, datetime, timedelta

import pytest

from gating import reviews
from gating.exceptions import DecisionInvalid, ReviewConflict
from gating.models import AuditEvent, Output, Review, ReviewItem, TaskModelStats, TaskType
from gating.reviews import DecisionInput, RecordedDecision
from gating.roles import Role

pytestmark = pytest.mark.django_db

T0 = datetime(2026, 3, 2, 10, 0, tzinfo=UTC)

# Three outputs, each reviewed twice; the second one's reviewers disagree and a lead
# adjudicates. (round, output index) -> (who, decision)
ROUNDS = [
    {
        0: ("a", DecisionInput("approve")),
        1: ("a", DecisionInput("modify", edited_output="fixed by a")),
        2: ("a", DecisionInput("reject", reason="factual_error")),
    },
    {
        0: ("b", DecisionInput("approve")),
        1: ("b", DecisionInput("reject", reason="formatting")),
        2: ("b", DecisionInput("reject", reason="factual_error")),
    },
    {1: ("lead", DecisionInput("modify", edited_output="fixed by the lead"))},
]


@pytest.fixture
def people(user_in):
    return {"a": user_in(Role.REVIEWER), "b": user_in(Role.REVIEWER), "lead": user_in(Role.LEAD)}


def open_item(output):
    return ReviewItem.objects.get(output=output, state=ReviewItem.State.OPEN)


def decide_live(outputs, people):
    for n, decisions in enumerate(ROUNDS):
        for index, (who, decision) in decisions.items():
            item = reviews.item_claim(
                reviewer=people[who],
                items=ReviewItem.objects.filter(output=outputs[index]),
                now=T0 + timedelta(hours=n),
            )
            reviews.item_decide(
                item_id=item.pk,
                reviewer=people[who],
                decision=decision,
                now=T0 + timedelta(hours=n, minutes=1),
            )


def decide_recorded(outputs, people):
    for n, decisions in enumerate(ROUNDS):
        reviews.decisions_record(
            [
                RecordedDecision(
                    item=open_item(outputs[index]),
                    reviewer=people[who],
                    decision=decision,
                    decided_at=T0 + timedelta(hours=n, minutes=1),
                )
                for index, (who, decision) in decisions.items()
            ]
        )


def outcome(outputs):
    """Everything a decision leaves, minus ids and the task type's name."""
    return {
        "outputs": [
            Output.objects.values("status", "final_output_text", "decided_at").get(pk=o.pk)
            for o in outputs
        ],
        "items": [
            list(
                ReviewItem.objects.filter(output=o)
                .order_by("id")
                .values_list("kind", "state", "claimed_by", "decided_at")
            )
            for o in outputs
        ],
        # The first round's items arrive with their outputs, at ingest: only the
        # follow-ups' arrival times come from the decisions.
        "follow_ups_queued": [
            list(
                ReviewItem.objects.filter(output=o)
                .exclude(kind="review")
                .order_by("id")
                .values_list("queued_at", flat=True)
            )
            for o in outputs
        ],
        "reviews": [
            list(
                Review.objects.filter(output=o)
                .order_by("id")
                .values_list("reviewer", "action", "edited_output", "reason", "decided_at")
            )
            for o in outputs
        ],
        "decision_events": AuditEvent.objects.filter(
            action__in=[AuditEvent.Action.DECISION, AuditEvent.Action.ADJUDICATION],
            object_type="gating.review",
            object_id__in=[str(r.pk) for r in Review.objects.filter(output__in=outputs)],
        ).count(),
        "task_type_reviewed": TaskType.objects.get(pk=outputs[0].task_type_id).reviewed_count,
        "pair": TaskModelStats.objects.values("reviewed_count", "approved_unchanged_count").get(
            task_type_id=outputs[0].task_type_id, model=outputs[0].model
        ),
    }


def test_recorded_decisions_match_live_ones(held_outputs, people):
    live = held_outputs(3, task_type="live", double_review_rate=1.0)
    recorded = held_outputs(3, task_type="recorded", double_review_rate=1.0)

    decide_live(live, people)
    decide_recorded(recorded, people)

    assert outcome(recorded) == outcome(live)
    # And what that is, worked out by hand from the rounds above.
    result = outcome(recorded)
    assert [o["status"] for o in result["outputs"]] == ["approved", "modified", "rejected"]
    assert [o["final_output_text"] for o in result["outputs"]] == [
        recorded[0].output_text,
        "fixed by the lead",
        None,
    ]
    # Each output is decided when its last round is: rounds 2, 3 and 2.
    assert [o["decided_at"] for o in result["outputs"]] == [
        T0 + timedelta(hours=1, minutes=1),
        T0 + timedelta(hours=2, minutes=1),
        T0 + timedelta(hours=1, minutes=1),
    ]
    assert [len(i) for i in result["items"]] == [2, 3, 2]
    assert result["follow_ups_queued"][1] == [
        T0 + timedelta(minutes=1),
        T0 + timedelta(hours=1, minutes=1),
    ]
    assert result["decision_events"] == 7
    assert result["task_type_reviewed"] == 3
    assert result["pair"] == {"reviewed_count": 3, "approved_unchanged_count": 1}


def test_a_broken_rule_stores_nothing(held_outputs, people):
    outputs = held_outputs(2, double_review_rate=1.0)
    decide = DecisionInput("approve")
    reviews.decisions_record(
        [RecordedDecision(open_item(o), people["a"], decide, T0) for o in outputs]
    )
    reviews_before = Review.objects.count()

    # "a" judged both outputs already: neither second review may be theirs.
    with pytest.raises(DecisionInvalid, match="already judged"):
        reviews.decisions_record(
            [
                RecordedDecision(open_item(outputs[0]), people["b"], decide, T0),
                RecordedDecision(open_item(outputs[1]), people["a"], decide, T0),
            ]
        )
    with pytest.raises(DecisionInvalid, match="one decision per output"):
        item = open_item(outputs[0])
        reviews.decisions_record(
            [
                RecordedDecision(item, people["b"], decide, T0),
                RecordedDecision(item, people["lead"], decide, T0),
            ]
        )
    with pytest.raises(DecisionInvalid, match="Required when the action is modify") as error:
        reviews.decisions_record(
            [RecordedDecision(open_item(outputs[0]), people["b"], DecisionInput("modify"), T0)]
        )
    assert error.value.field == "output"

    assert Review.objects.count() == reviews_before
    assert set(ReviewItem.objects.filter(kind="second").values_list("state", flat=True)) == {"open"}


def test_items_under_a_live_lease_are_refused(held_outputs, people):
    (output,) = held_outputs(1)
    item = reviews.item_claim(reviewer=people["a"])

    with pytest.raises(ReviewConflict, match=str(item.pk)):
        reviews.decisions_record(
            [RecordedDecision(item, people["b"], DecisionInput("approve"), T0)]
        )
    assert not Review.objects.filter(output=output).exists()


def test_only_leads_adjudicate(held_outputs, people):
    (output,) = held_outputs(1, double_review_rate=1.0)
    for who, decision in (
        ("a", DecisionInput("approve")),
        ("b", DecisionInput("reject", reason="formatting")),
    ):
        reviews.decisions_record([RecordedDecision(open_item(output), people[who], decision, T0)])
    reviewer = people["a"].__class__.objects.create(username="another-reviewer")
    with pytest.raises(DecisionInvalid, match="may not take this adjudication: only a lead may"):
        reviews.decisions_record(
            [RecordedDecision(open_item(output), reviewer, DecisionInput("approve"), T0)]
        )
    assert open_item(output).kind == "adjudication"
