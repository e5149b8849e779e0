"""The guarded threshold policy (learning/statistics/thresholds.py) and the pieces it adds to
the certification: per-candidate weight ranges, headroom for the first tested candidate,
score strata in the label model, and rescoring in bulk.

Expected values are built by hand: blocks of outputs whose losses are 0 or 1, bounds taken
from ``certify.weighted_loss_bound`` on the subset by hand (itself tested against another
route in test_certify.py), scores from ``gating.scoring.score_output`` one at a time.
"""

import math

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
    # The bonus lifts many (those of the 38-of-40 pair above 8.5), none to the cap.
    assert 9.9 < bulk.max() < 10.0


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
    # Clean at 9.6; three in ten needing an edit one grid step below it, at 9.58.
    clean_top = [(9.6, 3000, 1.0, 0, 0), (9.58, 3000, 1.0, 30, 900)]
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
    # Warnings (4.0 to 7.0) are 5 % bad; the held outputs just below 4.0 are 75 % bad, and
    # far below, a clean tail. The threshold stays: the clean tail never pulls it down.
    w = band_window([(5.0, 2000, 100), (3.8, 400, 300), (1.0, 4000, 0)])
    p = thresholds.warning_band_move(w, review=4.0, approve=7.0, alpha=0.25, delta=DELTA)
    assert p.state == State.CERTIFIED
    assert p.new == 4.0


def test_warning_band_within_budget_with_a_clean_slice_below_lowers_one_step():
    w = band_window([(5.0, 2000, 100), (3.8, 400, 8)])
    p = thresholds.warning_band_move(w, review=4.0, approve=7.0, alpha=0.25, delta=DELTA)
    assert p.new == pytest.approx(3.9)


def test_a_slice_a_third_bad_comes_down_while_the_warnings_stay_within_budget():
    # Warnings 5 % bad; held outputs just below 35 % bad, over the band's budget of 25 % but
    # under the slice's cap. Delivered, they leave the warnings 10 % bad: a step down.
    w = band_window([(5.0, 2000, 100), (3.8, 400, 140)])
    below, joined = bound_of(w, 3.5, 4.0), bound_of(w, 3.5, 7.0)
    assert 0.25 < below.bound < 0.5 and joined.bound < 0.25
    p = thresholds.warning_band_move(w, review=4.0, approve=7.0, alpha=0.25, delta=DELTA)
    assert p.state == State.CERTIFIED
    assert p.new == pytest.approx(3.9)
    assert "at most 67% bad" in p.reason


def test_a_slice_a_third_bad_stays_held_where_it_would_break_the_warnings_budget():
    # Warnings 20 % bad; three times as many held outputs just below, 35 % bad. Delivered,
    # the warnings would be 31 % bad.
    w = band_window([(5.0, 400, 80), (3.8, 1200, 420)])
    assert bound_of(w, 3.5, 7.0).estimate > 0.25
    p = thresholds.warning_band_move(w, review=4.0, approve=7.0, alpha=0.25, delta=DELTA)
    assert p.state == State.CERTIFIED
    assert p.new == 4.0


@pytest.mark.parametrize(
    ("bad", "alpha", "expected"),
    [(1200, 0.25, 3.9), (1500, 0.25, 4.0), (1500, 0.8, 3.9)],
)
def test_a_slice_comes_down_only_if_at_most_two_in_three_bad(bad, alpha, expected):
    # Held outputs just below, 60 % bad (bound about 0.62), come down under a warnings'
    # budget of 25 %, the warnings staying 12 % bad; 75 % bad, they stay held however clean
    # the warnings, unless an admin's budget for the warnings is higher still (80 %): the
    # slice's cap is then that budget, and they are within it.
    w = band_window([(5.0, 8000, 0), (3.8, 2000, bad)])
    assert bound_of(w, 3.5, 7.0).bound < 0.25
    p = thresholds.warning_band_move(w, review=4.0, approve=7.0, alpha=alpha, delta=DELTA)
    assert p.new == pytest.approx(expected)


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
    # Had they been 75 % bad, it would hold.
    w = band_window([(6.7, 400, 300), (9.5, 1000, 0)])
    p = thresholds.warning_band_move(w, review=6.9, approve=7.0, alpha=0.25, delta=DELTA)
    assert p.new == 6.9


def test_constrain_keeps_each_thresholds_state():
    review = thresholds.Proposal("review", 6.9, 7.0, "up", {}, State.CERTIFIED)
    approve = thresholds.Proposal("approve", 7.0, 6.9, "down", {}, State.UNDERPOWERED)
    final = thresholds.constrain([review, approve], pins={"review": False, "approve": False})
    assert final["approve"].new == pytest.approx(7.1)
    assert final["approve"].state == State.UNDERPOWERED
    assert final["review"].state == State.CERTIFIED


# --------------------------------------------------------------------------- word for word
#
# Each proposal whole: its threshold, state, reason and evidence. The bounds are
# ``certify.weighted_loss_bound`` on the outputs of each band picked by hand; the sample
# needed is ln(delta) / ln(1 - alpha), written out.

BUDGET_95 = "P(bad) among warnings <= 0.25 with 95% confidence"
# ln(0.05) / ln(0.75) = 10.4133: 11 effective outputs needed, 10.41 recorded.
NEEDED_95 = math.log(0.05) / math.log(0.75)


