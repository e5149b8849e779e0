"""An output's final state: the same fields, whichever way it is decided."""

from datetime import UTC, datetime

import pytest

from gating import reviews
from gating.models import Output, ReviewItem, TaskType
from gating.reviews import DecisionInput
from gating.roles import Role

AT = datetime(2025, 3, 4, 10, 30, tzinfo=UTC)
EDITED = "Revenue grew 4.2% on the quarter."


def final_state(output: Output) -> tuple:
    output.refresh_from_db()
    return output.status, output.final_output_text, output.decided_at


def test_approved_delivers_its_own_text():
    output = Output(output_text="as written", status=Output.Status.PENDING)
    fields = output.finalize(Output.Status.APPROVED, at=AT)
    assert (output.status, output.final_output_text, output.decided_at) == (
        "approved",
        "as written",
        AT,
    )
    assert fields == ["status", "final_output_text", "decided_at"]


def test_modified_delivers_the_edit_and_rejected_nothing():
    modified = Output(output_text="as written")
    modified.finalize(Output.Status.MODIFIED, at=AT, edited_text=EDITED)
    rejected = Output(output_text="as written")
    rejected.finalize(Output.Status.REJECTED, at=AT)
    assert (modified.status, modified.final_output_text) == ("modified", EDITED)
    assert (rejected.status, rejected.final_output_text) == ("rejected", None)


@pytest.mark.parametrize(
    ("status", "edited_text"),
    [
        (Output.Status.PENDING, None),
        (Output.Status.MODIFIED, None),
        (Output.Status.APPROVED, EDITED),
        (Output.Status.REJECTED, EDITED),
    ],
)
def test_an_impossible_final_state_is_refused(status, edited_text):
    output = Output(output_text="as written", status=Output.Status.PENDING)
    with pytest.raises(ValueError):
        output.finalize(status, at=AT, edited_text=edited_text)
    assert (output.status, output.final_output_text, output.decided_at) == ("pending", None, None)


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("decision", "status", "final_text"),
    [
        (DecisionInput("approve"), "approved", "own"),
        (DecisionInput("modify", edited_output=EDITED), "modified", EDITED),
        (DecisionInput("reject", reason="other"), "rejected", None),
    ],
)
def test_a_reviewers_decision_finalizes(held_outputs, user_in, decision, status, final_text):
    output = held_outputs(1)[0]
    reviewer = user_in(Role.REVIEWER)
    item = reviews.item_claim(reviewer=reviewer, now=AT)

    reviews.item_decide(item_id=item.pk, reviewer=reviewer, decision=decision, now=AT)

    expected = output.output_text if final_text == "own" else final_text
    assert final_state(output) == (status, expected, AT)


@pytest.mark.django_db
@pytest.mark.parametrize(("action", "status"), [("approve", "approved"), ("reject", "rejected")])
def test_a_bulk_decision_finalizes(held_outputs, user_in, action, status):
    output = held_outputs(1)[0]

    reviews.bulk_decide(
        lead=user_in(Role.LEAD),
        items=ReviewItem.objects.all(),
        action=action,
        reason="model returned garbage",
        now=AT,
    )

    expected = output.output_text if action == "approve" else None
    assert final_state(output) == (status, expected, AT)


@pytest.mark.django_db
def test_backlog_relief_finalizes_as_an_approved_warning(held_outputs):
    output = held_outputs(1, task_type="relieved")[0]
    # Out of cold start, and scoring just below the review threshold.
    TaskType.objects.filter(name="relieved").update(cold_start_reviews=0, review_threshold=4.0)
    Output.objects.filter(pk=output.pk).update(score=3.5)
    ReviewItem.objects.filter(output=output).update(score=3.5)

    relieved = reviews.backlog_relieve(task_type=TaskType.objects.get(name="relieved"), now=AT)

    assert relieved == 1
    assert final_state(output) == ("approved", output.output_text, AT)
    assert output.decision == "warning"
