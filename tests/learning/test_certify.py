"""The certified approve threshold (learning/statistics/certify.py).

Expected values come from elsewhere than the code under test: the Hoeffding-Bentkus bound is
solved here by another route (Brent's method on the KL divergence and on scipy's binomial
distribution function, where the module uses Newton's method and the inverse incomplete
beta function); closed forms are written out by hand; coverage is checked on simulated
traffic whose true error is known.
"""

import json
import math

import numpy as np
import pytest
from scipy.optimize import brentq
from scipy.stats import binom

from learning.statistics import certify
from learning.statistics.certify import State

DELTA = 0.05


def kl(mean: float, other: float) -> float:
    terms = 0.0
    if mean > 0:
        terms += mean * math.log(mean / other)
    if mean < 1:
        terms += (1 - mean) * math.log((1 - mean) / (1 - other))
    return terms


def hb_by_hand(mean: float, n: int, delta: float, k: int) -> float:
    """Hoeffding-Bentkus (Bates et al. 2021): the smallest R >= mean at which
    min(exp(-n KL(mean || R)), e P(Bin(n, R) <= k)) reaches delta; k = ceil(n mean), given
    by the caller so that no rounding of n * mean decides it here."""
    top = 1 - 1e-15
    if n * kl(mean, top) < math.log(1 / delta):
        hoeffding = 1.0
    else:
        hoeffding = brentq(
            lambda r: n * kl(mean, r) - math.log(1 / delta), mean, top, xtol=1e-16, rtol=1e-14
        )
    if k >= n:
        bentkus = 1.0
    else:
        bentkus = brentq(
            lambda r: math.e * binom.cdf(k, n, r) - delta, 0.0, 1.0, xtol=1e-16, rtol=1e-14
        )
    return min(hoeffding, bentkus)


def ones(n: int) -> np.ndarray:
    return np.ones(n)


# --------------------------------------------------------------------------- the bound


def test_a_clean_record_of_weight_one_outputs_gets_the_exact_binomial_bound():
    # No loss in n: the Hoeffding term solves (1 - R)^n = delta, R = 1 - delta^(1/n).
    clean = certify.weighted_loss_bound(np.zeros(59), ones(59), delta=DELTA)
    assert clean.bound == pytest.approx(1 - DELTA ** (1 / 59), rel=1e-9)
    assert clean.estimate == 0.0
    assert clean.effective_n == pytest.approx(59)
    # 59 is the fewest that reach 0.05 (ln 0.05 / ln 0.95 = 58.4), 299 for 0.01 (298.07).
    assert clean.bound <= 0.05 < certify.weighted_loss_bound(np.zeros(58), ones(58)).bound
    assert certify.weighted_loss_bound(np.zeros(299), ones(299)).bound <= 0.01
    assert certify.weighted_loss_bound(np.zeros(298), ones(298)).bound > 0.01
    assert math.ceil(certify.minimum_effective_sample(0.05, DELTA)) == 59
    assert math.ceil(certify.minimum_effective_sample(0.01, DELTA)) == 299


@pytest.mark.parametrize(
    ("losses", "mean", "k"),
    [
        ([1.0] * 3 + [0.0] * 97, 0.03, 3),
        ([1.0] * 40 + [0.0] * 60, 0.4, 40),
        # Posterior probabilities, not verdicts: 50 outputs at 0.3 sum to 15.
        ([0.3] * 50, 0.3, 15),
        # A sum of 2.5: Bentkus's ceil(n m) is 3.
        ([0.25] * 10 + [0.0] * 90, 0.025, 3),
        # 30 x 0.1 sums to 3.0000000000000004 in floating point; the count is still 3.
        ([0.1] * 30 + [0.0] * 70, 0.03, 3),
    ],
)
def test_weight_one_bound_matches_hoeffding_bentkus_by_another_route(losses, mean, k):
    n = len(losses)
    expected = hb_by_hand(mean, n, DELTA, k)
    assert certify.weighted_loss_bound(losses, ones(n), delta=DELTA).bound == pytest.approx(
        expected, rel=1e-9
    )
    assert certify.hoeffding_bentkus_upper(mean, n, DELTA) == pytest.approx(expected, rel=1e-9)


