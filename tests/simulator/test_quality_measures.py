"""The measures the learning-quality claims are judged by (simulator/quality.py),
on histories built by hand."""

import numpy as np
import pytest

from learning.statistics import thresholds
from simulator import loop, quality, world

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


def certified_run(**fields) -> loop.ThresholdRun:
    """Task type 0's thresholds run at block 0, both thresholds certified."""
    defaults = {
        "block": 0,
        "task_type": 0,
        "review": 4.0,
        "approve_state": "certified",
        "review_state": "certified",
        "audit_rate": 0.02,
    }
    return loop.ThresholdRun(**{**defaults, **fields})


# 50 good outputs at 9.5; at 8.5, 40 good and 10 needing an edit. Within 5 % for edits, the
# best single threshold in hindsight is 9.5 (8.5 would take 10 edits in 100): half approved.
SCORES = [9.5] * 50 + [8.5] * 50
TRUTHS = [GOOD] * 50 + [GOOD] * 40 + [EDIT] * 10


def test_claim_2_reads_each_gap_against_its_own_budget():
    # One run, by hand: at 9.0 the estimates are 0.041 / 0.0030 against truths 0.050 /
    # 0.0055, gaps 0.009 / 0.05 = 0.18 and 0.0025 / 0.01 = 0.25; at 9.5 nothing scored.
    h = history([9.2], [GOOD], [True])
    h.runs.append(
        certified_run(
            approve=9.0,
            estimated_error={9.0: 0.041, 9.5: float("nan")},
            true_error={9.0: 0.050, 9.5: float("nan")},
            estimated_bad={9.0: 0.0030, 9.5: float("nan")},
            true_bad={9.0: 0.0055, 9.5: float("nan")},
        )
    )
    gaps = quality.estimate_gaps(h)
    assert gaps["edit"][0] == pytest.approx(0.18) and np.isnan(gaps["edit"][1])
    assert gaps["bad"][0] == pytest.approx(0.25)
    assert quality.within_share(gaps["edit"]) == 1.0
    assert quality.within_share(gaps["bad"]) == 0.0
    assert quality.within_share([float("nan")]) is None


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


def test_the_estimate_curve_is_what_each_candidate_takes():
    rng = np.random.default_rng(5)
    n = 400
    window = thresholds.Window(
        # Scores on the grid itself as well as between its points: a candidate takes the
        # outputs scoring exactly it.
        scores=np.where(rng.random(n) < 0.3, 9.5, np.round(rng.uniform(8.0, 10.0, n), 3)),
        weights=rng.choice([1.0, 4.0, 10.0], n),
        loss_bad=rng.random(n) * 0.1,
        loss_edit=rng.random(n) * 0.3,
    )
    curve = loop.EstimateCurve.of(window)
    for i in np.flatnonzero(np.isin(curve.thresholds, [10.0, 9.9, 9.5, 9.48, 9.02, 8.0, 0.0])):
        taken = window.scores >= curve.thresholds[i]
        w = window.weights[taken]
        if not taken.any():
            assert curve.effective_n[i] == 0 and np.isnan(curve.edit[i])
            continue
        assert curve.effective_n[i] == pytest.approx(w.sum() ** 2 / (w**2).sum())
        assert curve.edit[i] == pytest.approx(np.average(window.loss_edit[taken], weights=w))
        assert curve.bad[i] == pytest.approx(np.average(window.loss_bad[taken], weights=w))


def curve(rows) -> loop.EstimateCurve:
    """An estimate curve by hand: (threshold, effective size, P(edit or bad), P(bad))."""
    columns = [np.array(c, dtype=float) for c in zip(*rows, strict=True)]
    return loop.EstimateCurve(*columns)


BUDGETS = thresholds.Budgets()  # 5 % for edits, 1 % for bad, delta 0.05: z = 1.6449


