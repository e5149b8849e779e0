"""The evidence-category model (seed 000) against values worked out by hand.

Scores are on 0-10, the seed's values times 10. The expected values in the comments were
computed from the seed's tables and the choices in docs/scoring.md ("evidence_categories")
(weights normalised over the categories used, at least 2.0; the bonus closes part of the
distance to 1.0), not read off the scorer.
"""

import json
from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gating.scorers.base import ScorerInput
from gating.scorers.evidence_categories import SCORER
from gating.scoring import GatePolicy, PairHistory
from gating.submissions import EvidenceIn

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def output(*entries, evidence=True):
    return ScorerInput(
        validators=(),
        input_clarity=0.5,
        coherence=0.5,
        requires_fact_check=False,
        pair=PairHistory(),
        policy=GatePolicy(),
        now=NOW,
        evidence=EvidenceIn.model_validate({"entries": list(entries)}) if evidence else None,
    )


def scored(*entries):
    return SCORER.score(output(*entries))


def category_scores(*entries):
    return scored(*entries).inputs["categories"]


def search(tool, term, matches=3, **extra):
    return {"tool": tool, "query": term, "target": term, "match_count": matches, **extra}


def read(path, target="", **extra):
    return {"tool": "read", "query": path, "target": target, **extra}


def discovery(factors, **extra):
    names = ["project_type", "source_count", "test_presence", "build_system"]
    return {"tool": "discovery", "factors": names[:factors], **extra}


def tool(name, outcome=None, target="", **extra):
    return {"tool": name, "outcome": outcome, "target": target, **extra}


FIND_READ_GREP_READ = (
    search("find", "MemoryManager", matches=2),
    read("src/MemoryManager.h", "MemoryManager"),
    search("grep", "MemoryManager", matches=14),
    read("src/MemoryManager.cpp", "MemoryManager"),
)


# --------------------------------------------------------------------- the seed's examples


def test_find_read_grep_read_on_one_symbol_is_strong():
    # search: find and grep agree on MemoryManager        -> 0.80
    # read:   two files, search returned results          -> 0.80
    # base = (2.5 * 0.80 + 3.0 * 0.80) / 5.5 = 0.80
    # bonus: two categories on one target 0.10, search + read on it 0.05 -> 0.15
    # result = 0.80 + 0.15 * (1 - 0.80) = 0.83 -> 8.3 (a multiplicative bonus gives 9.2)
    result = scored(*FIND_READ_GREP_READ)
    assert 7.8 <= result.score <= 8.8
    assert result.score == pytest.approx(8.3)


def test_find_and_read_on_one_target_is_adequate():
    # search 0.65 (one tool), read 0.80 (search returned results)
    # base = (2.5 * 0.65 + 3.0 * 0.80) / 5.5 = 4.025 / 5.5 = 0.731818
    # bonus 0.15 -> 0.731818 + 0.15 * 0.268182 = 0.772045 -> 7.72045
    result = scored(search("find", "MemoryManager"), read("src/MemoryManager.h", "MemoryManager"))
    assert 5.5 <= result.score <= 8.0
    assert result.score == pytest.approx(7.72045, abs=1e-4)


def test_find_and_read_on_different_targets_is_adequate_without_bonus():
    # The same categories, no shared target: 4.025 / 5.5 = 0.731818 -> 7.31818
    result = scored(search("find", "MemoryManager"), read("src/Allocator.h", "Allocator"))
    assert 5.5 <= result.score <= 8.0
    assert result.score == pytest.approx(7.31818, abs=1e-4)
    assert result.inputs["bonus"] == 0.0


def test_grep_and_read_scores_like_find_and_read():
    assert scored(
        search("grep", "MemoryManager"), read("src/MemoryManager.h", "MemoryManager")
    ).score == pytest.approx(7.72045, abs=1e-4)


@pytest.mark.parametrize(("factors", "expected"), [(2, 2.5), (3, 3.5)])
def test_discovery_only_is_weak(factors, expected):
    # One category of weight 1.0 is spread over the minimum total of 2.0:
    # 2 factors 0.50 * 1.0 / 2.0 = 0.25; 3 factors 0.70 * 1.0 / 2.0 = 0.35.
    result = scored(discovery(factors))
    assert 2.5 <= result.score <= 5.4
    assert result.score == pytest.approx(expected)


def test_errors_only_is_no_evidence():
    result = scored(
        search("grep", "MemoryManager", error=True), read("src/MemoryManager.h", error=True)
    )
    assert result.score == 0.0
    assert result.inputs["categories"] == {}
    assert result.summary == "Insufficient evidence: every tool call errored (0.00)."
    assert [(impact.factor, impact.points, impact.detail) for impact in result.explanation] == [
        ("errors", 0.0, "2 errored tool calls count for nothing")
    ]


