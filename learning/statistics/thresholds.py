"""Threshold policies: where the gate's review and approve thresholds should be.

Pure functions over a window of judged outputs (numpy arrays, no ORM).

``guarded`` (the default) reads the label model's losses, not raw verdicts:

* The approve threshold is certified by ``certify.certify_approve_threshold``: the lowest
  threshold at which the traffic's P(bad) and P(needs an edit or bad) are both bounded by
  their budgets with confidence 1 - delta. Its state (certified, underpowered, not
  attainable) decides the move (``certify.smoothed_move``): tighten at once, loosen by
  at most a step, hold on weak or bad evidence, never climb quietly.
* The review threshold follows the warning band's own budget: warnings are delivered, so
  among outputs scoring in [review, approve) the traffic's P(bad) must be bounded by
  ``alpha_warning``. Over budget, the review threshold rises at once to the lowest value
  whose band is within it; within budget, it comes down one step only where the outputs
  just below it, the ones the next steps would deliver, are themselves within budget, or
  at most two in three bad with the warnings, once they join, still within budget. So a
  clean tail far below never pulls the threshold down through the bad outputs above it,
  and the many good warnings never carry a slice that is nearly all bad out with them.

``adr0003`` is ADR-0003's rule as written, kept for comparison: over the last 48 hours'
reviews, if more than 90 % were approved with a score above the review threshold, raise
the review threshold by 0.1.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from learning.statistics import certify

State = certify.State
TOP = certify.GRID_TOP
MAX_STEP = certify.MAX_STEP
# Keep review below approve by at least this much.
MIN_GAP = 0.1
# Lowering the review threshold delivers the outputs just below it as warnings: this is how
# far below it they are looked at, wide enough to hold a few dozen held outputs.
RELEASE_SLICE = 0.5
# ... and delivered only where that slice is shown at most two in three bad. Without a cap
# the band's own budget alone would release a slice that is nearly all bad as long as the
# many good warnings above dilute it (in the simulated world, down to outputs 90 % bad,
# with the band still within 25 %). A lower cap holds more than the warnings' budget asks
# for: with only the band's budget as the slice's cap, slices a third bad stayed held with
# the warnings at a fifth of their budget; with a cap of a half, the default world held 4
# to 6 points more of its traffic than without learning, its warnings 6 % bad; with two
# in three, 1.0 to 1.4 points more, its warnings 9 to 10 % bad (docs/learning.md).
RELEASE_MAX_BAD = 2 / 3
# The warning band's search moves in the review threshold's own steps: each candidate costs a
# bound of its own (with replicates), unlike the approve search's one pass.
REVIEW_GRID_STEP = MAX_STEP
ADR_RATE = 0.9
TESTABLE_HEADROOM = 2.0


@dataclass(frozen=True)
class Judged:
    """A judged output as ADR-0003's rule reads it."""

    score: float
    approved_unchanged: bool


@dataclass(frozen=True, eq=False)
class Window:
    """One task type's judged outputs in a cycle's window, as the guarded policy reads them.

    ``scores`` are rescored with the current validator weights; ``weights`` are 1 / each
    output's achieved inclusion probability; the losses are the label model's P(bad) and
    P(needs an edit or bad), and the replicates their bootstrap copies, shape (B, n).
    ``max_weight`` is the design's largest weight, 1 / the smallest audit rate in force."""

    scores: np.ndarray
    weights: np.ndarray
    loss_bad: np.ndarray
    loss_edit: np.ndarray
    replicates_bad: np.ndarray | None = None
    replicates_edit: np.ndarray | None = None
    max_weight: float | None = None

    def __post_init__(self) -> None:
        n = len(self.scores)
        columns = (self.weights, self.loss_bad, self.loss_edit)
        if any(len(column) != n for column in columns):
            raise ValueError("scores, weights and losses must have one entry per judged output")

    def where(self, mask: np.ndarray) -> Window:
        """The judged outputs picked by ``mask``."""
        return Window(
            scores=self.scores[mask],
            weights=self.weights[mask],
            loss_bad=self.loss_bad[mask],
            loss_edit=self.loss_edit[mask],
            replicates_bad=None if self.replicates_bad is None else self.replicates_bad[:, mask],
            replicates_edit=None if self.replicates_edit is None else self.replicates_edit[:, mask],
            max_weight=self.max_weight,
        )


