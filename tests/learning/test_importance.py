"""Validator importance, accuracy and the weights that follow them
(learning/statistics/importance.py).

Expected values are worked out by hand in the comments, or, for the logistic fits, come from
scikit-learn's LogisticRegression used here as the reference implementation (the L2 strength
of 1 that importance.py documents, and the same solver, so that the two agree to rounding),
with the base rate, the log loss and the Shapley formula written out by hand; scipy's
optimiser checks that reference against the exact optimum of the regularised model.
"""

import math
from decimal import Decimal

import numpy as np
import pytest
from scipy.optimize import minimize
from sklearn.linear_model import LogisticRegression

from learning.statistics import importance

# --------------------------------------------------------------------------- Shapley


def test_shapley_values_of_a_game_worked_out_by_hand():
    worth = {"": 0, "a": 1, "b": 2, "c": 4, "ab": 5, "ac": 6, "bc": 7, "abc": 10}

    def value(coalition):
        return worth["".join(sorted(coalition))]

    # With 3 players a player joins an empty set or the other two with weight 1/3 each, and
    # each single other player with weight 1/6:
    # a: (1 - 0) / 3 + (5 - 2) / 6 + (6 - 4) / 6 + (10 - 7) / 3 = 13/6
    # b: (2 - 0) / 3 + (5 - 1) / 6 + (7 - 4) / 6 + (10 - 6) / 3 = 19/6
    # c: (4 - 0) / 3 + (6 - 1) / 6 + (7 - 2) / 6 + (10 - 5) / 3 = 28/6
    found = importance.shapley_values(["a", "b", "c"], value)
    assert found == pytest.approx({"a": 13 / 6, "b": 19 / 6, "c": 28 / 6}, abs=1e-12)


def test_a_player_alone_gets_the_whole_value():
    assert importance.shapley_values(["a"], lambda s: 3.0 if s else 0.5) == {"a": 2.5}


def test_twelve_players_are_exact_and_thirteen_refused():
    players = [f"v{i}" for i in range(12)]
    # Additive game: each player's value is its own worth.
    found = importance.shapley_values(players, lambda s: float(sum(int(p[1:]) for p in s)))
    assert found == pytest.approx({f"v{i}": float(i) for i in range(12)}, abs=1e-9)
    with pytest.raises(ValueError, match=r"^exact Shapley values take at most 12 players, not 13$"):
        importance.shapley_values([*players, "v12"], len)


# --------------------------------------------------------------------------- importance

NAMES = ("facts", "tone")
# Both pass, only facts passes, only tone passes, neither: outputs approved unchanged and not.
COUNTS = importance.PatternCounts(
    names=NAMES,
    patterns=((True, True), (True, False), (False, True), (False, False)),
    approved=(40, 12, 6, 1),
    not_approved=(5, 9, 14, 13),
)


def rows(counts):
    """One row per pattern and outcome, with its count as the weight."""
    x = np.array([*counts.patterns, *counts.patterns], dtype=float)
    y = np.array([1.0] * len(counts.patterns) + [0.0] * len(counts.patterns))
    w = np.array([*counts.approved, *counts.not_approved], dtype=float)
    return x, y, w


def mean_log_loss(y, p, w):
    return -float(np.sum(w * (y * np.log(p) + (1 - y) * np.log(1 - p))) / np.sum(w))


def reference_reduction(counts, columns):
    """v(S) by the reference: log loss of the base rate minus that of the fitted model."""
    x, y, w = rows(counts)
    base = mean_log_loss(y, np.full(len(y), w @ y / w.sum()), w)
    if not columns:
        return 0.0
    model = LogisticRegression(C=1.0, solver="newton-cholesky")
    model.fit(x[:, columns], y, sample_weight=w)
    return base - mean_log_loss(y, model.predict_proba(x[:, columns])[:, 1], w)


def exact_reduction(counts, columns, c=1.0):
    """The same v(S) at the exact optimum of scikit-learn's objective, 1/2 |beta|^2 +
    C sum w log-loss with C = ``c`` and the intercept not penalised, by BFGS to 1e-10."""
    x, y, w = rows(counts)
    features = x[:, columns]

    def objective(theta):
        z = features @ theta[1:] + theta[0]
        return 0.5 * theta[1:] @ theta[1:] + c * np.sum(w * (np.logaddexp(0, z) - y * z))

    theta = minimize(objective, np.zeros(1 + len(columns)), method="BFGS", tol=1e-10).x
    p = 1 / (1 + np.exp(-(features @ theta[1:] + theta[0])))
    base = mean_log_loss(y, np.full(len(y), w @ y / w.sum()), w)
    return base - mean_log_loss(y, p, w)


