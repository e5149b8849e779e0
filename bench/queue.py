"""Review-queue benchmark: many reviewers claiming from a large queue over real HTTP.

What it measures, against a fresh PostgreSQL database and the app under gunicorn:

* A queue of ``--items`` (default 1,000,000) held outputs, each with its open review item,
  written straight into ``gating_output`` and ``gating_reviewitem`` with SQL
  (``INSERT … SELECT … FROM generate_series``), then vacuumed, analysed and checkpointed.
* ``--claimers`` (default 32) reviewer users, each with its own bearer token and its own
  keep-alive ``http.client`` connection, in a client process of their own. Each loops:
  ``POST /api/v1/queue/claim/`` (timed: the figure the targets are about), then
  ``POST /api/v1/queue/<id>/decision/`` with ``{"action": "approve"}`` (timed separately).
  A 2 s warm-up with all claimers, a short single-claimer phase (the uncontended latency),
  then ``--duration`` seconds measured.
* Double claims: every claimed item id is kept. An id claimed twice, by the same reviewer
  or by two, is a double claim; so would be a 409 on a decision. Afterwards the database is
  checked too: one review per successful decision, and no item with two reviews.
* The claim's SQL at the database alone: the ``SELECT … FOR UPDATE SKIP LOCKED`` that
  Django issues for an HTTP claim (captured through Django's test client in a rolled-back
  transaction) under ``EXPLAIN (ANALYZE, BUFFERS)``, before and after the load. That
  separates the query's cost from HTTP, framework and commit.
* While the measured phase runs: the CPU of gunicorn, PostgreSQL and the client from
  ``/proc``, and what PostgreSQL's backends are doing (``pg_stat_activity`` sampled every
  50 ms): running, waiting on a lock, on the WAL flush, or idle in a transaction.

Output: one JSON object on stdout; progress goes to stderr. This is a benchmark, run by
hand (``make bench``), never a timed test.

    .venv/bin/python -m bench.queue [--items 1000000] [--claimers 32] [--duration 20]
        [--workers 4] [--threads 1] [--think-ms 0] [--keep-db]
"""

from __future__ import annotations

import argparse
import collections
import concurrent.futures
import http.client
import json
import multiprocessing
import os
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import psycopg

from bench.harness import (
    HOST,
    PG_ADMIN_DSN,
    ROOT,
    app_env,
    drop_database,
    free_port,
    git_state,
    machine_facts,
    manage,
    percentile,
    recreate_database,
    start_gunicorn,
    stop_gunicorn,
    wait_healthy,
)

DEFAULT_DB = "gatehouse_bench_queue"

TARGETS = {"claim_p99_ms": 30.0, "double_claims": 0}

TASK_TYPES = ("summarize", "classify", "extract", "translate")
MODELS = ("model-a", "model-b", "model-c")
SEED_CHUNK = 100_000
SEED_SPAN = timedelta(days=7)  # queued_at spread over the past week
CLAIM_PATH = "/api/v1/queue/claim/"
DECISION_BODY = b'{"action":"approve"}'


def log(message: str) -> None:
    print(f"[bench-queue] {message}", file=sys.stderr, flush=True)


# --------------------------------------------------------------------------- load client


@dataclass(frozen=True)
class LoadSpec:
    name: str
    claimers: int
    duration_s: float
    think_ms: float = 0.0


@dataclass
class ClaimerResult:
    claim_ms: list[float] = field(default_factory=list)
    claim_at_s: list[float] = field(default_factory=list)  # start, from the phase's start
    decision_ms: list[float] = field(default_factory=list)
    claimed: list[int] = field(default_factory=list)  # item ids, in order
    empty: int = 0  # 204: nothing left to claim
    conflicts: int = 0  # 409 on a decision
    foreign: int = 0  # a 200 whose claimed_by is not this reviewer
    claim_errors: int = 0
    decision_errors: int = 0
    error_samples: list[str] = field(default_factory=list)


def _post(
    conn: http.client.HTTPConnection, path: str, body: bytes | None, headers: dict
) -> tuple[int, bytes]:
    conn.request("POST", path, body=body, headers=headers)
    response = conn.getresponse()
    return response.status, response.read()


