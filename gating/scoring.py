"""The confidence gate: score an output and decide what happens to it.

Implements ADR-0003 (seed ``002_fa55fc0af51f2daa.txt``) as amended by the foundation
issue, with the confidence weighting ``min(1, n/20)`` of seed ``003_fb836a15adb537f8.txt``,
and with the accuracy bonus applied to the score's odds rather than the score
(``final_score``), so that it never ties outputs at the cap.
Pure functions over plain values: no ORM, no Django, so that the API, the simulator and
the learning evaluations all run the very same arithmetic.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from enum import StrEnum
from functools import lru_cache
from typing import NamedTuple

import numpy as np

# The validators scorer's label (gating.scorers.label). Version 2 applies the accuracy bonus
# to the score's odds (final_score); outputs before 0016 said "adr0003-v1".
SCORER_NAME = "validators-v2"

SCORE_MIN = 0.0
SCORE_MAX = 10.0

VALIDATOR_POINTS = 8.0
CLARITY_POINTS = 0.5
COHERENCE_POINTS = 1.5

HIGH_ACCURACY = 0.90
HIGH_ACCURACY_BONUS = 0.5
GOOD_ACCURACY = 0.75
GOOD_ACCURACY_BONUS = 0.2
# Seed 003: a pair's track record counts fully only after 20 reviews.
FULL_CONFIDENCE_REVIEWS = 20

HALLUCINATION_PENALTY = 0.5


# What a faulted output's one impact is called (fault_result): the gate and the audit log
# know a fault by it.
FAULT_FACTOR = "scoring_fault"


class ScoringFault(ArithmeticError):
    """A scorer's arithmetic left the finite numbers, so its score means nothing."""


def require_finite(**terms: float) -> None:
    """Raise ScoringFault naming the first term that is NaN or infinite.

    A comparison with NaN is false and ``min``/``max`` pass it through in either order,
    so a NaN that reached ``clamp`` could come out as 10 and be approved: every term a
    score is built from is checked before it is used."""
    for name, value in terms.items():
        if not math.isfinite(value):
            raise ScoringFault(f"{name} is {value}")


def require_shares(**terms: float) -> None:
    """Raise ScoringFault naming the first term that is not a share from 0 to 1 (NaN is not).

    The score's terms (the validators' pass fraction, the input's clarity, the output's
    coherence) are shares, and within them the formula stays within 0-10. Outside them (a
    sum of weights that overflowed, a value no one checked) it could reach 10 and be
    approved: the score is refused instead, and the output held."""
    for name, value in terms.items():
        if not 0.0 <= value <= 1.0:
            raise ScoringFault(f"{name} is {value}, not a share from 0 to 1")


class Decision(StrEnum):
    APPROVED = "approved"
    WARNING = "warning"
    PENDING_REVIEW = "pending_review"


class ValidatorOutcome(NamedTuple):
    # A named tuple rather than a dataclass: the gate hashes tuples of these to reuse the
    # validator terms of the score, and a tuple hashes in C.
    name: str
    passed: bool
    weight: float = 1.0
    is_fact_check: bool = False


@dataclass(frozen=True, slots=True)
class PairHistory:
    """Human reviews of one (task type, model) pair."""

    reviewed: int = 0
    approved_unchanged: int = 0

    @property
    def accuracy(self) -> float | None:
        return self.approved_unchanged / self.reviewed if self.reviewed else None


class Guarantee(StrEnum):
    """What stands behind the approve threshold in force (docs/gate.md)."""

    # The latest thresholds run bounded the error of what scores at or above it.
    CERTIFIED = "certified"
    # The latest thresholds run certified nothing and set an estimated approve line, where
    # the label model's estimates are within budget with a stated margin
    # (learning.statistics.certify.estimate_move); approvals come from it.
    ESTIMATED = "estimated"
    # Nothing: the default threshold, a person's value, or one no run has certified.
    NONE = "none"


