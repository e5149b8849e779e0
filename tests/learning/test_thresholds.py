"""The guarded threshold policy (learning/statistics/thresholds.py) and the pieces it adds to
the certification: per-candidate weight ranges, headroom for the first tested candidate,
score strata in the label model, and rescoring in bulk.

Expected values are built by hand: blocks of outputs whose losses are 0 or 1, bounds taken
from ``certify.weighted_loss_bound`` on the subset by hand (itself tested against another
route in test_certify.py), scores from ``gating.scoring.score_output`` one at a time.
"""

import numpy as np
import pytest

from gating import scoring
from learning.statistics import certify, labels, thresholds
from learning.statistics.thresholds import State

DELTA = 0.05


def window(blocks) -> thresholds.Window:
    """``blocks``: (score, count, weight, bad, edit) rows; ``bad`` and ``edit`` are how many
    of the ``count`` outputs have loss 1 (the rest 0)."""
    scores, weights, bad, edit = [], [], [], []
    for score, count, weight, bad_count, edit_count in blocks:
        scores += [score] * count
        weights += [weight] * count
        bad += [1.0] * bad_count + [0.0] * (count - bad_count)
        edit += [1.0] * edit_count + [0.0] * (count - edit_count)
    return thresholds.Window(
        scores=np.array(scores),
        weights=np.array(weights),
        loss_bad=np.array(bad),
        loss_edit=np.array(edit),
    )


# --------------------------------------------------------------------------- rescoring


def test_scores_in_bulk_are_score_output_one_at_a_time():
    rng = np.random.default_rng(3)
    names = ("facts", "schema", "tone", "length")
    weights = np.array([2.5, 0.7, 0.0, 1.1])
    is_fact_check = np.array([True, False, False, False])
    n = 400
    reported = rng.random((n, 4)) < 0.9
    reported[:5] = False  # no validator reported: the validator term is 0
    passed = rng.random((n, 4)) < 0.8
    clarity, coherence = rng.random(n), rng.random(n)
    requires = rng.random(n) < 0.5
    history = [scoring.PairHistory(40, 38), scoring.PairHistory(40, 32), scoring.PairHistory()]
    pair = [history[i % 3] for i in range(n)]

    bulk = scoring.scores_many(
        reported=reported,
        passed=passed,
        weights=weights,
        is_fact_check=is_fact_check,
        input_clarity=clarity,
        coherence=coherence,
        requires_fact_check=requires,
        bonus=np.array([scoring.task_accuracy_bonus(p) for p in pair]),
    )

    one_by_one = [
        scoring.score_output(
            validators=[
                scoring.ValidatorOutcome(names[j], bool(passed[i, j]), weights[j], is_fact_check[j])
                for j in range(4)
                if reported[i, j]
            ],
            input_clarity=float(clarity[i]),
            coherence=float(coherence[i]),
            requires_fact_check=bool(requires[i]),
            pair=pair[i],
            policy=scoring.GatePolicy(task_type_reviewed=100),
        ).score
        for i in range(n)
    ]
    assert bulk == pytest.approx(one_by_one, abs=1e-12)
    assert bulk.max() == 10.0  # the bonus pushes some over the top: clamped


# --------------------------------------------------------------------------- strata


def test_each_stratum_has_its_own_prior_at_the_same_score():
    # Two task types, every output scoring 9.0 and judged by a perfect reviewer (gold): in
    # stratum 0 one output in ten is bad, in stratum 1 one in two. Pooled, both get the
    # mixture; by stratum, each its own rate, drawn a little toward the pooled one.
    n = 400
    scores = np.full(2 * n, 9.0)
    stratum = np.repeat([0, 1], n)
    bad = np.r_[np.arange(n) % 10 == 0, np.arange(n) % 2 == 0]
    gold = {i: ("bad" if bad[i] else "good") for i in range(2 * n)}
    no_verdicts = ([], [], [])

    pooled = labels.fit_label_model(labels.label_data(scores, *no_verdicts, gold=gold))
    split = labels.fit_label_model(
        labels.label_data(scores, *no_verdicts, gold=gold, strata=stratum)
    )

    band = int(9.0 / 0.25)
    bands = len(labels.DEFAULT_BAND_EDGES) - 1
    assert pooled.band_prior[band, labels.BAD] == pytest.approx(0.3, abs=0.01)
    # (40 + 20 x 0.3) / (400 + 20) and (200 + 20 x 0.3) / 420: counts plus the stratum
    # pseudo-count's pull toward the pooled band.
    k = labels.STRATUM_PSEUDOCOUNT
    assert split.band_prior[band, labels.BAD] == pytest.approx((40 + k * 0.3) / (n + k), abs=0.01)
    assert split.band_prior[bands + band, labels.BAD] == pytest.approx(
        (200 + k * 0.3) / (n + k), abs=0.01
    )