def test_equal_weights_above_one_pay_for_the_lower_bound_on_the_mean_weight():
    # Every weight 20 and 2 failures in 200: X = w l / 20 = l, Y = (20 - w) / 19 = 0. X's
    # bound at 0.9 delta, Y's at 0.1 delta (no Y at all: 1 - (0.1 delta)^(1/n)).
    n = 200
    upper_x = hb_by_hand(0.01, n, 0.9 * DELTA, 2)
    lower_mean_weight = 20 - 19 * (1 - (0.1 * DELTA) ** (1 / n))
    losses = np.r_[np.ones(2), np.zeros(n - 2)]
    result = certify.weighted_loss_bound(losses, np.full(n, 20.0), delta=DELTA)
    assert result.bound == pytest.approx(20 * upper_x / lower_mean_weight, rel=1e-9)
    assert result.estimate == pytest.approx(0.01)


def test_strata_count_for_the_traffic_they_stand_for():
    # 100 held outputs (p = 1) with no loss and 10 audited at p = 0.1 with loss 0.5: the
    # audited ones stand for 100 outputs, so the traffic's mean loss is 50 / 200.
    losses = np.r_[np.zeros(100), np.full(10, 0.5)]
    weights = np.r_[np.ones(100), np.full(10, 10.0)]
    result = certify.weighted_loss_bound(losses, weights, delta=DELTA)
    assert result.estimate == pytest.approx(0.25)
    # By hand: c = 10. X = w l / 10 sums to 10 x 0.5 = 5; Y = (10 - w) / 9 sums to 100.
    upper_x = hb_by_hand(5 / 110, 110, 0.9 * DELTA, 5)
    upper_y = hb_by_hand(100 / 110, 110, 0.1 * DELTA, 100)
    expected = min(1.0, 10 * upper_x / max(1.0, 10 - 9 * upper_y))
    assert result.bound == pytest.approx(expected, rel=1e-9)


def test_edge_cases_give_numbers_not_nan():
    nothing = certify.weighted_loss_bound([], [])
    assert (nothing.n, nothing.bound, nothing.estimate, nothing.effective_n) == (0, 1.0, None, 0)

    # Every loss 1, with weights that do not divide evenly: the bound is 1, not NaN.
    weights = [1 / 0.07, 1 / 0.13, 1.0, 1 / 0.3, 20.0]
    failing = certify.weighted_loss_bound(np.ones(5), weights)
    assert failing.bound == 1.0 and failing.estimate == pytest.approx(1.0)
    assert not math.isnan(failing.sampling_bound)

    # One output of weight 1: with no loss, 1 - delta; with a loss, 1.
    assert certify.weighted_loss_bound([0.0], [1.0], delta=DELTA).bound == pytest.approx(0.95)
    assert certify.weighted_loss_bound([1.0], [1.0]).bound == 1.0
    # One audited output at weight 20 says almost nothing: 20 (1 - 0.045) / 1.095 > 1.
    assert certify.weighted_loss_bound([0.0], [20.0], delta=DELTA).bound == 1.0


def test_the_bound_is_a_probability_at_least_the_estimate():
    rng = np.random.default_rng(17)
    rates = np.array([1.0, 0.5, 0.3, 0.2, 0.13, 0.07, 0.05])
    for _ in range(300):
        n = int(rng.integers(1, 400))
        weights = 1 / rng.choice(rates, n)
        losses = np.where(rng.random(n) < rng.random(), 1.0, rng.random(n))
        if rng.random() < 0.3:
            losses = np.ones(n)
        result = certify.weighted_loss_bound(losses, weights, delta=rng.uniform(0.01, 0.5))
        assert 0.0 <= result.estimate <= 1.0
        assert result.estimate - 1e-12 <= result.bound <= 1.0


def test_a_larger_design_weight_than_observed_widens_the_bound():
    losses, weights = np.zeros(300), np.full(300, 10.0)
    observed = certify.weighted_loss_bound(losses, weights).bound
    declared = certify.weighted_loss_bound(losses, weights, max_weight=20.0).bound
    assert declared > observed
    with pytest.raises(ValueError, match="max_weight"):
        certify.weighted_loss_bound(losses, weights, max_weight=5.0)