class ApproveRequires(StrEnum):
    """What must stand behind a task type's approve threshold for what reaches it to be
    approved; short of that, it is delivered as a warning (docs/gate.md)."""

    CERTIFIED = "certified"
    # Certified, or estimated: until a run certifies, approvals come from the estimated line.
    ESTIMATE = "estimate"
    NOTHING = "nothing"

    def allows(self, guarantee: Guarantee) -> bool:
        if self is ApproveRequires.NOTHING:
            return True
        if self is ApproveRequires.ESTIMATE:
            return guarantee in (Guarantee.CERTIFIED, Guarantee.ESTIMATED)
        return guarantee is Guarantee.CERTIFIED


@dataclass(frozen=True, slots=True)
class GatePolicy:
    """A task type's thresholds and cold-start settings, plus how much it has been reviewed."""

    review_threshold: float = 4.0
    approve_threshold: float = 7.0
    cold_start_reviews: int = 20
    cold_start_margin: float = 1.0
    task_type_reviewed: int = 0
    auto_approve: bool = True
    # What reaches an approve threshold without the guarantee this asks for is delivered as
    # a warning.
    approve_requires: ApproveRequires = ApproveRequires.NOTHING
    approve_guarantee: Guarantee = Guarantee.NONE
    # With the guarantee "estimated": the lowest score the estimates approve, set by the
    # thresholds cycle (learning.statistics.certify.estimate_move).
    estimated_approve: float | None = None


def approval_line(policy: GatePolicy, approve_threshold: float) -> float:
    """The lowest score that is approved, given what stands behind the approve threshold
    (``approve_threshold``, as raised for a new pair) and what approvals require: the
    threshold itself; under an estimated guarantee, the higher of it and the estimated
    line; infinity where the guarantee falls short, or an estimate has no line."""
    requires, guarantee = policy.approve_requires, policy.approve_guarantee
    if not requires.allows(guarantee):
        return math.inf
    if requires is ApproveRequires.ESTIMATE and guarantee is Guarantee.ESTIMATED:
        line = policy.estimated_approve
        return math.inf if line is None else max(approve_threshold, line)
    return approve_threshold


class Impact(NamedTuple):
    """One term of the score, in score points, for explaining a decision."""

    factor: str
    points: float
    detail: str

    def as_dict(self) -> dict:
        # A copy of a cached dict: most impacts (each validator's share, each clarity and
        # coherence value) recur across outputs, and rounding costs more than copying.
        return dict(_impact_dict(self))


@lru_cache(maxsize=8192)
def _impact_dict(impact: Impact) -> dict:
    return {"factor": impact.factor, "points": round(impact.points, 4), "detail": impact.detail}


@dataclass(frozen=True, slots=True)
class GateResult:
    score: float
    base_score: float
    decision: Decision
    review_threshold: float
    approve_threshold: float
    pass_fraction: float
    task_accuracy_bonus: float
    hallucination_penalty: float
    impacts: list[Impact] = field(default_factory=list)
    reasons: list[str] = field(default_factory=list)
    scorer: str = SCORER_NAME
    # Why the scorer failed, for an output held by fault_result; None when it scored.
    fault: str | None = None
    # Would have been approved, but a switch of the task type (auto-approve off, warn until
    # certified) delivered it as a warning: audited as the approve threshold's evidence.
    withheld: bool = False


def pass_fraction(validators: list[ValidatorOutcome]) -> float:
    """Weighted share of validators that passed; 0 with no validators (or zero weight)."""
    total = sum(v.weight for v in validators)
    if total <= 0:
        return 0.0
    return sum(v.weight for v in validators if v.passed) / total


def base_score(fraction: float, input_clarity: float, coherence: float) -> float:
    return (
        fraction * VALIDATOR_POINTS + input_clarity * CLARITY_POINTS + coherence * COHERENCE_POINTS
    )


def confidence_weight(reviewed: int) -> float:
    """Seed 003: ``min(1, n/20)``, so a lucky streak of few reviews earns little."""
    return min(1.0, reviewed / FULL_CONFIDENCE_REVIEWS)


def task_accuracy_bonus(history: PairHistory) -> float:
    accuracy = history.accuracy
    if accuracy is None:
        return 0.0
    if accuracy > HIGH_ACCURACY:
        raw = HIGH_ACCURACY_BONUS
    elif accuracy > GOOD_ACCURACY:
        raw = GOOD_ACCURACY_BONUS
    else:
        return 0.0
    return raw * confidence_weight(history.reviewed)


