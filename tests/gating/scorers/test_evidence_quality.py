"""The evidence quality scorer (seed 001): per-tool quality, Verified, intents and levels.

Every expected level here is worked out from the seed's tables, not read off the code.
"""

import json
from datetime import UTC, datetime

import pytest

from gating.scorers.base import Scored, ScorerInput
from gating.scorers.evidence_quality import (
    SCORER,
    EvidenceClass,
    Level,
    Quality,
    Strength,
    class_ratings,
    confidence_level,
    entry_quality,
    requirements_for,
    since_last_failure,
    strength_of,
    unmet_requirements,
)
from gating.scoring import Decision, GatePolicy, PairHistory
from gating.submissions import EvidenceEntryIn, EvidenceIn, Intent

FS = EvidenceClass.FILE_SEARCH
FC = EvidenceClass.FILE_CONTENT


def _output(intent, *entries) -> ScorerInput:
    evidence = EvidenceIn.model_validate({"intent": intent, "entries": list(entries)})
    return ScorerInput(
        validators=(),
        input_clarity=0.5,
        coherence=0.5,
        requires_fact_check=False,
        pair=PairHistory(),
        policy=GatePolicy(),
        now=datetime(2026, 1, 1, tzinfo=UTC),
        evidence=evidence,
    )


def _scored(intent, *entries) -> Scored:
    return SCORER.score(_output(intent, *entries))


def _quality(entry: dict) -> Quality:
    return entry_quality(EvidenceEntryIn.model_validate(entry))[0]


def _classes(intent, *entries) -> dict[EvidenceClass, Quality]:
    evidence = EvidenceIn.model_validate({"intent": intent, "entries": list(entries)})
    return {c: r.quality for c, r in class_ratings(evidence.entries, evidence.intent).items()}


def _grep(query, match, count, target="", sources=()):
    return {
        "tool": "grep",
        "query": query,
        "target": target or query,
        "match": match,
        "match_count": count,
        "sources": list(sources),
    }


def _find(query, match, target="", sources=(), count=1):
    return {
        "tool": "find",
        "query": query,
        "target": target or query,
        "match": match,
        "match_count": count,
        "sources": list(sources),
    }


def _read(outcome, target, **extra):
    return {"tool": "read", "target": target, "outcome": outcome, **extra}


# --------------------------------------------------------------------------- the seed's examples


def test_evidence_gating_is_weak_but_high_strength():
    # Seed 001: "evidence gating" matched word by word in many files: Weak, High.
    evidence = EvidenceIn.model_validate(
        {"intent": "locate", "entries": [_grep("evidence gating", "token", 60)]}
    )
    rating = class_ratings(evidence.entries, Intent.LOCATE)[FS]
    assert (rating.quality, rating.strength) == (Quality.WEAK, Strength.HIGH)


def test_execution_engine_is_strong_with_medium_strength():
    # Seed 001: an exact symbol match in a moderate number of files: Strong, Medium.
    evidence = EvidenceIn.model_validate(
        {"intent": "locate", "entries": [_grep("ExecutionEngine", "identifier", 25)]}
    )
    rating = class_ratings(evidence.entries, Intent.LOCATE)[FS]
    assert (rating.quality, rating.strength) == (Quality.STRONG, Strength.MEDIUM)


# --------------------------------------------------------------------------- per-tool quality


@pytest.mark.parametrize(
    ("match", "count", "expected"),
    [
        ("exact", 3, Quality.STRONG),
        ("identifier", 80, Quality.STRONG),
        ("substring", 1, Quality.MODERATE),
        ("substring", 10, Quality.MODERATE),
        ("substring", 11, Quality.WEAK),
        ("token", 2, Quality.WEAK),
        ("none", 0, Quality.NONE),
    ],
)
def test_grep_quality(match, count, expected):
    assert _quality(_grep("evidence gating", match, count)) is expected


@pytest.mark.parametrize(
    ("count", "expected"),
    [
        (0, Strength.NONE),
        (1, Strength.LOW),
        (10, Strength.LOW),
        (11, Strength.MEDIUM),
        (50, Strength.MEDIUM),
        (51, Strength.HIGH),
    ],
)
def test_strength_from_match_count(count, expected):
    assert strength_of(count) is expected


def test_grep_that_does_not_say_how_it_matched_is_weak():
    assert _quality({"tool": "grep", "query": "x", "match_count": 3}) is Quality.WEAK
    assert _quality({"tool": "grep", "query": "x", "match_count": 0}) is Quality.NONE


@pytest.mark.parametrize(
    ("match", "expected"),
    [
        ("exact", Quality.STRONG),
        ("identifier", Quality.STRONG),
        ("substring", Quality.MODERATE),
        ("token", Quality.WEAK),
        ("none", Quality.NONE),
    ],
)
def test_find_quality(match, expected):
    assert _quality(_find("startup.cpp", match)) is expected


@pytest.mark.parametrize(
    ("count", "match", "expected"),
    [
        (6, "identifier", Quality.STRONG),
        (5, "identifier", Quality.MODERATE),
        (1, "identifier", Quality.MODERATE),
        (0, "identifier", Quality.NONE),
        (0, "none", Quality.NONE),
    ],
)
def test_references_quality(count, match, expected):
    entry = {"tool": "references", "query": "Engine", "match": match, "match_count": count}
    assert _quality(entry) is expected


