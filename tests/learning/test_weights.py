"""Validator weights from the error model, against hand-computed log odds ratios and the
simulated world's ground truth.

Expected values come from the failure rates a case is built with, from Bayes on the
world's configured matrices, or from a reference model fitted on the world's true labels,
never from ``learning.statistics.weights`` itself.
"""

import math
from datetime import date
from decimal import Decimal

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

from learning.statistics import importance, weights
from simulator import world

# --------------------------------------------------------------------------- hand cases


def outputs_from_counts(counts: dict[tuple[tuple[bool, ...], float], int]):
    """(failed, error probability) rows: ``counts[(pattern, p)]`` outputs of each kind."""
    failed, probability = [], []
    for (pattern, p), n in counts.items():
        failed += [pattern] * n
        probability += [p] * n
    return np.array(failed, dtype=bool), np.array(probability)


def two_independent_validators(copies_of_a: int = 1):
    """1000 errors and 1000 fine outputs; a fails on 40 % of errors and 5 % of fine
    ones, b on 20 % and 10 %, independently given the truth, counted exactly."""
    counts = {}
    for is_error, fail_a, fail_b in ((1.0, 0.40, 0.20), (0.0, 0.05, 0.10)):
        for a_failed in (True, False):
            for b_failed in (True, False):
                share = (fail_a if a_failed else 1 - fail_a) * (fail_b if b_failed else 1 - fail_b)
                pattern = (a_failed,) * copies_of_a + (b_failed,)
                counts[(pattern, is_error)] = round(1000 * share)
    names = (*(f"a{i}" for i in range(copies_of_a)), "b")
    return weights.error_evidence(names, *outputs_from_counts(counts))


LOG_ODDS_RATIO_A = math.log((0.40 / 0.60) / (0.05 / 0.95))  # 2.539
LOG_ODDS_RATIO_B = math.log((0.20 / 0.80) / (0.10 / 0.90))  # 0.811


def test_a_validators_coefficient_is_its_log_odds_ratio():
    # Independent given the truth, so the logistic model is exact and each coefficient is
    # the validator's log-likelihood ratio, fail against pass.
    model = weights.fit_error_model(two_independent_validators())

    assert model.coefficients["a0"] == pytest.approx(LOG_ODDS_RATIO_A, abs=0.02)
    assert model.coefficients["b"] == pytest.approx(LOG_ODDS_RATIO_B, abs=0.02)


def test_soft_labels_count_as_their_expected_labels():
    # Two patterns, so the model fits each exactly: P(error | failed) = 0.9, P(error |
    # passed) = 0.2, whatever the individual outputs' probabilities around those means.
    failed, probability = outputs_from_counts(
        {((True,), 0.8): 50, ((True,), 1.0): 50, ((False,), 0.2): 900}
    )
    model = weights.fit_error_model(weights.error_evidence(("facts",), failed, probability))

    expected = math.log(0.9 / 0.1) - math.log(0.2 / 0.8)  # 3.584
    assert model.coefficients["facts"] == pytest.approx(expected, abs=0.05)
    assert model.intercept == pytest.approx(math.log(0.2 / 0.8), abs=0.02)


def test_each_output_counts_as_many_as_it_stands_for():
    # Fine outputs audited at 20 % and 25 % stand for 5 and 4 each. Failed: 20 errors and
    # 10 * 5 fine, P(error) = 20/70; passed: 100 errors and 100 * 4 fine, P(error) = 0.2.
    failed, probability = outputs_from_counts(
        {((True,), 1.0): 20, ((True,), 0.0): 10, ((False,), 1.0): 100, ((False,), 0.0): 100}
    )
    weight = np.where(probability == 1.0, 1.0, np.where(failed[:, 0], 5.0, 4.0))
    evidence = weights.error_evidence(("schema",), failed, probability, weight)

    expected = math.log((20 / 50) / (100 / 400))  # ln 1.6 = 0.470; unweighted: ln 2 = 0.693
    assert weights.fit_error_model(evidence).coefficients["schema"] == pytest.approx(
        expected, abs=0.03
    )