def hallucination_penalty(requires_fact_check: bool, fact_check_failed: bool) -> float:
    return HALLUCINATION_PENALTY if requires_fact_check and fact_check_failed else 0.0


def after_penalty(base: float, penalty: float) -> float:
    """The base score less the hallucination penalty's share of it."""
    return base * (1 - penalty)


def with_bonus(score: float, bonus: float) -> float:
    """``score`` with the odds of its share of 10 multiplied by ``1 + bonus``."""
    return score * (1 + bonus) / (1 + bonus * score / SCORE_MAX)


def final_score(base: float, bonus: float, penalty: float) -> float:
    """The score from its terms: the penalty takes its share of the base, then the bonus
    multiplies the odds of what is left, as a share of 10, by ``1 + bonus``.

    ADR-0003 multiplies the score itself, ``base * (1 + bonus - penalty)``, and caps it at
    10. Once most pairs earn the bonus, as they do where reviewers approve what is good,
    the cap ties every base from 6.67 up (bonus 0.5) at exactly 10.0, good and bad alike,
    and no approve threshold can then hold an error budget (docs/gate.md). On the odds the
    bonus is ADR-0003's for a low score (odds of a small share are nearly the share) and
    fades toward 10 without reaching it: a higher base always scores higher.
    Works on numbers and on numpy arrays alike.
    """
    return with_bonus(after_penalty(base, penalty), bonus)


def adr0003_score(base: float, bonus: float, penalty: float) -> float:
    """ADR-0003's score as the ADR writes it, before its clamp to [0, 10]:
    ``base * (1 + bonus - penalty)``, one multiplier for the bonus and the penalty together.

    The ``adr0003_formula`` scorer clamps it (``clamp``, so the clamp shows as an impact).
    A bonus of 0.5 lifts every base from 6.67 up past 10, where the clamp ties them: why
    ``final_score`` replaced it as the gate's default (docs/gate.md).
    Works on numbers and on numpy arrays alike.
    """
    return base * (1 + bonus - penalty)


def clamp(value: float, low: float = SCORE_MIN, high: float = SCORE_MAX) -> float:
    """``value`` within [low, high]. NaN or an infinity raises ScoringFault: ``min`` and
    ``max`` would pass NaN through as 10, and an infinite score says nothing either."""
    require_finite(score=value)
    return max(low, min(high, value))


def effective_thresholds(policy: GatePolicy, pair: PairHistory) -> tuple[float, float, float]:
    """Thresholds for this pair: raised while the pair has few reviews (ADR-0003 cold start).

    The raise fades out over the same 20 reviews as the confidence weighting of seed 003,
    whatever the task type's own cold start is; a margin of 0 turns it off.
    Returns ``(review, approve, raise_by)``.
    """
    raise_by = 0.0
    if pair.reviewed < FULL_CONFIDENCE_REVIEWS:
        raise_by = policy.cold_start_margin * (1 - pair.reviewed / FULL_CONFIDENCE_REVIEWS)
    return policy.review_threshold + raise_by, policy.approve_threshold + raise_by, raise_by


def decide(score: float, review_threshold: float, approve_threshold: float) -> Decision:
    if score < review_threshold:
        return Decision.PENDING_REVIEW
    if score < approve_threshold:
        return Decision.WARNING
    return Decision.APPROVED


def _validator_impacts(validators: list[ValidatorOutcome]) -> list[Impact]:
    total = sum(v.weight for v in validators)
    if total <= 0:
        return [Impact("validators", 0.0, "no validators reported: the validator term is 0")]
    impacts = []
    for v in validators:
        share = v.weight / total * VALIDATOR_POINTS
        if v.passed:
            impacts.append(Impact(f"validator:{v.name}", share, f"passed (weight {v.weight:g})"))
        else:
            impacts.append(
                Impact(f"validator:{v.name}", 0.0, f"failed, {share:.2f} points not earned")
            )
    return impacts


@dataclass(frozen=True, slots=True)
class _ValidatorTerms:
    fraction: float
    impacts: tuple[Impact, ...]
    failed_fact_checks: str


