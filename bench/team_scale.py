"""Team-scale benchmark: the guarded policy where a team lives, against ground truth.

Each history is ``simulate``'s default world at a team's scale (2,000 outputs a day, four
reviewers at 12 reviews an hour through a 9-hour day: 432 reviews a day) for 30 days,
through the closed loop of ``simulator.loop``, seeded. Every seed runs once per
``approve_requires`` setting asked for (estimate, certified, nothing: what must stand
behind the approve threshold for it to approve), so that they are compared on the same
traffic and the same reviewers.

Per history and setting it reports the targets of docs/gate.md ("Until the approve threshold
is certified"):
- per task type, the day its approve threshold was first certified (None: never);
- among the last 7 days' auto-approved outputs, per task type, the true share needing an
  edit or bad, and truly bad;
- the shares of the last 7 days' outputs auto-approved, warned and held, and the true share
  of bad outputs among the warnings;
- claim 2 at this scale: the label model's P(edit or bad) and P(bad) above 9.0 and 9.5
  against the truth, within a fifth of their budgets;
- the queue: audits drawn (planned) and reviewed per day, held outputs reviewed per day,
  and how long held outputs of the last week waited.

Output: one JSON object on stdout; progress on stderr. Run by hand, never as a timed test:

    .venv/bin/python -m bench.team_scale [--histories 10] [--first-seed 3000] [--processes 2]
        [--requires estimate,certified,nothing] [--audits-in-turn] [--audit-share 0.25]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from concurrent.futures import ProcessPoolExecutor

import numpy as np

from bench import harness
from gating import scoring
from learning.statistics import forecast
from simulator import loop, quality, world

log = harness.stderr_log("team_scale")

CERTIFIED_BY_DAY = 21
ERROR_TARGET = 0.06  # alpha_edit + alpha_bad: the error the budgets allow together
ERROR_CEILING = 0.10
APPROVED_SHARE_TARGET = 0.25


def _certified(run: loop.ThresholdRun) -> bool:
    return run.approve_state == "certified"


def _guaranteed(run: loop.ThresholdRun) -> bool:
    return _certified(run) or run.estimated


def first_day(history: loop.History, task_type: int, holds) -> int | None:
    """The day (from 0) of the task type's first thresholds run for which ``holds`` (its
    approve threshold certified, or certified or estimated), or None."""
    for run in history.runs:
        if run.task_type == task_type and holds(run):
            return int(run.block // loop.BLOCKS_PER_DAY)
    return None


FORECAST_DAYS = (7, 10, 14)
# A forecast "said when" if certification came within this many days of the day it said.
DATED_WITHIN = 3


def forecasts(history: loop.History, task_type: int) -> list[dict]:
    """What the thresholds page would have forecast at the end of each of FORECAST_DAYS,
    (``forecast.forecast_of`` on that run's evidence and the run a day before it), as the
    day the need is met, beside the day certification came (None: never)."""
    runs = [r for r in history.runs if r.task_type == task_type]
    by_block = {r.block: r for r in runs}
    certified = first_day(history, task_type, _certified)
    out = []
    for day in FORECAST_DAYS:
        block = (day + 1) * loop.BLOCKS_PER_DAY - 1
        now, before = by_block.get(block), by_block.get(block - loop.BLOCKS_PER_DAY)
        if now is None or (certified is not None and certified <= day):
            continue
        said = forecast.forecast_of(
            now.evidence,
            before=before.evidence if before else None,
            days_between=1.0,
            audits_per_day=0.0,
        )
        out.append(
            {
                "day": day,
                "pace": str(said.pace),
                "need_met_day": None if said.days is None else round(day + said.days, 1),
                "certified_day": certified,
            }
        )
    return out


def one(
    seed: int,
    approve_requires: str,
    days: int,
    per_day: int,
    per_day_reviews: int,
    held_first: bool = loop.LoopSettings.held_first,
    fit_share: float = loop.LoopSettings.fit_share,
    audit_share: float = loop.LoopSettings.audit_share,
    audit_rate_budget: float = loop.LoopSettings.audit_rate_budget,
):
    settings = loop.LoopSettings(
        audit_share=audit_share,
        audit_rate_budget=audit_rate_budget,
        reviews_per_day=per_day_reviews,
        approve_requires=scoring.ApproveRequires(approve_requires),
        held_first=held_first,
        fit_share=fit_share,
    )
    config = loop.history_config(seed, days=days, outputs_per_day=per_day)
    started = time.perf_counter()
    history = loop.run_history(config, settings)
    last = history.last_days(quality.LAST_DAYS)
    warned = last & np.isin(history.decision, (loop.WARNING, loop.WITHHELD))
    return {
        "seed": seed,
        "approve_requires": approve_requires,
        "estimated_day": {
            t.name: first_day(history, i, _guaranteed) for i, t in enumerate(config.task_types)
        },
        "seconds": round(time.perf_counter() - started, 1),
        "certified_day": {
            t.name: first_day(history, i, _certified) for i, t in enumerate(config.task_types)
        },
        "forecasts": {t.name: forecasts(history, i) for i, t in enumerate(config.task_types)},
        "approved_error": quality.approved_error(history),
        "approved_share": round(quality.approved_share(history), 4),
        "warned_share": round(float(warned.sum() / last.sum()), 4),
        "held_share": round(quality.held_share(history), 4),
        "warning_bad": round(quality.warning_bad_share(history), 5),
        "estimate_gaps": quality.estimate_gaps(history),
        "queue": quality.queue_work(history),
    }


def summary(rows: list[dict], history_days: int) -> dict:
    """The targets over every history of one approve_requires setting, ``history_days``
    long."""
    days = [d for row in rows for d in row["certified_day"].values()]
    errors = [r["true_edit_or_bad"] for row in rows for r in row["approved_error"] if r["approved"]]
    task_types = sum(len(row["approved_error"]) for row in rows)
    return {
        "histories": len(rows),
        "task_type_histories": len(days),
        "certified_by_day_21": round(
            sum(d is not None and d <= CERTIFIED_BY_DAY for d in days) / len(days), 4
        ),
        "task_types_approving": len(errors),
        "approved_error_within_6pct": round(
            (task_types - sum(e > ERROR_TARGET for e in errors)) / task_types, 4
        ),
        "approved_error_max": max(errors, default=None),
        "approved_error_above_10pct": sum(e > ERROR_CEILING for e in errors),
        "approved_share_mean": round(float(np.mean([r["approved_share"] for r in rows])), 4),
        "warned_share_mean": round(float(np.mean([r["warned_share"] for r in rows])), 4),
        "held_share_mean": round(float(np.mean([r["held_share"] for r in rows])), 4),
        "warning_bad_mean": round(float(np.mean([r["warning_bad"] for r in rows])), 5),
        # Claim 2 at a team's scale: estimates within a fifth of their budget of the truth.
        "estimates_within_0.2_budget": {
            m: _rounded(quality.within_share([g for row in rows for g in row["estimate_gaps"][m]]))
            for m in ("edit", "bad")
        },
        "audits_drawn_per_day": round(_per_day(rows, "audits_drawn"), 1),
        "audits_reviewed_per_day": round(_per_day(rows, "audits_reviewed"), 1),
        "held_reviewed_per_day": round(_per_day(rows, "held_reviewed"), 1),
        "held_wait_days_last_week_mean": round(
            float(np.mean([r["queue"]["held_wait_days_last_week"] for r in rows])), 2
        ),
        "open_at_end_mean": round(float(np.mean([r["queue"]["open_at_end"] for r in rows])), 1),
        "forecast": forecast_summary(rows, history_days),
    }


def forecast_summary(rows: list[dict], days: int) -> dict:
    """Per forecast day, over the task types not yet certified: how the forecast read; for
    those dated, the days from the date said to certification (median and range; never
    certified in the history counted apart); and whether it said when: of those dated
    within the history (``days``), how many were certified in it, and of those certified in
    it, how many it had dated within it, and how many within DATED_WITHIN days of the day."""
    out = {}
    for day in FORECAST_DAYS:
        said = [
            f for row in rows for per in row["forecasts"].values() for f in per if f["day"] == day
        ]
        dated = [f for f in said if f["need_met_day"] is not None]
        late = [f["certified_day"] - f["need_met_day"] for f in dated if f["certified_day"]]
        in_history = [f for f in dated if f["need_met_day"] <= days]
        certified = [f for f in said if f["certified_day"] is not None]
        out[str(day)] = {
            "uncertified": len(said),
            "pace": {
                p: sum(f["pace"] == p for f in said) for p in sorted({f["pace"] for f in said})
            },
            "certified_after_need_met_days": {
                "median": round(float(np.median(late)), 1) if late else None,
                "min": round(min(late), 1) if late else None,
                "max": round(max(late), 1) if late else None,
            },
            "dated_never_certified": sum(not f["certified_day"] for f in dated),
            "dated_within_history": len(in_history),
            "of_which_certified_in_it": sum(f["certified_day"] is not None for f in in_history),
            "certified_in_history": len(certified),
            "of_which_dated_within_it": sum(
                f["need_met_day"] is not None and f["need_met_day"] <= days for f in certified
            ),
            f"of_which_within_{DATED_WITHIN}_days": sum(
                f["need_met_day"] is not None
                and abs(f["certified_day"] - f["need_met_day"]) <= DATED_WITHIN
                for f in certified
            ),
        }
    return out


def _rounded(share: float | None) -> float | None:
    return None if share is None else round(share, 4)


def _per_day(rows: list[dict], key: str) -> float:
    return float(np.mean([np.mean(r["queue"][key]) for r in rows]))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--histories", type=int, default=10)
    parser.add_argument("--first-seed", type=int, default=3000)
    parser.add_argument("--days", type=int, default=30)
    parser.add_argument("--outputs-per-day", type=int, default=2_000)
    parser.add_argument("--reviews-per-day", type=int, default=loop.LoopSettings.reviews_per_day)
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument(
        "--audits-in-turn",
        action="store_true",
        help="past the audits' reserved share, everything in turn (the order before "
        "2026-12-06), not the held outputs first",
    )
    parser.add_argument(
        "--fit-share",
        type=float,
        default=loop.LoopSettings.fit_share,
        help="the share of judged outputs that fits the validator weights; the rest certify",
    )
    parser.add_argument(
        "--audit-share",
        type=float,
        default=loop.LoopSettings.audit_share,
        help="the share of review capacity kept for audits (REVIEW_AUDIT_SHARE)",
    )
    parser.add_argument(
        "--audit-rate-budget",
        type=float,
        default=loop.LoopSettings.audit_rate_budget,
        help="the approved outputs' audit rate while a threshold is underpowered",
    )
    parser.add_argument(
        "--requires",
        default="estimate,certified,nothing",
        help="the approve_requires settings to run, comma-separated (default: all three)",
    )
    args = parser.parse_args(argv)
    settings = args.requires.split(",")
    known = [r.value for r in scoring.ApproveRequires]
    if unknown := [r for r in settings if r not in known]:
        parser.error(f"--requires: unknown {', '.join(unknown)}; choose from {', '.join(known)}")
    jobs = [
        (
            seed,
            requires,
            args.days,
            args.outputs_per_day,
            args.reviews_per_day,
            not args.audits_in_turn,
            args.fit_share,
            args.audit_share,
            args.audit_rate_budget,
        )
        for seed in range(args.first_seed, args.first_seed + args.histories)
        for requires in settings
    ]
    started = time.perf_counter()
    rows = []
    with ProcessPoolExecutor(max_workers=args.processes) as pool:
        for row in pool.map(one, *zip(*jobs, strict=True)):
            log(f"seed {row['seed']} {row['approve_requires']}: {row['seconds']} s")
            rows.append(row)
    result = {
        "bench": "team_scale",
        "machine": harness.machine_facts(pg_version=""),
        "world": {
            "outputs_per_day": args.outputs_per_day,
            "reviews_per_day": args.reviews_per_day,
            "days": args.days,
            "task_types": [t.name for t in world.DEFAULT_TASK_TYPES],
            "held_first": not args.audits_in_turn,
            "fit_share": args.fit_share,
            "audit_share": args.audit_share,
            "audit_rate_budget": args.audit_rate_budget,
        },
        "seconds": round(time.perf_counter() - started, 1),
        **{
            requires: summary([r for r in rows if r["approve_requires"] == requires], args.days)
            for requires in settings
        },
        "histories": rows,
    }
    json.dump(result, sys.stdout, indent=2)
    print()


if __name__ == "__main__":
    main()