@pytest.mark.parametrize(
    ("losses", "weights", "message"),
    [
        ([0.0, 0.0, 0.0], [0.0, 0.0, 0.0], "weights are 1 / inclusion probabilities"),
        ([0.0, 0.0], [1.0, -2.0], "at least 1"),
        ([0.0, 0.0], [1.0, float("nan")], "finite"),
        ([0.0, 0.0], [1.0, 0.5], "1 of 2 are not"),
        ([0.0, 1.2], [1.0, 1.0], r"in \[0, 1\]"),
        ([0.0, float("nan")], [1.0, 1.0], r"in \[0, 1\]"),
        ([0.0, 0.0], [1.0], "shape"),
    ],
)
def test_invalid_inputs_are_refused_with_the_field_named(losses, weights, message):
    with pytest.raises(ValueError, match=message):
        certify.weighted_loss_bound(losses, weights)


@pytest.mark.parametrize("delta", [0.0, 1.0, -0.1])
def test_delta_outside_zero_one_is_refused(delta):
    with pytest.raises(ValueError, match="delta must be strictly between 0 and 1"):
        certify.weighted_loss_bound([0.0], [1.0], delta=delta)


# --------------------------------------------------------------------------- coverage


def draw_judged(rng, *, true_rate, audit_rate, fractional, traffic=4000, held_share=0.3):
    """One window of simulated traffic, judged as Gatehouse judges it: held outputs always
    (p = 1), delivered ones audited at ``audit_rate``. The held stratum's error is 1.5 x the
    true rate and the delivered stratum's makes the traffic's mean exactly ``true_rate``."""
    held = rng.random(traffic) < held_share
    delivered_rate = true_rate * (1 - 1.5 * held_share) / (1 - held_share)
    rate = np.where(held, 1.5 * true_rate, delivered_rate)
    if fractional:
        # Posteriors from Beta(0.5, 0.5 (1 - r) / r), whose mean is r.
        loss = rng.beta(0.5, 0.5 * (1 - rate) / rate)
    else:
        loss = (rng.random(traffic) < rate).astype(float)
    inclusion = np.where(held, 1.0, audit_rate)
    judged = rng.random(traffic) < inclusion
    return loss[judged], 1 / inclusion[judged]


COVERAGE_DRAWS = 400
COVERAGE_DELTA = 0.1


@pytest.mark.parametrize("fractional", [False, True], ids=["verdicts", "posteriors"])
@pytest.mark.parametrize("audit_rate", [0.05, 0.2])
@pytest.mark.parametrize("true_rate", [0.01, 0.03, 0.05])
def test_the_bound_covers_the_true_mean_in_all_but_delta_of_windows(
    true_rate, audit_rate, fractional
):
    rng = np.random.default_rng([int(true_rate * 1000), int(audit_rate * 100), fractional])
    misses = estimate_misses = 0
    ratios = []
    for _ in range(COVERAGE_DRAWS):
        losses, weights = draw_judged(
            rng, true_rate=true_rate, audit_rate=audit_rate, fractional=fractional
        )
        result = certify.weighted_loss_bound(losses, weights, delta=COVERAGE_DELTA)
        misses += result.bound < true_rate
        estimate_misses += result.estimate < true_rate
        ratios.append(result.bound / true_rate)
    slack = 3 * math.sqrt(COVERAGE_DELTA * (1 - COVERAGE_DELTA) / COVERAGE_DRAWS)
    assert misses / COVERAGE_DRAWS <= COVERAGE_DELTA + slack
    # The check has teeth: the plain estimate falls below the truth in a good share of them.
    assert estimate_misses / COVERAGE_DRAWS >= 0.3
    # And the bound is not vacuous: typically within a few times the truth (the audited
    # stratum at 5 % stands for 70 % of the traffic with about 140 outputs).
    assert np.median(ratios) <= (4.5 if audit_rate == 0.05 else 2.5)


def test_500_effective_outputs_at_a_true_error_of_1_percent_certify_5_percent():
    # Five failures in 500, by hand, and then 500 draws at a true rate of 0.01.
    five = np.r_[np.ones(5), np.zeros(495)]
    assert certify.weighted_loss_bound(five, ones(500), delta=DELTA).bound <= 0.05
    rng = np.random.default_rng(500)
    for weight in (1.0, 10.0):
        bounds = [
            certify.weighted_loss_bound(
                (rng.random(500) < 0.01).astype(float), np.full(500, weight), delta=DELTA
            ).bound
            for _ in range(300)
        ]
        assert np.mean(np.array(bounds) <= 0.05) >= 0.99