def test_one_stratum_is_the_pooled_model():
    rng = np.random.default_rng(1)
    scores = rng.uniform(0, 10, 300)
    items = np.r_[np.arange(300), np.arange(0, 300, 3)]
    reviewers = rng.integers(0, 3, len(items))
    given = np.array(labels.LABELS)[rng.integers(0, 3, len(items))]
    plain = labels.fit_label_model(labels.label_data(scores, items, reviewers, given))
    one = labels.fit_label_model(
        labels.label_data(scores, items, reviewers, given, strata=np.zeros(300, dtype=int))
    )
    np.testing.assert_allclose(one.posterior, plain.posterior)


@pytest.mark.parametrize("strata", [[0.5] * 3, [-1, 0, 0], [0, 0]])
def test_bad_strata_are_refused(strata):
    with pytest.raises(ValueError, match="strata"):
        labels.label_data([1.0, 2.0, 3.0], [], [], [], strata=np.array(strata))


# --------------------------------------------------------------------------- certification


def test_each_candidate_bounds_with_its_own_largest_weight():
    # Audits at 25 % (weight 4) above 9.0, a sparse stratum at 2 % (weight 50) below it.
    w = window([(9.5, 800, 4.0, 0, 8), (8.0, 40, 50.0, 0, 10)])
    result = certify.certify_approve_threshold(
        w.scores, w.weights, w.loss_bad, w.loss_edit, alpha_bad=0.05, alpha_edit=0.1
    )
    at_9 = next(c for c in result.candidates if c.threshold == 9.0)
    top = w.scores >= 9.0
    by_hand = certify.weighted_loss_bound(w.loss_edit[top], w.weights[top], max_weight=4.0)
    assert at_9.edit.bound == pytest.approx(by_hand.bound)
    # With the design's largest weight given for all, the same candidate is looser.
    fixed = certify.certify_approve_threshold(
        w.scores,
        w.weights,
        w.loss_bad,
        w.loss_edit,
        alpha_bad=0.05,
        alpha_edit=0.1,
        max_weight=50.0,
    )
    assert next(c for c in fixed.candidates if c.threshold == 9.0).edit.bound > by_hand.bound


def test_headroom_tests_only_candidates_with_room_for_some_loss():
    needed = certify.minimum_effective_sample(0.01 / 2, DELTA)
    just = int(np.ceil(needed))
    w = window([(9.9, just - 1, 1.0, 0, 0), (9.8, 1, 1.0, 0, 0), (9.0, 2000, 1.0, 0, 0)])
    plain = certify.certify_approve_threshold(w.scores, w.weights, w.loss_bad, w.loss_edit)
    roomy = certify.certify_approve_threshold(
        w.scores, w.weights, w.loss_bad, w.loss_edit, headroom=2.0
    )
    tested = {c.threshold for c in roomy.candidates if c.testable}
    assert 9.9 not in tested and 9.8 in tested
    assert roomy.needed_effective_n == pytest.approx(needed)
    assert plain.needed_effective_n == pytest.approx(certify.minimum_effective_sample(0.01, DELTA))


# --------------------------------------------------------------------------- approve


def test_not_attainable_holds_the_approve_threshold_and_says_the_best():
    # Every score has a 20 % edit rate: no threshold can be certified at 5 %.
    w = window([(s / 10, 300, 1.0, 0, 60) for s in range(60, 101)])
    _, approve = thresholds.guarded(
        w, review=4.0, approve=7.0, budgets=thresholds.Budgets(), last_certified=None
    )
    assert approve.state == State.NOT_ATTAINABLE
    assert approve.new == approve.old == 7.0
    assert "Not attainable" in approve.reason and "can be certified at" in approve.reason


