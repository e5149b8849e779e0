"""The simulated world: outputs with a hidden true quality, and the people who review them.

Every probability here is configured, not learned, so that tests and the learning cycles
can be checked against known answers: a validator's predictiveness, a reviewer's confusion
matrix, a model's drift, an agent's evidence (``agents``). Randomness comes only from
generators seeded with the seed (numpy's, one per simulated day, for the traffic, and one
more per day for the agent task types' patterns and evidence; ``random.Random`` for the
reviewers), so one seed always yields the same traffic.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import asdict, dataclass
from datetime import UTC, date, datetime, time, timedelta
from enum import StrEnum
from typing import Any

import numpy as np

from simulator import agents
from simulator.agents import AgentProfile, Pattern


class Truth(StrEnum):
    GOOD = "good"
    NEEDS_EDIT = "needs_edit"
    BAD = "bad"


class Action(StrEnum):
    APPROVE = "approve"
    MODIFY = "modify"
    REJECT = "reject"


TRUTHS = tuple(Truth)
ACTIONS = tuple(Action)


@dataclass(frozen=True)
class Model:
    """A model's share of needs_edit and bad outputs on a task type of difficulty 1."""

    name: str
    tier: str
    needs_edit_rate: float
    bad_rate: float


@dataclass(frozen=True)
class TaskType:
    """``difficulty`` scales every model's needs_edit and bad rates on this task type.

    An ``agent`` task type's outputs carry the evidence or provenance of one of its
    profile's investigation patterns, and their truth follows the pattern
    (``agent_truth_rates``).
    """

    name: str
    difficulty: float = 1.0
    requires_fact_check: bool = False
    agent: AgentProfile | None = None


@dataclass(frozen=True)
class ValidatorProfile:
    """How often a validator passes given the truth: the gap between good and bad is its signal."""

    name: str
    pass_rate: Mapping[Truth, float]
    failure_detail: str


@dataclass(frozen=True)
class Drift:
    """From ``day`` on (0 = the start date), ``model``'s truth moves toward bad by ``severity``."""

    model: str
    day: int
    severity: float

    def __post_init__(self) -> None:
        if not 0.0 <= self.severity <= 1.0:
            raise ValueError("drift severity must be in [0, 1]")


@dataclass(frozen=True)
class Reviewer:
    """A simulated reviewer: ``matrix[truth][action]`` is P(action | truth)."""

    name: str
    matrix: Mapping[Truth, Mapping[Action, float]]

    def __post_init__(self) -> None:
        for truth in TRUTHS:
            row = self.matrix[truth]
            if any(row[a] < 0 for a in ACTIONS) or abs(sum(row[a] for a in ACTIONS) - 1) > 1e-9:
                raise ValueError(f"{self.name}: the {truth} row must be a distribution")

    def decide(self, truth: Truth, rng: random.Random) -> Action:
        row = self.matrix[truth]
        return rng.choices(ACTIONS, weights=[row[a] for a in ACTIONS])[0]


def _row(approve: float, modify: float, reject: float) -> dict[Action, float]:
    return {Action.APPROVE: approve, Action.MODIFY: modify, Action.REJECT: reject}


def _by_truth(good: float, needs_edit: float, bad: float) -> dict[Truth, float]:
    return {Truth.GOOD: good, Truth.NEEDS_EDIT: needs_edit, Truth.BAD: bad}


# The verdict that is right for each truth.
RIGHT_ACTION = {
    Truth.GOOD: Action.APPROVE,
    Truth.NEEDS_EDIT: Action.MODIFY,
    Truth.BAD: Action.REJECT,
}


