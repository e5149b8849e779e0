"""Evidence quality: did the agent's tools find the right thing, precisely enough?

Implements the evidence quality audit of seed ``001_413250fa9c4f2d2f.txt``: each tool call
is rated in quality (None, Weak, Moderate, Strong, Verified) and strength (None, Low, Medium,
High); the intent says which evidence classes are required; the confidence level is the
lowest quality among them. Levels are names, not measurements: the score is the midpoint of
the level's band, and the level itself decides (Complete or High approve, Medium warns, Low
or None hold for review). docs/scoring.md ("evidence_quality") explains every rule and choice.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import IntEnum, StrEnum

from gating.scorers.base import Rating, Scored, ScorerInput
from gating.scoring import Decision, Impact
from gating.submissions import (
    SEARCH_TOOLS,
    DiscoveryFactor,
    EvidenceEntryIn,
    Intent,
    Match,
    Outcome,
    Tool,
)


class Quality(IntEnum):
    """How precisely evidence matches the question (seed 001, "Vocabulary")."""

    NONE = 0
    WEAK = 1
    MODERATE = 2
    STRONG = 3
    VERIFIED = 4


class Strength(IntEnum):
    """How much supporting data was collected; it never changes the level."""

    NONE = 0
    LOW = 1
    MEDIUM = 2
    HIGH = 3


class Level(IntEnum):
    """The confidence derived from the required classes' qualities."""

    NONE = 0
    LOW = 1
    MEDIUM = 2
    HIGH = 3
    COMPLETE = 4


# Names as shown to reviewers ("Moderate") and, lower-cased, as stored. Looked up rather
# than read from ``.name``: an enum member's name is a descriptor, slow on the hot path.
QUALITY_LABELS = {quality: quality.name.title() for quality in Quality}
STRENGTH_LABELS = {strength: strength.name.title() for strength in Strength}
LEVEL_LABELS = {level: level.name.title() for level in Level}


class EvidenceClass(StrEnum):
    FILE_SEARCH = "FileSearch"
    FILE_CONTENT = "FileContent"
    GIT_LOG = "GitLog"
    BUILD = "Build"
    TEST = "Test"
    DISCOVERY = "Discovery"
    CI_WORKFLOW = "CIWorkflow"


CLASS_OF_TOOL: dict[Tool, EvidenceClass] = {
    Tool.FIND: EvidenceClass.FILE_SEARCH,
    Tool.GREP: EvidenceClass.FILE_SEARCH,
    Tool.REFERENCES: EvidenceClass.FILE_SEARCH,
    Tool.READ: EvidenceClass.FILE_CONTENT,
    Tool.GIT: EvidenceClass.GIT_LOG,
    Tool.CMAKE: EvidenceClass.BUILD,
    Tool.CTEST: EvidenceClass.TEST,
    Tool.DISCOVERY: EvidenceClass.DISCOVERY,
    Tool.GH: EvidenceClass.CI_WORKFLOW,
}

_TOOLS_OF_CLASS: dict[EvidenceClass, str] = {
    EvidenceClass.FILE_SEARCH: "find, grep or references",
    EvidenceClass.FILE_CONTENT: "read",
    EvidenceClass.GIT_LOG: "git",
    EvidenceClass.BUILD: "cmake",
    EvidenceClass.TEST: "ctest",
    EvidenceClass.DISCOVERY: "discovery",
    EvidenceClass.CI_WORKFLOW: "gh",
}

_FS = EvidenceClass.FILE_SEARCH
_FC = EvidenceClass.FILE_CONTENT
_DISC = EvidenceClass.DISCOVERY