def test_a_tiny_budget_is_found_not_attainable_before_anything_is_testable():
    # alpha_edit = 0.005 needs ~1,470 clean outputs at the top; there are 500 at each score,
    # 2 % of them needing an edit. Against the looser alpha_bad = 0.01 (~370 needed), the
    # top candidate has data enough to show the edit rate four times over budget.
    w = window([(s / 10, 500, 1.0, 0, 10) for s in range(90, 101)])
    budgets = thresholds.Budgets(alpha_edit=0.005)
    result = certify.certify_approve_threshold(
        w.scores, w.weights, w.loss_bad, w.loss_edit, alpha_edit=0.005
    )
    assert not any(c.testable for c in result.candidates[:1])
    (_, approve) = thresholds.guarded(
        w, review=4.0, approve=9.0, budgets=budgets, last_certified=None
    )
    assert approve.state == State.NOT_ATTAINABLE
    assert approve.new == 9.0
    # With a clean record the same outputs certify the budget from 9.8 (1,500 of them) all
    # the way down (nothing scores below 9.0): the threshold is lowered, by one step.
    clean = window([(s / 10, 500, 1.0, 0, 0) for s in range(90, 101)])
    (_, certified) = thresholds.guarded(
        clean, review=4.0, approve=9.0, budgets=budgets, last_certified=None
    )
    assert certified.state == State.CERTIFIED
    assert certified.evidence["threshold"] == 0.0
    assert certified.new == pytest.approx(8.9)


def test_a_budget_missed_low_down_but_met_higher_up_on_thin_data_is_underpowered():
    # 100 clean outputs at 9.8 (enough for the 5 % budget's clean record, ~70, not the 1 %
    # one's, ~370); 2,000 at 9.0 needing an edit one time in ten. The first tested
    # candidate (9.0) is out of reach, but 9.8 only lacks data: underpowered.
    w = window([(9.8, 100, 1.0, 0, 0), (9.0, 2000, 1.0, 0, 200)])
    result = certify.certify_approve_threshold(w.scores, w.weights, w.loss_bad, w.loss_edit)
    assert result.stopped_at.threshold == 9.0 and result.stopped_at.beyond_reach
    assert result.state == State.UNDERPOWERED
    move = certify.smoothed_move(9.0, result, last_certified=None)
    assert "higher thresholds are within it" in move.reason and move.new == 9.0
    # Without the clean outputs above, nothing is within reach anywhere.
    low = window([(9.0, 2000, 1.0, 0, 200)])
    result = certify.certify_approve_threshold(low.scores, low.weights, low.loss_bad, low.loss_edit)
    assert result.state == State.NOT_ATTAINABLE


def test_certified_tightens_at_once_and_loosens_by_a_step():
    clean_top = [(9.6, 3000, 1.0, 0, 0), (9.5, 3000, 1.0, 30, 900)]
    w = window(clean_top)
    (_, up) = thresholds.guarded(
        w, review=4.0, approve=7.0, budgets=thresholds.Budgets(), last_certified=None
    )
    assert up.state == State.CERTIFIED
    assert up.new == 9.6
    (_, down) = thresholds.guarded(
        window([(9.6, 3000, 1.0, 0, 0), (9.0, 3000, 1.0, 0, 0)]),
        review=4.0,
        approve=9.6,
        budgets=thresholds.Budgets(),
        last_certified=9.6,
    )
    assert down.state == State.CERTIFIED
    assert down.new == pytest.approx(9.5)


def test_underpowered_goes_back_to_the_last_certified_and_never_climbs():
    w = window([(9.8, 20, 1.0, 0, 0)])
    (_, held) = thresholds.guarded(
        w, review=4.0, approve=9.0, budgets=thresholds.Budgets(), last_certified=None
    )
    assert held.state == State.UNDERPOWERED and held.new == 9.0
    (_, back) = thresholds.guarded(
        w, review=4.0, approve=9.0, budgets=thresholds.Budgets(), last_certified=9.4
    )
    assert back.new == 9.4


@pytest.mark.parametrize(
    ("state", "expected"),
    [(State.UNDERPOWERED, 0.2), (State.CERTIFIED, 0.02), (State.NOT_ATTAINABLE, 0.02)],
)
def test_audits_rise_to_the_budget_only_while_underpowered(state, expected):
    assert thresholds.audit_rate(state, 0.02, budget=0.2) == expected
    assert thresholds.audit_rate(state, 0.3, budget=0.2) == 0.3  # an admin's higher rate stays


# --------------------------------------------------------------------------- review


