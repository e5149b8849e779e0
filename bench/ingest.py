"""Ingest benchmark: how fast Gatehouse accepts outputs over real HTTP.

What it measures, against a fresh PostgreSQL database and the app under gunicorn:

* ``trivial``: ``GET /api/v1/ping/``, an authenticated no-op. It goes through the same
  middleware, bearer-token lookup and DRF machinery as the ingest endpoints and does
  nothing else, so it is the framework's ceiling on this machine.
* ``single``: ``POST /api/v1/outputs/``, one output per request (validate, score, store).
* ``batch``: ``POST /api/v1/outputs/batch/``, 1,000 outputs per request in one transaction.

Why the trivial endpoint is measured in the same run: the machine is shared and noisy,
so absolute requests per second move from run to run. The target for the single path is
a ratio, ``single / trivial`` throughput, and both sides of it are measured back to back
in one run on the same server, so that the noise mostly cancels out.

The load comes from a separate process (C client threads, one keep-alive
``http.client.HTTPConnection`` each) so that the client does not share an interpreter
with the server. On a small machine it still shares the CPUs: the figures are those of
client and server together, which is another reason to read the ratio, not the absolutes.

Output: one JSON object on stdout; progress goes to stderr. This is a benchmark, run by
hand (``make bench``), never a timed test.

    .venv/bin/python -m bench.ingest [--workers 4] [--clients 8] [--duration 10]
"""

from __future__ import annotations

import argparse
import concurrent.futures
import http.client
import json
import multiprocessing
import random
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import psycopg

from bench.harness import (
    HOST,
    app_env,
    drop_database,
    free_port,
    machine_facts,
    manage,
    percentile,
    recreate_database,
    start_gunicorn,
    stop_gunicorn,
    wait_healthy,
)

DEFAULT_DB = "gatehouse_bench"

BATCH_SIZE = 1000
TARGETS = {"single_vs_trivial_ratio": 0.5, "batch_outputs_per_second": 20000}

TASK_TYPES = ("summarize", "classify", "extract", "translate")
MODELS = ("model-a", "model-b", "model-c")
TIERS = ("fast", "fast", "quality")
VALIDATORS = ("facts", "schema", "grammar", "length")


def log(message: str) -> None:
    print(f"[bench] {message}", file=sys.stderr, flush=True)


# --------------------------------------------------------------------------- payloads


def _item_variants(seed: int, count: int = 64) -> list[str]:
    """Pre-serialised output bodies without their external_id, varied like real traffic.

    Each is the JSON object minus its opening brace, so that ``'{"external_id":"x",' + v``
    is a complete body: building a request costs a string join, not a json.dumps.
    """
    rng = random.Random(seed)
    variants = []
    for _ in range(count):
        validators = [
            {"name": name, "passed": rng.random() < 0.85}
            | ({} if rng.random() < 0.7 else {"detail": "12 words over"})
            for name in VALIDATORS
        ]
        body = {
            "task_type": rng.choice(TASK_TYPES),
            "model": rng.choice(MODELS),
            "tier": rng.choice(TIERS),
            "input": "Summarise the quarterly report for the board in three sentences.",
            "output": "Revenue grew 4% on the quarter; costs were flat; guidance is unchanged.",
            "validators": validators,
            "input_clarity": round(rng.uniform(0.55, 0.95), 2),
            "coherence": round(rng.uniform(0.7, 0.98), 2),
            "requires_fact_check": rng.random() < 0.6,
            "metadata": {"request_id": f"r-{rng.randrange(10**9)}", "region": "eu"},
        }
        variants.append(json.dumps(body, separators=(",", ":"))[1:])
    return variants


def _item(external_id: str, variant: str) -> str:
    return '{"external_id":"' + external_id + '",' + variant


# --------------------------------------------------------------------------- load client


@dataclass(frozen=True)
class PhaseSpec:
    name: str
    method: str
    path: str
    expected_status: int
    clients: int
    duration_s: float
    items_per_request: int = 0  # 0: no body (GET); 1: one output; N: a batch of N
    tag: str = ""  # makes external_ids unique across phases and warm-ups


@dataclass
class ClientResult:
    latencies_ms: list[float] = field(default_factory=list)
    errors: int = 0
    error_samples: list[str] = field(default_factory=list)