@dataclass(frozen=True)
class Budgets:
    alpha_bad: float = certify.DEFAULT_ALPHA_BAD
    alpha_edit: float = certify.DEFAULT_ALPHA_EDIT
    alpha_warning: float = 0.25
    delta: float = certify.DEFAULT_DELTA


@dataclass(frozen=True)
class Proposal:
    """Where one threshold should go this cycle, its state, and why."""

    which: str  # "review" or "approve"
    old: float
    new: float
    reason: str
    evidence: dict = field(default_factory=dict)
    state: str = ""
    # Approve only: the estimated approve line (certify.estimate_move), where the run
    # certified nothing and was asked to estimate; None otherwise.
    estimate: float | None = None


def guarded(
    window: Window,
    *,
    review: float,
    approve: float,
    budgets: Budgets,
    last_certified: float | None,
    max_step: float = MAX_STEP,
    estimate: bool = False,
    estimate_line: float | None = None,
) -> list[Proposal]:
    """The guarded policy's proposals for both thresholds (before pins and the gap rule).
    With ``estimate``, a run that certifies nothing also moves the estimated approve line
    (``certify.estimate_move``) from ``estimate_line``, where the last run left it."""
    certification = _certify(window, budgets, headroom=TESTABLE_HEADROOM, floor=review)
    move = certify.smoothed_move(
        approve, certification, last_certified=last_certified, max_step=max_step
    )
    line = (
        certify.estimate_move(estimate_line, move.new, certification, max_step=max_step)
        if estimate
        else None
    )
    approve_proposal = Proposal(
        "approve",
        approve,
        move.new,
        move.reason if line is None else f"{move.reason} {line.reason}",
        certification.as_dict(),
        certification.state,
        estimate=None if line is None else line.new,
    )
    review_proposal = warning_band_move(
        window,
        review=review,
        approve=move.new,
        alpha=budgets.alpha_warning,
        delta=budgets.delta,
        max_step=max_step,
    )
    return [review_proposal, approve_proposal]


def _certify(window: Window, budgets: Budgets, **search) -> certify.Certification:
    return certify.certify_approve_threshold(
        window.scores,
        window.weights,
        window.loss_bad,
        window.loss_edit,
        alpha_bad=budgets.alpha_bad,
        alpha_edit=budgets.alpha_edit,
        delta=budgets.delta,
        replicates_bad=window.replicates_bad,
        replicates_edit=window.replicates_edit,
        max_weight=window.max_weight,
        **search,
    )


def reading_at(window: Window, threshold: float, budgets: Budgets) -> dict:
    """What the outputs scoring at least ``threshold`` are estimated to be: P(bad) and
    P(needs an edit or bad), each with its estimate and its (1 - delta) upper bound, read
    as the approve search reads a candidate."""
    return _certify(window, budgets, top=threshold, bottom=threshold).candidates[0].as_dict()


def _band_bound(window: Window, low: float, high: float, delta: float) -> certify.LossBound:
    band = window.where((window.scores >= low) & (window.scores < high))
    return certify.weighted_loss_bound(
        band.loss_bad,
        band.weights,
        delta=delta,
        replicates=band.replicates_bad,
        max_weight=band.max_weight,
    )


