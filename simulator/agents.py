"""Agent task types: outputs whose hidden truth follows the evidence behind them.

An agent answers by investigating with tools (seeds 000 and 001) or by weighing a claim's
sources (seed 004). Each agent output comes from one of a few investigation patterns taken
from the seeds' own examples, and each pattern has its own chances of leading to a good, a
needs-edit or a bad answer:

* corroborated evidence (find, read and grep agreeing on one symbol; git or gh, which are
  authoritative; a build with all tests passing) is mostly right;
* a tokenised grep, a broad find or a search for a name that does not exist (seed 001's
  six failing benchmarks) is often wrong, as is a no-op build or an empty CI answer;
* a claim decays once it is stale, the more half-lives past its staleness the more;
* a contradicted claim is wrong more often.

The pattern is hidden like the truth: what the gateway sends is the evidence and the
provenance it leaves, in the shape of ``gating.submissions.EvidenceIn`` and
``ProvenanceIn`` (plain JSON values, as a gateway would send them).

Pure: no ORM, no Django. The uniform draws come from the world's seeded generators; this
module only turns them into payloads.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

# How many uniform draws shape one agent output (``Case.draws``); the world draws them.
DRAWS = 16
# Which draw decides what. Distinct draws for distinct choices, so that, say, a claim's
# tier does not decide its sources' confidence too.
_SUBJECT, _COUNT, _COUNT_2, _OPTION, _RECOVERY, _TIER, _AGE, _TARGET = range(8)
_CONFIDENCES = (8, 9, 10)
_RELATED, _STRENGTHS, _RELATED_CONFIDENCES = 11, (12, 13), (14, 15)


@dataclass(frozen=True)
class Built:
    """What one pattern made for one output: the gateway's texts and payloads."""

    input: str
    output: str
    entries: list[dict[str, Any]] | None = None
    provenance: dict[str, Any] | None = None


@dataclass(frozen=True)
class Case:
    """One agent output being built: its draws (uniform on [0, 1)), arrival and intent."""

    draws: Sequence[float]
    at: datetime
    intent: str

    def pick(self, draw: int, options: Sequence[Any]) -> Any:
        return options[int(self.draws[draw] * len(options))]

    def count(self, draw: int, low: int, high: int) -> int:
        """An integer from ``low`` to ``high``, both included."""
        return low + int(self.draws[draw] * (high - low + 1))

    def amount(self, draw: int, low: float, high: float) -> float:
        return round(low + self.draws[draw] * (high - low), 2)

    def chance(self, draw: int, p: float) -> bool:
        return self.draws[draw] < p


@dataclass(frozen=True)
class Pattern:
    """One way of investigating, and how often the answer it leads to is good, needs an
    edit or is bad (``truth``, in that order). The world mixes in a share of the model's
    own rates (``world.agent_truth_rates``), so that a better model still does better on
    the same evidence.

    ``intent`` overrides the task type's, for task types whose patterns answer different
    questions. ``recovery_rate`` is the share of outputs that also carry a recovery search
    that found nothing new: recovery is neutral (seed 000), so it changes no truth.
    """

    name: str
    truth: tuple[float, float, float]
    build: Callable[[Case], Built]
    intent: str | None = None
    recovery_rate: float = 0.0

    def __post_init__(self) -> None:
        if any(p < 0 for p in self.truth) or abs(sum(self.truth) - 1) > 1e-9:
            raise ValueError(f"{self.name}: truth must be a distribution")


@dataclass(frozen=True)
class AgentProfile:
    """What an agent task type is asked (its ``intent``) and how often each pattern is
    how it investigates (``patterns``: pairs of pattern and weight, weights summing to 1)."""

    intent: str
    patterns: tuple[tuple[Pattern, float], ...]

    def __post_init__(self) -> None:
        weights = [w for _, w in self.patterns]
        if not weights or any(w < 0 for w in weights) or abs(sum(weights) - 1) > 1e-9:
            raise ValueError("pattern weights must be a distribution")

    def weight(self, pattern: Pattern) -> float:
        return sum(w for p, w in self.patterns if p == pattern)


