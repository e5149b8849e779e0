"""The simulator's world against its configured probabilities, within sampling error.

Each statistical check uses a fixed seed and a bound of 4 standard errors,
sqrt(p(1 - p)/n) per proportion, so it is deterministic and fails only on a real bug.
"""

import dataclasses
import math
import random
from datetime import UTC, date, datetime, timedelta

import pytest

from gating.submissions import OutputSubmission
from simulator.world import (
    DEFAULT_REVIEWERS,
    Action,
    Drift,
    Model,
    SimulationConfig,
    TaskType,
    Truth,
    add_working_time,
    day_traffic,
    fingerprint,
    review_time,
    simulate,
    truth_rates,
)

START = date(2026, 11, 23)  # a Monday


def se(p: float, n: int) -> float:
    return math.sqrt(p * (1 - p) / n)


def share(flags: list[bool]) -> float:
    return sum(flags) / len(flags)


def small_run(seed: int) -> list:
    return list(simulate(SimulationConfig(seed=seed, days=3, outputs_per_day=50, start=START)))


@pytest.fixture(scope="module")
def default_traffic():
    # 30,000 outputs over the default task types and models: about 3,000 of them bad.
    return list(simulate(SimulationConfig(seed=7, days=20, outputs_per_day=1500, start=START)))


def test_same_seed_same_fingerprint_different_seed_different():
    assert fingerprint(small_run(1)) == fingerprint(small_run(1))
    assert fingerprint(small_run(1)) != fingerprint(small_run(2))


def test_fingerprint_covers_the_hidden_truth():
    outputs = small_run(1)
    flipped = Truth.BAD if outputs[0].truth is not Truth.BAD else Truth.GOOD
    changed = [dataclasses.replace(outputs[0], truth=flipped), *outputs[1:]]
    assert fingerprint(changed) != fingerprint(outputs)


def test_outputs_are_chronological_with_deterministic_ids():
    outputs = small_run(5)
    ids = [o.external_id for o in outputs]
    assert ids[:3] == ["sim-5-0000000000", "sim-5-0000000001", "sim-5-0000000002"]
    assert ids == sorted(ids)
    assert [o.created_at for o in outputs] == sorted(o.created_at for o in outputs)
    assert {o.created_at.date() for o in outputs} == {START + timedelta(days=d) for d in range(3)}


def test_submission_dict_has_no_truth_and_validates():
    for output in small_run(3):
        sent = output.submission_dict()
        assert "truth" not in sent
        assert set(sent) <= set(OutputSubmission.model_fields)
        assert OutputSubmission.model_validate(sent).external_id == output.external_id


def test_submissions_are_the_outputs_as_sent_with_their_arrival_and_truth():
    config = SimulationConfig(seed=4, days=2, outputs_per_day=80, start=START)
    traffic = day_traffic(config, 1)
    outputs = list(traffic.outputs(10, 70))
    assert outputs == list(simulate(config))[90:150]
    assert traffic.submissions(10, 70) == [
        (o.submission_dict(), o.created_at, o.truth) for o in outputs
    ]


def test_truth_rates_scale_with_difficulty_and_drift_toward_bad():
    model = Model("m", tier="fast", needs_edit_rate=0.2, bad_rate=0.1)
    # Difficulty 1.5: needs_edit 0.3, bad 0.15, good 0.55.
    # Drift 0.4 keeps 60% of each (0.33, 0.18, 0.09) and adds 0.4 to bad (0.49).
    rates = truth_rates(TaskType("t", difficulty=1.5), model, drift_severity=0.4)
    assert rates[Truth.GOOD] == pytest.approx(0.33)
    assert rates[Truth.NEEDS_EDIT] == pytest.approx(0.18)
    assert rates[Truth.BAD] == pytest.approx(0.49)


@pytest.mark.parametrize("reviewer", DEFAULT_REVIEWERS, ids=lambda r: r.name)
def test_reviewer_confusion_matrix_matches_its_configuration(reviewer):
    rng = random.Random(11)
    n = 20_000
    for truth in Truth:
        actions = [reviewer.decide(truth, rng) for _ in range(n)]
        for action in Action:
            p = reviewer.matrix[truth][action]
            observed = actions.count(action) / n
            assert abs(observed - p) <= 4 * se(p, n), (truth, action, observed, p)


def test_default_reviewers_mostly_get_the_truth_right():
    expected = {
        Truth.GOOD: Action.APPROVE,
        Truth.NEEDS_EDIT: Action.MODIFY,
        Truth.BAD: Action.REJECT,
    }
    assert [r.name for r in DEFAULT_REVIEWERS] == ["accurate", "harsh", "lenient", "noisy"]
    for reviewer in DEFAULT_REVIEWERS:
        for truth, action in expected.items():
            assert max(Action, key=reviewer.matrix[truth].__getitem__) is action