def test_every_tool_empty_is_no_evidence():
    result = scored(
        search("find", "MemoryManager", matches=0),
        search("grep", "MemoryManager", matches=0),
        tool("git", "status"),
        tool("gh", "empty"),
    )
    assert 0.0 <= result.score <= 2.4
    assert result.score == 0.0
    assert result.summary == "Insufficient evidence: every tool call came back empty (0.00)."


def test_a_discovery_that_found_no_factor_is_no_evidence():
    # 0 factors still scores the seed's 0.20, spread over 2.0: 0.10 -> 1.0
    assert scored(discovery(0)).score == pytest.approx(1.0)


# --------------------------------------------------------------------- search rows


def test_search_one_tool_with_results():
    assert category_scores(search("grep", "MemoryManager"))["search"] == 0.65


def test_search_two_tools_agree_on_one_target():
    scores = category_scores(search("find", "MemoryManager"), search("grep", "MemoryManager"))
    assert scores["search"] == 0.80


def test_search_two_tools_on_different_targets_do_not_agree():
    scores = category_scores(search("find", "MemoryManager"), search("grep", "Allocator"))
    assert scores["search"] == 0.65


def test_search_all_three_tools_agree_on_one_target():
    scores = category_scores(
        search("find", "MemoryManager"),
        search("grep", "MemoryManager"),
        search("references", "MemoryManager"),
    )
    assert scores["search"] == 0.92


def test_search_the_same_tool_twice_is_one_tool():
    scores = category_scores(search("grep", "MemoryManager"), search("grep", "MemoryManager"))
    assert scores["search"] == 0.65


def test_search_a_tool_without_results_does_not_agree():
    scores = category_scores(
        search("find", "MemoryManager"), search("grep", "MemoryManager", matches=0)
    )
    assert scores["search"] == 0.65


def test_search_a_file_name_and_its_symbol_agree():
    scores = category_scores(search("find", "MemoryManager.h"), search("grep", "memorymanager"))
    assert scores["search"] == 0.80


def test_search_without_results_scores_nothing():
    result = scored(search("grep", "MemoryManager", matches=0))
    assert result.inputs["categories"] == {"search": 0.0}
    assert result.score == 0.0


# --------------------------------------------------------------------- read rows


def test_read_without_search_confirmation():
    result = scored(read("src/MemoryManager.h", "MemoryManager"))
    assert result.inputs["categories"] == {"read": 0.55}
    assert result.score == pytest.approx(5.5)


def test_read_confirmed_by_any_search_with_results():
    scores = category_scores(search("grep", "Allocator"), read("src/MemoryManager.h"))
    assert scores["read"] == 0.80


def test_read_three_files_on_searched_targets():
    scores = category_scores(
        search("grep", "allocate"),
        read("src/Pool.cpp", "allocate"),
        read("src/Arena.cpp", "allocate"),
        read("src/Heap.cpp", "allocate"),
    )
    assert scores["read"] == 0.88


def test_read_three_files_but_two_on_searched_targets():
    scores = category_scores(
        search("grep", "allocate"),
        read("src/Pool.cpp", "allocate"),
        read("src/Arena.cpp", "allocate"),
        read("README.md", "overview"),
    )
    assert scores["read"] == 0.80


def test_read_one_file_three_times_is_one_file():
    scores = category_scores(
        search("grep", "allocate"),
        read("src/Pool.cpp", "allocate"),
        read("src/Pool.cpp", "allocate"),
        read("src/Pool.cpp", "allocate"),
    )
    assert scores["read"] == 0.80


# --------------------------------------------------------------------- discovery rows


@pytest.mark.parametrize(
    ("factors", "expected"), [(0, 0.20), (1, 0.20), (2, 0.50), (3, 0.70), (4, 0.85)]
)
def test_discovery_by_factors(factors, expected):
    assert category_scores(discovery(factors))["discovery"] == expected


def test_discovery_takes_its_best_scan():
    assert category_scores(discovery(1), discovery(3), discovery(2))["discovery"] == 0.70


# --------------------------------------------------------------------- verification rows


@pytest.mark.parametrize(
    ("name", "outcome", "expected"),
    [
        ("cmake", "failed", 0.15),
        ("ctest", "failed", 0.30),
        ("cmake", "built_target", 0.80),
        ("cmake", "built_other", 0.80),
        ("cmake", "no_op", 0.80),
        ("ctest", "some_passed", 0.80),
        ("ctest", "all_passed", 0.93),
        ("ctest", "none_run", 0.0),
        ("cmake", None, 0.0),
    ],
)
def test_verification_by_outcome(name, outcome, expected):
    assert category_scores(tool(name, outcome))["verification"] == expected


def test_verification_takes_its_best_tool():
    scores = category_scores(tool("cmake", "failed"), tool("ctest", "all_passed"))
    assert scores["verification"] == 0.93


# --------------------------------------------------------------------- git and ci rows


