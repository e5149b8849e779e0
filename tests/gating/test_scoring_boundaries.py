"""The gate at its exact boundaries, and the impacts and reasons a reviewer reads.

Every expected value is worked out by hand from docs/gate.md in the comment above it.
"""

import pytest

from gating import scoring
from gating.scoring import (
    Decision,
    GatePolicy,
    Impact,
    PairHistory,
    ValidatorOutcome,
    effective_thresholds,
    score_output,
    task_accuracy_bonus,
)

PAST_COLD_START = GatePolicy(task_type_reviewed=100)
SEASONED_PAIR = PairHistory(reviewed=20, approved_unchanged=10)  # 50%: no bonus, no raise


@pytest.fixture(autouse=True)
def _fresh_scoring_caches():
    # Each test works out its own validator terms: a pattern cached by an earlier test
    # would hide which tests run which code, and `make mutants` picks a mutant's tests
    # from that.
    scoring._validator_terms.cache_clear()
    scoring._impact_dict.cache_clear()


def _score(
    validators,
    *,
    clarity=0.0,
    coherence=0.0,
    fact_check=False,
    pair=SEASONED_PAIR,
    policy=PAST_COLD_START,
):
    return score_output(
        validators=validators,
        input_clarity=clarity,
        coherence=coherence,
        requires_fact_check=fact_check,
        pair=pair,
        policy=policy,
    )


def _explained(impacts):
    """(factor, detail) pairs to compare exactly, and the points to compare approximately."""
    return [(i.factor, i.detail) for i in impacts], [i.points for i in impacts]


ONE_PASS = [ValidatorOutcome("facts", True)]  # base = 1 * 8 = 8.0 with clarity and coherence 0


@pytest.mark.parametrize(
    ("approved", "bonus", "score"),
    [
        # n = 20, so min(1, 20/20) = 1 and the bonus counts fully; base 8.0.
        (15, 0.0, 8.0),  # 15/20 = 0.75 is not > 0.75: no bonus
        (16, 0.2, 480 / 58),  # 0.80 > 0.75: odds 8/2 * 1.2 = 4.8, 10 * 4.8/5.8 = 8.2759
        (18, 0.2, 480 / 58),  # 0.90 is not > 0.90: still the lower bonus
        (19, 0.5, 60 / 7),  # 0.95 > 0.90: odds 4 * 1.5 = 6, 10 * 6/7 = 8.5714
    ],
)
def test_accuracy_boundaries(approved, bonus, score):
    result = _score(ONE_PASS, pair=PairHistory(reviewed=20, approved_unchanged=approved))
    assert result.task_accuracy_bonus == pytest.approx(bonus)
    assert result.score == pytest.approx(score)


def test_accuracy_of_exactly_three_quarters_earns_nothing_and_shows_no_bonus():
    # 30/40 = 0.75 is not > 0.75, however many reviews: no bonus term among the impacts.
    pair = PairHistory(reviewed=40, approved_unchanged=30)
    assert task_accuracy_bonus(pair) == 0.0
    assert "task_accuracy_bonus" not in [i.factor for i in _score(ONE_PASS, pair=pair).impacts]


@pytest.mark.parametrize(
    ("reviewed", "raise_by"),
    [
        (0, 1.0),  # 1.0 * (1 - 0/20)
        (19, 0.05),  # 1.0 * (1 - 19/20)
        (20, 0.0),  # the raise has faded out
        (21, 0.0),  # and stays out
    ],
)
def test_pair_raise_fades_out_at_exactly_twenty_reviews(reviewed, raise_by):
    pair = PairHistory(reviewed=reviewed, approved_unchanged=0)
    review, approve, raised = effective_thresholds(GatePolicy(), pair)
    assert (review, approve, raised) == pytest.approx((4.0 + raise_by, 7.0 + raise_by, raise_by))