def test_weights_take_each_validators_share_of_the_log_odds_ratios():
    current = {"a0": 1.0, "b": 1.0}
    evidence = two_independent_validators()

    unbounded = weights.weight_update(current, evidence, max_step=10.0)
    total = LOG_ODDS_RATIO_A + LOG_ODDS_RATIO_B
    # The sum 2 is kept: a failure of a costs 8 * 2.539 / 3.350 = 6.06 points, of b 1.94.
    assert unbounded.weights["a0"] == pytest.approx(2 * LOG_ODDS_RATIO_A / total, abs=0.01)
    assert unbounded.weights["b"] == pytest.approx(2 * LOG_ODDS_RATIO_B / total, abs=0.01)
    # Today's per-cycle bound: at most 0.1 toward the target.
    assert weights.weight_update(current, evidence).weights == {"a0": 1.1, "b": 0.9}


def test_a_validator_whose_failure_points_to_good_outputs_sinks():
    # length fails only on fine outputs: its failure lowers the odds of an error.
    failed, probability = outputs_from_counts(
        {
            ((True, False), 1.0): 300,
            ((False, False), 1.0): 300,
            ((False, False), 0.0): 300,
            ((False, True), 0.0): 100,
        }
    )
    evidence = weights.error_evidence(("facts", "length"), failed, probability)
    update = weights.weight_update({"facts": 1.0, "length": 0.12}, evidence)

    assert update.coefficients["length"] < 0
    assert update.weights == {"facts": 1.1, "length": 0.05}


# --------------------------------------------------------------------------- edge cases


def test_collinear_validators_split_one_validators_share():
    # a0 and a1 always fail together: together they should cost what a alone would.
    evidence = two_independent_validators(copies_of_a=2)
    model = weights.fit_error_model(evidence)

    assert model.coefficients["a0"] == pytest.approx(model.coefficients["a1"], rel=1e-6)
    assert model.coefficients["a0"] + model.coefficients["a1"] == pytest.approx(
        LOG_ODDS_RATIO_A, abs=0.05
    )
    assert model.coefficients["b"] == pytest.approx(LOG_ODDS_RATIO_B, abs=0.02)
    update = weights.weight_update({"a0": 1.0, "a1": 1.0, "b": 1.0}, evidence, max_step=10.0)
    total = LOG_ODDS_RATIO_A + LOG_ODDS_RATIO_B
    assert update.weights["a0"] + update.weights["a1"] == pytest.approx(
        3 * LOG_ODDS_RATIO_A / total, abs=0.05
    )


def test_a_validator_that_never_failed_keeps_its_weight():
    failed, probability = outputs_from_counts(
        {
            ((True, False, False), 1.0): 100,
            ((False, False, False), 0.0): 900,
            ((False, True, False), 0.0): 60,
        }
    )
    evidence = weights.error_evidence(("facts", "tone", "security"), failed, probability)

    update = weights.weight_update(
        {"facts": 1.0, "tone": 1.0, "security": 2.5}, evidence, max_step=10.0
    )

    assert update.weights["security"] == 2.5
    assert "never failed" in update.held["security"]
    assert "security" not in update.coefficients
    # facts and tone share their own total, 2, so security's share of the score holds.
    assert update.weights["facts"] + update.weights["tone"] == pytest.approx(2.0, abs=0.06)
    assert update.weights["tone"] == 0.05


def test_a_validator_that_failed_everywhere_or_was_not_reported_keeps_its_weight():
    failed, probability = outputs_from_counts({((True, True), 1.0): 100, ((False, True), 0.0): 900})
    evidence = weights.error_evidence(("facts", "schema"), failed, probability)

    update = weights.weight_update({"facts": 1.0, "schema": 0.7, "tone": 0.4}, evidence)

    assert update.weights == {"facts": 1.0, "schema": 0.7, "tone": 0.4}
    assert "failed on all 1000" in update.held["schema"]
    assert update.held["tone"] == "not reported in the window."
    # facts alone keeps its own total: nothing to share with.
    assert set(update.coefficients) == {"facts"}