@pytest.mark.parametrize(
    ("entry", "expected"),
    [
        (tool("git", match_count=4), 0.75),
        (tool("git", "log"), 0.75),
        (tool("git", "log_matching"), 0.75),
        (tool("git", "status"), 0.0),
        (tool("git"), 0.0),
    ],
)
def test_git_returned_results(entry, expected):
    assert category_scores(entry)["git"] == expected


@pytest.mark.parametrize(
    ("outcome", "expected"),
    [("run_list", 0.80), ("matching_workflow", 0.80), ("run_log", 0.80), ("empty", 0.0)],
)
def test_ci_evidence(outcome, expected):
    assert category_scores(tool("gh", outcome))["ci"] == expected


# --------------------------------------------------------------------- weights


def test_weights_over_all_six_categories_are_the_seeds_normalised_column():
    result = scored(
        search("grep", "a"),
        read("b.cpp"),
        tool("cmake", "built_target", "c"),
        discovery(2),
        tool("git", "log", "d"),
        tool("gh", "run_list", "e"),
    )
    weights = result.inputs["weights"]
    assert weights == pytest.approx(
        {"read": 0.30, "search": 0.25, "verification": 0.15, "discovery": 0.10, "git": 0.10}
        | {"ci": 0.10}
    )


def test_weights_are_normalised_over_the_categories_used():
    # search 0.65, read 0.80, verification 0.80 on three different targets, no bonus:
    # (2.5 * 0.65 + 3.0 * 0.80 + 1.5 * 0.80) / 7.0 = 5.225 / 7.0 = 0.746429 -> 7.46429
    result = scored(
        search("grep", "allocate"),
        read("src/Pool.cpp", "Pool"),
        tool("cmake", "built_other", "app"),
    )
    assert result.inputs["weight_total"] == 7.0
    assert result.score == pytest.approx(7.46429, abs=1e-4)


def test_a_single_heavy_category_is_its_own_score():
    # search weighs 2.5, above the minimum total of 2.0: 0.65 -> 6.5
    assert scored(search("grep", "allocate")).score == pytest.approx(6.5)


@pytest.mark.parametrize(
    ("entry", "expected"),
    [
        (tool("git", "log_matching"), 3.75),  # 0.75 * 1.0 / 2.0
        (tool("gh", "run_log"), 4.0),  # 0.80 * 1.0 / 2.0
        (tool("ctest", "all_passed"), 6.975),  # 0.93 * 1.5 / 2.0
    ],
)
def test_light_categories_alone_are_spread_over_the_minimum_total(entry, expected):
    assert scored(entry).score == pytest.approx(expected)


def test_two_light_categories_reach_the_minimum_total():
    # discovery 0.85 and git 0.75, 1.0 each: (0.85 + 0.75) / 2.0 = 0.80 -> 8.0
    assert scored(discovery(4), tool("git", "log", "main")).score == pytest.approx(8.0)


def test_a_category_used_without_results_counts_as_zero():
    # read 0.55 with a grep that found nothing: (2.5 * 0 + 3.0 * 0.55) / 5.5 = 0.30 -> 3.0
    result = scored(search("grep", "Allocator", matches=0), read("src/MemoryManager.h"))
    assert result.score == pytest.approx(3.0)


# --------------------------------------------------------------------- convergence


def test_two_categories_on_one_target_earn_ten_percent():
    # read 0.55 (no search), git 0.75: base = (3.0 * 0.55 + 1.0 * 0.75) / 4.0 = 0.60
    # bonus 0.10 -> 0.60 + 0.10 * 0.40 = 0.64 -> 6.4
    result = scored(
        read("src/MemoryManager.h", "MemoryManager"),
        tool("git", "log_matching", "MemoryManager"),
    )
    assert result.inputs["bonus"] == pytest.approx(0.10)
    assert result.score == pytest.approx(6.4)


def test_three_categories_on_one_target_earn_twenty_percent_plus_search_and_read():
    # search 0.65, read 0.80, git 0.75:
    # base = (2.5 * 0.65 + 3.0 * 0.80 + 1.0 * 0.75) / 6.5 = 4.775 / 6.5 = 0.734615
    # bonus 0.20 + 0.05 = 0.25 -> 0.734615 + 0.25 * 0.265385 = 0.800962 -> 8.00962
    result = scored(
        search("grep", "MemoryManager"),
        read("src/MemoryManager.h"),
        tool("git", "log_matching", "MemoryManager"),
    )
    assert result.inputs["convergence"]["categories"] == ["read", "search", "git"]
    assert result.inputs["bonus"] == pytest.approx(0.25)
    assert result.score == pytest.approx(8.00962, abs=1e-4)


def test_search_and_read_on_one_file_stack_five_percent():
    result = scored(search("find", "MemoryManager"), read("src/MemoryManager.h"))
    assert result.inputs["convergence"]["search_and_read"] is True
    assert result.inputs["bonus"] == pytest.approx(0.15)


