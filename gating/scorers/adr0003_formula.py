"""ADR-0003's score formula as the ADR writes it (seed ``002_fa55fc0af51f2daa.txt``):
``clamp(base_score * (1 + task_accuracy_bonus - hallucination_penalty), 0, 10)``.

Its terms are the validators scorer's (the weighted share of validators passed, clarity,
coherence, the accuracy bonus weighted by seed 003's ``min(1, n/20)``, the hallucination
penalty); only their combination differs. The validators scorer (v2) departs from it in
two ways, docs/gate.md says which and why. It applies to every output, so it scores every
output in shadow and the calibration page shows both side by side; a task type can also
choose it to decide, against its thresholds and cold start like any scorer.
"""

from __future__ import annotations

from typing import NamedTuple

from gating import scoring
from gating.scorers.base import Rating, Scored, ScorerInput
from gating.scoring import CLARITY_POINTS, COHERENCE_POINTS, Impact


class _Terms(NamedTuple):
    validator: scoring._ValidatorTerms
    base: float
    bonus: float
    penalty: float


def _terms(output: ScorerInput) -> _Terms:
    # Shadow scoring runs on the ingest path: the validator terms are cached per pass/fail
    # pattern and the deciding validators scorer has just worked them out, so this costs a
    # few multiplications per output.
    validator = scoring._validator_terms(output.validators)
    # As score_output does: a term that is not a share is refused, named, not clamped.
    scoring.require_shares(
        pass_fraction=validator.fraction,
        input_clarity=output.input_clarity,
        coherence=output.coherence,
    )
    return _Terms(
        validator,
        scoring.base_score(validator.fraction, output.input_clarity, output.coherence),
        scoring.task_accuracy_bonus(output.pair),
        scoring.hallucination_penalty(
            output.requires_fact_check, bool(validator.failed_fact_checks)
        ),
    )


class Adr0003FormulaScorer:
    # Not "adr0003", which names the ADR's threshold rule (TaskType.threshold_policy), and
    # whose label prefix "adr0003-v" the learning cycles read as the validators scorer's.
    name = "adr0003_formula"
    version = "1"
    description = (
        "ADR-0003 as written: the validators scorer's terms, with the bonus and the "
        "penalty in one multiplier of the base, clamped at 10."
    )

    def applies(self, output: ScorerInput) -> bool:
        # Every output carries validators (possibly none, which scores the validator term 0).
        return True

    def rate(self, output: ScorerInput) -> Rating:
        _, base, bonus, penalty = _terms(output)
        return Rating(scoring.clamp(scoring.adr0003_score(base, bonus, penalty)))

    def score(self, output: ScorerInput) -> Scored:
        terms = _terms(output)
        base, bonus, penalty = terms.base, terms.bonus, terms.penalty
        unclamped = scoring.adr0003_score(base, bonus, penalty)
        score = scoring.clamp(unclamped)
        impacts = [
            *terms.validator.impacts,
            Impact(
                "input_clarity",
                output.input_clarity * CLARITY_POINTS,
                f"{output.input_clarity:g} × 0.5",
            ),
            Impact("coherence", output.coherence * COHERENCE_POINTS, f"{output.coherence:g} × 1.5"),
        ]
        if penalty:
            impacts.append(
                Impact(
                    "hallucination_penalty",
                    -base * penalty,
                    f"fact check required and {terms.validator.failed_fact_checks} failed: "
                    f"penalty {penalty} × base {base:.2f}",
                )
            )
        if bonus:
            pair = output.pair
            impacts.append(
                Impact(
                    "task_accuracy_bonus",
                    base * bonus,
                    f"accuracy {pair.accuracy:.0%} over {pair.reviewed} reviews: "
                    f"bonus {bonus:.3f} × base {base:.2f}",
                )
            )
        if unclamped != score:
            impacts.append(
                Impact("clamp", score - unclamped, f"clamped to [0, 10] from {unclamped:.2f}")
            )
        return Scored(
            score=score,
            summary=(
                f"{terms.validator.fraction:.0%} of the validators' weight passed; "
                f"base {base:.2f} × {1 + bonus - penalty:.3f} (ADR-0003)."
            ),
            explanation=tuple(impacts),
            inputs={
                "pass_fraction": terms.validator.fraction,
                "base_score": base,
                "task_accuracy_bonus": bonus,
                "hallucination_penalty": penalty,
            },
        )


SCORER = Adr0003FormulaScorer()