@dataclass(frozen=True)
class ReviewerFlaws:
    """A reviewer world that is not Dawid-Skene, where one confusion matrix per reviewer,
    independent of the output and of the other reviewers, does not describe the verdicts:

    * errors grow with an output's difficulty, drawn per output uniformly from 0 to 1: a
      reviewer's chance of a wrong verdict is their matrix's times ``2 x difficulty``
      (the same on average, at most ``MAX_ERROR``), spread over the wrong verdicts as the
      matrix spreads it; so two reviewers of one output err together more often than
      their matrices say;
    * shared blind spots: a share ``blind_share`` of the outputs that need an edit or are
      bad look good to everyone, who then approve them with chance ``blind_approve``
      whoever reviews them, first, second or the lead.
    """

    blind_share: float = 0.1
    blind_approve: float = 0.7

    MAX_ERROR = 0.95

    def row(
        self, reviewer: Reviewer, truth: Truth, *, difficulty: float, blind: bool
    ) -> dict[Action, float]:
        """P(action) for this reviewer on one output of this truth, difficulty and blind
        spot."""
        right = RIGHT_ACTION[truth]
        row = reviewer.matrix[truth]
        wrong = 1.0 - row[right]
        scaled = min(self.MAX_ERROR, wrong * 2 * difficulty)
        out = {
            a: (1 - scaled if a == right else (row[a] / wrong * scaled if wrong else 0.0))
            for a in ACTIONS
        }
        if blind and truth != Truth.GOOD:
            out = {a: (1 - self.blind_approve) * p for a, p in out.items()}
            out[Action.APPROVE] += self.blind_approve
        return out


DEFAULT_MODELS = (
    Model("gpt-x", tier="fast", needs_edit_rate=0.20, bad_rate=0.10),
    Model("gpt-x-large", tier="premium", needs_edit_rate=0.12, bad_rate=0.04),
    Model("open-7b", tier="budget", needs_edit_rate=0.25, bad_rate=0.18),
)

DEFAULT_TASK_TYPES = (
    TaskType("summarize", difficulty=1.0, requires_fact_check=True),
    TaskType("classify", difficulty=0.6),
    TaskType("extract", difficulty=0.8, requires_fact_check=True),
    TaskType("draft_reply", difficulty=1.3),
)

# Opt-in (``DEFAULT_TASK_TYPES + AGENT_TASK_TYPES``): the default world's traffic, which
# tests and benchmarks are pinned to by seed, stays as it was.
AGENT_TASK_TYPES = (
    TaskType("code_locate", agent=agents.CODE_LOCATE),
    TaskType("code_explain", agent=agents.CODE_EXPLAIN),
    TaskType("ci_status", agent=agents.CI_STATUS),
    TaskType("claim_check", requires_fact_check=True, agent=agents.CLAIM_CHECK),
)

# facts is the one strong, frequently failing signal; schema and security are strong but
# rarely fail; grammar and tone barely separate good from bad; length is pure noise.
VALIDATORS = (
    ValidatorProfile("facts", _by_truth(0.95, 0.70, 0.25), "claim not supported by the source"),
    ValidatorProfile("schema", _by_truth(0.995, 0.99, 0.95), "missing required field"),
    ValidatorProfile("security", _by_truth(0.999, 0.995, 0.97), "possible secret in the output"),
    ValidatorProfile("grammar", _by_truth(0.92, 0.85, 0.80), "two grammar issues"),
    ValidatorProfile("tone", _by_truth(0.90, 0.86, 0.80), "tone too informal"),
    ValidatorProfile("length", _by_truth(0.85, 0.85, 0.85), "over the word limit"),
)
FACT_CHECK_VALIDATORS = frozenset({"facts"})
# An agent's answer can read well and cite a real file yet name the wrong one: the fact
# check reads the answer's text, not the investigation behind it, so on agent task types it
# separates the truths less. The other validators are as on any task type.
AGENT_FACTS_PASS_RATE = _by_truth(0.90, 0.80, 0.60)

