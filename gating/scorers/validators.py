"""ADR-0003's validator formula (gating.scoring) behind the scorer interface."""

from __future__ import annotations

from gating import scoring
from gating.scorers.base import Rating, Scored, ScorerInput


def gate_result(output: ScorerInput) -> scoring.GateResult:
    """ADR-0003's score and decision in one step, as the gate has always made them."""
    return scoring.score_output(
        validators=output.validators,
        input_clarity=output.input_clarity,
        coherence=output.coherence,
        requires_fact_check=output.requires_fact_check,
        pair=output.pair,
        policy=output.policy,
    )


class ValidatorsScorer:
    name = "validators"
    version = "2"
    description = (
        "ADR-0003: the weighted share of validators passed, clarity and coherence, the "
        "model's review record and the hallucination penalty."
    )

    def applies(self, output: ScorerInput) -> bool:
        # Every output carries validators (possibly none, which scores the validator term 0).
        return True

    def score(self, output: ScorerInput) -> Scored:
        result = gate_result(output)
        return Scored(
            score=result.score,
            summary=f"{result.pass_fraction:.0%} of the validators' weight passed.",
            explanation=tuple(result.impacts),
            inputs={
                "pass_fraction": result.pass_fraction,
                "base_score": result.base_score,
                "task_accuracy_bonus": result.task_accuracy_bonus,
                "hallucination_penalty": result.hallucination_penalty,
            },
        )

    def rate(self, output: ScorerInput) -> Rating:
        return Rating(gate_result(output).score)


SCORER = ValidatorsScorer()