@lru_cache(maxsize=4096)
def _validator_terms(validators: tuple[ValidatorOutcome, ...]) -> _ValidatorTerms:
    # Outputs of one task type share a few dozen pass/fail patterns, so the validator part
    # of the score and its explanation are worked out once per pattern, not per output.
    return _ValidatorTerms(
        fraction=pass_fraction(validators),
        impacts=tuple(_validator_impacts(validators)),
        failed_fact_checks=", ".join(
            v.name for v in validators if v.is_fact_check and not v.passed
        ),
    )


def score_output(
    *,
    validators: list[ValidatorOutcome] | tuple[ValidatorOutcome, ...],
    input_clarity: float,
    coherence: float,
    requires_fact_check: bool,
    pair: PairHistory,
    policy: GatePolicy,
) -> GateResult:
    """Score one output and decide: ADR-0003's formula, cold start and thresholds."""
    terms = _validator_terms(tuple(validators))
    fraction = terms.fraction
    require_shares(pass_fraction=fraction, input_clarity=input_clarity, coherence=coherence)
    base = base_score(fraction, input_clarity, coherence)
    bonus = task_accuracy_bonus(pair)
    penalty = hallucination_penalty(requires_fact_check, bool(terms.failed_fact_checks))
    held_back = after_penalty(base, penalty)
    # On shares the score is within 0-10 (final_score); the clamp takes off what rounding
    # may add at 10, so it never shows in the explanation.
    score = clamp(with_bonus(held_back, bonus))

    impacts = list(terms.impacts)
    impacts.append(
        Impact("input_clarity", input_clarity * CLARITY_POINTS, f"{input_clarity:g} × 0.5")
    )
    impacts.append(Impact("coherence", coherence * COHERENCE_POINTS, f"{coherence:g} × 1.5"))
    reasons: list[str] = []
    if not validators:
        reasons.append("No validators were reported, so the validator term is 0.")
    if penalty:
        failed = terms.failed_fact_checks
        impacts.append(
            Impact(
                "hallucination_penalty",
                -base * penalty,
                f"fact check required and {failed} failed: penalty {penalty} × base {base:.2f}",
            )
        )
        reasons.append(f"Hallucination penalty: fact-check validator {failed} failed.")
    if bonus:
        impacts.append(
            Impact(
                "task_accuracy_bonus",
                score - held_back,
                f"accuracy {pair.accuracy:.0%} over {pair.reviewed} reviews: "
                f"bonus {bonus:.3f}, the odds of {held_back:.2f} in 10 × {1 + bonus:.3f}",
            )
        )

    ruling = gate(score, policy, pair)
    reasons.extend(ruling.reasons)
    return GateResult(
        score=score,
        base_score=base,
        decision=ruling.decision,
        review_threshold=ruling.review_threshold,
        approve_threshold=ruling.approve_threshold,
        withheld=ruling.withheld,
        pass_fraction=fraction,
        task_accuracy_bonus=bonus,
        hallucination_penalty=penalty,
        impacts=impacts,
        reasons=reasons,
    )


def fault_result(
    cause: str, policy: GatePolicy, pair: PairHistory, *, scorer: str = SCORER_NAME
) -> GateResult:
    """What the gate makes of an output whose scorer failed: held for review at the lowest
    score, with the cause in its reasons and as its one impact (FAULT_FACTOR).

    Whatever broke, a person decides: a fault never reaches the thresholds, the
    auto-approve switch or the cold start, so it cannot be approved or delivered."""
    review_t, approve_t, _ = effective_thresholds(policy, pair)
    return GateResult(
        score=SCORE_MIN,
        base_score=SCORE_MIN,
        decision=Decision.PENDING_REVIEW,
        review_threshold=review_t,
        approve_threshold=approve_t,
        pass_fraction=0.0,
        task_accuracy_bonus=0.0,
        hallucination_penalty=0.0,
        impacts=[Impact(FAULT_FACTOR, 0.0, cause)],
        reasons=[f"Scoring fault ({cause}): held for review, whatever the thresholds say."],
        scorer=scorer,
        fault=cause,
    )