def bound_of(w, low, high, delta=DELTA, max_weight=None):
    """The bound on P(bad) of the outputs scoring in [low, high), by hand."""
    pick = (w.scores >= low) & (w.scores < high)
    replicates = None if w.replicates_bad is None else w.replicates_bad[:, pick]
    return certify.weighted_loss_bound(
        w.loss_bad[pick], w.weights[pick], delta=delta, replicates=replicates, max_weight=max_weight
    )


def evidence_of(w, *, band, release, alpha=0.25, delta=DELTA, needed=NEEDED_95, **kwargs):
    """The evidence recorded for the band [band[0], band[1]) and the slice below."""
    return {
        "alpha": alpha,
        "delta": delta,
        "needed_effective_n": round(needed, 2),
        "band": {"from": band[0], "to": band[1], **bound_of(w, *band, delta, **kwargs).as_dict()},
        "release": {
            "from": release[0],
            "to": release[1],
            **bound_of(w, *release, delta, **kwargs).as_dict(),
        },
        # The warnings as they would be with the slice below delivered.
        "joined": {
            "from": release[0],
            "to": band[1],
            **bound_of(w, release[0], band[1], delta, **kwargs).as_dict(),
        },
    }


def review_proposal(new, state, reason, evidence, old=4.0):
    return thresholds.Proposal("review", old, new, reason, evidence, state)


def test_an_empty_band_over_a_clean_slice_says_why_it_comes_down():
    w = band_window([(6.7, 400, 8), (9.5, 1000, 0)])
    below = bound_of(w, 6.4, 6.9)
    assert below.n == 400 and below.estimate == 0.02
    p = thresholds.warning_band_move(w, review=6.9, approve=7.0, alpha=0.25, delta=DELTA)
    assert p == review_proposal(
        6.8,
        State.UNDERPOWERED,
        f"Underpowered: 0 effective judged warnings, 11 needed to show {BUDGET_95}. "
        f"The held outputs within 0.5 below have P(bad) 0.0200 (bound {below.bound:.4f}): "
        "lowered by 0.1.",
        evidence_of(w, band=(6.9, 7.0), release=(6.9 - 0.5, 6.9)),
        old=6.9,
    )


def test_a_thin_band_says_how_many_outputs_it_lacks():
    w = band_window([(5.0, 10, 0)])
    p = thresholds.warning_band_move(w, review=4.0, approve=7.0, alpha=0.25, delta=DELTA)
    assert p == review_proposal(
        4.0,
        State.UNDERPOWERED,
        f"Underpowered: 10 effective judged warnings, 11 needed to show {BUDGET_95}. Held.",
        evidence_of(w, band=(4.0, 7.0), release=(3.5, 4.0)),
    )
    assert p.evidence["release"]["n"] == 0 and p.evidence["release"]["estimate"] is None


def test_a_band_within_budget_by_its_estimate_only_is_held():
    # 20 warnings, 4 bad: 0.2, within 0.25, but not by the bound on 20 outputs.
    w = band_window([(5.0, 20, 4)])
    band = bound_of(w, 4.0, 7.0)
    assert band.estimate == 0.2 < 0.25 < band.bound and band.effective_n > NEEDED_95
    p = thresholds.warning_band_move(w, review=4.0, approve=7.0, alpha=0.25, delta=DELTA)
    assert p == review_proposal(
        4.0,
        State.UNDERPOWERED,
        f"Underpowered: the warnings' P(bad) 0.2000 is within budget but its bound "
        f"{band.bound:.4f} is not; more audits of warnings may show it. Held.",
        evidence_of(w, band=(4.0, 7.0), release=(3.5, 4.0)),
    )


def test_a_band_at_exactly_its_budget_is_not_within_it():
    # 20 warnings, 5 bad: P(bad) is the budget itself, 0.25, so the band is over budget,
    # and no narrower band has data enough to test: not attainable.
    w = band_window([(5.0, 20, 5)])
    p = thresholds.warning_band_move(w, review=4.0, approve=7.0, alpha=0.25, delta=DELTA)
    assert p.state == State.NOT_ATTAINABLE
    assert p.new == 6.9


def test_a_raise_says_from_where_the_warnings_are_within_budget():
    w = band_window([(6.5, 2000, 100), (5.0, 2000, 1800)])
    band = bound_of(w, 4.0, 7.0)
    p = thresholds.warning_band_move(w, review=4.0, approve=7.0, alpha=0.25, delta=DELTA)
    assert p == review_proposal(
        5.1,
        State.CERTIFIED,
        f"The warnings' P(bad) 0.4750 (bound {band.bound:.4f}) is over {BUDGET_95}; from 5.1 "
        "up it is within. Raised from 4 at once.",
        evidence_of(w, band=(4.0, 7.0), release=(3.5, 4.0)),
    )