@pytest.mark.parametrize(
    ("tool", "outcome", "expected"),
    [
        ("read", "first_listed", Quality.WEAK),
        ("read", "ranked", Quality.MODERATE),
        ("read", "top_ranked", Quality.STRONG),
        ("git", "status", Quality.WEAK),
        ("git", "log", Quality.MODERATE),
        ("git", "log_matching", Quality.STRONG),
        ("cmake", "failed", Quality.WEAK),
        ("cmake", "no_op", Quality.WEAK),
        ("cmake", "built_other", Quality.MODERATE),
        ("cmake", "built_target", Quality.STRONG),
        ("ctest", "failed", Quality.WEAK),
        ("ctest", "none_run", Quality.WEAK),
        ("ctest", "some_passed", Quality.MODERATE),
        ("ctest", "all_passed", Quality.STRONG),
        ("gh", "empty", Quality.WEAK),
        ("gh", "run_list", Quality.MODERATE),
        ("gh", "matching_workflow", Quality.STRONG),
        ("gh", "run_log", Quality.VERIFIED),
    ],
)
def test_outcome_quality(tool, outcome, expected):
    assert _quality({"tool": tool, "outcome": outcome}) is expected


def test_a_call_that_does_not_say_what_it_found_is_weak():
    assert _quality({"tool": "read", "target": "a.cpp"}) is Quality.WEAK
    assert _quality({"tool": "gh"}) is Quality.WEAK


@pytest.mark.parametrize(
    ("factors", "expected"),
    [
        ([], Quality.WEAK),
        (["source_count", "test_presence"], Quality.WEAK),
        (["project_type"], Quality.MODERATE),
        (["project_type", "source_count"], Quality.MODERATE),
        (["project_type", "source_count", "test_presence"], Quality.STRONG),
        (["project_type", "source_count", "test_presence", "build_system"], Quality.STRONG),
    ],
)
def test_discovery_quality(factors, expected):
    assert _quality({"tool": "discovery", "factors": factors}) is expected


def test_an_errored_call_is_no_evidence():
    errored = {**_grep("ExecutionEngine", "identifier", 25), "error": True}
    assert _quality(errored) is Quality.NONE
    assert _classes("locate", errored)[FS] is Quality.NONE


def test_a_recovery_call_counts_like_any_other():
    recovered = {**_find("startup.cpp", "exact"), "recovery": True}
    assert _classes("locate", _find("startup", "token"), recovered)[FS] is Quality.STRONG


def test_the_best_call_of_a_class_decides_it():
    classes = _classes(
        "locate",
        _grep("evidence gating", "token", 60),
        _grep("EvidenceGate", "identifier", 4),
        _grep("gating", "substring", 3),
    )
    assert classes[FS] is Quality.STRONG


def test_class_strength_is_the_most_any_call_collected():
    # Quality and strength are separate: the precise call decides the quality, the
    # broad one shows how much was found.
    evidence = EvidenceIn.model_validate(
        {
            "intent": "locate",
            "entries": [
                _grep("ExecutionEngine", "identifier", 3),
                _grep("evidence gating", "token", 60),
            ],
        }
    )
    rating = class_ratings(evidence.entries, Intent.LOCATE)[FS]
    assert (rating.quality, rating.strength) == (Quality.STRONG, Strength.HIGH)


def test_a_partial_file_name_is_described_as_such():
    reason = entry_quality(EvidenceEntryIn.model_validate(_find("startup", "substring")))[1]
    assert reason == "find matched 'startup' as part of a file name, 1 result"


def _rated(entry: dict) -> tuple[Quality, str]:
    return entry_quality(EvidenceEntryIn.model_validate(entry))


# A query is quoted in full up to 60 characters; a longer one keeps its first 59 and an
# ellipsis, so the quote holds 60 characters either way.
SIXTY = "0123456789" * 6
SIXTY_ONE = SIXTY + "X"


def test_a_query_of_sixty_characters_is_quoted_whole():
    assert _rated(_grep(SIXTY, "exact", 1)) == (
        Quality.STRONG,
        f"grep matched '{SIXTY}' exactly, 1 result",
    )


def test_a_longer_query_is_cut_to_fifty_nine_characters_and_an_ellipsis():
    # 61 characters: five "0123456789" (50) and "012345678" (9) make the first 59.
    shown = "0123456789" * 5 + "012345678" + "…"
    assert len(shown) == 60
    assert _rated(_grep(SIXTY_ONE, "exact", 1)) == (
        Quality.STRONG,
        f"grep matched '{shown}' exactly, 1 result",
    )


@pytest.mark.parametrize(
    ("count", "expected"),
    [
        # 1 to 5 references are Moderate, more than 5 Strong, 0 None; "reference" is
        # singular for exactly one.
        (1, (Quality.MODERATE, "references found 1 reference to 'Engine'")),
        (2, (Quality.MODERATE, "references found 2 references to 'Engine'")),
        (6, (Quality.STRONG, "references found 6 references to 'Engine'")),
        (0, (Quality.NONE, "references found no reference to 'Engine'")),
    ],
)
def test_references_reason_counts_the_references(count, expected):
    entry = {"tool": "references", "query": "Engine", "match": "identifier", "match_count": count}
    assert _rated(entry) == expected