def test_the_reference_fits_are_the_regularised_optimum():
    for columns in ([0], [1], [0, 1]):
        assert reference_reduction(COUNTS, columns) == pytest.approx(
            exact_reduction(COUNTS, columns), rel=1e-4
        )


def test_the_game_is_the_loss_reduction_of_each_set_of_validators():
    value = importance.loss_reduction(COUNTS)
    assert value(frozenset()) == 0.0
    for subset, columns in (({"facts"}, [0]), ({"tone"}, [1]), ({"facts", "tone"}, [0, 1])):
        assert value(frozenset(subset)) == pytest.approx(
            reference_reduction(COUNTS, columns), abs=1e-12
        )
    # In nats per output: facts alone removes 0.157 of the base rate's 0.677 (59 of 100
    # approved: -0.59 ln 0.59 - 0.41 ln 0.41).
    assert value(frozenset({"facts"})) == pytest.approx(0.1574, abs=1e-4)


def test_the_fit_is_regularised_by_the_module_constant(monkeypatch):
    # REGULARISATION_C is scikit-learn's default as well (1.0), so at that value nothing
    # shows which of the two the fit reads. At C = 0.1 the L2 penalty is ten times
    # stronger: both validators together remove 0.118 nats, not 0.208 (the exact optimum of
    # the objective with C = 0.1, found by BFGS, not by scikit-learn).
    monkeypatch.setattr(importance, "REGULARISATION_C", 0.1)
    value = importance.loss_reduction(COUNTS)
    both = frozenset({"facts", "tone"})
    assert value(both) == pytest.approx(exact_reduction(COUNTS, [0, 1], c=0.1), rel=1e-4)
    assert value(both) == pytest.approx(0.1180, abs=1e-4)


def reference_importance(counts):
    """Two players: each gets half of its gain alone and half of its gain on top of the
    other."""
    v_facts = reference_reduction(counts, [0])
    v_tone = reference_reduction(counts, [1])
    v_both = reference_reduction(counts, [0, 1])
    return {
        "facts": (v_facts + (v_both - v_tone)) / 2,
        "tone": (v_tone + (v_both - v_facts)) / 2,
    }


def test_importance_has_a_size_not_only_a_rank():
    found = importance.validator_importance(COUNTS)
    assert found == pytest.approx(reference_importance(COUNTS), abs=1e-12)
    assert found == pytest.approx({"facts": 0.1567, "tone": 0.0511}, abs=1e-4)


def test_soft_counts_weigh_as_their_sizes():
    # The label model's posteriors make fractional counts; halving every count changes
    # nothing but the regulariser's relative strength, which the reference sees as well.
    half = importance.PatternCounts(
        names=NAMES,
        patterns=COUNTS.patterns,
        approved=tuple(c / 2 for c in COUNTS.approved),
        not_approved=tuple(c / 2 for c in COUNTS.not_approved),
    )
    value = importance.loss_reduction(half)
    assert value(frozenset({"facts", "tone"})) == pytest.approx(
        reference_reduction(half, [0, 1]), abs=1e-12
    )


def test_counts_may_be_decimals():
    # PostgreSQL's numeric columns come back from psycopg as Decimal.
    decimal = importance.PatternCounts(
        names=NAMES,
        patterns=COUNTS.patterns,
        approved=tuple(Decimal(c) for c in COUNTS.approved),
        not_approved=tuple(Decimal(c) for c in COUNTS.not_approved),
    )
    assert importance.validator_importance(decimal) == pytest.approx(
        reference_importance(COUNTS), abs=1e-12
    )


@pytest.mark.parametrize("approved_share", [0.0, 1.0])
def test_a_window_where_every_output_has_one_outcome_explains_nothing(approved_share):
    counts = importance.PatternCounts(
        names=NAMES,
        patterns=COUNTS.patterns,
        approved=tuple(approved_share * n for n in (10, 5, 3, 2)),
        not_approved=tuple((1 - approved_share) * n for n in (10, 5, 3, 2)),
    )
    value = importance.loss_reduction(counts)
    assert value(frozenset({"facts"})) == 0.0
    assert value(frozenset(NAMES)) == 0.0
    assert importance.validator_importance(counts) == {"facts": 0.0, "tone": 0.0}


# --------------------------------------------------------------------------- accuracy


