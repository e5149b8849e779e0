"""Which validators predict the human decision: accuracy, and loss-based Shapley importance.

Pure functions: the input is the reviewed outputs grouped by their pass/fail pattern.

Importance is the Shapley value of each validator in the game whose value of a set S of
validators is how much a logistic model on S lowers the (weighted) log loss of predicting
"approved unchanged" below a model that knows only the base rate. Shapley splits that
total reduction fairly among validators, crediting each with its average marginal gain
over every order in which the validators could be added, so two validators that carry
the same signal share it instead of both getting it. Exact for up to ``MAX_EXACT``
validators (2^n logistic fits on at most 2^n distinct patterns, which is fast).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass

import numpy as np

MAX_EXACT = 12
# L2 strength of the logistic model: keeps rare patterns (a validator that almost never
# fails) from producing infinite coefficients.
REGULARISATION_C = 1.0


def shapley_values(
    players: Sequence[Hashable], value: Callable[[frozenset], float]
) -> dict[Hashable, float]:
    """Exact Shapley values of a cooperative game given by ``value`` over sets of players."""
    n = len(players)
    if n > MAX_EXACT:
        raise ValueError(f"exact Shapley values take at most {MAX_EXACT} players, not {n}")
    worth: dict[frozenset, float] = {}
    for size in range(n + 1):
        for subset in itertools.combinations(players, size):
            key = frozenset(subset)
            worth[key] = value(key)
    result = {}
    for player in players:
        total = 0.0
        others = [p for p in players if p != player]
        for size in range(n):
            weight = math.factorial(size) * math.factorial(n - size - 1) / math.factorial(n)
            for subset in itertools.combinations(others, size):
                key = frozenset(subset)
                total += weight * (worth[key | {player}] - worth[key])
        result[player] = total
    return result


@dataclass(frozen=True)
class PatternCounts:
    """Reviewed outputs grouped by pass/fail pattern.

    ``patterns[i][j]`` is whether validator ``names[j]`` passed in group i, and
    ``approved[i]`` / ``not_approved[i]`` are that group's (weighted) counts of outputs a
    human approved unchanged, and of the others.
    """

    names: tuple[str, ...]
    patterns: tuple[tuple[bool, ...], ...]
    approved: tuple[float, ...]
    not_approved: tuple[float, ...]

    @property
    def total(self) -> float:
        return sum(self.approved) + sum(self.not_approved)


def _design(counts: PatternCounts):
    """One row per (pattern, outcome) with its weight: grouped data for the regression."""
    x = np.array([*counts.patterns, *counts.patterns], dtype=float)
    y = np.array([1] * len(counts.patterns) + [0] * len(counts.patterns))
    w = np.array([*counts.approved, *counts.not_approved], dtype=float)
    keep = w > 0
    return x[keep], y[keep], w[keep]


def _log_loss(y: np.ndarray, p: np.ndarray, w: np.ndarray) -> float:
    # The weighted mean of -log-likelihood; sklearn's log_loss validates its inputs on every
    # call, which costs more than the fit here, where it runs 2^n times a cycle.
    p = np.clip(p, 1e-15, 1 - 1e-15)
    return float(-np.sum(w * (y * np.log(p) + (1 - y) * np.log(1 - p))) / np.sum(w))


def loss_reduction(counts: PatternCounts) -> Callable[[frozenset], float]:
    """The game: v(S) = log loss of the base rate - log loss of a logistic model on S."""
    # Imported here: scikit-learn takes two seconds to import, which every process that
    # loads the URLs (web workers, management commands) would pay, and only the validator
    # cycle fits models.
    from sklearn.linear_model import LogisticRegression

    x, y, w = _design(counts)
    base_rate = float(np.average(y, weights=w))
    base = _log_loss(y, np.full(len(y), base_rate), w)
    column = {name: i for i, name in enumerate(counts.names)}

    def value(subset: frozenset) -> float:
        if not subset or base_rate in (0.0, 1.0):
            return 0.0
        features = x[:, sorted(column[name] for name in subset)]
        model = LogisticRegression(C=REGULARISATION_C, solver="newton-cholesky")
        model.fit(features, y, sample_weight=w)
        return base - _log_loss(y, model.predict_proba(features)[:, 1], w)

    return value


def validator_importance(counts: PatternCounts) -> dict[str, float]:
    """Loss-based Shapley importance of each validator (in nats of log loss per output)."""
    return shapley_values(counts.names, loss_reduction(counts))


def validator_accuracy(counts: PatternCounts) -> dict[str, float | None]:
    """Share of reviewed outputs where the validator's pass/fail matched approve/not."""
    total = counts.total
    if total <= 0:
        return dict.fromkeys(counts.names)
    result = {}
    for j, name in enumerate(counts.names):
        agree = sum(
            approved if pattern[j] else not_approved
            for pattern, approved, not_approved in zip(
                counts.patterns, counts.approved, counts.not_approved, strict=True
            )
        )
        result[name] = agree / total
    return result


def next_weights(
    current: dict[str, float],
    importance: dict[str, float],
    *,
    max_step: float = 0.1,
    floor: float = 0.05,
) -> dict[str, float]:
    """Gate weights that follow the importance, a bounded step at a time.

    The target for each validator is its share of the total importance, scaled so that
    the weights keep their current sum (the gate's score is a weighted pass ratio, so
    only the proportions matter, and keeping the sum avoids a jump on the first cycle).
    Each weight moves at most ``max_step`` toward its target and never below ``floor``.
    """
    positive = {name: max(0.0, importance.get(name, 0.0)) for name in current}
    total_importance = sum(positive.values())
    if total_importance <= 0:
        return dict(current)
    scale = sum(current.values())
    result = {}
    for name, weight in current.items():
        target = scale * positive[name] / total_importance
        step = max(-max_step, min(max_step, target - weight))
        result[name] = round(max(floor, weight + step), 6)
    return result
