"""Waiting clients benchmark: what 1,000 gateways waiting for reviewers cost the ingest.

Each waiting client holds one held output and polls ``GET /api/v1/outputs/<id>/status/``
with the client's own policy (gatehouse_client: PollPolicy's backoff and jitter, the last
ETag in If-None-Match, so an unchanged answer is a bodiless 304). No reviewer decides, so
every client polls for the whole phase.

Against a fresh PostgreSQL database and the app under gunicorn (sync workers, as
production runs it), phases alternate in one run: the batch ingest alone, then the same
ingest while the clients wait (they start waiting one by one over the first half of
``--warmup`` seconds before it, so their intervals have grown as they do in a long wait),
and so on for ``--rounds`` rounds. The figure is the ratio of the medians, with waiters
over alone: measured back to back on the same server, so the shared machine's noise mostly
cancels. The polls served per second and the share answered 304 are counted by the waiting
processes, over the measured window only.

The ingest load is ``--clients`` threads posting batches of ``--batch-size`` outputs, each
on its own connection; the waiters run in ``--waiting-processes`` other processes (asyncio,
one AsyncGatehouseClient each).
On a small machine all of it shares the CPUs with the server: read the ratio.

Output: one JSON object on stdout; progress goes to stderr. A benchmark, run by hand, never
a timed test.

    .venv/bin/python -m bench.waiting [--waiters 1000] [--duration 10] [--warmup 40]
                                      [--rounds 2] [--workers 4] [--clients 4]
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import json
import multiprocessing
import os
import random
import statistics
import sys
import tempfile
import threading
import time
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
from gatehouse_client import AsyncGatehouseClient

from bench.harness import (
    HOST,
    app_env,
    drop_database,
    free_port,
    git_state,
    machine_facts,
    manage,
    recreate_database,
    start_gunicorn,
    stderr_log,
    stop_gunicorn,
    wait_healthy,
)

DB_NAME = "gatehouse_bench_waiting"
log = stderr_log("waiting")


def _output(external_id: str, task_type: str) -> dict[str, Any]:
    return {
        "external_id": external_id,
        "task_type": task_type,
        "model": "bench-model",
        "input": "Summarise the quarterly report.",
        "output": "Revenue grew 4% on the quarter, driven by the new region.",
        "validators": [
            {"name": "facts", "passed": True},
            {"name": "schema", "passed": True},
            {"name": "length", "passed": False, "detail": "12 words over"},
        ],
        "input_clarity": 0.8,
        "coherence": 0.9,
    }


def _post(port: int, token: str, path: str, body: bytes) -> tuple[int, bytes]:
    connection = http.client.HTTPConnection(HOST, port, timeout=120)
    try:
        headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
        connection.request("POST", path, body=body, headers=headers)
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


def held_outputs(port: int, token: str, count: int) -> list[int]:
    """``count`` outputs the gate holds: a new task type is in its cold start, where every
    output goes to a reviewer."""
    ids: list[int] = []
    for start in range(0, count, 1000):
        items = [_output(f"held-{n}", "bench-held") for n in range(start, min(start + 1000, count))]
        status, body = _post(
            port, token, "/api/v1/outputs/batch/", json.dumps({"outputs": items}).encode()
        )
        if status != 201:
            raise RuntimeError(f"seeding held outputs answered {status}: {body[:300]!r}")
        outputs = json.loads(body)["outputs"]
        if any(o["status"] != "pending" for o in outputs):
            raise RuntimeError("a seeded output was not held: the waiters would not wait")
        ids += [o["id"] for o in outputs]
    return ids


def ingest(port: int, token: str, tag: str, clients: int, batch_size: int, seconds: float) -> dict:
    """Batches posted by ``clients`` threads for ``seconds``: outputs stored per second."""
    stored = Counter()
    failures = Counter()
    deadline = time.monotonic() + seconds

    def client(index: int) -> None:
        sent = 0
        while time.monotonic() < deadline:
            items = [
                _output(f"{tag}-{index}-{sent}-{n}", "bench-ingest") for n in range(batch_size)
            ]
            status, _ = _post(
                port, token, "/api/v1/outputs/batch/", json.dumps({"outputs": items}).encode()
            )
            sent += 1
            if status == 201:
                stored[index] += batch_size
            else:
                failures[status] += 1

    started = time.monotonic()
    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.monotonic() - started
    return {
        "outputs_per_s": round(sum(stored.values()) / elapsed, 1),
        "elapsed_s": round(elapsed, 2),
        "failures": dict(failures),
    }


class _CountingTransport(httpx.AsyncBaseTransport):
    """The real transport, counting each poll's outcome while the main process measures."""

    def __init__(self, measuring, clients: int):
        # A connection for every client, as each would have its own: a request queued in
        # httpcore's pool costs time in proportion to the queue, and a thousand queued
        # starve the event loop.
        self.real = httpx.AsyncHTTPTransport(limits=httpx.Limits(max_connections=clients))
        self.measuring = measuring
        self.outcomes: Counter = Counter()

    async def handle_async_request(self, request):
        try:
            response = await self.real.handle_async_request(request)
        except httpx.TransportError as exc:
            if self.measuring.is_set():
                self.outcomes[type(exc).__name__] += 1
            raise
        if self.measuring.is_set():
            self.outcomes[str(response.status_code)] += 1
        return response


