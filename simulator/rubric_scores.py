"""How a simulated reviewer scores a rubric: from the output's hidden truth, blurred by the
reviewer's own noise and leaning as their confusion matrix has them (``world.Reviewer``).

Pure: no database. Each truth has a quality, a place on a scale from 0 (worst) to 1 (best).
An output has its own value on each dimension, drawn once from its truth's place (from the
output's own generator, ``output_key``): whether it does cite its sources, how helpful it
is. Every reviewer of that output looks at that same value, so two reviewers agree as far
as each reads it right. A reviewer reads it moved by their lean (a harsh reviewer sees every
output a little worse, a lenient one a little better) and blurred by their noise (the share
of their verdicts that are wrong, on average over the truths):

* numeric: the output's place on the scale, moved by the lean, plus Gaussian noise,
  clipped to the scale and rounded to whole numbers when the scale's ends are whole;
* boolean and categorical: the output's answer (true, or the first choice, as "neutral",
  with the truth's place as chance; else false, or one of the other choices alike); but,
  with the reviewer's noise as chance, their own guess from the place they see instead.

An optional dimension is left unscored now and then, as people do.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence

from simulator.world import ACTIONS, RIGHT_ACTION, TRUTHS, Action, Reviewer, Truth

# Where each truth lies on the scale from worst (0) to best (1).
QUALITY: Mapping[Truth, float] = {Truth.GOOD: 0.85, Truth.NEEDS_EDIT: 0.5, Truth.BAD: 0.15}
# How far a reviewer's lean (from -1, rejects everything, to 1, approves everything) moves
# the place they see.
LEAN_WEIGHT = 0.5
# The spread of a numeric score, as a share of the scale: that of a reviewer who is never
# wrong, plus their noise.
NUMERIC_SPREAD = 0.08
# How far outputs of one truth differ in their place on a numeric scale.
OUTPUT_SPREAD = 0.12
# The chance that a reviewer leaves an optional dimension unscored.
OPTIONAL_SKIPPED = 0.25


def reviewer_noise(reviewer: Reviewer) -> float:
    """The share of the reviewer's verdicts that are wrong, on average over the truths."""
    return sum(1 - reviewer.matrix[t][RIGHT_ACTION[t]] for t in TRUTHS) / len(TRUTHS)


def reviewer_lean(reviewer: Reviewer) -> float:
    """How much more the reviewer approves than rejects, on average over the truths, beyond
    what the right verdicts would (which balance out to 0): below 0 harsh, above lenient."""

    def lean(row: Mapping[Action, float]) -> float:
        return row[Action.APPROVE] - row[Action.REJECT]

    right = {t: {a: float(a == RIGHT_ACTION[t]) for a in ACTIONS} for t in TRUTHS}
    return sum(lean(reviewer.matrix[t]) - lean(right[t]) for t in TRUTHS) / len(TRUTHS)


def _place(truth: Truth, reviewer: Reviewer) -> float:
    return min(1.0, max(0.0, QUALITY[truth] + LEAN_WEIGHT * reviewer_lean(reviewer)))


def _answer(dimension: Mapping, place: float, rng: random.Random):
    """A boolean's or a categorical's answer at ``place``: the good one with it as chance."""
    if dimension["kind"] == "boolean":
        return rng.random() < place
    best, *others = dimension["choices"]
    return best if rng.random() < place else rng.choice(others)


def scores_draw(
    dimensions: Sequence[Mapping],
    truth: Truth,
    reviewer: Reviewer,
    rng: random.Random,
    output_key: str,
) -> dict:
    """The reviewer's scores of an output of this truth on the rubric's ``dimensions`` (as
    gating.rubrics stores them), by dimension name: what a decision carries. ``output_key``
    names the output (the seed and its id): every reviewer of it reads the same values."""
    noise = reviewer_noise(reviewer)
    place = _place(truth, reviewer)
    scores: dict = {}
    for dimension in dimensions:
        if not dimension["required"] and rng.random() < OPTIONAL_SKIPPED:
            continue
        kind = dimension["kind"]
        # The output's own value on this dimension, the same whoever reads it.
        output = random.Random(f"{output_key}-{dimension['name']}")
        if kind == "numeric":
            low, high = dimension["minimum"], dimension["maximum"]
            own = output.gauss(QUALITY[truth], OUTPUT_SPREAD)
            leaned = own + place - QUALITY[truth]
            seen = min(1.0, max(0.0, rng.gauss(leaned, NUMERIC_SPREAD + noise)))
            value = low + seen * (high - low)
            whole = float(low).is_integer() and float(high).is_integer()
            scores[dimension["name"]] = round(value) if whole else value
        elif kind in ("boolean", "categorical"):
            own = _answer(dimension, QUALITY[truth], output)
            guessed = rng.random() < noise
            scores[dimension["name"]] = _answer(dimension, place, rng) if guessed else own
        else:
            raise ValueError(f"Unknown dimension kind {kind!r}.")
    return scores
