"""The scoring models a task type can choose from, by name.

``validators`` (ADR-0003) is the default; the others read the evidence and provenance an
agent's output comes with (docs/scoring.md). Every output is scored by its task type's
scorer, and in shadow by every other scorer its payload has the inputs for.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from gating import scoring
from gating.scorers import (
    adr0003_formula,
    evidence_categories,
    evidence_quality,
    interval,
    validators,
)
from gating.scorers.base import Rating, Scored, Scorer, ScorerInput

logger = logging.getLogger(__name__)

DEFAULT = validators.SCORER.name

REGISTRY: dict[str, Scorer] = {
    s.name: s
    for s in (
        validators.SCORER,
        evidence_categories.SCORER,
        evidence_quality.SCORER,
        interval.SCORER,
        adr0003_formula.SCORER,
    )
}


_SCORERS = tuple(REGISTRY.values())


class _Missing:
    """What a task type names when its scorer is no longer here: it applies to nothing, so
    the validators scorer takes over and the reasons say why."""

    name = "missing"
    version = ""
    description = ""

    def applies(self, output: ScorerInput) -> bool:
        return False


MISSING = _Missing()


class UnknownScorer(KeyError):
    pass


def get(name: str) -> Scorer:
    try:
        return REGISTRY[name]
    except KeyError:
        raise UnknownScorer(name) from None


def names() -> list[str]:
    return list(REGISTRY)


def choices() -> list[tuple[str, str]]:
    """(name, name) pairs for a model field's or a form's choices."""
    return [(name, name) for name in REGISTRY]


def label(scorer: Scorer) -> str:
    """How an output records the scorer that scored it: name and version."""
    return f"{scorer.name}-v{scorer.version}"


@dataclass(frozen=True, slots=True)
class Scoring:
    """An output scored: the gate's result, the interval if a scorer gave one, and what
    the other scorers said in shadow."""

    result: scoring.GateResult
    interval: tuple[float, float] | None
    shadow: dict[str, dict]


def score_and_gate(primary: Scorer, output: ScorerInput, *, shadow: bool = True) -> Scoring:
    """Score ``output`` with ``primary`` and decide; with ``shadow``, also score it with
    every other scorer that applies. A primary that does not apply (an evidence scorer on
    an output sent without evidence) gives way to the validators scorer, and says so."""
    fallback = None
    if not primary.applies(output):
        fallback = (
            f"This task type's scorer is not in this version of Gatehouse, so the {DEFAULT} "
            "scorer scored it."
            if primary is MISSING
            else f"The payload lacks what {primary.name} reads, so the {DEFAULT} scorer scored it."
        )
        primary = REGISTRY[DEFAULT]
    interval = None
    try:
        if primary.name == DEFAULT:
            # The validators scorer decides in one step, as it always has (gating.scoring).
            result = validators.gate_result(output)
        else:
            scored = primary.score(output)
            result = _gated(primary, scored, output)
            interval = scored.interval
    # A safety gate holds what it cannot score, whatever the bug: any exception in a
    # scorer, not only the arithmetic faults it was written to expect, is held for review.
    except Exception as exc:
        result = _faulted(primary, output, exc)
        interval = None
    if fallback:
        result.reasons.insert(0, fallback)
    shadows: dict[str, dict] = {}
    if shadow:
        for scorer in _SCORERS:
            if scorer is primary:
                continue
            try:
                if not scorer.applies(output):
                    continue
                rating = scorer.rate(output)
                scoring.require_finite(score=rating.score)
            # A shadow never decides, so a failing one only goes unsaid.
            except Exception:
                logger.exception("Shadow scorer %s failed; its score is left out.", scorer.name)
                continue
            shadows[scorer.name] = _shadow_record(scorer, rating)
            interval = interval or rating.interval
    return Scoring(result=result, interval=interval, shadow=shadows)


def _faulted(scorer: Scorer, output: ScorerInput, exc: Exception) -> scoring.GateResult:
    cause = str(exc) if isinstance(exc, scoring.ScoringFault) else f"{type(exc).__name__}"
    if not isinstance(exc, scoring.ScoringFault):
        logger.exception("Scorer %s failed; the output is held for review.", scorer.name)
    return scoring.fault_result(
        f"{scorer.name}: {cause}", output.policy, output.pair, scorer=label(scorer)
    )


def _gated(scorer: Scorer, scored: Scored, output: ScorerInput) -> scoring.GateResult:
    ruling = scoring.gate(
        scored.score,
        output.policy,
        output.pair,
        level=scored.level,
        level_decision=scored.decision,
    )
    return scoring.GateResult(
        score=scored.score,
        base_score=scored.score,
        decision=ruling.decision,
        review_threshold=ruling.review_threshold,
        approve_threshold=ruling.approve_threshold,
        withheld=ruling.withheld,
        pass_fraction=scoring.pass_fraction(list(output.validators)),
        task_accuracy_bonus=0.0,
        hallucination_penalty=0.0,
        impacts=list(scored.explanation),
        reasons=[scored.summary, *ruling.reasons],
        scorer=label(scorer),
    )


def _shadow_record(scorer: Scorer, rating: Rating) -> dict:
    # Unrounded, as the deciding score is stored: the calibration rollup buckets both, and a
    # rounded 8.29999 would fall in another bucket than the same score unrounded.
    record: dict = {"version": scorer.version, "score": rating.score}
    if rating.level is not None:
        record["level"] = rating.level
    if rating.interval is not None:
        record["interval"] = list(rating.interval)
    return record


__all__ = [
    "DEFAULT",
    "REGISTRY",
    "Rating",
    "Scored",
    "Scorer",
    "ScorerInput",
    "UnknownScorer",
    "get",
]
