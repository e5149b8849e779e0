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
# Measured against the simulator's drift (bench.drift_alarm): at 600 outputs a day the PSI as
# written crossed the alert's limit on 31 % of the days of models that did not drift; corrected,
# on 0.4 %, and the drifting model's lines were still caught on the drift day (79 of 80).
CORRECT_FOR_SAMPLE = True


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


def corrected_psi(expected: Sequence[float], actual: Sequence[float]) -> float | None:
    """PSI with what sampling alone shows taken out, for days of few outputs: the PSI of
    half-count shares less ``sampling_psi``, at least 0. None when either side is empty.

    Two samples of n_a and n_e outputs drawn from one distribution show a PSI of about
    (k - 1) * (1/n_a + 1/n_e) on average over k bins (to first order the PSI is the sum of
    (a - e)^2 / p, a chi-square over k - 1 degrees of freedom times that scale): 0.21 for 50
    outputs against 350 over ten bins, near the 0.25 alert limit with nothing moved."""
    smoothed = smoothed_psi(expected, actual)
    if smoothed is None:
        return None
    return max(smoothed - sampling_psi(expected, actual), 0.0)


def smoothed_psi(expected: Sequence[float], actual: Sequence[float]) -> float | None:
    """The PSI of the two sides' shares with half a count added to each bin either side has
    outputs in: an empty bin would otherwise count as a share of 1e-4, and weigh like a
    shift. None when either side is empty."""
    e = np.asarray(expected, dtype=float)
    a = np.asarray(actual, dtype=float)
    if e.sum() == 0 or a.sum() == 0:
        return None
    seen = (e + a) > 0
    e, a = e[seen] + 0.5, a[seen] + 0.5
    e, a = e / e.sum(), a / a.sum()
    return float(np.sum((a - e) * np.log(a / e)))


def sampling_psi(expected: Sequence[float], actual: Sequence[float]) -> float:
    """What two samples of these sizes from one distribution show on average:
    (k - 1) * (1/n_a + 1/n_e), k the bins either side has outputs in."""
    e = np.asarray(expected, dtype=float)
    a = np.asarray(actual, dtype=float)
    bins = int(np.count_nonzero((e + a) > 0))
    return (bins - 1) * (1 / a.sum() + 1 / e.sum())


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
    correct_for_sample: bool = CORRECT_FOR_SAMPLE,
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
        measure = corrected_psi if correct_for_sample else psi_from_counts
        value = measure(baseline, recent)
        if value is not None:
            out[day] = value
    return out