def _claimer_thread(
    spec: LoadSpec,
    port: int,
    reviewer: tuple[str, str],
    index: int,
    started: float,
    deadline: float,
    out: ClaimerResult,
) -> None:
    username, token = reviewer
    claim_headers = {"Authorization": f"Bearer {token}", "Accept": "application/json"}
    decision_headers = claim_headers | {"Content-Type": "application/json"}
    conn = http.client.HTTPConnection(HOST, port, timeout=120)
    rng = random.Random(index)

    def failed(kind: str, detail: str) -> None:
        if kind == "claim":
            out.claim_errors += 1
        else:
            out.decision_errors += 1
        if len(out.error_samples) < 5:
            out.error_samples.append(f"{kind}: {detail}")

    if spec.think_ms > 0:
        # Reviewers who pause do not all start at the same instant: without this, the first
        # claims of the phase are one burst of all the claimers at once.
        time.sleep(rng.uniform(0, spec.think_ms) / 1000)
    while time.perf_counter() < deadline:
        t0 = time.perf_counter()
        try:
            status, payload = _post(conn, CLAIM_PATH, None, claim_headers)
        except (OSError, http.client.HTTPException) as exc:
            conn.close()  # the next request reconnects
            failed("claim", f"{type(exc).__name__}: {exc}")
            continue
        elapsed_ms = (time.perf_counter() - t0) * 1000
        if status == 204:
            out.empty += 1
            time.sleep(0.05)
            continue
        if status != 200:
            failed("claim", f"HTTP {status}: {payload[:300]!r}")
            continue
        try:
            item = json.loads(payload)
            item_id = int(item["id"])
        except (ValueError, KeyError, TypeError) as exc:
            failed("claim", f"unreadable answer ({exc}): {payload[:300]!r}")
            continue
        out.claim_ms.append(elapsed_ms)
        out.claim_at_s.append(t0 - started)
        out.claimed.append(item_id)
        if item.get("claimed_by") != username:
            out.foreign += 1

        # The decision of what was claimed is made even past the deadline: nothing is left
        # held, and every claim is checked against its decision.
        t1 = time.perf_counter()
        try:
            status, payload = _post(
                conn, f"/api/v1/queue/{item_id}/decision/", DECISION_BODY, decision_headers
            )
        except (OSError, http.client.HTTPException) as exc:
            conn.close()
            failed("decision", f"{type(exc).__name__}: {exc}")
            continue
        if status == 201:
            out.decision_ms.append((time.perf_counter() - t1) * 1000)
        elif status == 409:
            out.conflicts += 1
            if len(out.error_samples) < 5:
                out.error_samples.append(f"decision 409 on item {item_id}: {payload[:200]!r}")
        else:
            failed("decision", f"HTTP {status}: {payload[:300]!r}")
        if spec.think_ms > 0:
            time.sleep(rng.expovariate(1000 / spec.think_ms))
    conn.close()


