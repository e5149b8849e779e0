"""The simulator's agent task types: evidence and provenance whose truth follows the seeds.

Statistical checks use fixed seeds and a bound of 4 standard errors, so they are
deterministic and fail only on a real bug. A pattern's outputs come from several models,
each with its own truth distribution (``agent_truth_rates``), so the expected count of a
truth is the sum of the rows' probabilities and its variance the sum of p(1 - p).
"""

import math
import pickle
from collections import Counter, defaultdict
from datetime import UTC, date, datetime

import pytest

from dashboard import demo
from gating.submissions import OutputSubmission
from simulator import agents
from simulator.world import (
    AGENT_TASK_TYPES,
    DEFAULT_MODELS,
    DEFAULT_TASK_TYPES,
    Drift,
    Model,
    SimulationConfig,
    TaskType,
    Truth,
    agent_truth_rates,
    day_traffic,
    fingerprint,
    simulate,
)

START = date(2026, 11, 23)
TASK_TYPES = {t.name: t for t in AGENT_TASK_TYPES}
MODELS = {m.name: m for m in DEFAULT_MODELS}
PATTERNS = {p.name: p for t in AGENT_TASK_TYPES for p, _ in t.agent.patterns}
WRONG = (Truth.NEEDS_EDIT, Truth.BAD)


def agent_config(seed: int, days: int, outputs_per_day: int, **kwargs) -> SimulationConfig:
    return SimulationConfig(
        seed=seed,
        days=days,
        outputs_per_day=outputs_per_day,
        start=START,
        task_types=DEFAULT_TASK_TYPES + AGENT_TASK_TYPES,
        **kwargs,
    )


@pytest.fixture(scope="module")
def agent_traffic():
    # 40,000 outputs of the agent task types alone: at least about 500 of each pattern.
    config = SimulationConfig(
        seed=11, days=20, outputs_per_day=2000, start=START, task_types=AGENT_TASK_TYPES
    )
    return list(simulate(config))


@pytest.fixture(scope="module")
def by_pattern(agent_traffic):
    grouped = defaultdict(list)
    for output in agent_traffic:
        grouped[output.pattern].append(output)
    return grouped


def wrong_share(outputs) -> tuple[float, float]:
    """The share of needs_edit and bad outputs, and its standard error."""
    p = sum(o.truth in WRONG for o in outputs) / len(outputs)
    return p, math.sqrt(p * (1 - p) / len(outputs))


def good_share(outputs) -> tuple[float, float]:
    p = sum(o.truth is Truth.GOOD for o in outputs) / len(outputs)
    return p, math.sqrt(p * (1 - p) / len(outputs))


def assert_clearly_above(higher: tuple[float, float], lower: tuple[float, float]) -> None:
    assert higher[0] - lower[0] > 4 * math.hypot(higher[1], lower[1]), (higher, lower)


# ------------------------------------------------------------------ the default world


# sha256 fingerprints of the default world, computed before agent task types existed.
DEFAULT_WORLD_FINGERPRINTS = [
    (
        SimulationConfig(seed=1, days=3, outputs_per_day=50, start=START),
        "3d3407b4c5282d19dde56cb1d6f5f79220db12e53a34dd4a6973dbbc62e14995",
    ),
    (
        SimulationConfig(seed=7, days=4, outputs_per_day=1500, start=START),
        "1d02204e6c9b111850cc1eb8f6292baa20a5669b10046a7aaea40eb94ca054b0",
    ),
    (
        SimulationConfig(
            seed=42, days=3, outputs_per_day=300, start=START, drift=Drift("gpt-x", 1, 0.5)
        ),
        "e09ed612fecb2b630113f35b2184d35dd34bf80bc7625eddfcdbf33124bd4926",
    ),
]


@pytest.mark.parametrize(("config", "expected"), DEFAULT_WORLD_FINGERPRINTS)
def test_the_default_world_is_what_it_was_before_agents(config, expected):
    assert fingerprint(simulate(config)) == expected


def test_the_default_world_has_no_agent_fields():
    config = SimulationConfig(seed=1, days=1, outputs_per_day=200, start=START)
    assert day_traffic(config, 0).pattern is None
    for output in simulate(config):
        assert output.evidence is output.provenance is output.pattern is None
        assert not {"evidence", "provenance"} & set(output.submission_dict())


# ------------------------------------------------------------------ what is sent


