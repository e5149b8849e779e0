"""The evidence-category confidence model (seed ``000_8ea4cdfe6286bafa.txt``).

An agent's tool calls are grouped into six categories. Each category scores the best its
tools achieved (running read five times is worth one good read), the categories are
averaged with the seed's weights, and a bonus is added when independent categories point at
the same target. docs/scoring.md ("evidence_categories") gives the tables, the choices made
where the seed leaves the arithmetic open, and a worked example.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from gating.scorers.base import Rating, Scored, ScorerInput
from gating.scoring import Impact
from gating.submissions import SEARCH_TOOLS, EvidenceEntryIn, Outcome, Tool

SEARCH = "search"
READ = "read"
DISCOVERY = "discovery"
VERIFICATION = "verification"
GIT = "git"
CI = "ci"

CATEGORY_OF_TOOL: dict[Tool, str] = {
    Tool.FIND: SEARCH,
    Tool.GREP: SEARCH,
    Tool.REFERENCES: SEARCH,
    Tool.READ: READ,
    Tool.DISCOVERY: DISCOVERY,
    Tool.CMAKE: VERIFICATION,
    Tool.CTEST: VERIFICATION,
    Tool.GIT: GIT,
    Tool.GH: CI,
}

# The seed's raw weights, in the order explanations list the categories.
RAW_WEIGHTS: dict[str, float] = {
    READ: 3.0,
    SEARCH: 2.5,
    VERIFICATION: 1.5,
    DISCOVERY: 1.0,
    GIT: 1.0,
    CI: 1.0,
}

# Weights are normalised over the categories the agent used, but never over less than this.
# Discovery, git and ci weigh 1.0: alone, each counts for half its score. The seed calls
# discovery "context only, not evidence of the answer" and places "discovery only" in its
# weak band (0.25-0.54); without this floor 3 factors would score 0.70 there.
MIN_WEIGHT_TOTAL = 2.0

SEARCH_ONE_TOOL = 0.65
SEARCH_TWO_TOOLS_AGREE = 0.80
SEARCH_THREE_TOOLS_AGREE = 0.92

READ_UNCONFIRMED = 0.55
READ_CONFIRMED = 0.80
READ_BROAD_CONFIRMED = 0.88
BROAD_READ_FILES = 3

# Indexed by the number of discovery factors found (0 and 1 score alike in the seed).
DISCOVERY_BY_FACTORS = (0.20, 0.20, 0.50, 0.70, 0.85)

BUILD_FAILED = 0.15
TESTS_FAILED = 0.30
BUILD_PASSED = 0.80
BUILD_AND_TESTS_PASSED = 0.93
VERIFICATION_BY_OUTCOME: dict[tuple[Tool, Outcome | None], tuple[float, str]] = {
    (Tool.CMAKE, Outcome.FAILED): (BUILD_FAILED, "build failed"),
    # Nothing to build means the build tree is current: the code as it stands compiles.
    (Tool.CMAKE, Outcome.NO_OP): (BUILD_PASSED, "build passed"),
    (Tool.CMAKE, Outcome.BUILT_OTHER): (BUILD_PASSED, "build passed"),
    (Tool.CMAKE, Outcome.BUILT_TARGET): (BUILD_PASSED, "build passed"),
    (Tool.CTEST, Outcome.FAILED): (TESTS_FAILED, "tests failed"),
    # Tests that ran were built, so passing tests are a passing build; only all of the
    # relevant tests passing is the seed's full verification.
    (Tool.CTEST, Outcome.SOME_PASSED): (BUILD_PASSED, "build passed, some tests ran"),
    (Tool.CTEST, Outcome.ALL_PASSED): (BUILD_AND_TESTS_PASSED, "build and tests passed"),
}

GIT_FOUND = 0.75
GIT_HISTORY_OUTCOMES = frozenset({Outcome.LOG, Outcome.LOG_MATCHING})
CI_FOUND = 0.80
CI_OUTCOMES = frozenset({Outcome.RUN_LIST, Outcome.MATCHING_WORKFLOW, Outcome.RUN_LOG})

TWO_CATEGORIES_BONUS = 0.10
THREE_CATEGORIES_BONUS = 0.20
SEARCH_AND_READ_BONUS = 0.05

# The seed's bands of expected confidence, for the summary.
BANDS = ((0.75, "Strong evidence"), (0.55, "Adequate evidence"), (0.25, "Weak evidence"))
NO_BAND = "Insufficient evidence"

_QUOTES = "\"'`"

# Enum members bound once: looking a member up on its class costs more than the rest of an
# entry's scoring.
_READ = Tool.READ
_DISCOVERY = Tool.DISCOVERY
_GIT = Tool.GIT
_GH = Tool.GH


def _stem(text: str) -> str:
    """A file's name without directory or extension, or the text itself when it is a symbol,
    so that a read of ``src/MemoryManager.h`` and a grep for ``MemoryManager`` meet."""
    stem = text.strip().strip(_QUOTES).strip()
    stem = stem.rpartition("/")[2].rpartition("\\")[2]
    base, dot, suffix = stem.rpartition(".")
    if dot and base and len(suffix) <= 5 and suffix.isalnum() and suffix[0].isalpha():
        return base
    return stem


# File and symbol names recur across the outputs of one project, and the scorer runs on the
# ingest hot path.
@lru_cache(maxsize=8192)
def _term(text: str) -> str:
    return _stem(text).lower()


def _terms(entry: EvidenceEntryIn) -> tuple[str, ...]:
    target = _term(entry.target)
    query = _term(entry.query)
    if target == query or not query:
        return (target,) if target else ()
    return (target, query) if target else (query,)


@dataclass(frozen=True, slots=True)
class _Evaluation:
    # category -> (score, the seed's condition that gave it), only the categories used.
    categories: dict[str, tuple[float, str]]
    weight_total: float
    base: float
    converged_term: str
    converged_categories: tuple[str, ...]
    search_and_read: bool
    bonus: float
    result: float
    # Whether a recovery call brought in a category no other call used, the one way a
    # recovery call can lower the result (by adding a category below the average).
    recovery_added_category: bool


def _search_score(tools_by_term: dict[str, set[Tool]], searched: bool) -> tuple[float, str]:
    if not searched:
        return 0.0, "no results"
    most_tools = max((len(tools) for tools in tools_by_term.values()), default=1)
    if most_tools >= 3:
        return SEARCH_THREE_TOOLS_AGREE, "find, grep and references agree on one target"
    if most_tools == 2:
        return SEARCH_TWO_TOOLS_AGREE, "two search tools agree on one target"
    return SEARCH_ONE_TOOL, "results, unconfirmed by a second search tool"


def _read_score(
    terms_by_file: dict[str, set[str]], searched_terms: dict[str, set[Tool]], searched: bool
) -> tuple[float, str]:
    if not searched:
        return READ_UNCONFIRMED, "no search confirmation"
    related = sum(1 for terms in terms_by_file.values() if not terms.isdisjoint(searched_terms))
    if related >= BROAD_READ_FILES:
        return READ_BROAD_CONFIRMED, f"{related} files on searched targets, confirmed by search"
    return READ_CONFIRMED, "confirmed by search"


def _evaluate(entries: Sequence[EvidenceEntryIn], with_recovery: bool) -> _Evaluation:
    """Seed 000's category-weighted maximum with the convergence bonus."""
    used: set[str] = set()
    used_without_recovery: set[str] = set()
    searched = False
    search_tools_by_term: dict[str, set[Tool]] = {}
    read_terms_by_file: dict[str, set[str]] = {}
    most_factors = 0
    verification = (0.0, "no result")
    history = False
    ci_runs = False
    categories_by_term: dict[str, set[str]] = {}

    for entry in entries:
        # An errored call adds nothing and lowers nothing: the seed does not penalise effort.
        if entry.error or (entry.recovery and not with_recovery):
            continue
        tool = entry.tool
        category = CATEGORY_OF_TOOL[tool]
        outcome_score = 0.0
        # `confirms`: the call found something that corroborates its target. A failed build
        # or failed tests is a result (it scores) but confirms nothing.
        if tool in SEARCH_TOOLS:
            confirms = entry.match_count > 0
        elif tool is _READ:
            confirms = True
        elif tool is _DISCOVERY:
            confirms = bool(entry.factors)
        elif category == VERIFICATION:
            found = VERIFICATION_BY_OUTCOME.get((tool, entry.outcome))
            if found is not None:
                outcome_score = found[0]
                if outcome_score > verification[0]:
                    verification = found
            confirms = outcome_score >= BUILD_PASSED
        elif tool is _GIT:
            confirms = entry.match_count > 0 or entry.outcome in GIT_HISTORY_OUTCOMES
        else:
            confirms = entry.outcome in CI_OUTCOMES
        # A recovery call that finds nothing leaves the output as it was (seed: neutral).
        if entry.recovery and not confirms and outcome_score == 0.0:
            continue
        used.add(category)
        if not entry.recovery:
            used_without_recovery.add(category)
        if tool is _DISCOVERY:
            most_factors = max(most_factors, len(entry.factors))
        if not confirms:
            continue
        terms = _terms(entry)
        if tool in SEARCH_TOOLS:
            searched = True
            for term in terms:
                search_tools_by_term.setdefault(term, set()).add(tool)
        elif tool is _READ:
            file = (entry.query or entry.target).strip().lower()
            read_terms_by_file.setdefault(file, set()).update(terms)
        elif tool is _GIT:
            history = True
        elif tool is _GH:
            ci_runs = True
        for term in terms:
            categories_by_term.setdefault(term, set()).add(category)

    if not used:
        return _Evaluation({}, 0.0, 0.0, "", (), False, 0.0, 0.0, False)

    categories: dict[str, tuple[float, str]] = {}
    for category in RAW_WEIGHTS:
        if category not in used:
            continue
        if category == SEARCH:
            categories[SEARCH] = _search_score(search_tools_by_term, searched)
        elif category == READ:
            categories[READ] = _read_score(read_terms_by_file, search_tools_by_term, searched)
        elif category == DISCOVERY:
            categories[DISCOVERY] = (
                DISCOVERY_BY_FACTORS[most_factors],
                f"{most_factors} of 4 factors",
            )
        elif category == VERIFICATION:
            categories[VERIFICATION] = verification
        elif category == GIT:
            categories[GIT] = (GIT_FOUND, "history found") if history else (0.0, "no history")
        else:
            categories[CI] = (CI_FOUND, "CI runs found") if ci_runs else (0.0, "no CI data")

    weight_total = max(sum(RAW_WEIGHTS[c] for c in categories), MIN_WEIGHT_TOTAL)
    base = sum(RAW_WEIGHTS[c] * score for c, (score, _) in categories.items()) / weight_total

    converged_term = ""
    converged: set[str] = set()
    search_and_read = False
    for term, term_categories in categories_by_term.items():
        both = SEARCH in term_categories and READ in term_categories
        search_and_read = search_and_read or both
        if len(term_categories) > len(converged) or (
            len(term_categories) == len(converged) and both
        ):
            converged_term, converged = term, term_categories
    if len(converged) >= 3:
        bonus = THREE_CATEGORIES_BONUS
    elif len(converged) == 2:
        bonus = TWO_CATEGORIES_BONUS
    else:
        bonus = 0.0
        converged_term, converged = "", set()
    if search_and_read:
        bonus += SEARCH_AND_READ_BONUS
    # The bonus closes part of the distance to 1.0 rather than multiplying: a multiplicative
    # +15% lifts the seed's find+read+grep+read example from 0.80 to 0.92, outside the
    # seed's 0.78-0.88; closing 15% of the distance gives 0.83. It also keeps the result at
    # or below 1.0, the seed's cap.
    result = base + bonus * (1.0 - base)
    return _Evaluation(
        categories=categories,
        weight_total=weight_total,
        base=base,
        converged_term=converged_term,
        converged_categories=tuple(c for c in RAW_WEIGHTS if c in converged),
        search_and_read=search_and_read,
        bonus=bonus,
        result=result,
        recovery_added_category=not used <= used_without_recovery,
    )


