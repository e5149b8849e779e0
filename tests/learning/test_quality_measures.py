"""The measures the learning-quality claims are judged by (learning/simulation/quality.py),
on histories built by hand."""

import numpy as np
import pytest

from learning.simulation import loop, quality, world

GOOD, EDIT = (world.TRUTHS.index(t) for t in (world.Truth.GOOD, world.Truth.NEEDS_EDIT))


def history(scores, truths, approved) -> loop.History:
    """One day of task type 0's outputs: final scores, truths, and which were approved."""
    n = len(scores)
    decision = np.full(n, loop.WARNING)
    decision[np.asarray(approved, dtype=bool)] = loop.APPROVED
    return loop.History(
        config=loop.history_config(1, days=1, outputs_per_day=n),
        settings=loop.LoopSettings(),
        task_type=np.zeros(n, dtype=int),
        truth=np.asarray(truths),
        block=np.zeros(n, dtype=int),
        decision=decision,
        runs=[],
        weights=[],
        failed=np.zeros((n, len(loop.VALIDATOR_NAMES)), dtype=bool),
        final_scores=np.asarray(scores, dtype=float),
    )


# 50 good outputs at 9.5; at 8.5, 40 good and 10 needing an edit. Within 5 % for edits, the
# best single threshold in hindsight is 9.5 (8.5 would take 10 edits in 100): half approved.
SCORES = [9.5] * 50 + [8.5] * 50
TRUTHS = [GOOD] * 50 + [GOOD] * 40 + [EDIT] * 10


@pytest.mark.parametrize(
    ("approved", "loss", "exceeds"),
    [
        # The 9.5s only: the best itself.
        (range(50), 0.0, False),
        # 40 of the 9.5s: a fifth lost.
        (range(40), 0.2, False),
        # The 9.5s and two good 8.5s: 4 % more than the best, all good.
        ([*range(50), 50, 51], -0.04, False),
        # The 9.5s and five 8.5s needing an edit: 5 in 55 is over 5 %.
        ([*range(50), *range(90, 95)], -0.1, True),
    ],
)
def test_hindsight_loss_against_the_best_single_threshold(approved, loss, exceeds):
    mask = np.zeros(len(SCORES), dtype=bool)
    mask[list(approved)] = True
    row = quality.hindsight_loss(history(SCORES, TRUTHS, mask))[0]
    assert row["hindsight_best"] == 0.5
    assert row["loss"] == pytest.approx(loss)
    assert row["exceeds"] is exceeds


def test_no_threshold_within_budget_has_no_loss():
    # Every output needs an edit: no threshold keeps within 5 %.
    row = quality.hindsight_loss(history([9.5] * 10, [EDIT] * 10, [True] * 10))[0]
    assert row["hindsight_best"] == 0.0
    assert row["loss"] is None


def test_the_best_threshold_in_hindsight_may_lie_between_any_grid_points():
    # 40 good outputs at 9.53, then 10 at 9.51 with two needing an edit: the threshold 9.52,
    # which no grid of tenths or fiftieths has, approves 40 in 50 at no error; 9.51 would
    # approve two edits in 50, 4 %, within 5 %, so the best is all 50; with three edits
    # among the 9.51s (6 %) it is the 40 above 9.52.
    scores = [9.53] * 40 + [9.51] * 10
    within = quality.hindsight_loss(
        history(scores, [GOOD] * 40 + [GOOD] * 8 + [EDIT] * 2, [True] * 40 + [False] * 10)
    )[0]
    assert within["hindsight_best"] == 1.0
    assert within["loss"] == pytest.approx(0.2)
    over = quality.hindsight_loss(
        history(scores, [GOOD] * 40 + [GOOD] * 7 + [EDIT] * 3, [True] * 40 + [False] * 10)
    )[0]
    assert over["hindsight_best"] == 0.8
    assert over["loss"] == 0.0


def test_a_threshold_takes_every_output_tied_at_it():
    # Ten outputs at 9.5, the last of them needing an edit: 9 of 10 good when taken together,
    # 10 % over budget. Sorted apart, the first nine alone would look like 90 % at no error.
    row = quality.hindsight_loss(history([9.5] * 10, [GOOD] * 9 + [EDIT], [False] * 10))[0]
    assert row["hindsight_best"] == 0.0