DEFAULT_REVIEWERS = (
    Reviewer(
        "accurate",
        {
            Truth.GOOD: _row(0.92, 0.06, 0.02),
            Truth.NEEDS_EDIT: _row(0.06, 0.88, 0.06),
            Truth.BAD: _row(0.02, 0.05, 0.93),
        },
    ),
    Reviewer(
        "harsh",
        {
            Truth.GOOD: _row(0.70, 0.18, 0.12),
            Truth.NEEDS_EDIT: _row(0.02, 0.68, 0.30),
            Truth.BAD: _row(0.00, 0.03, 0.97),
        },
    ),
    Reviewer(
        "lenient",
        {
            Truth.GOOD: _row(0.97, 0.03, 0.00),
            Truth.NEEDS_EDIT: _row(0.30, 0.65, 0.05),
            Truth.BAD: _row(0.12, 0.18, 0.70),
        },
    ),
    Reviewer(
        "noisy",
        {
            Truth.GOOD: _row(0.60, 0.25, 0.15),
            Truth.NEEDS_EDIT: _row(0.25, 0.50, 0.25),
            Truth.BAD: _row(0.15, 0.25, 0.60),
        },
    ),
)

# Clarity and coherence are noisy signals of the truth: a mean per truth plus Gaussian
# noise, clamped to [0, 1]. Coherence separates the truths more than clarity does.
CLARITY_MEAN = _by_truth(0.78, 0.68, 0.55)
CLARITY_SD = 0.15
COHERENCE_MEAN = _by_truth(0.85, 0.65, 0.40)
COHERENCE_SD = 0.12

# Relative traffic per UTC hour: quiet at night, a peak in office hours, a tail in the evening.
HOURLY_TRAFFIC = (1, 1, 1, 1, 1, 2, 3, 5, 8, 10, 10, 10, 9, 10, 10, 9, 8, 6, 5, 4, 3, 2, 2, 1)

WORKDAY_START = time(9)
WORKDAY_END = time(18)
MEAN_REVIEW_DELAY = timedelta(minutes=90)

TOPICS = (
    "quarterly revenue report",
    "customer refund email",
    "incident postmortem",
    "release notes",
    "support ticket",
    "supplier contract",
)
FINDINGS = (
    "reports a 4% change from last quarter",
    "lists two action items",
    "asks for a reply by Friday",
    "covers three open issues",
    "mentions no deadline",
)


def truth_rates(
    task_type: TaskType, model: Model, drift_severity: float = 0.0
) -> dict[Truth, float]:
    """P(truth) for one output: the model's rates scaled by the task's difficulty.

    Drift mixes the distribution with "always bad": a severity s moves a share s of the
    good and needs_edit mass to bad, so bad becomes ``bad + s * (1 - bad)``.
    """
    needs_edit = model.needs_edit_rate * task_type.difficulty
    bad = model.bad_rate * task_type.difficulty
    if needs_edit < 0 or bad < 0 or needs_edit + bad > 1:
        raise ValueError(f"{model.name} on {task_type.name}: rates are not a distribution")
    keep = 1 - drift_severity
    return {
        Truth.GOOD: (1 - needs_edit - bad) * keep,
        Truth.NEEDS_EDIT: needs_edit * keep,
        Truth.BAD: bad * keep + drift_severity,
    }


# How much of an agent output's truth distribution is its model's own (on the task type);
# the rest is its investigation pattern's. The evidence decides most of the answer's
# quality, and a better model still does better on the same evidence.
MODEL_SHARE = 0.25


def agent_truth_rates(
    pattern: Pattern, task_type: TaskType, model: Model, drift_severity: float = 0.0
) -> dict[Truth, float]:
    """P(truth) for one agent output: ``1 - MODEL_SHARE`` of the pattern's distribution
    plus ``MODEL_SHARE`` of the model's rates on the task type, then drift toward bad as
    in ``truth_rates``."""
    model_rates = truth_rates(task_type, model)
    mixed = {
        t: (1 - MODEL_SHARE) * p + MODEL_SHARE * model_rates[t]
        for t, p in zip(TRUTHS, pattern.truth, strict=True)
    }
    keep = 1 - drift_severity
    return {
        Truth.GOOD: mixed[Truth.GOOD] * keep,
        Truth.NEEDS_EDIT: mixed[Truth.NEEDS_EDIT] * keep,
        Truth.BAD: mixed[Truth.BAD] * keep + drift_severity,
    }