def _waiters_process(
    base_url, token, output_ids, stagger, started, measuring, stop, results
) -> None:
    async def run() -> dict:
        transport = _CountingTransport(measuring, len(output_ids))
        cpu = {}
        async with AsyncGatehouseClient(base_url, token, transport=transport) as client:

            async def wait(output_id: int) -> None:
                # Clients come to wait one by one, not all at the same instant.
                await asyncio.sleep(random.uniform(0, stagger))
                await client.wait_for_decision(output_id, timeout=3600)

            waits = [asyncio.ensure_future(wait(i)) for i in output_ids]
            started.set()
            # The waits end when the main process says so; meanwhile, this process's own
            # CPU time over the measured window, to tell the clients' cost from the server's.
            while not stop.is_set():
                if measuring.is_set() and "start" not in cpu:
                    cpu["start"] = time.process_time()
                if not measuring.is_set() and "start" in cpu and "end" not in cpu:
                    cpu["end"] = time.process_time()
                await asyncio.sleep(0.05)
            if "start" in cpu and "end" not in cpu:
                cpu["end"] = time.process_time()
            for waiting in waits:
                waiting.cancel()
            await asyncio.gather(*waits, return_exceptions=True)
        return {
            "outcomes": dict(transport.outcomes),
            "cpu_s": round(cpu.get("end", 0) - cpu.get("start", 0), 2),
        }

    results.put(asyncio.run(run()))


def _cpu_seconds(pids: list[int]) -> float:
    """User and system CPU time of these processes so far (Linux /proc)."""
    ticks = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        ticks += int(fields[11]) + int(fields[12])
    return ticks / os.sysconf("SC_CLK_TCK")


def _server_pids(master: int) -> list[int]:
    children = Path(f"/proc/{master}/task/{master}/children")
    return [master, *(int(p) for p in children.read_text().split())]


def measured_ingest(args, port: int, token: str, tag: str, master: int) -> dict:
    """The ingest phase, with the server's CPU seconds per second of it."""
    pids = _server_pids(master)
    before = _cpu_seconds(pids)
    result = ingest(port, token, tag, args.clients, args.batch_size, args.duration)
    result["server_cpu_s_per_s"] = round((_cpu_seconds(pids) - before) / result["elapsed_s"], 2)
    return result