def _client_thread(
    spec: PhaseSpec, port: int, token: str, index: int, deadline: float, out: ClientResult
) -> None:
    variants = _item_variants(seed=index * 7919 + len(spec.tag))
    headers = {"Authorization": f"Bearer {token}", "Accept": "application/json"}
    if spec.items_per_request:
        headers["Content-Type"] = "application/json"
    conn = http.client.HTTPConnection(HOST, port, timeout=120)
    seq = 0
    while time.perf_counter() < deadline:
        body: bytes | None = None
        if spec.items_per_request == 1:
            body = _item(f"{spec.tag}-{index}-{seq}", variants[seq % len(variants)]).encode()
        elif spec.items_per_request > 1:
            base = f"{spec.tag}-{index}-{seq}"
            items = ",".join(
                _item(f"{base}-{i}", variants[i % len(variants)])
                for i in range(spec.items_per_request)
            )
            body = ('{"outputs":[' + items + "]}").encode()
        seq += 1
        started = time.perf_counter()
        try:
            conn.request(spec.method, spec.path, body=body, headers=headers)
            response = conn.getresponse()
            payload = response.read()
            status = response.status
        except (OSError, http.client.HTTPException) as exc:
            conn.close()  # the next request reconnects
            out.errors += 1
            if len(out.error_samples) < 5:
                out.error_samples.append(f"{type(exc).__name__}: {exc}")
            continue
        elapsed_ms = (time.perf_counter() - started) * 1000
        if status == spec.expected_status:
            out.latencies_ms.append(elapsed_ms)
        else:
            out.errors += 1
            if len(out.error_samples) < 5:
                out.error_samples.append(f"HTTP {status}: {payload[:300]!r}")
    conn.close()


def run_phase(spec: PhaseSpec, port: int, token: str) -> dict[str, Any]:
    """Drive one phase with ``spec.clients`` threads until its deadline (in the client process)."""
    results = [ClientResult() for _ in range(spec.clients)]
    cpu_started = time.process_time()
    started = time.perf_counter()
    deadline = started + spec.duration_s
    threads = [
        threading.Thread(
            target=_client_thread, args=(spec, port, token, i, deadline, results[i]), daemon=True
        )
        for i in range(spec.clients)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    # Requests in flight at the deadline finish after it: count them over the real elapsed time.
    elapsed = time.perf_counter() - started
    client_cpu = time.process_time() - cpu_started
    latencies = sorted(ms for r in results for ms in r.latencies_ms)
    ok = len(latencies)
    errors = sum(r.errors for r in results)
    summary: dict[str, Any] = {
        "clients": spec.clients,
        "elapsed_s": round(elapsed, 3),
        "requests": ok + errors,
        "ok": ok,
        "errors": errors,
        "throughput_rps": round(ok / elapsed, 2),
        "p50_ms": _round(percentile(latencies, 50)),
        "p99_ms": _round(percentile(latencies, 99)),
        "mean_ms": _round(sum(latencies) / ok if ok else None),
        "max_ms": _round(latencies[-1] if latencies else None),
        # The load generator's own CPU, in % of one core: on a small machine it competes
        # with the server, more so for the cheap trivial requests.
        "client_cpu_percent": round(100 * client_cpu / elapsed, 1),
    }
    if spec.items_per_request:
        stored = ok * spec.items_per_request
        summary["outputs_stored"] = stored
        summary["outputs_per_second"] = round(stored / elapsed, 1)
    samples = [s for r in results for s in r.error_samples][:5]
    if samples:
        summary["error_samples"] = samples
    return summary


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 2)


# --------------------------------------------------------------------------- server side


def _count_outputs(db_name: str) -> int:
    dsn = f"host=127.0.0.1 port=5432 user=postgres dbname={db_name}"
    with psycopg.connect(dsn) as conn:
        return conn.execute("SELECT count(*) FROM gating_output").fetchone()[0]


