"""Rollup benchmark: batch ingest throughput with the dashboard's rollup refresh running
beside it, against the same without, in one run.

What it measures, against a fresh PostgreSQL database and the app under gunicorn: the
batch ingest of bench/ingest.py (``POST /api/v1/outputs/batch/``, 1,000 outputs a request)
in alternating phases, without and with a separate process that calls
``dashboard.rollups.rollups_refresh`` every ``--interval`` seconds (default 1: sixty times
beat's pace, so that the refresh is never idle while the phase runs). Phases alternate
(off, on, off, on, …) so that a drift over the run (the table grows, the machine is
shared) falls on both sides alike; the figures are the ratio of the mean throughput with
the refresh to the mean without, which the issue wants at 0.95 or more, and the median of
each pair's ratio. Each refreshing phase first catches up with the phase before it, whose
outputs are not its work.

Every output lands in the current hour, which each refresh recomputes whole: the
refresh's work grows with that hour's outputs, the worst case for this design. At the end
one last refresh runs and the rollups are checked against the outputs stored.

Output: one JSON object on stdout; progress goes to stderr. Run by hand, never a test.

    .venv/bin/python -m bench.rollups [--rounds 6] [--duration 10] [--interval 1]
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import multiprocessing
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.harness import (
    PYTHON,
    ROOT,
    app_env,
    db_counts,
    drop_database,
    free_port,
    machine_facts,
    manage,
    percentile,
    recreate_database,
    start_gunicorn,
    stderr_log,
    stop_gunicorn,
    wait_healthy,
)
from bench.ingest import BATCH_SIZE, PhaseSpec, run_phase

DEFAULT_DB = "gatehouse_bench_rollups"
TARGET_RATIO = 0.95

log = stderr_log("rollups")


def refresh_loop(interval: float, duration: float) -> dict[str, Any]:
    """In the refresher process: refresh every ``interval`` seconds for ``duration``
    seconds; how many runs, and how long they took."""
    import django

    django.setup()
    from dashboard import rollups

    # Set up, and caught up with the phase before (whose outputs are that phase's work):
    # the phase starts now, and measures the refreshes of its own outputs.
    rollups.rollups_refresh()
    print("ready", flush=True)
    cpu_started = time.process_time()
    took, blocks = [], []
    deadline = time.monotonic() + duration
    while time.monotonic() < deadline:
        started = time.monotonic()
        blocks.append(rollups.rollups_refresh().output_blocks)
        took.append(time.monotonic() - started)
        time.sleep(max(0.0, interval - took[-1]))
    took.sort()
    return {
        "runs": len(took),
        "mean_s": round(statistics.fmean(took), 4) if took else None,
        "p50_s": percentile(took, 50),
        "max_s": round(took[-1], 4) if took else None,
        "busy_share": round(sum(took) / duration, 3),
        # The refresher's own CPU (its Python side; the database's side is not in it).
        "cpu_share": round((time.process_time() - cpu_started) / duration, 3),
        "mean_blocks": round(statistics.fmean(blocks), 1) if blocks else None,
        "max_blocks": max(blocks, default=None),
    }


def _refresher(env: dict[str, str], interval: float, duration: float) -> subprocess.Popen:
    return subprocess.Popen(
        [str(PYTHON), "-m", "bench.rollups", "--refresh-loop", str(interval), str(duration)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        text=True,
    )


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rounds", type=int, default=6, help="pairs of phases, off then on")
    p.add_argument("--duration", type=float, default=10.0, help="seconds per phase")
    p.add_argument("--warmup", type=float, default=3.0, help="seconds of ingest before")
    p.add_argument("--interval", type=float, default=1.0, help="seconds between refreshes")
    p.add_argument("--workers", type=int, default=4, help="gunicorn workers")
    p.add_argument("--batch-clients", type=int, default=2, help="client threads")
    p.add_argument("--db-name", default=DEFAULT_DB)
    p.add_argument("--keep-db", action="store_true")
    p.add_argument("--refresh-loop", nargs=2, type=float, help=argparse.SUPPRESS)
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.refresh_loop:
        json.dump(refresh_loop(*args.refresh_loop), sys.stdout)
        return 0
    return _measure(args)


def _measure(args: argparse.Namespace) -> int:

    port = free_port()
    env = app_env(args.db_name)
    run_tag = f"r{int(time.time())}"
    log(f"creating database {args.db_name}")
    machine = machine_facts(recreate_database(args.db_name))
    proc: subprocess.Popen | None = None
    log_file = Path(tempfile.mkstemp(prefix="gatehouse-bench-rollups-", suffix=".log")[1])
    phases: list[dict[str, Any]] = []
    try:
        manage(env, "migrate", "--noinput", "-v", "0")
        manage(env, "create_user", "benchgw", "--role", "gateway")
        token = manage(env, "create_api_token", "benchgw").strip()
        proc = start_gunicorn(env, port, args.workers, 1, log_file, log=log)
        wait_healthy(proc, port)

        def phase(name: str, duration: float) -> dict[str, Any]:
            spec = PhaseSpec(
                name,
                "POST",
                "/api/v1/outputs/batch/",
                201,
                args.batch_clients,
                duration,
                BATCH_SIZE,
                tag=f"{run_tag}-{name}",
            )
            return client.submit(run_phase, spec, port, token).result()

        spawn = multiprocessing.get_context("spawn")
        with concurrent.futures.ProcessPoolExecutor(max_workers=1, mp_context=spawn) as client:
            log(f"warm-up {args.warmup:g} s")
            phase("warmup", args.warmup)
            for n in range(args.rounds):
                for rollups_on in (False, True):
                    name = f"{'on' if rollups_on else 'off'}-{n}"
                    refresher = None
                    if rollups_on:
                        refresher = _refresher(env, args.interval, args.duration)
                        assert refresher.stdout.readline().strip() == "ready"
                    result = phase(name, args.duration)
                    result["rollups"] = rollups_on
                    if refresher is not None:
                        out, _ = refresher.communicate(timeout=args.duration + 120)
                        result["refresh"] = json.loads(out.strip())
                    phases.append({"name": name, **result})
                    log(
                        f"{name}: {result['outputs_per_second']} outputs/s"
                        + (f", refresh {result['refresh']}" if refresher else "")
                    )
        started = time.monotonic()
        manage(env, "shell", "-c", "from dashboard import rollups; rollups.rollups_refresh()")
        final_refresh_s = round(time.monotonic() - started, 2)
        counts = db_counts(
            args.db_name,
            {
                "outputs": "SELECT count(*) FROM gating_output",
                "rolled_up": "SELECT coalesce(sum(outputs), 0) FROM dashboard_outputrollup",
                "held": "SELECT count(*) FROM gating_output WHERE decision = 'pending_review'",
                "rolled_up_held": "SELECT coalesce(sum(outputs), 0) FROM "
                "dashboard_outputrollup WHERE decision = 'pending_review'",
            },
        )
    finally:
        if proc is not None:
            stop_gunicorn(proc, log=log)
        if not args.keep_db:
            drop_database(args.db_name)
        log_file.unlink(missing_ok=True)

    def mean_throughput(on: bool) -> float:
        return statistics.fmean(p["outputs_per_second"] for p in phases if p["rollups"] == on)

    off, on = mean_throughput(False), mean_throughput(True)
    ratio = round(on / off, 3)
    # Each on phase against the off phase just before it: the machine's drift cancels.
    paired = [
        round(b["outputs_per_second"] / a["outputs_per_second"], 3)
        for a, b in zip(phases[::2], phases[1::2], strict=True)
    ]
    report = {
        "benchmark": "bench/rollups.py",
        "machine": machine,
        "config": {
            **{k: v for k, v in vars(args).items() if k not in ("refresh_loop", "keep_db")},
            "batch_size": BATCH_SIZE,
        },
        "phases": phases,
        "batch_outputs_per_second": {"rollups_off": round(off, 1), "rollups_on": round(on, 1)},
        "ratio_on_to_off": ratio,
        "paired_ratios": paired,
        "median_paired_ratio": statistics.median(paired),
        "final_refresh_s": final_refresh_s,
        "counts": counts,
        "rollups_match_outputs": counts["outputs"] == counts["rolled_up"]
        and counts["held"] == counts["rolled_up_held"],
        "target_ratio": TARGET_RATIO,
        "passed": ratio >= TARGET_RATIO,
    }
    json.dump(report, sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