def test_not_attainable_says_what_is_held():
    w = band_window([(6.95, 2000, 1000), (5.0, 2000, 1000)])
    p = thresholds.warning_band_move(w, review=4.0, approve=7.0, alpha=0.25, delta=DELTA)
    assert p == review_proposal(
        6.9,
        State.NOT_ATTAINABLE,
        f"Not attainable: the warnings' P(bad) is 0.5000, over {BUDGET_95}, and no narrower "
        "band is within it. Raised to 6.9: what is not auto-approved is held.",
        evidence_of(w, band=(4.0, 7.0), release=(3.5, 4.0)),
    )


def test_a_narrowest_band_within_budget_by_its_estimate_only_says_so():
    w = band_window([(6.95, 15, 3), (5.0, 2000, 1800)])
    band, first = bound_of(w, 4.0, 7.0), bound_of(w, 6.9, 7.0)
    p = thresholds.warning_band_move(w, review=4.0, approve=7.0, alpha=0.25, delta=DELTA)
    assert p == review_proposal(
        4.1,
        State.UNDERPOWERED,
        f"The warnings' P(bad) {band.estimate:.4f} is over {BUDGET_95}; the narrowest band "
        f"with data enough to test (from 6.9) has P(bad) 0.2000, bounded only by "
        f"{first.bound:.4f}. Raised by 0.1.",
        evidence_of(w, band=(4.0, 7.0), release=(3.5, 4.0)),
    )


def test_a_narrowest_band_at_exactly_its_budget_is_not_attainable():
    # The first band tested (from 6.9: 20 outputs, 5 bad) has P(bad) 0.25, the budget
    # itself: not within it by its estimate either, so there is nothing to wait for.
    w = band_window([(6.95, 20, 5), (5.0, 2000, 1800)])
    p = thresholds.warning_band_move(w, review=4.0, approve=7.0, alpha=0.25, delta=DELTA)
    assert p.state == State.NOT_ATTAINABLE
    assert p.new == 6.9


def test_a_band_within_budget_over_a_clean_slice_says_both():
    w = band_window([(5.0, 2000, 100), (3.8, 400, 8)])
    band, below = bound_of(w, 4.0, 7.0), bound_of(w, 3.5, 4.0)
    p = thresholds.warning_band_move(w, review=4.0, approve=7.0, alpha=0.25, delta=DELTA)
    assert p == review_proposal(
        3.9,
        State.CERTIFIED,
        f"The warnings' P(bad) 0.0500 is bounded by {band.bound:.4f}. The held outputs within "
        f"0.5 below have P(bad) 0.0200 (bound {below.bound:.4f}): lowered by 0.1.",
        evidence_of(w, band=(4.0, 7.0), release=(3.5, 4.0)),
    )


def test_a_band_within_budget_over_a_slice_under_the_cap_says_all_three():
    w = band_window([(5.0, 2000, 100), (3.8, 400, 140)])
    band, below = bound_of(w, 4.0, 7.0), bound_of(w, 3.5, 4.0)
    joined = bound_of(w, 3.5, 7.0)
    p = thresholds.warning_band_move(w, review=4.0, approve=7.0, alpha=0.25, delta=DELTA)
    assert p == review_proposal(
        3.9,
        State.CERTIFIED,
        f"The warnings' P(bad) 0.0500 is bounded by {band.bound:.4f}. The held outputs within "
        f"0.5 below have P(bad) 0.3500 (bound {below.bound:.4f}), at most 67% bad, and with "
        f"them the warnings' P(bad) is bounded by {joined.bound:.4f}: lowered by 0.1.",
        evidence_of(w, band=(4.0, 7.0), release=(3.5, 4.0)),
    )


def test_a_band_within_budget_over_a_bad_slice_says_why_it_holds():
    w = band_window([(5.0, 2000, 100), (3.8, 400, 300), (1.0, 4000, 0)])
    band, below = bound_of(w, 4.0, 7.0, delta=0.1), bound_of(w, 3.5, 4.0, delta=0.1)
    joined = bound_of(w, 3.5, 7.0, delta=0.1)
    # Delivered, the slice would keep the warnings within budget; but it is 3 in 4 bad.
    assert joined.bound < 0.25 and below.estimate == 0.75
    p = thresholds.warning_band_move(w, review=4.0, approve=7.0, alpha=0.25, delta=0.1)
    assert p == review_proposal(
        4.0,
        State.CERTIFIED,
        f"The warnings' P(bad) 0.0500 is bounded by {band.bound:.4f}. Held: the outputs just "
        "below are not shown to be at most 67% bad with the warnings kept within "
        f"budget (400 effective, bound {below.bound:.4f}; with them, the warnings' bound "
        f"{joined.bound:.4f}).",
        evidence_of(
            w,
            band=(4.0, 7.0),
            release=(3.5, 4.0),
            delta=0.1,
            needed=math.log(0.1) / math.log(0.75),
        ),
    )
    assert band.bound != bound_of(w, 4.0, 7.0, delta=DELTA).bound


def test_the_budget_names_its_confidence():
    w = band_window([(5.0, 10, 0)])
    p = thresholds.warning_band_move(w, review=4.0, approve=7.0, alpha=0.2, delta=0.1)
    # ln(0.1) / ln(0.8) = 10.32: 11 needed.
    assert p.reason == (
        "Underpowered: 10 effective judged warnings, 11 needed to show P(bad) among warnings "
        "<= 0.2 with 90% confidence. Held."
    )
    assert p.evidence["needed_effective_n"] == 10.32


