"""Score-shift alarms against the simulator's drift: how often the daily PSI of a (task type,
model) crosses the alert's limit for models that do not drift, and how soon it does for the
one that does.

Each history is the default world (3 task types, 3 models) for 14 days with ``gpt-x``
drifting from day 10 (severity 0.6, the demo's), at the demo's rate (600 outputs a day) and
a team's (2,000), seeded. Scores are the gate's with every validator weighted 1 and no
accuracy bonus, so that only the traffic moves them. Per (task type, model) and day, with a
full 7-day baseline, each estimator's PSI is compared with the limit (0.25):

- ``as_written``: learning.statistics.drift.daily_psi, shares floored at 1e-4;
- ``corrected``: learning.statistics.drift's sample-corrected PSI (``corrected_psi``): half a
  count added to every bin, less what two samples of these sizes from one distribution
  show on average, (bins - 1) * (1/n_day + 1/n_baseline).

Reported per rate and estimator: the share of non-drifting (task type, model) days over the
limit (false alarms), and of the drifting model's days from the drift day on (detections),
with the share of its (task type) lines caught on the drift day itself.

    .venv/bin/python -m bench.drift_alarm [--histories 20] [--first-seed 100]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from datetime import date, timedelta

import numpy as np

from gating import scoring
from learning.statistics import drift
from simulator import world

DAYS, DRIFT_DAY, SEVERITY = 14, 10, 0.6
LIMIT = 0.25
NAMES = tuple(v.name for v in world.VALIDATORS)
IS_FACT_CHECK = np.array([name in world.FACT_CHECK_VALIDATORS for name in NAMES])
START = date(2026, 1, 1)


def day_counts(config: world.SimulationConfig) -> dict[tuple[int, int], dict[date, list[int]]]:
    """Per (task type, model), per day, the outputs per one-point score bin."""
    counts: dict = defaultdict(dict)
    requires = np.array([t.requires_fact_check for t in config.task_types])
    for d in range(config.days):
        traffic = world.day_traffic(config, d)
        scores = scoring.scores_many(
            reported=np.ones_like(traffic.passed),
            passed=traffic.passed,
            weights=np.ones(len(NAMES)),
            is_fact_check=IS_FACT_CHECK,
            input_clarity=traffic.input_clarity,
            coherence=traffic.coherence,
            requires_fact_check=requires[traffic.task_type],
        )
        bins = np.minimum(np.floor(scores).astype(int), 9)
        for t in range(len(config.task_types)):
            for m in range(len(config.models)):
                mine = (traffic.task_type == t) & (traffic.model == m)
                counts[(t, m)][START + timedelta(days=d)] = np.bincount(
                    bins[mine], minlength=10
                ).tolist()
    return counts


ESTIMATORS = {
    "as_written": lambda days: drift.daily_psi(days, correct_for_sample=False),
    "corrected": lambda days: drift.daily_psi(days, correct_for_sample=True),
}


def history(seed: int, outputs_per_day: int) -> dict:
    config = world.SimulationConfig(
        seed=seed,
        days=DAYS,
        outputs_per_day=outputs_per_day,
        start=START,
        drift=world.Drift(model="gpt-x", day=DRIFT_DAY, severity=SEVERITY),
    )
    drifting = [m.name for m in config.models].index("gpt-x")
    counts = day_counts(config)
    first_full = START + timedelta(days=drift.BASELINE_DAYS)
    drift_day = START + timedelta(days=DRIFT_DAY)
    tally = {name: defaultdict(int) for name in ESTIMATORS}
    for name, estimate in ESTIMATORS.items():
        for (_, m), days in counts.items():
            series = {d: v for d, v in estimate(days).items() if d >= first_full}
            if m != drifting:
                tally[name]["quiet_days"] += len(series)
                tally[name]["false_alarms"] += int(sum(v > LIMIT for v in series.values()))
            else:
                after = {d: v for d, v in series.items() if d >= drift_day}
                tally[name]["drift_days"] += len(after)
                tally[name]["detections"] += int(sum(v > LIMIT for v in after.values()))
                tally[name]["lines"] += 1
                tally[name]["caught_on_the_day"] += int(series.get(drift_day, 0) > LIMIT)
    return tally


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--histories", type=int, default=20)
    parser.add_argument("--first-seed", type=int, default=100)
    args = parser.parse_args()
    report = {"limit": LIMIT, "days": DAYS, "drift_day": DRIFT_DAY, "severity": SEVERITY}
    for rate in (600, 2000):
        totals = {name: defaultdict(int) for name in ESTIMATORS}
        for seed in range(args.first_seed, args.first_seed + args.histories):
            print(f"rate {rate} seed {seed}", file=sys.stderr)
            for name, tally in history(seed, rate).items():
                for key, n in tally.items():
                    totals[name][key] += n
        report[f"outputs_per_day_{rate}"] = {
            name: {
                "false_alarm_share": t["false_alarms"] / t["quiet_days"],
                "detection_share": t["detections"] / t["drift_days"],
                "caught_on_the_drift_day": t["caught_on_the_day"] / t["lines"],
                **t,
            }
            for name, t in totals.items()
        }
    json.dump(report, sys.stdout, indent=2)
    print()


if __name__ == "__main__":
    main()