@pytest.mark.parametrize(
    ("count", "expected"),
    [
        # No match kind: Weak when match_count is above 0, else None.
        (1, (Quality.WEAK, "grep returned 1 result for 'x', match kind unknown")),
        (3, (Quality.WEAK, "grep returned 3 results for 'x', match kind unknown")),
        (0, (Quality.NONE, "grep returned nothing for 'x'")),
    ],
)
def test_a_search_without_a_match_kind_says_how_much_it_returned(count, expected):
    assert _rated({"tool": "grep", "query": "x", "match_count": count}) == expected


@pytest.mark.parametrize(
    ("factors", "expected"),
    [
        ([], "discovery returned no factors, not the project type"),
        (
            ["test_presence", "source_count"],
            "discovery returned source_count, test_presence, not the project type",
        ),
    ],
)
def test_a_scan_without_the_project_type_says_what_it_returned(factors, expected):
    assert _rated({"tool": "discovery", "factors": factors}) == (Quality.WEAK, expected)


@pytest.mark.parametrize(
    ("entry", "reason"),
    [
        # The subject is the target, else the first source, else nothing.
        (
            _read("top_ranked", "", sources=["src/a.cpp"]),
            "read the top-ranked candidate, src/a.cpp",
        ),
        (
            _read("top_ranked", "", sources=["src/a.cpp", "src/b.cpp"]),
            "read the top-ranked candidate, src/a.cpp",
        ),
        (
            _read("top_ranked", "src/c.cpp", sources=["src/a.cpp"]),
            "read the top-ranked candidate, src/c.cpp",
        ),
        ({"tool": "read", "outcome": "top_ranked"}, "read the top-ranked candidate"),
    ],
)
def test_an_outcome_names_its_target_or_first_source(entry, reason):
    assert _rated(entry) == (Quality.STRONG, reason)


def test_an_errored_call_has_no_strength_whatever_it_counted():
    # An errored call is quality None and strength None, though 25 would be Medium.
    errored = {**_grep("ExecutionEngine", "identifier", 25), "error": True}
    evidence = EvidenceIn.model_validate({"intent": "locate", "entries": [errored]})
    rating = class_ratings(evidence.entries, Intent.LOCATE)[FS]
    assert (rating.quality, rating.strength, rating.reason) == (
        Quality.NONE,
        Strength.NONE,
        "the grep call errored",
    )


# --------------------------------------------------------------------------- Verified


def test_find_and_read_of_the_same_file_are_verified():
    classes = _classes(
        "locate",
        _find("execution_engine.cpp", "exact", target="src/execution_engine.cpp"),
        _read("top_ranked", "src/execution_engine.cpp"),
    )
    assert (classes[FS], classes[FC]) == (Quality.VERIFIED, Quality.VERIFIED)


def test_find_and_grep_of_the_same_file_stay_strong():
    # Two search tools share one false-positive signal (seed 001).
    classes = _classes(
        "locate",
        _find("execution_engine.cpp", "exact", target="src/execution_engine.cpp"),
        _grep("ExecutionEngine", "identifier", 12, target="src/execution_engine.cpp"),
    )
    assert classes[FS] is Quality.STRONG


def test_grep_alone_is_never_above_strong():
    same = _grep("ExecutionEngine", "exact", 90, target="src/execution_engine.cpp")
    assert _classes("locate", same, same, same)[FS] is Quality.STRONG


def test_grep_confirmed_by_a_read_is_verified():
    classes = _classes(
        "locate",
        _grep("ExecutionEngine", "identifier", 3, target="src/execution_engine.cpp"),
        _read("top_ranked", "src/execution_engine.cpp"),
    )
    assert (classes[FS], classes[FC]) == (Quality.VERIFIED, Quality.VERIFIED)


def test_corroboration_does_not_rescue_weak_evidence():
    # The tokenised find of the benchmark returns startup.cpp and the read opens it: the
    # two agree on a file, but neither is Strong.
    classes = _classes(
        "locate",
        _find("startup model selection", "token", target="src/startup.cpp"),
        _read("first_listed", "src/startup.cpp"),
    )
    assert (classes[FS], classes[FC]) == (Quality.WEAK, Quality.WEAK)


def test_a_strong_read_does_not_verify_a_weak_search():
    classes = _classes(
        "locate",
        _find("startup model selection", "token", target="src/startup.cpp"),
        _read("top_ranked", "src/startup.cpp"),
    )
    assert (classes[FS], classes[FC]) == (Quality.WEAK, Quality.STRONG)


def test_a_moderate_read_does_not_verify_a_strong_search():
    classes = _classes(
        "locate",
        _find("engine.cpp", "exact", target="src/engine.cpp"),
        _read("ranked", "src/engine.cpp"),
    )
    assert (classes[FS], classes[FC]) == (Quality.STRONG, Quality.MODERATE)


def test_search_and_read_of_different_files_stay_strong():
    classes = _classes(
        "locate",
        _find("engine.cpp", "exact", target="src/engine.cpp"),
        _read("top_ranked", "src/engine.h"),
    )
    assert (classes[FS], classes[FC]) == (Quality.STRONG, Quality.STRONG)


def test_same_target_ignores_a_leading_dot_slash_and_surrounding_spaces():
    classes = _classes(
        "locate",
        _find("engine.cpp", "exact", target=" ./src/engine.cpp"),
        _read("top_ranked", "src/engine.cpp "),
    )
    assert classes[FS] is Quality.VERIFIED