# --------------------------------------------------------------------------- boundaries


def test_outputs_at_the_approve_threshold_are_not_warnings():
    w = band_window([(5.0, 30, 0), (7.0, 500, 500)])
    p = thresholds.warning_band_move(w, review=4.0, approve=7.0, alpha=0.25, delta=DELTA)
    assert p.evidence["band"]["n"] == 30
    assert p.state == State.CERTIFIED and p.new == 4.0


def test_a_band_of_exactly_the_sample_needed_at_exactly_its_budget_is_within_it():
    # alpha is the clean record's bound on 30 outputs: then 30 outputs are exactly the
    # effective sample needed (ln(delta) / ln(1 - alpha) = 30), and a clean band of 30 is
    # bounded by exactly alpha, which is within it (bound <= alpha).
    alpha = certify.weighted_loss_bound(np.zeros(30), np.ones(30), delta=DELTA).bound
    assert certify.minimum_effective_sample(alpha, DELTA) == 30.0
    w = band_window([(5.0, 30, 0)])
    p = thresholds.warning_band_move(w, review=4.0, approve=7.0, alpha=alpha, delta=DELTA)
    assert p.state == State.CERTIFIED
    assert p.new == 4.0
    # The same 30 clean outputs just below the threshold are exactly enough to release.
    w = band_window([(5.0, 30, 0), (3.8, 30, 0)])
    p = thresholds.warning_band_move(w, review=4.0, approve=7.0, alpha=alpha, delta=DELTA)
    assert p.state == State.CERTIFIED
    assert p.new == pytest.approx(3.9)


def test_a_slice_of_exactly_the_sample_needed_at_exactly_its_budget_comes_down_alone():
    # Five warnings, all bad: too few to judge the band, and delivered with them the slice
    # would break the budget. The 30 clean outputs just below are exactly the sample needed
    # and bounded by exactly the budget: within it, they come down on their own.
    alpha = certify.weighted_loss_bound(np.zeros(30), np.ones(30), delta=DELTA).bound
    w = band_window([(5.0, 5, 5), (3.8, 30, 0)])
    assert bound_of(w, 3.5, 7.0).bound > alpha
    p = thresholds.warning_band_move(w, review=4.0, approve=7.0, alpha=alpha, delta=DELTA)
    assert p.state == State.UNDERPOWERED
    assert p.new == pytest.approx(3.9)


def test_warnings_joined_by_a_slice_to_exactly_the_sample_needed_at_exactly_the_budget():
    # 27 clean warnings, too few to judge; 3 clean outputs just below, over the budget alone
    # (bound 0.63) but under the slice's cap. With them the warnings are 30 clean outputs:
    # exactly the sample needed, bounded by exactly the budget, which is within it.
    alpha = certify.weighted_loss_bound(np.zeros(30), np.ones(30), delta=DELTA).bound
    w = band_window([(5.0, 27, 0), (3.8, 3, 0)])
    assert alpha < bound_of(w, 3.5, 4.0).bound < thresholds.RELEASE_MAX_BAD
    p = thresholds.warning_band_move(w, review=4.0, approve=7.0, alpha=alpha, delta=DELTA)
    assert p.state == State.UNDERPOWERED
    assert p.new == pytest.approx(3.9)


def test_a_slice_of_exactly_the_sample_its_cap_needs_at_exactly_the_cap_comes_down(
    monkeypatch,
):
    # The cap set to 3 clean outputs' bound (0.63): a slice of 3 clean outputs is exactly
    # the sample the cap needs and bounded by exactly the cap, which is within it.
    cap = certify.weighted_loss_bound(np.zeros(3), np.ones(3), delta=DELTA).bound
    monkeypatch.setattr(thresholds, "RELEASE_MAX_BAD", cap)
    w = band_window([(5.0, 2000, 100), (3.8, 3, 0)])
    assert bound_of(w, 3.5, 4.0).bound == cap
    assert bound_of(w, 3.5, 4.0).effective_n == certify.minimum_effective_sample(cap, DELTA)
    p = thresholds.warning_band_move(w, review=4.0, approve=7.0, alpha=0.25, delta=DELTA)
    assert p.state == State.CERTIFIED
    assert p.new == pytest.approx(3.9)


def test_a_narrower_band_of_exactly_the_sample_needed_is_tested_and_within_budget():
    # 30 clean outputs at 6.95, as above: each band from 6.9 to 5.1 holds exactly them, is
    # tested, and is within its budget; from 5.0 the 5.0s, half bad, join it.
    alpha = certify.weighted_loss_bound(np.zeros(30), np.ones(30), delta=DELTA).bound
    w = band_window([(6.95, 30, 0), (5.0, 2000, 1000)])
    p = thresholds.warning_band_move(w, review=4.0, approve=7.0, alpha=alpha, delta=DELTA)
    assert p.state == State.CERTIFIED
    assert p.new == pytest.approx(5.1)