def test_too_few_verdicts_keep_every_weight():
    failed, probability = outputs_from_counts({((True,), 1.0): 20, ((False,), 0.0): 29})
    evidence = weights.error_evidence(("facts",), failed, probability)

    update = weights.weight_update({"facts": 1.3}, evidence, min_verdicts=50)

    assert update.weights == {"facts": 1.3}
    assert update.coefficients == {}
    assert update.held["facts"] == "49 verdicts; reweighting needs 50."


def test_verdicts_that_all_say_error_keep_every_weight():
    failed, probability = outputs_from_counts({((True,), 1.0): 40, ((False,), 1.0): 60})
    evidence = weights.error_evidence(("facts",), failed, probability)

    update = weights.weight_update({"facts": 1.0}, evidence)

    assert update.weights == {"facts": 1.0}
    assert "facts" in update.held


def test_probabilities_outside_zero_one_are_refused():
    with pytest.raises(ValueError, match="error_probability"):
        weights.error_evidence(("facts",), np.array([[True]]), np.array([1.2]))


def test_the_evidence_feeds_the_shapley_explanation_as_soft_counts():
    failed, probability = outputs_from_counts({((True, False), 0.75): 4, ((False, False), 0.0): 6})
    counts = weights.error_evidence(("facts", "tone"), failed, probability).as_pattern_counts()

    approved = dict(zip(counts.patterns, counts.approved, strict=True))
    not_approved = dict(zip(counts.patterns, counts.not_approved, strict=True))
    # Patterns say which validators passed, as importance.py reads them.
    assert approved == pytest.approx({(False, True): 1.0, (True, True): 6.0})
    assert not_approved == pytest.approx({(False, True): 3.0, (True, True): 0.0})


# --------------------------------------------------------------------------- closed loop

CYCLES = 60
OUTPUTS_PER_WINDOW = 3000
TASK_TYPE = world.DEFAULT_TASK_TYPES[0]  # summarize
MODEL = world.DEFAULT_MODELS[0]  # gpt-x: 70 % good, 20 % needs edit, 10 % bad
NAMES = tuple(p.name for p in world.VALIDATORS)
GOOD = world.TRUTHS.index(world.Truth.GOOD)
APPROVE = world.ACTIONS.index(world.Action.APPROVE)
MATRICES = np.array(
    [
        [[r.matrix[t][a] for a in world.ACTIONS] for t in world.TRUTHS]
        for r in world.DEFAULT_REVIEWERS
    ]
)


def error_posteriors() -> np.ndarray:
    """P(error | reviewer, action) by Bayes from each reviewer's confusion matrix and the
    pair's prior over the truth: what a label model that knew the matrices would say."""
    prior = world.truth_rates(TASK_TYPE, MODEL)
    joint = np.array([prior[t] for t in world.TRUTHS])[None, :, None] * MATRICES
    is_error = np.array([t != world.Truth.GOOD for t in world.TRUTHS])
    return joint[:, is_error, :].sum(axis=1) / joint.sum(axis=1)


def reviewed_window(config: world.SimulationConfig, day: int):
    """One cycle's window: the world's outputs for a day, each judged by a reviewer
    drawn at random, who acts by their confusion matrix."""
    traffic = world.day_traffic(config, day)
    rng = np.random.default_rng([config.seed, day, 1])
    reviewer = rng.integers(0, len(world.DEFAULT_REVIEWERS), size=len(traffic.truth))
    cumulative = np.cumsum(MATRICES[reviewer, traffic.truth], axis=1)
    action = (rng.random(len(traffic.truth))[:, None] >= cumulative[:, :-1]).sum(axis=1)
    return ~traffic.passed, traffic.truth, reviewer, action