def warning_band_move(
    window: Window,
    *,
    review: float,
    approve: float,
    alpha: float,
    delta: float,
    max_step: float = MAX_STEP,
    min_gap: float = MIN_GAP,
) -> Proposal:
    """The review threshold under the warning band's budget: P(bad) among outputs scoring
    in [review, approve) bounded by ``alpha`` with confidence 1 - delta."""
    top = round(approve - min_gap, 4)
    with_replicates = window.replicates_bad is not None
    delta_sampling = certify.sampling_delta(delta, with_replicates)
    needed = certify.minimum_effective_sample(alpha, delta_sampling)
    band = _band_bound(window, min(review, top), approve, delta)
    evidence = {
        "alpha": alpha,
        "delta": delta,
        "needed_effective_n": round(needed, 2),
        "band": {"from": min(review, top), "to": approve, **band.as_dict()},
    }
    budget = f"P(bad) among warnings <= {alpha:g} with {1 - delta:.0%} confidence"

    def proposal(new: float, state: State, why: str) -> Proposal:
        return Proposal("review", review, round(new, 4), why, evidence, state)

    below = _band_bound(window, review - RELEASE_SLICE, review, delta)
    # The warnings as they would be once the slice is delivered.
    joined = _band_bound(window, review - RELEASE_SLICE, approve, delta)
    evidence["release"] = {"from": review - RELEASE_SLICE, "to": review, **below.as_dict()}
    evidence["joined"] = {"from": review - RELEASE_SLICE, "to": approve, **joined.as_dict()}
    slice_cap = max(alpha, RELEASE_MAX_BAD)
    # The slice within the band's budget itself can come down however thin the band; one
    # at most two in three bad, where the band with it is shown within budget.
    slice_within = below.effective_n >= needed and below.bound <= alpha
    band_keeps = (
        below.effective_n >= certify.minimum_effective_sample(slice_cap, delta_sampling)
        and below.bound <= slice_cap
        and joined.effective_n >= needed
        and joined.bound <= alpha
    )
    releasable = review - max_step >= 0 and (slice_within or band_keeps)
    release = ""
    if releasable:
        release = (
            f"The held outputs within {RELEASE_SLICE:g} below have P(bad) {below.estimate:.4f} "
            f"(bound {below.bound:.4f})"
        )
        if not slice_within:
            release += (
                f", at most {slice_cap:.0%} bad, and with them the warnings' P(bad) is "
                f"bounded by {joined.bound:.4f}"
            )
        release += f": lowered by {max_step:g}."
    if band.effective_n < needed:
        why = (
            f"Underpowered: {band.effective_n:.0f} effective judged warnings, "
            f"{math.ceil(needed)} needed to show {budget}."
        )
        # A band too thin to judge (say, the threshold just below the approve threshold)
        # can still come down where what a step would deliver is shown within budget.
        if releasable:
            return proposal(max(0.0, review - max_step), State.UNDERPOWERED, f"{why} {release}")
        return proposal(review, State.UNDERPOWERED, f"{why} Held.")
    if band.bound > alpha:
        if band.estimate < alpha:
            return proposal(
                review,
                State.UNDERPOWERED,
                f"Underpowered: the warnings' P(bad) {band.estimate:.4f} is within budget but "
                f"its bound {band.bound:.4f} is not; more audits of warnings may show it. Held.",
            )
        raised, first = _lowest_band_within(
            window,
            review=review,
            top=top,
            approve=approve,
            alpha=alpha,
            delta=delta,
            needed=needed,
        )
        if raised is not None:
            return proposal(
                raised,
                State.CERTIFIED,
                f"The warnings' P(bad) {band.estimate:.4f} (bound {band.bound:.4f}) is over "
                f"{budget}; from {raised:g} up it is within. Raised from {review:g} at once.",
            )
        if first is None or first.estimate >= alpha:
            return proposal(
                top,
                State.NOT_ATTAINABLE,
                f"Not attainable: the warnings' P(bad) is {band.estimate:.4f}, over {budget}, "
                f"and no narrower band is within it. Raised to {top:g}: what is not "
                "auto-approved is held.",
            )
        # The narrowest band tested is within budget by its estimate but not its bound:
        # tighten a step at a time while the evidence comes in.
        return proposal(
            min(top, review + max_step),
            State.UNDERPOWERED,
            f"The warnings' P(bad) {band.estimate:.4f} is over {budget}; the narrowest band "
            f"with data enough to test (from {first.threshold:g}) has P(bad) "
            f"{first.estimate:.4f}, bounded only by {first.bound:.4f}. Raised by {max_step:g}.",
        )
    # Within budget: lower one step only if what a step would deliver is within it too.
    within = f"The warnings' P(bad) {band.estimate:.4f} is bounded by {band.bound:.4f}."
    if releasable:
        return proposal(max(0.0, review - max_step), State.CERTIFIED, f"{within} {release}")
    return proposal(
        review,
        State.CERTIFIED,
        f"{within} Held: the outputs just below are not shown to be at most {slice_cap:.0%} "
        f"bad with the warnings kept within budget ({below.effective_n:.0f} effective, "
        f"bound {below.bound:.4f}; with them, the warnings' bound {joined.bound:.4f}).",
    )