# Seed 001, "Completion Depends on Minimum Quality": the classes each intent needs and the
# least quality that satisfies each. Chat needs nothing.
REQUIREMENTS: dict[Intent, dict[EvidenceClass, Quality]] = {
    Intent.LOCATE: {_FS: Quality.STRONG, _FC: Quality.MODERATE},
    Intent.NAVIGATE: {_FS: Quality.STRONG, _FC: Quality.MODERATE},
    Intent.EXPLAIN: {_FS: Quality.STRONG, _FC: Quality.MODERATE, _DISC: Quality.MODERATE},
    Intent.REVIEW: {_FS: Quality.STRONG, _FC: Quality.MODERATE, _DISC: Quality.MODERATE},
    Intent.DIAGNOSE: {
        _FS: Quality.STRONG,
        _FC: Quality.MODERATE,
        EvidenceClass.CI_WORKFLOW: Quality.STRONG,
    },
    Intent.COMPARE: {_FS: Quality.STRONG, _FC: Quality.MODERATE},
    Intent.STATUS: {EvidenceClass.GIT_LOG: Quality.MODERATE},
    Intent.EXECUTE: {EvidenceClass.BUILD: Quality.STRONG, EvidenceClass.TEST: Quality.STRONG},
    Intent.MODIFY: {
        _FS: Quality.STRONG,
        _FC: Quality.STRONG,
        _DISC: Quality.MODERATE,
        EvidenceClass.BUILD: Quality.VERIFIED,
        EvidenceClass.TEST: Quality.VERIFIED,
    },
    Intent.CHAT: {},
}

# Git is authoritative for commit history (seed 001, "The Verified Level"), and of the
# intents only Status asks about history.
HISTORY_INTENTS = frozenset({Intent.STATUS})

# Seed 001's grep heuristic: a substring match is Moderate up to 10 results, Weak beyond.
SUBSTRING_MODERATE_MAX_RESULTS = 10
# Seed 001: a symbol with more than 5 references is Strong.
REFERENCES_STRONG_OVER = 5
STRENGTH_HIGH_OVER = 50
STRENGTH_MEDIUM_OVER = 10

LEVEL_OF_FLOOR: dict[Quality, Level] = {
    Quality.NONE: Level.NONE,
    Quality.WEAK: Level.LOW,
    Quality.MODERATE: Level.MEDIUM,
    Quality.STRONG: Level.HIGH,
    Quality.VERIFIED: Level.COMPLETE,
}

# Each level's band on 0-10, lined up with the default thresholds 4 and 7; the score shown
# is the band's midpoint, a label for the level rather than a measurement.
LEVEL_BANDS: dict[Level, tuple[float, float]] = {
    Level.NONE: (0.0, 2.0),
    Level.LOW: (2.0, 4.0),
    Level.MEDIUM: (4.0, 7.0),
    Level.HIGH: (7.0, 9.0),
    Level.COMPLETE: (9.0, 10.0),
}
LEVEL_SCORES: dict[Level, float] = {
    level: (low + high) / 2 for level, (low, high) in LEVEL_BANDS.items()
}
LEVEL_DECISIONS: dict[Level, Decision] = {
    Level.NONE: Decision.PENDING_REVIEW,
    Level.LOW: Decision.PENDING_REVIEW,
    Level.MEDIUM: Decision.WARNING,
    Level.HIGH: Decision.APPROVED,
    Level.COMPLETE: Decision.APPROVED,
}

_FULL_DISCOVERY = frozenset(
    {DiscoveryFactor.PROJECT_TYPE, DiscoveryFactor.SOURCE_COUNT, DiscoveryFactor.TEST_PRESENCE}
)
# Seed 001's rules for grep and find rate a match alike. For find, "identifier" means the
# symbol is the whole file name, as precise as an exact name.
_MATCH_QUALITY: dict[Match, Quality] = {
    Match.EXACT: Quality.STRONG,
    Match.IDENTIFIER: Quality.STRONG,
    Match.SUBSTRING: Quality.MODERATE,
    Match.TOKEN: Quality.WEAK,
    Match.NONE: Quality.NONE,
}
_MATCH_WORDS: dict[Match, str] = {
    Match.EXACT: "exactly",
    Match.IDENTIFIER: "as an identifier",
    Match.SUBSTRING: "as a substring",
    Match.TOKEN: "token by token",
}
_OUTCOME_QUALITY: dict[Tool, dict[Outcome, tuple[Quality, str]]] = {
    Tool.READ: {
        Outcome.FIRST_LISTED: (Quality.WEAK, "read the first listed file"),
        Outcome.RANKED: (Quality.MODERATE, "read a ranked candidate"),
        Outcome.TOP_RANKED: (Quality.STRONG, "read the top-ranked candidate"),
    },
    Tool.GIT: {
        Outcome.STATUS: (Quality.WEAK, "git status only, no history"),
        Outcome.LOG: (Quality.MODERATE, "git log without the query's terms"),
        Outcome.LOG_MATCHING: (Quality.STRONG, "git log with matching commits"),
    },
    # A failed build or test run shows the step was tried, not that it works: Weak.
    Tool.CMAKE: {
        Outcome.FAILED: (Quality.WEAK, "the build failed"),
        Outcome.NO_OP: (Quality.WEAK, "cmake had nothing to build"),
        Outcome.BUILT_OTHER: (Quality.MODERATE, "cmake built, but not the target"),
        Outcome.BUILT_TARGET: (Quality.STRONG, "cmake built the target"),
    },
    Tool.CTEST: {
        Outcome.FAILED: (Quality.WEAK, "tests failed"),
        Outcome.NONE_RUN: (Quality.WEAK, "ctest ran 0 tests"),
        Outcome.SOME_PASSED: (Quality.MODERATE, "ctest passed some of the relevant tests"),
        Outcome.ALL_PASSED: (Quality.STRONG, "ctest passed all relevant tests"),
    },
    # GitHub is authoritative for CI results: a run's log is Verified on its own.
    Tool.GH: {
        Outcome.EMPTY: (Quality.WEAK, 'gh returned an empty response "[]"'),
        Outcome.RUN_LIST: (Quality.MODERATE, "gh returned a run list"),
        Outcome.MATCHING_WORKFLOW: (Quality.STRONG, "gh returned runs of the matching workflow"),
        Outcome.RUN_LOG: (Quality.VERIFIED, "gh run log confirms the result"),
    },
}