# --------------------------------------------------------------------------- widening


def test_replicates_split_delta_and_never_narrow_the_bound():
    n = 100
    rng = np.random.default_rng(11)
    point = rng.uniform(0.0, 0.1, n)
    # Every replicate below the point losses: the point bound, at delta / 2, stands.
    below = point * rng.uniform(0.0, 1.0, (40, n))
    widened = certify.weighted_loss_bound(point, ones(n), delta=DELTA, replicates=below)
    assert widened.bound == widened.sampling_bound
    clean = certify.weighted_loss_bound(
        np.zeros(n), ones(n), delta=DELTA, replicates=np.zeros((40, n))
    )
    assert clean.bound == pytest.approx(1 - (DELTA / 2) ** (1 / n), rel=1e-9)
    for _ in range(20):
        around = np.clip(point + rng.normal(0, 0.05, (40, n)), 0, 1)
        result = certify.weighted_loss_bound(point, ones(n), delta=DELTA, replicates=around)
        assert result.bound >= result.sampling_bound


def test_replicates_that_disagree_widen_the_bound_to_the_covering_rank():
    n = 100
    point = np.full(n, 0.05)
    # 40 replicates, half at 0.02 and half at 0.12 per output. k = ceil(0.975 x 41) = 40:
    # the largest, whose bound at delta / 2 is that of a mean of 0.12 (k = 12).
    replicates = np.r_[np.full((20, n), 0.02), np.full((20, n), 0.12)]
    result = certify.weighted_loss_bound(point, ones(n), delta=DELTA, replicates=replicates)
    assert result.bound == pytest.approx(hb_by_hand(0.12, n, DELTA / 2, 12), rel=1e-9)
    assert result.sampling_bound == pytest.approx(hb_by_hand(0.05, n, DELTA / 2, 5), rel=1e-9)
    assert result.bound > result.sampling_bound


def test_the_covering_rank_is_not_simply_the_largest():
    # 79 replicates, replicate j losing j / 200 on every output. k = ceil(0.975 x 80) = 78:
    # the 78th smallest is j = 77, a mean of 0.385 (38.5 over 100 outputs, Bentkus's k = 39).
    n = 100
    replicates = np.repeat((np.arange(79) / 200)[:, None], n, axis=1)
    result = certify.weighted_loss_bound(np.zeros(n), ones(n), delta=DELTA, replicates=replicates)
    assert result.bound == pytest.approx(hb_by_hand(0.385, n, DELTA / 2, 39), rel=1e-9)


def test_too_few_replicates_are_refused_and_say_how_many_are_needed():
    # Covering at delta / 2 = 0.025 needs ceil(0.975 (B + 1)) <= B, that is B >= 39.
    with pytest.raises(ValueError, match="at least 39 are needed"):
        certify.weighted_loss_bound(np.zeros(5), ones(5), replicates=np.zeros((38, 5)))
    certify.weighted_loss_bound(np.zeros(5), ones(5), replicates=np.zeros((39, 5)))
    with pytest.raises(ValueError, match=r"shape \(B, 5\)"):
        certify.weighted_loss_bound(np.zeros(5), ones(5), replicates=np.zeros((39, 4)))


# --------------------------------------------------------------------------- the search


def search(blocks, **options) -> certify.Certification:
    """``blocks``: (score, count, weight, bad, edit) rows; ``bad`` and ``edit`` are how many
    of the ``count`` outputs have loss 1 (the rest 0); ``edit`` defaults to ``bad``."""
    scores, weights, bad, edit = [], [], [], []
    for score, count, weight, bad_count, *edit_count in blocks:
        edit_count = edit_count[0] if edit_count else bad_count
        scores += [score] * count
        weights += [weight] * count
        bad += [1.0] * bad_count + [0.0] * (count - bad_count)
        edit += [1.0] * edit_count + [0.0] * (count - edit_count)
    return certify.certify_approve_threshold(scores, weights, bad, edit, **options)


