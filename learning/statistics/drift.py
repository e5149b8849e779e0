"""Population stability index: how far a score distribution has moved."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

# Scores live on 0-10: ten bins of one point each (a 10.0 goes in the last).
SCORE_BINS = np.linspace(0.0, 10.0, 11)
# Keeps an empty bin from making the index infinite.
EPSILON = 1e-4


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