def band_window(rows):
    """(score, count, bad) rows, every output judged with weight 1."""
    return window([(s, n, 1.0, b, b) for s, n, b in rows])


def test_warning_band_within_budget_with_a_bad_slice_below_holds():
    # Warnings (4.0 to 7.0) are 5 % bad; the held outputs just below 4.0 are 60 % bad, and
    # far below, a clean tail. The threshold stays: the clean tail never pulls it down.
    w = band_window([(5.0, 2000, 100), (3.8, 400, 240), (1.0, 4000, 0)])
    p = thresholds.warning_band_move(w, review=4.0, approve=7.0, alpha=0.25, delta=DELTA)
    assert p.state == State.CERTIFIED
    assert p.new == 4.0


def test_warning_band_within_budget_with_a_clean_slice_below_lowers_one_step():
    w = band_window([(5.0, 2000, 100), (3.8, 400, 8)])
    p = thresholds.warning_band_move(w, review=4.0, approve=7.0, alpha=0.25, delta=DELTA)
    assert p.new == pytest.approx(3.9)


def test_warning_band_over_budget_rises_at_once_to_the_lowest_band_within():
    # 6.5s: 5 % bad; 5.0s: 90 % bad. Any band from 5.1 up holds only the 6.5s, within 25 %;
    # from 5.0 down the 5.0s join it.
    w = band_window([(6.5, 2000, 100), (5.0, 2000, 1800)])
    p = thresholds.warning_band_move(w, review=4.0, approve=7.0, alpha=0.25, delta=DELTA)
    assert p.state == State.CERTIFIED
    assert p.new == pytest.approx(5.1)


def test_warning_band_that_no_band_can_keep_in_budget_holds_what_is_not_approved():
    w = band_window([(6.95, 2000, 1000), (5.0, 2000, 1000)])
    p = thresholds.warning_band_move(w, review=4.0, approve=7.0, alpha=0.25, delta=DELTA)
    assert p.state == State.NOT_ATTAINABLE
    assert p.new == pytest.approx(6.9)


def test_warning_band_over_budget_with_only_thin_bands_above_tightens_a_step():
    # The band is 90 % bad; the narrowest band with data enough to test (the 15 outputs at
    # 6.95, 3 of them bad) is within 25 % by its estimate, not by its bound: one step up.
    w = band_window([(6.95, 15, 3), (5.0, 2000, 1800)])
    first = certify.weighted_loss_bound(np.r_[np.ones(3), np.zeros(12)], np.ones(15))
    assert first.estimate < 0.25 < first.bound
    p = thresholds.warning_band_move(w, review=4.0, approve=7.0, alpha=0.25, delta=DELTA)
    assert p.state == State.UNDERPOWERED
    assert p.new == pytest.approx(4.1)


def test_warning_band_with_too_few_judged_holds():
    w = band_window([(5.0, 10, 0)])
    p = thresholds.warning_band_move(w, review=4.0, approve=7.0, alpha=0.25, delta=DELTA)
    assert p.state == State.UNDERPOWERED and p.new == 4.0


def test_an_empty_warning_band_still_comes_down_over_clean_held_outputs():
    # The review threshold sits just below the approve threshold: no warnings at all. The
    # held outputs just below it are 2 % bad: it comes down a step, still underpowered.
    w = band_window([(6.7, 400, 8), (9.5, 1000, 0)])
    p = thresholds.warning_band_move(w, review=6.9, approve=7.0, alpha=0.25, delta=DELTA)
    assert p.state == State.UNDERPOWERED
    assert p.new == pytest.approx(6.8)
    # Had they been 60 % bad, it would hold.
    w = band_window([(6.7, 400, 240), (9.5, 1000, 0)])
    p = thresholds.warning_band_move(w, review=6.9, approve=7.0, alpha=0.25, delta=DELTA)
    assert p.new == 6.9


def test_constrain_keeps_each_thresholds_state():
    review = thresholds.Proposal("review", 6.9, 7.0, "up", {}, State.CERTIFIED)
    approve = thresholds.Proposal("approve", 7.0, 6.9, "down", {}, State.UNDERPOWERED)
    final = thresholds.constrain([review, approve], pins={"review": False, "approve": False})
    assert final["approve"].new == pytest.approx(7.1)
    assert final["approve"].state == State.UNDERPOWERED
    assert final["review"].state == State.CERTIFIED