def run_load(spec: LoadSpec, port: int, reviewers: list[tuple[str, str]]) -> dict[str, Any]:
    """Drive one phase with one thread per claimer until its deadline (in the client process).

    Returns the raw figures; the parent summarises them."""
    results = [ClaimerResult() for _ in range(spec.claimers)]
    cpu_started = time.process_time()
    started = time.perf_counter()
    deadline = started + spec.duration_s
    threads = [
        threading.Thread(
            target=_claimer_thread,
            args=(spec, port, reviewers[i], i, started, deadline, results[i]),
            daemon=True,
        )
        for i in range(spec.claimers)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - started
    return {
        "elapsed_s": elapsed,
        "client_cpu_s": time.process_time() - cpu_started,
        "claimers": [r.__dict__ for r in results],
    }


def _round(value: float | None, digits: int = 2) -> float | None:
    return None if value is None else round(value, digits)


def _latency_summary(values: list[float], elapsed_s: float) -> dict[str, Any]:
    ordered = sorted(values)
    n = len(ordered)
    return {
        "count": n,
        "throughput_rps": round(n / elapsed_s, 2) if elapsed_s else None,
        "p50_ms": _round(percentile(ordered, 50)),
        "p90_ms": _round(percentile(ordered, 90)),
        "p99_ms": _round(percentile(ordered, 99)),
        "mean_ms": _round(sum(ordered) / n if n else None),
        "max_ms": _round(ordered[-1] if ordered else None),
    }


def summarise_phase(raw: dict[str, Any]) -> dict[str, Any]:
    elapsed = raw["elapsed_s"]
    claimers = raw["claimers"]
    claims = [ms for c in claimers for ms in c["claim_ms"]]
    decisions = [ms for c in claimers for ms in c["decision_ms"]]
    summary: dict[str, Any] = {
        "claimers": len(claimers),
        "elapsed_s": round(elapsed, 3),
        "claims": _latency_summary(claims, elapsed)
        | {"empty_204": sum(c["empty"] for c in claimers)},
        "decisions": _latency_summary(decisions, elapsed),
        "conflicts_409": sum(c["conflicts"] for c in claimers),
        "claim_errors": sum(c["claim_errors"] for c in claimers),
        "decision_errors": sum(c["decision_errors"] for c in claimers),
        "foreign_claims": sum(c["foreign"] for c in claimers),
        # The load generator's own CPU, in % of one core: it shares the machine's cores.
        "client_cpu_percent": round(100 * raw["client_cpu_s"] / elapsed, 1),
    }
    samples = [s for c in claimers for s in c["error_samples"]][:5]
    if samples:
        summary["error_samples"] = samples
    return summary


def claim_timeline(raw: dict[str, Any], window_s: float) -> list[dict[str, Any]]:
    """Claim latency per window of the phase: does it drift as the queue's head churns?"""
    buckets: dict[int, list[float]] = collections.defaultdict(list)
    for c in raw["claimers"]:
        for at, ms in zip(c["claim_at_s"], c["claim_ms"], strict=True):
            buckets[int(at // window_s)].append(ms)
    rows = []
    for b in sorted(buckets):
        ordered = sorted(buckets[b])
        rows.append(
            {
                "from_s": round(b * window_s, 1),
                "claims": len(ordered),
                "p50_ms": _round(percentile(ordered, 50)),
                "p99_ms": _round(percentile(ordered, 99)),
            }
        )
    return rows


def double_claims(raws: list[dict[str, Any]], usernames: list[str]) -> dict[str, Any]:
    """Every claim of every phase: which item ids came back more than once, and to whom."""
    holders: dict[int, list[str]] = collections.defaultdict(list)
    for raw in raws:
        for i, c in enumerate(raw["claimers"]):
            for item_id in c["claimed"]:
                holders[item_id].append(usernames[i])
    repeated = {item_id: who for item_id, who in holders.items() if len(who) > 1}
    return {
        "claims_checked": sum(len(who) for who in holders.values()),
        "distinct_items": len(holders),
        "extra_claims": sum(len(who) - 1 for who in repeated.values()),
        "items_claimed_twice": len(repeated),
        "items_claimed_by_two_reviewers": sum(1 for who in repeated.values() if len(set(who)) > 1),
        "examples": [{"item": k, "claimed_by": v} for k, v in list(repeated.items())[:5]],
    }


# --------------------------------------------------------------------------- Django side

# These run in a child process of their own (spawned), with the app's environment.


def _django_ready(env: dict[str, str]) -> None:
    os.environ.update(env)
    if str(ROOT) not in sys.path:
        sys.path.insert(1, str(ROOT))
    import django

    django.setup()


def django_setup_users(env: dict[str, str], claimers: int) -> dict[str, Any]:
    """The gateway that owns the outputs, the task types, and the reviewers with tokens."""
    _django_ready(env)
    from gating import services
    from gating.models import TaskType
    from gating.roles import Role

    gateway = services.user_create(username="bench-gateway", role=Role.GATEWAY)
    task_type_ids = [TaskType.objects.get_or_create(name=name)[0].pk for name in TASK_TYPES]
    reviewers = []
    for i in range(claimers):
        user = services.user_create(username=f"bench-reviewer-{i:02d}", role=Role.REVIEWER)
        _, raw = services.api_token_create(user=user, name="bench")
        reviewers.append((user.username, raw))
    return {"gateway_id": gateway.pk, "task_type_ids": task_type_ids, "reviewers": reviewers}


def django_claim_sql(env: dict[str, str], token: str, explain_runs: int) -> dict[str, Any]:
    """One claim and one decision as the API serves them, in a transaction rolled back.

    The claim's ``SELECT … FOR UPDATE SKIP LOCKED`` is captured as Django sends it and run
    under ``EXPLAIN (ANALYZE, BUFFERS)``; the queries per request are counted, and the
    claim is timed in-process (no HTTP, no commit) for comparison with the HTTP figures.
    """
    _django_ready(env)
    from django.db import connection, transaction
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    client = Client(SERVER_NAME=HOST, headers={"authorization": f"Bearer {token}"})
    with transaction.atomic():
        client.get("/api/v1/ping/")  # loads the token into this process's cache
        # Copied at once: the next request's request_started signal empties the log.
        with CaptureQueriesContext(connection) as captured:
            claim = client.generic("POST", CLAIM_PATH)
        claim_queries = [q["sql"] for q in captured.captured_queries]
        if claim.status_code != 200:
            raise RuntimeError(f"claim answered {claim.status_code}: {claim.content[:300]!r}")
        item_id = claim.json()["id"]
        with CaptureQueriesContext(connection) as captured:
            decision = client.post(
                f"/api/v1/queue/{item_id}/decision/",
                DECISION_BODY,
                content_type="application/json",
            )
        decision_queries = [q["sql"] for q in captured.captured_queries]
        if decision.status_code != 201:
            raise RuntimeError(f"decision answered {decision.status_code}")
        transaction.set_rollback(True)

    claim_sql = [sql for sql in claim_queries if "SKIP LOCKED" in sql]
    if len(claim_sql) != 1:
        raise RuntimeError(f"expected one SKIP LOCKED query, got {len(claim_sql)}")
    sql = claim_sql[0]

    runs = []
    for _ in range(explain_runs):
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(f"EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) {sql}")
            plan = cursor.fetchone()[0]
            transaction.set_rollback(True)
        plan = plan[0] if isinstance(plan, list) else json.loads(plan)[0]
        runs.append(plan)
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN (ANALYZE, BUFFERS) {sql}")
        plan_text = [row[0] for row in cursor.fetchall()]
        transaction.set_rollback(True)

    in_process: dict[str, list[float]] = {"claim": [], "decision": []}
    for _ in range(30):
        with transaction.atomic():
            t0 = time.perf_counter()
            response = client.generic("POST", CLAIM_PATH)
            t1 = time.perf_counter()
            decided = client.post(
                f"/api/v1/queue/{response.json()['id']}/decision/",
                DECISION_BODY,
                content_type="application/json",
            )
            t2 = time.perf_counter()
            if (response.status_code, decided.status_code) != (200, 201):
                raise RuntimeError(f"in-process: {response.status_code}, {decided.status_code}")
            in_process["claim"].append((t1 - t0) * 1000)
            in_process["decision"].append((t2 - t1) * 1000)
            transaction.set_rollback(True)

    def walk(node: dict) -> int:
        return node.get("Shared Hit Blocks", 0) + node.get("Shared Read Blocks", 0)

    execution = sorted(r["Execution Time"] for r in runs)
    planning = sorted(r["Planning Time"] for r in runs)
    return {
        "sql": sql,
        "explain_ms": {
            # The first run reads cold pages; the median of the rest is the steady cost.
            "planning_ms": round(statistics.median(planning), 3),
            "execution_ms": round(statistics.median(execution), 3),
            "first_execution_ms": round(runs[0]["Execution Time"], 3),
            "runs": explain_runs,
        },
        "buffers": walk(runs[-1]["Plan"]),
        "plan": plan_text,
        "queries_per_claim": len(claim_queries),
        "queries_per_decision": len(decision_queries),
        "claim_queries": [_sql_label(sql) for sql in claim_queries],
        "decision_queries": [_sql_label(sql) for sql in decision_queries],
        # The server's own cost per request, uncontended: Django's test client in one
        # thread, 30 times each, rolled back (so no HTTP and no commit).
        "in_process_ms": {
            kind: {"p50": round(statistics.median(v), 2), "min": round(min(v), 2)}
            for kind, v in in_process.items()
        },
    }


def _sql_label(sql: str) -> str:
    """A short name for a statement: its verb and table (and the claim's lock clause)."""
    words = sql.replace('"', "").split()
    verb = words[0].upper() if words else "?"
    table = "?"
    for keyword in ("FROM", "INTO", "UPDATE"):
        upper = [w.upper() for w in words]
        if keyword in upper:
            idx = upper.index(keyword)
            if idx + 1 < len(words):
                table = words[idx + 1].split(".")[-1].strip("(")
                break
    if verb in ("SAVEPOINT", "RELEASE", "ROLLBACK", "COMMIT", "BEGIN"):
        return verb
    if table == "?" and verb == "SELECT" and len(words) > 1 and "." in words[1]:
        # pg_stat_activity keeps the first 1 kB of a query: a long select list hides FROM.
        return f"SELECT {words[1].split('.')[0]} (text cut before FROM)"
    if table == "?":
        return " ".join(sql.split())[:40]  # e.g. SELECT 1, Django's connection health check
    suffix = " FOR UPDATE SKIP LOCKED" if "SKIP LOCKED" in sql else ""
    suffix = suffix or (" FOR UPDATE" if "FOR UPDATE" in sql else "")
    return f"{verb} {table}{suffix}"


def in_django(fn, *args):
    """Run ``fn(*args)`` in a fresh spawned process (Django set up there, not here)."""
    spawn = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(max_workers=1, mp_context=spawn) as pool:
        return pool.submit(fn, *args).result()


# --------------------------------------------------------------------------- seeding

_SEED_OUTPUTS = """
INSERT INTO gating_output (
    id, source_id, external_id, request_hash, task_type_id, model, tier,
    input_text, output_text, input_clarity, coherence, requires_fact_check,
    validator_results, evidence, metadata, score, base_score, decision,
    review_threshold, approve_threshold, scorer, impacts, reasons, status,
    final_output_text, created_at, decided_at, shadow_scores
)
SELECT
    g,
    %(source)s,
    'seed-' || g,
    md5(g::text) || md5('x' || g),
    (%(task_types)s::bigint[])[1 + g %% 4],
    (%(models)s::text[])[1 + (g / 4) %% 3],
    CASE WHEN g %% 3 = 2 THEN 'quality' ELSE 'fast' END,
    'Summarise the quarterly report for the board in three sentences. Case ' || g || '.',
    'Revenue grew 4%% on the quarter; costs were flat; guidance is unchanged. ' || g,
    round((0.55 + 0.4 * random())::numeric, 2),
    round((0.7 + 0.28 * random())::numeric, 2),
    g %% 5 < 3,
    -- As ingest stores them: every result with its detail, "" where none was sent.
    CASE WHEN g %% 2 = 0
        THEN '[{"name": "facts", "passed": false, "detail": "2 claims unsupported"},
               {"name": "schema", "passed": true, "detail": ""},
               {"name": "grammar", "passed": true, "detail": ""},
               {"name": "length", "passed": false, "detail": "12 words over"}]'::jsonb
        ELSE '[{"name": "facts", "passed": false, "detail": ""},
               {"name": "schema", "passed": false, "detail": ""},
               {"name": "grammar", "passed": true, "detail": ""},
               {"name": "length", "passed": true, "detail": ""}]'::jsonb
    END,
    NULL,
    jsonb_build_object('request_id', 'r-' || g, 'region', 'eu'),
    s.score,
    s.score + 1.5,
    'pending_review',
    4.0,
    7.0,
    'validators-v2',
    '[{"factor": "validator:facts", "points": 0.0, "detail": "failed (weight 1)"},
      {"factor": "hallucination_penalty", "points": -2.0, "detail": "facts failed"}]'::jsonb,
    jsonb_build_array(
        'Hallucination penalty: fact-check validator facts failed.',
        'Score ' || round(s.score::numeric, 2) || ' is below the review threshold 4.'
    ),
    'pending',
    NULL,
    %(start)s::timestamptz + (g - 1) * %(step)s::interval + s.jitter * interval '30 seconds',
    NULL,
    '{}'::jsonb
FROM (
    SELECT g, 4 * random() AS score, random() AS jitter
    FROM generate_series(%(lo)s::bigint, %(hi)s::bigint) AS g
) AS s
"""

_SEED_ITEMS = """
INSERT INTO gating_reviewitem (
    id, output_id, kind, is_audit, inclusion_probability, needs_second_review, state,
    task_type_id, model, score, queued_at, turn_at
)
SELECT id, id, 'review', false, 1.0, false, 'open', task_type_id, model, score, created_at,
    created_at
FROM gating_output
WHERE id BETWEEN %(lo)s AND %(hi)s
"""


def _dsn(db_name: str) -> str:
    return f"host=127.0.0.1 port=5432 user=postgres dbname={db_name}"


def seed_queue(db_name: str, items: int, gateway_id: int, task_type_ids: list[int]) -> dict:
    """``items`` held outputs with their open review items, oldest first by id."""
    started = time.perf_counter()
    now = datetime.now(UTC)
    params = {
        "source": gateway_id,
        "task_types": task_type_ids,
        "models": list(MODELS),
        "start": now - SEED_SPAN,
        "step": SEED_SPAN / max(items, 1),
    }
    with psycopg.connect(_dsn(db_name), autocommit=True) as conn:
        conn.execute("SET synchronous_commit = off")  # the seeding only
        for lo in range(1, items + 1, SEED_CHUNK):
            hi = min(lo + SEED_CHUNK - 1, items)
            with conn.transaction():
                conn.execute(_SEED_OUTPUTS, params | {"lo": lo, "hi": hi})
                conn.execute(_SEED_ITEMS, {"lo": lo, "hi": hi})
            log(f"seeded {hi:,} / {items:,} items ({time.perf_counter() - started:.1f} s)")
        for table in ("gating_output", "gating_reviewitem"):
            conn.execute(f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), {max(items, 1)})")
        log("VACUUM (ANALYZE) and CHECKPOINT")
        conn.execute("VACUUM (ANALYZE) gating_output")
        conn.execute("VACUUM (ANALYZE) gating_reviewitem")
        # Or the checkpoint of a million rows' WAL would land in the measured phase.
        conn.execute("CHECKPOINT")
        sizes = conn.execute(
            "SELECT pg_size_pretty(pg_total_relation_size('gating_output')),"
            " pg_size_pretty(pg_total_relation_size('gating_reviewitem')),"
            " pg_size_pretty(pg_relation_size('item_open_by_turn'))"
        ).fetchone()
    seconds = time.perf_counter() - started
    log(f"seeded {items:,} items in {seconds:.1f} s")
    return {
        "items": items,
        "seconds": round(seconds, 1),
        "gating_output_size": sizes[0],
        "gating_reviewitem_size": sizes[1],
        "item_open_by_turn_index_size": sizes[2],
    }


def check_database(db_name: str) -> dict[str, Any]:
    with psycopg.connect(_dsn(db_name)) as conn:
        row = conn.execute(
            """
            SELECT
                (SELECT count(*) FROM gating_review),
                (SELECT count(*) FROM (SELECT item_id FROM gating_review
                                       GROUP BY item_id HAVING count(*) > 1) AS d),
                (SELECT count(*) FROM gating_reviewitem WHERE state = 'decided'),
                (SELECT count(*) FROM gating_reviewitem WHERE state = 'open'),
                (SELECT count(*) FROM gating_reviewitem
                 WHERE state = 'open' AND claimed_by_id IS NOT NULL),
                (SELECT count(*) FROM gating_auditevent WHERE action = 'claim'),
                (SELECT count(*) FROM gating_output WHERE status = 'approved'),
                (SELECT n_dead_tup FROM pg_stat_user_tables WHERE relname = 'gating_reviewitem')
            """
        ).fetchone()
    keys = (
        "reviews",
        "items_with_two_reviews",
        "items_decided",
        "items_open",
        "items_open_and_claimed",
        "claim_audit_events",
        "outputs_approved",
        "reviewitem_dead_tuples",
    )
    return dict(zip(keys, row, strict=True))


# --------------------------------------------------------------------------- observing the server


Proc = tuple[int, str, int, str]  # ppid, comm, utime + stime in clock ticks, cmdline


def _process_table() -> dict[int, Proc]:
    """Every process, from /proc; the command line only for PostgreSQL's."""
    table = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                stat = fh.read()
            comm = stat[stat.index("(") + 1 : stat.rindex(")")]
            cmdline = ""
            if comm == "postgres":
                with open(f"/proc/{entry}/cmdline", "rb") as fh:
                    cmdline = fh.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        rest = stat[stat.rindex(")") + 2 :].split()
        table[int(entry)] = (int(rest[1]), comm, int(rest[11]) + int(rest[12]), cmdline)
    return table


def _cpu_times() -> list[int]:
    with open("/proc/stat") as fh:
        return [int(x) for x in fh.readline().split()[1:]]


@dataclass
class CpuSnapshot:
    at: float
    system: list[int]
    procs: dict[int, Proc]
    own_cpu_s: float


def cpu_snapshot() -> CpuSnapshot:
    own = os.times()
    return CpuSnapshot(time.perf_counter(), _cpu_times(), _process_table(), own.user + own.system)


def _descendants(procs: dict[int, Proc], root: int) -> set[int]:
    children = collections.defaultdict(set)
    for pid, (ppid, *_) in procs.items():
        children[ppid].add(pid)
    found, todo = set(), [root]
    while todo:
        pid = todo.pop()
        found.add(pid)
        todo.extend(children[pid] - found)
    return found


def _postgres_ours(cmdline: str, db_name: str) -> bool:
    """A backend of the bench database, or one of the server's own processes (WAL writer,
    checkpointer...): not a backend of another database (other work on the machine)."""
    # "postgres: 15/main: <user> <database> <host>(<port>) <state>" for a backend
    words = cmdline.split(":", 2)[-1].split()
    is_backend = len(words) >= 3 and ("(" in words[2] or words[2] == "[local]")
    return not is_backend or words[1] == db_name


def cpu_report(
    before: CpuSnapshot, after: CpuSnapshot, gunicorn_pid: int, db_name: str, client_cpu_s: float
) -> dict[str, Any]:
    """CPU over the window in % of one core: the machine, and who used it.

    ``other_work`` is what is left: processes that are not this benchmark's (the machine
    is shared), which compete with the server for the same cores."""
    ticks = os.sysconf("SC_CLK_TCK")
    wall = after.at - before.at

    def percent(pids: set[int]) -> float:
        total = 0
        for pid in pids:
            if pid in after.procs:
                old = before.procs.get(pid)
                total += after.procs[pid][2] - (old[2] if old else 0)
        return 100 * total / ticks / wall

    gunicorn = percent(_descendants(after.procs, gunicorn_pid))
    postgres = percent(
        {
            pid
            for pid, (_, comm, _, cmdline) in after.procs.items()
            if comm == "postgres" and _postgres_ours(cmdline, db_name)
        }
    )
    client = 100 * client_cpu_s / wall
    sampler = 100 * (after.own_cpu_s - before.own_cpu_s) / wall
    # user nice system idle iowait irq softirq steal
    delta = [a - b for a, b in zip(after.system, before.system, strict=False)]
    total = sum(delta[:8]) or 1
    busy_share = (total - delta[3] - delta[4]) / total
    cores = os.cpu_count() or 1
    machine = 100 * busy_share * cores
    return {
        "window_s": round(wall, 2),
        "cores": cores,
        "machine_busy_percent_of_all_cores": round(100 * busy_share, 1),
        "machine_steal_percent": round(100 * delta[7] / total, 1) if len(delta) > 7 else None,
        "percent_of_one_core": {
            "machine": round(machine, 1),
            "gunicorn": round(gunicorn, 1),
            "postgres_bench": round(postgres, 1),
            "client": round(client, 1),
            "sampler": round(sampler, 1),
            "other_work": round(max(machine - gunicorn - postgres - client - sampler, 0), 1),
        },
    }


def _activity_label(query: str) -> str:
    return _sql_label(query) if query else "?"


class ActivitySampler(threading.Thread):
    """Samples what the bench database's backends do, every ``interval_s``."""

    def __init__(self, db_name: str, interval_s: float = 0.05):
        super().__init__(daemon=True)
        self.db_name = db_name
        self.interval_s = interval_s
        self.stop_event = threading.Event()
        self.samples = 0
        self.counts: collections.Counter[tuple[str, str, str]] = collections.Counter()

    def run(self) -> None:
        with psycopg.connect(_dsn(self.db_name), autocommit=True) as conn:
            while not self.stop_event.is_set():
                rows = conn.execute(
                    "SELECT state, wait_event_type, wait_event, query FROM pg_stat_activity"
                    " WHERE datname = %s AND backend_type = 'client backend'"
                    " AND pid <> pg_backend_pid()",
                    (self.db_name,),
                ).fetchall()
                self.samples += 1
                for state, wait_type, wait_event, query in rows:
                    if state == "active":
                        wait = f"{wait_type}:{wait_event}" if wait_type else "running (CPU)"
                        self.counts[(state, wait, _activity_label(query))] += 1
                    else:
                        self.counts[(state or "?", "", "")] += 1
                self.stop_event.wait(self.interval_s)

    def report(self) -> dict[str, Any]:
        n = max(self.samples, 1)
        by_state: collections.Counter[str] = collections.Counter()
        by_wait: collections.Counter[str] = collections.Counter()
        for (state, wait, _), count in self.counts.items():
            by_state[state] += count
            if state == "active":
                by_wait[wait] += count
        active = [
            {"wait": wait, "statement": label, "mean_backends": round(count / n, 2)}
            for (state, wait, label), count in self.counts.most_common()
            if state == "active"
        ]
        return {
            "samples": self.samples,
            "interval_ms": int(self.interval_s * 1000),
            # Mean number of backends in each state at a sampled instant.
            "mean_backends_by_state": {k: round(v / n, 2) for k, v in by_state.most_common()},
            "mean_active_by_wait": {k: round(v / n, 2) for k, v in by_wait.most_common()},
            "top_active": active[:12],
        }


# --------------------------------------------------------------------------- server side


def _pg_settings() -> dict[str, str]:
    names = ("shared_buffers", "synchronous_commit", "max_connections", "work_mem")
    with psycopg.connect(PG_ADMIN_DSN) as conn:
        rows = conn.execute(
            "SELECT name, setting, unit FROM pg_settings WHERE name = ANY(%s)", (list(names),)
        ).fetchall()
    return {name: f"{setting}{'×' + unit if unit else ''}" for name, setting, unit in rows}


# --------------------------------------------------------------------------- main


def _machine(pg_version: str) -> dict[str, Any]:
    return {
        **machine_facts(pg_version),
        "postgresql_settings": _pg_settings(),
        "git": _git_version(),
    }


def _git_version() -> dict[str, Any] | None:
    """The app's commit, and any uncommitted change to the app: the figures belong to it."""
    state = git_state("gating", "dashboard", short=True)
    if state is None:
        return None
    commit, changed = state
    return {"commit": commit, "app_uncommitted": changed}


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--items", type=int, default=1_000_000, help="queue size (default 1000000)")
    p.add_argument("--claimers", type=int, default=32, help="concurrent reviewers (default 32)")
    p.add_argument("--duration", type=float, default=20.0, help="seconds measured (default 20)")
    p.add_argument("--warmup", type=float, default=2.0, help="seconds of warm-up (default 2)")
    p.add_argument(
        "--single-duration",
        type=float,
        default=5.0,
        help="seconds of the one-claimer phase, the uncontended latency (default 5; 0: skip)",
    )
    p.add_argument(
        "--think-ms",
        type=float,
        default=0.0,
        help="mean pause of each reviewer after a decision, exponential (default 0: none)",
    )
    p.add_argument("--workers", type=int, default=4, help="gunicorn workers (default 4)")
    p.add_argument(
        "--threads",
        type=int,
        default=1,
        help="threads per worker; above 1 uses the gthread worker class (default 1: sync)",
    )
    p.add_argument("--port", type=int, default=0, help="port for gunicorn (default: a free one)")
    p.add_argument(
        "--db-name", default=DEFAULT_DB, help=f"database to create (default {DEFAULT_DB})"
    )
    p.add_argument("--keep-db", action="store_true", help="keep the bench database afterwards")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.items < 1 or args.claimers < 1:
        raise SystemExit("--items and --claimers must be at least 1")
    port = args.port or free_port()
    env = app_env(args.db_name)

    log(f"creating database {args.db_name}")
    pg_version = recreate_database(args.db_name)
    machine = _machine(pg_version)
    proc: subprocess.Popen | None = None
    log_file = Path(tempfile.mkstemp(prefix="gatehouse-bench-queue-gunicorn-", suffix=".log")[1])
    phases: dict[str, dict[str, Any]] = {}
    raws: list[dict[str, Any]] = []
    try:
        log("migrating")
        manage(env, "migrate", "--noinput", "-v", "0")
        log(f"creating {args.claimers} reviewers with tokens")
        setup = in_django(django_setup_users, env, args.claimers)
        reviewers = [tuple(r) for r in setup["reviewers"]]
        usernames = [name for name, _ in reviewers]

        log(f"seeding {args.items:,} held outputs and their review items")
        seed = seed_queue(args.db_name, args.items, setup["gateway_id"], setup["task_type_ids"])

        log("EXPLAIN ANALYZE of the claim's SQL, before the load")
        sql_before = in_django(django_claim_sql, env, reviewers[0][1], 7)
        log(
            f"claim SQL: planning {sql_before['explain_ms']['planning_ms']} ms, "
            f"execution {sql_before['explain_ms']['execution_ms']} ms"
        )

        proc = start_gunicorn(env, port, args.workers, args.threads, log_file, log=log)
        wait_healthy(proc, port)
        log(f"gunicorn answering on port {port}")

        spawn = multiprocessing.get_context("spawn")
        with concurrent.futures.ProcessPoolExecutor(max_workers=1, mp_context=spawn) as client:

            def drive(spec: LoadSpec) -> dict[str, Any]:
                raw = client.submit(run_load, spec, port, reviewers).result()
                raws.append(raw)
                return raw

            if args.warmup > 0:
                log(f"warm-up: {args.claimers} claimers for {args.warmup:g} s")
                drive(LoadSpec("warmup", args.claimers, args.warmup, args.think_ms))
            if args.single_duration > 0:
                log(f"one claimer for {args.single_duration:g} s")
                raw = drive(LoadSpec("single", 1, args.single_duration))
                phases["single_claimer"] = summarise_phase(raw)
                log(_phase_line(phases["single_claimer"]))

            log(f"measured: {args.claimers} claimers for {args.duration:g} s")
            sampler = ActivitySampler(args.db_name)
            cpu_before = cpu_snapshot()
            sampler.start()
            raw = drive(LoadSpec("measured", args.claimers, args.duration, args.think_ms))
            sampler.stop_event.set()
            cpu_after = cpu_snapshot()
            sampler.join()
            measured = summarise_phase(raw)
            measured["claim_timeline"] = claim_timeline(raw, max(args.duration / 10, 1.0))
            phases["measured"] = measured
            log(_phase_line(measured))
        server = {
            "cpu": cpu_report(cpu_before, cpu_after, proc.pid, args.db_name, raw["client_cpu_s"]),
            "pg_activity": sampler.report(),
        }
        log("stopping gunicorn")
        stop_gunicorn(proc, log=log)

        db = check_database(args.db_name)
        log("EXPLAIN ANALYZE of the claim's SQL, after the load")
        sql_after = in_django(django_claim_sql, env, reviewers[0][1], 7)
    except BaseException:
        if log_file.exists():
            sys.stderr.write(log_file.read_text()[-4000:])
        raise
    finally:
        if proc is not None:
            stop_gunicorn(proc, log=log)
        if args.keep_db:
            log(f"keeping database {args.db_name}")
        else:
            log(f"dropping database {args.db_name}")
            drop_database(args.db_name)

    gunicorn_log = log_file.read_text()
    log_file.unlink()

    doubles = double_claims(raws, usernames)
    claims_200 = sum(len(c["claimed"]) for raw in raws for c in raw["claimers"])
    decisions_201 = sum(len(c["decision_ms"]) for raw in raws for c in raw["claimers"])
    conflicts = sum(c["conflicts"] for raw in raws for c in raw["claimers"])
    foreign = sum(c["foreign"] for raw in raws for c in raw["claimers"])
    db_consistent = (
        db["reviews"] == decisions_201
        and db["items_decided"] == decisions_201
        and db["claim_audit_events"] == claims_200
        and db["items_with_two_reviews"] == 0
    )
    double_count = doubles["extra_claims"] + foreign + db["items_with_two_reviews"]
    claims = measured["claims"]
    report = {
        "benchmark": "bench/queue.py",
        "machine": machine,
        "config": {
            "items": args.items,
            "claimers": args.claimers,
            "duration_s": args.duration,
            "warmup_s": args.warmup,
            "single_claimer_s": args.single_duration,
            "think_ms": args.think_ms,
            "gunicorn_workers": args.workers,
            "gunicorn_worker_class": "gthread" if args.threads > 1 else "sync",
            "gunicorn_threads": args.threads,
        },
        "seed": seed,
        "claims": claims,
        "decisions": measured["decisions"],
        "double_claims": double_count,
        "conflicts_409": conflicts,
        "errors": {
            "claims": sum(p["claim_errors"] for p in phases.values()),
            "decisions": sum(p["decision_errors"] for p in phases.values()),
            "gunicorn_log": sum(
                1 for line in gunicorn_log.splitlines() if "[ERROR]" in line or "Traceback" in line
            ),
            "samples": measured.get("error_samples", []),
        },
        "items_remaining": db["items_open"],
        "double_claim_check": doubles
        | {
            "foreign_claims": foreign,
            "claims_200_all_phases": claims_200,
            "decisions_201_all_phases": decisions_201,
        },
        "db_check": db | {"consistent_with_client": db_consistent},
        "claim_timeline": measured["claim_timeline"],
        "single_claimer": phases.get("single_claimer"),
        "server_during_measured": server,
        "claim_sql_explain_ms": {
            "before_load": sql_before["explain_ms"],
            "after_load": sql_after["explain_ms"],
        },
        "claim_sql": {
            "sql": sql_before["sql"],
            "buffers_before_load": sql_before["buffers"],
            "buffers_after_load": sql_after["buffers"],
            "plan_before_load": sql_before["plan"],
            "plan_after_load": sql_after["plan"],
            "queries_per_claim": sql_before["queries_per_claim"],
            "claim_queries": sql_before["claim_queries"],
            "queries_per_decision": sql_before["queries_per_decision"],
            "decision_queries": sql_before["decision_queries"],
            "in_process_ms": sql_before["in_process_ms"],
        },
        "targets": TARGETS,
        "passed": {
            "claim_p99_ms": claims["p99_ms"] is not None
            and claims["p99_ms"] <= TARGETS["claim_p99_ms"],
            "double_claims": double_count == 0 and conflicts == 0 and db_consistent,
        },
    }
    json.dump(report, sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0


def _phase_line(phase: dict[str, Any]) -> str:
    c, d = phase["claims"], phase["decisions"]
    return (
        f"{phase['claimers']} claimer(s): claims {c['throughput_rps']}/s p50 {c['p50_ms']} ms "
        f"p99 {c['p99_ms']} ms; decisions p50 {d['p50_ms']} ms p99 {d['p99_ms']} ms; "
        f"409s {phase['conflicts_409']}, errors {phase['claim_errors'] + phase['decision_errors']}"
    )


if __name__ == "__main__":
    sys.exit(main())