def certified_at(threshold: float) -> certify.Certification:
    # Clean at the threshold, half failing just below it.
    return search([(threshold, 400, 1.0, 0), (round(threshold - 0.1, 1), 400, 1.0, 200)])


def test_when_every_candidate_passes_the_search_goes_down_to_the_bottom():
    # Enough clean outputs at 10.0 to test every candidate, and more at every score below.
    result = search([(10.0, 300, 1.0, 0)] + [(k / 10, 10, 1.0, 0) for k in range(100)])
    assert all(c.testable and c.passed for c in result.candidates)
    assert result.state is State.CERTIFIED
    assert result.threshold == 0.0
    assert result.certified.n == 1300
    # And the move goes down from the current 7.0, one step: never up.
    move = certify.smoothed_move(7.0, result, last_certified=7.0)
    assert move.new == pytest.approx(6.9)


def test_certified_evidence_is_that_of_the_lowest_passing_candidate():
    result = certified_at(7.3)
    assert (result.state, result.threshold) == (State.CERTIFIED, 7.3)
    assert (result.certified.threshold, result.certified.n) == (7.3, 400)
    assert result.certified.bad.estimate == 0.0
    assert result.certified.bad.bound == pytest.approx(1 - DELTA ** (1 / 400), rel=1e-9)
    assert result.stopped_at.threshold == 7.2
    assert result.stopped_at.bad.estimate == pytest.approx(0.25)


def test_a_top_stratum_where_every_output_fails_is_a_failure_not_nan():
    # 400 audited outputs at 9.8, every one bad, above thousands of clean ones.
    blocks = [(9.8, 400, 10.0, 400)] + [(k / 10, 100, 1.0, 0) for k in range(50, 98)]
    result = search(blocks)
    top = next(c for c in result.candidates if c.threshold == 9.8)
    assert top.testable and top.bad.bound == 1.0 and not top.passed
    assert not any(math.isnan(c.bad.bound) or math.isnan(c.edit.bound) for c in result.candidates)
    assert result.state is State.NOT_ATTAINABLE
    assert result.threshold is None and result.stopped_at.threshold == 9.8


def test_underpowered_when_no_candidate_has_enough_for_a_clean_record():
    # 250 clean outputs: a P(bad) budget of 0.01 needs 299.
    result = search([(9.0, 250, 1.0, 0)])
    assert result.state is State.UNDERPOWERED
    assert result.threshold is None and result.stopped_at is None
    assert not any(c.testable for c in result.candidates)
    assert math.ceil(result.needed_effective_n) == 299
    assert result.most_data.effective_n == pytest.approx(250)


def test_underpowered_when_the_first_testable_candidate_fails_within_budget():
    # One bad output in 300: an estimate of 0.0033, under 0.01, whose bound is not.
    result = search([(9.0, 300, 1.0, 1)])
    assert result.state is State.UNDERPOWERED
    assert result.stopped_at.threshold == 9.0
    assert result.stopped_at.bad.bound == pytest.approx(hb_by_hand(1 / 300, 300, DELTA, 1))
    assert result.stopped_at.bad.bound > 0.01


def test_not_attainable_reports_the_best_certifiable_error():
    # Every output at 9.0, 30 of 300 bad: 0.1 against a budget of 0.01.
    result = search([(9.0, 300, 1.0, 30)])
    assert result.state is State.NOT_ATTAINABLE
    assert result.stopped_at.threshold == 9.0
    # Alone at a budget equal to this bound, the P(bad) search passes 9.0 (the first
    # candidate with any outputs) and every candidate below, which hold the same 300.
    expected = hb_by_hand(0.1, 300, DELTA, 30)
    assert result.best_bad.error == pytest.approx(expected, rel=1e-9)
    assert result.best_bad.threshold == 0.0
    assert result.best_edit == result.best_bad
    move = certify.smoothed_move(7.0, result, last_certified=7.0)
    assert move.new == 7.0
    assert "Not attainable" in move.reason and f"{expected:.4f}" in move.reason


