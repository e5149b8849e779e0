"""Dashboard benchmark: how long every dashboard page and metric endpoint takes to answer
over a million simulated outputs.

Against a fresh PostgreSQL database it loads ``--outputs`` outputs (default 1,000,000:
30 days of 33,334) with ``manage.py simulate`` (reviews come from the simulated reviewers
working the queue; ``--reviews-per-hour`` sets their pace), builds the rollups
(``rollups_rebuild --queue-history``), runs the learning cycles once for the current window
(so that the drift, validators, reviewers and thresholds pages have data) and analyses the
tables. The simulated days end now, so the filter's presets (which end now) fall on them.

Then, with the app under gunicorn (``--workers`` sync workers, default 4), a lead logs in
(POST /login/ with the CSRF token) and every page is fetched with that session and every
metric endpoint (the names from GET /api/v1/metrics/) with the lead's bearer token, each
with the default filter and with ``?range=30d``. Each URL is fetched ``--warmup`` times
untimed, then ``--repeat`` times timed, one request at a time over loopback, a new
connection each (gunicorn's sync workers close it after every answer). The app has no
response cache, so every request runs its queries.

Target (the issue's): every URL's p95 at most 250 ms at 1M outputs; at 10M
(``--outputs 10000000``), every p95 at most twice its 1M figure (compare two runs' JSON).

Output: one JSON object on stdout; progress goes to stderr. Run by hand, never a test.

    .venv/bin/python -m bench.dashboard [--outputs 1000000] [--repeat 30] [--keep-db]
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import psycopg
import requests

from bench.harness import (
    HOST,
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

DEFAULT_DB = "gatehouse_bench_dashboard"
TARGET_P95_MS = 250.0

PAGES = (
    "/",
    "/dashboard/queue/",
    "/dashboard/drift/",
    "/dashboard/validators/",
    "/dashboard/reviewers/",
    "/dashboard/calibration/",
    "/dashboard/alerts/",
    "/dashboard/outputs/",
    "/dashboard/thresholds/",
)
FILTERS = ("", "?range=30d")

LEAD = "benchlead"
LEAD_PASSWORD = "bench-lead-password-1"

COUNTS = {
    "outputs": "SELECT count(*) FROM gating_output",
    "reviews": "SELECT count(*) FROM gating_review",
    "review_items": "SELECT count(*) FROM gating_reviewitem",
    "open_items": "SELECT count(*) FROM gating_reviewitem WHERE state = 'open'",
    "output_rollup_rows": "SELECT count(*) FROM dashboard_outputrollup",
    "database_mib": "SELECT pg_database_size(current_database()) / 1048576",
}

log = stderr_log("dashboard")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--outputs", type=int, default=1_000_000, help="outputs to simulate")
    p.add_argument("--days", type=int, default=30, help="simulated days, ending now")
    p.add_argument("--reviews-per-hour", type=int, help="each simulated reviewer's pace")
    p.add_argument("--repeat", type=int, default=30, help="timed requests per URL")
    p.add_argument("--warmup", type=int, default=3, help="untimed requests per URL first")
    p.add_argument("--workers", type=int, default=4, help="gunicorn sync workers")
    p.add_argument("--db-name", default=DEFAULT_DB)
    p.add_argument("--keep-db", action="store_true", help="keep the database afterwards")
    p.add_argument(
        "--reuse-db",
        action="store_true",
        help="skip the simulation: use --db-name as an earlier run (--keep-db) left it",
    )
    p.add_argument(
        "--time-only",
        action="store_true",
        help="with --reuse-db: time the pages on the rollups and cycles as the earlier run "
        "left them (a rebuild at 10M outputs takes a quarter of an hour)",
    )
    args = p.parse_args(argv)
    if args.time_only and not args.reuse_db:
        p.error("--time-only needs --reuse-db")
    return args


def _timed(label: str, fn) -> float:
    log(f"{label}…")
    started = time.perf_counter()
    fn()
    seconds = round(time.perf_counter() - started, 1)
    log(f"{label}: {seconds} s")
    return seconds


def load(args: argparse.Namespace, env: dict[str, str]) -> dict[str, Any]:
    """Migrate, simulate (unless --reuse-db), roll up, learn once, analyse (all but the
    migration skipped with --time-only); the seconds each took."""
    per_day = math.ceil(args.outputs / args.days)
    simulate = [
        "simulate",
        "--seed=1",
        f"--days={args.days}",
        f"--outputs-per-day={per_day}",
        # The cycles run once below, for the current window: at their simulated times
        # they would multiply the load's time, and the pages read only their latest runs.
        "--no-learning",
        "-v",
        "0",
    ]
    if args.reviews_per_hour is not None:
        simulate.append(f"--reviews-per-hour={args.reviews_per_hour}")
    # A reused database is migrated too: the code timed may have come after its load.
    seconds: dict[str, Any] = {
        "reused_database": args.reuse_db,
        "migrate_s": _timed("migrate", lambda: manage(env, "migrate", "--noinput", "-v", "0")),
    }
    if not args.reuse_db:
        seconds["simulate_s"] = _timed(" ".join(simulate), lambda: manage(env, *simulate))
    elif args.time_only:
        return {"outputs_per_day": per_day, **seconds}
    seconds |= {
        "rollups_rebuild_s": _timed(
            "rollups_rebuild --queue-history",
            lambda: manage(env, "rollups_rebuild", "--queue-history", "-v", "0"),
        ),
        "run_cycle_all_s": _timed(
            "run_cycle all", lambda: manage(env, "run_cycle", "all", "-v", "0")
        ),
    }

    def analyze() -> None:
        dsn = f"host=127.0.0.1 user=postgres dbname={args.db_name}"
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute("VACUUM (ANALYZE)")

    seconds["vacuum_analyze_s"] = _timed("VACUUM (ANALYZE)", analyze)
    return {"outputs_per_day": per_day, **seconds}


def login(base: str) -> requests.Session:
    session = requests.Session()
    page = session.get(f"{base}/login/", timeout=30)
    page.raise_for_status()
    match = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text)
    if not match:
        raise RuntimeError("no CSRF token in the login form")
    answer = session.post(
        f"{base}/login/",
        data={
            "username": LEAD,
            "password": LEAD_PASSWORD,
            "csrfmiddlewaretoken": match.group(1),
        },
        headers={"Referer": f"{base}/login/"},
        allow_redirects=False,
        timeout=30,
    )
    if answer.status_code != 302 or "sessionid" not in session.cookies:
        raise RuntimeError(f"login failed: {answer.status_code}")
    return session


def time_url(get, url: str, warmup: int, repeat: int) -> dict[str, Any]:
    statuses: dict[int, int] = {}
    took: list[float] = []
    size = 0
    for n in range(warmup + repeat):
        started = time.perf_counter()
        resp = get(url)
        ms = (time.perf_counter() - started) * 1000
        statuses[resp.status_code] = statuses.get(resp.status_code, 0) + 1
        size = len(resp.content)
        if n >= warmup:
            took.append(ms)
    took.sort()
    p95 = percentile(took, 95)
    return {
        "p50_ms": round(percentile(took, 50), 1),
        "p95_ms": round(p95, 1),
        "max_ms": round(took[-1], 1),
        "status": statuses,
        "bytes": size,
        "met": p95 <= TARGET_P95_MS and set(statuses) == {200},
    }


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    env = app_env(args.db_name)
    port = free_port()
    base = f"http://{HOST}:{port}"
    log_file = Path(tempfile.mkstemp(prefix="gatehouse-bench-dashboard-", suffix=".log")[1])
    proc = None
    results: dict[str, dict[str, Any]] = {}
    try:
        if args.reuse_db:
            with psycopg.connect(f"host=127.0.0.1 user=postgres dbname={args.db_name}") as conn:
                pg_version = conn.execute("SHOW server_version").fetchone()[0]
            machine = machine_facts(pg_version)
        else:
            log(f"creating database {args.db_name}")
            machine = machine_facts(recreate_database(args.db_name))
        load_seconds = load(args, env)
        counts = db_counts(args.db_name, COUNTS)
        log(f"loaded: {counts}")

        lead_exists = db_counts(
            args.db_name, {"lead": f"SELECT count(*) FROM auth_user WHERE username = '{LEAD}'"}
        )["lead"]
        if not lead_exists:
            manage(env, "create_user", LEAD, "--role", "lead", "--password", LEAD_PASSWORD)
        token = manage(env, "create_api_token", LEAD).strip().split()[-1]

        proc = start_gunicorn(env, port, args.workers, 1, log_file, log=log)
        wait_healthy(proc, port)
        session = login(base)
        api = requests.Session()
        api.headers["Authorization"] = f"Bearer {token}"
        index = api.get(f"{base}/api/v1/metrics/", timeout=30)
        index.raise_for_status()
        names = [m["name"] for m in index.json()]
        log(f"{len(PAGES)} pages, {len(names)} metrics, {len(FILTERS)} filters each")

        def page_get(url: str) -> requests.Response:
            return session.get(base + url, allow_redirects=False, timeout=120)

        def api_get(url: str) -> requests.Response:
            return api.get(base + url, timeout=120)

        urls = [(page_get, p + f) for p in PAGES for f in FILTERS] + [
            (api_get, f"/api/v1/metrics/{n}/{f}") for n in names for f in FILTERS
        ]
        timing_started = time.perf_counter()
        for get, url in urls:
            results[url] = time_url(get, url, args.warmup, args.repeat)
            r = results[url]
            log(f"{url}: p50 {r['p50_ms']} ms, p95 {r['p95_ms']} ms, status {r['status']}")
        timing_s = round(time.perf_counter() - timing_started, 1)
    finally:
        if proc is not None:
            stop_gunicorn(proc, log=log)
        if not args.keep_db and not args.reuse_db:
            drop_database(args.db_name)
        log_file.unlink(missing_ok=True)

    missed = [url for url, r in results.items() if not r["met"]]
    report = {
        "benchmark": "bench/dashboard.py",
        "machine": machine,
        "config": {k: v for k, v in vars(args).items()},
        "counts": counts,
        "load": load_seconds,
        "timing_s": timing_s,
        "urls": results,
        "target": {
            "p95_ms": TARGET_P95_MS,
            "met": not missed,
            "missed": missed,
            "at_10m": "every p95 at most 2x its 1M figure: compare with a 1M run's JSON",
        },
        "slowest_p95": sorted(
            ((url, r["p95_ms"]) for url, r in results.items()), key=lambda x: -x[1]
        )[:10],
    }
    json.dump(report, sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
