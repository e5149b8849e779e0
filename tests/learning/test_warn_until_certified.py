"""The closed loop's ``warn_until_certified`` switch, at a team's scale (bench/team_scale.py
measures it over many seeds): nothing is auto-approved unless the latest thresholds run of
its task type certified the approve threshold, and what would have been is delivered as a
warning. Checked from the history's own record of runs and decisions, and against the same
seed without the switch."""

import numpy as np
import pytest

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


def test_without_the_switch_nothing_is_withheld():
    settings = loop.LoopSettings()
    assert settings.warn_until_certified is False
    short = loop.run_history(loop.history_config(SEED, days=2, outputs_per_day=500), settings)
    assert (short.decision == loop.APPROVED).any()
    assert not (short.decision == loop.WITHHELD).any()
