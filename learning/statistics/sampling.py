"""The inclusion probability a judged output achieved, for importance weights: pure (numpy).

An output under review was drawn at its rate: 1 for a held output, the audit rate in force
for a delivered one. It is evidence only once reviewed, and the reviewers may not reach
every output drawn: so the probability it achieved is its rate times the share of its
stratum's draws in the window that were reviewed by the time of the cycle (a second stage
of sampling, taken as random within the stratum: held outputs in turn, audits in turn).
Its importance weight is 1 / that, so that the reviewed outputs stand for every output of
their stratum, reviewed or not.

The learning cycles (``learning.evidence``) and the closed loop that proves them
(``learning.simulation.loop``) both weigh outputs here; a stratum is a task type and the
gate's decision as ``gating.selectors.draw_stratum`` names it.
"""

from __future__ import annotations

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