def test_same_target_is_case_sensitive():
    classes = _classes(
        "locate",
        _find("engine.cpp", "exact", target="src/Engine.cpp"),
        _read("top_ranked", "src/engine.cpp"),
    )
    assert classes[FS] is Quality.STRONG


def test_a_search_with_a_single_source_identifies_that_file():
    classes = _classes(
        "locate",
        _grep("ExecutionEngine", "identifier", 4, sources=["src/execution_engine.cpp"]),
        _read("top_ranked", "src/execution_engine.cpp"),
    )
    assert classes[FS] is Quality.VERIFIED


def test_a_search_with_several_sources_identifies_none_of_them():
    classes = _classes(
        "locate",
        _grep("ExecutionEngine", "identifier", 9, sources=["src/a.cpp", "src/b.cpp"]),
        _read("top_ranked", "src/a.cpp"),
    )
    assert classes[FS] is Quality.STRONG


def test_empty_targets_never_agree():
    classes = _classes(
        "locate",
        {"tool": "find", "query": "engine.cpp", "match": "exact", "match_count": 1},
        {"tool": "read", "outcome": "top_ranked"},
    )
    assert classes[FS] is Quality.STRONG


def test_an_errored_read_does_not_corroborate():
    classes = _classes(
        "locate",
        _find("engine.cpp", "exact", target="src/engine.cpp"),
        _read("top_ranked", "src/engine.cpp", error=True),
    )
    assert (classes[FS], classes[FC]) == (Quality.STRONG, Quality.NONE)


def test_git_log_is_authoritative_for_a_history_question():
    status = _scored("status", {"tool": "git", "outcome": "log_matching"})
    assert status.inputs["classes"]["GitLog"]["quality"] == "verified"
    assert (status.level, status.score, status.decision) == ("complete", 9.5, Decision.APPROVED)


def test_git_log_is_only_strong_for_other_questions():
    classes = _classes("locate", {"tool": "git", "outcome": "log_matching"})
    assert classes[EvidenceClass.GIT_LOG] is Quality.STRONG


def test_gh_run_log_is_verified():
    classes = _classes("diagnose", {"tool": "gh", "outcome": "run_log"})
    assert classes[EvidenceClass.CI_WORKFLOW] is Quality.VERIFIED


def test_build_and_test_both_passing_are_verified():
    classes = _classes(
        "execute",
        {"tool": "cmake", "target": "engine", "outcome": "built_target"},
        {"tool": "ctest", "outcome": "all_passed", "match_count": 120},
    )
    assert classes[EvidenceClass.BUILD] is Quality.VERIFIED
    assert classes[EvidenceClass.TEST] is Quality.VERIFIED


def test_build_without_all_tests_passing_stays_strong():
    classes = _classes(
        "execute",
        {"tool": "cmake", "outcome": "built_target"},
        {"tool": "ctest", "outcome": "some_passed"},
    )
    assert (classes[EvidenceClass.BUILD], classes[EvidenceClass.TEST]) == (
        Quality.STRONG,
        Quality.MODERATE,
    )


def test_tests_passing_with_the_wrong_target_built_stay_unverified():
    classes = _classes(
        "execute",
        {"tool": "cmake", "outcome": "built_other"},
        {"tool": "ctest", "outcome": "all_passed"},
    )
    assert (classes[EvidenceClass.BUILD], classes[EvidenceClass.TEST]) == (
        Quality.MODERATE,
        Quality.STRONG,
    )


def test_a_failure_after_a_success_decides_the_build():
    classes = _classes(
        "execute",
        {"tool": "cmake", "outcome": "built_target"},
        {"tool": "cmake", "outcome": "failed"},
        {"tool": "ctest", "outcome": "all_passed"},
    )
    assert (classes[EvidenceClass.BUILD], classes[EvidenceClass.TEST]) == (
        Quality.WEAK,
        Quality.STRONG,
    )


def test_a_success_after_a_failure_decides_the_build():
    classes = _classes(
        "execute",
        {"tool": "cmake", "outcome": "failed"},
        {"tool": "cmake", "outcome": "built_target"},
        {"tool": "ctest", "outcome": "failed"},
        {"tool": "ctest", "outcome": "all_passed"},
    )
    assert classes[EvidenceClass.BUILD] is Quality.VERIFIED
    assert classes[EvidenceClass.TEST] is Quality.VERIFIED


def test_an_errored_build_is_not_a_failure():
    classes = _classes(
        "execute",
        {"tool": "cmake", "outcome": "built_target"},
        {"tool": "cmake", "outcome": "failed", "error": True},
        {"tool": "ctest", "outcome": "all_passed"},
    )
    assert classes[EvidenceClass.BUILD] is Quality.VERIFIED


def test_failing_tests_hold_an_execute_output_for_review():
    scored = _scored(
        "execute",
        {"tool": "cmake", "outcome": "built_target"},
        {"tool": "ctest", "outcome": "failed"},
    )
    assert (scored.level, scored.decision) == ("low", Decision.PENDING_REVIEW)


FULL_SCAN = ["project_type", "source_count", "test_presence"]


def test_two_scans_with_the_same_result_are_verified():
    scan = {"tool": "discovery", "factors": FULL_SCAN}
    assert _classes("explain", scan, scan)[EvidenceClass.DISCOVERY] is Quality.VERIFIED