def agent_output(
    pattern: Pattern, profile: AgentProfile, draws: Sequence[float], at: datetime
) -> dict[str, Any]:
    """One output of ``pattern`` as the fields it sets: ``input`` and ``output``, and
    ``evidence`` and ``provenance`` when it carries them."""
    case = Case(draws=draws, at=at, intent=pattern.intent or profile.intent)
    built = pattern.build(case)
    fields: dict[str, Any] = {"input": built.input, "output": built.output}
    if built.entries is not None:
        entries = built.entries
        searches = [e for e in entries if e["tool"] in ("find", "grep")]
        if searches and case.chance(_RECOVERY, pattern.recovery_rate):
            first = searches[0]
            retry = {"tool": first["tool"], "query": first["query"], "target": first["target"]}
            entries = [*entries, {**retry, "match": "none", "recovery": True}]
        fields["evidence"] = {"intent": case.intent, "entries": entries}
    if built.provenance is not None:
        fields["provenance"] = built.provenance
    return fields


# --------------------------------------------------------------------------- code
# The symbols of a made-up C++ code base, each with the file that defines it.
SYMBOLS = (
    ("ExecutionEngine", "src/engine/execution_engine.cpp"),
    ("MemoryManager", "src/memory/memory_manager.h"),
    ("ConfidenceService", "src/confidence/confidence_service.cpp"),
    ("EvidenceStore", "src/evidence/evidence_store.h"),
    ("ToolInvocation", "src/tools/tool_invocation.h"),
    ("RecoveryGate", "src/engine/recovery_gate.cpp"),
)
# Seed 001's failing queries: several words that match only one by one, and the file that
# the tokenised search lists first, which is not about the phrase.
PHRASES = (
    ("evidence gating", "src/evidence/evidence_store.h"),
    ("startup model selection", "src/startup.cpp"),
    ("provider credentials configured", "src/auth/provider_auth.h"),
    ("recovery threshold tuning", "src/engine/recovery_gate.cpp"),
)
# Names that exist nowhere; a tokenised grep still finds "class" or "handler".
NONEXISTENT = (
    ("xqkz_2024_nonexistent_class", "src/session/session.h"),
    ("xqkz_legacy_upload_handler", "src/net/upload_handler.cpp"),
)
OTHER_FILES = ("src/main.cpp", "src/util/strings.h", "tests/engine_test.cpp", "README.md")
FACTORS = ("project_type", "source_count", "test_presence", "build_system")


def _question(case: Case, subject: str, file: str) -> tuple[str, str]:
    if case.intent == "explain":
        return (
            f"Explain what {subject} does.",
            f"{subject} is implemented in {file}; the explanation follows that file.",
        )
    return f"Where is {subject} defined?", f"{subject} is defined in {file}."


def _listing(first: str, total: int) -> list[str]:
    """The first few files of a result list of ``total``, ``first`` at its head."""
    return [first, *[f for f in OTHER_FILES if f != first]][: min(total, 4)]


def _discovery(case: Case, low: int, high: int) -> dict[str, Any]:
    return {"tool": "discovery", "factors": list(FACTORS[: case.count(_COUNT_2, low, high)])}


def _corroborated(case: Case) -> Built:
    """find, read and grep on the same symbol (seed 000's strongest profile), sometimes a
    second read of a related file: search and read converge."""
    symbol, file = case.pick(_SUBJECT, SYMBOLS)
    references = case.count(_COUNT, 3, 40)
    entries = [
        {"tool": "find", "query": symbol, "target": symbol, "match": "exact", "match_count": 1,
         "exact_match_count": 1, "sources": [file]},
        {"tool": "read", "query": file, "target": symbol, "outcome": "top_ranked",
         "sources": [file]},
        {"tool": "grep", "query": symbol, "target": symbol, "match": "identifier",
         "match_count": references, "exact_match_count": references,
         "sources": _listing(file, references)},
    ]  # fmt: skip
    if case.chance(_OPTION, 0.5):
        related = case.pick(_TARGET, OTHER_FILES)
        entries.append(
            {"tool": "read", "query": related, "target": symbol, "outcome": "ranked",
             "sources": [related]}
        )  # fmt: skip
    return Built(*_question(case, symbol, file), entries=entries)


def _corroborated_with_discovery(case: Case) -> Built:
    """The corroborated investigation plus a discovery scan that mapped most of the project,
    which explaining needs (seed 001: explain wants discovery at moderate)."""
    built = _corroborated(case)
    return Built(built.input, built.output, [_discovery(case, 3, 4), *built.entries])


