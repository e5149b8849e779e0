"""Threshold policies: where the gate's review and approve thresholds should be.

Pure functions over judged outputs: (score, approved unchanged?, weight).

``guarded`` (the default) gives a stated guarantee. For the approve threshold it looks for
the lowest t such that, among outputs scoring at least t, the share a human would not
approve unchanged is at most alpha, with confidence 1 - delta:

* The share above t is estimated from every judged output scoring at least t, each
  weighted by 1 / its inclusion probability (a held output is always reviewed, p = 1; an
  auto-approved one is audited at the task type's rate), so strata sampled at different
  rates count in proportion to the traffic they stand for.
* Its one-sided (1 - delta) Clopper-Pearson upper bound is computed on the effective
  sample size of those weights (Kish), with the weighted count of failures.
* Candidates are tested in a fixed sequence, from the top of the grid down, and the
  search stops at the first candidate whose bound exceeds alpha (Learn-then-Test: testing
  in a fixed order, each at level delta, controls the chance of wrongly passing any of
  them at delta without a multiplicity correction).

``adr0003`` is ADR-0003's rule as written, kept for comparison: over the last 48 hours'
reviews, if more than 90 % were approved with a score above the review threshold, raise
the review threshold by 0.1.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.stats import beta

GRID_STEP = 0.1
TOP = 10.0
MAX_STEP = 0.1
# Keep review below approve by at least this much.
MIN_GAP = 0.1


@dataclass(frozen=True)
class Judged:
    """A judged output. ``weight`` is 1 / its inclusion probability, times the deciding
    reviewer's reliability where the cycles weight reviewers."""

    score: float
    approved_unchanged: bool
    weight: float = 1.0


@dataclass(frozen=True)
class Evidence:
    threshold: float
    n: int  # judged outputs scoring at least the threshold
    effective_n: float
    not_approved: float  # weighted share x effective n: the failure count the bound uses
    bound: float | None  # the (1 - delta) upper bound on the not-approved share

    def as_dict(self) -> dict:
        return {
            "threshold": self.threshold,
            "n": self.n,
            "effective_n": round(self.effective_n, 2),
            "not_approved": round(self.not_approved, 2),
            "bound": None if self.bound is None else round(self.bound, 4),
        }


def clopper_pearson_upper(failures: float, n: float, delta: float) -> float:
    """One-sided (1 - delta) upper confidence bound on a binomial proportion."""
    if n <= 0:
        return 1.0
    if failures >= n:
        return 1.0
    return float(beta.ppf(1 - delta, failures + 1, n - failures))


class _Tails:
    """Cumulative weights of the judged outputs from the top score down, so that the
    evidence for any threshold is a lookup: the search tests a hundred thresholds on up
    to a hundred thousand verdicts."""

    def __init__(self, judged: Sequence[Judged]):
        ordered = sorted(judged, key=lambda j: j.score, reverse=True)
        self.negated_scores = np.array([-j.score for j in ordered])
        weights = np.array([j.weight for j in ordered], dtype=float)
        failed = np.array([not j.approved_unchanged for j in ordered], dtype=float)
        self.w = np.cumsum(weights)
        self.w2 = np.cumsum(weights**2)
        self.wf = np.cumsum(weights * failed)

    def at(self, threshold: float, delta: float) -> Evidence:
        n = int(np.searchsorted(self.negated_scores, -threshold, side="right"))
        if n == 0:
            return Evidence(threshold, 0, 0.0, 0.0, None)
        w, w2, wf = self.w[n - 1], self.w2[n - 1], self.wf[n - 1]
        effective_n = float(w**2 / w2)
        failures = float(wf / w) * effective_n
        return Evidence(
            threshold=threshold,
            n=n,
            effective_n=effective_n,
            not_approved=failures,
            bound=clopper_pearson_upper(failures, effective_n, delta),
        )


def evidence_at(judged: Sequence[Judged], threshold: float, delta: float) -> Evidence:
    """The judged outputs scoring at least ``threshold``: their count, Kish effective size,
    weighted failures and the (1 - delta) upper bound on the not-approved share."""
    return _Tails(judged).at(threshold, delta)


@dataclass(frozen=True)
class Search:
    """The lowest threshold whose bound passed (None if even the top one failed), with
    the evidence at that threshold and at the first one that failed."""

    threshold: float | None
    passed: Evidence | None
    failed: Evidence | None


def lowest_safe_threshold(
    judged: Sequence[Judged], *, alpha: float, delta: float, top: float = 10.0, bottom: float = 0.0
) -> Search:
    """Learn-then-Test in fixed sequence from ``top`` down to ``bottom`` in GRID_STEP steps."""
    last_short = None
    passed = None
    needed = minimum_sample(alpha, delta)
    tails = _Tails(judged)
    steps = round((top - bottom) / GRID_STEP)
    for i in range(steps + 1):
        t = round(top - i * GRID_STEP, 1)
        evidence = tails.at(t, delta)
        if evidence.effective_n < needed:
            # Too few outputs score this high for even a clean record to pass: testing here
            # would only end the sequence. Which thresholds are skipped depends on the
            # scores alone, never on the verdicts, so the guarantee still holds.
            last_short = evidence
            continue
        if evidence.bound > alpha:
            return Search(passed.threshold if passed else None, passed, evidence)
        passed = evidence
    if passed is None:
        return Search(None, None, last_short)
    return Search(passed.threshold, passed, None)


