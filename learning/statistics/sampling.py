"""The inclusion probability a judged output achieved, for importance weights: pure (numpy).

An output under review was drawn at its rate: 1 for a held output, the audit rate in force
for a delivered one. It is evidence only once reviewed, and the reviewers may not reach
every output drawn: so the probability it achieved is its rate times the share of its
stratum's draws in the window that were reviewed by the time of the cycle (a second stage
of sampling, taken as random within the stratum: held outputs in turn, audits in turn).
Its importance weight is 1 / that, so that the reviewed outputs stand for every output of
their stratum, reviewed or not.

The learning cycles (``learning.evidence``) and the closed loop that proves them
(``simulator.loop``) both weigh outputs here; a stratum is a task type and the
gate's decision as ``gating.selectors.draw_stratum`` names it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


def achieved_inclusion(rate, drawn, reviewed) -> np.ndarray:
    """Per judged output, from its draw rate and its stratum's counts of outputs drawn and
    reviewed in the window: rate x min(1, reviewed / drawn). A judged output was reviewed,
    so its stratum counts at least one review (a count that left it out, such as one taken
    a moment earlier, cannot make its weight infinite); with nothing counted as drawn, the
    rate alone."""
    rate = np.asarray(rate, dtype=float)
    drawn = np.asarray(drawn, dtype=float)
    reviewed = np.maximum(np.asarray(reviewed, dtype=float), 1.0)
    none = np.ones(np.broadcast(rate, drawn).shape)
    share = np.divide(reviewed, drawn, out=none, where=drawn > 0)
    return rate * np.minimum(1.0, share)


# Knuth's multiplicative hash: consecutive ids land far apart, so the part taken is spread
# evenly over the outputs in arrival order and says nothing of any one of them.
_GOLDEN = np.uint64(2654435761)
_SPAN = 2**32


@dataclass(frozen=True, eq=False)
class FitCertifySplit:
    """Which judged outputs fit the validator weights and which certify the thresholds.

    Learn-then-Test's guarantee holds for a score fixed apart from the data that certifies
    it; fitting the weights on the outputs that then certify them breaks that. A fixed share
    of outputs, chosen by a hash of each output's id, fits; the rest certify. The hash reads
    nothing of an output, so the certifying part of the traffic is a random part of it, as
    exchangeable with the traffic to come as the whole: its outputs keep their weights, and
    the bound is on the certifying part's traffic. Share 0 fits and certifies on every
    output, as the cycles did before.
    """

    fit: np.ndarray
    certify: np.ndarray


def fit_certify_split(output_ids, fit_share: float) -> FitCertifySplit:
    if not 0 <= fit_share < 1:
        raise ValueError(f"fit_share must be at least 0 and below 1, not {fit_share}")
    ids = np.asarray(output_ids, dtype=np.int64)
    if fit_share == 0:
        every = np.ones(ids.shape, dtype=bool)
        return FitCertifySplit(fit=every, certify=every)
    hashed = (ids.astype(np.uint64) * _GOLDEN) % np.uint64(_SPAN)
    fit = hashed < np.uint64(round(fit_share * _SPAN))
    return FitCertifySplit(fit=fit, certify=~fit)