_QUOTE_MAX_CHARS = 60


@dataclass(frozen=True, slots=True)
class EntryRating:
    """One tool call's quality and strength, and why."""

    entry: EvidenceEntryIn
    quality: Quality
    strength: Strength
    reason: str
    # What the call identified, normalised; two calls corroborate when these meet.
    targets: frozenset[str]


@dataclass(frozen=True, slots=True)
class ClassRating:
    """One evidence class's quality (its best call's, or Verified) and strength."""

    quality: Quality
    strength: Strength
    reason: str


def strength_of(match_count: int) -> Strength:
    """Seed 001's grep rule, applied to every tool's count: >50 High, >10 Medium, >0 Low."""
    if match_count > STRENGTH_HIGH_OVER:
        return Strength.HIGH
    if match_count > STRENGTH_MEDIUM_OVER:
        return Strength.MEDIUM
    if match_count > 0:
        return Strength.LOW
    return Strength.NONE


def normalised_target(text: str) -> str:
    """A target as compared for corroboration: trimmed, without a leading "./"."""
    text = text.strip()
    while text.startswith("./"):
        text = text[2:]
    return text


def identified_targets(entry: EvidenceEntryIn) -> frozenset[str]:
    """The target, and the single source of a call that examined exactly one.

    A find for "ExecutionEngine" that returned only src/execution_engine.cpp identified that
    file; one that returned several identified none of them in particular.
    """
    found = {normalised_target(entry.target)}
    if len(entry.sources) == 1:
        found.add(normalised_target(entry.sources[0]))
    found.discard("")
    return frozenset(found)


def _quoted(text: str) -> str:
    if len(text) > _QUOTE_MAX_CHARS:
        text = text[: _QUOTE_MAX_CHARS - 1] + "…"
    return f"'{text}'"


def _results(count: int) -> str:
    return "1 result" if count == 1 else f"{count} results"


def _search_quality(entry: EvidenceEntryIn) -> tuple[Quality, str]:
    tool, match, count = entry.tool, entry.match, entry.match_count
    asked = _quoted(entry.query or entry.target)
    if match is Match.NONE:
        return Quality.NONE, f"{tool} found no match for {asked}"
    if tool is Tool.REFERENCES:
        found = f"references found {count} {'reference' if count == 1 else 'references'} to {asked}"
        if count > REFERENCES_STRONG_OVER:
            return Quality.STRONG, found
        if count > 0:
            return Quality.MODERATE, found
        return Quality.NONE, f"references found no reference to {asked}"
    if match is None:
        # A search that does not say how it matched is the binary evidence the seed
        # replaces: output exists, its precision is unknown.
        if count > 0:
            return (
                Quality.WEAK,
                f"{tool} returned {_results(count)} for {asked}, match kind unknown",
            )
        return Quality.NONE, f"{tool} returned nothing for {asked}"
    quality = _MATCH_QUALITY[match]
    if tool is Tool.GREP and match is Match.SUBSTRING and count > SUBSTRING_MODERATE_MAX_RESULTS:
        quality = Quality.WEAK
    how = _MATCH_WORDS[match]
    if tool is Tool.FIND and match is Match.SUBSTRING:
        how = "as part of a file name"
    return quality, f"{tool} matched {asked} {how}, {_results(count)}"