def test_pair_with_nineteen_reviews_says_so():
    # raise = 1.0 * (1 - 19/20) = 0.05; base 8.0 >= 7.05: approved.
    result = _score(ONE_PASS, pair=PairHistory(reviewed=19, approved_unchanged=0))
    assert result.decision is Decision.APPROVED
    assert result.reasons == [
        "New model for this task type (19 of 20 reviews): both thresholds raised by 0.05.",
        "Score 8.00 reaches the approve threshold 7.05.",
    ]


def test_pair_with_twenty_reviews_has_no_raise_and_no_reason_for_one():
    result = _score(ONE_PASS, pair=PairHistory(reviewed=20, approved_unchanged=0))
    assert (result.review_threshold, result.approve_threshold) == (4.0, 7.0)
    assert result.reasons == ["Score 8.00 reaches the approve threshold 7.00."]


def test_margin_of_zero_turns_the_raise_off():
    # raise = 0 * (1 - 0/20) = 0 for a brand-new pair.
    result = _score(
        ONE_PASS,
        pair=PairHistory(),
        policy=GatePolicy(task_type_reviewed=100, cold_start_margin=0.0),
    )
    assert (result.review_threshold, result.approve_threshold) == (4.0, 7.0)
    assert result.reasons == ["Score 8.00 reaches the approve threshold 7.00."]


def test_task_type_with_exactly_its_cold_start_reviews_is_gated_by_score():
    # 20 of 20 reviews is no longer "fewer than 20": base 8.0 >= 7.0, approved.
    result = _score(ONE_PASS, policy=GatePolicy(task_type_reviewed=20))
    assert result.decision is Decision.APPROVED
    assert result.reasons == ["Score 8.00 reaches the approve threshold 7.00."]


def test_task_type_cold_start_follows_its_own_count():
    # cold_start_reviews 5: 4 reviewed holds, 5 reviewed does not.
    held = _score(ONE_PASS, policy=GatePolicy(task_type_reviewed=4, cold_start_reviews=5))
    gated = _score(ONE_PASS, policy=GatePolicy(task_type_reviewed=5, cold_start_reviews=5))
    assert held.decision is Decision.PENDING_REVIEW
    assert held.reasons == [
        "Cold start: the task type has 4 of 5 human reviews, so every output is held for review."
    ]
    assert gated.decision is Decision.APPROVED


def test_new_pair_in_a_new_task_type_gives_both_reasons_in_order():
    # n = 0: raise 1.00; the task type's cold start then holds the output whatever its score.
    result = _score(ONE_PASS, pair=PairHistory(), policy=GatePolicy(task_type_reviewed=19))
    assert result.decision is Decision.PENDING_REVIEW
    assert result.reasons == [
        "New model for this task type (0 of 20 reviews): both thresholds raised by 1.00.",
        "Cold start: the task type has 19 of 20 human reviews, so every output is held for review.",
    ]


@pytest.mark.parametrize(
    ("validators", "decision", "reason"),
    [
        # clarity 1, coherence 1 add 0.5 + 1.5 = 2.0 to 8 * pass_fraction.
        (
            [ValidatorOutcome("facts", False)],  # 0 + 2 = 2.0
            Decision.PENDING_REVIEW,
            "Score 2.00 is below the review threshold 4.00.",
        ),
        (
            [ValidatorOutcome("facts", True), ValidatorOutcome("tone", False)],  # 4 + 2 = 6.0
            Decision.WARNING,
            "Score 6.00 is between the review 4.00 and approve 7.00 thresholds.",
        ),
        (
            [ValidatorOutcome("facts", True)],  # 8 + 2 = 10.0
            Decision.APPROVED,
            "Score 10.00 reaches the approve threshold 7.00.",
        ),
    ],
)
def test_threshold_reason_of_each_decision(validators, decision, reason):
    result = _score(validators, clarity=1.0, coherence=1.0)
    assert result.decision is decision
    assert result.reasons == [reason]


