"""The rule of an output's review rounds (``gating.rounds``), case by case as
docs/review-queue.md states it, and the queue's kinds named from it."""

import pytest

from gating.models import ReviewItem
from gating.rounds import FIRST_ROUNDS, Round, round_after


@pytest.mark.parametrize(
    ("done", "needs_second_review", "finds_fault", "expected"),
    [
        # A held output: a second review only where its slot was drawn for one.
        (Round.REVIEW, False, False, None),
        (Round.REVIEW, False, True, None),
        (Round.REVIEW, True, False, Round.SECOND),
        (Round.REVIEW, True, True, Round.SECOND),
        # An audit: also where its verdict finds fault.
        (Round.AUDIT, False, False, None),
        (Round.AUDIT, False, True, Round.SECOND),
        (Round.AUDIT, True, False, Round.SECOND),
        (Round.AUDIT, True, True, Round.SECOND),
    ],
)
def test_after_a_first_round(done, needs_second_review, finds_fault, expected):
    assert (
        round_after(done, needs_second_review=needs_second_review, finds_fault=finds_fault)
        == expected
    )


def test_a_second_review_settles_when_it_agrees_and_goes_to_a_lead_when_not():
    assert round_after(Round.SECOND, agrees_with_first=True) is None
    assert round_after(Round.SECOND, agrees_with_first=False) == Round.ADJUDICATION
    with pytest.raises(ValueError, match=r"^a second review agrees with the first or not$"):
        round_after(Round.SECOND)


def test_a_first_round_without_a_draw_or_a_fault_settles():
    # What a caller that says nothing more means: no double review drawn, no fault found.
    assert round_after(Round.REVIEW) is None
    assert round_after(Round.AUDIT) is None


@pytest.mark.parametrize("done", [Round.ADJUDICATION, Round.GOLD])
def test_nothing_follows_a_leads_round(done):
    assert round_after(done, needs_second_review=True, finds_fault=True) is None


def test_the_queue_kinds_are_the_rounds():
    assert [k.value for k in ReviewItem.Kind] == [r.value for r in Round]
    assert tuple(ReviewItem.FIRST_KINDS) == FIRST_ROUNDS
