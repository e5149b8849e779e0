"""Simulator benchmark: how long ``manage.py simulate`` takes for a million outputs.

Against a fresh PostgreSQL database, it runs the simulate command as a user would (its own
process, default reviewers) and reports the wall time, the throughput, the peak memory of
that process and what it left in the database. The default size is the target's:
30 days of 33,334 outputs (1,000,020 outputs), starting on a Monday.

Output: one JSON object on stdout; progress goes to stderr. Run by hand (``make bench``),
never as a timed test.

    .venv/bin/python -m bench.simulation [--days 30] [--outputs-per-day 33334]
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time

from bench.harness import (
    PYTHON,
    ROOT,
    app_env,
    db_counts,
    drop_database,
    machine_facts,
    manage,
    recreate_database,
    stderr_log,
)

DEFAULT_DB = "gatehouse_bench_sim"
TARGET_SECONDS = 180
TARGET_OUTPUTS = 1_000_000


log = stderr_log("simulation")


COUNTS = {
    "outputs": "SELECT count(*) FROM gating_output",
    "reviews": "SELECT count(*) FROM gating_review",
    "open_items": "SELECT count(*) FROM gating_reviewitem WHERE state = 'open'",
    "truths": "SELECT count(*) FROM learning_simulatedtruth",
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--days", type=int, default=30)
    parser.add_argument("--outputs-per-day", type=int, default=33_334)
    parser.add_argument("--start", default="2026-03-02", help="a Monday")
    parser.add_argument("--live-days", type=int, help="default: the command's own")
    parser.add_argument("--processes", type=int, help="default: the command's own")
    parser.add_argument("--db", default=DEFAULT_DB)
    parser.add_argument("--keep", action="store_true", help="keep the database afterwards")
    args = parser.parse_args()

    pg_version = recreate_database(args.db)
    env = app_env(args.db)
    try:
        log("migrating")
        manage(env, "migrate", "--noinput", "-v", "0")
        command = [
            str(PYTHON),
            "manage.py",
            "simulate",
            "--seed=1",
            f"--days={args.days}",
            f"--outputs-per-day={args.outputs_per_day}",
            f"--start={args.start}",
            # The traffic and the queue alone: bench.learning measures the cycles.
            "--no-learning",
        ]
        for option in ("live_days", "processes"):
            if getattr(args, option) is not None:
                command.append(f"--{option.replace('_', '-')}={getattr(args, option)}")
        log(f"running: {' '.join(command[1:])}")
        started = time.perf_counter()
        # The progress bar goes to our stderr, so a long run shows how far it is.
        subprocess.run(command, cwd=ROOT, env=env, check=True, stdout=sys.stderr)
        seconds = time.perf_counter() - started
        peak_mib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        counts = db_counts(args.db, COUNTS)
    finally:
        if not args.keep:
            drop_database(args.db)

    outputs = counts["outputs"]
    print(
        json.dumps(
            {
                "benchmark": "simulation",
                "machine": machine_facts(pg_version),
                "config": vars(args),
                "seconds": round(seconds, 1),
                "outputs_per_second": round(outputs / seconds),
                "peak_rss_mib": round(peak_mib),
                **counts,
                "target": {
                    "outputs": TARGET_OUTPUTS,
                    "seconds": TARGET_SECONDS,
                    "met": outputs >= TARGET_OUTPUTS and seconds <= TARGET_SECONDS,
                },
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
