"""Learning quality benchmark: the guarded policy in closed-loop histories, against ground
truth (docs/learning.md's claims).

Each history is 30 simulated days of the world's traffic through the pure gate, queue and
cycles of ``simulator.loop``, seeded; four worlds (the default one, gpt-x drifting
to severity 0.3 from day 10, every reviewer as careful as the accurate one, and reviewers who
are not Dawid-Skene: ``world.ReviewerFlaws``), plus a world
with a 0.005 edit budget (claim 4) and one whose reviewers never err (claim 5). A no-learning
history of the same seed gives the held-share baseline.

Output: one JSON object on stdout with every claim's figures and whether it holds; progress
on stderr. Run by hand, never as a timed test:

    .venv/bin/python -m bench.learning_quality [--histories 40] [--outputs-per-day 10000]
        [--processes 2]

The full count takes hours; it can be run in parts (``--first-seed 1000 --histories 20``,
then ``--first-seed 1020 --histories 20``, each with its share of ``--extra-histories``)
and the parts' outputs joined with ``--merge a.json b.json``, which recomputes every claim
over all their histories. Parts of other code, other settings or the same seed twice are
refused. The code is what the histories depend on (``MEASURED_PATHS``: the loop, the
statistics, the scorer, this bench and the pinned packages), so parts measured at commits
that differ elsewhere, in the docs or the queue say, can be joined; each output records its
commit too.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import replace

import numpy as np

from bench import harness
from gating import scoring
from simulator import loop, quality, world

WORLDS = ("default", "drift", "accurate", "flawed")
EXTRA_WORLDS = ("tight", "perfect")
DRIFT = world.Drift(model="gpt-x", day=10, severity=0.3)


def settings_for(kind: str, reviews_per_day: int) -> tuple[loop.LoopSettings, world.Drift | None]:
    base = loop.LoopSettings(reviews_per_day=reviews_per_day)
    if kind == "drift":
        return base, DRIFT
    if kind == "accurate":
        return loop.accurate_reviewers(base), None
    if kind == "flawed":
        return loop.flawed_reviewers(base), None
    if kind == "tight":
        budgets = replace(base.budgets, alpha_edit=0.005)
        return replace(base, budgets=budgets), None
    if kind == "perfect":
        # Claim 5 measures where the certified policy puts the approve threshold: approving
        # at the threshold in force whatever stands behind it, and no estimates followed
        # (bench.team_scale measures those).
        approve_anyway = replace(base, approve_requires=scoring.ApproveRequires.NOTHING)
        return loop.perfect_reviewers(approve_anyway), None
    return base, None


def one(kind: str, seed: int, days: int, per_day: int, reviews_per_day: int) -> dict:
    settings, drift = settings_for(kind, reviews_per_day)
    config = loop.history_config(seed, days=days, outputs_per_day=per_day, drift=drift)
    started = time.perf_counter()
    history = loop.run_history(config, settings)
    baseline = loop.run_history(config, replace(settings, learn=False))
    return {
        "kind": kind,
        "seed": seed,
        "seconds": round(time.perf_counter() - started, 1),
        "approved_error": quality.approved_error(history),
        "gaps": quality.estimate_gaps(history),
        "path": quality.approve_path(history),
        "held": quality.held_share(history),
        "held_baseline": quality.held_share(baseline),
        "warning_bad": quality.warning_bad_share(history),
        "warning_bad_baseline": quality.warning_bad_share(baseline),
        "approved_share": quality.approved_share(history),
        "not_attainable": quality.not_attainable_within(history, runs=4, in_a_row=2),
        "hindsight": quality.hindsight_loss(history),
        # Claim 5 is read in the world whose reviewers never err, against a fresh sample.
        "population": quality.population_loss(history) if kind == "perfect" else [],
        "weights": quality.weight_ratios(history),
    }


def _claim2(rs: list[dict]) -> dict:
    """Per measure, the windows read and the share within a fifth of the budget."""
    out: dict = {}
    for measure in ("edit", "bad"):
        gaps = [g for r in rs for g in r["gaps"][measure]]
        within = quality.within_share(gaps)
        out[measure] = {
            "windows": int(np.count_nonzero(~np.isnan(np.array(gaps, dtype=float)))),
            "within_0.2_budget": None if within is None else round(within, 4),
        }
    out["holds"] = all(
        out[m]["within_0.2_budget"] is not None and out[m]["within_0.2_budget"] >= 0.9
        for m in ("edit", "bad")
    )
    return out


def summary(results: list[dict], delta: float) -> dict:
    by_kind: dict[str, list[dict]] = {}
    for r in results:
        by_kind.setdefault(r["kind"], []).append(r)
    out: dict = {}
    for kind in WORLDS:
        rs = by_kind.get(kind, [])
        if not rs:
            continue
        units = [u for r in rs for u in r["approved_error"]]
        certified = [u for u in units if u["certified_throughout"]]
        paths = [p for r in rs for p in r["path"]]
        held_over = [r["held"] - r["held_baseline"] for r in rs]
        ratios = [w[name] for r in rs for w in r["weights"] for name in quality.RARE_DECISIVE]
        allowance = quality.binomial_allowance(delta, len(units))
        exceed_all = sum(u["exceeds"] for u in units) / max(len(units), 1)
        out[kind] = {
            "histories": len(rs),
            "claim1_guarantee": {
                "units": len(units),
                "exceeding_share": round(exceed_all, 4),
                "certified_units": len(certified),
                "exceeding_share_certified": round(
                    sum(u["exceeds"] for u in certified) / max(len(certified), 1), 4
                ),
                "allowed": round(allowance, 4),
                "holds": exceed_all <= allowance,
            },
            "claim2_estimate": _claim2(rs),
            "claim3_path": {
                "final_in_9.3_9.9": round(
                    sum(9.3 <= p["final"] <= 9.9 for p in paths) / max(len(paths), 1), 4
                ),
                "moved_last_10_at_most_0.3": round(
                    sum(p["moved_last_10"] <= 0.3 for p in paths) / max(len(paths), 1), 4
                ),
                "reached_top": sum(p["reached_top"] for p in paths),
                "final_states": _count(p["final_state"] for p in paths),
                "held_over_baseline_max": round(max(held_over), 4),
                "held_over_baseline_mean": round(float(np.mean(held_over)), 4),
                "warning_true_bad_mean": round(float(np.mean([r["warning_bad"] for r in rs])), 4),
                "warning_true_bad_baseline_mean": round(
                    float(np.mean([r["warning_bad_baseline"] for r in rs])), 4
                ),
                "approved_share_mean": round(float(np.mean([r["approved_share"] for r in rs])), 4),
            },
            "claim6_weights": {
                "ratios": len(ratios),
                "within_2x": round(sum(0.5 <= x <= 2.0 for x in ratios) / max(len(ratios), 1), 4),
                "min": min(ratios) if ratios else None,
                "max": max(ratios) if ratios else None,
            },
            "seconds_per_history": round(float(np.mean([r["seconds"] for r in rs])), 1),
        }
    tight = [u for r in by_kind.get("tight", []) for u in r["not_attainable"]]
    if tight:
        out["claim4_not_attainable"] = {
            "units": len(tight),
            "alert_within_4_runs": round(sum(u["alert_within"] for u in tight) / len(tight), 4),
            "climbed": sum(u["climbed"] for u in tight),
            "climbed_uncertified": sum(u["climbed_uncertified"] for u in tight),
        }
    perfect = [u for r in by_kind.get("perfect", []) for u in r["hindsight"]]
    if perfect:
        judged = [u for u in perfect if u["loss"] is not None]
        losses = [u["loss"] for u in judged]
        # Approving more than the hindsight best (a negative loss) loses nothing only where
        # what was approved kept within both budgets (quality.hindsight_loss).
        within = [u["loss"] <= 0.10 and (u["loss"] >= 0 or not u["exceeds"]) for u in judged]
        out["claim5_hindsight"] = {
            "units": len(perfect),
            "no_threshold_within_budget": len(perfect) - len(judged),
            "over_approved_over_budget": sum(u["loss"] < 0 and u["exceeds"] for u in judged),
            "over_approved_within_budget": sum(u["loss"] < 0 and not u["exceeds"] for u in judged),
            "loss_max": max(losses) if losses else None,
            "loss_mean": _mean(max(0.0, x) for x in losses),
            "within_10_percent": round(sum(within) / max(len(judged), 1), 4),
            "holds": bool(judged) and all(within) and len(judged) == len(perfect),
            # On the final scores, the last threshold against the one that a bound as narrow
            # as the sampling noise would certify on the same evidence (quality.floor_threshold):
            # roughly what a tighter bound could win back (the floor is no valid bound).
            "final_threshold": _losses(judged, "final_threshold_loss"),
            "floor": _losses(judged, "floor_loss"),
        }
        population = [u for r in by_kind["perfect"] for u in r.get("population", [])]
        policy = quality.loss_summary([u["loss"] for u in population if u["loss"] is not None])
        floor = quality.loss_summary(
            [u["floor_loss"] for u in population if u["floor_loss"] is not None]
        )
        out["claim5_population"] = {
            "oracle_days": quality.ORACLE_DAYS,
            "no_threshold_within_budget": sum(u["loss"] is None for u in population),
            "policy": policy,
            # The bound's own cost: the same evidence read by a bound as narrow as the noise.
            "floor": floor,
            "holds": policy["mean_upper"] is not None
            and policy["mean_upper"] <= 0.10
            and policy["p90"] <= 0.15,
        }
    return out


def _losses(units: list[dict], key: str) -> dict:
    losses = [max(0.0, u[key]) for u in units if u[key] is not None]
    return {
        "units": len(losses),
        "within_10_percent": round(sum(x <= 0.10 for x in losses) / max(len(losses), 1), 4),
        "mean": _mean(losses),
        "max": max(losses) if losses else None,
        "approves_more_than_the_best": sum(u[key] < 0 for u in units if u[key] is not None),
    }


def _mean(values) -> float | None:
    values = list(values)
    return round(float(np.mean(values)), 4) if values else None


def _count(values) -> dict:
    counted: dict = {}
    for v in values:
        counted[v] = counted.get(v, 0) + 1
    return counted


SETTINGS = ("days", "outputs_per_day", "reviews_per_day", "code")


# What a history's figures depend on: the loop and its world, the statistics, the scorer,
# this bench and the pinned packages, file by file where a folder holds more (the
# simulator's database replay, the other benches), so that work there does not orphan the
# parts of a run. A test checks that a history imports nothing else of the project. A
# commit that changes none of them (the docs, the pages, the queue, the database side of
# the cycles) leaves the histories as they were, so parts measured on either side of it
# can still be joined.
MEASURED_PATHS = (
    "learning/__init__.py",
    "simulator/__init__.py",
    "simulator/agents.py",
    "simulator/loop.py",
    "simulator/quality.py",
    "simulator/world.py",
    "learning/statistics",
    "gating/__init__.py",
    "gating/rounds.py",
    "gating/scoring.py",
    "bench/__init__.py",
    "bench/harness.py",
    "bench/learning_quality.py",
    "requirements-dev.lock",
)


def code_version() -> str | None:
    """The git object ids of ``MEASURED_PATHS`` at HEAD, hashed together and marked
    "+changes" if the tree differs from them there; None outside git."""
    state = harness.git_state(*MEASURED_PATHS, untracked=False)
    if state is None:
        return None
    _, changed = state
    trees = harness.git_objects(*(f"HEAD:{path}" for path in MEASURED_PATHS))
    if trees is None:
        return None
    digest = hashlib.sha1(" ".join(trees).encode()).hexdigest()
    return digest + ("+changes" if changed else "")


def commit() -> str | None:
    state = harness.git_state(untracked=False)
    return None if state is None else state[0]


def merged(parts: list[dict]) -> dict:
    """One output from the parts of a run: their histories together, every claim recomputed."""
    first = parts[0]
    for part in parts[1:]:
        differing = [key for key in SETTINGS if part.get(key) != first.get(key)]
        if differing:
            raise ValueError(f"the parts differ in {', '.join(differing)}: not one run")
    if first.get("code") is None or first["code"].endswith("+changes"):
        raise ValueError("a part records no code version, or uncommitted code: it cannot be joined")
    histories = [h for part in parts for h in part["histories"]]
    seen = set()
    for h in histories:
        if (h["kind"], h["seed"]) in seen:
            raise ValueError(f"history {h['kind']} {h['seed']} is in two parts")
        seen.add((h["kind"], h["seed"]))
    return {
        "bench": "learning_quality",
        "command": [part["command"] for part in parts],
        **{key: first.get(key) for key in SETTINGS},
        "commit": [part.get("commit") for part in parts],
        "seconds": round(sum(part["seconds"] for part in parts), 1),
        "claims": summary(histories, loop.LoopSettings().budgets.delta),
        "histories": histories,
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--histories", type=int, default=40, help="per world (default 40)")
    parser.add_argument("--extra-histories", type=int, default=10, help="for claims 4 and 5")
    parser.add_argument("--days", type=int, default=30)
    parser.add_argument("--outputs-per-day", type=int, default=10_000)
    parser.add_argument("--reviews-per-day", type=int, default=2_700)
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--first-seed", type=int, default=1000)
    parser.add_argument(
        "--worlds",
        nargs="+",
        choices=WORLDS,
        default=WORLDS,
        help="the worlds to run (default all)",
    )
    parser.add_argument(
        "--extra-worlds",
        nargs="+",
        choices=EXTRA_WORLDS,
        default=EXTRA_WORLDS,
        help="the worlds of claims 4 and 5 to run (default both)",
    )
    parser.add_argument(
        "--merge", nargs="+", metavar="FILE", help="join the outputs of a run's parts instead"
    )
    args = parser.parse_args(argv)
    if args.merge:
        parts = []
        for name in args.merge:
            try:
                with open(name, encoding="utf-8") as f:
                    parts.append(json.load(f))
            except (OSError, ValueError) as error:
                parser.error(f"{name}: {error}")
        try:
            print(json.dumps(merged(parts), indent=1))
        except ValueError as error:
            parser.error(str(error))
        return

    jobs = [(k, args.first_seed + i) for k in args.worlds for i in range(args.histories)]
    jobs += [
        (k, args.first_seed + i) for k in args.extra_worlds for i in range(args.extra_histories)
    ]
    started = time.perf_counter()
    results = []
    with ProcessPoolExecutor(args.processes) as pool:
        futures = [
            pool.submit(one, k, s, args.days, args.outputs_per_day, args.reviews_per_day)
            for k, s in jobs
        ]
        for i, future in enumerate(futures, 1):
            results.append(future.result())
            print(f"learning_quality: {i}/{len(jobs)} histories", file=sys.stderr, flush=True)
    delta = loop.LoopSettings().budgets.delta
    print(
        json.dumps(
            {
                "bench": "learning_quality",
                "command": "python -m bench.learning_quality " + " ".join(sys.argv[1:]),
                "days": args.days,
                "outputs_per_day": args.outputs_per_day,
                "reviews_per_day": args.reviews_per_day,
                "code": code_version(),
                "commit": commit(),
                "seconds": round(time.perf_counter() - started, 1),
                "claims": summary(results, delta),
                "histories": results,
            },
            indent=1,
        )
    )


if __name__ == "__main__":
    main()
