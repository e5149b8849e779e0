"""Estimates the overview shows with their intervals: pure arithmetic on rollup rows.

The non-approval rate of delivered outputs (auto-approved, warning) comes from the audits,
a sample drawn with known inclusion probabilities: each audit stands for 1 / p outputs like
it. The rate is the Hajek ratio, weighted not approved / weight. Its interval is Wilson's
score interval at Kish's effective sample size, n_eff = (sum of weights)² / (sum of squared
weights), which is n when every weight is equal and shrinks as they differ.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from scipy.stats import norm


@dataclass(frozen=True)
class RateEstimate:
    rate: float | None  # None: no audit in the range
    low: float | None
    high: float | None
    audits: int
    effective_n: float


def wilson_interval(rate: float, n: float, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson's score interval for a proportion ``rate`` observed on ``n`` (possibly
    fractional, an effective sample size) trials."""
    z = norm.ppf(0.5 + confidence / 2)
    centre = (rate + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(rate * (1 - rate) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def weighted_rate(cells: Iterable[Mapping], confidence: float = 0.95) -> RateEstimate:
    """The weighted non-approval rate over audit cells ``{audits, weight, not_approved}``
    (``not_approved``: whether the cell's verdicts were not approved unchanged). Every audit
    in a cell has the same inclusion probability, so a cell of n audits with weight W
    adds W² / n to the sum of squared weights."""
    audits, weight, squared, failed = 0, 0.0, 0.0, 0.0
    for cell in cells:
        if not cell["audits"]:
            continue
        audits += cell["audits"]
        weight += cell["weight"]
        squared += cell["weight"] ** 2 / cell["audits"]
        failed += cell["weight"] if cell["not_approved"] else 0.0
    if not audits or weight <= 0:
        return RateEstimate(None, None, None, audits, 0.0)
    rate = failed / weight
    effective_n = weight * weight / squared
    low, high = wilson_interval(rate, effective_n, confidence)
    return RateEstimate(rate, low, high, audits, effective_n)