@dataclass(frozen=True)
class SimulationConfig:
    seed: int
    days: int
    outputs_per_day: int
    start: date
    task_types: tuple[TaskType, ...] = DEFAULT_TASK_TYPES
    models: tuple[Model, ...] = DEFAULT_MODELS
    drift: Drift | None = None

    def __post_init__(self) -> None:
        # numpy's generators take no negative seed, and the truths keep it in a bigint.
        if not 0 <= self.seed < 2**63:
            raise ValueError("seed must be between 0 and 2**63 - 1")
        if self.days < 1 or self.outputs_per_day < 0:
            raise ValueError("days must be at least 1 and outputs_per_day at least 0")
        if not self.task_types or not self.models:
            raise ValueError("at least one task type and one model are needed")
        if self.drift and self.drift.model not in {m.name for m in self.models}:
            raise ValueError(f"drift names an unknown model: {self.drift.model}")
        for task_type in self.task_types:
            for model in self.models:
                truth_rates(task_type, model)

    def drift_severity(self, model: Model, day: int) -> float:
        if self.drift and self.drift.model == model.name and day >= self.drift.day:
            return self.drift.severity
        return 0.0


@dataclass(frozen=True)
class ValidatorResult:
    name: str
    passed: bool
    detail: str = ""


@dataclass(frozen=True)
class SimulatedOutput:
    """One output as the gateway would send it, plus the hidden ``truth`` the gate never sees."""

    external_id: str
    created_at: datetime
    task_type: str
    model: str
    tier: str
    input: str
    output: str
    validators: tuple[ValidatorResult, ...]
    input_clarity: float
    coherence: float
    requires_fact_check: bool
    truth: Truth
    # Agent task types only: what the gateway sends of the investigation, and its hidden
    # pattern (``agents.Pattern.name``), which the gate never sees, like the truth.
    evidence: dict[str, Any] | None = None
    provenance: dict[str, Any] | None = None
    pattern: str | None = None

    def submission_dict(self) -> dict[str, Any]:
        """What a gateway would POST (``gating.submissions.OutputSubmission``): no truth,
        no pattern, and evidence and provenance only when the output has them."""
        sent = {
            "external_id": self.external_id,
            "task_type": self.task_type,
            "model": self.model,
            "tier": self.tier,
            "input": self.input,
            "output": self.output,
            "validators": [
                {"name": v.name, "passed": v.passed, "detail": v.detail} for v in self.validators
            ],
            "input_clarity": self.input_clarity,
            "coherence": self.coherence,
            "requires_fact_check": self.requires_fact_check,
        }
        if self.evidence is not None:
            sent["evidence"] = self.evidence
        if self.provenance is not None:
            sent["provenance"] = self.provenance
        return sent