@pytest.fixture(scope="module")
def windows():
    config = world.SimulationConfig(
        seed=11,
        days=CYCLES,
        outputs_per_day=OUTPUTS_PER_WINDOW,
        start=date(2026, 3, 2),
        task_types=(TASK_TYPE,),
        models=(MODEL,),
    )
    return [reviewed_window(config, day) for day in range(CYCLES)]


def reference_shares(windows) -> dict[str, float]:
    """Each validator's share of the positive coefficients of a logistic model fitted,
    unregularised, on the TRUE labels of every window (180,000 outputs): the weights a
    gate that knew the truth would give, as proportions."""
    failed = np.concatenate([w[0] for w in windows]).astype(float)
    is_error = np.concatenate([w[1] for w in windows]) != GOOD
    model = LogisticRegression(C=np.inf, solver="newton-cholesky").fit(failed, is_error)
    positive = np.clip(model.coef_[0], 0, None)
    return dict(zip(NAMES, (positive / positive.sum()).tolist(), strict=True))


def closed_loop(windows, reweigh) -> dict[str, float]:
    """Every validator starts at 1; each window moves the weights once."""
    current = dict.fromkeys(NAMES, 1.0)
    for window in windows:
        current = reweigh(current, *window)
    return current


def by_error_model(current, failed, _truth, reviewer, action):
    posteriors = error_posteriors()[reviewer, action]
    return weights.weight_update(current, weights.error_evidence(NAMES, failed, posteriors)).weights


def by_shapley_importance(current, failed, _truth, _reviewer, action):
    """Today's cycle: Shapley importance of hard verdicts (approved unchanged or not)."""
    patterns, group = np.unique(~failed, axis=0, return_inverse=True)
    group = group.ravel()
    approved = (action == APPROVE).astype(float)
    counts = importance.PatternCounts(
        names=NAMES,
        patterns=tuple(tuple(p) for p in patterns.tolist()),
        approved=tuple(np.bincount(group, approved, len(patterns)).tolist()),
        not_approved=tuple(np.bincount(group, 1 - approved, len(patterns)).tolist()),
    )
    return importance.next_weights(current, importance.validator_importance(counts))


def far_from_reference(final: dict[str, float], shares: dict[str, float]) -> dict[str, float]:
    """Security and schema where the loop left them outside a factor of 2 of their
    reference weight. The gate sees only proportions, so the reference weight is the
    reference share of the loop's final total weight."""
    total = sum(final.values())
    ratios = {name: final[name] / (shares[name] * total) for name in ("security", "schema")}
    return {name: ratio for name, ratio in ratios.items() if not 0.5 <= ratio <= 2.0}


@pytest.mark.statistical
def test_closed_loop_with_noisy_reviewers_keeps_rare_decisive_validators(windows):
    """60 cycles, each a fresh window of 3000 outputs judged by one of the four simulated
    reviewers at random, with soft labels from their posteriors and the cycle's bounds.

    Measured: facts 2.59, schema 1.22, security 1.50, grammar 0.70, tone 0.33, length 0.05
    (total 6.39), against reference weights 2.33, 1.07, 1.93, 0.66, 0.41, 0 (shares 0.365,
    0.167, 0.301, 0.104, 0.064, 0 of the total): schema at 1.15 and security at 0.78 of
    their reference weights."""
    final = closed_loop(windows, by_error_model)

    assert far_from_reference(final, reference_shares(windows)) == {}
    assert max(final, key=final.get) == "facts"
    assert final["length"] < 0.2


# Shapley importance costs 64 logistic fits a window: 15 of the 60 windows keep the test
# quick, and are enough, because each window's importance does not depend on the weights
# and at 0.1 a cycle the weights reach their targets within 10.
SHAPLEY_CYCLES = 15


@pytest.mark.statistical
def test_the_same_loop_with_shapley_importance_loses_them(windows):
    """The check above fails on today's approach. Security and schema fail too rarely to
    lower the average log loss much: each window gives them 1-4 % of the importance, and
    the weights walk to the floor.

    Measured after 15 cycles: facts 2.27, schema 0.11, security 0.10 (total 2.72), at 0.23
    and 0.12 of their reference weights; after all 60: facts 3.24, schema 0.14, security
    0.05 (total 3.76), at 0.23 and 0.04."""
    final = closed_loop(windows[:SHAPLEY_CYCLES], by_shapley_importance)

    assert set(far_from_reference(final, reference_shares(windows))) == {"security", "schema"}