@pytest.mark.parametrize(
    ("rows", "certified"),
    [
        # Nothing at 10.0, and too few at 9.99 to test (298 clean outputs' bound is just
        # over 1 %: ln 0.05 / ln 0.99 = 298.07); at 9.98, 0.03 + 1.6449 sqrt(0.03 x 0.97 /
        # 1000) = 0.0389 and 0.001 + 0.0016 = 0.0026 pass; at 9.96, 0.045 + 0.0108 = 0.0558
        # fails, and the search stops there though 9.94 would pass.
        (
            [
                (10.0, 0, np.nan, np.nan),
                (9.99, 298, 0.2, 0.1),
                (9.98, 1000, 0.03, 0.001),
                (9.96, 1000, 0.045, 0.001),
                (9.94, 1000, 0.01, 0.0),
            ],
            9.98,
        ),
        # The budget for bad binds: 0.008 + 1.6449 sqrt(0.008 x 0.992 / 1000) = 0.0126.
        ([(9.98, 1000, 0.01, 0.004), (9.96, 1000, 0.01, 0.008)], 9.98),
        # Four times the evidence halves the margin: 0.045 + 0.0054 = 0.0504, still over.
        ([(9.98, 4000, 0.045, 0.0)], None),
        ([(9.98, 4000, 0.044, 0.0)], 9.98),  # 0.044 + 0.0053 = 0.0493
    ],
)
def test_the_floor_threshold_by_hand(rows, certified):
    assert quality.floor_threshold(curve(rows), BUDGETS) == certified


def test_the_floor_is_measured_beside_the_loss():
    # The last run's evidence certifies 9.5 at the floor (no error among 500 effective
    # outputs above it), but not 8.5: the floor takes the 9.5s, the best in hindsight.
    h = history(SCORES, TRUTHS, [True] * 40 + [False] * 60)
    run = certified_run(
        approve=9.6,
        estimated_error={},
        true_error={},
        estimates=curve([(9.6, 0, np.nan, np.nan), (9.5, 500, 0.0, 0.0), (8.5, 1000, 0.1, 0.0)]),
    )
    h.runs.append(run)
    row = quality.hindsight_loss(h)[0]
    assert row["floor_threshold"] == 9.5 and row["floor_loss"] == 0.0
    # The last threshold, 9.6, approves nothing on the final scores: all of the best lost.
    assert row["final_threshold"] == 9.6 and row["final_threshold_loss"] == 1.0
    assert row["loss"] == pytest.approx(0.2)


def test_claim_5_loss_summary_by_hand():
    # Losses 0.02, 0.04, 0.06, 0.08 and -0.05 (approved more than the oracle: 0). Mean
    # 0.04; sample sd sqrt(((-0.02)^2 + 0 + 0.02^2 + 0.04^2 + (-0.04)^2) / 4) = 0.031623;
    # one-sided 95 % Student t with 4 degrees of freedom is 2.131847: the upper limit is
    # 0.04 + 2.131847 x 0.031623 / sqrt(5) = 0.070149. The 90th percentile, linear between
    # the sorted 0.06 and 0.08 at 0.6 of the way: 0.072.
    summary = quality.loss_summary([0.02, 0.04, 0.06, 0.08, -0.05])
    assert summary == {"units": 5, "mean": 0.04, "mean_upper": 0.0701, "p90": 0.072}
    assert quality.loss_summary([0.1])["mean_upper"] is None
    assert quality.loss_summary([])["mean"] is None


def test_the_population_oracle_reads_fresh_traffic_scored_as_the_history_ended():
    history = loop.run_history(
        loop.history_config(3, days=2, outputs_per_day=800), loop.LoopSettings()
    )
    task_type, truth, scores = loop.fresh_sample(history, days=3)
    assert len(scores) == 3 * 800 and not np.array_equal(truth[:800], history.truth[:800])
    assert np.all((scores >= 0) & (scores <= 10))
    assert set(task_type.tolist()) == set(range(len(history.config.task_types)))
    rows = quality.population_loss(history, days=3)
    assert [r["task_type"] for r in rows] == [t.name for t in history.config.task_types]
    for r in rows:
        assert 0 < r["oracle_best"] <= 1
        assert r["loss"] == pytest.approx(1 - r["approved"] / r["oracle_best"], abs=1e-3)