def test_two_scans_with_different_results_stay_strong():
    classes = _classes(
        "explain",
        {"tool": "discovery", "factors": FULL_SCAN},
        {"tool": "discovery", "factors": [*FULL_SCAN, "build_system"]},
    )
    assert classes[EvidenceClass.DISCOVERY] is Quality.STRONG


def test_two_scans_of_different_projects_stay_strong():
    classes = _classes(
        "explain",
        {"tool": "discovery", "target": "engine", "factors": FULL_SCAN},
        {"tool": "discovery", "target": "gateway", "factors": FULL_SCAN},
    )
    assert classes[EvidenceClass.DISCOVERY] is Quality.STRONG


def test_two_partial_scans_stay_moderate():
    scan = {"tool": "discovery", "factors": ["project_type"]}
    assert _classes("explain", scan, scan)[EvidenceClass.DISCOVERY] is Quality.MODERATE


def test_a_scan_below_strong_before_two_identical_full_scans_does_not_stop_the_check():
    # The partial scan is Moderate and skipped; the two full scans agree: Verified, with the
    # full scan's reason and "the same in two scans". Discovery is one of Explain's
    # requirements (at Moderate), and no call counted anything: strength None.
    scan = {"tool": "discovery", "factors": FULL_SCAN}
    scored = _scored("explain", {"tool": "discovery", "factors": ["project_type"]}, scan, scan)
    details = {impact.factor: impact.detail for impact in scored.explanation}
    assert details["Discovery"] == (
        "Verified, strength None: discovery established project_type, source_count, "
        "test_presence, the same in two scans; required at Moderate: met"
    )


def test_weaker_calls_listed_first_do_not_stop_corroboration():
    # A token find (Weak) before the exact find (Strong), a first-listed read (Weak) before
    # the top-ranked read (Strong): the Strong pair agree on src/engine.cpp, both Verified.
    classes = _classes(
        "locate",
        _find("engine", "token", target="src/engine.cpp"),
        _find("engine.cpp", "exact", target="src/engine.cpp"),
        _read("first_listed", "src/engine.cpp"),
        _read("top_ranked", "src/engine.cpp"),
    )
    assert (classes[FS], classes[FC]) == (Quality.VERIFIED, Quality.VERIFIED)


def test_a_failure_in_the_middle_drops_the_calls_before_it():
    # built_target, failed, built_other: from the last failure on leaves failed (Weak) and
    # built_other (Moderate), so Build is Moderate, below Strong, and does not verify Test.
    classes = _classes(
        "execute",
        {"tool": "cmake", "outcome": "built_target"},
        {"tool": "cmake", "outcome": "failed"},
        {"tool": "cmake", "outcome": "built_other"},
        {"tool": "ctest", "outcome": "all_passed"},
    )
    assert (classes[EvidenceClass.BUILD], classes[EvidenceClass.TEST]) == (
        Quality.MODERATE,
        Quality.STRONG,
    )


def test_no_calls_have_nothing_since_a_failure():
    assert list(since_last_failure([])) == []


def test_summary_of_git_authority_says_why_it_is_verified():
    # Status with log_matching: GitLog Verified, the only requirement, so Complete; the
    # entry names no target, so the reason is the outcome's alone plus Git's authority.
    scored = _scored("status", {"tool": "git", "outcome": "log_matching"})
    assert scored.summary == (
        "Confidence is Complete because GitLog is Verified (git log with matching commits; "
        "Git is authoritative for history). Status's requirements are met (GitLog at Moderate)."
    )


# --------------------------------------------------------------------------- the six benchmarks

# Seed 001, Part III: each failing benchmark searched for words that are not in the code
# as a phrase, then read the first file listed.
BENCHMARKS = {
    "tokenised multi-word grep": [
        _grep("evidence gating", "token", 60),
        _read("first_listed", "src/evidence_store.cpp"),
    ],
    "tokenised find": [
        _find("startup model selection", "token", sources=["src/startup.cpp"]),
        _read("first_listed", "src/startup.cpp"),
    ],
    "broad grep": [
        _grep("provider credentials configured", "token", 30),
        _read("first_listed", "src/provider_auth.h"),
    ],
    "broad grep as a substring": [
        _grep("provider", "substring", 30),
        _read("first_listed", "src/provider_auth.h"),
    ],
    "nonexistent identifier": [
        _grep("xqkz_2024_nonexistent_class", "token", 40),
        _read("first_listed", "src/session.h"),
    ],
    "nonexistent identifier found by name": [
        _find("xqkz_2024_nonexistent_class", "token", count=3),
        _read("first_listed", "src/session.h"),
    ],
}


@pytest.mark.parametrize("name", BENCHMARKS)
def test_benchmark_falls_short_of_locate(name):
    # FileSearch Weak and FileContent Weak: some required class is Weak, so Low.
    scored = _scored("locate", *BENCHMARKS[name])
    assert (scored.level, scored.score, scored.decision) == ("low", 3.0, Decision.PENDING_REVIEW)
    assert "Locate needs FileSearch at Strong and FileContent at Moderate." in scored.summary


@pytest.mark.parametrize("name", BENCHMARKS)
def test_benchmark_falls_short_of_explain(name):
    # Explain also needs Discovery, which none of them collected: None.
    scored = _scored("explain", *BENCHMARKS[name])
    assert (scored.level, scored.score, scored.decision) == ("none", 1.0, Decision.PENDING_REVIEW)


