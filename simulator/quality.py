"""What the learning policy achieved in closed-loop histories (``loop``), measured against
the simulated world's ground truth: the figures behind docs/learning.md's claims, for
``bench/learning_quality.py`` and ``tests/learning/test_learning_quality.py``.

Every figure compares what the policy did or said with what was so: the truth of the
outputs it auto-approved, the true error above a threshold beside its estimate, the best
threshold in hindsight, a logistic model fitted to the true labels.
"""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np
from scipy.stats import t as student_t
from sklearn.linear_model import LogisticRegression

from learning.statistics import certify
from simulator import loop

GOOD = loop.GOOD
BAD = loop.BAD
LAST_DAYS = 7
# Claim 2: an estimate is close enough when within this share of its budget of the truth.
ESTIMATE_SHARE_OF_BUDGET = 0.2
RARE_DECISIVE = ("security", "schema")


def approved_error(history: loop.History) -> list[dict]:
    """Per task type, among the outputs auto-approved in the last 7 days: how many, their
    true share needing an edit or bad, and truly bad; and whether the approve threshold
    was certified in every run of those days."""
    last = history.last_days(LAST_DAYS)
    first_block = history.block[last].min()
    budgets = history.settings.budgets
    rows = []
    for t in range(len(history.config.task_types)):
        approved = last & (history.task_type == t) & (history.decision == loop.APPROVED)
        truth = history.truth[approved]
        runs = [r for r in history.runs if r.task_type == t and r.block >= first_block]
        edit = float((truth != GOOD).mean()) if len(truth) else 0.0
        bad = float((truth == BAD).mean()) if len(truth) else 0.0
        rows.append(
            {
                "task_type": history.config.task_types[t].name,
                "approved": int(approved.sum()),
                "true_edit_or_bad": round(edit, 5),
                "true_bad": round(bad, 5),
                "exceeds": edit > budgets.alpha_edit or bad > budgets.alpha_bad,
                "certified_throughout": bool(runs)
                and all(r.approve_state == "certified" for r in runs),
            }
        )
    return rows


def estimate_gaps(history: loop.History) -> dict[str, list[float]]:
    """|estimated - true| above 9.0 and 9.5 in every thresholds run of the last 7 days,
    per task type, as a share of the budget it is read against: P(needs an edit or bad)
    against alpha_edit ("edit") and P(bad) against alpha_bad ("bad"); NaN where nothing
    scored that high. Claim 2 holds where at least 90 % are within
    ``ESTIMATE_SHARE_OF_BUDGET``."""
    first_block = history.block[history.last_days(LAST_DAYS)].min()
    budgets = history.settings.budgets
    runs = [r for r in history.runs if r.block >= first_block]
    return {
        "edit": [
            abs(r.estimated_error[c] - r.true_error[c]) / budgets.alpha_edit
            for r in runs
            for c in r.estimated_error
        ],
        "bad": [
            abs(r.estimated_bad[c] - r.true_bad[c]) / budgets.alpha_bad
            for r in runs
            for c in r.estimated_bad
        ],
    }


def within_share(gaps: list[float]) -> float | None:
    """The share of the windows with a reading (not NaN) whose gap is within
    ``ESTIMATE_SHARE_OF_BUDGET``; None with none."""
    read = np.array(gaps, dtype=float)
    read = read[~np.isnan(read)]
    if not len(read):
        return None
    return float((read <= ESTIMATE_SHARE_OF_BUDGET).mean())


