"""Reviewers who are not Dawid-Skene (simulator/world.py, ReviewerFlaws), by hand,
and in the closed loop."""

import numpy as np
import pytest

from learning.statistics import labels
from simulator import loop, world

A, M, R = world.Action.APPROVE, world.Action.MODIFY, world.Action.REJECT
HARSH = world.DEFAULT_REVIEWERS[1]  # good: approve 0.70, modify 0.18, reject 0.12
FLAWS = world.ReviewerFlaws(blind_share=0.1, blind_approve=0.7)


def test_errors_scale_with_difficulty_spread_as_the_matrix_spreads_them():
    # Harsh errs on a good output 30 % of the time, 0.18 : 0.12 between modify and reject.
    # At difficulty 0.25 that is 0.3 x 2 x 0.25 = 0.15: modify 0.09, reject 0.06.
    row = FLAWS.row(HARSH, world.Truth.GOOD, difficulty=0.25, blind=False)
    assert row == pytest.approx({A: 0.85, M: 0.09, R: 0.06})
    # At 0.5, the matrix itself; at 1, twice its errors: 0.6.
    assert FLAWS.row(HARSH, world.Truth.GOOD, difficulty=0.5, blind=False) == pytest.approx(
        HARSH.matrix[world.Truth.GOOD]
    )
    assert FLAWS.row(HARSH, world.Truth.GOOD, difficulty=1.0, blind=False)[A] == pytest.approx(0.4)


def test_errors_are_capped():
    noisy = world.DEFAULT_REVIEWERS[3]  # needs an edit: modify 0.50, so errs 0.50
    row = FLAWS.row(noisy, world.Truth.NEEDS_EDIT, difficulty=1.0, blind=False)
    assert row[M] == pytest.approx(1 - world.ReviewerFlaws.MAX_ERROR)
    assert sum(row.values()) == pytest.approx(1.0)


def test_a_blind_spot_looks_good_to_everyone_but_only_where_there_is_a_fault():
    # Bad output, harsh reviewer at difficulty 0.5: approve 0, modify 0.03, reject 0.97;
    # blind, 0.7 goes to approve and the rest keeps its shape: 0.7, 0.009, 0.291.
    row = FLAWS.row(HARSH, world.Truth.BAD, difficulty=0.5, blind=True)
    assert row == pytest.approx({A: 0.7, M: 0.009, R: 0.291})
    assert FLAWS.row(HARSH, world.Truth.GOOD, difficulty=0.5, blind=True) == pytest.approx(
        HARSH.matrix[world.Truth.GOOD]
    )


def test_in_the_loop_faults_go_unseen_more_often():
    # The same traffic reviewed by the default reviewers with and without flaws: a tenth of
    # the faults are blind spots approved 7 times in 10, so the reviewers approve more of
    # the outputs that need an edit or are bad at their first verdict.
    config = loop.history_config(21, days=2, outputs_per_day=1500)
    settings = loop.LoopSettings(learn=False, reviews_per_day=10_000)
    plain = loop.run_history(config, settings)
    flawed = loop.run_history(config, loop.flawed_reviewers(settings))
    assert np.array_equal(plain.truth, flawed.truth)

    def approved_share(history) -> float:
        rows = history.verdicts
        _, first = np.unique(rows[:, 0], return_index=True)
        rows = rows[first]
        fault = history.truth[rows[:, 0]] != loop.GOOD
        chosen = rows[fault]
        return float((chosen[:, 2] == labels.APPROVE).mean())

    assert approved_share(flawed) > approved_share(plain) + 0.03
