"""The guarded threshold policy's guarantee, checked on simulated histories with known truth.

Claim (docs/learning.md): the approve threshold t the policy picks from a history's
judged outputs has, among all outputs scoring at least t, a share that a human would not
approve unchanged of at most alpha, except in at most delta of histories.

Set-up: the simulated world's gate scores (the real scoring code, mature task type) for a
few worlds in which the model's quality differs (drift severity), so that no single
fixed threshold is right for all of them. A history is 5,000 outputs drawn from one world
and judged as the queue would: every held output reviewed, the others audited at their
rates, each verdict weighted by 1 / its inclusion probability. A human approves an output
unchanged exactly when its truth is good. Each world's true error above any threshold is
known from its whole pool of outputs.
"""

from datetime import date

import numpy as np
import pytest

from gating import scoring
from learning.simulation import world
from learning.statistics import thresholds

ALPHA, DELTA = 0.08, 0.10
HISTORIES_PER_WORLD = 40
HISTORY_SIZE = 5000
REVIEW, APPROVE = 4.0, 7.0
AUDIT_RATE = {"approved": 0.2, "warning": 0.2}
# A good world, a slipping one, and one where nothing at all can be safely auto-approved.
SEVERITIES = (0.0, 0.1, 0.3)
GRID = np.round(np.arange(0.0, 10.01, 0.1), 1)


def world_pool(severity: float, size: int = 12_000):
    model = next(m for m in world.DEFAULT_MODELS if m.name == "gpt-x-large")
    config = world.SimulationConfig(
        seed=int(severity * 1000) + 7,
        days=1,
        outputs_per_day=size,
        start=date(2026, 3, 2),
        task_types=(world.TaskType("classify", difficulty=0.6),),
        models=(model,),
        drift=world.Drift(model=model.name, day=0, severity=severity),
    )
    scores, good = [], []
    for output in world.simulate(config):
        result = scoring.score_output(
            validators=[
                scoring.ValidatorOutcome(v.name, v.passed, 1.0, v.name == "facts")
                for v in output.validators
            ],
            input_clarity=output.input_clarity,
            coherence=output.coherence,
            requires_fact_check=output.requires_fact_check,
            pair=scoring.PairHistory(reviewed=100, approved_unchanged=80),
            policy=scoring.GatePolicy(task_type_reviewed=100),
        )
        scores.append(result.score)
        good.append(output.truth == world.Truth.GOOD)
    return np.array(scores), np.array(good)


def true_error(scores, good, t) -> float:
    above = scores >= t
    return float(1 - good[above].mean()) if above.any() else 0.0


def judged_history(scores, good, rng) -> list[thresholds.Judged]:
    pick = rng.integers(0, len(scores), HISTORY_SIZE)
    judged = []
    for score, ok, draw in zip(scores[pick], good[pick], rng.random(HISTORY_SIZE), strict=True):
        if score < REVIEW:
            p = 1.0
        else:
            p = AUDIT_RATE["approved" if score >= APPROVE else "warning"]
            if draw >= p:
                continue
        judged.append(thresholds.Judged(float(score), bool(ok), 1.0 / p))
    return judged


@pytest.fixture(scope="module")
def outcomes():
    rng = np.random.default_rng(2026)
    rows = []
    for severity in SEVERITIES:
        scores, good = world_pool(severity)
        safe_exists = any(true_error(scores, good, t) <= ALPHA for t in GRID)
        for _ in range(HISTORIES_PER_WORLD):
            search = thresholds.lowest_safe_threshold(
                judged_history(scores, good, rng), alpha=ALPHA, delta=DELTA
            )
            # No safe threshold found: nothing is auto-approved, so nothing goes wrong.
            t = search.threshold if search.threshold is not None else np.inf
            rows.append(
                {
                    "severity": severity,
                    "threshold": t,
                    "error": true_error(scores, good, t),
                    "held_back": float((scores < t).mean()),
                    "pool": (scores, good),
                    "safe_exists": safe_exists,
                }
            )
    return rows


def test_realised_error_exceeds_alpha_in_at_most_delta_of_histories(outcomes):
    n = len(outcomes)
    violations = sum(o["error"] > ALPHA for o in outcomes)
    # delta plus two standard errors of a proportion over n histories.
    assert violations / n <= DELTA + 2 * (DELTA * (1 - DELTA) / n) ** 0.5, violations
    # And it is not vacuous: where some threshold is safe, it auto-approves in most
    # histories, and in the good world in every one.
    possible = [o for o in outcomes if o["safe_exists"]]
    assert len(possible) == 2 * HISTORIES_PER_WORLD
    assert np.mean([np.isfinite(o["threshold"]) for o in possible]) >= 0.75
    assert all(np.isfinite(o["threshold"]) for o in outcomes if o["severity"] == 0.0)


def test_guarded_holds_back_less_than_a_fixed_threshold_with_the_same_guarantee(outcomes):
    # The fixed threshold that, chosen knowing every world's truth, keeps the realised
    # error under alpha in as many histories as the guarded policy does: the lowest grid
    # value whose error exceeds alpha in no larger share of histories.
    guarded_violations = np.mean([o["error"] > ALPHA for o in outcomes])
    pools = [o["pool"] for o in outcomes]

    def violation_share(t):
        return np.mean([true_error(s, g, t) > ALPHA for s, g in pools])

    # None at all (inf): then the fixed policy must hold everything back in every world.
    fixed = next((t for t in GRID if violation_share(t) <= guarded_violations), np.inf)
    fixed_held_back = np.mean([(s < fixed).mean() for s, _ in pools])
    guarded_held_back = np.mean([o["held_back"] for o in outcomes])

    # Worlds differ, so one threshold must suit the worst of them; the guarded policy
    # reads each history's own evidence and auto-approves more where it can.
    assert guarded_held_back < fixed_held_back, (guarded_held_back, fixed, fixed_held_back)