# --------------------------------------------------------------------------- the evidence


def test_evidence_groups_outputs_by_pattern_with_weights_scaled_to_kishs_size():
    # Weights 1, 3, 2: Kish's effective size is 6^2 / (1 + 9 + 4) = 18/7, so each weight is
    # scaled by (18/7) / 6 = 3/7, to 3/7, 9/7, 6/7. The groups come in numpy's order of the
    # patterns, (False, False) before (True, False).
    evidence = weights.error_evidence(
        ("facts", "tone"),
        np.array([[True, False], [True, False], [False, False]]),
        np.array([0.5, 1.0, 0.2]),
        np.array([1.0, 3.0, 2.0]),
    )

    assert evidence.names == ("facts", "tone")
    assert evidence.failed == ((False, False), (True, False))
    assert evidence.outputs == (1, 2)
    assert evidence.error == pytest.approx((6 / 7 * 0.2, 3 / 7 * 0.5 + 9 / 7), abs=1e-12)
    assert evidence.no_error == pytest.approx((6 / 7 * 0.8, 3 / 7 * 0.5), abs=1e-12)
    assert evidence.verdicts == 3
    assert evidence.failures() == {"facts": 2, "tone": 0}


def test_without_weights_every_output_counts_once():
    evidence = weights.error_evidence(
        ("facts",), np.array([[True], [False], [True]]), np.array([1.0, 0.0, 0.5])
    )
    assert evidence.error == pytest.approx((0.0, 1.5), abs=1e-12)
    assert evidence.no_error == pytest.approx((1.0, 0.5), abs=1e-12)


def test_one_output_and_no_outputs():
    one = weights.error_evidence(("facts",), np.array([[True]]), np.array([0.25]), np.array([4.0]))
    # Kish's size of one output is 1, whatever its weight.
    assert (one.failed, one.error, one.no_error, one.outputs) == (
        ((True,),),
        (0.25,),
        (0.75,),
        (1,),
    )
    none = weights.error_evidence(("facts", "tone"), np.zeros((0, 2), dtype=bool), np.zeros(0))
    assert none == weights.ErrorEvidence(("facts", "tone"), (), (), (), ())
    assert none.verdicts == 0
    assert none.failures() == {"facts": 0, "tone": 0}


def test_failures_given_as_integers_are_kept_as_booleans():
    evidence = weights.error_evidence(("facts", "tone"), [[1, 0], [0, 0]], [1.0, 0.0])
    assert evidence.failed == ((False, False), (True, False))
    assert {type(flag) for pattern in evidence.failed for flag in pattern} == {bool}


def test_probabilities_and_weights_may_be_decimals():
    # PostgreSQL's numeric columns come back from psycopg as Decimal.
    evidence = weights.error_evidence(
        ("facts",), [[True], [False]], [Decimal("0.5"), Decimal("0.25")], [Decimal(1), Decimal(1)]
    )
    assert evidence.error == pytest.approx((0.25, 0.5), abs=1e-12)
    assert evidence.no_error == pytest.approx((0.75, 0.5), abs=1e-12)