def test_validator_accuracy_by_hand():
    # facts agrees where it passed and the output was approved (40 + 12), and where it failed
    # and the output was not (14 + 13): 79 of 100. tone: 40 + 6 and 9 + 13: 68 of 100.
    assert importance.validator_accuracy(COUNTS) == pytest.approx(
        {"facts": 0.79, "tone": 0.68}, abs=1e-12
    )


def test_validator_accuracy_of_soft_counts_below_one():
    counts = importance.PatternCounts(
        names=("facts",), patterns=((True,), (False,)), approved=(0.5, 0.1), not_approved=(0.2, 0.2)
    )
    # Agrees on 0.5 (passed, approved) and 0.2 (failed, not approved) of 1.0 in all.
    assert importance.validator_accuracy(counts) == pytest.approx({"facts": 0.7}, abs=1e-12)
    # 0.1 passed and approved, 0.3 failed and not approved: always right, on 0.4 in all.
    small = importance.PatternCounts(
        names=("facts",), patterns=((True,), (False,)), approved=(0.1, 0.0), not_approved=(0.0, 0.3)
    )
    assert importance.validator_accuracy(small) == pytest.approx({"facts": 1.0}, abs=1e-12)


def test_validator_accuracy_without_reviews_is_unknown():
    empty = importance.PatternCounts(names=NAMES, patterns=(), approved=(), not_approved=())
    assert importance.validator_accuracy(empty) == {"facts": None, "tone": None}
    zero = importance.PatternCounts(
        names=NAMES, patterns=((True, False),), approved=(0,), not_approved=(0,)
    )
    assert importance.validator_accuracy(zero) == {"facts": None, "tone": None}


def test_counts_that_do_not_line_up_are_refused():
    ragged = importance.PatternCounts(
        names=("facts",), patterns=((True,), (False,)), approved=(3, 1), not_approved=(2,)
    )
    with pytest.raises(ValueError):
        importance.validator_accuracy(ragged)


# --------------------------------------------------------------------------- next weights


def test_weights_take_the_importance_shares_of_the_current_total():
    # Total weight 3 split 1 : 2 : 3 (a negative importance counts as none): targets 0.5,
    # 1.0 and 1.5, reached at once with a step that large.
    found = importance.next_weights(
        {"a": 1.0, "b": 1.0, "c": 1.0, "d": 0.0},
        {"a": 0.1, "b": 0.2, "c": 0.3, "d": -0.4},
        max_step=5.0,
        floor=0.0,
    )
    assert found == pytest.approx({"a": 0.5, "b": 1.0, "c": 1.5, "d": 0.0}, abs=1e-12)


def test_each_weight_moves_at_most_a_step_and_stays_above_the_floor():
    current = {"a": 1.0, "b": 1.0, "c": 0.3}
    # Targets 2.3 x (0.6, 0.4, 0) = 1.38, 0.92, 0: a up by 0.25 at most, b down by its 0.08,
    # c down by 0.25 but not below 0.1.
    found = importance.next_weights(
        current, {"a": 0.6, "b": 0.4, "c": 0.0}, max_step=0.25, floor=0.1
    )
    assert found == pytest.approx({"a": 1.25, "b": 0.92, "c": 0.1}, abs=1e-12)
    # The defaults: a step of 0.1 and a floor of 0.05. Targets 2 and 0, then 1.1 and 0.
    assert importance.next_weights({"a": 1.0, "b": 1.0}, {"a": 1.0}) == {"a": 1.1, "b": 0.9}
    assert importance.next_weights({"a": 1.0, "b": 0.1}, {"a": 1.0}) == {"a": 1.1, "b": 0.05}


def test_a_validator_without_importance_counts_as_none_and_others_are_ignored():
    found = importance.next_weights(
        {"a": 1.0, "b": 1.0}, {"a": 1.0, "unknown": 5.0}, max_step=5.0, floor=0.0
    )
    assert found == {"a": 2.0, "b": 0.0}


def test_without_any_positive_importance_the_weights_hold():
    current = {"a": 1.0, "b": 0.4}
    assert importance.next_weights(current, {"a": 0.0, "b": -1.0}) == current
    assert importance.next_weights(current, {}) == current


def test_weights_are_rounded_to_six_places():
    found = importance.next_weights({"a": 0.5, "b": 0.5}, {"a": 1.0, "b": 2.0}, max_step=1.0)
    assert found == {"a": 0.333333, "b": 0.666667}
    assert math.isclose(sum(found.values()), 1.0)