def _find_read(case: Case) -> Built:
    """find and read only (seed 000's adequate profile): located and read, never
    cross-checked by a second search."""
    symbol, file = case.pick(_SUBJECT, SYMBOLS)
    entries = [
        {"tool": "find", "query": symbol, "target": symbol, "match": "exact", "match_count": 1,
         "exact_match_count": 1, "sources": [file]},
        {"tool": "read", "query": file, "target": symbol,
         "outcome": case.pick(_OPTION, ("ranked", "top_ranked")), "sources": [file]},
    ]  # fmt: skip
    return Built(*_question(case, symbol, file), entries=entries)


def _tokenised_grep(case: Case) -> Built:
    """A multi-word grep matched word by word, then a read of the first file listed: the
    class is marked, but nothing in it is about the phrase (seed 001, Part III)."""
    phrase, first = case.pick(_SUBJECT, PHRASES)
    matches = case.count(_COUNT, 11, 80)
    entries = [
        {"tool": "grep", "query": phrase, "target": phrase, "match": "token",
         "match_count": matches, "sources": _listing(first, matches)},
        {"tool": "read", "query": first, "target": first, "outcome": "first_listed",
         "sources": [first]},
    ]  # fmt: skip
    return Built(*_question(case, phrase, first), entries=entries)


def _broad_find(case: Case) -> Built:
    """A find that matched part of a file name ("startup model selection" returns
    startup.cpp), with many results, and a read of the first."""
    phrase, first = case.pick(_SUBJECT, PHRASES)
    matches = case.count(_COUNT, 6, 40)
    entries = [
        {"tool": "find", "query": phrase, "target": phrase,
         "match": case.pick(_OPTION, ("substring", "token")), "match_count": matches,
         "sources": _listing(first, matches)},
        {"tool": "read", "query": first, "target": first, "outcome": "first_listed",
         "sources": [first]},
    ]  # fmt: skip
    return Built(*_question(case, phrase, first), entries=entries)


def _nonexistent_identifier(case: Case) -> Built:
    """A name that exists nowhere, tokenised into words that do ("class"), and a read of an
    unrelated file: the answer names a place for something that is not there."""
    name, first = case.pick(_SUBJECT, NONEXISTENT)
    matches = case.count(_COUNT, 20, 200)
    entries = [
        {"tool": "grep", "query": name, "target": name, "match": "token", "match_count": matches,
         "sources": _listing(first, matches)},
        {"tool": "read", "query": first, "target": first, "outcome": "first_listed",
         "sources": [first]},
    ]  # fmt: skip
    return Built(*_question(case, name, first), entries=entries)


def _discovery_only(case: Case) -> Built:
    """Only a discovery scan, which always returns something: context, not evidence of the
    answer (seed 000: weak)."""
    symbol, file = case.pick(_SUBJECT, SYMBOLS)
    return Built(*_question(case, symbol, file), entries=[_discovery(case, 1, 2)])


# --------------------------------------------------------------------------- CI
TARGETS = ("gatehouse_core", "scoring_tests", "queue_worker", "webhook_client")
WORKFLOWS = ("ci.yml", "nightly.yml", "release.yml")


def _build_test(case: Case, build: str, test: str) -> tuple[list[dict[str, Any]], str, int]:
    target = case.pick(_SUBJECT, TARGETS)
    entries = [
        {"tool": "cmake", "query": f"--build . --target {target}", "target": target,
         "outcome": build},
        {"tool": "ctest", "query": f"-R {target}", "target": target, "outcome": test},
    ]  # fmt: skip
    return entries, target, case.count(_COUNT, 12, 240)


def _build_test_passed(case: Case) -> Built:
    """The target built and all its tests passed (seed 000: full verification)."""
    entries, target, tests = _build_test(case, "built_target", "all_passed")
    question = f"Does {target} build and pass its tests?"
    return Built(question, f"{target} builds and all {tests} tests pass.", entries)


def _build_test_failed(case: Case) -> Built:
    """The target built but tests failed (seed 000: a strong negative signal)."""
    entries, target, tests = _build_test(case, "built_target", "failed")
    failed = case.count(_COUNT_2, 1, 5)
    question = f"Does {target} build and pass its tests?"
    return Built(question, f"{target} builds; {failed} of {tests} tests fail.", entries)