# --------------------------------------------------------------------------- main


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--workers", type=int, default=4, help="gunicorn workers (default 4)")
    p.add_argument(
        "--threads",
        type=int,
        default=1,
        help="threads per worker; above 1 uses the gthread worker class (default 1: sync)",
    )
    p.add_argument("--clients", type=int, default=8, help="client threads, trivial and single")
    p.add_argument("--batch-clients", type=int, default=2, help="client threads, batch phase")
    p.add_argument("--duration", type=float, default=10.0, help="seconds measured per phase")
    p.add_argument("--warmup", type=float, default=2.0, help="seconds of warm-up per phase")
    p.add_argument("--port", type=int, default=0, help="port for gunicorn (default: a free one)")
    p.add_argument(
        "--db-name", default=DEFAULT_DB, help=f"database to create (default {DEFAULT_DB})"
    )
    p.add_argument("--keep-db", action="store_true", help="keep the bench database afterwards")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    port = args.port or free_port()
    env = app_env(args.db_name)
    run_tag = f"b{int(time.time())}"

    log(f"creating database {args.db_name}")
    pg_version = recreate_database(args.db_name)
    machine = machine_facts(pg_version)
    proc: subprocess.Popen | None = None
    log_file = Path(tempfile.mkstemp(prefix="gatehouse-bench-gunicorn-", suffix=".log")[1])
    try:
        log("migrating")
        manage(env, "migrate", "--noinput", "-v", "0")
        manage(env, "create_user", "benchgw", "--role", "gateway")
        token = manage(env, "create_api_token", "benchgw").strip()

        proc = start_gunicorn(env, port, args.workers, args.threads, log_file, log=log)
        wait_healthy(proc, port)
        log(f"gunicorn answering on port {port}")

        phases = [
            PhaseSpec("trivial", "GET", "/api/v1/ping/", 200, args.clients, args.duration),
            PhaseSpec("single", "POST", "/api/v1/outputs/", 201, args.clients, args.duration, 1),
            PhaseSpec(
                "batch",
                "POST",
                "/api/v1/outputs/batch/",
                201,
                args.batch_clients,
                args.duration,
                BATCH_SIZE,
            ),
        ]
        results: dict[str, dict[str, Any]] = {}
        expected_rows = 0
        spawn = multiprocessing.get_context("spawn")
        with concurrent.futures.ProcessPoolExecutor(max_workers=1, mp_context=spawn) as client:
            for spec in phases:
                if args.warmup > 0:
                    warm = PhaseSpec(
                        **{
                            **asdict(spec),
                            "duration_s": args.warmup,
                            "tag": f"{run_tag}-w{spec.name}",
                        }
                    )
                    log(f"{spec.name}: warm-up {args.warmup:g} s")
                    warm_result = client.submit(run_phase, warm, port, token).result()
                    expected_rows += warm_result.get("outputs_stored", 0)
                measured = PhaseSpec(**{**asdict(spec), "tag": f"{run_tag}-{spec.name}"})
                log(f"{spec.name}: {spec.clients} clients for {args.duration:g} s")
                result = client.submit(run_phase, measured, port, token).result()
                expected_rows += result.get("outputs_stored", 0)
                results[spec.name] = result
                log(
                    f"{spec.name}: {result['throughput_rps']} req/s, p50 {result['p50_ms']} ms, "
                    f"p99 {result['p99_ms']} ms, errors {result['errors']}"
                )
        stored_rows = _count_outputs(args.db_name)
    except BaseException:
        if log_file.exists():
            sys.stderr.write(log_file.read_text()[-4000:])
        raise
    finally:
        if proc is not None:
            log("stopping gunicorn")
            stop_gunicorn(proc, log=log)
        if args.keep_db:
            log(f"keeping database {args.db_name}")
        else:
            log(f"dropping database {args.db_name}")
            drop_database(args.db_name)

    gunicorn_log = log_file.read_text()
    log_file.unlink()
    trivial = results["trivial"]["throughput_rps"]
    single = results["single"]["throughput_rps"]
    ratio = round(single / trivial, 3) if trivial else 0.0
    batch_ops = results["batch"]["outputs_per_second"]
    report = {
        "benchmark": "bench/ingest.py",
        "machine": machine,
        "config": {
            "gunicorn_workers": args.workers,
            "gunicorn_worker_class": "gthread" if args.threads > 1 else "sync",
            "gunicorn_threads": args.threads,
            "clients": args.clients,
            "batch_clients": args.batch_clients,
            "batch_size": BATCH_SIZE,
            "duration_s": args.duration,
            "warmup_s": args.warmup,
        },
        "phases": results,
        "outputs_in_db": stored_rows,
        "outputs_in_db_matches_201s": stored_rows == expected_rows,
        "gunicorn_log_errors": sum(
            1 for line in gunicorn_log.splitlines() if "[ERROR]" in line or "Traceback" in line
        ),
        "single_vs_trivial_ratio": ratio,
        "batch_outputs_per_second": batch_ops,
        "targets": TARGETS,
        "passed": {
            "single_vs_trivial_ratio": ratio >= TARGETS["single_vs_trivial_ratio"],
            "batch_outputs_per_second": batch_ops >= TARGETS["batch_outputs_per_second"],
        },
    }
    json.dump(report, sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