@dataclass(frozen=True)
class _Band:
    threshold: float
    estimate: float
    bound: float


def _lowest_band_within(
    window: Window,
    *,
    review: float,
    top: float,
    approve: float,
    alpha: float,
    delta: float,
    needed: float,
) -> tuple[float | None, _Band | None]:
    """The lowest t in (review, top] whose band [t, approve) is within budget, testing from
    the top down in fixed sequence (stopping at the first failure), skipping candidates too
    thin to test; None if none passes. Also the first band tested, if any."""
    passed = first = None
    # Down to review itself: a review threshold between tenths has candidates less than a
    # step above it. A candidate at review has the whole band, over budget: the search
    # stops there.
    for t in certify.grid(top, review, step=REVIEW_GRID_STEP):
        bound = _band_bound(window, float(t), approve, delta)
        if bound.effective_n < needed:
            continue
        if first is None:
            first = _Band(float(t), bound.estimate, bound.bound)
        if bound.bound > alpha:
            break
        passed = float(t)
    return passed, first


def audit_rate(state: str, current: float, *, budget: float) -> float:
    """The audit rate of auto-approved outputs after a run: raised to the admin's budget
    while the approve threshold is underpowered, so that evidence catches up; otherwise
    kept (more audits cannot help a threshold that is not attainable). One raise to the
    budget rather than several steps: a window that mixes audit rates gets the widest
    weight range of them in its bound."""
    if state == State.UNDERPOWERED and current < budget:
        return budget
    return current


def step_toward(current: float, target: float, *, max_step: float = MAX_STEP) -> float:
    return round(current + max(-max_step, min(max_step, target - current)), 4)


def adr0003(judged_recent_reviews: Sequence[Judged], *, review: float, approve: float):
    """ADR-0003's rule as written, on the last 48 hours' human reviews."""
    n = len(judged_recent_reviews)
    hits = sum(1 for j in judged_recent_reviews if j.approved_unchanged and j.score > review)
    rate = hits / n if n else 0.0
    evidence = {"n": n, "approved_above_review": hits, "rate": round(rate, 4)}
    if n and rate > ADR_RATE:
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
            by_which[which] = replace(p, new=p.old, reason="Held: pinned by an admin.")
    review, approve = by_which["review"], by_which["approve"]
    # Rounded as the thresholds are: 4.1 - 0.1 is 3.9999999999999996, and 4.0 is a gap below.
    if review.new > round(approve.new - min_gap, 4):
        if pins.get("approve"):
            cap = round(approve.new - min_gap, 4)
            by_which["review"] = replace(
                review,
                new=cap,
                reason=review.reason
                + f" Kept below the pinned approve threshold ({approve.new:g}).",
            )
        else:
            # The approve threshold gives way upward (approving less is the safe side), up
            # to the top of the scale; past that the review threshold stops below it.
            floor = min(round(review.new + min_gap, 4), TOP)
            by_which["approve"] = replace(
                approve,
                new=floor,
                reason=approve.reason + f" Kept above the review threshold ({review.new:g}).",
            )
            if review.new > round(floor - min_gap, 4) and not pins.get("review"):
                by_which["review"] = replace(
                    review,
                    new=round(floor - min_gap, 4),
                    reason=review.reason + f" Kept below the approve threshold ({floor:g}).",
                )
    return by_which
