"""Learning benchmark: every learning cycle, one after another, on a million outputs.

Setup (not measured): a fresh PostgreSQL database filled by ``manage.py simulate`` with
30 days of 33,334 outputs (1,000,020) and reviewers fast enough for about 100,000
reviews, all recorded in bulk. Then, measured: ``manage.py run_cycle all`` in its own
process at the end of the simulated month, its wall time and its peak resident memory.
Target: at most 30 s and 1 GB.

Output: one JSON object on stdout; progress goes to stderr. Run by hand (``make bench``),
never as a timed test. ``--reuse`` skips the setup when the database is already there.

    .venv/bin/python -m bench.learning [--reuse] [--keep]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import time
from datetime import date, timedelta

import psycopg

from bench.harness import (
    PG_ADMIN_DSN,
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

DEFAULT_DB = "gatehouse_bench_learning"
TARGET_SECONDS = 30
TARGET_MIB = 1024


log = stderr_log("learning")


def _exists(db_name: str) -> bool:
    with psycopg.connect(PG_ADMIN_DSN) as conn:
        return bool(
            conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [db_name]).fetchone()
        )


COUNTS = {
    "outputs": "SELECT count(*) FROM gating_output",
    "reviews": "SELECT count(*) FROM gating_review",
    "server_version": "SHOW server_version",
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--days", type=int, default=30)
    parser.add_argument("--outputs-per-day", type=int, default=33_334)
    parser.add_argument("--reviews-per-hour", type=int, default=250)
    parser.add_argument("--start", type=date.fromisoformat, default=date(2026, 3, 2))
    parser.add_argument("--db", default=DEFAULT_DB)
    parser.add_argument("--reuse", action="store_true", help="keep an existing database")
    parser.add_argument("--keep", action="store_true", help="keep the database afterwards")
    args = parser.parse_args()

    env = app_env(args.db)
    if not (args.reuse and _exists(args.db)):
        recreate_database(args.db)
        log("migrating")
        manage(env, "migrate", "--noinput", "-v", "0")
        log("simulating the month (setup, not measured; about ten minutes)")
        manage(
            env,
            "simulate",
            "--seed=1",
            f"--days={args.days}",
            f"--outputs-per-day={args.outputs_per_day}",
            f"--reviews-per-hour={args.reviews_per_hour}",
            f"--start={args.start}",
            "--live-days=0",
            # The cycles under test run once, at the end; none during the setup.
            "--no-learning",
            "--verbosity=0",
        )
    else:
        # A second measurement on the same data: the earlier runs' windows are done, so
        # they are cleared to make the cycles work again.
        with psycopg.connect(f"host=127.0.0.1 user=postgres dbname={args.db}") as conn:
            conn.execute("TRUNCATE learning_cyclerun CASCADE")
    counts = db_counts(args.db, COUNTS)
    at = (args.start + timedelta(days=args.days)).isoformat() + "T00:00Z"
    try:
        log(f"running every cycle at {at}")
        started = time.perf_counter()
        proc = subprocess.Popen(
            [str(PYTHON), "manage.py", "run_cycle", "all", "--at", at],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            text=True,
        )
        stdout = proc.stdout.read()
        # wait4 gives this child's own peak memory, not the largest of all our children.
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - started
        if os.waitstatus_to_exitcode(status) != 0:
            raise SystemExit(f"run_cycle failed:\n{stdout}")
        peak_mib = usage.ru_maxrss / 1024
    finally:
        if not args.keep:
            drop_database(args.db)
    per_cycle = {
        m.group(1): float(m.group(2))
        for m in re.finditer(r"^(\w+) cycle up to .*?, ([\d.]+) s\)", stdout, re.M)
    }
    print(
        json.dumps(
            {
                "benchmark": "learning",
                "machine": machine_facts(counts.pop("server_version")),
                "config": {k: str(v) for k, v in vars(args).items()},
                **counts,
                "seconds_all_cycles": round(seconds, 1),
                "seconds_per_cycle": per_cycle,
                "peak_rss_mib": round(peak_mib),
                "target": {
                    "seconds": TARGET_SECONDS,
                    "peak_mib": TARGET_MIB,
                    "met": seconds <= TARGET_SECONDS and peak_mib <= TARGET_MIB,
                },
                "cycle_output": stdout.splitlines(),
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