def test_impacts_of_weighted_validators_clarity_and_coherence():
    # total weight 3: facts 2/3 * 8 = 5.3333 earned, tone 1/3 * 8 = 2.67 not earned;
    # clarity 0.8 * 0.5 = 0.4, coherence 0.6 * 1.5 = 0.9; score 6.6333: a warning.
    validators = [
        ValidatorOutcome("facts", True, weight=2.0),
        ValidatorOutcome("tone", False, weight=1.0),
    ]
    result = _score(validators, clarity=0.8, coherence=0.6)
    texts, points = _explained(result.impacts)
    assert texts == [
        ("validator:facts", "passed (weight 2)"),
        ("validator:tone", "failed, 2.67 points not earned"),
        ("input_clarity", "0.8 × 0.5"),
        ("coherence", "0.6 × 1.5"),
    ]
    assert points == pytest.approx([16 / 3, 0.0, 0.4, 0.9])
    assert result.reasons == ["Score 6.63 is between the review 4.00 and approve 7.00 thresholds."]


def test_validator_weighing_less_than_one_still_earns_all_eight_points():
    # total weight 0.5: 0.5/0.5 * 8 = 8.0, the whole validator term.
    result = _score([ValidatorOutcome("facts", True, weight=0.5)])
    assert result.pass_fraction == 1.0
    assert result.impacts[0] == Impact("validator:facts", 8.0, "passed (weight 0.5)")
    assert result.score == pytest.approx(8.0)


def test_validators_of_zero_weight_leave_the_validator_term_at_zero():
    # total weight 0: pass_fraction 0 (not a division by zero); clarity 1 * 0.5 = 0.5.
    result = _score([ValidatorOutcome("facts", True, weight=0.0)], clarity=1.0)
    assert result.pass_fraction == 0.0
    assert result.impacts[0] == Impact(
        "validators", 0.0, "no validators reported: the validator term is 0"
    )
    assert result.score == pytest.approx(0.5)


def test_no_validators_explains_the_zero_term():
    # base = 0 + 1 * 0.5 + 1 * 1.5 = 2.0
    result = _score([], clarity=1.0, coherence=1.0)
    assert result.impacts[0] == Impact(
        "validators", 0.0, "no validators reported: the validator term is 0"
    )
    assert result.reasons == [
        "No validators were reported, so the validator term is 0.",
        "Score 2.00 is below the review threshold 4.00.",
    ]


def test_bonus_impact_in_points_and_words():
    # accuracy 8/10 = 0.8 > 0.75: bonus 0.2 * min(1, 10/20) = 0.1;
    # base = 1/2 * 8 + 0.5 * 0.5 + 0.5 * 1.5 = 5.0: odds 1 * 1.1 -> 10 * 1.1/2.1 = 5.2381,
    # so the bonus is 0.2381 points;
    # raise 1.0 * (1 - 10/20) = 0.5: score 5.24 is between 4.5 and 7.5.
    validators = [ValidatorOutcome("facts", True), ValidatorOutcome("tone", False)]
    result = _score(
        validators,
        clarity=0.5,
        coherence=0.5,
        pair=PairHistory(reviewed=10, approved_unchanged=8),
    )
    assert result.impacts[-1].factor == "task_accuracy_bonus"
    assert result.impacts[-1].points == pytest.approx(110 / 21 - 5)
    assert result.impacts[-1].detail == (
        "accuracy 80% over 10 reviews: bonus 0.100, the odds of 5.00 in 10 × 1.100"
    )
    assert result.reasons == [
        "New model for this task type (10 of 20 reviews): both thresholds raised by 0.50.",
        "Score 5.24 is between the review 4.50 and approve 7.50 thresholds.",
    ]


def test_penalty_impact_in_points_and_words():
    # facts (a fact check) failed: fraction 2/3, base = 16/3 + 0.6 * 0.5 + 0.4 * 1.5 = 6.2333;
    # the penalty takes 6.2333 * 0.5 = 3.1167 points, leaving 3.1167: pending review.
    validators = [
        ValidatorOutcome("facts", False, is_fact_check=True),
        ValidatorOutcome("tone", True),
        ValidatorOutcome("length", True),
    ]
    result = _score(validators, clarity=0.6, coherence=0.4, fact_check=True)
    penalty = result.impacts[-1]
    assert penalty.factor == "hallucination_penalty"
    assert penalty.points == pytest.approx(-(16 / 3 + 0.9) * 0.5)
    assert penalty.detail == "fact check required and facts failed: penalty 0.5 × base 6.23"
    assert result.reasons == [
        "Hallucination penalty: fact-check validator facts failed.",
        "Score 3.12 is below the review threshold 4.00.",
    ]