def test_the_review_threshold_comes_down_to_zero_but_not_below():
    # The slice just below holds clean outputs. From 0.6, one step to 0.5; from 0.1, to
    # exactly 0.0; from 0.05, a step would go below 0: held.
    for review, expected in ((0.6, 0.5), (0.1, 0.0), (0.05, 0.05)):
        w = band_window([(review + 0.01, 100, 0), (review - 0.05, 100, 0)])
        p = thresholds.warning_band_move(w, review=review, approve=7.0, alpha=0.25, delta=DELTA)
        assert p.state == State.CERTIFIED
        assert p.new == pytest.approx(expected)
        # An empty band comes down the same way.
        w = band_window([(review - 0.05, 100, 0)])
        p = thresholds.warning_band_move(w, review=review, approve=7.0, alpha=0.25, delta=DELTA)
        assert p.state == State.UNDERPOWERED
        assert p.new == pytest.approx(expected)


def test_a_step_of_any_size():
    w = band_window([(5.0, 2000, 100), (3.8, 400, 8)])
    p = thresholds.warning_band_move(
        w, review=4.0, approve=7.0, alpha=0.25, delta=DELTA, max_step=0.3
    )
    assert p.new == 3.7
    assert p.reason.endswith("lowered by 0.3.")


def test_the_search_stops_at_the_first_band_over_budget():
    # From the top down: 6.9 to 6.1 hold nothing (skipped), 6.0 to 5.6 only the 6.0s
    # (5 % bad, within), from 5.5 the 5.5s (all bad) join: over, and the search stops
    # there, although from 5.0 the clean 5.0s bring the band back within budget. The 4.05s,
    # all bad, put the band from 4.0 over it.
    w = band_window([(6.0, 2000, 100), (5.5, 2000, 2000), (5.0, 20000, 0), (4.05, 20000, 20000)])
    p = thresholds.warning_band_move(w, review=4.0, approve=7.0, alpha=0.25, delta=DELTA)
    assert p.evidence["band"]["estimate"] > 0.25
    assert p.state == State.CERTIFIED
    assert p.new == pytest.approx(5.6)


def test_a_review_threshold_one_step_below_the_top_tests_the_top():
    # review 6.9, approve 7.1: the only candidate is 7.0, the top (approve - gap). The band
    # from 6.9 is over budget; from 7.0 it is within: raised there, certified.
    w = band_window([(7.05, 2000, 0), (6.95, 2000, 2000)])
    p = thresholds.warning_band_move(w, review=6.9, approve=7.1, alpha=0.25, delta=DELTA)
    assert p.state == State.CERTIFIED
    assert p.new == 7.0


def test_a_review_threshold_between_tenths_rises_to_the_lowest_band_within():
    # review 4.05: the candidates from the top, 6.9, are 6.9, 6.8, ..., 4.1; all are within
    # budget (the 6.0s, 5 % bad), while the band from 4.05 also holds the 4.07s, 90 % bad.
    # The lowest band within budget is the one from 4.1 (it was 4.2: the candidates stopped
    # a whole step above the review threshold). None below 4.05 is a candidate, though from
    # 4.0 the clean 4.02s would bring the band back within budget.
    w = band_window([(6.0, 2000, 100), (4.07, 2000, 1800), (4.02, 20000, 0)])
    p = thresholds.warning_band_move(w, review=4.05, approve=7.0, alpha=0.25, delta=DELTA)
    assert p.state == State.CERTIFIED
    assert p.new == pytest.approx(4.1)
    assert "from 4.1 up it is within" in p.reason


def test_the_warning_band_is_bounded_with_the_declared_design_weight():
    # Audited at one rate, every judged warning has weight 1; the design's largest weight,
    # declared as 4 (a stratum audited at 25 %), widens the bound, as it does the approve
    # threshold's (A2 in certify's docstring).
    plain = band_window([(5.0, 2000, 100), (3.8, 400, 8)])
    w = thresholds.Window(
        plain.scores, plain.weights, plain.loss_bad, plain.loss_edit, max_weight=4.0
    )
    p = thresholds.warning_band_move(w, review=4.0, approve=7.0, alpha=0.25, delta=DELTA)
    assert p.evidence == evidence_of(w, band=(4.0, 7.0), release=(3.5, 4.0), max_weight=4.0)
    assert p.evidence["band"]["bound"] > bound_of(w, 4.0, 7.0).as_dict()["bound"]


def replicated_window(blocks, replicates, shift, max_weight=None):
    """``window(blocks)`` with bootstrap replicates: replicate b adds ``shift * b / B`` to
    every loss (clipped at 1)."""
    w = window(blocks)
    steps = np.arange(replicates)[:, None] / replicates
    return thresholds.Window(
        scores=w.scores,
        weights=w.weights,
        loss_bad=w.loss_bad,
        loss_edit=w.loss_edit,
        replicates_bad=np.minimum(1.0, w.loss_bad + shift * steps),
        replicates_edit=np.minimum(1.0, w.loss_edit + 2 * shift * steps),
        max_weight=max_weight,
    )