@pytest.mark.parametrize("name", BENCHMARKS)
def test_benchmark_falls_short_of_explain_even_with_a_full_scan(name):
    scan = {"tool": "discovery", "factors": FULL_SCAN}
    scored = _scored("explain", *BENCHMARKS[name], scan)
    assert (scored.level, scored.decision) == ("low", Decision.PENDING_REVIEW)


def test_nonexistent_identifier_is_explained():
    scored = _scored("locate", *BENCHMARKS["nonexistent identifier"])
    assert scored.summary == (
        "Confidence is Low because FileSearch is only Weak (grep matched "
        "'xqkz_2024_nonexistent_class' token by token, 40 results) and FileContent is only "
        "Weak (read the first listed file, src/session.h). "
        "Locate needs FileSearch at Strong and FileContent at Moderate."
    )


# --------------------------------------------------------------------------- the intent table


@pytest.mark.parametrize(
    ("intent", "expected"),
    [
        ("locate", {"FileSearch": "strong", "FileContent": "moderate"}),
        ("navigate", {"FileSearch": "strong", "FileContent": "moderate"}),
        (
            "explain",
            {"FileSearch": "strong", "FileContent": "moderate", "Discovery": "moderate"},
        ),
        (
            "review",
            {"FileSearch": "strong", "FileContent": "moderate", "Discovery": "moderate"},
        ),
        (
            "diagnose",
            {"FileSearch": "strong", "FileContent": "moderate", "CIWorkflow": "strong"},
        ),
        ("compare", {"FileSearch": "strong", "FileContent": "moderate"}),
        ("status", {"GitLog": "moderate"}),
        ("execute", {"Build": "strong", "Test": "strong"}),
        (
            "modify",
            {
                "FileSearch": "strong",
                "FileContent": "strong",
                "Discovery": "moderate",
                "Build": "verified",
                "Test": "verified",
            },
        ),
        ("chat", {}),
    ],
)
def test_requirements_per_intent(intent, expected):
    required = requirements_for(Intent(intent))
    assert {str(c): q.name.lower() for c, q in required.items()} == expected


SEARCH_STRONG = _grep("ExecutionEngine", "identifier", 25)
READ_MODERATE = _read("ranked", "src/execution_engine.cpp")
SCAN_MODERATE = {"tool": "discovery", "factors": ["project_type"]}
BUILT = {"tool": "cmake", "outcome": "built_target"}
ALL_PASSED = {"tool": "ctest", "outcome": "all_passed"}


@pytest.mark.parametrize(
    ("intent", "entries", "level"),
    [
        # FileSearch Strong, FileContent Moderate: the lowest is Moderate.
        ("locate", [SEARCH_STRONG, READ_MODERATE], "medium"),
        ("navigate", [SEARCH_STRONG, READ_MODERATE], "medium"),
        ("compare", [SEARCH_STRONG, READ_MODERATE], "medium"),
        ("explain", [SEARCH_STRONG, READ_MODERATE, SCAN_MODERATE], "medium"),
        ("review", [SEARCH_STRONG, READ_MODERATE, SCAN_MODERATE], "medium"),
        (
            "diagnose",
            [SEARCH_STRONG, READ_MODERATE, {"tool": "gh", "outcome": "matching_workflow"}],
            "medium",
        ),
        ("status", [{"tool": "git", "outcome": "log"}], "medium"),
        # Strong build and Strong tests corroborate each other: both Verified.
        ("execute", [BUILT, ALL_PASSED], "complete"),
        # Search and read Verified on the same file, build and test Verified, Discovery
        # Moderate: the lowest is Moderate.
        (
            "modify",
            [
                _find("engine.cpp", "exact", target="src/engine.cpp"),
                _read("top_ranked", "src/engine.cpp"),
                SCAN_MODERATE,
                BUILT,
                ALL_PASSED,
            ],
            "medium",
        ),
    ],
)
def test_evidence_at_each_intents_minimum_meets_it(intent, entries, level):
    scored = _scored(intent, *entries)
    assert scored.level == level
    assert f"{intent.title()}'s requirements are met" in scored.summary


def test_modify_needs_verified_build_and_tests():
    scored = _scored(
        "modify",
        _find("engine.cpp", "exact", target="src/engine.cpp"),
        _read("top_ranked", "src/engine.cpp"),
        SCAN_MODERATE,
        BUILT,
        {"tool": "ctest", "outcome": "some_passed"},
    )
    assert (scored.level, scored.decision) == ("medium", Decision.WARNING)
    assert scored.summary.endswith("Modify needs Build at Verified and Test at Verified.")


def test_diagnose_without_ci_evidence_is_none():
    scored = _scored("diagnose", SEARCH_STRONG, READ_MODERATE)
    assert scored.level == "none"
    assert "CIWorkflow is None (no gh call was made)" in scored.summary


def test_status_from_git_status_alone_is_low():
    scored = _scored("status", {"tool": "git", "outcome": "status"})
    assert (scored.level, scored.decision) == ("low", Decision.PENDING_REVIEW)


# --------------------------------------------------------------------------- level rules


V, S, M, W, N = Quality.VERIFIED, Quality.STRONG, Quality.MODERATE, Quality.WEAK, Quality.NONE
LOCATE = {FS: S, FC: M}