def _discovery_quality(entry: EvidenceEntryIn) -> tuple[Quality, str]:
    factors = set(entry.factors)
    found = ", ".join(sorted(factors)) or "no factors"
    if factors >= _FULL_DISCOVERY:
        return Quality.STRONG, f"discovery established {found}"
    if DiscoveryFactor.PROJECT_TYPE in factors:
        return Quality.MODERATE, f"discovery established {found}"
    return Quality.WEAK, f"discovery returned {found}, not the project type"


def entry_quality(entry: EvidenceEntryIn) -> tuple[Quality, str]:
    """One call's quality by seed 001's per-tool rules (Part I and Part IV), and why.

    An errored call is no evidence (seed 000: errors neither add nor penalise). Only gh's
    run log reaches Verified here; every other Verified comes from ``class_ratings``.
    """
    if entry.error:
        return Quality.NONE, f"the {entry.tool} call errored"
    if entry.tool in SEARCH_TOOLS:
        return _search_quality(entry)
    if entry.tool is Tool.DISCOVERY:
        return _discovery_quality(entry)
    if entry.outcome is None:
        # As with a search that does not say how it matched: something came back, but
        # not what it established.
        return Quality.WEAK, f"{entry.tool} returned output without saying what it found"
    quality, reason = _OUTCOME_QUALITY[entry.tool][entry.outcome]
    subject = entry.target or (entry.sources[0] if entry.sources else "")
    if subject:
        reason = f"{reason}, {subject}"
    return quality, reason


def rate_entry(entry: EvidenceEntryIn) -> EntryRating:
    quality, reason = entry_quality(entry)
    strength = Strength.NONE if entry.error else strength_of(entry.match_count)
    return EntryRating(entry, quality, strength, reason, identified_targets(entry))


def since_last_failure(ratings: Sequence[EntryRating]) -> Sequence[EntryRating]:
    """A build's or test run's calls from the last failure on.

    A failure supersedes what passed before it (the code may have changed in between), and
    a later success supersedes the failure. Errored calls are not failures.
    """
    for index in range(len(ratings) - 1, -1, -1):
        entry = ratings[index].entry
        if entry.outcome is Outcome.FAILED and not entry.error:
            return ratings[index:]
    return ratings


def _best(ratings: Sequence[EntryRating]) -> EntryRating:
    # The first call at the highest quality explains the class (seed 001: "A single
    # strong match is enough"; many weak matches are still weak).
    return max(ratings, key=lambda rating: rating.quality)


def _file_corroboration(
    searches: Sequence[EntryRating], reads: Sequence[EntryRating]
) -> tuple[EntryRating, EntryRating, str] | None:
    # Seed 001: search and read are independent producers; two search tools share one
    # false-positive signal, so find + grep never corroborate. Corroboration confirms
    # Strong evidence, it does not rescue weaker evidence.
    for search in searches:
        if search.quality < Quality.STRONG:
            continue
        for read in reads:
            if read.quality < Quality.STRONG:
                continue
            common = search.targets & read.targets
            if common:
                return search, read, min(common)
    return None


def _same_scan(ratings: Sequence[EntryRating]) -> EntryRating | None:
    # Two full scans of the same project that established the same factors. An empty
    # target means the project itself, so two scans with empty targets match.
    seen: set[tuple[str, frozenset[DiscoveryFactor]]] = set()
    for rating in ratings:
        if rating.quality < Quality.STRONG:
            continue
        key = (normalised_target(rating.entry.target), frozenset(rating.entry.factors))
        if key in seen:
            return rating
        seen.add(key)
    return None


