"""What the closed loop's approvals require (``approve_requires``), at a team's scale
(bench/team_scale.py measures it over many seeds): nothing is auto-approved unless the
latest thresholds run of its task type gave the approve threshold the guarantee asked for,
and what would have been is delivered as a warning. Checked from the history's own record
of runs and decisions, and against the same seed approving whatever stands behind it."""

from datetime import UTC, datetime

import numpy as np
import pytest

from gating.models import TaskType
from gating.scoring import ApproveRequires
from learning import evidence, selectors
from simulator import loop, quality

# Slow (closed-loop histories): `make check` leaves it out.
pytestmark = pytest.mark.slow

SEED = 3000
DAYS = 24
# Eight reviewers, twice the team's four: with four, held outputs first, no approve
# threshold of this seed is certified within the 24 days, and the tests below compare what
# happens before and after one is (docs/learning.md, "At a team's scale").
REVIEWS_PER_DAY = 864


def _history(requires: ApproveRequires) -> loop.History:
    return loop.run_history(
        loop.history_config(SEED, days=DAYS, outputs_per_day=2_000),
        loop.LoopSettings(approve_requires=requires, reviews_per_day=REVIEWS_PER_DAY),
    )


@pytest.fixture(scope="module")
def certified_only() -> loop.History:
    return _history(ApproveRequires.CERTIFIED)


@pytest.fixture(scope="module")
def on_estimates() -> loop.History:
    return _history(ApproveRequires.ESTIMATE)


def _guarantee_when_gated(history: loop.History) -> np.ndarray:
    """Per output, what the latest thresholds run of its task type before the output's
    block put behind the approve threshold: "certified", "estimated" or "none" (also before
    any run)."""
    guarantee = np.full(len(history.decision), "none", dtype=object)
    runs = sorted(history.runs, key=lambda r: r.block)
    for t in range(len(history.config.task_types)):
        mine = history.task_type == t
        own = [r for r in runs if r.task_type == t]
        for run, following in zip(own, [*own[1:], None], strict=True):
            # A run at the end of block b sets the gate for blocks b+1 onwards.
            end = following.block if following else history.block.max()
            span = mine & (history.block > run.block) & (history.block <= end)
            if run.approve_state == "certified":
                guarantee[span] = "certified"
            elif run.estimated:
                guarantee[span] = "estimated"
    return guarantee


def test_nothing_is_approved_under_an_uncertified_threshold(certified_only):
    guarantee = _guarantee_when_gated(certified_only)
    approved = certified_only.decision == loop.APPROVED
    withheld = certified_only.decision == loop.WITHHELD
    assert approved.any() and withheld.any()
    assert (guarantee[approved] == "certified").all()
    assert not (guarantee[withheld] == "certified").any()
    # Nothing followed the estimates either: only the estimate setting does.
    assert not any(r.estimated for r in certified_only.runs)


def test_on_estimates_nothing_is_approved_without_one(on_estimates, certified_only):
    guarantee = _guarantee_when_gated(on_estimates)
    approved = on_estimates.decision == loop.APPROVED
    withheld = on_estimates.decision == loop.WITHHELD
    assert (guarantee[approved] != "none").all()
    # A certified threshold approves all that reaches it; an estimated line, only what
    # reaches the line as well.
    assert not (guarantee[withheld] == "certified").any()
    assert (guarantee[withheld] == "estimated").any()
    # Estimated approvals happen, and an estimate is never where a run certified.
    assert (guarantee[approved] == "estimated").any()
    assert not any(r.estimated and r.approve_state == "certified" for r in on_estimates.runs)
    # What the estimates buy: more of the last week approved than certified thresholds
    # alone approve, within the two budgets together in every task type.
    assert quality.approved_share(on_estimates) > quality.approved_share(certified_only)
    errors = quality.approved_error(on_estimates)
    assert all(r["true_edit_or_bad"] <= 0.06 for r in errors if r["approved"]), errors


def test_requiring_a_guarantee_only_turns_approvals_into_warnings(certified_only):
    # Until the first certification both histories see the same traffic, scores and
    # thresholds (neither follows estimates): each output withheld is one the plain loop
    # approved.
    plain = _history(ApproveRequires.NOTHING)
    first = min(r.block for r in certified_only.runs if r.approve_state == "certified")
    before = certified_only.block <= first
    assert np.array_equal(
        certified_only.decision[before] == loop.WITHHELD,
        plain.decision[before] == loop.APPROVED,
    )
    same = certified_only.decision[before] != loop.WITHHELD
    assert np.array_equal(certified_only.decision[before][same], plain.decision[before][same])
    assert quality.approved_share(certified_only) < quality.approved_share(plain)


def test_the_loop_runs_what_a_new_task_type_gets():
    default = TaskType._meta.get_field("approve_requires").get_default()
    assert loop.LoopSettings().approve_requires == default


def test_approving_anyway_withholds_nothing():
    settings = loop.LoopSettings(approve_requires=ApproveRequires.NOTHING)
    short = loop.run_history(loop.history_config(SEED, days=2, outputs_per_day=500), settings)
    assert (short.decision == loop.APPROVED).any()
    assert not (short.decision == loop.WITHHELD).any()


# ------------------------------------------------------------------ production's evidence


def _verdict(decision: str, withheld: bool, probability: float):
    return selectors.Verdict(
        output_id=1,
        task_type_id=7,
        model="m",
        tier="",
        score=9.0,
        validator_results=[],
        reviewer_id=1,
        action="approve",
        inclusion_probability=probability,
        is_audit=True,
        decided_at=datetime(2026, 3, 2, tzinfo=UTC),
        decision=decision,
        withheld=withheld,
    )


def test_production_weighs_a_withheld_audit_as_an_approved_one():
    # Warnings are audited at 0.5, approvals at 0.1. A withheld output, drawn at the
    # approved rate, is not a warning drawn too sparsely: it is kept, and its weight is
    # 1 / (0.1 x the share of approved audits, withheld or not, decided: 2 of 4), 20.
    task_type = TaskType(pk=7, audit_rate_approved=0.1, audit_rate_warning=0.5)
    withheld = _verdict("warning", True, 0.1)
    sparse_warning = _verdict("warning", False, 0.1)
    kept, dropped = evidence._current_design([withheld, sparse_warning], {7: task_type})
    assert kept == [withheld] and dropped == {7: 1}
    coverage = {(7, "approved"): (4, 2), (7, "warning"): (10, 10)}
    assert 1 / evidence._achieved([withheld], coverage)[0] == pytest.approx(20.0)