@pytest.mark.parametrize(
    ("qualities", "expected"),
    [
        ({FS: V, FC: V}, Level.COMPLETE),
        ({FS: V, FC: S}, Level.HIGH),
        ({FS: S, FC: S}, Level.HIGH),
        ({FS: S, FC: M}, Level.MEDIUM),
        ({FS: V, FC: M}, Level.MEDIUM),
        ({FS: M, FC: W}, Level.LOW),
        ({FS: V, FC: W}, Level.LOW),
        ({FS: W, FC: N}, Level.NONE),
        ({FS: V}, Level.NONE),
        # A class that is not required does not count.
        ({FS: S, FC: S, EvidenceClass.GIT_LOG: N}, Level.HIGH),
    ],
)
def test_confidence_level(qualities, expected):
    assert confidence_level(LOCATE, qualities) is expected


def test_nothing_required_is_complete():
    assert confidence_level({}, {}) is Level.COMPLETE


def test_the_gap_counts_a_class_without_a_call_as_none():
    # Like the level, the gap reads a required class nobody rated as None: FileContent is
    # missing, so it is unmet at Moderate; FileSearch at Strong meets its Strong.
    assert unmet_requirements(LOCATE, {FS: S}) == {FC: M}
    assert unmet_requirements(LOCATE, {}) == LOCATE


# --------------------------------------------------------------------------- the scorer


@pytest.mark.parametrize(
    ("entries", "level", "score", "decision"),
    [
        ([SEARCH_STRONG], "none", 1.0, Decision.PENDING_REVIEW),
        (
            [_grep("evidence gating", "token", 40), _read("first_listed", "a.cpp")],
            "low",
            3.0,
            Decision.PENDING_REVIEW,
        ),
        (
            [_grep("evidence gating", "substring", 7), _read("ranked", "a.cpp")],
            "medium",
            5.5,
            Decision.WARNING,
        ),
        (
            [
                _grep("ExecutionEngine", "identifier", 25, sources=["a.cpp", "b.cpp"]),
                _read("top_ranked", "a.cpp"),
            ],
            "high",
            8.0,
            Decision.APPROVED,
        ),
        (
            [_find("a.cpp", "exact", target="src/a.cpp"), _read("top_ranked", "src/a.cpp")],
            "complete",
            9.5,
            Decision.APPROVED,
        ),
    ],
)
def test_level_gives_the_band_midpoint_and_the_decision(entries, level, score, decision):
    scored = _scored("locate", *entries)
    assert (scored.level, scored.score, scored.decision) == (level, score, decision)


def test_summary_reads_like_the_seed():
    scored = _scored(
        "locate",
        _grep("evidence gating", "substring", 7),
        _read("top_ranked", "src/gate.cpp"),
    )
    assert scored.summary == (
        "Confidence is Medium because FileSearch is only Moderate (grep matched "
        "'evidence gating' as a substring, 7 results). Locate needs FileSearch at Strong."
    )


def test_summary_of_a_high_level_says_what_is_not_verified():
    scored = _scored(
        "locate",
        _grep("ExecutionEngine", "identifier", 25, sources=["a.cpp", "b.cpp"]),
        _read("top_ranked", "a.cpp"),
    )
    assert scored.summary == (
        "Confidence is High because FileSearch is Strong, not Verified (grep matched "
        "'ExecutionEngine' as an identifier, 25 results) and FileContent is Strong, not "
        "Verified (read the top-ranked candidate, a.cpp). Locate's requirements are met "
        "(FileSearch at Strong and FileContent at Moderate)."
    )


def test_summary_of_a_met_requirement_at_moderate_says_so():
    scored = _scored("status", {"tool": "git", "outcome": "log"})
    assert scored.summary == (
        "Confidence is Medium because GitLog is only Moderate (git log without the query's "
        "terms). Status's requirements are met (GitLog at Moderate)."
    )


def test_summary_of_a_missing_class_says_no_call_was_made():
    scored = _scored("locate", SEARCH_STRONG)
    assert scored.summary == (
        "Confidence is None because FileContent is None (no read call was made). "
        "Locate needs FileContent at Moderate."
    )


def test_summary_of_a_complete_level_names_the_agreement():
    scored = _scored(
        "locate",
        _find("engine.cpp", "exact", target="src/engine.cpp"),
        _read("top_ranked", "src/engine.cpp"),
    )
    assert scored.summary.startswith(
        "Confidence is Complete because FileSearch is Verified (find matched 'engine.cpp' "
        "exactly, 1 result; find and read agree on src/engine.cpp)"
    )