def _display_term(entries: Iterable[EvidenceEntryIn], term: str) -> str:
    """The term as the agent first wrote it, for the summary."""
    for entry in entries:
        for text in (entry.target, entry.query):
            if text and _term(text) == term:
                return _stem(text)
    return term


def _joined(names: Sequence[str]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def _summary(evaluation: _Evaluation, term: str, errored: int, calls: int) -> str:
    result = evaluation.result
    band = next((name for floor, name in BANDS if result >= floor), NO_BAND)
    found = [c for c, (score, _) in evaluation.categories.items() if score > 0]
    if evaluation.converged_categories:
        reason = f"{_joined(evaluation.converged_categories)} agree on {term}"
    elif len(found) > 1:
        reason = f"{_joined(found)} found results, on no shared target"
    elif found:
        reason = f"only {found[0]} found results"
    elif evaluation.categories:
        reason = "every tool call came back empty"
    elif errored == calls:
        reason = "every tool call errored"
    else:
        reason = "every tool call errored or came back empty"
    return f"{band}: {reason} ({result:.2f})."


class EvidenceCategoriesScorer:
    name = "evidence_categories"
    version = "1"
    description = (
        "Seed 000: the agent's tool calls as six weighted evidence categories, each at its "
        "best tool, plus a bonus when categories agree on one target."
    )

    def applies(self, output: ScorerInput) -> bool:
        return output.evidence is not None and bool(output.evidence.entries)

    def rate(self, output: ScorerInput) -> Rating:
        return Rating(10.0 * _best_evaluation(output.evidence.entries)[0].result)

    def score(self, output: ScorerInput) -> Scored:
        assert output.evidence is not None
        entries = output.evidence.entries
        evaluation, recovery_left_out = _best_evaluation(entries)
        errored = sum(1 for entry in entries if entry.error)
        term = (
            _display_term(entries, evaluation.converged_term) if evaluation.converged_term else ""
        )
        return Scored(
            score=10.0 * evaluation.result,
            summary=_summary(evaluation, term, errored, len(entries)),
            explanation=_explanation(evaluation, term, errored, recovery_left_out),
            inputs=_inputs(evaluation, term, errored, recovery_left_out),
        )


def _best_evaluation(entries: Sequence[EvidenceEntryIn]) -> tuple[_Evaluation, bool]:
    """The evaluation that scores, and whether recovery calls were left out of it.

    Recovery never lowers the score: a recovery call can only raise its category, but one
    that adds a category scoring below the rest would pull the average down."""
    evaluation = _evaluate(entries, with_recovery=True)
    if evaluation.recovery_added_category:
        without = _evaluate(entries, with_recovery=False)
        if without.result > evaluation.result:
            return without, True
    return evaluation, False


def _explanation(
    evaluation: _Evaluation, term: str, errored: int, recovery_left_out: bool
) -> tuple[Impact, ...]:
    total = evaluation.weight_total
    impacts = [
        Impact(
            category,
            10.0 * RAW_WEIGHTS[category] * score / total,
            f"{category} {score:.2f} ({condition})"
            f" × weight {RAW_WEIGHTS[category]:.1f}/{total:.1f}",
        )
        for category, (score, condition) in evaluation.categories.items()
    ]
    if evaluation.bonus:
        impacts.append(
            Impact(
                "convergence",
                10.0 * evaluation.bonus * (1.0 - evaluation.base),
                f"{_joined(evaluation.converged_categories)} agree on {term}: "
                f"+{evaluation.bonus:.0%} of the distance to 1.0 "
                f"({evaluation.base:.2f} → {evaluation.result:.2f})",
            )
        )
    if recovery_left_out:
        impacts.append(
            Impact("recovery", 0.0, "recovery calls left out: they would have lowered the score")
        )
    if errored:
        calls = (
            "1 errored tool call counts" if errored == 1 else f"{errored} errored tool calls count"
        )
        impacts.append(Impact("errors", 0.0, f"{calls} for nothing"))
    return tuple(impacts)


def _inputs(evaluation: _Evaluation, term: str, errored: int, recovery_left_out: bool) -> dict:
    total = evaluation.weight_total
    return {
        "categories": {c: score for c, (score, _) in evaluation.categories.items()},
        "weights": {c: RAW_WEIGHTS[c] / total for c in evaluation.categories},
        "weight_total": total,
        "base": evaluation.base,
        "convergence": {
            "term": term,
            "categories": list(evaluation.converged_categories),
            "search_and_read": evaluation.search_and_read,
        },
        "bonus": evaluation.bonus,
        "result": evaluation.result,
        "recovery_left_out": recovery_left_out,
        "errored_entries": errored,
    }


SCORER = EvidenceCategoriesScorer()