def test_a_failed_build_on_the_target_does_not_converge():
    # read 0.55, git 0.75, verification 0.15; only read and git confirm MemoryManager:
    # base = (1.65 + 0.75 + 1.5 * 0.15) / 5.5 = 2.625 / 5.5 = 0.477273
    # bonus 0.10 -> 0.477273 + 0.10 * 0.522727 = 0.529545 -> 5.29545
    result = scored(
        read("src/MemoryManager.h", "MemoryManager"),
        tool("git", "log_matching", "MemoryManager"),
        tool("cmake", "failed", "MemoryManager"),
    )
    assert result.inputs["convergence"]["categories"] == ["read", "git"]
    assert result.score == pytest.approx(5.29545, abs=1e-4)


def test_paths_quotes_and_case_still_meet():
    result = scored(search("grep", '"memorymanager"'), read("src\\core\\MemoryManager.h"))
    # The term as first written, without its quotes.
    assert result.inputs["convergence"]["term"] == "memorymanager"
    assert result.inputs["bonus"] == pytest.approx(0.15)


def test_the_summary_names_the_search_and_read_target_among_equals():
    # Arena (read and git) and Pool (search and read) both join two categories; Pool also
    # earns the search + read bonus, so it is the one named.
    result = scored(
        read("src/Arena.cpp"),
        tool("git", "log_matching", "Arena"),
        search("grep", "Pool"),
        read("src/Pool.cpp"),
    )
    assert result.inputs["convergence"]["term"] == "Pool"
    assert result.inputs["bonus"] == pytest.approx(0.15)


# One search tool (0.65) and a confirmed read (0.80): base = 4.025 / 5.5 = 0.731818.
# Meeting on one target adds 0.15 of the distance to 1.0: 0.772045, the strong band.
MET = 7.72045
NOT_MET = 7.31818


@pytest.mark.parametrize(
    ("searched", "path", "score", "summary"),
    [
        # docs/scoring.md's example: every directory goes, not only the first.
        (
            '"MemoryManager"',
            "src/core/MemoryManager.h",
            MET,
            "Strong evidence: read and search agree on MemoryManager (0.77).",
        ),
        # Five characters is still a short extension.
        (
            "Toolchain",
            "cmake/Toolchain.cmake",
            MET,
            "Strong evidence: read and search agree on Toolchain (0.77).",
        ),
        # Only the last extension goes: engine.pb.h and engine.pb.cc are one unit.
        (
            "engine.pb.cc",
            "gen/engine.pb.h",
            MET,
            "Strong evidence: read and search agree on engine.pb (0.77).",
        ),
        # Six characters is not a short extension: build.gradle is not the symbol build.
        (
            "build",
            "app/build.gradle",
            NOT_MET,
            "Adequate evidence: read and search found results, on no shared target (0.73).",
        ),
        # A name that starts with a dot is all name, no extension: it is kept whole.
        (
            ".gitignore",
            ".gitignore",
            MET,
            "Strong evidence: read and search agree on .gitignore (0.77).",
        ),
    ],
)
def test_which_file_names_meet_a_search(searched, path, score, summary):
    result = scored(search("find", searched), read(path))
    assert result.score == pytest.approx(score, abs=1e-4)
    assert result.summary == summary


def test_different_targets_earn_no_bonus():
    result = scored(search("grep", "MemoryManager"), read("src/MemoryPool.h", "MemoryPool"))
    # No shared target: nothing named, not even a placeholder.
    assert result.inputs["convergence"] == {"term": "", "categories": [], "search_and_read": False}
    assert result.inputs["bonus"] == 0.0


def test_the_bonus_keeps_the_result_at_most_one():
    # Every category at its best on X (discovery has no target):
    # base = (2.5 * 0.92 + 3.0 * 0.88 + 1.5 * 0.93 + 0.85 + 0.75 + 0.80) / 10
    #      = 8.735 / 10 = 0.8735
    # bonus 0.25 -> 0.8735 + 0.25 * 0.1265 = 0.905125 -> 9.05125 (multiplying would give 10.92)
    result = scored(
        search("find", "X"),
        search("grep", "X"),
        search("references", "X"),
        read("src/X.h"),
        read("src/X.cpp"),
        read("src/X.inl"),
        tool("ctest", "all_passed", "X"),
        discovery(4),
        tool("git", "log_matching", "X"),
        tool("gh", "run_log", "X"),
    )
    assert result.score == pytest.approx(9.05125)
    assert result.score <= 10.0


# --------------------------------------------------------------------- recovery and errors


def test_a_recovery_that_finds_nothing_is_neutral():
    # Were the empty recovery grep counted, the read alone would drop from 5.5 to 3.0.
    result = scored(
        read("src/MemoryManager.h"), search("grep", "Allocator", matches=0, recovery=True)
    )
    assert result.score == pytest.approx(5.5)