@dataclass(frozen=True)
class DayTraffic:
    """One simulated day's outputs as columns (numpy arrays), in chronological order.

    The day's draws come from its own generator, seeded by (seed, day): a day can be
    generated on its own, by any process, and is the same every time.
    """

    config: SimulationConfig
    day: int
    first_number: int
    created_at: np.ndarray  # datetime64[us], UTC
    task_type: np.ndarray  # index into config.task_types
    model: np.ndarray  # index into config.models
    truth: np.ndarray  # index into TRUTHS
    passed: np.ndarray  # (n, len(VALIDATORS)) booleans
    input_clarity: np.ndarray
    coherence: np.ndarray
    topic: np.ndarray  # index into TOPICS
    finding: np.ndarray  # index into FINDINGS
    # With agent task types only: each row's index into ``patterns`` (-1 for the other task
    # types), and each agent row's draws, in row order, that shape its evidence.
    patterns: tuple[Pattern, ...] = ()
    pattern: np.ndarray | None = None
    draws: np.ndarray | None = None  # (agent rows, agents.DRAWS) uniforms

    def outputs(self, start: int = 0, stop: int | None = None) -> Iterator[SimulatedOutput]:
        """Rows ``start:stop`` as ``SimulatedOutput`` objects."""
        for row in self._rows(start, stop):
            passed = row.pop("passed")
            yield SimulatedOutput(
                **row, validators=tuple(_RESULTS[v][ok] for v, ok in enumerate(passed))
            )

    def submissions(
        self, start: int = 0, stop: int | None = None
    ) -> list[tuple[dict[str, Any], datetime, Truth]]:
        """Rows ``start:stop`` as (what the gateway sends, arrival, truth): the same as each
        ``SimulatedOutput.submission_dict()``, without making the objects."""
        sent = []
        for row in self._rows(start, stop):
            at, truth, passed = row.pop("created_at"), row.pop("truth"), row.pop("passed")
            row.pop("pattern", None)
            row["validators"] = [_RESULT_DICTS[v][ok] for v, ok in enumerate(passed)]
            sent.append((row, at, truth))
        return sent

    def _rows(self, start: int, stop: int | None) -> Iterator[dict[str, Any]]:
        config = self.config
        times = self.created_at[start:stop].astype(datetime)
        columns = zip(
            range(start, start + len(times)),
            times,
            self.task_type[start:stop].tolist(),
            self.model[start:stop].tolist(),
            self.truth[start:stop].tolist(),
            self.passed[start:stop].tolist(),
            self.input_clarity[start:stop].tolist(),
            self.coherence[start:stop].tolist(),
            self.topic[start:stop].tolist(),
            self.finding[start:stop].tolist(),
            strict=True,
        )
        agent_rows = self._agent_rows(start, stop)
        for i, at, t, m, truth, passed, clarity, coherence, topic, finding in columns:
            task_type, model, n = config.task_types[t], config.models[m], self.first_number + i
            row = {
                # Zero-padded, so that ids sort in arrival order: each new output then
                # lands at the end of the unique (source, external_id) index rather than
                # at a random page of it.
                "external_id": f"sim-{config.seed}-{n:010d}",
                "created_at": at.replace(tzinfo=UTC),
                "task_type": task_type.name,
                "model": model.name,
                "tier": model.tier,
                "input": f"Please {task_type.name.replace('_', ' ')} the {TOPICS[topic]} (#{n}).",
                "output": f"The {TOPICS[topic]} {FINDINGS[finding]}.",
                "passed": passed,
                "input_clarity": clarity,
                "coherence": coherence,
                "requires_fact_check": task_type.requires_fact_check,
                "truth": TRUTHS[truth],
            }
            if agent_rows is not None:
                pattern, draws = next(agent_rows)
                if pattern is not None:
                    fields = agents.agent_output(pattern, task_type.agent, draws, row["created_at"])
                    fields["input"] = f"{fields['input']} (#{n})"
                    row.update(fields, pattern=pattern.name)
            yield row

    def _agent_rows(self, start: int, stop: int | None) -> Iterator[tuple] | None:
        """For each row of ``start:stop``, its pattern and draws, or (None, None) for the
        other task types; None when the day has no agent task types."""
        if self.pattern is None:
            return None
        patterns = self.pattern[start:stop].tolist()
        # The agent rows' draws are stored in row order: the first one here is preceded by
        # as many as there are agent rows before ``start``.
        first = int(np.count_nonzero(self.pattern[:start] >= 0))
        draws = iter(self.draws[first : first + sum(p >= 0 for p in patterns)].tolist())
        return ((self.patterns[p], next(draws)) if p >= 0 else (None, None) for p in patterns)