class Ruling(NamedTuple):
    """What the gate makes of a score: the decision, the thresholds it used, and why."""

    decision: Decision
    review_threshold: float
    approve_threshold: float
    reasons: list[str]
    withheld: bool = False


def gate(
    score: float,
    policy: GatePolicy,
    pair: PairHistory,
    *,
    level: str | None = None,
    level_decision: Decision | None = None,
) -> Ruling:
    """Decide on a score, whichever scorer gave it: the thresholds (raised for a new pair),
    then the auto-approve switch and what the approve threshold's guarantee must be, then
    the task type's cold start.

    A scorer that rates in named levels may give its level's own decision, which then takes
    the thresholds' place; the switches and the cold start apply to it all the same.
    Raises ScoringFault for a score that is not a finite number.
    """
    # NaN is below no threshold, so it would be approved: no score reaches decide unchecked.
    require_finite(score=score)
    if not SCORE_MIN <= score <= SCORE_MAX:
        raise ScoringFault(f"score {score:g} is outside {SCORE_MIN:g}-{SCORE_MAX:g}")
    reasons: list[str] = []
    review_t, approve_t, raised_by = effective_thresholds(policy, pair)
    if level_decision is None:
        decision = decide(score, review_t, approve_t)
        if raised_by:
            reasons.append(
                f"New model for this task type ({pair.reviewed} of {FULL_CONFIDENCE_REVIEWS} "
                f"reviews): both thresholds raised by {raised_by:.2f}."
            )
    else:
        decision = level_decision
    switched_off = decision is Decision.APPROVED and not policy.auto_approve
    line = approval_line(policy, approve_t)
    # Written as "not >=", so that nothing unexpected slips through as an approval.
    uncertified = decision is Decision.APPROVED and not score >= line
    if switched_off or uncertified:
        decision = Decision.WARNING
    if policy.task_type_reviewed < policy.cold_start_reviews:
        decision = Decision.PENDING_REVIEW
        reasons.append(
            f"Cold start: the task type has {policy.task_type_reviewed} of "
            f"{policy.cold_start_reviews} human reviews, so every output is held for review."
        )
    elif switched_off or uncertified:
        reached = (
            f"Level {level} would be approved"
            if level_decision is not None
            else f"Score {score:.2f} reaches the approve threshold {approve_t:.2f}"
        )
        if switched_off:
            why = "auto-approval is off for this task type"
        elif math.isinf(line):
            why = (
                f"the approve threshold's guarantee is {policy.approve_guarantee}, and this "
                f"task type approves only with {_REQUIREMENT[policy.approve_requires]}"
            )
        elif level_decision is not None:
            why = f"its score {score:.2f} is below the estimated approve line {line:.2f}"
        else:
            why = f"not the estimated approve line {line:.2f}, the uncertified one in force"
        reasons.append(f"{reached}, but {why}: delivered as a warning.")
    elif level_decision is not None:
        reasons.append(f"Level {level}: {_LEVEL_OUTCOME[decision]}")
    else:
        reasons.append(_threshold_reason(score, decision, review_t, approve_t))
    withheld = decision is Decision.WARNING and (switched_off or uncertified)
    return Ruling(decision, review_t, approve_t, reasons, withheld)


_REQUIREMENT = {
    ApproveRequires.CERTIFIED: "a certified one",
    ApproveRequires.ESTIMATE: "a certified or estimated one",
}

_LEVEL_OUTCOME = {
    Decision.APPROVED: "approved without review.",
    Decision.WARNING: "delivered with a warning.",
    Decision.PENDING_REVIEW: "held for review.",
}