def test_agent_outputs_validate_and_carry_their_evidence_or_provenance():
    outputs = list(simulate(agent_config(seed=5, days=2, outputs_per_day=2500)))
    agent_outputs = [o for o in outputs if o.task_type in TASK_TYPES]
    assert len(agent_outputs) > 2000
    for output in outputs:
        sent = output.submission_dict()
        assert "truth" not in sent and "pattern" not in sent
        validated = OutputSubmission.model_validate(sent)
        if output.task_type not in TASK_TYPES:
            assert output.pattern is None
            continue
        assert output.pattern in PATTERNS
        assert validated.evidence is not None and validated.evidence.entries
        if output.task_type == "claim_check":
            assert validated.provenance.staleness_at.utcoffset() is not None
        else:
            assert validated.provenance is None
    intents = {
        t: {o.evidence["intent"] for o in agent_outputs if o.task_type == t} for t in TASK_TYPES
    }
    assert intents == {
        "code_locate": {"locate"},
        "code_explain": {"explain"},
        "ci_status": {"execute", "status", "diagnose"},
        "claim_check": {"locate"},
    }


def test_submissions_are_the_agent_outputs_as_sent():
    config = agent_config(seed=4, days=2, outputs_per_day=400)
    traffic = day_traffic(config, 1)
    outputs = list(traffic.outputs(150, 330))
    # A slice starting mid-day finds its agent rows' own draws.
    assert outputs == list(simulate(config))[550:730]
    assert any(o.pattern for o in outputs)
    assert traffic.submissions(150, 330) == [
        (o.submission_dict(), o.created_at, o.truth) for o in outputs
    ]


def test_agent_traffic_is_seeded_and_survives_the_trip_to_a_worker():
    config = agent_config(seed=3, days=2, outputs_per_day=300)
    assert fingerprint(simulate(config)) == fingerprint(simulate(config))
    assert fingerprint(simulate(config)) != fingerprint(simulate(agent_config(3 + 1, 2, 300)))
    # Worker processes are spawned with the config pickled.
    assert fingerprint(simulate(pickle.loads(pickle.dumps(config)))) == fingerprint(
        simulate(config)
    )


def test_the_fingerprint_covers_the_evidence():
    outputs = list(simulate(agent_config(seed=2, days=1, outputs_per_day=100)))
    first = next(i for i, o in enumerate(outputs) if o.evidence)
    changed = outputs.copy()
    entries = outputs[first].evidence["entries"][1:]
    changed[first] = type(outputs[first])(
        **{**outputs[first].__dict__, "evidence": {"intent": "chat", "entries": entries}}
    )
    assert fingerprint(changed) != fingerprint(outputs)


def search(output, tool: str) -> dict:
    return next(e for e in output.evidence["entries"] if e["tool"] == tool)


def staleness(output) -> datetime:
    return datetime.fromisoformat(output.provenance["staleness_at"])


# What each pattern leaves in the payload, as the seeds describe it.
LEAVES = {
    "corroborated": lambda o: (
        {"find", "read", "grep"} <= {e["tool"] for e in o.evidence["entries"]}
        and search(o, "find")["target"]
        == search(o, "grep")["target"]
        == search(o, "read")["target"]
        and search(o, "find")["match"] == "exact"
    ),
    "tokenised_grep": lambda o: (
        search(o, "grep")["match"] == "token"
        and search(o, "grep")["match_count"] > 10
        and search(o, "read")["outcome"] == "first_listed"
    ),
    "broad_find": lambda o: (
        search(o, "find")["match"] in ("substring", "token")
        and search(o, "read")["outcome"] == "first_listed"
    ),
    "nonexistent_identifier": lambda o: (
        search(o, "grep")["match"] == "token" and "exact_match_count" not in search(o, "grep")
    ),
    "discovery_only": lambda o: [e["tool"] for e in o.evidence["entries"]] == ["discovery"],
    "noop_build": lambda o: (
        [e.get("outcome") for e in o.evidence["entries"]] == ["no_op", "none_run"]
    ),
    "gh_empty": lambda o: search(o, "gh")["outcome"] == "empty",
    "fresh_diverse": lambda o: (
        staleness(o) > o.created_at
        and len({s["source_type"] for s in o.provenance["sources"]}) == 3
    ),
    "stale_source": lambda o: staleness(o) < o.created_at and len(o.provenance["sources"]) == 1,
    "long_stale_source": lambda o: (
        staleness(o) <= o.created_at - 3 * agents.HALF_LIVES[o.provenance["tier"]]
    ),
    "contradicted": lambda o: staleness(o) > o.created_at and o.provenance["contradicting"],
}


@pytest.mark.parametrize("pattern", sorted(LEAVES))
def test_each_pattern_leaves_the_evidence_the_seeds_describe(by_pattern, pattern):
    assert all(LEAVES[pattern](o) for o in by_pattern[pattern])


