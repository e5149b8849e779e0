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