# Each validator's two possible results, made once: a million outputs share them.
_RESULTS = tuple(
    (ValidatorResult(p.name, False, p.failure_detail), ValidatorResult(p.name, True, ""))
    for p in VALIDATORS
)
_RESULT_DICTS = tuple(
    tuple({"name": r.name, "passed": r.passed, "detail": r.detail} for r in pair)
    for pair in _RESULTS
)
_PASS_RATES = np.array([[p.pass_rate[t] for p in VALIDATORS] for t in TRUTHS])
_AGENT_PASS_RATES = np.array(
    [
        [AGENT_FACTS_PASS_RATE[t] if p.name == "facts" else p.pass_rate[t] for p in VALIDATORS]
        for t in TRUTHS
    ]
)
_CLARITY_MEANS = np.array([CLARITY_MEAN[t] for t in TRUTHS])
_COHERENCE_MEANS = np.array([COHERENCE_MEAN[t] for t in TRUTHS])
_HOUR_WEIGHTS = np.array(HOURLY_TRAFFIC) / sum(HOURLY_TRAFFIC)


def _signal(rng: np.random.Generator, means: np.ndarray, sd: float) -> np.ndarray:
    return np.round(np.clip(rng.normal(means, sd), 0.0, 1.0), 3)


def day_traffic(config: SimulationConfig, day: int) -> DayTraffic:
    """Day ``day`` (0 = the start date) of ``config``'s traffic."""
    rng = np.random.default_rng([config.seed, day])
    n = config.outputs_per_day
    midnight = np.datetime64(config.start + timedelta(days=day), "us")
    hours = rng.choice(24, size=n, p=_HOUR_WEIGHTS)
    offsets = np.sort(hours * 3_600_000_000 + rng.integers(0, 3_600_000_000, size=n))
    task_type = rng.integers(0, len(config.task_types), size=n)
    model = rng.integers(0, len(config.models), size=n)
    # P(truth) for every (task type, model) pair on this day, then one uniform draw each.
    rates = np.array(
        [
            [
                [r[t] for t in TRUTHS]
                for r in (truth_rates(tt, m, config.drift_severity(m, day)) for m in config.models)
            ]
            for tt in config.task_types
        ]
    )
    cumulative = np.cumsum(rates, axis=2)[task_type, model]
    patterns, pattern, draws = _agent_draws(config, day, task_type) or ((), None, None)
    if pattern is not None:
        # Agent rows take their truth from their pattern instead.
        on = pattern >= 0
        pattern_rates = _agent_rates(config, day, patterns)
        cumulative[on] = np.cumsum(pattern_rates[pattern[on], task_type[on], model[on]], axis=1)
    truth = (rng.random(n)[:, None] >= cumulative[:, :-1]).sum(axis=1)
    pass_rates = _PASS_RATES[truth]
    if pattern is not None:
        pass_rates[on] = _AGENT_PASS_RATES[truth[on]]
    passed = rng.random((n, len(VALIDATORS))) < pass_rates
    return DayTraffic(
        config=config,
        day=day,
        first_number=day * n,
        created_at=midnight + offsets.astype("timedelta64[us]"),
        task_type=task_type,
        model=model,
        truth=truth,
        passed=passed,
        input_clarity=_signal(rng, _CLARITY_MEANS[truth], CLARITY_SD),
        coherence=_signal(rng, _COHERENCE_MEANS[truth], COHERENCE_SD),
        topic=rng.integers(0, len(TOPICS), size=n),
        finding=rng.integers(0, len(FINDINGS), size=n),
        patterns=patterns,
        pattern=pattern,
        draws=draws,
    )


# The agent draws come from a generator of their own, seeded by (seed, day, this), so that
# the day's other draws are the same with or without agent task types.
_AGENT_STREAM = 1


