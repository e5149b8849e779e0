"""The closed loop's ``warn_until_certified`` switch, at a team's scale (bench/team_scale.py
measures it over many seeds): nothing is auto-approved unless the latest thresholds run of
its task type certified the approve threshold, and what would have been is delivered as a
warning. Checked from the history's own record of runs and decisions, and against the same
seed without the switch."""

from datetime import UTC, datetime

import numpy as np
import pytest

from gating.models import TaskType
from learning import evidence, selectors
from learning.simulation import loop, quality

SEED = 3000
DAYS = 24


def _history(*, switch: bool) -> loop.History:
    return loop.run_history(
        loop.history_config(SEED, days=DAYS, outputs_per_day=2_000),
        loop.LoopSettings(warn_until_certified=switch),
    )


@pytest.fixture(scope="module")
def withheld_world() -> loop.History:
    return _history(switch=True)


def _certified_when_gated(history: loop.History) -> np.ndarray:
    """Per output, whether the latest thresholds run of its task type before the output's
    block certified the approve threshold (False before any run)."""
    certified = np.zeros(len(history.decision), dtype=bool)
    runs = sorted(history.runs, key=lambda r: r.block)
    for t in range(len(history.config.task_types)):
        mine = history.task_type == t
        own = [r for r in runs if r.task_type == t]
        for run, following in zip(own, [*own[1:], None], strict=True):
            # A run at the end of block b sets the gate for blocks b+1 onwards.
            end = following.block if following else history.block.max()
            span = mine & (history.block > run.block) & (history.block <= end)
            certified[span] = run.approve_state == "certified"
    return certified


def test_nothing_is_approved_under_an_uncertified_threshold(withheld_world):
    certified = _certified_when_gated(withheld_world)
    approved = withheld_world.decision == loop.APPROVED
    withheld = withheld_world.decision == loop.WITHHELD
    assert approved.any() and withheld.any()
    assert certified[approved].all()
    assert not certified[withheld].any()


def test_the_switch_only_turns_approvals_into_warnings(withheld_world):
    # Until the first certification both histories see the same traffic, scores and
    # thresholds: each output the switch withheld is one the plain loop approved.
    plain = _history(switch=False)
    first = min(r.block for r in withheld_world.runs if r.approve_state == "certified")
    before = withheld_world.block <= first
    assert np.array_equal(
        withheld_world.decision[before] == loop.WITHHELD,
        plain.decision[before] == loop.APPROVED,
    )
    same = withheld_world.decision[before] != loop.WITHHELD
    assert np.array_equal(withheld_world.decision[before][same], plain.decision[before][same])
    assert quality.approved_share(withheld_world) < quality.approved_share(plain)


def test_the_loop_runs_what_a_new_task_type_gets():
    assert (
        loop.LoopSettings().warn_until_certified
        is TaskType._meta.get_field("warn_until_certified").get_default()
    )


def test_without_the_switch_nothing_is_withheld():
    settings = loop.LoopSettings(warn_until_certified=False)
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


def test_production_weighs_a_withheld_audit_by_its_own_stratum():
    # Warnings are audited at 0.5, approvals at 0.1. A withheld output, drawn at the
    # approved rate, is not a warning drawn too sparsely: it is kept, and its weight is
    # 1 / (0.1 x the share of withheld audits decided, 2 of 4), 20.
    task_type = TaskType(pk=7, audit_rate_approved=0.1, audit_rate_warning=0.5)
    withheld = _verdict("warning", True, 0.1)
    sparse_warning = _verdict("warning", False, 0.1)
    kept, dropped = evidence._current_design([withheld, sparse_warning], {7: task_type})
    assert kept == [withheld] and dropped == {7: 1}
    coverage = {(7, "withheld"): (4, 2), (7, "warning"): (10, 10)}
    assert 1 / evidence._achieved([withheld], coverage)[0] == pytest.approx(20.0)