def queue_work(history: loop.History) -> dict:
    """What the reviewers did with the queue: per day, the audits drawn (planned) and the
    audits and held outputs reviewed that day; and over the last 7 days, the mean wait of
    held outputs in days, an output still open at the end counted as waiting until then."""
    days = history.config.days
    per_block = loop.BLOCKS_PER_DAY
    queued = history.queued_at >= 0
    reviewed = history.reviewed_at >= 0
    audit = queued & (history.decision != loop.HELD)
    held = history.decision == loop.HELD

    def per_day(blocks: np.ndarray) -> list[int]:
        return np.bincount(blocks // per_block, minlength=days)[:days].tolist()

    last_held = held & history.last_days(LAST_DAYS)
    end = days * per_block
    waited = np.where(reviewed, history.reviewed_at, end) - history.queued_at
    return {
        "audits_drawn": per_day(history.queued_at[audit]),
        "audits_reviewed": per_day(history.reviewed_at[audit & reviewed]),
        "held_reviewed": per_day(history.reviewed_at[held & reviewed]),
        "held_wait_days_last_week": round(float(waited[last_held].mean() / per_block), 2)
        if last_held.any()
        else None,
        "open_at_end": int((queued & ~reviewed).sum()),
    }


def approve_path(history: loop.History) -> list[dict]:
    """Per task type: where the approve threshold ended, its largest move over the last 10
    runs, and whether it ever reached 10.0."""
    rows = []
    for t in range(len(history.config.task_types)):
        values = [r.approve for r in history.runs if r.task_type == t]
        last_ten = values[-10:]
        rows.append(
            {
                "task_type": history.config.task_types[t].name,
                "final": values[-1] if values else None,
                "moved_last_10": round(max(last_ten) - min(last_ten), 4) if last_ten else None,
                "reached_top": any(v >= 10.0 for v in values),
                "final_state": next(
                    (r.approve_state for r in reversed(history.runs) if r.task_type == t), ""
                ),
            }
        )
    return rows


def held_share(history: loop.History) -> float:
    last = history.last_days(LAST_DAYS)
    return float((history.decision[last] == loop.HELD).mean())


def warning_bad_share(history: loop.History) -> float:
    """The true share bad among the outputs delivered as warnings in the last 7 days: what
    the held share buys (the warning band's budget, ``alpha_warning``, is on this)."""
    warned = history.last_days(LAST_DAYS) & (history.decision == loop.WARNING)
    return float((history.truth[warned] == BAD).mean()) if warned.any() else 0.0


def approved_share(history: loop.History) -> float:
    last = history.last_days(LAST_DAYS)
    return float((history.decision[last] == loop.APPROVED).mean())


def not_attainable_within(history: loop.History, runs: int, in_a_row: int) -> list[dict]:
    """Per task type: whether "not attainable" held ``in_a_row`` runs in a row within its
    first ``runs`` runs (the alert's rule), whether the approve threshold ever rose above
    where it started, and whether it ever rose in a run that did not certify the new value
    (a climb on no evidence; a budget met at the very top can be certified later)."""
    start = history.settings.approve
    rows = []
    for t in range(len(history.config.task_types)):
        states = [r.approve_state for r in history.runs if r.task_type == t]
        streak, opened = 0, False
        for state in states[:runs]:
            streak = streak + 1 if state == "not_attainable" else 0
            opened = opened or streak >= in_a_row
        rows.append(
            {
                "task_type": history.config.task_types[t].name,
                "alert_within": opened,
                "climbed": any(r.approve > start for r in history.runs if r.task_type == t),
                "climbed_uncertified": _climbed_uncertified(
                    [r for r in history.runs if r.task_type == t], start
                ),
            }
        )
    return rows


def _climbed_uncertified(runs: list, start: float) -> bool:
    before = start
    for r in runs:
        if r.approve > before and r.approve_state != "certified":
            return True
        before = r.approve
    return False


def hindsight_loss(history: loop.History) -> list[dict]:
    """Per task type: the auto-approved share of the last 7 days against the largest share
    any single threshold would have approved within both budgets, chosen knowing the
    truth (on the final scores); and whether what was auto-approved broke a budget.

    The loss is negative where the policy approved more than that best: its thresholds
    moved during the week and scored with the weights of their time, not the final ones.
    That is no loss where what it approved kept within both budgets, and no success where
    it did not.

    Beside it, on the final scores, the loss at the last approve threshold and at
    ``floor_threshold`` of the last run's evidence: roughly how much of the loss a tighter
    bound on the same verdicts could win back. The floor is not itself a valid bound (it
    can approve more than the best), so what it leaves is a guide, not a limit."""
    last = history.last_days(LAST_DAYS)
    budgets = history.settings.budgets
    errors = approved_error(history)
    rows = []
    for t in range(len(history.config.task_types)):
        mine = last & (history.task_type == t)
        scores = history.final_scores[mine]
        best = _best_share_within(
            scores, history.truth[mine], budgets.alpha_edit, budgets.alpha_bad
        )
        achieved = _approved_share(history, mine)
        runs = [r for r in history.runs if r.task_type == t]
        final = runs[-1].approve if runs else None
        floor = _last_floor(runs, budgets)
        rows.append(
            {
                "task_type": history.config.task_types[t].name,
                "approved": round(achieved, 4),
                "hindsight_best": round(best, 4),
                "loss": round(1 - achieved / best, 4) if best else None,
                "exceeds": errors[t]["exceeds"],
                "final_threshold": final,
                "final_threshold_loss": _loss_at(final, scores, best),
                "floor_threshold": floor,
                "floor_loss": _loss_at(floor, scores, best),
            }
        )
    return rows


# Claim 5's population oracle: a fresh sample of this many days of the world's traffic.
ORACLE_DAYS = 60


def population_loss(history: loop.History, *, days: int = ORACLE_DAYS) -> list[dict]:
    """Per task type: the last 7 days' auto-approved share against the population oracle,
    the largest share any single threshold approves within both budgets by the truth on
    ``days`` of fresh traffic from the same world scored as the history ended
    (``loop.fresh_sample``); and beside it, on that sample, the loss at the floor threshold
    of the last run's evidence (``floor_threshold``): the part of the loss that is the
    bound's own cost rather than the evidence's."""
    last = history.last_days(LAST_DAYS)
    budgets = history.settings.budgets
    task_type, truth, scores = loop.fresh_sample(history, days=days)
    rows = []
    for t in range(len(history.config.task_types)):
        approved = _approved_share(history, last & (history.task_type == t))
        fresh = task_type == t
        best = _best_share_within(
            scores[fresh], truth[fresh], budgets.alpha_edit, budgets.alpha_bad
        )
        floor = _last_floor([r for r in history.runs if r.task_type == t], budgets)
        rows.append(
            {
                "task_type": history.config.task_types[t].name,
                "approved": round(approved, 4),
                "oracle_best": round(best, 4),
                "loss": round(1 - approved / best, 4) if best else None,
                "floor_threshold": floor,
                "floor_loss": _loss_at(floor, scores[fresh], best),
            }
        )
    return rows


def loss_summary(losses: list[float], *, confidence: float = 0.95) -> dict:
    """Claim 5's figures over task types: the mean loss (each clipped at 0: approving more
    than the oracle wins nothing back), its one-sided upper ``confidence`` limit (Student's
    t over the task types), and the 90th percentile."""
    values = np.clip(np.asarray(losses, dtype=float), 0.0, None)
    n = len(values)
    if n == 0:
        return {"units": 0, "mean": None, "mean_upper": None, "p90": None}
    mean = float(values.mean())
    upper = (
        mean + float(student_t.ppf(confidence, n - 1)) * float(values.std(ddof=1)) / math.sqrt(n)
        if n > 1
        else None
    )
    return {
        "units": n,
        "mean": round(mean, 4),
        "mean_upper": None if upper is None else round(upper, 4),
        "p90": round(float(np.percentile(values, 90)), 4),
    }


def _approved_share(history: loop.History, mine: np.ndarray) -> float:
    return float((history.decision[mine] == loop.APPROVED).mean()) if mine.any() else 0.0


def _last_floor(runs: list[loop.ThresholdRun], budgets) -> float | None:
    """``floor_threshold`` of the last of a task type's runs, if it read any estimates."""
    if not runs or runs[-1].estimates is None:
        return None
    return floor_threshold(runs[-1].estimates, budgets)


def _loss_at(threshold: float | None, scores: np.ndarray, best: float) -> float | None:
    """The share of ``best`` that ``threshold`` would not approve among ``scores``."""
    if not best or threshold is None:
        return None
    return round(1 - float((scores >= threshold).mean()) / best, 4)


def floor_threshold(curve: loop.EstimateCurve, budgets) -> float | None:
    """The approve threshold that a bound as narrow as the sampling noise would certify on
    the same evidence: each estimate plus z_(1 - delta) standard errors of a share among
    Kish's effective size, the whole of delta (none for the label model, none for the
    weights' mean), candidates tested from the top down until one fails, as the real search
    does. Hardly any valid 1 - delta bound is narrower, so what is lost here is the
    evidence's price, not the bound's. As the search skips the candidates it cannot test,
    this skips those with fewer effective outputs than a clean record needs to meet the
    tighter budget (``certify.minimum_effective_sample``, 299 for 1 % at delta 0.05). None
    if no candidate passes."""
    z = NormalDist().inv_cdf(1 - budgets.delta)
    needed = certify.minimum_effective_sample(
        min(budgets.alpha_bad, budgets.alpha_edit), budgets.delta
    )
    certified = None
    for threshold, n, edit, bad in zip(
        curve.thresholds, curve.effective_n, curve.edit, curve.bad, strict=True
    ):
        if n < needed:
            continue  # too few to test, as the search would not
        within = all(
            mean + z * math.sqrt(mean * (1 - mean) / n) <= alpha
            for mean, alpha in ((edit, budgets.alpha_edit), (bad, budgets.alpha_bad))
        )
        if not within:
            break
        certified = float(threshold)
    return certified


def _best_share_within(scores, truth, alpha_edit: float, alpha_bad: float) -> float:
    """The largest share of outputs that a single threshold, any value at all rather than a
    grid's, approves with both true error rates within budget. A threshold takes every
    output scoring at least it, so the thresholds worth trying are the scores themselves."""
    if not len(scores):
        return 0.0
    order = np.argsort(-scores, kind="stable")
    ranked, truth = scores[order], truth[order]
    taken = np.arange(1, len(ranked) + 1)
    edit = np.cumsum(truth != GOOD) / taken
    bad = np.cumsum(truth == BAD) / taken
    # Ties go together: a threshold at a score takes all its outputs.
    last_of_tie = np.append(ranked[1:] != ranked[:-1], True)
    within = last_of_tie & (edit <= alpha_edit) & (bad <= alpha_bad)
    return float(taken[within].max() / len(ranked)) if within.any() else 0.0


def weight_ratios(history: loop.History) -> list[dict]:
    """Per task type: each rare, decisive validator's final weight over the weight a
    logistic model fitted (unregularised) to the true labels of the whole history would
    give it, as its share of the positive coefficients times the final total weight."""
    final = history.weights[-1]
    rows = []
    for t in range(len(history.config.task_types)):
        mine = history.task_type == t
        model = LogisticRegression(C=np.inf, solver="newton-cholesky").fit(
            history.failed[mine].astype(float), history.truth[mine] != GOOD
        )
        positive = np.clip(model.coef_[0], 0, None)
        shares = dict(zip(loop.VALIDATOR_NAMES, positive / positive.sum(), strict=True))
        total = sum(final[t].values())
        rows.append(
            {
                "task_type": history.config.task_types[t].name,
                **{
                    name: round(final[t][name] / (shares[name] * total), 3)
                    for name in RARE_DECISIVE
                },
            }
        )
    return rows


def binomial_allowance(delta: float, units: int) -> float:
    """delta plus two standard errors of a share among ``units`` independent units."""
    return delta + 2 * math.sqrt(delta * (1 - delta) / max(units, 1))