def test_a_recovery_that_finds_something_raises_its_category():
    # The primary grep found nothing (3.0 alone with the read); the recovery grep's results
    # make it find + read on one target: 7.72045.
    result = scored(
        search("grep", "MemoryMgr", matches=0),
        read("src/MemoryManager.h"),
        search("grep", "MemoryManager", recovery=True),
    )
    assert result.score == pytest.approx(7.72045, abs=1e-4)
    assert result.inputs["recovery_left_out"] is False


def test_an_empty_recovery_does_not_cancel_a_useful_one():
    # The recovery grep makes it find + read on one target (7.72045). Were the empty recovery
    # git counted as a category at 0, the two together would give
    # (1.625 + 2.4 + 0) / 6.5 = 0.619231 + 0.15 * 0.380769 = 0.676346 -> 6.76.
    result = scored(
        read("src/MemoryManager.h"),
        search("grep", "MemoryManager", recovery=True),
        tool("git", "status", recovery=True),
    )
    assert result.score == pytest.approx(7.72045, abs=1e-4)
    assert "git" not in result.inputs["categories"]


def test_a_recovery_in_a_new_weak_category_does_not_lower_the_score():
    # Counted, the failed build would give (4.4 + 0.225) / 7.0 = 0.660714 + 0.15 * 0.339286
    # = 0.711607 -> 7.12; recovery never lowers, so the score stays 8.3.
    result = scored(*FIND_READ_GREP_READ, tool("cmake", "failed", "MemoryManager", recovery=True))
    assert result.score == pytest.approx(8.3)
    assert result.inputs["recovery_left_out"] is True
    # The reviewer is told why the failed build is missing from the categories.
    factors = [impact.factor for impact in result.explanation]
    assert factors == ["read", "search", "convergence", "recovery"]
    left_out = result.explanation[-1]
    assert (left_out.points, left_out.detail) == (
        0.0,
        "recovery calls left out: they would have lowered the score",
    )


def test_a_worse_recovery_in_the_same_category_changes_nothing():
    result = scored(tool("cmake", "built_target"), tool("cmake", "failed", recovery=True))
    assert result.inputs["categories"]["verification"] == 0.80


def test_a_better_recovery_in_the_same_category_counts():
    # discovery 2 factors (0.25) then a recovery scan with 4: 0.85 / 2.0 = 0.425 -> 4.25
    assert scored(discovery(2), discovery(4, recovery=True)).score == pytest.approx(4.25)


def test_an_errored_search_adds_nothing_and_lowers_nothing():
    # Its reported matches are ignored (no confirmation for the read), and it does not count
    # as a search that found nothing (which would give 3.0).
    result = scored(search("grep", "MemoryManager", matches=5, error=True), read("src/a.cpp"))
    assert result.inputs["categories"] == {"read": 0.55}
    assert result.score == pytest.approx(5.5)


def test_an_errored_read_adds_nothing():
    result = scored(search("find", "MemoryManager"), read("src/MemoryManager.h", error=True))
    assert result.inputs["categories"] == {"search": 0.65}
    assert result.inputs["errored_entries"] == 1


TARGETS = st.sampled_from(["MemoryManager", "Allocator", ""])
ENTRIES = st.one_of(
    st.builds(
        search, st.sampled_from(["find", "grep", "references"]), TARGETS, st.sampled_from([0, 3])
    ),
    st.builds(
        lambda n, t: read(f"src/{n}.h", t), st.sampled_from(["MemoryManager", "Pool"]), TARGETS
    ),
    st.builds(discovery, st.integers(0, 4)),
    st.builds(
        tool,
        st.just("cmake"),
        st.sampled_from(["failed", "no_op", "built_other", "built_target", None]),
        TARGETS,
    ),
    st.builds(
        tool, st.just("ctest"), st.sampled_from(["failed", "none_run", "all_passed"]), TARGETS
    ),
    st.builds(tool, st.just("git"), st.sampled_from(["status", "log_matching"]), TARGETS),
    st.builds(tool, st.just("gh"), st.sampled_from(["empty", "run_log"]), TARGETS),
)


@given(st.lists(ENTRIES, min_size=1, max_size=6), st.lists(ENTRIES, min_size=1, max_size=4))
def test_recovery_calls_never_lower_the_score(primary, recovery):
    before = scored(*primary).score
    after = scored(*primary, *({**entry, "recovery": True} for entry in recovery)).score
    assert after >= before - 1e-9


@given(st.lists(ENTRIES, min_size=1, max_size=6), st.lists(ENTRIES, min_size=1, max_size=4))
def test_errored_calls_change_nothing(calls, errored):
    before = scored(*calls).score
    assert scored(*calls, *({**entry, "error": True} for entry in errored)).score == before


# --------------------------------------------------------------------- the interface


