"""The closed loop's queue (simulator/loop.py): audits first up to the reserved
share, then the held outputs before the other audits (``held_first``, production's order:
tests/gating/test_audit_share.py), or with it off everything oldest first;
checked from the history's record of when each output was queued and reviewed. And
``quality.queue_work``'s counts, against a queue built by hand."""

import numpy as np
import pytest

from simulator import loop, quality

# Scarce capacity, so that the queue backs up: 600 outputs a day, 60 reviews a day, no
# learning (the thresholds stay where they start, and so do the audit rates).
SETTINGS = loop.LoopSettings(learn=False, reviews_per_day=60)


def _history(**settings) -> loop.History:
    return loop.run_history(
        loop.history_config(5, days=4, outputs_per_day=600),
        loop.LoopSettings(**{**vars(SETTINGS), **settings}),
    )


def _audits_past_the_share_while_held_waited(history: loop.History) -> int:
    """Blocks in which more audits were reviewed than the reserved share allows although
    a held output queued by then was still waiting at the block's end."""
    settings = history.settings
    most = int((settings.reviews_per_day / loop.BLOCKS_PER_DAY + 1) * settings.audit_share)
    held = history.decision == loop.HELD
    audit = (history.queued_at >= 0) & ~held
    reviewed = history.reviewed_at
    over = 0
    for block in range(history.block.max() + 1):
        waiting = held & (history.queued_at <= block) & ((reviewed < 0) | (reviewed > block))
        over += int(waiting.any() and (audit & (reviewed == block)).sum() > most)
    return over


def test_the_loop_orders_the_queue_as_production_does_by_default():
    assert loop.LoopSettings().held_first


@pytest.mark.parametrize("held_first", [False, True])
def test_held_outputs_keep_their_turn_only_when_held_first(held_first):
    history = _history(held_first=held_first)
    held = history.decision == loop.HELD
    assert held.sum() > SETTINGS.reviews_per_day  # the queue backs up
    over = _audits_past_the_share_while_held_waited(history)
    if held_first:
        assert over == 0
    else:
        # Oldest first, the audits of earlier outputs go before later held ones.
        assert over > 0


def test_queue_work_counts_by_day():
    # Two days of one block each (blocks 0 and 4): a held output queued on day 0 and
    # reviewed on day 1; an audit drawn on day 0, reviewed the same day; an audit drawn on
    # day 1 and never reviewed; a delivered output never drawn.
    n = 4
    history = loop.History(
        config=loop.history_config(1, days=2, outputs_per_day=2),
        settings=loop.LoopSettings(),
        task_type=np.zeros(n, dtype=int),
        truth=np.zeros(n, dtype=int),
        block=np.array([0, 0, 4, 4]),
        decision=np.array([loop.HELD, loop.APPROVED, loop.WARNING, loop.APPROVED]),
        runs=[],
        weights=[],
        failed=np.zeros((n, len(loop.VALIDATOR_NAMES)), dtype=bool),
        final_scores=np.zeros(n),
        queued_at=np.array([0, 0, 4, -1]),
        reviewed_at=np.array([5, 1, -1, -1]),
    )
    work = quality.queue_work(history)
    assert work["audits_drawn"] == [1, 1]
    assert work["audits_reviewed"] == [1, 0]
    assert work["held_reviewed"] == [0, 1]
    # The only held output is of day 0, within the last 7 days: queued at block 0,
    # reviewed at block 5, 5 blocks of 6 hours.
    assert work["held_wait_days_last_week"] == 1.25
    assert work["open_at_end"] == 1