def _noop_build(case: Case) -> Built:
    """cmake had nothing to build and ctest ran no tests, yet the answer says all is well
    (seed 001: a no-op build and 0 tests run are weak)."""
    entries, target, _ = _build_test(case, "no_op", "none_run")
    question = f"Does {target} build and pass its tests?"
    return Built(question, f"{target} builds and its tests pass.", entries)


def _commit(case: Case) -> str:
    return f"{int(case.draws[_COUNT_2] * 16**7):07x}"


def _git_log_matching(case: Case) -> Built:
    """git log with commits matching the question: git is authoritative for history."""
    symbol, file = case.pick(_SUBJECT, SYMBOLS)
    entries = [
        {"tool": "git", "query": f"log --oneline -10 -- {file}", "target": symbol,
         "outcome": "log_matching", "match_count": case.count(_COUNT, 1, 10),
         "sources": [file]},
    ]  # fmt: skip
    question = f"What was the last change to {symbol}?"
    return Built(question, f"The last commit touching {symbol} is {_commit(case)}.", entries)


def _git_status_only(case: Case) -> Built:
    """git status for a history question: branch and dirty state, no commits."""
    symbol, _ = case.pick(_SUBJECT, SYMBOLS)
    entries = [{"tool": "git", "query": "status", "target": symbol, "outcome": "status"}]
    question = f"What was the last change to {symbol}?"
    return Built(question, f"The last commit touching {symbol} is {_commit(case)}.", entries)


def _gh_run_log(case: Case) -> Built:
    """The failing workflow's runs and its log, and the failing test found and read: gh is
    authoritative for CI, and the code side is corroborated."""
    workflow, target = case.pick(_SUBJECT, WORKFLOWS), case.pick(_TARGET, TARGETS)
    test_file = f"tests/{target}_test.cpp"
    entries = [
        {"tool": "gh", "query": f"run list --workflow {workflow}", "target": workflow,
         "outcome": "matching_workflow", "match_count": case.count(_COUNT, 1, 20)},
        {"tool": "gh", "query": "run view --log-failed", "target": workflow,
         "outcome": "run_log"},
        {"tool": "find", "query": test_file, "target": target, "match": "exact",
         "match_count": 1, "exact_match_count": 1, "sources": [test_file]},
        {"tool": "read", "query": test_file, "target": target, "outcome": "top_ranked",
         "sources": [test_file]},
    ]  # fmt: skip
    question = f"Why did the last {workflow} run fail?"
    return Built(question, f"The {workflow} run failed in {target}'s tests.", entries)


def _gh_empty(case: Case) -> Built:
    """gh answered "[]": no runs at all, yet the answer diagnoses a failure."""
    workflow, target = case.pick(_SUBJECT, WORKFLOWS), case.pick(_TARGET, TARGETS)
    entries = [
        {"tool": "gh", "query": f"run list --workflow {workflow}", "target": workflow,
         "outcome": "empty"},
    ]  # fmt: skip
    question = f"Why did the last {workflow} run fail?"
    return Built(question, f"The {workflow} run failed in {target}'s tests.", entries)


# --------------------------------------------------------------------------- claims
# Each claim, with the document a check finds it in.
CLAIMS = (
    ("the staging database runs PostgreSQL 16", "docs/infrastructure.md"),
    ("the public API allows 600 requests a minute", "docs/api/limits.md"),
    ("release 4.2 drops support for Python 3.10", "CHANGELOG.md"),
    ("the nightly job retries failed uploads twice", "ops/nightly.yaml"),
    ("invoices are kept for seven years", "docs/billing/retention.md"),
)
SOURCE_TYPES = ("extraction", "agent_assertion", "user_input", "documentation", "web")
# Seed 004's default half-life of each tier once a claim is past its staleness.
HALF_LIVES = {
    "ephemeral": timedelta(hours=4),
    "task": timedelta(days=3),
    "project": timedelta(weeks=4),
    "persistent": timedelta(days=182),
}


def _moment(at: datetime) -> str:
    return at.replace(microsecond=0).isoformat()


