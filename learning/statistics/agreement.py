"""How far reviewers agree with each other and with the gate, and how reliable each one is.

Pure functions over plain labels: no ORM. Labels are the review actions (approve, modify,
reject), or a rubric dimension's scores; a "unit" is one output that more than one person
judged.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum

import krippendorff
import numpy as np
import pandas as pd
from crowdkit.aggregation import DawidSkene
from sklearn.metrics import cohen_kappa_score

# A reviewer with few judgments is pulled toward the prior by this many pseudo-judgments.
DEFAULT_PRIOR_STRENGTH = 20.0
DEFAULT_PRIOR_RELIABILITY = 0.7
# EM stops when the log-likelihood gains less than this per step; the reliabilities it
# reports move in the third decimal after that.
DS_TOLERANCE = 1e-4
DS_MAX_ITERATIONS = 50


def cohen_kappa(first: Sequence[Hashable], second: Sequence[Hashable]) -> float | None:
    """Cohen's kappa of two raters over the same units; None when it is undefined (one
    label only, so the chance agreement is 1)."""
    if len(first) != len(second):
        raise ValueError("both raters must judge the same units")
    if not first or len(set(first) | set(second)) < 2:
        return None
    return float(cohen_kappa_score(list(first), list(second)))


def kappa_from_table(table: Sequence[Sequence[int]]) -> float | None:
    """Cohen's kappa from a square contingency table (rows: first rater, columns: second)."""
    first: list[int] = []
    second: list[int] = []
    for i, row in enumerate(table):
        for j, count in enumerate(row):
            first += [i] * count
            second += [j] * count
    return cohen_kappa(first, second)


def raw_agreement(first: Sequence[Hashable], second: Sequence[Hashable]) -> float | None:
    if not first:
        return None
    return sum(a == b for a, b in zip(first, second, strict=True)) / len(first)


def krippendorff_alpha(units: Mapping[Hashable, Mapping[Hashable, Hashable]]) -> float | None:
    """Nominal Krippendorff's alpha; ``units[unit][rater] = label``. Units judged by one
    rater only carry no information about agreement and are left out."""
    paired = {u: r for u, r in units.items() if len(r) >= 2}
    if not paired:
        return None
    raters = sorted({rater for r in paired.values() for rater in r}, key=str)
    labels = sorted({label for r in paired.values() for label in r.values()}, key=str)
    if len(labels) < 2:
        return None
    code = {label: i for i, label in enumerate(labels)}
    data = np.full((len(raters), len(paired)), np.nan)
    for column, judged in enumerate(paired.values()):
        for row, rater in enumerate(raters):
            if rater in judged:
                data[row, column] = code[judged[rater]]
    return float(krippendorff.alpha(reliability_data=data, level_of_measurement="nominal"))


def krippendorff_alpha_interval(
    units: Mapping[Hashable, Mapping[Hashable, float]],
) -> float | None:
    """Interval-level Krippendorff's alpha; ``units[unit][rater] = number``. A disagreement
    weighs as the squared difference of the two numbers, so that 4 against 5 on a 1-5 scale
    counts for less than 1 against 5. Units judged by one rater only are left out; None
    when fewer than two values differ (no disagreement is then expected by chance)."""
    paired = {u: r for u, r in units.items() if len(r) >= 2}
    if not paired:
        return None
    if len({float(v) for r in paired.values() for v in r.values()}) < 2:
        return None
    raters = sorted({rater for r in paired.values() for rater in r}, key=str)
    data = np.full((len(raters), len(paired)), np.nan)
    for column, judged in enumerate(paired.values()):
        for row, rater in enumerate(raters):
            if rater in judged:
                data[row, column] = float(judged[rater])
    return float(krippendorff.alpha(reliability_data=data, level_of_measurement="interval"))


# Below this many pairs an agreement is not shown: with a handful of outputs, one differing
# pair moves a kappa by tenths, and the number would be read as if it meant something.
MIN_PAIRS = 10


class Statistic(StrEnum):
    COHEN_KAPPA = "cohen_kappa"
    KRIPPENDORFF_ALPHA_INTERVAL = "krippendorff_alpha_interval"


@dataclass(frozen=True)
class PairedAgreement:
    """The agreement of two independent judgments over ``n`` units: ``value`` is None
    below ``MIN_PAIRS`` pairs, or where the statistic is undefined."""

    statistic: Statistic
    value: float | None
    n: int


def paired_agreement(
    pairs: Sequence[tuple[Hashable, Hashable]], *, interval: bool, min_pairs: int = MIN_PAIRS
) -> PairedAgreement:
    """The agreement of (first, second) judgments of the same units: Cohen's kappa of the
    labels, or with ``interval`` (numbers on a scale) interval-level Krippendorff's alpha,
    which credits near misses; kappa would count 4 against 5 as wholly as 1 against 5."""
    n = len(pairs)
    if interval:
        statistic = Statistic.KRIPPENDORFF_ALPHA_INTERVAL
        value = krippendorff_alpha_interval({i: {0: a, 1: b} for i, (a, b) in enumerate(pairs)})
    else:
        statistic = Statistic.COHEN_KAPPA
        value = cohen_kappa([a for a, _ in pairs], [b for _, b in pairs])
    if n < min_pairs:
        value = None
    return PairedAgreement(statistic=statistic, value=finite_or_none(value), n=n)


@dataclass(frozen=True)
class Reliability:
    reviewer: Hashable
    n: int
    # Dawid-Skene: the chance that this reviewer's label is the true one.
    raw: float
    # ``raw`` pulled toward the prior in proportion to how few judgments there are.
    shrunk: float


def reviewer_reliability(
    judgments: Iterable[tuple[Hashable, Hashable, Hashable]],
    *,
    prior: float = DEFAULT_PRIOR_RELIABILITY,
    prior_strength: float = DEFAULT_PRIOR_STRENGTH,
) -> dict[Hashable, Reliability]:
    """Each reviewer's reliability from (unit, reviewer, label) judgments, by Dawid-Skene,
    on the units that two or more reviewers judged (``n`` counts those).

    Dawid-Skene estimates every reviewer's confusion matrix and the true labels together,
    so a harsh reviewer who agrees with nobody is found out even without a gold standard.
    Reliability is the reviewer's expected accuracy under the estimated label prior,
    shrunk as (n * raw + m * prior) / (n + m) with m = ``prior_strength``.
    """
    frame = pd.DataFrame(list(judgments), columns=["task", "worker", "label"])
    # Only units more than one person judged say anything about a reviewer: a unit judged
    # once agrees with its only judge by construction.
    frame = frame[frame.groupby("task")["worker"].transform("nunique") >= 2]
    if frame.empty:
        return {}
    counts = frame.groupby("worker").size()
    model = DawidSkene(n_iter=DS_MAX_ITERATIONS, tol=DS_TOLERANCE).fit(frame)
    errors = model.errors_  # index (worker, observed label), columns: true label
    priors = model.priors_
    result = {}
    for worker, n in counts.items():
        accuracy = sum(
            float(priors[label]) * float(errors.loc[(worker, label), label])
            for label in priors.index
            if (worker, label) in errors.index
        )
        accuracy = min(1.0, max(0.0, accuracy))
        shrunk = (n * accuracy + prior_strength * prior) / (n + prior_strength)
        result[worker] = Reliability(reviewer=worker, n=int(n), raw=accuracy, shrunk=shrunk)
    return result


def finite_or_none(value: float | None) -> float | None:
    """JSON has no NaN: undefined statistics are stored as null."""
    return None if value is None or not math.isfinite(value) else value