def test_modify_with_every_requirement_met_but_a_single_scan_is_high():
    # Worked from seed 001's Modify row (FileSearch Strong, FileContent Strong, Discovery
    # Moderate, Build Verified, Test Verified):
    # - find and read both Strong on src/engine.cpp corroborate: both Verified;
    # - one full scan is Strong, not Verified (that takes two identical scans);
    # - the target built and all relevant tests passed: Build and Test Verified.
    # The lowest is Discovery at Strong: High, the band 7-9's midpoint 8.0, approved. A
    # class exactly at its requirement (Build and Test at Verified) meets it.
    scored = _scored(
        "modify",
        _find("engine.cpp", "exact", target="src/engine.cpp"),
        _read("top_ranked", "src/engine.cpp"),
        {"tool": "discovery", "factors": FULL_SCAN},
        BUILT,
        ALL_PASSED,
    )
    assert (scored.level, scored.score, scored.decision) == ("high", 8.0, Decision.APPROVED)
    # Five requirements met: the list runs "a, b, c, d and e".
    assert scored.summary == (
        "Confidence is High because Discovery is Strong, not Verified (discovery established "
        "project_type, source_count, test_presence). Modify's requirements are met "
        "(FileSearch at Strong, FileContent at Strong, Discovery at Moderate, Build at "
        "Verified and Test at Verified)."
    )
    agree = "find and read agree on src/engine.cpp"
    assert [(impact.factor, impact.detail) for impact in scored.explanation] == [
        (
            "FileSearch",
            f"Verified, strength Low: find matched 'engine.cpp' exactly, 1 result; {agree}; "
            "required at Strong: met",
        ),
        (
            "FileContent",
            f"Verified, strength None: read the top-ranked candidate, src/engine.cpp; {agree}; "
            "required at Strong: met",
        ),
        (
            "Discovery",
            "Strong, strength None: discovery established project_type, source_count, "
            "test_presence; required at Moderate: met",
        ),
        (
            "Build",
            "Verified, strength None: cmake built the target, and ctest passed all relevant "
            "tests; required at Verified: met",
        ),
        (
            "Test",
            "Verified, strength None: ctest passed all relevant tests, and cmake built the "
            "target; required at Verified: met",
        ),
    ]
    assert scored.inputs == {
        "intent": "modify",
        "classes": {
            "FileSearch": {"quality": "verified", "strength": "low"},
            "FileContent": {"quality": "verified", "strength": "none"},
            "Discovery": {"quality": "strong", "strength": "none"},
            "Build": {"quality": "verified", "strength": "none"},
            "Test": {"quality": "verified", "strength": "none"},
        },
        "requirements": {
            "FileSearch": "strong",
            "FileContent": "strong",
            "Discovery": "moderate",
            "Build": "verified",
            "Test": "verified",
        },
        "level": "high",
    }


def test_explanation_has_one_zero_point_impact_per_class():
    scored = _scored(
        "locate",
        _grep("evidence gating", "token", 60),
        {"tool": "git", "outcome": "status"},
    )
    assert [impact.factor for impact in scored.explanation] == [
        "FileSearch",
        "FileContent",
        "GitLog",
    ]
    assert all(impact.points == 0.0 for impact in scored.explanation)
    assert scored.explanation[0].detail == (
        "Weak, strength High: grep matched 'evidence gating' token by token, 60 results; "
        "required at Strong: not met"
    )
    assert scored.explanation[1].detail == (
        "None, strength None: no read call was made; required at Moderate: not met"
    )
    assert scored.explanation[2].detail.endswith("; not required")


def test_inputs_are_json():
    scored = _scored("locate", SEARCH_STRONG, READ_MODERATE)
    assert json.loads(json.dumps(scored.inputs)) == {
        "intent": "locate",
        "classes": {
            "FileSearch": {"quality": "strong", "strength": "medium"},
            "FileContent": {"quality": "moderate", "strength": "none"},
        },
        "requirements": {"FileSearch": "strong", "FileContent": "moderate"},
        "level": "medium",
    }


def test_empty_evidence_is_none():
    scored = _scored("locate")
    assert (scored.level, scored.decision) == ("none", Decision.PENDING_REVIEW)


def test_applies_only_to_evidence_with_an_intent_that_needs_some():
    assert SCORER.applies(_output("locate", SEARCH_STRONG))
    assert not SCORER.applies(_output(None, SEARCH_STRONG))
    assert not SCORER.applies(_output("chat", SEARCH_STRONG))
    without = ScorerInput(
        validators=(),
        input_clarity=0.5,
        coherence=0.5,
        requires_fact_check=False,
        pair=PairHistory(),
        policy=GatePolicy(),
        now=datetime(2026, 1, 1, tzinfo=UTC),
    )
    assert not SCORER.applies(without)


def test_scoring_chat_is_refused():
    with pytest.raises(ValueError) as refused:
        SCORER.score(_output("chat"))
    # The whole message, as whoever called score() on an output it does not apply to sees it.
    message = "evidence_quality needs evidence with an intent other than chat"
    assert str(refused.value) == message


def test_scorer_identity():
    assert (SCORER.name, SCORER.version) == ("evidence_quality", "1")
    assert "\n" not in SCORER.description


def test_the_documented_worked_example():
    # docs/scoring.md ("evidence_quality"): grep and find both Moderate, read Strong.
    entries = [
        _grep("evidence gating", "substring", 7),
        _find(
            "evidence_gate",
            "substring",
            count=2,
            sources=["src/evidence_gate.cpp", "src/evidence_gate.h"],
        ),
        _read("top_ranked", "src/evidence_gate.cpp"),
    ]
    scored = _scored("locate", *entries)
    assert (scored.level, scored.score, scored.decision) == ("medium", 5.5, Decision.WARNING)
    exact = _find("evidence_gate.cpp", "exact", target="src/evidence_gate.cpp")
    scored = _scored("locate", *entries, exact)
    assert (scored.level, scored.score, scored.decision) == ("complete", 9.5, Decision.APPROVED)