def test_the_best_certifiable_error_respects_the_order_of_testing():
    # 0.1 bad at 9.0, 0.3 from 8.0 down, 0.05 from 7.0 down (3,000 clean outputs at 7.0).
    # 7.0 has the smallest bound, but a search at that level tests 9.0 first and stops
    # there. The best that a search can certify is 9.0's bound: it passes 9.0 and 8.9 to 8.1
    # (the same 300 outputs) and stops at 8.0.
    result = search([(9.0, 300, 1.0, 30), (8.0, 300, 1.0, 150), (7.0, 3000, 1.0, 0)])
    bounds = {c.threshold: c.bad.bound for c in result.candidates}
    assert bounds[7.0] < bounds[9.0] < bounds[8.0]
    assert result.best_bad.error == pytest.approx(hb_by_hand(0.1, 300, DELTA, 30), rel=1e-9)
    assert result.best_bad.threshold == 8.1


def test_the_outcome_is_kept_as_plain_json():
    for result in (certified_at(7.3), search([(9.0, 100, 1.0, 0)]), search([(9.0, 300, 1.0, 30)])):
        kept = json.loads(json.dumps(result.as_dict(), allow_nan=False))
        assert kept["state"] == result.state.value
        assert kept["threshold"] == result.threshold


def test_an_estimate_exactly_at_the_budget_is_not_attainable():
    # 3 bad in 300 is exactly 0.01; 2.97 (three posteriors of 0.99) is just under.
    assert search([(9.0, 300, 1.0, 3)]).state is State.NOT_ATTAINABLE
    scores, weights = [9.0] * 300, [1.0] * 300
    losses = [0.99] * 3 + [0.0] * 297
    just_under = certify.certify_approve_threshold(scores, weights, losses, losses)
    assert just_under.stopped_at.bad.estimate < 0.01
    assert just_under.state is State.UNDERPOWERED


def test_a_bound_exactly_at_the_budget_passes_and_one_just_over_fails():
    blocks = [(9.0, 400, 1.0, 1)]
    bound = next(c for c in search(blocks, alpha_edit=0.5).candidates if c.threshold == 9.0)
    at = bound.bad.bound
    passing = search(blocks, alpha_bad=at, alpha_edit=0.5)
    assert (passing.state, passing.threshold) == (State.CERTIFIED, 0.0)
    failing = search(blocks, alpha_bad=float(np.nextafter(at, 0.0)), alpha_edit=0.5)
    assert failing.state is State.UNDERPOWERED and failing.stopped_at.threshold == 9.0


def test_the_edit_budget_has_the_same_boundary():
    blocks = [(9.0, 400, 1.0, 0, 4)]
    top = next(c for c in search(blocks).candidates if c.threshold == 9.0)
    at = top.edit.bound
    passing = search(blocks, alpha_edit=at)
    assert (passing.state, passing.threshold) == (State.CERTIFIED, 0.0)
    failing = search(blocks, alpha_edit=float(np.nextafter(at, 0.0)))
    assert failing.state is State.UNDERPOWERED and failing.stopped_at.threshold == 9.0


def test_testable_starts_exactly_at_the_minimum_effective_sample():
    # Both budgets at 0.05: 59 clean outputs can be tested (and pass), 58 cannot.
    budgets = {"alpha_bad": 0.05, "alpha_edit": 0.05}
    assert search([(9.0, 59, 1.0, 0)], **budgets).state is State.CERTIFIED
    assert search([(9.0, 58, 1.0, 0)], **budgets).state is State.UNDERPOWERED


def test_which_candidates_are_tested_never_depends_on_the_losses():
    rng = np.random.default_rng(5)
    scores = np.round(rng.uniform(0, 10, 3000), 1)
    weights = np.where(scores >= 7, 10.0, 1.0)
    flags = set()
    for losses in (np.zeros(3000), np.ones(3000), rng.random(3000)):
        result = certify.certify_approve_threshold(scores, weights, losses, losses)
        flags.add(tuple((c.testable, c.effective_n) for c in result.candidates))
    assert len(flags) == 1


def test_each_budget_can_stop_the_search():
    # Clean on P(bad) throughout; 80 of the 400 just below the top block need an edit, 0.1
    # of the 800 at 7.9 and above.
    blocks = [(8.0, 400, 1.0, 0, 0), (7.9, 400, 1.0, 0, 80)]
    result = search(blocks)
    assert (result.state, result.threshold) == (State.CERTIFIED, 8.0)
    assert result.stopped_at.threshold == 7.9
    assert result.stopped_at.bad.bound <= 0.01
    assert result.stopped_at.edit.bound > 0.05