def test_applies_only_to_outputs_with_evidence_entries():
    assert SCORER.applies(output(read("a.cpp"))) is True
    assert SCORER.applies(output()) is False
    assert SCORER.applies(output(evidence=False)) is False


def test_the_explanation_adds_up_to_the_score():
    result = scored(*FIND_READ_GREP_READ)
    assert [impact.factor for impact in result.explanation] == ["read", "search", "convergence"]
    # read 10 * 3.0 * 0.80 / 5.5 = 4.3636, search 10 * 2.5 * 0.80 / 5.5 = 3.6364,
    # convergence 10 * 0.15 * 0.20 = 0.30
    assert [impact.points for impact in result.explanation] == pytest.approx(
        [4.3636, 3.6364, 0.30], abs=1e-4
    )
    assert sum(impact.points for impact in result.explanation) == pytest.approx(result.score)


@pytest.mark.parametrize(
    ("entry", "summary"),
    [
        # 0.50 * 1.0 / 2.0 = 0.25, the seed's "discovery only" at the bottom of its weak band.
        (discovery(2), "Weak evidence: only discovery found results (0.25)."),
        # 3.0 * 0.55 / 3.0 = 0.55, a read without search at the bottom of the adequate band.
        (read("src/MemoryManager.h"), "Adequate evidence: only read found results (0.55)."),
    ],
)
def test_a_result_on_a_band_floor_is_in_that_band(entry, summary):
    assert scored(entry).summary == summary


def test_the_documented_worked_example():
    # docs/scoring.md ("evidence_categories", worked example): read 0.80, search 0.65, git
    # 0.75 over 6.5, base 0.7346; all three on memorymanager, bonus 0.25: 0.8010.
    result = scored(
        search("grep", "MemoryManager", matches=14, match="identifier", exact_match_count=9),
        search("find", "MemoryManager", error=True),
        read("src/core/MemoryManager.h", "MemoryManager", outcome="top_ranked"),
        read("src/core/MemoryManager.cpp", "MemoryManager", outcome="ranked"),
        tool(
            "git",
            "log_matching",
            "MemoryManager",
            query="log --grep MemoryManager",
            match_count=3,
        ),
        tool("gh", "empty", query="run list", recovery=True),
    )
    assert result.score == pytest.approx(8.00962, abs=1e-4)
    assert result.summary == "Strong evidence: read, search and git agree on MemoryManager (0.80)."
    # Points: 10 * 3.0 * 0.80 / 6.5, 10 * 2.5 * 0.65 / 6.5, 10 * 1.0 * 0.75 / 6.5, and
    # 10 * 0.25 * (1 - 0.734615) for the convergence.
    assert [impact.factor for impact in result.explanation] == [
        "read",
        "search",
        "git",
        "convergence",
        "errors",
    ]
    assert [impact.points for impact in result.explanation] == pytest.approx(
        [3.69231, 2.5, 1.15385, 0.66346, 0.0], abs=1e-4
    )
    assert [impact.detail for impact in result.explanation] == [
        "read 0.80 (confirmed by search) × weight 3.0/6.5",
        "search 0.65 (results, unconfirmed by a second search tool) × weight 2.5/6.5",
        "git 0.75 (history found) × weight 1.0/6.5",
        "read, search and git agree on MemoryManager: +25% of the distance to 1.0 (0.73 → 0.80)",
        "1 errored tool call counts for nothing",
    ]
    assert result.inputs == {
        "categories": {"read": 0.80, "search": 0.65, "git": 0.75},
        "weights": pytest.approx({"read": 3.0 / 6.5, "search": 2.5 / 6.5, "git": 1.0 / 6.5}),
        "weight_total": 6.5,
        "base": pytest.approx(0.734615, abs=1e-6),
        "convergence": {
            "term": "MemoryManager",
            "categories": ["read", "search", "git"],
            "search_and_read": True,
        },
        "bonus": pytest.approx(0.25),
        "result": pytest.approx(0.800962, abs=1e-6),
        "recovery_left_out": False,
        "errored_entries": 1,
    }


def test_the_summary_names_the_band_and_the_agreement():
    assert (
        scored(*FIND_READ_GREP_READ).summary
        == "Strong evidence: read and search agree on MemoryManager (0.83)."
    )
    assert scored(discovery(3)).summary == "Weak evidence: only discovery found results (0.35)."


def test_inputs_are_json_and_the_scorer_sets_no_decision():
    result = scored(*FIND_READ_GREP_READ, tool("git", "status", recovery=True))
    assert json.loads(json.dumps(result.inputs)) == result.inputs
    assert result.inputs["convergence"]["categories"] == ["read", "search"]
    assert (result.decision, result.level, result.interval) == (None, None, None)
    assert (SCORER.name, SCORER.version) == ("evidence_categories", "1")