def _agent_draws(
    config: SimulationConfig, day: int, task_type: np.ndarray
) -> tuple[tuple[Pattern, ...], np.ndarray, np.ndarray] | None:
    """The patterns of ``config``'s agent task types, each row's pattern (-1 for the other
    task types) and the agent rows' draws; None without agent task types."""
    profiles = [tt.agent for tt in config.task_types]
    patterns = tuple(dict.fromkeys(p for a in profiles if a for p, _ in a.patterns))
    if not patterns:
        return None
    rng = np.random.default_rng([config.seed, day, _AGENT_STREAM])
    weights = np.array([[a.weight(p) if a else 0.0 for p in patterns] for a in profiles])
    cumulative = np.cumsum(weights, axis=1)[task_type]
    is_agent = np.array([a is not None for a in profiles])[task_type]
    drawn = (rng.random(len(task_type))[:, None] >= cumulative[:, :-1]).sum(axis=1)
    pattern = np.where(is_agent, drawn, -1)
    return patterns, pattern, rng.random((int(is_agent.sum()), agents.DRAWS))


def _agent_rates(config: SimulationConfig, day: int, patterns: tuple[Pattern, ...]) -> np.ndarray:
    """P(truth) for every (pattern, task type, model) on this day, by ``agent_truth_rates``
    (zeros for the task types that are not agents)."""
    return np.array(
        [
            [
                [
                    [r[t] for t in TRUTHS]
                    for r in (
                        agent_truth_rates(p, tt, m, config.drift_severity(m, day))
                        if tt.agent
                        else dict.fromkeys(TRUTHS, 0.0)
                        for m in config.models
                    )
                ]
                for tt in config.task_types
            ]
            for p in patterns
        ]
    )


def simulate(config: SimulationConfig) -> Iterator[SimulatedOutput]:
    """Outputs in chronological order, ``config.outputs_per_day`` on each of ``config.days``."""
    for day in range(config.days):
        yield from day_traffic(config, day).outputs()


def fingerprint(outputs: Iterable[SimulatedOutput]) -> str:
    """sha256 of the canonical JSON of every row, truth (and pattern) included."""
    rows = [_canonical_row(o) for o in outputs]
    canonical = json.dumps(rows, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


def _canonical_row(output: SimulatedOutput) -> dict[str, Any]:
    row = {**asdict(output), "created_at": output.created_at.isoformat()}
    # Without agent fields, a row has the shape it had before they existed, so that the
    # default world's fingerprints stay what they were.
    for key in ("evidence", "provenance", "pattern"):
        if row[key] is None:
            del row[key]
    return row


def _working_day_start(moment: datetime) -> datetime:
    """The earliest working moment at or after ``moment``."""
    if moment.time() >= WORKDAY_END:
        moment = datetime.combine(moment.date() + timedelta(days=1), time(0), moment.tzinfo)
    while moment.weekday() >= 5:
        moment = datetime.combine(moment.date() + timedelta(days=1), time(0), moment.tzinfo)
    return max(moment, datetime.combine(moment.date(), WORKDAY_START, moment.tzinfo))


def add_working_time(start: datetime, delay: timedelta) -> datetime:
    """``start`` plus ``delay`` counted in working hours only (09:00-18:00 UTC, Mon-Fri).

    The answer is always inside working hours, so a backlog left at 18:00 on Friday
    waits, ageing, until Monday morning.
    """
    moment = _working_day_start(start)
    while True:
        left_today = datetime.combine(moment.date(), WORKDAY_END, moment.tzinfo) - moment
        if delay < left_today:
            return moment + delay
        delay -= left_today
        moment = _working_day_start(moment + left_today)


def review_time(
    ready_at: datetime, rng: random.Random, mean_delay: timedelta = MEAN_REVIEW_DELAY
) -> datetime:
    """When a reviewer decides an output held from ``ready_at``: exponential working time."""
    minutes = rng.expovariate(1 / (mean_delay / timedelta(minutes=1)))
    return add_working_time(ready_at, timedelta(minutes=minutes))