# --------------------------------------------------------------------------- simulated worlds


HELD_BELOW, AUDIT_RATE = 7.0, 0.1


def p_bad(score):
    return 0.1 * np.exp(-0.5 * score)


def true_error_above(threshold: float, scale: float = 1.0) -> float:
    """The traffic's mean of scale x 0.1 e^(-s / 2) over scores uniform on [t, 10]."""
    if threshold >= 10:
        return 0.0
    area = 0.2 * (math.exp(-0.5 * threshold) - math.exp(-5))
    return scale * area / (10 - threshold)


def world_history(rng, traffic=20_000):
    """Scores uniform on [0, 10], held below 7 (p = 1), audited at 10 % above. P(bad) falls
    with the score; P(edit or bad) is four times it."""
    scores = np.round(rng.uniform(0, 10, traffic), 2)
    inclusion = np.where(scores < HELD_BELOW, 1.0, AUDIT_RATE)
    judged = rng.random(traffic) < inclusion
    scores, inclusion = scores[judged], inclusion[judged]
    draw = rng.random(len(scores))
    bad = (draw < p_bad(scores)).astype(float)
    edit = (draw < 4 * p_bad(scores)).astype(float)
    return scores, 1 / inclusion, bad, edit


def test_the_search_keeps_its_guarantee_on_simulated_traffic():
    rng = np.random.default_rng(2026)
    histories, delta = 150, 0.1
    chosen = [
        certify.certify_approve_threshold(*world_history(rng), delta=delta).threshold
        for _ in range(histories)
    ]
    violations = sum(
        t is not None and (true_error_above(t) > 0.01 or true_error_above(t, 4) > 0.05)
        for t in chosen
    )
    assert violations / histories <= delta + 3 * math.sqrt(delta * (1 - delta) / histories)
    # Not vacuous: most histories certify a threshold, and the oracle's (the lowest whose
    # tails are within both budgets) is 1.8.
    assert sum(t is not None for t in chosen) >= 0.6 * histories
    assert min(t for t in chosen if t is not None) < 4.0


def test_a_larger_budget_never_certifies_a_higher_threshold_here():
    # In this world a larger budget only adds candidates that pass; the module docstring says
    # why that is not so for every data set.
    for seed in range(6):
        data = world_history(np.random.default_rng(seed))
        for budget in ("alpha_bad", "alpha_edit"):
            other = "alpha_edit" if budget == "alpha_bad" else "alpha_bad"
            levels = (0.006, 0.01, 0.015, 0.02, 0.03, 0.05)
            found = [
                certify.certify_approve_threshold(*data, **{budget: a, other: 0.5}).threshold
                for a in levels
            ]
            heights = [math.inf if t is None else t for t in found]
            assert heights == sorted(heights, reverse=True), (seed, budget, found)


def test_replicates_widen_the_search_and_must_come_in_pairs():
    data = world_history(np.random.default_rng(3))
    _, _, bad, edit = data
    plain = certify.certify_approve_threshold(*data, delta=0.1)
    same = certify.certify_approve_threshold(
        *data,
        delta=0.1,
        replicates_bad=np.tile(bad, (19, 1)),
        replicates_edit=np.tile(edit, (19, 1)),
    )
    rng = np.random.default_rng(4)
    noisy_bad = np.clip(bad + rng.uniform(0, 0.02, (19, len(bad))), 0, 1)
    noisy_edit = np.maximum(noisy_bad, edit)
    noisy = certify.certify_approve_threshold(
        *data, delta=0.1, replicates_bad=noisy_bad, replicates_edit=noisy_edit
    )
    for p, s, n in zip(plain.candidates, same.candidates, noisy.candidates, strict=True):
        assert p.bad.bound <= s.bad.bound <= n.bad.bound
        assert s.bad.sampling_bound == n.bad.sampling_bound
    with pytest.raises(ValueError, match="together"):
        certify.certify_approve_threshold(*data, replicates_bad=np.tile(bad, (39, 1)))