def minimum_sample(alpha: float, delta: float) -> int:
    """The fewest judged outputs with no failure at all whose bound is at most alpha."""
    if not (0 < alpha < 1 and 0 < delta < 1):
        raise ValueError(f"alpha and delta must be strictly between 0 and 1, not {alpha}, {delta}")
    return int(np.ceil(np.log(delta) / np.log(1 - alpha)))


def step_toward(current: float, target: float, *, max_step: float = MAX_STEP) -> float:
    return round(current + max(-max_step, min(max_step, target - current)), 4)


@dataclass(frozen=True)
class Proposal:
    """Where one threshold should go this cycle, and why."""

    which: str  # "review" or "approve"
    old: float
    new: float
    reason: str
    evidence: dict


def guarded(
    judged: Sequence[Judged],
    *,
    review: float,
    approve: float,
    alpha_approve: float,
    alpha_warning: float,
    delta: float,
) -> list[Proposal]:
    """The guarded policy's proposals for both thresholds (before pins and the gap rule)."""
    proposals = []
    for which, current, alpha in (
        ("approve", approve, alpha_approve),
        ("review", review, alpha_warning),
    ):
        search = lowest_safe_threshold(judged, alpha=alpha, delta=delta)
        needed = minimum_sample(alpha, delta)
        top = search.passed or search.failed
        evidence = {
            "alpha": alpha,
            "delta": delta,
            "passed": search.passed.as_dict() if search.passed else None,
            "failed": search.failed.as_dict() if search.failed else None,
        }
        if search.threshold is None:
            if top is None or top.effective_n < needed:
                have = 0 if top is None else round(top.effective_n)
                proposals.append(
                    Proposal(
                        which,
                        current,
                        current,
                        f"Held: too little data ({have} effective judged outputs at the top "
                        f"score; a bound of {alpha:g} needs at least {needed}).",
                        evidence,
                    )
                )
                continue
            target = 10.0
            why = (
                f"No threshold keeps the not-approved share under {alpha:g} with "
                f"{1 - delta:.0%} confidence: moving up."
            )
        else:
            target = search.threshold
            p = search.passed
            why = (
                f"Lowest threshold with the not-approved share bounded by {alpha:g} at "
                f"{1 - delta:.0%} confidence is {target:g} (n={p.n}, bound {p.bound:.3f})."
            )
        proposals.append(Proposal(which, current, step_toward(current, target), why, evidence))
    return proposals


def adr0003(judged_recent_reviews: Sequence[Judged], *, review: float, approve: float):
    """ADR-0003's rule as written, on the last 48 hours' human reviews."""
    n = len(judged_recent_reviews)
    hits = sum(1 for j in judged_recent_reviews if j.approved_unchanged and j.score > review)
    rate = hits / n if n else 0.0
    evidence = {"n": n, "approved_above_review": hits, "rate": round(rate, 4)}
    if n and rate > 0.9:
        new = step_toward(review, review + MAX_STEP)
        reason = f"{rate:.0%} of the last 48 h's reviews were approved above the threshold."
    else:
        new = review
        reason = (
            f"Held: {rate:.0%} of the last 48 h's reviews were approved above the threshold "
            "(the rule raises it above 90 %)."
        )
    return [
        Proposal("review", review, new, reason, evidence),
        Proposal("approve", approve, approve, "The ADR rule never moves it.", evidence),
    ]


def constrain(
    proposals: Sequence[Proposal], *, pins: dict[str, bool], min_gap: float = MIN_GAP
) -> dict[str, Proposal]:
    """Apply pins (a pinned threshold does not move) and keep review < approve."""
    by_which = {p.which: p for p in proposals}
    for which, pinned in pins.items():
        p = by_which[which]
        if pinned and p.new != p.old:
            by_which[which] = Proposal(which, p.old, p.old, "Held: pinned by an admin.", p.evidence)
    review, approve = by_which["review"], by_which["approve"]
    if review.new > approve.new - min_gap:
        if pins.get("approve"):
            cap = round(approve.new - min_gap, 4)
            by_which["review"] = Proposal(
                "review",
                review.old,
                cap,
                review.reason + f" Kept below the pinned approve threshold ({approve.new:g}).",
                review.evidence,
            )
        else:
            # The approve threshold gives way upward (approving less is the safe side), up
            # to the top of the scale; past that the review threshold stops below it.
            floor = min(round(review.new + min_gap, 4), TOP)
            by_which["approve"] = Proposal(
                "approve",
                approve.old,
                floor,
                approve.reason + f" Kept above the review threshold ({review.new:g}).",
                approve.evidence,
            )
            if review.new > floor - min_gap and not pins.get("review"):
                by_which["review"] = Proposal(
                    "review",
                    review.old,
                    round(floor - min_gap, 4),
                    review.reason + f" Kept below the approve threshold ({floor:g}).",
                    review.evidence,
                )
    return by_which
