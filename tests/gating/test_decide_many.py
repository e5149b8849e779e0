"""``scoring.decide_many`` (what the closed loop decides its traffic with) is ``scoring.gate``
score by score, for every policy a task type can have, and fails closed as it does."""

import itertools
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from gating import scoring
from gating.scoring import ApproveRequires, Decision, GatePolicy, Guarantee

PAST_THE_RAISE = scoring.PairHistory(reviewed=scoring.FULL_CONFIDENCE_REVIEWS)


def policies():
    for requires, guarantee, auto_approve, line, cold in itertools.product(
        ApproveRequires, Guarantee, (True, False), (None, 8.3, 9.6), (True, False)
    ):
        yield GatePolicy(
            review_threshold=4.0,
            approve_threshold=9.0,
            cold_start_reviews=20,
            task_type_reviewed=3 if cold else 20,
            auto_approve=auto_approve,
            approve_requires=requires,
            approve_guarantee=guarantee,
            estimated_approve=line,
        )


# Every threshold and line, and the floats on either side of each, with both ends.
EDGES = sorted(
    {
        value
        for edge in (0.0, 4.0, 8.3, 9.0, 9.6, 10.0)
        for value in (math.nextafter(edge, -1), edge, math.nextafter(edge, 11))
        if 0.0 <= value <= 10.0
    }
)


def one_by_one(scores, policy):
    rulings = [scoring.gate(float(s), policy, PAST_THE_RAISE) for s in scores]
    return (
        [r.decision is Decision.PENDING_REVIEW for r in rulings],
        [r.decision is Decision.APPROVED for r in rulings],
        [r.withheld for r in rulings],
    )


@pytest.mark.parametrize("policy", list(policies()), ids=str)
def test_every_policy_at_every_edge_is_the_gates(policy):
    decided = scoring.decide_many(np.array(EDGES), policy)
    assert (
        decided.held.tolist(),
        decided.approved.tolist(),
        decided.withheld.tolist(),
    ) == one_by_one(EDGES, policy)


@given(
    scores=st.lists(st.floats(0.0, 10.0), min_size=1, max_size=50),
    review=st.floats(0.0, 10.0),
    gap=st.floats(0.0, 10.0),
    line=st.none() | st.floats(0.0, 10.0),
    requires=st.sampled_from(list(ApproveRequires)),
    guarantee=st.sampled_from(list(Guarantee)),
)
def test_any_scores_and_thresholds_are_the_gates(scores, review, gap, line, requires, guarantee):
    policy = GatePolicy(
        review_threshold=review,
        approve_threshold=min(review + gap, 10.0),
        cold_start_reviews=0,
        approve_requires=requires,
        approve_guarantee=guarantee,
        estimated_approve=line,
    )
    decided = scoring.decide_many(np.array(scores), policy)
    assert (
        decided.held.tolist(),
        decided.approved.tolist(),
        decided.withheld.tolist(),
    ) == one_by_one(scores, policy)


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf, -0.5, 10.5])
def test_a_score_that_is_not_a_number_in_range_is_refused(bad):
    with pytest.raises(scoring.ScoringFault, match=f"score {bad:g} is not a finite number"):
        scoring.decide_many(np.array([9.5, bad]), GatePolicy(cold_start_reviews=0))