def with_waiters(args, port: int, token: str, output_ids: list[int], tag: str, master) -> dict:
    context = multiprocessing.get_context("spawn")
    measuring, stop = context.Event(), context.Event()
    results = context.Queue()
    # The clients in a few processes, so that the machine's cores share them: one event
    # loop with a thousand clients sends each request late, and a sync worker that has
    # accepted a connection waits for its request.
    shares = [output_ids[i :: args.waiting_processes] for i in range(args.waiting_processes)]
    processes = []
    for share in shares:
        started = context.Event()
        process = context.Process(
            target=_waiters_process,
            args=(
                f"http://{HOST}:{port}",
                token,
                share,
                args.warmup / 2,
                started,
                measuring,
                stop,
                results,
            ),
        )
        process.start()
        processes.append((process, started))
    for _, started in processes:
        if not started.wait(timeout=60):
            raise RuntimeError("the waiting clients did not start")
    time.sleep(args.warmup)
    measuring.set()
    measured = measured_ingest(args, port, token, tag, master)
    measuring.clear()
    time.sleep(0.2)
    stop.set()
    reports = [results.get(timeout=120) for _ in processes]
    for process, _ in processes:
        process.join()
    outcomes: Counter = Counter()
    for report in reports:
        outcomes.update(report["outcomes"])
    polls = sum(outcomes.values())
    measured.update(
        polls_per_s=round(polls / measured["elapsed_s"], 1),
        share_304=round(outcomes.get("304", 0) / polls, 4) if polls else None,
        poll_outcomes=dict(sorted(outcomes.items())),
        waiting_clients_cpu_s_per_s=round(
            sum(r["cpu_s"] for r in reports) / measured["elapsed_s"], 2
        ),
    )
    return measured


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--waiters", type=int, default=1000)
    parser.add_argument("--duration", type=float, default=10.0, help="seconds measured a phase")
    parser.add_argument(
        "--warmup",
        type=float,
        default=40.0,
        help="seconds the waiters poll before measuring; they start over its first half",
    )
    parser.add_argument("--rounds", type=int, default=2, help="alone/with pairs")
    parser.add_argument("--workers", type=int, default=4, help="gunicorn sync workers")
    # Fewer ingest threads than workers: a batch holds a sync worker for about half a
    # second, and with every worker busy the polls would only queue.
    parser.add_argument("--clients", type=int, default=2, help="ingest threads")
    parser.add_argument("--batch-size", type=int, default=1000)
    parser.add_argument("--waiting-processes", type=int, default=4)
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    pg_version = recreate_database(DB_NAME)
    env = app_env(DB_NAME)
    gunicorn = None
    try:
        manage(env, "migrate", "--noinput", "-v", "0")
        manage(env, "create_user", "benchgw", "--role", "gateway")
        token = manage(env, "create_api_token", "benchgw").strip()
        port = free_port()
        log_file = Path(tempfile.mkdtemp(prefix="bench-waiting-")) / "gunicorn.log"
        gunicorn = start_gunicorn(env, port, args.workers, 1, log_file, log=log)
        wait_healthy(gunicorn, port)
        output_ids = held_outputs(port, token, args.waiters)
        log(f"{len(output_ids)} held outputs to wait on")
        rounds = []
        for n in range(args.rounds):
            log(f"round {n + 1}: ingest alone")
            alone = measured_ingest(args, port, token, f"alone{n}", gunicorn.pid)
            log(f"round {n + 1}: ingest while {args.waiters} clients wait")
            waiting = with_waiters(args, port, token, output_ids, f"with{n}", gunicorn.pid)
            log(f"round {n + 1}: {alone['outputs_per_s']} vs {waiting['outputs_per_s']} outputs/s")
            rounds.append({"alone": alone, "with_waiters": waiting})
    finally:
        if gunicorn is not None:
            stop_gunicorn(gunicorn, log=log)
        drop_database(DB_NAME)

    alone_median = statistics.median(r["alone"]["outputs_per_s"] for r in rounds)
    with_median = statistics.median(r["with_waiters"]["outputs_per_s"] for r in rounds)
    state = git_state("gating", "client", "bench")
    print(
        json.dumps(
            {
                "bench": "waiting",
                "date": datetime.now(UTC).isoformat(timespec="seconds"),
                "command": "python -m bench.waiting " + " ".join(argv or sys.argv[1:]),
                "commit": state[0] if state else None,
                "uncommitted": state[1] if state else None,
                "machine": machine_facts(pg_version),
                "params": vars(args),
                "ingest_alone_outputs_per_s": alone_median,
                "ingest_with_waiters_outputs_per_s": with_median,
                "ratio_with_over_alone": round(with_median / alone_median, 3),
                "polls_per_s": statistics.median(r["with_waiters"]["polls_per_s"] for r in rounds),
                "server_cpu_s_per_s_alone": statistics.median(
                    r["alone"]["server_cpu_s_per_s"] for r in rounds
                ),
                "server_cpu_s_per_s_with_waiters": statistics.median(
                    r["with_waiters"]["server_cpu_s_per_s"] for r in rounds
                ),
                "waiting_clients_cpu_s_per_s": statistics.median(
                    r["with_waiters"]["waiting_clients_cpu_s_per_s"] for r in rounds
                ),
                "share_304": statistics.median(r["with_waiters"]["share_304"] or 0 for r in rounds),
                "rounds": rounds,
            },
            indent=2,
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
