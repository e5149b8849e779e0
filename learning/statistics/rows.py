"""Distinct rows of an integer or boolean array, for grouping outputs by a pattern (the
label model's verdict patterns, the validators' failure patterns). Pure numpy."""

from __future__ import annotations

import numpy as np


def unique_rows(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows in ascending order, and each row's index among them: what
    ``np.unique(rows, axis=0, return_inverse=True)`` gives, ten to thirty times faster,
    because a lexsort of integer columns beats sorting the rows as opaque bytes."""
    order = np.lexsort(rows.T[::-1])
    ordered = rows[order]
    starts = np.ones(len(rows), dtype=bool)
    starts[1:] = (ordered[1:] != ordered[:-1]).any(axis=1)
    inverse = np.empty(len(rows), dtype=np.int64)
    inverse[order] = np.cumsum(starts) - 1
    return ordered[starts], inverse