def class_ratings(
    entries: Sequence[EvidenceEntryIn], intent: Intent
) -> dict[EvidenceClass, ClassRating]:
    """Each evidence class's quality and strength, with Verified derived (seed 001).

    A class takes its best call's quality and the highest strength among its calls.
    Verified then comes from corroboration or authority:
    - search and read at Strong that identify the same target: FileSearch and FileContent;
    - cmake built the target and ctest passed all relevant tests: Build and Test;
    - two full discovery scans with the same result: Discovery;
    - git log with matching commits for a history question: GitLog;
    - gh's run log (rated Verified by ``entry_quality``): CIWorkflow.
    """
    by_class: dict[EvidenceClass, list[EntryRating]] = {}
    for entry in entries:
        by_class.setdefault(CLASS_OF_TOOL[entry.tool], []).append(rate_entry(entry))
    for evidence_class in (EvidenceClass.BUILD, EvidenceClass.TEST):
        if evidence_class in by_class:
            by_class[evidence_class] = list(since_last_failure(by_class[evidence_class]))

    rated: dict[EvidenceClass, ClassRating] = {}
    for evidence_class, ratings in by_class.items():
        best = _best(ratings)
        strength = max(rating.strength for rating in ratings)
        rated[evidence_class] = ClassRating(best.quality, strength, best.reason)

    def verify(evidence_class: EvidenceClass, reason: str) -> None:
        current = rated[evidence_class]
        rated[evidence_class] = ClassRating(Quality.VERIFIED, current.strength, reason)

    agreed = _file_corroboration(by_class.get(_FS, ()), by_class.get(_FC, ()))
    if agreed is not None:
        search, read, target = agreed
        both = f"{search.entry.tool} and read agree on {target}"
        verify(_FS, f"{search.reason}; {both}")
        verify(_FC, f"{read.reason}; {both}")

    build, test = rated.get(EvidenceClass.BUILD), rated.get(EvidenceClass.TEST)
    if build and test and build.quality >= Quality.STRONG and test.quality >= Quality.STRONG:
        verify(EvidenceClass.BUILD, f"{build.reason}, and {test.reason}")
        verify(EvidenceClass.TEST, f"{test.reason}, and {build.reason}")

    repeated = _same_scan(by_class.get(_DISC, ()))
    if repeated is not None:
        verify(_DISC, f"{repeated.reason}, the same in two scans")

    git = rated.get(EvidenceClass.GIT_LOG)
    if intent in HISTORY_INTENTS and git is not None and git.quality is Quality.STRONG:
        verify(EvidenceClass.GIT_LOG, f"{git.reason}; Git is authoritative for history")
    return rated


def requirements_for(intent: Intent) -> dict[EvidenceClass, Quality]:
    """Seed 001's table: the classes an intent needs, each with its least quality."""
    return REQUIREMENTS[intent]


def confidence_level(
    requirements: Mapping[EvidenceClass, Quality], qualities: Mapping[EvidenceClass, Quality]
) -> Level:
    """Seed 001's derivation: the level follows the lowest quality among required classes.

    All Verified → Complete; all Strong or better → High; all Moderate or better → Medium;
    some Weak → Low; any None → None. With nothing required every rule holds vacuously,
    so the level is Complete (the seed's completion check passes at once).
    """
    floor = min(
        (qualities.get(evidence_class, Quality.NONE) for evidence_class in requirements),
        default=Quality.VERIFIED,
    )
    return LEVEL_OF_FLOOR[floor]


def unmet_requirements(
    requirements: Mapping[EvidenceClass, Quality], qualities: Mapping[EvidenceClass, Quality]
) -> dict[EvidenceClass, Quality]:
    """The evidence gap: required classes below their least quality, with that quality."""
    return {
        evidence_class: needed
        for evidence_class, needed in requirements.items()
        if qualities.get(evidence_class, Quality.NONE) < needed
    }


def _class_phrase(evidence_class: EvidenceClass, rating: ClassRating, level: Level) -> str:
    quality = rating.quality
    if quality is Quality.NONE:
        state = "is None"
    elif level is Level.COMPLETE:
        state = "is Verified"
    elif level is Level.HIGH:
        state = "is Strong, not Verified"
    else:
        state = f"is only {QUALITY_LABELS[quality]}"
    return f"{evidence_class} {state} ({rating.reason})"


def _joined(parts: Sequence[str]) -> str:
    if len(parts) == 1:
        return parts[0]
    return ", ".join(parts[:-1]) + " and " + parts[-1]


def _missing(evidence_class: EvidenceClass) -> ClassRating:
    tools = _TOOLS_OF_CLASS[evidence_class]
    return ClassRating(Quality.NONE, Strength.NONE, f"no {tools} call was made")


