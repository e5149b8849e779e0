"""Every scorer's ``rate`` is its ``score`` without the words: the same score, level and
interval, on the simulator's agent outputs, which exercise every pattern of evidence and
provenance."""

from datetime import UTC, datetime

import pytest

from gating import scorers
from gating.scoring import GatePolicy, PairHistory, ValidatorOutcome
from gating.submissions import OutputSubmission
from simulator import world

CONFIG = world.SimulationConfig(
    seed=11,
    days=1,
    outputs_per_day=600,
    start=datetime(2026, 3, 2, tzinfo=UTC).date(),
    task_types=world.AGENT_TASK_TYPES,
)


def _inputs() -> list[scorers.ScorerInput]:
    found = []
    for simulated in world.simulate(CONFIG):
        sent = OutputSubmission.model_validate(simulated.submission_dict())
        found.append(
            scorers.ScorerInput(
                validators=tuple(ValidatorOutcome(v.name, v.passed) for v in sent.validators),
                input_clarity=sent.input_clarity,
                coherence=sent.coherence,
                requires_fact_check=sent.requires_fact_check,
                pair=PairHistory(),
                policy=GatePolicy(),
                now=simulated.created_at,
                evidence=sent.evidence,
                provenance=sent.provenance,
            )
        )
    return found


@pytest.mark.parametrize("name", sorted(scorers.REGISTRY))
def test_rate_agrees_with_score(name):
    scorer = scorers.REGISTRY[name]
    applied = [x for x in _inputs() if scorer.applies(x)]
    assert len(applied) > 100
    for output in applied:
        scored, rating = scorer.score(output), scorer.rate(output)
        assert rating.score == scored.score
        assert rating.level == scored.level
        assert rating.interval == scored.interval