def _sources(case: Case, count: int, *, diverse: bool, low: float) -> list[dict[str, Any]]:
    first = int(case.draws[_TARGET] * len(SOURCE_TYPES))
    return [
        {
            "source_type": SOURCE_TYPES[(first + (i if diverse else 0)) % len(SOURCE_TYPES)],
            "confidence": case.amount(_CONFIDENCES[i], low, 0.95),
        }
        for i in range(count)
    ]


def _claim(
    case: Case,
    *,
    sources: list[dict[str, Any]],
    half_lives: tuple[float, float],
    related: str | None = None,
) -> dict[str, Any]:
    """Provenance whose staleness lies ``half_lives`` (a range, negative = already past)
    of its tier's half-life from the output's arrival."""
    tier = case.pick(_TIER, tuple(HALF_LIVES))
    offset = HALF_LIVES[tier] * case.amount(_AGE, *half_lives)
    provenance: dict[str, Any] = {
        "sources": sources,
        "tier": tier,
        "staleness_at": _moment(case.at + offset),
    }
    if related:
        provenance[related] = [
            {
                "sources": [
                    {
                        "source_type": ("documentation", "web")[i],
                        "confidence": case.amount(_RELATED_CONFIDENCES[i], 0.6, 0.9),
                    }
                ],
                "tier": tier,
                "staleness_at": _moment(case.at + HALF_LIVES[tier]),
                "strength": case.amount(
                    _STRENGTHS[i], 0.6 if related == "contradicting" else 0.4, 1.0
                ),
            }
            for i in range(case.count(_RELATED, 1, 2))
        ]
    return provenance


def _claim_check(case: Case, provenance: dict[str, Any], *, grep: bool = True) -> Built:
    """A claim located in its document: a grep for it and a read of the document. The
    evidence looks the same whatever the provenance says; only the provenance tells a
    stale or contradicted claim apart."""
    claim, document = case.pick(_SUBJECT, CLAIMS)
    entries = [
        {"tool": "read", "query": document, "target": claim,
         "outcome": "top_ranked" if grep else "ranked", "sources": [document]},
    ]  # fmt: skip
    if grep:
        hits = case.count(_COUNT, 1, 4)
        entries.insert(
            0,
            {"tool": "grep", "query": claim, "target": claim, "match": "exact",
             "match_count": hits, "exact_match_count": hits, "sources": [document]},
        )  # fmt: skip
    return Built(f"Check the claim: {claim}.", f"The claim holds: {claim}.", entries, provenance)


def _fresh_diverse(case: Case) -> Built:
    """Three sources of three types, fresh, often supported by a related claim: seed 004's
    narrow, high interval."""
    sources = _sources(case, 3, diverse=True, low=0.7)
    related = "supporting" if case.chance(_OPTION, 0.6) else None
    return _claim_check(case, _claim(case, sources=sources, half_lives=(0.5, 3.0), related=related))


def _single_source(case: Case) -> Built:
    """One fresh source, uncontradicted: thin evidence, a wide interval."""
    sources = _sources(case, 1, diverse=False, low=0.6)
    return _claim_check(case, _claim(case, sources=sources, half_lives=(0.5, 3.0)), grep=False)


def _stale_source(case: Case) -> Built:
    """One source, up to a half-life and a half past its staleness: decayed by about half."""
    sources = _sources(case, 1, diverse=False, low=0.6)
    return _claim_check(case, _claim(case, sources=sources, half_lives=(-1.5, -0.5)))


def _long_stale_source(case: Case) -> Built:
    """One source, three to six half-lives past its staleness: little confidence is left."""
    sources = _sources(case, 1, diverse=False, low=0.6)
    return _claim_check(case, _claim(case, sources=sources, half_lives=(-6.0, -3.0)))


def _contradicted(case: Case) -> Built:
    """Fresh sources, but one or two related claims contradict it."""
    sources = _sources(case, case.count(_COUNT_2, 1, 2), diverse=True, low=0.6)
    provenance = _claim(case, sources=sources, half_lives=(0.5, 3.0), related="contradicting")
    return _claim_check(case, provenance)