def test_the_warning_band_is_widened_by_the_replicates():
    # 19 replicates, delta 0.1: half of it, 0.05, goes to the label model, whose bound is
    # the replicate at rank ceil(0.95 x 20) = 19, the largest; the sampling bound gets 0.05.
    w = replicated_window(
        [(5.0, 2000, 1.0, 100, 100), (3.8, 400, 1.0, 8, 8)], replicates=19, shift=0.05
    )
    p = thresholds.warning_band_move(w, review=4.0, approve=7.0, alpha=0.25, delta=0.1)
    assert p.evidence == evidence_of(
        w,
        band=(4.0, 7.0),
        release=(3.5, 4.0),
        delta=0.1,
        needed=math.log(0.05) / math.log(0.75),
    )
    band = p.evidence["band"]
    assert band["bound"] > band["sampling_bound"]
    assert p.new == pytest.approx(3.9)


def test_where_picks_every_column():
    w = replicated_window([(5.0, 2, 1.0, 1, 0), (9.0, 2, 2.0, 0, 2)], replicates=3, shift=0.3)
    w = thresholds.Window(
        w.scores, w.weights, w.loss_bad, w.loss_edit, w.replicates_bad, w.replicates_edit, 6.0
    )
    picked = w.where(np.array([False, True, True, False]))
    np.testing.assert_array_equal(picked.scores, [5.0, 9.0])
    np.testing.assert_array_equal(picked.weights, [1.0, 2.0])
    np.testing.assert_array_equal(picked.loss_bad, [0.0, 0.0])
    np.testing.assert_array_equal(picked.loss_edit, [0.0, 1.0])
    np.testing.assert_allclose(picked.replicates_bad, [[0.0, 0.0], [0.1, 0.1], [0.2, 0.2]])
    np.testing.assert_allclose(picked.replicates_edit, [[0.0, 1.0], [0.2, 1.0], [0.4, 1.0]])
    assert picked.max_weight == 6.0
    plain = window([(5.0, 2, 1.0, 1, 0)]).where(np.array([True, False]))
    assert plain.replicates_bad is None and plain.replicates_edit is None
    assert plain.max_weight is None


def test_a_window_refuses_columns_of_other_lengths():
    with pytest.raises(
        ValueError, match=r"^scores, weights and losses must have one entry per judged output$"
    ):
        thresholds.Window(np.zeros(2), np.ones(2), np.zeros(2), np.zeros(3))


# --------------------------------------------------------------------------- guarded


def test_guarded_hands_each_policy_its_budgets_replicates_design_weight_and_step():
    # A clean record from 9.0 up, budgets other than the defaults, delta 0.1 with 19
    # replicates, a declared design weight of 2 and steps of 0.3. The approve threshold is
    # certified all the way down and loosens from 9.6 by one step, to 9.3; the warnings,
    # clean, and the clean slice below 4.0 bring the review threshold down a step, to 3.7.
    w = replicated_window(
        [
            (9.6, 3000, 1.0, 0, 0),
            (9.0, 3000, 1.0, 0, 0),
            (5.0, 2000, 1.0, 0, 0),
            (3.8, 400, 1.0, 0, 0),
        ],
        replicates=19,
        shift=0.004,
        max_weight=2.0,
    )
    budgets = thresholds.Budgets(alpha_bad=0.02, alpha_edit=0.08, alpha_warning=0.3, delta=0.1)
    review, approve = thresholds.guarded(
        w, review=4.0, approve=9.6, budgets=budgets, last_certified=9.6, max_step=0.3
    )

    certification = certify.certify_approve_threshold(
        w.scores,
        w.weights,
        w.loss_bad,
        w.loss_edit,
        alpha_bad=0.02,
        alpha_edit=0.08,
        delta=0.1,
        replicates_bad=w.replicates_bad,
        replicates_edit=w.replicates_edit,
        max_weight=2.0,
        headroom=2.0,
        floor=4.0,
    )
    assert certification.state == State.CERTIFIED
    move = certify.smoothed_move(9.6, certification, last_certified=9.6, max_step=0.3)
    assert approve == thresholds.Proposal(
        "approve", 9.6, 9.3, move.reason, certification.as_dict(), State.CERTIFIED
    )
    assert move.reason.endswith("Lowered from 9.6 by at most 0.3.")
    assert review == thresholds.warning_band_move(
        w, review=4.0, approve=9.3, alpha=0.3, delta=0.1, max_step=0.3
    )
    assert review.new == 3.7 and review.state == State.CERTIFIED
    assert review.evidence["band"]["to"] == 9.3


def test_guarded_reads_not_attainable_only_above_the_review_threshold():
    # 2,000 outputs at 9.0, one in ten needing an edit, twice the 5 % budget, and nothing
    # scoring higher. The first tested candidate, 9.0, is out of reach. With the review
    # threshold at 4.0 an approve threshold of 9.0 was possible: not attainable. With the
    # review threshold at 9.0 it was not (approve must lie above review), and nothing above
    # 9.0 has data to test: underpowered, so the audits rise instead of the search giving up.
    w = window([(9.0, 2000, 1.0, 0, 200)])
    (_, low_review) = thresholds.guarded(
        w, review=4.0, approve=9.5, budgets=thresholds.Budgets(), last_certified=None
    )
    assert low_review.state == State.NOT_ATTAINABLE
    assert low_review.evidence["stopped_at"]["threshold"] == 9.0
    (_, high_review) = thresholds.guarded(
        w, review=9.0, approve=9.5, budgets=thresholds.Budgets(), last_certified=None
    )
    assert high_review.state == State.UNDERPOWERED
    assert high_review.new == 9.5
    assert high_review.reason.startswith(
        "Underpowered: the estimates are over budget at 9, which is not above the review "
        "threshold 9 and so could not be the approve threshold;"
    )


