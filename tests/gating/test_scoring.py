"""The gate's formula against vectors computed by hand, and its invariants by hypothesis."""

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gating import scoring
from gating.scoring import (
    Decision,
    GatePolicy,
    PairHistory,
    ValidatorOutcome,
    confidence_weight,
    decide,
    score_output,
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


def outcomes(*flags, fact_check=()):
    return [
        ValidatorOutcome(name=f"v{i}", passed=flag, is_fact_check=f"v{i}" in fact_check)
        for i, flag in enumerate(flags)
    ]


def test_plain_score_three_of_four_validators():
    # pass_fraction = 3/4; base = 0.75*8 + 0.8*0.5 + 0.6*1.5 = 6 + 0.4 + 0.9 = 7.3
    result = score_output(
        validators=outcomes(True, True, True, False),
        input_clarity=0.8,
        coherence=0.6,
        requires_fact_check=False,
        pair=SEASONED_PAIR,
        policy=PAST_COLD_START,
    )
    assert result.base_score == pytest.approx(7.3)
    assert result.score == pytest.approx(7.3)
    assert (result.review_threshold, result.approve_threshold) == (4.0, 7.0)
    assert result.decision is Decision.APPROVED


def test_high_accuracy_bonus_multiplies_the_odds():
    # accuracy 38/40 = 0.95 > 0.90 -> 0.5 * min(1, 40/20) = 0.5
    # base = 1*8 + 0*0.5 + 0*1.5 = 8: odds 8/2 = 4, times 1.5 = 6, so 10 * 6/7 = 8.5714
    # (ADR-0003's 8 * 1.5 = 12 would be capped at 10)
    result = score_output(
        validators=outcomes(True, True),
        input_clarity=0.0,
        coherence=0.0,
        requires_fact_check=False,
        pair=PairHistory(reviewed=40, approved_unchanged=38),
        policy=PAST_COLD_START,
    )
    assert result.task_accuracy_bonus == pytest.approx(0.5)
    assert result.base_score == pytest.approx(8.0)
    assert result.score == pytest.approx(60 / 7)
    assert "clamp" not in [i.factor for i in result.impacts]
    bonus = next(i for i in result.impacts if i.factor == "task_accuracy_bonus")
    assert bonus.points == pytest.approx(60 / 7 - 8)
    assert bonus.detail == (
        "accuracy 95% over 40 reviews: bonus 0.500, the odds of 8.00 in 10 × 1.500"
    )


def test_the_bonus_keeps_apart_what_the_cap_would_tie():
    # Under ADR-0003's multiplier both would be capped at 10 (12 and 14.25). On the odds:
    # base 8 -> odds 4 * 1.5 = 6 -> 60/7 = 8.5714;
    # base 8 + 0.5 + 1.0 = 9.5 -> odds 19 * 1.5 = 28.5 -> 10 * 28.5/29.5 = 9.6610
    pair = PairHistory(reviewed=40, approved_unchanged=38)
    lower, higher = (
        score_output(
            validators=outcomes(True, True),
            input_clarity=clarity,
            coherence=coherence,
            requires_fact_check=False,
            pair=pair,
            policy=PAST_COLD_START,
        ).score
        for clarity, coherence in ((0.0, 0.0), (1.0, 2 / 3))
    )
    assert (lower, higher) == (pytest.approx(60 / 7), pytest.approx(285 / 29.5))


def test_the_penalty_takes_its_share_before_the_bonus():
    # facts failed and required: base = 0.5*8 + 1*0.5 + 1*1.5 = 6; after the penalty 3;
    # accuracy 0.95 -> bonus 0.5: odds 3/7 * 1.5 = 9/14 -> 10 * 9/23 = 3.9130
    result = score_output(
        validators=outcomes(False, True, fact_check={"v0"}),
        input_clarity=1.0,
        coherence=1.0,
        requires_fact_check=True,
        pair=PairHistory(reviewed=40, approved_unchanged=38),
        policy=PAST_COLD_START,
    )
    assert result.score == pytest.approx(90 / 23)
    points = {i.factor: i.points for i in result.impacts}
    assert points["hallucination_penalty"] == pytest.approx(-3.0)
    assert points["task_accuracy_bonus"] == pytest.approx(90 / 23 - 3)


def test_good_accuracy_bonus_is_confidence_weighted_and_thresholds_raised():
    # accuracy 8/10 = 0.8 > 0.75 -> 0.2 * min(1, 10/20) = 0.1
    # base = 0.5*8 + 0.5*0.5 + 0.5*1.5 = 4 + 0.25 + 0.75 = 5.0; odds 1 * 1.1 -> 10 * 1.1/2.1
    #   = 5.2381
    # thresholds raised by 1.0 * (1 - 10/20) = 0.5 -> review 4.5, approve 7.5 -> warning
    result = score_output(
        validators=outcomes(True, False),
        input_clarity=0.5,
        coherence=0.5,
        requires_fact_check=False,
        pair=PairHistory(reviewed=10, approved_unchanged=8),
        policy=PAST_COLD_START,
    )
    assert result.task_accuracy_bonus == pytest.approx(0.1)
    assert result.score == pytest.approx(110 / 21)
    assert result.review_threshold == pytest.approx(4.5)
    assert result.approve_threshold == pytest.approx(7.5)
    assert result.decision is Decision.WARNING
    assert any("raised by 0.50" in r for r in result.reasons)


def test_accuracy_of_exactly_ninety_percent_earns_the_lower_bonus():
    # 18/20 = 0.90 is not > 0.90, but is > 0.75 -> 0.2 * min(1, 20/20) = 0.2
    result = score_output(
        validators=outcomes(True),
        input_clarity=0.0,
        coherence=0.0,
        requires_fact_check=False,
        pair=PairHistory(reviewed=20, approved_unchanged=18),
        policy=PAST_COLD_START,
    )
    # base = 8; odds 4 * 1.2 = 4.8 -> 10 * 4.8/5.8 = 8.2759
    assert result.task_accuracy_bonus == pytest.approx(0.2)
    assert result.score == pytest.approx(480 / 58)


def test_hallucination_penalty_halves_the_multiplier():
    # facts failed, fact check required: fraction 2/3; base = 16/3 + 0.6*0.5 + 0.4*1.5
    #   = 5.3333 + 0.3 + 0.6 = 6.2333; score = 6.2333 * (1 - 0.5) = 3.1167 -> pending_review
    result = score_output(
        validators=outcomes(False, True, True, fact_check={"v0"}),
        input_clarity=0.6,
        coherence=0.4,
        requires_fact_check=True,
        pair=SEASONED_PAIR,
        policy=PAST_COLD_START,
    )
    assert result.base_score == pytest.approx(16 / 3 + 0.9)
    assert result.hallucination_penalty == 0.5
    assert result.score == pytest.approx((16 / 3 + 0.9) * 0.5)
    assert result.decision is Decision.PENDING_REVIEW


def test_failed_fact_check_without_requirement_has_no_penalty():
    result = score_output(
        validators=outcomes(False, True, fact_check={"v0"}),
        input_clarity=0.0,
        coherence=0.0,
        requires_fact_check=False,
        pair=SEASONED_PAIR,
        policy=PAST_COLD_START,
    )
    # base = 0.5 * 8 = 4.0, no penalty
    assert result.hallucination_penalty == 0.0
    assert result.score == pytest.approx(4.0)


def test_weights_and_the_review_boundary():
    # weights 2 (passed), 0.5 (failed), 1.5 (failed): fraction = 2/4 = 0.5; base = 4.0
    # score 4.0 equals the review threshold, so it is a warning, not held.
    validators = [
        ValidatorOutcome("facts", True, weight=2.0),
        ValidatorOutcome("length", False, weight=0.5),
        ValidatorOutcome("tone", False, weight=1.5),
    ]
    result = score_output(
        validators=validators,
        input_clarity=0.0,
        coherence=0.0,
        requires_fact_check=False,
        pair=SEASONED_PAIR,
        policy=PAST_COLD_START,
    )
    assert result.pass_fraction == pytest.approx(0.5)
    assert result.score == pytest.approx(4.0)
    assert result.decision is Decision.WARNING


def test_no_validators_means_a_zero_term_and_says_so():
    # base = 0 + 1*0.5 + 1*1.5 = 2.0
    result = score_output(
        validators=[],
        input_clarity=1.0,
        coherence=1.0,
        requires_fact_check=True,
        pair=SEASONED_PAIR,
        policy=PAST_COLD_START,
    )
    assert result.score == pytest.approx(2.0)
    assert any("No validators" in r for r in result.reasons)
    assert result.impacts[0].factor == "validators"


def test_task_type_cold_start_holds_even_a_perfect_output():
    result = score_output(
        validators=outcomes(True, True),
        input_clarity=1.0,
        coherence=1.0,
        requires_fact_check=False,
        pair=PairHistory(reviewed=19, approved_unchanged=19),
        policy=GatePolicy(task_type_reviewed=19),
    )
    assert result.score == 10.0
    assert result.decision is Decision.PENDING_REVIEW
    assert any("Cold start" in r and "19 of 20" in r for r in result.reasons)


def test_new_pair_raises_thresholds_by_the_full_margin():
    # n = 0: raise = 1.0 * (1 - 0/20) = 1.0 -> review 5.0, approve 8.0; base 7.5 -> warning
    result = score_output(
        validators=outcomes(True, True, True, True),
        input_clarity=0.0,
        coherence=0.0,
        requires_fact_check=False,
        pair=PairHistory(),
        policy=GatePolicy(task_type_reviewed=50, cold_start_margin=1.0),
    )
    assert result.score == pytest.approx(8.0)
    assert (result.review_threshold, result.approve_threshold) == (5.0, 8.0)
    assert result.decision is Decision.APPROVED


@pytest.mark.parametrize(
    ("score", "expected"),
    [
        (3.999, Decision.PENDING_REVIEW),
        (4.0, Decision.WARNING),
        (6.999, Decision.WARNING),
        (7.0, Decision.APPROVED),
    ],
)
def test_decision_boundaries(score, expected):
    assert decide(score, 4.0, 7.0) is expected


def test_confidence_weight_follows_seed_003():
    assert [confidence_weight(n) for n in (1, 5, 10, 20, 40)] == [0.05, 0.25, 0.5, 1.0, 1.0]


unit = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)
validator_sets = st.lists(
    st.tuples(st.booleans(), st.floats(min_value=0.0, max_value=5.0), st.booleans()),
    max_size=12,
)
histories = st.integers(min_value=0, max_value=200).flatmap(
    lambda n: st.builds(PairHistory, reviewed=st.just(n), approved_unchanged=st.integers(0, n))
)