@pytest.mark.parametrize(
    ("names", "failed", "probability", "weight", "message"),
    [
        (
            ("facts",),
            [[True, False]],
            [0.5],
            None,
            r"^failed: expected shape \(1, 1\), got \(1, 2\)$",
        ),
        (("facts", "facts"), [[True, False]], [0.5], None, "^names: each validator once$"),
        (
            ("facts",),
            [[True]],
            [-0.1],
            None,
            r"^error_probability: every value must be in \[0, 1\]$",
        ),
        (("facts",), [[True]], [math.nan], None, r"^error_probability: every value"),
        (
            ("facts",),
            [[True]],
            [0.5],
            [1.0, 1.0],
            "^weight: one finite, positive weight per output$",
        ),
        (("facts",), [[True]], [0.5], [0.0], "^weight: one finite, positive weight per output$"),
        (("facts",), [[True]], [0.5], [-2.0], "^weight: one finite, positive weight per output$"),
        (
            ("facts",),
            [[True]],
            [0.5],
            [math.inf],
            "^weight: one finite, positive weight per output$",
        ),
        (
            ("facts",),
            [[True]],
            [0.5],
            [math.nan],
            "^weight: one finite, positive weight per output$",
        ),
    ],
)
def test_malformed_evidence_is_refused_with_the_field_named(
    names, failed, probability, weight, message
):
    with pytest.raises(ValueError, match=message):
        weights.error_evidence(names, failed, probability, weight)


def test_evidence_whose_groups_do_not_line_up_is_refused():
    ragged = weights.ErrorEvidence(("facts",), ((True,), (False,)), (1.0, 0.0), (0.0, 1.0), (3,))
    with pytest.raises(ValueError):
        ragged.failures()


def test_the_shapley_explanation_keeps_the_validators_names():
    failed, probability = outputs_from_counts({((True, False), 0.75): 4, ((False, False), 0.0): 6})
    counts = weights.error_evidence(("facts", "tone"), failed, probability).as_pattern_counts()
    assert counts.names == ("facts", "tone")


# --------------------------------------------------------------------------- the fit


def scattered_outputs(n=400, seed=1):
    """Outputs with three validators, soft labels and weights of 1, 5 and 10."""
    rng = np.random.default_rng(seed)
    failed = rng.random((n, 3)) < [0.3, 0.1, 0.5]
    noise = rng.uniform(-0.1, 0.1, n)
    probability = np.clip(0.1 + 0.5 * failed[:, 0] + 0.3 * failed[:, 1] + noise, 0, 1)
    weight = rng.choice([1.0, 5.0, 10.0], n)
    return failed, probability, weight


def test_grouping_by_pattern_is_an_exact_shortcut():
    """The model on the groups is the one that scikit-learn fits on every output, entered
    twice with weights w p and w (1 - p), the weights scaled to Kish's size, by hand."""
    failed, probability, weight = scattered_outputs()
    evidence = weights.error_evidence(("a", "b", "c"), failed, probability, weight)

    scaled = weight * weight.sum() / np.square(weight).sum()
    rows = np.vstack([failed, failed]).astype(float)
    is_error = np.r_[np.ones(len(failed)), np.zeros(len(failed))]
    row_weight = np.r_[scaled * probability, scaled * (1 - probability)]
    keep = row_weight > 0
    reference = LogisticRegression(C=10.0, solver="newton-cholesky")
    reference.fit(rows[keep], is_error[keep], sample_weight=row_weight[keep])

    model = weights.fit_error_model(evidence)
    assert model.intercept == pytest.approx(reference.intercept_[0], abs=1e-9)
    assert list(model.coefficients) == ["a", "b", "c"]
    assert list(model.coefficients.values()) == pytest.approx(reference.coef_[0], abs=1e-9)


def test_the_fit_takes_the_validators_named_and_the_regularisation_given():
    failed, probability, weight = scattered_outputs()
    evidence = weights.error_evidence(("a", "b", "c"), failed, probability, weight)
    scaled = weight * weight.sum() / np.square(weight).sum()
    rows = np.vstack([failed[:, [2, 0]], failed[:, [2, 0]]]).astype(float)
    is_error = np.r_[np.ones(len(failed)), np.zeros(len(failed))]
    row_weight = np.r_[scaled * probability, scaled * (1 - probability)]
    keep = row_weight > 0
    reference = LogisticRegression(C=0.5, solver="newton-cholesky")
    reference.fit(rows[keep], is_error[keep], sample_weight=row_weight[keep])

    model = weights.fit_error_model(evidence, ("c", "a"), regularisation_c=0.5)
    assert list(model.coefficients) == ["c", "a"]
    assert list(model.coefficients.values()) == pytest.approx(reference.coef_[0], abs=1e-9)