def test_only_empty_recovery_calls_are_no_evidence():
    result = scored(search("grep", "MemoryManager", matches=0, recovery=True))
    assert result.score == 0.0
    assert (
        result.summary
        == "Insufficient evidence: every tool call errored or came back empty (0.00)."
    )


# --------------------------------------------------------------------- conditions, in words


def details(result):
    return [impact.detail for impact in result.explanation]


@pytest.mark.parametrize(
    ("entries", "expected"),
    [
        # A grep that found nothing (0.00) beside a read it cannot confirm (0.55), over
        # 3.0 + 2.5 = 5.5; no call confirms a target the other shares, so no convergence.
        (
            (search("grep", "Allocator", matches=0), read("src/MemoryManager.h")),
            [
                "read 0.55 (no search confirmation) × weight 3.0/5.5",
                "search 0.00 (no results) × weight 2.5/5.5",
            ],
        ),
        # Search alone weighs 2.5, above the minimum total of 2.0.
        (
            (search("find", "MemoryManager"), search("grep", "MemoryManager")),
            ["search 0.80 (two search tools agree on one target) × weight 2.5/2.5"],
        ),
        (
            (
                search("find", "MemoryManager"),
                search("grep", "MemoryManager"),
                search("references", "MemoryManager"),
            ),
            ["search 0.92 (find, grep and references agree on one target) × weight 2.5/2.5"],
        ),
        # The light categories alone are spread over the minimum total of 2.0.
        ((discovery(0),), ["discovery 0.20 (0 of 4 factors) × weight 1.0/2.0"]),
        ((tool("cmake"),), ["verification 0.00 (no result) × weight 1.5/2.0"]),
        ((tool("git", "status"),), ["git 0.00 (no history) × weight 1.0/2.0"]),
        ((tool("gh", "run_list"),), ["ci 0.80 (CI runs found) × weight 1.0/2.0"]),
        ((tool("gh", "empty"),), ["ci 0.00 (no CI data) × weight 1.0/2.0"]),
        # cmake built_target and ctest some_passed both score 0.80; the first call to reach
        # the category's best names the condition, a later tie does not replace it.
        (
            (tool("ctest", "some_passed"), tool("cmake", "built_target")),
            ["verification 0.80 (build passed, some tests ran) × weight 1.5/2.0"],
        ),
        (
            (tool("cmake", "built_target"), tool("ctest", "some_passed")),
            ["verification 0.80 (build passed) × weight 1.5/2.0"],
        ),
    ],
)
def test_each_category_names_its_condition(entries, expected):
    assert details(scored(*entries)) == expected


# --------------------------------------------------------------------- returned results


def test_a_single_match_is_a_search_result():
    # match_count 1 > 0: one search tool with results, 0.65 over 2.5 -> 6.5
    result = scored(search("grep", "MemoryManager", matches=1))
    assert result.inputs["categories"] == {"search": 0.65}
    assert result.score == pytest.approx(6.5)


def test_a_single_git_match_is_history():
    # match_count 1 > 0 with no outcome: git 0.75, alone over 2.0 -> 0.375 -> 3.75
    result = scored(tool("git", match_count=1))
    assert result.inputs["categories"] == {"git": 0.75}
    assert result.score == pytest.approx(3.75)


def test_a_search_without_a_target_is_one_tool():
    # Results but no term to agree on: one tool, 0.65 over 2.5 -> 6.5
    result = scored(search("grep", "", matches=3))
    assert result.inputs["categories"] == {"search": 0.65}
    assert details(result) == [
        "search 0.65 (results, unconfirmed by a second search tool) × weight 2.5/2.5"
    ]


def test_a_passing_build_on_the_target_converges():
    # read 0.55 (no search), verification 0.80, both on Pool:
    # base = (3.0 * 0.55 + 1.5 * 0.80) / 4.5 = 2.85 / 4.5 = 0.633333
    # bonus 0.10 -> 0.633333 + 0.10 * 0.366667 = 0.67 -> 6.7
    result = scored(read("src/Pool.cpp"), tool("cmake", "built_target", "Pool"))
    assert result.inputs["convergence"] == {
        "term": "Pool",
        "categories": ["read", "verification"],
        "search_and_read": False,
    }
    assert result.inputs["bonus"] == pytest.approx(0.10)
    assert result.score == pytest.approx(6.7)


def test_files_are_distinct_by_their_lower_cased_name():
    # Straße.cpp and Strasse.cpp lower-case to different names: three distinct files on the
    # searched target allocate -> read 0.88.
    scores = category_scores(
        search("grep", "allocate"),
        read("src/Straße.cpp", "allocate"),
        read("src/Strasse.cpp", "allocate"),
        read("src/Heap.cpp", "allocate"),
    )
    assert scores["read"] == 0.88


# --------------------------------------------------------------------- targets