def _build(spec):
    return [
        ValidatorOutcome(name=f"v{i}", passed=p, weight=w, is_fact_check=fc)
        for i, (p, w, fc) in enumerate(spec)
    ]


def _score(validators, clarity, coherence, fact_check, pair):
    return score_output(
        validators=validators,
        input_clarity=clarity,
        coherence=coherence,
        requires_fact_check=fact_check,
        pair=pair,
        policy=PAST_COLD_START,
    ).score


@given(validator_sets, unit, unit, st.booleans(), histories)
def test_score_stays_within_zero_and_ten(spec, clarity, coherence, fact_check, pair):
    score = _score(_build(spec), clarity, coherence, fact_check, pair)
    assert 0.0 <= score <= 10.0
    assert math.isfinite(score)


@given(validator_sets, unit, unit, st.booleans(), histories, st.data())
def test_one_more_passing_validator_never_lowers_the_score(
    spec, clarity, coherence, fact_check, pair, data
):
    failed = [i for i, (passed, _, _) in enumerate(spec) if not passed]
    if not failed:
        return
    flip = data.draw(st.sampled_from(failed))
    better = [(True, w, fc) if i == flip else (p, w, fc) for i, (p, w, fc) in enumerate(spec)]
    before = _score(_build(spec), clarity, coherence, fact_check, pair)
    after = _score(_build(better), clarity, coherence, fact_check, pair)
    assert after >= before - 1e-9