# --------------------------------------------------------------------------- constrain


def proposal(which, old, new, reason="why", state=State.CERTIFIED):
    return thresholds.Proposal(which, old, new, reason, {"which": which}, state)


def test_constrain_leaves_thresholds_a_gap_apart_alone():
    for review_new, approve_new in ((4.1, 6.9), (7.0, 7.1), (4.0, 4.1), (1.1, 1.2)):
        # 4.1 - 0.1 is 3.9999999999999996 in floating point, and 1.2 - 0.1 is
        # 1.0999999999999999: still exactly the gap.
        review = proposal("review", 4.0, review_new)
        approve = proposal("approve", 7.0, approve_new)
        for pins in ({"review": False, "approve": False}, {"approve": True}, {}):
            if pins.get("approve"):
                approve = proposal("approve", approve_new, approve_new)
            assert thresholds.constrain([review, approve], pins=pins) == {
                "review": review,
                "approve": approve,
            }


def test_a_pinned_threshold_that_would_move_is_held():
    review = proposal("review", 4.0, 4.1, "Lowered.", State.UNDERPOWERED)
    approve = proposal("approve", 7.0, 7.0, "Already there.")
    final = thresholds.constrain([review, approve], pins={"review": True, "approve": True})
    assert final == {
        "review": thresholds.Proposal(
            "review", 4.0, 4.0, "Held: pinned by an admin.", {"which": "review"}, "underpowered"
        ),
        "approve": approve,
    }
    # Unpinned, each moves.
    final = thresholds.constrain([review, approve], pins={"review": False, "approve": False})
    assert final == {"review": review, "approve": approve}


def test_the_review_threshold_is_kept_below_a_pinned_approve_threshold():
    review = proposal("review", 6.5, 7.2, "Raised.")
    approve = proposal("approve", 7.0, 7.5, "Raised.", State.UNDERPOWERED)
    final = thresholds.constrain([review, approve], pins={"review": False, "approve": True})
    assert final == {
        "review": thresholds.Proposal(
            "review",
            6.5,
            6.9,
            "Raised. Kept below the pinned approve threshold (7).",
            {"which": "review"},
            "certified",
        ),
        "approve": thresholds.Proposal(
            "approve", 7.0, 7.0, "Held: pinned by an admin.", {"which": "approve"}, "underpowered"
        ),
    }
    # A larger gap, by the admin's setting.
    final = thresholds.constrain([review, approve], pins={"approve": True}, min_gap=0.5)
    assert final["review"].new == 6.5


def test_the_approve_threshold_gives_way_upward():
    review = proposal("review", 6.9, 7.3, "Raised.")
    approve = proposal("approve", 7.0, 6.9, "Lowered.", State.UNDERPOWERED)
    final = thresholds.constrain([review, approve], pins={"review": False, "approve": False})
    assert final == {
        "review": review,
        "approve": thresholds.Proposal(
            "approve",
            7.0,
            7.4,
            "Lowered. Kept above the review threshold (7.3).",
            {"which": "approve"},
            "underpowered",
        ),
    }
    final = thresholds.constrain([review, approve], pins={}, min_gap=0.25)
    assert final["approve"].new == 7.55 and final["review"] == review


def test_at_the_top_of_the_scale_the_review_threshold_stops_below_it():
    review = proposal("review", 9.5, 10.0, "Raised.")
    approve = proposal("approve", 9.8, 9.8, "Held.")
    final = thresholds.constrain([review, approve], pins={"review": False, "approve": False})
    assert final == {
        "review": thresholds.Proposal(
            "review",
            9.5,
            9.9,
            "Raised. Kept below the approve threshold (10).",
            {"which": "review"},
            "certified",
        ),
        "approve": thresholds.Proposal(
            "approve",
            9.8,
            10.0,
            "Held. Kept above the review threshold (10).",
            {"which": "approve"},
            "certified",
        ),
    }
    # 9.95 + 0.1 is past the top too: the approve threshold stops at 10, the review one
    # at 9.9. A pinned review threshold stays where the admin put it.
    review = proposal("review", 9.95, 9.95, "Held.")
    final = thresholds.constrain([review, approve], pins={"review": True, "approve": False})
    assert final["review"] == review
    assert final["approve"].new == 10.0
    final = thresholds.constrain([review, approve], pins={})
    assert final["review"].new == 9.9
    # With a gap of 0.3, from 9.75: the approve threshold 10.0, the review one 9.7.
    review = proposal("review", 9.75, 9.75)
    final = thresholds.constrain([review, approve], pins={}, min_gap=0.3)
    assert (final["review"].new, final["approve"].new) == (9.7, 10.0)


# --------------------------------------------------------------------------- ADR-0003


def reviews(above: int, at: int = 0, changed: int = 0, review: float = 4.0):
    """``above`` approved unchanged above ``review``, ``at`` approved unchanged at exactly
    it, ``changed`` above it but not approved unchanged."""
    return (
        [thresholds.Judged(review + 1.0, True)] * above
        + [thresholds.Judged(review, True)] * at
        + [thresholds.Judged(review + 2.0, False)] * changed
    )


