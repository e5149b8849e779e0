"""One weighting policy in production and in the closed loop that proves it.

``learning.statistics.sampling`` by hand; then a closed-loop history (simulator/
loop.py) stored as the queue would hold it, its held outputs and audits, reviewed or still
waiting, and weighed by the learning cycles' evidence (``learning.evidence``): each judged
output gets the weight the loop gave it."""

from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from gating import scoring
from gating.models import Output, ReviewItem, TaskType
from learning import evidence
from learning.statistics import sampling
from simulator import loop
from tests.learning.test_alerts import decide, ingest


def test_achieved_inclusion_by_hand():
    rate = [1.0, 0.2, 0.2, 0.1]
    drawn = [10, 50, 0, 40]
    reviewed = [4, 10, 0, 0]
    # Held, 4 of 10 reviewed: 1 x 0.4. Audit at 0.2, 10 of 50 reviewed: 0.2 x 0.2 = 0.04.
    # Nothing counted as drawn: the rate, 0.2. A judged output whose stratum counts no
    # review counts itself: 0.1 x 1 / 40 = 0.0025.
    assert sampling.achieved_inclusion(rate, drawn, reviewed) == pytest.approx(
        [0.4, 0.04, 0.2, 0.0025]
    )
    # Never more than the rate, however many reviews are counted.
    assert sampling.achieved_inclusion([0.3], [5], [9]) == pytest.approx([0.3])
    # One rate for strata of their own counts: 0.5 x 2/4, and 0.5 where none was drawn.
    assert sampling.achieved_inclusion(0.5, [4, 0], [2, 0]) == pytest.approx([0.25, 0.5])


START = datetime(2026, 3, 2, tzinfo=UTC)
BLOCK = timedelta(hours=24 // loop.BLOCKS_PER_DAY)
DECISION = {
    loop.APPROVED: ("approved", False),
    loop.WARNING: ("warning", False),
    loop.WITHHELD: ("warning", True),
}


@pytest.fixture(
    scope="module",
    params=[scoring.ApproveRequires.NOTHING, scoring.ApproveRequires.CERTIFIED],
    ids=["approving", "withholding"],
)
def history(request) -> loop.History:
    # Two days, audits drawn densely and too few reviews for the queue, so that every
    # stratum is drawn and part of it waits; no learning, so the rates stay as set. With
    # approvals that require a certified threshold, nothing certifies, so what would be
    # approved is withheld.
    return loop.run_history(
        loop.history_config(11, days=2, outputs_per_day=240),
        loop.LoopSettings(
            learn=False,
            reviews_per_day=60,
            audit_rate_approved=0.2,
            audit_rate_warning=0.3,
            double_review_rate=0.0,
            approve_requires=request.param,
        ),
    )


@pytest.mark.django_db
def test_production_weighs_a_loop_history_as_the_loop_does(history, gateway, user_in):
    reviewer = user_in("reviewer")
    settings = history.settings
    queued = np.flatnonzero(history.queued_at >= 0)
    approving = settings.approve_requires is scoring.ApproveRequires.NOTHING
    approval = loop.APPROVED if approving else loop.WITHHELD
    assert set(history.decision[queued]) == {loop.HELD, loop.WARNING, approval}
    reviewed = queued[history.reviewed_at[queued] >= 0]
    assert 0 < len(reviewed) < len(queued)  # and part of them still waiting

    # Each queued output, gated (held, in cold start) when its block began, then given
    # the loop's decision and draw rate.
    stored: dict[int, Output] = {}
    for t, kind in enumerate(history.config.task_types):
        for block in np.unique(history.block[queued]):
            mine = queued[(history.task_type[queued] == t) & (history.block[queued] == block)]
            if not len(mine):
                continue
            outputs = ingest(gateway, len(mine), at=START + int(block) * BLOCK, task_type=kind.name)
            stored.update(zip(mine.tolist(), outputs, strict=True))
    TaskType.objects.update(
        audit_rate_approved=settings.audit_rate_approved,
        audit_rate_warning=settings.audit_rate_warning,
    )
    for i in queued[history.decision[queued] != loop.HELD]:
        decision, withheld = DECISION[int(history.decision[i])]
        Output.objects.filter(pk=stored[i].pk).update(decision=decision, withheld=withheld)
        ReviewItem.objects.filter(output=stored[i]).update(
            kind="audit", is_audit=True, inclusion_probability=float(history.inclusion[i])
        )
    # Reviewed within the block the loop reviewed them in.
    for block in np.unique(history.reviewed_at[reviewed]):
        done = reviewed[history.reviewed_at[reviewed] == block]
        at = START + (int(block) + 1) * BLOCK - timedelta(minutes=1)
        decide([stored[i] for i in done], reviewer, "approve", at)

    last = int(history.block.max())
    until = START + (last + 1) * BLOCK
    found = evidence.judged_evidence(
        since=until - timedelta(days=settings.lookback_days), until=until
    )

    production = dict(zip(found.output_ids.tolist(), found.weights.tolist(), strict=True))
    closed_loop = loop.achieved_weights(history, reviewed, last)
    assert sorted(production) == sorted(stored[i].pk for i in reviewed)
    assert [production[stored[i].pk] for i in reviewed] == pytest.approx(closed_loop.tolist())
    # Not all ones: the held outputs that waited and the audits' rates count.
    assert len(set(np.round(closed_loop, 6))) >= 3
