"""The gold check: does the label model predict what a lead says, judging an output again
unseen?

A random share of settled audits gets one more round, a lead's (``gating.reviews.gold_drawn``).
Those verdicts stay out of the label model's fit, so for those outputs the model's
posterior over the classes is a prediction made without them. With the lead's confusion
matrix, which the model estimates from the lead's other verdicts, it predicts the lead's
verdict: P(label) = sum over classes of P(class) x P(label | class, this lead). Over the
outputs checked, the mean predicted chance that the lead finds fault (modifies, not for
style only, or rejects), and that the lead rejects, should lie in the exact
(Clopper-Pearson) interval of the shares the leads' verdicts show. A posterior that
understates the error, or confusion matrices that misread the reviewers, fail it.

The lead's own slips are part of the prediction, so a lead who errs does not show as a miss;
reading the lead's verdict as the truth instead would, with leads who fail a good output a
third of the time, call a calibrated model several times too optimistic.

Pure numpy and scipy: no ORM.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.stats import binomtest

from learning.statistics.labels import CLASSES, LABELS, MODIFY, REJECT

# What each measure counts among a lead's labels (a style-only modify counts as an approve).
MEASURES = {"finds_fault": (MODIFY, REJECT), "rejects": (REJECT,)}


@dataclass(frozen=True)
class GoldCheck:
    """One measure over the gold checks: the label model's mean predicted chance of the
    leads' verdicts in that measure, against the share of them that were, with its interval
    at ``confidence``."""

    measure: str
    n: int
    predicted: float
    observed: float
    low: float
    high: float

    @property
    def consistent(self) -> bool:
        return self.low <= self.predicted <= self.high

    def as_record(self) -> dict:
        return {
            "n": self.n,
            "predicted": round(self.predicted, 4),
            "observed": round(self.observed, 4),
            "low": round(self.low, 4),
            "high": round(self.high, 4),
            "consistent": self.consistent,
        }


def predicted_labels(posterior: np.ndarray, confusion: np.ndarray) -> np.ndarray:
    """P(label) for each output's gold verdict: ``posterior[i, k]`` is P(class k) for output
    i, ``confusion[i, k, l]`` P(label l | class k) for the lead who judged it."""
    posterior = np.asarray(posterior).reshape(-1, len(CLASSES))
    confusion = np.asarray(confusion).reshape(-1, len(CLASSES), len(LABELS))
    if len(posterior) != len(confusion):
        raise ValueError("posterior and confusion differ in length")
    return np.einsum("ik,ikl->il", posterior, confusion)


def gold_checks(
    predicted: np.ndarray, said: np.ndarray, *, confidence: float
) -> dict[str, GoldCheck]:
    """Each measure's check over the outputs given: ``predicted[i]`` is P(label) for output
    i's gold verdict (``predicted_labels``), ``said[i]`` the label the lead gave (an index
    of ``LABELS``). Empty with no outputs."""
    predicted = np.asarray(predicted).reshape(-1, len(LABELS))
    said = np.asarray(said).reshape(-1)
    if len(predicted) != len(said):
        raise ValueError("predicted and said differ in length")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must lie strictly between 0 and 1, not {confidence}")
    if len(said) and (said.min() < 0 or said.max() >= len(LABELS)):
        raise ValueError(f"said must index {LABELS}")
    n = len(said)
    if n == 0:
        return {}
    checks = {}
    for measure, labels_counted in MEASURES.items():
        found = int(np.isin(said, labels_counted).sum())
        # Clopper-Pearson's, scipy's default.
        interval = binomtest(found, n).proportion_ci(confidence_level=confidence)
        checks[measure] = GoldCheck(
            measure=measure,
            n=n,
            predicted=float(predicted[:, list(labels_counted)].sum(axis=1).mean()),
            observed=found / n,
            low=float(interval.low),
            high=float(interval.high),
        )
    return checks