def test_groups_of_small_weight_still_count():
    # Soft labels split each group's weight: here no group's share reaches 1. P(error) is
    # 0.9 where facts failed and 0.2 where it passed, so the (lightly regularised) log odds
    # ratio is near ln(9) - ln(0.25) = 3.58, as in the unweighted case above.
    failed, probability = outputs_from_counts({((True,), 0.9): 1, ((False,), 0.2): 1})
    evidence = weights.error_evidence(("facts",), failed, probability)
    assert max(evidence.error + evidence.no_error) < 1
    model = weights.fit_error_model(evidence, regularisation_c=1e6)
    assert model.coefficients["facts"] == pytest.approx(math.log(9) - math.log(0.25), abs=0.01)


@pytest.mark.parametrize("p", [0.0, 1.0])
def test_a_fit_needs_weight_on_both_outcomes(p):
    failed, probability = outputs_from_counts({((True,), p): 30, ((False,), p): 30})
    evidence = weights.error_evidence(("facts",), failed, probability)
    with pytest.raises(
        ValueError, match=r"^the evidence needs weight on both errors and non-errors$"
    ):
        weights.fit_error_model(evidence)


# --------------------------------------------------------------------------- the update


def test_exactly_the_minimum_of_verdicts_reweights():
    failed, probability = outputs_from_counts({((True,), 1.0): 20, ((False,), 0.0): 30})
    evidence = weights.error_evidence(("facts",), failed, probability)
    update = weights.weight_update({"facts": 1.3}, evidence, min_verdicts=50)
    assert update.held == {}
    assert set(update.coefficients) == {"facts"}


@pytest.mark.parametrize("p", [0.0, 1.0])
def test_verdicts_that_are_all_certain_alike_hold_with_the_reason(p):
    failed, probability = outputs_from_counts({((True, False), p): 40, ((False, True), p): 60})
    evidence = weights.error_evidence(("facts", "tone"), failed, probability)
    update = weights.weight_update({"facts": 1.0, "tone": 0.5}, evidence)
    reason = "every verdict is certainly an error, or every one certainly not."
    assert update == weights.WeightUpdate(
        weights={"facts": 1.0, "tone": 0.5}, held={"facts": reason, "tone": reason}
    )


def test_when_no_validator_can_be_measured_every_weight_holds_with_its_reason():
    failed, probability = outputs_from_counts({((True, False), 1.0): 30, ((True, False), 0.0): 30})
    evidence = weights.error_evidence(("schema", "tone"), failed, probability)
    update = weights.weight_update({"schema": 0.7, "tone": 0.4, "length": 0.2}, evidence)
    assert update == weights.WeightUpdate(
        weights={"schema": 0.7, "tone": 0.4, "length": 0.2},
        held={
            "schema": "failed on all 60 verdicts: a failure's cost cannot be measured.",
            "tone": "never failed in 60 verdicts: a failure's cost cannot be measured.",
            "length": "not reported in the window.",
        },
    )


def test_the_update_passes_its_bounds_and_regularisation_on():
    current = {"a0": 1.0, "b": 1.0}
    evidence = two_independent_validators()
    # A C this small shrinks both coefficients to nearly 0.
    flat = weights.weight_update(current, evidence, regularisation_c=1e-6, max_step=10.0)
    assert abs(flat.coefficients["a0"]) < 0.01 and abs(flat.coefficients["b"]) < 0.01
    # Targets 1.52 and 0.48 (the test above): a floor of 1.5 lifts both a0's step (1.1) and
    # b's (0.9); a step of 0.3 takes a0 to 1.3 and b to 0.7.
    floored = weights.weight_update(current, evidence, floor=1.5)
    assert floored.weights == {"a0": 1.5, "b": 1.5}
    stepped = weights.weight_update(current, evidence, max_step=0.3)
    assert stepped.weights == {"a0": 1.3, "b": 0.7}