def test_the_search_widens_each_candidate_by_the_covering_replicate():
    # 400 outputs at 9.0, every loss 0.01; replicate j has 0.01 + j / 1000 on every output.
    # With 79 replicates the covering rank at delta / 2 is 78 (j = 77: a mean of 0.087, a
    # sum of 34.8 over 400, Bentkus's k = 35); replicates all below the point losses leave
    # the point bound.
    n = 400
    scores, weights, losses = np.full(n, 9.0), ones(n), np.full(n, 0.01)
    above = np.repeat((0.01 + np.arange(79) / 1000)[:, None], n, axis=1)
    widened = certify.certify_approve_threshold(
        scores, weights, losses, losses, replicates_bad=above, replicates_edit=above
    )
    top = next(c for c in widened.candidates if c.threshold == 9.0)
    assert top.bad.bound == pytest.approx(hb_by_hand(0.087, n, DELTA / 2, 35), rel=1e-9)
    assert top.bad.sampling_bound == pytest.approx(hb_by_hand(0.01, n, DELTA / 2, 4), rel=1e-9)
    below = np.zeros((79, n))
    kept = certify.certify_approve_threshold(
        scores, weights, losses, losses, replicates_bad=below, replicates_edit=below
    )
    top = next(c for c in kept.candidates if c.threshold == 9.0)
    assert top.bad.bound == top.bad.sampling_bound


# --------------------------------------------------------------------------- smoothing


def test_a_certified_threshold_above_the_current_one_is_applied_at_once():
    move = certify.smoothed_move(5.0, certified_at(7.3), last_certified=5.0)
    assert (move.old, move.new) == (5.0, 7.3)
    assert "Raised" in move.reason and "7.3" in move.reason


def test_a_certified_threshold_below_is_approached_one_step_per_run():
    assert certify.smoothed_move(7.0, certified_at(5.0), last_certified=7.0).new == 6.9
    assert certify.smoothed_move(5.05, certified_at(5.0), last_certified=7.0).new == 5.0
    assert certify.smoothed_move(5.0, certified_at(5.0), last_certified=5.0).new == 5.0


def test_underpowered_goes_back_to_the_last_certified_value_or_holds():
    underpowered = search([(9.0, 100, 1.0, 0)])
    assert underpowered.state is State.UNDERPOWERED
    assert certify.smoothed_move(7.0, underpowered, last_certified=7.0).new == 7.0
    assert certify.smoothed_move(7.0, underpowered, last_certified=7.4).new == 7.4
    # Loosening stays one step per run even here.
    assert certify.smoothed_move(7.0, underpowered, last_certified=6.5).new == 6.9
    held = certify.smoothed_move(7.0, underpowered, last_certified=None)
    assert held.new == 7.0 and "Underpowered" in held.reason and "299 needed" in held.reason


def test_not_attainable_never_climbs():
    result = search([(9.0, 300, 1.0, 30)])
    for current in (3.0, 7.0, 9.5):
        assert certify.smoothed_move(current, result, last_certified=9.9).new == current


# --------------------------------------------------------------------------- the grid


@pytest.mark.parametrize(
    ("top", "bottom", "expected"),
    [
        # A ceiling between tenths, as the approve threshold less a gap can be.
        (7.15, 6.7, [7.15, 7.05, 6.95, 6.85, 6.75]),
        (9.95, 9.5, [9.95, 9.85, 9.75, 9.65, 9.55]),
        # Never below the bottom: (7.25 - 6.5) / 0.1 = 7.5 steps, so 7 of them.
        (7.25, 6.5, [7.25, 7.15, 7.05, 6.95, 6.85, 6.75, 6.65, 6.55]),
        (7.0, 7.0, [7.0]),
    ],
)
def test_the_grid_starts_at_the_top_even_between_tenths(top, bottom, expected):
    assert certify.grid(top, bottom).tolist() == expected


def test_the_search_starts_at_a_top_between_tenths():
    found = search([(9.0, 300, 1.0, 0)], top=9.95, bottom=8.9)
    expected = [9.95, 9.85, 9.75, 9.65, 9.55, 9.45, 9.35, 9.25, 9.15, 9.05, 8.95]
    assert [c.threshold for c in found.candidates] == expected
    assert found.threshold == 8.95