def test_recovery_searches_found_nothing_new(agent_traffic):
    retries = [
        e for o in agent_traffic if o.evidence for e in o.evidence["entries"] if e.get("recovery")
    ]
    assert len(retries) > 100
    assert {e["match"] for e in retries} == {"none"}


# ------------------------------------------------------------------ truth follows evidence


def test_agent_truth_mixes_the_pattern_with_the_model_then_drifts():
    pattern = agents.Pattern("p", (0.25, 0.25, 0.50), agents.TOKENISED_GREP.build)
    model = Model("m", tier="fast", needs_edit_rate=0.2, bad_rate=0.1)
    # 0.75 * (0.25, 0.25, 0.50) + 0.25 * (0.7, 0.2, 0.1) = (0.3625, 0.2375, 0.4); drift 0.4
    # keeps 60% of each and adds 0.4 to bad.
    rates = agent_truth_rates(pattern, TaskType("t"), model, drift_severity=0.4)
    assert rates[Truth.GOOD] == pytest.approx(0.2175)
    assert rates[Truth.NEEDS_EDIT] == pytest.approx(0.1425)
    assert rates[Truth.BAD] == pytest.approx(0.64)


def test_patterns_are_drawn_at_their_task_types_weights(agent_traffic):
    for task_type in AGENT_TASK_TYPES:
        drawn = Counter(o.pattern for o in agent_traffic if o.task_type == task_type.name)
        n = sum(drawn.values())
        for pattern, weight in task_type.agent.patterns:
            se = math.sqrt(weight * (1 - weight) / n)
            assert abs(drawn[pattern.name] / n - weight) <= 4 * se, (task_type.name, pattern.name)


def test_each_patterns_truths_match_its_configured_rates(by_pattern):
    assert set(by_pattern) == set(PATTERNS)
    for name, outputs in by_pattern.items():
        for truth in Truth:
            probabilities = [
                agent_truth_rates(PATTERNS[name], TASK_TYPES[o.task_type], MODELS[o.model])[truth]
                for o in outputs
            ]
            expected = sum(probabilities)
            bound = 4 * math.sqrt(sum(p * (1 - p) for p in probabilities))
            observed = sum(o.truth is truth for o in outputs)
            assert abs(observed - expected) <= bound, (name, truth, observed, expected)


@pytest.mark.parametrize("weak", ["tokenised_grep", "broad_find", "nonexistent_identifier"])
def test_corroborated_evidence_is_more_often_good_than_weak_searches(by_pattern, weak):
    for strong in ("corroborated", "corroborated_with_discovery"):
        assert_clearly_above(good_share(by_pattern[strong]), good_share(by_pattern[weak]))


@pytest.mark.parametrize("authoritative", ["build_test_passed", "git_log_matching", "gh_run_log"])
def test_verified_ci_evidence_is_more_often_good_than_weak_ci_evidence(by_pattern, authoritative):
    for weak in ("noop_build", "git_status_only", "gh_empty"):
        assert_clearly_above(good_share(by_pattern[authoritative]), good_share(by_pattern[weak]))


@pytest.mark.parametrize("doubtful", ["stale_source", "long_stale_source", "contradicted"])
def test_stale_and_contradicted_claims_are_wrong_more_often_than_fresh_ones(by_pattern, doubtful):
    for fresh in ("fresh_diverse", "single_source"):
        assert_clearly_above(wrong_share(by_pattern[doubtful]), wrong_share(by_pattern[fresh]))


def test_a_claim_decays_the_more_half_lives_it_is_past_its_staleness(by_pattern):
    assert_clearly_above(
        wrong_share(by_pattern["long_stale_source"]), wrong_share(by_pattern["stale_source"])
    )


def test_the_fact_check_separates_the_truths_less_on_agent_task_types(agent_traffic):
    default = list(simulate(SimulationConfig(seed=11, days=10, outputs_per_day=2000, start=START)))

    def gap(outputs) -> float:
        passed = {
            t: [
                next(v.passed for v in o.validators if v.name == "facts")
                for o in outputs
                if o.truth is t
            ]
            for t in (Truth.GOOD, Truth.BAD)
        }
        return sum(passed[Truth.GOOD]) / len(passed[Truth.GOOD]) - sum(passed[Truth.BAD]) / len(
            passed[Truth.BAD]
        )

    assert 0.1 < gap(agent_traffic) < gap(default) - 0.2


# ------------------------------------------------------------------ the demo


def test_the_demo_includes_the_agent_task_types():
    config = demo.demo_config(until=datetime(2026, 3, 4, 15, 30, tzinfo=UTC))
    assert config.task_types == DEFAULT_TASK_TYPES + AGENT_TASK_TYPES