def explain_level(
    intent: Intent,
    level: Level,
    requirements: Mapping[EvidenceClass, Quality],
    rated: Mapping[EvidenceClass, ClassRating],
) -> str:
    """Seed 001's explanation ("confidence is Medium because FileSearch is only Moderate
    (…)"), naming the classes at the lowest quality, then the gap against the intent."""
    name = intent.value.title()
    if not requirements:
        return f"Confidence is {LEVEL_LABELS[level]}: {name} requires no evidence."
    ratings = {c: rated.get(c) or _missing(c) for c in requirements}
    floor = min(rating.quality for rating in ratings.values())
    limiting = [_class_phrase(c, r, level) for c, r in ratings.items() if r.quality is floor]
    because = f"Confidence is {LEVEL_LABELS[level]} because {_joined(limiting)}."
    gap = unmet_requirements(requirements, {c: r.quality for c, r in ratings.items()})
    if gap:
        needs = _joined([f"{c} at {QUALITY_LABELS[q]}" for c, q in gap.items()])
        return f"{because} {name} needs {needs}."
    meets = _joined([f"{c} at {QUALITY_LABELS[q]}" for c, q in requirements.items()])
    return f"{because} {name}'s requirements are met ({meets})."


def _impact(evidence_class: EvidenceClass, rating: ClassRating, needed: Quality | None) -> Impact:
    if needed is None:
        requirement = "not required"
    elif rating.quality >= needed:
        requirement = f"required at {QUALITY_LABELS[needed]}: met"
    else:
        requirement = f"required at {QUALITY_LABELS[needed]}: not met"
    quality, strength = QUALITY_LABELS[rating.quality], STRENGTH_LABELS[rating.strength]
    detail = f"{quality}, strength {strength}: {rating.reason}; {requirement}"
    return Impact(str(evidence_class), 0.0, detail)


class EvidenceQualityScorer:
    """Seed 001's evidence quality audit as a gate scorer."""

    name = "evidence_quality"
    version = "1"
    description = (
        "Evidence quality (seed 001): each tool call's match quality, Verified by "
        "corroboration, against the intent's required classes; a named level, not a measurement"
    )

    def applies(self, output: ScorerInput) -> bool:
        # Without an intent the requirements are unknown. Chat requires nothing, so the
        # level would be Complete from no evidence at all: this scorer has nothing to say.
        evidence = output.evidence
        return evidence is not None and evidence.intent not in (None, Intent.CHAT)

    def rate(self, output: ScorerInput) -> Rating:
        evidence = output.evidence
        requirements = requirements_for(evidence.intent)
        rated = class_ratings(evidence.entries, evidence.intent)
        level = confidence_level(requirements, {c: r.quality for c, r in rated.items()})
        return Rating(LEVEL_SCORES[level], LEVEL_LABELS[level].lower())

    def score(self, output: ScorerInput) -> Scored:
        if not self.applies(output):
            raise ValueError("evidence_quality needs evidence with an intent other than chat")
        evidence = output.evidence
        intent = evidence.intent
        requirements = requirements_for(intent)
        rated = class_ratings(evidence.entries, intent)
        qualities = {c: rating.quality for c, rating in rated.items()}
        level = confidence_level(requirements, qualities)
        level_name = LEVEL_LABELS[level].lower()

        shown = list(requirements) + [
            c for c in EvidenceClass if c in rated and c not in requirements
        ]
        ratings = {c: rated.get(c) or _missing(c) for c in shown}
        return Scored(
            score=LEVEL_SCORES[level],
            summary=explain_level(intent, level, requirements, rated),
            explanation=tuple(_impact(c, r, requirements.get(c)) for c, r in ratings.items()),
            inputs={
                "intent": intent.value,
                "classes": {
                    str(c): {
                        "quality": QUALITY_LABELS[r.quality].lower(),
                        "strength": STRENGTH_LABELS[r.strength].lower(),
                    }
                    for c, r in ratings.items()
                },
                "requirements": {
                    str(c): QUALITY_LABELS[q].lower() for c, q in requirements.items()
                },
                "level": level_name,
            },
            level=level_name,
            decision=LEVEL_DECISIONS[level],
        )


SCORER = EvidenceQualityScorer()