# --------------------------------------------------------------------------- patterns
# P(good), P(needs_edit), P(bad) per pattern. Strong evidence is mostly right; weak
# evidence (seed 001's failing benchmarks, seed 000's weak band) mostly is not.
CORROBORATED = Pattern("corroborated", (0.88, 0.08, 0.04), _corroborated, recovery_rate=0.05)
CORROBORATED_WITH_DISCOVERY = Pattern(
    "corroborated_with_discovery", (0.88, 0.08, 0.04), _corroborated_with_discovery,
    recovery_rate=0.05,
)  # fmt: skip
FIND_READ = Pattern("find_read", (0.68, 0.20, 0.12), _find_read, recovery_rate=0.15)
TOKENISED_GREP = Pattern("tokenised_grep", (0.25, 0.25, 0.50), _tokenised_grep, recovery_rate=0.4)
BROAD_FIND = Pattern("broad_find", (0.30, 0.30, 0.40), _broad_find, recovery_rate=0.4)
NONEXISTENT_IDENTIFIER = Pattern(
    "nonexistent_identifier", (0.05, 0.10, 0.85), _nonexistent_identifier, recovery_rate=0.4
)
DISCOVERY_ONLY = Pattern("discovery_only", (0.15, 0.35, 0.50), _discovery_only)

BUILD_TEST_PASSED = Pattern(
    "build_test_passed", (0.88, 0.08, 0.04), _build_test_passed, intent="execute"
)
BUILD_TEST_FAILED = Pattern(
    "build_test_failed", (0.30, 0.30, 0.40), _build_test_failed, intent="execute"
)
NOOP_BUILD = Pattern("noop_build", (0.35, 0.25, 0.40), _noop_build, intent="execute")
GIT_LOG_MATCHING = Pattern(
    "git_log_matching", (0.86, 0.09, 0.05), _git_log_matching, intent="status"
)
GIT_STATUS_ONLY = Pattern("git_status_only", (0.30, 0.30, 0.40), _git_status_only, intent="status")
GH_RUN_LOG = Pattern("gh_run_log", (0.85, 0.10, 0.05), _gh_run_log, intent="diagnose")
GH_EMPTY = Pattern("gh_empty", (0.15, 0.25, 0.60), _gh_empty, intent="diagnose")

FRESH_DIVERSE = Pattern("fresh_diverse", (0.88, 0.08, 0.04), _fresh_diverse)
SINGLE_SOURCE = Pattern("single_source", (0.60, 0.22, 0.18), _single_source)
STALE_SOURCE = Pattern("stale_source", (0.40, 0.25, 0.35), _stale_source)
LONG_STALE_SOURCE = Pattern("long_stale_source", (0.15, 0.25, 0.60), _long_stale_source)
CONTRADICTED = Pattern("contradicted", (0.20, 0.25, 0.55), _contradicted)

CODE_LOCATE = AgentProfile(
    "locate",
    (
        (CORROBORATED, 0.40),
        (FIND_READ, 0.22),
        (TOKENISED_GREP, 0.16),
        (BROAD_FIND, 0.14),
        (NONEXISTENT_IDENTIFIER, 0.08),
    ),
)
CODE_EXPLAIN = AgentProfile(
    "explain",
    (
        (CORROBORATED_WITH_DISCOVERY, 0.38),
        (FIND_READ, 0.22),
        (TOKENISED_GREP, 0.15),
        (BROAD_FIND, 0.13),
        (DISCOVERY_ONLY, 0.12),
    ),
)
# A status question answered from git, a build-and-test question (seed 001's execute
# intent, whose requirements are the build and the tests), or a failed run diagnosed.
CI_STATUS = AgentProfile(
    "status",
    (
        (BUILD_TEST_PASSED, 0.22),
        (BUILD_TEST_FAILED, 0.12),
        (NOOP_BUILD, 0.10),
        (GIT_LOG_MATCHING, 0.20),
        (GIT_STATUS_ONLY, 0.08),
        (GH_RUN_LOG, 0.18),
        (GH_EMPTY, 0.10),
    ),
)
# A claim is checked by locating it in its document, so its evidence has the locate intent.
CLAIM_CHECK = AgentProfile(
    "locate",
    (
        (FRESH_DIVERSE, 0.35),
        (SINGLE_SOURCE, 0.20),
        (STALE_SOURCE, 0.17),
        (LONG_STALE_SOURCE, 0.10),
        (CONTRADICTED, 0.18),
    ),
)
