"""The validators scorer as the scorer interface shows it (the comparison of scorers, a
shadow's record): its score, summary, terms and inputs are the gate's, worked by hand."""

from datetime import UTC, datetime

import pytest

from gating import scoring
from gating.scorers.base import ScorerInput
from gating.scorers.validators import SCORER
from gating.scoring import PairHistory, ValidatorOutcome


def _scored(requires_fact_check: bool):
    output = ScorerInput(
        validators=(
            ValidatorOutcome("grammar", True, 3.0),
            ValidatorOutcome("facts", False, 1.0, is_fact_check=True),
        ),
        input_clarity=1.0,
        coherence=1.0,
        requires_fact_check=requires_fact_check,
        pair=PairHistory(),
        policy=scoring.GatePolicy(task_type_reviewed=10**6),
        now=datetime(2026, 11, 28, tzinfo=UTC),
    )
    return SCORER.score(output), output


@pytest.mark.parametrize(
    ("requires_fact_check", "penalty", "score"),
    # 3 of 4 weight passed: 0.75 * 8 + 0.5 + 1.5 = 8.0. A pair never reviewed earns no
    # bonus. A failed fact check where one is required takes half of the base: 4.0.
    [(False, 0.0, 8.0), (True, 0.5, 4.0)],
)
def test_the_score_and_its_inputs_are_the_formulas(requires_fact_check, penalty, score):
    scored, output = _scored(requires_fact_check)

    assert scored.score == pytest.approx(score)
    assert scored.summary == "75% of the validators' weight passed."
    assert scored.inputs == {
        "pass_fraction": 0.75,
        "base_score": pytest.approx(8.0),
        "task_accuracy_bonus": 0.0,
        "hallucination_penalty": penalty,
    }
    assert SCORER.rate(output).score == pytest.approx(score)


def test_the_explanation_is_each_terms_points():
    scored, _ = _scored(False)
    # By hand: grammar earns its 3/4 of 8 points; facts, failed, earns none of its 2.
    assert [(impact.factor, impact.points) for impact in scored.explanation] == [
        ("validator:grammar", 6.0),
        ("validator:facts", 0.0),
        ("input_clarity", 0.5),
        ("coherence", 1.5),
    ]