@pytest.mark.parametrize(
    ("entries", "expected"),
    [
        # git on main and gh on ci.yml (targets, no queries): (0.75 + 0.80) / 2.0 = 0.775
        ((tool("git", "log", "main"), tool("gh", "run_list", "ci.yml")), 7.75),
        # discovery and git with neither target nor query: (0.85 + 0.75) / 2.0 = 0.80
        ((discovery(4), tool("git", "log")), 8.0),
        # A read of Pool.cpp and git asked "log" (queries, no targets):
        # (3.0 * 0.55 + 1.0 * 0.75) / 4.0 = 2.4 / 4.0 = 0.60
        ((read("src/Pool.cpp"), tool("git", "log", query="log")), 6.0),
    ],
)
def test_an_empty_target_or_query_is_not_a_shared_target(entries, expected):
    result = scored(*entries)
    assert result.inputs["convergence"] == {"term": "", "categories": [], "search_and_read": False}
    assert result.inputs["bonus"] == 0.0
    assert result.score == pytest.approx(expected)


def test_the_first_search_and_read_target_is_kept_among_equals():
    # Pool (search and read) comes before Arena (read and git); both join two categories and
    # Arena does not earn the search + read bonus, so Pool stays named.
    # read 0.80, search 0.65, git 0.75: base = (2.4 + 1.625 + 0.75) / 6.5 = 0.734615
    # bonus 0.10 + 0.05 -> 0.734615 + 0.15 * 0.265385 = 0.774423 -> 7.74423
    result = scored(
        search("grep", "Pool"),
        read("src/Pool.cpp"),
        read("src/Arena.cpp"),
        tool("git", "log_matching", "Arena"),
    )
    assert result.inputs["convergence"] == {
        "term": "Pool",
        "categories": ["read", "search"],
        "search_and_read": True,
    }
    assert result.score == pytest.approx(7.74423, abs=1e-4)
    assert result.summary == "Strong evidence: read and search agree on Pool (0.77)."


def test_more_categories_beat_search_and_read_on_fewer():
    # Arena joins read, git and ci; Pool only search and read. Arena is named with the
    # three-category bonus, and search + read on Pool still adds its 0.05.
    # read 0.80, search 0.65, git 0.75, ci 0.80 over 7.5:
    # base = (2.4 + 1.625 + 0.75 + 0.80) / 7.5 = 5.575 / 7.5 = 0.743333
    # bonus 0.20 + 0.05 -> 0.743333 + 0.25 * 0.256667 = 0.8075 -> 8.075
    result = scored(
        read("src/Arena.cpp"),
        tool("git", "log_matching", "Arena"),
        tool("gh", "run_log", "Arena"),
        search("grep", "Pool"),
        read("src/Pool.cpp"),
    )
    assert result.inputs["convergence"] == {
        "term": "Arena",
        "categories": ["read", "git", "ci"],
        "search_and_read": True,
    }
    assert result.inputs["bonus"] == pytest.approx(0.25)
    assert result.score == pytest.approx(8.075)


def test_nothing_confirmed_has_no_search_and_read():
    result = scored(search("grep", "MemoryManager", matches=0))
    assert result.inputs["convergence"]["search_and_read"] is False


# --------------------------------------------------------------------- recovery and errors, more


def test_an_empty_recovery_before_other_calls_is_neutral():
    # The empty recovery grep is skipped, the read after it still counts: 0.55 -> 5.5
    result = scored(
        search("grep", "Allocator", matches=0, recovery=True), read("src/MemoryManager.h")
    )
    assert result.inputs["categories"] == {"read": 0.55}
    assert result.score == pytest.approx(5.5)


def test_a_recovery_that_leaves_the_score_unchanged_is_kept():
    # find and grep agree on X: search 0.80, alone 2.5 * 0.80 / 2.5 = 0.80.
    # The recovery build (0.80, on another target) adds verification:
    # (2.5 * 0.80 + 1.5 * 0.80) / 4.0 = 3.2 / 4.0 = 0.80, the same: it does not lower the
    # score, so it is not left out.
    result = scored(
        search("find", "X"),
        search("grep", "X"),
        tool("cmake", "built_target", "app", recovery=True),
    )
    assert result.inputs["categories"] == {"search": 0.80, "verification": 0.80}
    assert result.inputs["recovery_left_out"] is False
    assert result.score == pytest.approx(8.0)


def test_no_evidence_has_every_input_at_zero():
    result = scored(
        search("grep", "MemoryManager", error=True),
        search("find", "MemoryManager", matches=0, recovery=True),
    )
    assert result.inputs == {
        "categories": {},
        "weights": {},
        "weight_total": 0.0,
        "base": 0.0,
        "convergence": {"term": "", "categories": [], "search_and_read": False},
        "bonus": 0.0,
        "result": 0.0,
        "recovery_left_out": False,
        "errored_entries": 1,
    }
    assert result.inputs["convergence"]["search_and_read"] is False
    assert result.score == 0.0