def scores_many(
    *,
    reported: np.ndarray,
    passed: np.ndarray,
    weights: np.ndarray,
    is_fact_check: np.ndarray,
    input_clarity: np.ndarray,
    coherence: np.ndarray,
    requires_fact_check: np.ndarray,
    bonus: np.ndarray | float = 0.0,
) -> np.ndarray:
    """``score_output``'s score for many outputs at once, in numpy: the learning cycles
    rescore a window's judged outputs whenever the validator weights change.

    One column per validator: ``reported[i, j]`` and ``passed[i, j]`` say whether output i
    reported validator j and whether it passed; ``weights[j]`` and ``is_fact_check[j]``
    describe validator j. The flags (``reported``, ``passed``, ``is_fact_check``,
    ``requires_fact_check``) are booleans. ``bonus`` is each output's task accuracy bonus
    (its pair's ``task_accuracy_bonus``).

    An output with a term that is not a share from 0 to 1 (``require_shares``: a sum of
    weights that overflowed, a NaN), or a bonus that task_accuracy_bonus cannot give,
    scores SCORE_MIN, as the gate's fault_result does: it is held, never approved."""
    # Overflow is caught below, per output, rather than warned about for the whole array.
    with np.errstate(all="ignore"):
        counted = reported * np.asarray(weights)
        total = counted.sum(axis=1)
        earned = (counted * passed).sum(axis=1)
        # No validator reported: a fraction of 0 (0 / inf), as pass_fraction gives.
        fraction = earned / np.where(total > 0, total, np.inf)
        base = base_score(fraction, np.asarray(input_clarity), np.asarray(coherence))
        fact_check_failed = (reported & ~passed & np.asarray(is_fact_check)).any(axis=1)
        penalty = np.where(
            np.asarray(requires_fact_check) & fact_check_failed,
            HALLUCINATION_PENALTY,
            0.0,
        )
        unclamped = final_score(base, np.asarray(bonus), penalty)
        # require_shares's rule (False for NaN), per output; and the bonus, which the caller
        # gives here, within task_accuracy_bonus's 0 to HIGH_ACCURACY_BONUS. Within them
        # the score is within 0-10 (final_score), so nothing needs clamping.
        shares = (fraction, np.asarray(input_clarity), np.asarray(coherence))
        on_shares = np.logical_and.reduce([(share >= 0.0) & (share <= 1.0) for share in shares])
        bonus_ok = (np.asarray(bonus) >= 0.0) & (np.asarray(bonus) <= HIGH_ACCURACY_BONUS)
        faulted = ~(on_shares & bonus_ok)
    return np.where(faulted, SCORE_MIN, unclamped)


@dataclass(frozen=True, eq=False)
class ManyDecisions:
    """``decide_many``'s answer: per score, whether it is held, approved, or a would-be
    approval delivered as a warning (withheld); any other score is a plain warning."""

    held: np.ndarray
    approved: np.ndarray
    withheld: np.ndarray


def decide_many(scores: np.ndarray, policy: GatePolicy) -> ManyDecisions:
    """``gate``'s decision for many scores of one task type at once, in numpy, for pairs
    past the new-model raise (``FULL_CONFIDENCE_REVIEWS``): the thresholds, the
    auto-approve switch and the guarantee the approve threshold must have, and the task
    type's cold start. The closed loop decides each block of its traffic with it; a test
    holds it equal to ``gate`` score by score.

    Raises ScoringFault, as ``gate`` does, if any score is not a finite number in 0-10."""
    scores = np.asarray(scores)
    inside = np.isfinite(scores) & (scores >= SCORE_MIN) & (scores <= SCORE_MAX)
    if not inside.all():
        raise ScoringFault(f"score {scores[~inside][0]:g} is not a finite number in 0-10")
    if policy.task_type_reviewed < policy.cold_start_reviews:
        everything = np.ones(scores.shape, dtype=bool)
        return ManyDecisions(held=everything, approved=~everything, withheld=~everything)
    reaching = scores >= policy.approve_threshold
    approved = (
        reaching & (scores >= approval_line(policy, policy.approve_threshold))
        if policy.auto_approve
        else np.zeros(scores.shape, dtype=bool)
    )
    return ManyDecisions(
        held=scores < policy.review_threshold, approved=approved, withheld=reaching & ~approved
    )


def _threshold_reason(score: float, decision: Decision, review_t: float, approve_t: float) -> str:
    if decision is Decision.PENDING_REVIEW:
        return f"Score {score:.2f} is below the review threshold {review_t:.2f}."
    if decision is Decision.WARNING:
        return (
            f"Score {score:.2f} is between the review {review_t:.2f} "
            f"and approve {approve_t:.2f} thresholds."
        )
    return f"Score {score:.2f} reaches the approve threshold {approve_t:.2f}."