def pass_rate_gap(outputs, validator: str) -> tuple[float, float]:
    """P(passed | good) - P(passed | bad), and the standard error of that difference."""
    by_truth = {}
    for truth in (Truth.GOOD, Truth.BAD):
        by_truth[truth] = [
            next(v.passed for v in o.validators if v.name == validator)
            for o in outputs
            if o.truth is truth
        ]
    good, bad = share(by_truth[Truth.GOOD]), share(by_truth[Truth.BAD])
    return good - bad, math.hypot(
        se(good, len(by_truth[Truth.GOOD])), se(bad, len(by_truth[Truth.BAD]))
    )


def test_facts_strongly_predicts_the_truth(default_traffic):
    gap, _ = pass_rate_gap(default_traffic, "facts")
    assert gap > 0.5


def test_length_is_pure_noise(default_traffic):
    gap, error = pass_rate_gap(default_traffic, "length")
    assert abs(gap) <= 4 * error


@pytest.mark.parametrize("validator", ["grammar", "tone"])
def test_grammar_and_tone_are_weak_signals(default_traffic, validator):
    gap, error = pass_rate_gap(default_traffic, validator)
    assert 4 * error < gap < 0.3


@pytest.mark.parametrize("validator", ["schema", "security"])
def test_schema_and_security_rarely_fail(default_traffic, validator):
    failed = [not v.passed for o in default_traffic for v in o.validators if v.name == validator]
    assert 0 < share(failed) < 0.02


def test_clarity_and_coherence_are_signals_in_the_unit_interval(default_traffic):
    for signal in ("input_clarity", "coherence"):
        values = {t: [getattr(o, signal) for o in default_traffic if o.truth is t] for t in Truth}
        assert all(0.0 <= v <= 1.0 for vs in values.values() for v in vs)
        mean = {t: sum(vs) / len(vs) for t, vs in values.items()}
        assert mean[Truth.GOOD] > mean[Truth.NEEDS_EDIT] > mean[Truth.BAD]


def test_drift_moves_only_the_drifted_model_toward_bad():
    same = {"tier": "fast", "needs_edit_rate": 0.2, "bad_rate": 0.1}
    config = SimulationConfig(
        seed=3,
        days=20,
        outputs_per_day=1000,
        start=START,
        task_types=(TaskType("summarize"),),
        models=(Model("drifting", **same), Model("steady", **same)),
        drift=Drift(model="drifting", day=10, severity=0.4),
    )
    bad = {}
    for o in simulate(config):
        after = (o.created_at.date() - START).days >= 10
        bad.setdefault((o.model, after), []).append(o.truth is Truth.BAD)

    # Before: 0.10. After: 0.10 + 0.4 * (1 - 0.10) = 0.46.
    for (model, after), expected in {
        ("drifting", False): 0.10,
        ("drifting", True): 0.46,
        ("steady", False): 0.10,
        ("steady", True): 0.10,
    }.items():
        flags = bad[(model, after)]
        assert abs(share(flags) - expected) <= 4 * se(expected, len(flags)), (model, after)


@pytest.mark.parametrize(
    ("start", "delay", "expected"),
    [
        (datetime(2026, 12, 1, 10, 0), timedelta(minutes=30), datetime(2026, 12, 1, 10, 30)),
        # Friday 17:30: 30 minutes that day, the other 30 on Monday.
        (datetime(2026, 11, 27, 17, 30), timedelta(hours=1), datetime(2026, 11, 30, 9, 30)),
        # Saturday night waits for Monday morning.
        (datetime(2026, 11, 28, 3, 0), timedelta(minutes=10), datetime(2026, 11, 30, 9, 10)),
        # A full nine-hour working day from before opening ends at the next day's opening.
        (datetime(2026, 11, 30, 7, 0), timedelta(hours=9), datetime(2026, 12, 1, 9, 0)),
    ],
)
def test_add_working_time_counts_only_working_hours(start, delay, expected):
    assert add_working_time(start.replace(tzinfo=UTC), delay) == expected.replace(tzinfo=UTC)


def test_review_times_fall_in_weekday_working_hours():
    rng = random.Random(13)
    fortnight = timedelta(days=14) / timedelta(seconds=1)
    for _ in range(5000):
        ready_at = datetime(2026, 11, 23, tzinfo=UTC) + timedelta(seconds=rng.uniform(0, fortnight))
        decided_at = review_time(ready_at, rng)
        assert decided_at >= ready_at
        assert decided_at.weekday() < 5
        assert 9 <= decided_at.hour < 18
