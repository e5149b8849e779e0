"""ADR-0003's formula against the validators scorer's (v2), on the simulator's default world:
how many outputs each ties at 10, and how well each separates good outputs from the rest.

v2 departs from ADR-0003 twice (docs/gate.md): the bonus multiplies the score's odds, not
the score, and the penalty takes its share of the base before the bonus, not in one
multiplier with it. A third formula keeps the ADR's one multiplier ``1 + bonus - penalty``
and moves only its rise onto the odds: the lowering part multiplies the score as the ADR
does, the raising part multiplies the odds. It fixes the ties and nothing else, so it says
whether the penalty's new order is needed for that fix.

The world is ``manage.py simulate``'s by default (seed 1, 14 days of 2,000 outputs, the
four default task types and three models) with every validator at weight 1.0, as before
learning. A pair's bonus depends on how its reviewers judged it, so each formula is measured
with every pair at the full bonus (0.5), at 0.2, and with each pair's bonus from its true
share of good outputs at full confidence (as if its reviewers approved exactly what is good).
Without a bonus the three formulas are one.

Output: one JSON object on stdout. Pure arithmetic, no database, a few seconds:

    .venv/bin/python -m bench.formulas [--seed 1] [--days 14] [--outputs-per-day 2000]
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import date

import numpy as np
from scipy.stats import rankdata

from gating import scoring
from simulator import world

# As the calibration page counts a tie at the top (dashboard.models.TOP_SCORE): 10, or near
# enough that it shows as 10.000.
TOP_SCORE = 9.9995
APPROVE = 7.0  # the default approve threshold
FACTS = [v.name for v in world.VALIDATORS].index("facts")
GOOD = world.TRUTHS.index(world.Truth.GOOD)


def adr0003(base, bonus, penalty):
    return np.clip(
        scoring.adr0003_score(base, bonus, penalty), scoring.SCORE_MIN, scoring.SCORE_MAX
    )


def v2(base, bonus, penalty):
    return scoring.final_score(base, bonus, penalty)


def adr0003_odds(base, bonus, penalty):
    """ADR-0003's one multiplier ``1 + bonus - penalty``: below 1 on the score, as the ADR
    has it; above 1 on the odds of the score's share of 10, as v2's bonus."""
    net = bonus - penalty
    return scoring.with_bonus(base * (1 + np.minimum(net, 0)), np.maximum(net, 0))


FORMULAS = {"adr0003": adr0003, "v2": v2, "adr0003_odds": adr0003_odds}


def traffic(config: world.SimulationConfig) -> dict[str, np.ndarray]:
    days = [world.day_traffic(config, d) for d in range(config.days)]
    passed = np.concatenate([d.passed for d in days])
    task_type = np.concatenate([d.task_type for d in days])
    model = np.concatenate([d.model for d in days])
    requires = np.array([t.requires_fact_check for t in config.task_types])[task_type]
    good_share = np.array(
        [
            [world.truth_rates(t, m)[world.Truth.GOOD] for m in config.models]
            for t in config.task_types
        ]
    )
    by_pair = np.array(
        [
            [scoring.task_accuracy_bonus(scoring.PairHistory(1000, round(1000 * g))) for g in row]
            for row in good_share
        ]
    )
    return {
        "task_type": task_type,
        "good": np.concatenate([d.truth for d in days]) == GOOD,
        # Every validator at weight 1.0: the share passed.
        "base": scoring.base_score(
            passed.mean(axis=1),
            np.concatenate([d.input_clarity for d in days]),
            np.concatenate([d.coherence for d in days]),
        ),
        "penalty": np.where(requires & ~passed[:, FACTS], scoring.HALLUCINATION_PENALTY, 0.0),
        "bonus_by_pair": by_pair[task_type, model],
    }


def auroc(scores: np.ndarray, good: np.ndarray) -> float:
    """The chance that a good output outscores one needing an edit or bad, a tie counting
    half (Mann-Whitney)."""
    ranks = rankdata(scores)
    positives, negatives = good.sum(), (~good).sum()
    return float((ranks[good].sum() - positives * (positives + 1) / 2) / (positives * negatives))


def measure(columns: dict[str, np.ndarray], bonus: np.ndarray, names: list[str]) -> dict:
    result = {}
    for formula, score_of in FORMULAS.items():
        scores = score_of(columns["base"], bonus, columns["penalty"])
        tied = scores >= TOP_SCORE
        per_task_type = {}
        for t, name in enumerate(names):
            mine = columns["task_type"] == t
            good, at_top = columns["good"][mine], tied[mine]
            per_task_type[name] = {
                "tied_at_10": round(float(at_top.mean()), 4),
                "not_good_among_tied": round(float((~good[at_top]).mean()), 4)
                if at_top.any()
                else None,
                "auroc": round(auroc(scores[mine], good), 4),
            }
        penalised = columns["penalty"] > 0
        result[formula] = {
            "tied_at_10": round(float(tied.mean()), 4),
            # What a failed fact check leaves at the default approve threshold.
            "penalised_reaching_7": round(float((scores[penalised] >= APPROVE).mean()), 4),
            "mean_auroc": round(float(np.mean([r["auroc"] for r in per_task_type.values()])), 4),
            "task_types": per_task_type,
        }
    return result


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--days", type=int, default=14)
    parser.add_argument("--outputs-per-day", type=int, default=2000)
    args = parser.parse_args(argv)
    config = world.SimulationConfig(
        seed=args.seed,
        days=args.days,
        outputs_per_day=args.outputs_per_day,
        start=date(2026, 11, 14),
    )
    columns = traffic(config)
    names = [t.name for t in config.task_types]
    n = len(columns["base"])
    levels = {
        "0.5": np.full(n, scoring.HIGH_ACCURACY_BONUS),
        "0.2": np.full(n, scoring.GOOD_ACCURACY_BONUS),
        "by_pair": columns["bonus_by_pair"],
    }
    json.dump(
        {
            "world": {
                "seed": args.seed,
                "days": args.days,
                "outputs_per_day": args.outputs_per_day,
                "outputs": n,
                "penalised": round(float((columns["penalty"] > 0).mean()), 4),
                "not_good_among_penalised": round(
                    float((~columns["good"][columns["penalty"] > 0]).mean()), 4
                ),
            },
            "bonus": {level: measure(columns, bonus, names) for level, bonus in levels.items()},
        },
        sys.stdout,
        indent=1,
    )
    print()


if __name__ == "__main__":
    main()