@given(validator_sets, unit, unit, histories)
def test_the_penalty_never_raises_the_score(spec, clarity, coherence, pair):
    validators = _build(spec)
    without = _score(validators, clarity, coherence, False, pair)
    with_requirement = _score(validators, clarity, coherence, True, pair)
    assert with_requirement <= without + 1e-9


@given(validator_sets, unit, unit, st.booleans(), histories)
def test_the_impacts_account_for_every_point_of_the_score(
    spec, clarity, coherence, fact_check, pair
):
    # validator shares + clarity + coherence = base; -base * penalty, then the bonus's
    # points on the odds, make the score (a clamp term would take any excess off).
    result = score_output(
        validators=_build(spec),
        input_clarity=clarity,
        coherence=coherence,
        requires_fact_check=fact_check,
        pair=pair,
        policy=PAST_COLD_START,
    )
    assert sum(i.points for i in result.impacts) == pytest.approx(result.score, abs=1e-9)


@given(validator_sets, unit, unit, st.booleans(), histories)
def test_a_clearer_output_scores_higher_even_with_the_bonus(
    spec, clarity, coherence, fact_check, pair
):
    # The bonus multiplies the odds, so it never ties two outputs of one pair at the cap:
    # a higher base always scores strictly higher.
    validators = _build(spec)
    clearer = min(1.0, clarity + 0.5)
    # Clarity a float's last bit below 1 is not clearer: no sum of points can show 1e-16
    # (hypothesis found 0.9999999999999999 and 1.0 both scoring 2.0).
    if clearer - clarity < 1e-9:
        return
    less = _score(validators, clarity, coherence, fact_check, pair)
    more = _score(validators, clearer, coherence, fact_check, pair)
    assert more > less