def test_penalty_names_every_failed_fact_check_and_no_other_validator():
    # facts and citations are fact checks and failed, tone failed but is no fact check;
    # fraction 1/4: base = 2 + 1 * 0.5 + 1 * 1.5 = 4.0, halved to 2.0.
    validators = [
        ValidatorOutcome("facts", False, is_fact_check=True),
        ValidatorOutcome("tone", False),
        ValidatorOutcome("citations", False, is_fact_check=True),
        ValidatorOutcome("length", True),
    ]
    result = _score(validators, clarity=1.0, coherence=1.0, fact_check=True)
    assert result.score == pytest.approx(2.0)
    assert (
        result.reasons[0] == "Hallucination penalty: fact-check validator facts, citations failed."
    )


def test_every_impact_of_a_perfect_score_with_the_bonus():
    # two validators pass: 4.0 each; clarity 1 * 0.5, coherence 1 * 1.5: base 10.0;
    # accuracy 38/40 = 0.95 > 0.90: bonus 0.5 * min(1, 40/20) = 0.5: 10 * 1.5 / (1 + 0.5)
    # = 10, so 0 points: the score is 10 with nothing to clamp.
    validators = [ValidatorOutcome("facts", True), ValidatorOutcome("tone", True)]
    result = _score(
        validators,
        clarity=1.0,
        coherence=1.0,
        pair=PairHistory(reviewed=40, approved_unchanged=38),
    )
    texts, points = _explained(result.impacts)
    assert texts == [
        ("validator:facts", "passed (weight 1)"),
        ("validator:tone", "passed (weight 1)"),
        ("input_clarity", "1 × 0.5"),
        ("coherence", "1 × 1.5"),
        (
            "task_accuracy_bonus",
            "accuracy 95% over 40 reviews: bonus 0.500, the odds of 10.00 in 10 × 1.500",
        ),
    ]
    assert points == pytest.approx([4.0, 4.0, 0.5, 1.5, 0.0])
    assert result.score == 10.0


def test_impact_as_dict_rounds_points_to_four_places():
    # 16/3 = 5.33333… rounds to 5.3333.
    impact = Impact("validator:facts", 16 / 3, "passed (weight 2)")
    assert impact.as_dict() == {
        "factor": "validator:facts",
        "points": 5.3333,
        "detail": "passed (weight 2)",
    }


def test_with_auto_approval_off_a_capped_score_is_a_warning_even_at_threshold_10():
    # A perfect base: 8 + 1 * 0.5 + 1 * 1.5 = 10, and 10 whatever the bonus.
    pair = PairHistory(reviewed=20, approved_unchanged=19)
    at_ten = GatePolicy(task_type_reviewed=100, approve_threshold=10.0, cold_start_margin=0.0)
    perfect = {"clarity": 1.0, "coherence": 1.0, "pair": pair}
    assert _score(ONE_PASS, policy=at_ten, **perfect).decision is Decision.APPROVED
    off = GatePolicy(
        task_type_reviewed=100, approve_threshold=10.0, cold_start_margin=0.0, auto_approve=False
    )
    result = _score(ONE_PASS, policy=off, **perfect)
    assert (result.score, result.decision) == (10.0, Decision.WARNING)
    assert result.reasons[-1] == (
        "Score 10.00 reaches the approve threshold 10.00, but auto-approval is off for this "
        "task type: delivered as a warning."
    )
    # Below the review threshold it is held as before: the switch touches approvals only.
    low = GatePolicy(task_type_reviewed=100, review_threshold=9.0, auto_approve=False)
    assert _score(ONE_PASS, policy=low).decision is Decision.PENDING_REVIEW
