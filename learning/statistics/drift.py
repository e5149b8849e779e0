"""Population stability index: how far a score distribution has moved."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import date, timedelta

import numpy as np

# Scores live on 0-10: ten bins of one point each (a 10.0 goes in the last).
SCORE_BINS = np.linspace(0.0, 10.0, 11)
# Keeps an empty bin from making the index infinite.
EPSILON = 1e-4
# Each day's scores are compared with the days before it, and only where both sides hold at
# least this many outputs: the definition the drift page's PSI chart and the score-shift
# alert share (``daily_psi``).
BASELINE_DAYS = 7
MIN_OUTPUTS = 30


def psi_from_counts(expected: Sequence[float], actual: Sequence[float]) -> float | None:
    """PSI = sum over bins of (a - e) * ln(a / e), a and e the bin shares of ``actual`` and
    ``expected``. Under 0.1 is stable, 0.1-0.25 a moderate shift, over 0.25 a large one.
    None when either side is empty."""
    e = np.asarray(expected, dtype=float)
    a = np.asarray(actual, dtype=float)
    if e.sum() == 0 or a.sum() == 0:
        return None
    e = np.maximum(e / e.sum(), EPSILON)
    a = np.maximum(a / a.sum(), EPSILON)
    return float(np.sum((a - e) * np.log(a / e)))


def psi(expected: Sequence[float], actual: Sequence[float], bins=SCORE_BINS) -> float | None:
    """PSI of two samples of scores, binned by SCORE_BINS."""
    if len(expected) == 0 or len(actual) == 0:
        return None
    return psi_from_counts(
        np.histogram(np.clip(expected, bins[0], bins[-1]), bins=bins)[0],
        np.histogram(np.clip(actual, bins[0], bins[-1]), bins=bins)[0],
    )


def daily_psi(
    days: Mapping[date, Sequence[int]],
    *,
    baseline_days: int = BASELINE_DAYS,
    min_outputs: int = MIN_OUTPUTS,
) -> dict[date, float]:
    """Per day of ``days`` (score counts per bin, by UTC day), the PSI of that day's scores
    against the ``baseline_days`` days before it summed; days where either side holds fewer
    than ``min_outputs`` outputs are left out. Days before the first that can have a full
    baseline are compared with what there is."""
    out = {}
    for day in sorted(days):
        recent = days[day]
        baseline = [0] * len(recent)
        for back in range(1, baseline_days + 1):
            for i, n in enumerate(days.get(day - timedelta(days=back), ())):
                baseline[i] += n
        if sum(recent) < min_outputs or sum(baseline) < min_outputs:
            continue
        value = psi_from_counts(baseline, recent)
        if value is not None:
            out[day] = value
    return out