def test_adr0003_raises_the_review_threshold_above_90_percent():
    # 10 of 11 (91 %) approved unchanged above the threshold.
    judged = reviews(above=10, changed=1)
    evidence = {"n": 11, "approved_above_review": 10, "rate": 0.9091}
    assert thresholds.adr0003(judged, review=4.0, approve=7.0) == [
        thresholds.Proposal(
            "review",
            4.0,
            4.1,
            "91% of the last 48 h's reviews were approved above the threshold.",
            evidence,
        ),
        thresholds.Proposal("approve", 7.0, 7.0, "The ADR rule never moves it.", evidence),
    ]


def test_adr0003_holds_at_90_percent_or_less():
    # 9 of 10 above; the tenth approved at exactly the threshold, which is not above it.
    judged = reviews(above=9, at=1)
    evidence = {"n": 10, "approved_above_review": 9, "rate": 0.9}
    assert thresholds.adr0003(judged, review=4.0, approve=7.0) == [
        thresholds.Proposal(
            "review",
            4.0,
            4.0,
            "Held: 90% of the last 48 h's reviews were approved above the threshold (the rule "
            "raises it above 90 %).",
            evidence,
        ),
        thresholds.Proposal("approve", 7.0, 7.0, "The ADR rule never moves it.", evidence),
    ]


def test_adr0003_with_no_reviews_holds():
    review, approve = thresholds.adr0003([], review=4.0, approve=7.0)
    assert review.new == 4.0 and approve.new == 7.0
    assert review.evidence == {"n": 0, "approved_above_review": 0, "rate": 0.0}
    assert review.reason.startswith("Held: 0% of")


def test_adr0003_raises_by_one_step_from_anywhere():
    review, _ = thresholds.adr0003(reviews(above=3, review=6.2), review=6.2, approve=9.0)
    assert review.new == 6.3


# --------------------------------------------------------------------------- steps


@pytest.mark.parametrize(
    ("current", "target", "kwargs", "expected"),
    [
        (5.0, 7.0, {}, 5.1),  # up by at most 0.1
        (5.0, 4.0, {}, 4.9),  # down by at most 0.1
        (5.0, 5.05, {}, 5.05),  # within a step: there
        (5.0, 4.96, {}, 4.96),
        (1.0, 1.033333, {}, 1.0333),  # four places
        (5.0, 7.0, {"max_step": 0.5}, 5.5),
        (5.0, 3.0, {"max_step": 0.5}, 4.5),
        (0.1, 0.3, {"max_step": 0.2}, 0.3),  # 0.1 + 0.2 is 0.30000000000000004
    ],
)
def test_step_toward(current, target, kwargs, expected):
    assert thresholds.step_toward(current, target, **kwargs) == expected


# --------------------------------------------------------------------------- four places


def test_the_review_threshold_is_proposed_to_four_places():
    # An admin may set thresholds with more places; what the policy proposes has four.
    w = band_window([(9.5, 10, 0)])
    p = thresholds.warning_band_move(w, review=4.00004, approve=7.0, alpha=0.25, delta=DELTA)
    assert (p.old, p.new) == (4.00004, 4.0)
    # The top of the warning band, approve - gap, too: 7.00004 - 0.1 is 6.9.
    p = thresholds.warning_band_move(w, review=6.95, approve=7.00004, alpha=0.25, delta=DELTA)
    assert p.evidence["band"]["from"] == 6.9


def test_constrain_keeps_thresholds_to_four_places():
    # 6.90002 is above 7.00004 - 0.1 = 6.9 to four places: the approve threshold gives way
    # to 6.90002 + 0.1 = 7.0 to four places, and the review threshold is kept a gap below.
    final = thresholds.constrain(
        [proposal("review", 6.0, 6.90002), proposal("approve", 7.0, 7.00004)], pins={}
    )
    assert (final["review"].new, final["approve"].new) == (6.9, 7.0)
    # 9.00004 + 0.1 is 9.1, and the review threshold a gap below it, 9.0.
    final = thresholds.constrain(
        [proposal("review", 6.0, 9.00004), proposal("approve", 7.0, 9.0)], pins={}
    )
    assert (final["review"].new, final["approve"].new) == (9.0, 9.1)
    # Below a pinned 7.00004: 6.9.
    final = thresholds.constrain(
        [proposal("review", 6.0, 7.2), proposal("approve", 7.00004, 7.00004)],
        pins={"approve": True},
    )
    assert final["review"].new == 6.9
    # A gap of five places: below the top, 10 - 0.12344 = 9.87656, 9.8766 to four.
    final = thresholds.constrain(
        [proposal("review", 6.0, 9.95), proposal("approve", 7.0, 9.9)], pins={}, min_gap=0.12344
    )
    assert (final["review"].new, final["approve"].new) == (9.8766, 10.0)
    # 9.87658 is below 9.8766: left where it is.
    final = thresholds.constrain(
        [proposal("review", 6.0, 9.87658), proposal("approve", 7.0, 9.9)], pins={}, min_gap=0.12344
    )
    assert (final["review"].new, final["approve"].new) == (9.87658, 10.0)
