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

Shadow scoring (``shadow_scoring`` in the output): every output is scored by its task
type's scorer and, in shadow, by every other scorer whose inputs it carries. The plain
payloads above carry no evidence or provenance, so for them shadow scoring only checks that
every other scorer has nothing to read. The shadow phases send those plain payloads, and
agent payloads (``_agent_variants``: the simulator's agent task types, each output with
evidence and provenance, so that all four scorers apply: the most shadow scoring can cost),
on the single and batch paths, to two servers started side by side on the same database: one
with ``SHADOW_SCORING=true``, one with ``SHADOW_SCORING=false``. The phases alternate
between them, round by round in reversed order (on, off; off, on; on, off; ...), and the
figure is the ratio of the medians, on over off, measured back to back in one run so that
the machine's noise mostly cancels. Afterwards the database is checked: every output
of an agent payload stored with shadow scoring on carries the three shadow scores, every
other one none. The
same agent payloads are also scored in this process, without a server, to say what each
scorer costs per output (``shadow_scoring.in_process``).

Output: one JSON object on stdout; progress goes to stderr. This is a benchmark, run by
hand (``make bench``), never a timed test.

    .venv/bin/python -m bench.ingest [--workers 4] [--clients 8] [--duration 10]
                                     [--shadow-rounds 3]

A/B: ``--against <git rev>`` serves that commit from a git worktree, on its own database,
beside the checkout, and runs the phases of ``against_phases`` on both in alternating
order for ``--rounds`` rounds (main_against): the before and after figures of a change,
measured in one run on the same machine.

    .venv/bin/python -m bench.ingest --against <rev> [--rounds 3] [--duration 10]
"""

from __future__ import annotations

import argparse
import concurrent.futures
import http.client
import json
import multiprocessing
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psycopg

from bench.harness import (
    HOST,
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
    worktree_add,
    worktree_remove,
)
from simulator import agents

DEFAULT_DB = "gatehouse_bench"

BATCH_SIZE = 1000
# The media type of a batch's compact answer (gating.api.responses.COMPACT_MEDIA_TYPE).
COMPACT_TYPE = "application/vnd.gatehouse.compact+json"
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


# The simulator's agent task types (simulator.agents), each with the investigation
# patterns it draws from: corroborated, tokenised and broad searches, names that do not
# exist, builds and tests, git and gh, and claims fresh, stale or contradicted.
AGENT_TASK_TYPES = {
    "code_locate": agents.CODE_LOCATE,
    "code_explain": agents.CODE_EXPLAIN,
    "ci_status": agents.CI_STATUS,
    "claim_check": agents.CLAIM_CHECK,
}
AGENT_PATTERNS = tuple(
    (name, pattern) for name, profile in AGENT_TASK_TYPES.items() for pattern, _ in profile.patterns
)
SHADOW_TARGET = 0.9
MAX_SOURCES = 4
MAX_BODY_BYTES = 2 * 1024 * 1024  # the default of the MAX_REQUEST_BODY_BYTES setting


def _agent_fields(
    rng: random.Random, task_type: str, pattern: agents.Pattern, at: datetime
) -> dict[str, Any]:
    """One agent output's input, output, evidence and provenance. The simulator gives
    provenance only to claims; here every output carries both, so that all four scorers
    apply: an investigation without a claim of its own gets one of the claim patterns'."""
    profile = AGENT_TASK_TYPES[task_type]
    draws = [rng.random() for _ in range(agents.DRAWS)]
    fields = agents.agent_output(pattern, profile, draws, at)
    if "provenance" not in fields:
        claim = rng.choice([p for p, _ in agents.CLAIM_CHECK.patterns])
        claim_draws = [rng.random() for _ in range(agents.DRAWS)]
        fields["provenance"] = agents.agent_output(claim, agents.CLAIM_CHECK, claim_draws, at)[
            "provenance"
        ]
    sources = fields["provenance"]["sources"]
    if rng.random() < 0.3:  # 1 to 3 sources from the simulator; some get up to 4
        while len(sources) < MAX_SOURCES:
            sources.append(
                {
                    "source_type": agents.SOURCE_TYPES[len(sources) % len(agents.SOURCE_TYPES)],
                    "confidence": round(rng.uniform(0.5, 0.95), 2),
                    "source": f"notes/{task_type}-{len(sources)}.md",
                }
            )
    return fields


def _agent_variants(seed: int, count: int = 64, at: datetime | None = None) -> list[str]:
    """Like ``_item_variants``, for agent task types: every item carries evidence (one of
    the simulator's investigation patterns, each in turn) and provenance (1 to 4 sources,
    some past their staleness, some with supporting or contradicting claims)."""
    rng = random.Random(seed)
    at = at or datetime.now(UTC)
    variants = []
    for i in range(count):
        task_type, pattern = AGENT_PATTERNS[i % len(AGENT_PATTERNS)]
        fields = _agent_fields(rng, task_type, pattern, at)
        validators = [
            {"name": name, "passed": rng.random() < 0.85} for name in ("facts", "schema", "length")
        ]
        body = {
            "task_type": task_type,
            "model": rng.choice(MODELS),
            "tier": rng.choice(TIERS),
            "input": fields["input"],
            "output": fields["output"],
            "validators": validators,
            "input_clarity": round(rng.uniform(0.55, 0.95), 2),
            "coherence": round(rng.uniform(0.7, 0.98), 2),
            "requires_fact_check": task_type == "claim_check",
            "evidence": fields["evidence"],
            "provenance": fields["provenance"],
            "metadata": {"request_id": f"r-{rng.randrange(10**9)}", "region": "eu"},
        }
        variants.append(json.dumps(body, separators=(",", ":"))[1:])
    return variants


def _variants(spec: PhaseSpec, index: int) -> list[str]:
    if spec.payload == "agent":
        # The same payloads whichever server is asked (but for the moment they are made
        # at, which staleness is measured from), so that on and off compare alike.
        return _agent_variants(seed=index * 7919)
    return _item_variants(seed=index * 7919 + len(spec.tag))


def _item(external_id: str, variant: str) -> str:
    return '{"external_id":"' + external_id + '",' + variant


def _batch_body(tag: str, variants: list[str], size: int) -> bytes:
    items = ",".join(_item(f"{tag}-{i}", variants[i % len(variants)]) for i in range(size))
    return ('{"outputs":[' + items + "]}").encode()


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
    payload: str = "plain"  # "plain": validators only; "agent": with evidence and provenance
    traceparent: bool = False  # send a W3C traceparent with each request, as a traced gateway
    accept: str = "application/json"  # COMPACT_TYPE: the batch's compact answer


@dataclass
class ClientResult:
    latencies_ms: list[float] = field(default_factory=list)
    errors: int = 0
    error_samples: list[str] = field(default_factory=list)


def _client_thread(
    spec: PhaseSpec, port: int, token: str, index: int, deadline: float, out: ClientResult
) -> None:
    variants = _variants(spec, index)
    headers = {"Authorization": f"Bearer {token}", "Accept": spec.accept}
    if spec.items_per_request:
        headers["Content-Type"] = "application/json"
    conn = http.client.HTTPConnection(HOST, port, timeout=120)
    seq = 0
    while time.perf_counter() < deadline:
        body: bytes | None = None
        if spec.items_per_request == 1:
            body = _item(f"{spec.tag}-{index}-{seq}", variants[seq % len(variants)]).encode()
        elif spec.items_per_request > 1:
            body = _batch_body(f"{spec.tag}-{index}-{seq}", variants, spec.items_per_request)
        if spec.traceparent:
            headers["traceparent"] = f"00-{random.getrandbits(128):032x}-{seq + 1:016x}-01"
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


def _shadowed() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The scorers an agent output is scored by in shadow (every one but the default), and
    those a plain output is (the ones that apply without evidence or provenance)."""
    from gating import scorers
    from gating.scoring import GatePolicy, PairHistory

    bare = scorers.ScorerInput(
        validators=(),
        input_clarity=1.0,
        coherence=1.0,
        requires_fact_check=False,
        pair=PairHistory(),
        policy=GatePolicy(),
        now=datetime.now(UTC),
    )
    every = tuple(name for name in scorers.names() if name != scorers.DEFAULT)
    plain = tuple(name for name in every if scorers.get(name).applies(bare))
    return every, plain


def _shadow_stored(db_name: str) -> dict[str, Any]:
    """Whether each server did what its setting says: the outputs of the shadow-on phases
    (warm-ups included) carry the shadow scores their payload has inputs for (an agent
    output every one, with the interval; a plain output those of the validators alone), and
    the outputs of the shadow-off phases none."""
    every, plain = _shadowed()
    dsn = f"host=127.0.0.1 port=5432 user=postgres dbname={db_name}"
    sql = """
        SELECT count(*) FILTER (WHERE external_id LIKE '%%agent-%%-shadow-on-%%'),
               count(*) FILTER (WHERE external_id LIKE '%%agent-%%-shadow-on-%%'
                                AND shadow_scores ?& %(every)s
                                AND interval_lower IS NOT NULL),
               count(*) FILTER (WHERE external_id LIKE '%%-shadow-on-%%'
                                AND external_id NOT LIKE '%%agent-%%'),
               count(*) FILTER (WHERE external_id LIKE '%%-shadow-on-%%'
                                AND external_id NOT LIKE '%%agent-%%'
                                AND shadow_scores ?& %(plain)s
                                AND NOT shadow_scores ?| %(agent_only)s),
               count(*) FILTER (WHERE external_id LIKE '%%-shadow-off-%%'),
               count(*) FILTER (WHERE external_id LIKE '%%-shadow-off-%%'
                                AND shadow_scores = '{}'::jsonb)
        FROM gating_output
    """
    names = {
        "every": list(every),
        "plain": list(plain),
        "agent_only": [n for n in every if n not in plain] or [""],
    }
    with psycopg.connect(dsn) as conn:
        on, on_full, plain_on, plain_right, off, off_empty = conn.execute(sql, names).fetchone()
    return {
        "agent_on_outputs": on,
        "agent_on_with_all_shadow_scores": on_full,
        "plain_on_outputs": plain_on,
        "plain_on_with_validators_shadow_scores_only": plain_right,
        "off_outputs": off,
        "off_without_shadow_scores": off_empty,
        "as_expected": on == on_full
        and plain_on == plain_right
        and off == off_empty
        and on > 0
        and off > 0,
    }


# --------------------------------------------------------------------------- in process


def _checked_agent_variants(clients: int) -> list[str]:
    """Every client's agent variants, each validated as the API validates it."""
    from gating.submissions import OutputSubmission

    variants = [v for i in range(clients) for v in _agent_variants(seed=i * 7919)]
    for n, variant in enumerate(variants):
        submission = OutputSubmission.model_validate_json(_item(f"check-{n}", variant))
        assert submission.evidence is not None and submission.provenance is not None
    return variants


def scoring_cost(variants: list[str], repeat: int = 15) -> dict[str, Any]:
    """What scoring the agent payloads costs in this process, no server, in microseconds
    per output (the fastest of ``repeat`` passes over all of them): the gate as ingest
    calls it with and without shadow scoring, each scorer alone, and, for scale, the
    payload's pydantic validation."""
    from gating import scorers
    from gating.scoring import GatePolicy, PairHistory, ValidatorOutcome
    from gating.submissions import OutputSubmission

    now = datetime.now(UTC)
    bodies = [_item(f"cost-{n}", v) for n, v in enumerate(variants)]
    submissions = [OutputSubmission.model_validate_json(b) for b in bodies]
    inputs = [
        scorers.ScorerInput(
            validators=tuple(ValidatorOutcome(v.name, v.passed) for v in s.validators),
            input_clarity=s.input_clarity,
            coherence=s.coherence,
            requires_fact_check=s.requires_fact_check,
            pair=PairHistory(),
            policy=GatePolicy(),
            now=now,
            evidence=s.evidence,
            provenance=s.provenance,
        )
        for s in submissions
    ]
    primary = scorers.REGISTRY[scorers.DEFAULT]
    assert all(s.applies(x) for s in scorers.REGISTRY.values() for x in inputs)
    every, _ = _shadowed()
    assert all(len(scorers.score_and_gate(primary, x).shadow) == len(every) for x in inputs)

    def each(fn):
        return lambda: [fn(x) for x in inputs]

    runs = {
        "validate_json": lambda: [OutputSubmission.model_validate_json(b) for b in bodies],
        "gate_shadow_off": each(lambda x: scorers.score_and_gate(primary, x, shadow=False)),
        "gate_shadow_on": each(lambda x: scorers.score_and_gate(primary, x, shadow=True)),
        **{f"score_{name}": each(s.score) for name, s in scorers.REGISTRY.items()},
    }
    cost: dict[str, Any] = {"outputs": len(inputs), "repeat": repeat}
    for name, run in runs.items():
        best = min(_timed(run) for _ in range(repeat))
        cost[f"{name}_us"] = round(best / len(inputs) * 1e6, 1)
    cost["shadow_us"] = round(cost["gate_shadow_on_us"] - cost["gate_shadow_off_us"], 1)
    return cost


def tracing_cost(repeat: int = 20_000) -> dict[str, Any]:
    """What gating.tracing's span costs an ingest request in this process, in
    microseconds: export off without and with a traceparent (the default), and on, with
    the SDK's provider and a processor that drops every span (what export costs the
    request's thread; the exporter's own thread is not counted)."""
    from opentelemetry.sdk.trace import SpanProcessor, TracerProvider

    from gating import tracing

    traced = {"traceparent": f"00-{'4b' * 16}-{'00f067aa' * 2}-01"}

    def requests(headers):
        def run():
            for _ in range(repeat):
                with tracing.gate_span("bench", method="POST", route="/", headers=headers) as s:
                    s.record_output(model="m", task_type="t", decision="approved", score=8.0)

        return run

    cost: dict[str, Any] = {"repeat": repeat}
    provider = TracerProvider()
    provider.add_span_processor(SpanProcessor())
    for name, headers, on in (
        ("off_us", {}, False),
        ("off_with_traceparent_us", traced, False),
        ("on_us", {}, True),
        ("on_with_traceparent_us", traced, True),
    ):
        tracing.tracer_provider_use(provider if on else None)
        best = min(_timed(requests(headers)) for _ in range(5))
        cost[name] = round(best / repeat * 1e6, 2)
    tracing.tracer_provider_use(None)
    return cost


def _timed(run) -> float:
    started = time.perf_counter()
    run()
    return time.perf_counter() - started


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
    p.add_argument(
        "--shadow-rounds",
        type=int,
        default=3,
        help="rounds of the shadow phases, each single and batch with shadow scoring on and "
        "off (default 3; 0 skips them)",
    )
    p.add_argument(
        "--shadow-payloads",
        type=lambda text: tuple(text.split(",")),
        default=SHADOW_PAYLOADS,
        help="payloads of the shadow phases, comma-separated: agent (evidence and provenance, "
        "every scorer applies), plain (neither); default agent,plain",
    )
    p.add_argument("--port", type=int, default=0, help="port for gunicorn (default: a free one)")
    p.add_argument(
        "--db-name", default=DEFAULT_DB, help=f"database to create (default {DEFAULT_DB})"
    )
    p.add_argument("--keep-db", action="store_true", help="keep the bench database afterwards")
    p.add_argument(
        "--against",
        metavar="REV",
        help="A/B run instead: serve this commit (from a git worktree, on a database of its "
        "own) beside the checkout, and alternate the phases between them (see main_against)",
    )
    p.add_argument(
        "--rounds", type=int, default=3, help="rounds of the A/B run's phases (default 3)"
    )
    return p.parse_args(argv)


def _batch_spec(name: str, args: argparse.Namespace, **extra: Any) -> PhaseSpec:
    return PhaseSpec(
        name,
        "POST",
        "/api/v1/outputs/batch/",
        201,
        args.batch_clients,
        args.duration,
        BATCH_SIZE,
        **extra,
    )


def _single_spec(name: str, args: argparse.Namespace, **extra: Any) -> PhaseSpec:
    return PhaseSpec(name, "POST", "/api/v1/outputs/", 201, args.clients, args.duration, 1, **extra)


SHADOW_PAYLOADS = ("agent", "plain")


def shadow_phases(rounds: int, args: argparse.Namespace) -> list[tuple[str, str, str, PhaseSpec]]:
    """(payload, path, "on" or "off", spec) in the order they run: within a round, each
    payload and path with shadow scoring on and off back to back; every other round starts
    with off, so that a drift of the machine over the run weighs on both sides alike.

    Agent payloads carry evidence and provenance, so every scorer applies: the most shadow
    scoring can cost. Plain ones carry neither, as most traffic: every other scorer is
    skipped."""
    phases = []
    for r in range(rounds):
        modes = ("on", "off") if r % 2 == 0 else ("off", "on")
        for payload in args.shadow_payloads:
            for path, make in (("single", _single_spec), ("batch", _batch_spec)):
                for mode in modes:
                    name = f"{payload}-{path}-shadow-{mode}-r{r + 1}"
                    phases.append((payload, path, mode, make(name, args, payload=payload)))
    return phases


def summarise_shadow(runs: list[tuple[str, str, str, dict[str, Any]]]) -> dict[str, Any]:
    """Per payload, the medians of each path with shadow scoring on and off, their ratio on
    over off (the figure the target is about), and each round's own ratio with their
    median."""
    return {
        payload: _summarise_payload([(p, m, r) for k, p, m, r in runs if k == payload])
        for payload in dict.fromkeys(k for k, *_ in runs)
    }


def _summarise_payload(runs: list[tuple[str, str, dict[str, Any]]]) -> dict[str, Any]:
    summary: dict[str, Any] = {}
    met: dict[str, bool] = {}
    for path in ("single", "batch"):
        sides: dict[str, Any] = {}
        for mode in ("on", "off"):
            results = [r for p, m, r in runs if p == path and m == mode]
            sides[mode] = {
                "requests_per_second": round(
                    statistics.median(r["throughput_rps"] for r in results), 2
                ),
                "outputs_per_second": round(
                    statistics.median(r["outputs_per_second"] for r in results), 1
                ),
                "runs_outputs_per_second": [r["outputs_per_second"] for r in results],
                "errors": sum(r["errors"] for r in results),
            }
        on, off = sides["on"]["outputs_per_second"], sides["off"]["outputs_per_second"]
        ratio = round(on / off, 3) if off else 0.0
        summary[path] = sides
        summary[f"{path}_on_over_off"] = ratio
        summary[f"{path}_round_ratios"] = [
            round(a / b, 3) if b else 0.0
            for a, b in zip(
                sides["on"]["runs_outputs_per_second"],
                sides["off"]["runs_outputs_per_second"],
                strict=True,
            )
        ]
        summary[f"{path}_median_round_ratio"] = round(
            statistics.median(summary[f"{path}_round_ratios"]), 3
        )
        met[path] = ratio >= SHADOW_TARGET
    summary["target"] = SHADOW_TARGET
    summary["met"] = met
    return summary


def against_phases(args: argparse.Namespace) -> list[PhaseSpec]:
    """The A/B run's phases: the framework's ceiling, a single output with and without a
    traceparent, and batches of plain and agent payloads, with the full answer and the
    compact one (which a commit before it answers in full: it takes the media type as
    JSON's)."""
    return [
        PhaseSpec("trivial", "GET", "/api/v1/ping/", 200, args.clients, args.duration),
        _single_spec("single", args),
        _single_spec("single-traceparent", args, traceparent=True),
        _batch_spec("batch", args),
        _batch_spec("batch-compact", args, accept=COMPACT_TYPE),
        _batch_spec("batch-agent", args, payload="agent"),
        _batch_spec("batch-agent-compact", args, payload="agent", accept=COMPACT_TYPE),
    ]


def _with(spec: PhaseSpec, **changes: Any) -> PhaseSpec:
    return PhaseSpec(**{**asdict(spec), **changes})


def main_against(args: argparse.Namespace) -> int:
    """Measure the checkout (``after``) against ``--against`` (``before``) in one run: two
    gunicorns side by side, each on its own fresh database, get the same phases in turn,
    round by round in reversed order (after, before; before, after; ...), so that the
    machine's drift weighs on both alike. Each phase's figure is the median of its rounds,
    and the ratio after over before is given with each round's own. Shadow scoring is on
    for both, as by default."""
    sides = ("after", "before")
    worktree = worktree_add(args.against, log=log)
    roots = {"after": ROOT, "before": worktree}
    dbs = {side: f"{args.db_name}_{side}" for side in sides}
    envs = {side: {**app_env(dbs[side]), "SHADOW_SCORING": "true"} for side in sides}
    ports = {"after": free_port(), "before": free_port()}
    while ports["before"] == ports["after"]:
        ports["before"] = free_port()
    run_tag = f"ab{int(time.time())}"
    log_files = {
        side: Path(tempfile.mkstemp(prefix=f"gatehouse-bench-{side}-", suffix=".log")[1])
        for side in sides
    }
    procs: dict[str, subprocess.Popen] = {}
    tokens: dict[str, str] = {}
    runs: dict[str, dict[str, list[dict[str, Any]]]] = {}
    try:
        for side in sides:
            pg_version = recreate_database(dbs[side])
            manage(envs[side], "migrate", "--noinput", "-v", "0", cwd=roots[side])
            manage(envs[side], "create_user", "benchgw", "--role", "gateway", cwd=roots[side])
            tokens[side] = manage(envs[side], "create_api_token", "benchgw", cwd=roots[side])
            tokens[side] = tokens[side].strip()
            procs[side] = start_gunicorn(
                envs[side],
                ports[side],
                args.workers,
                args.threads,
                log_files[side],
                log=log,
                cwd=roots[side],
            )
        for side in sides:
            wait_healthy(procs[side], ports[side])
        compact = {side: _answers_compact(ports[side], tokens[side]) for side in sides}
        machine = machine_facts(pg_version)
        spawn = multiprocessing.get_context("spawn")
        with concurrent.futures.ProcessPoolExecutor(max_workers=1, mp_context=spawn) as client:
            for r in range(args.rounds):
                for spec in against_phases(args):
                    for side in sides if r % 2 == 0 else sides[::-1]:
                        tag = f"{run_tag}-{side}-{spec.name}-r{r}"
                        # A commit without the compact answer refuses its media type
                        # (406): it is asked for JSON, and answers in full.
                        asked = spec if compact[side] else _with(spec, accept="application/json")
                        if r == 0 and args.warmup > 0:
                            warm = _with(asked, duration_s=args.warmup, tag=f"{tag}-w")
                            client.submit(run_phase, warm, ports[side], tokens[side]).result()
                        measured = _with(asked, tag=tag)
                        result = client.submit(
                            run_phase, measured, ports[side], tokens[side]
                        ).result()
                        runs.setdefault(spec.name, {}).setdefault(side, []).append(result)
                        log(
                            f"r{r + 1} {spec.name} {side}: {result['throughput_rps']} req/s, "
                            f"{result.get('outputs_per_second', '-')} outputs/s, "
                            f"errors {result['errors']}"
                        )
    except BaseException:
        for log_file in log_files.values():
            sys.stderr.write(log_file.read_text()[-4000:])
        raise
    finally:
        for proc in procs.values():
            stop_gunicorn(proc, log=log)
        for side in sides:
            if not args.keep_db:
                drop_database(dbs[side])
        worktree_remove(worktree)
    gunicorn_log = "".join(f.read_text() for f in log_files.values())
    for log_file in log_files.values():
        log_file.unlink()
    report = {
        "benchmark": "bench/ingest.py --against",
        "against": args.against,
        "after": git_state(short=True),
        "machine": machine,
        "config": {
            "gunicorn_workers": args.workers,
            "clients": args.clients,
            "batch_clients": args.batch_clients,
            "batch_size": BATCH_SIZE,
            "duration_s": args.duration,
            "rounds": args.rounds,
        },
        "phases": summarise_against(runs),
        "tracing_in_process": tracing_cost(),
        "gunicorn_log_errors": sum(
            1 for line in gunicorn_log.splitlines() if "[ERROR]" in line or "Traceback" in line
        ),
    }
    report["targets"] = _against_targets(report["phases"])
    json.dump(report, sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0


def _answers_compact(port: int, token: str) -> bool:
    """Whether the server answers a batch in the compact media type (or refuses it, 406)."""
    conn = http.client.HTTPConnection(HOST, port, timeout=60)
    try:
        conn.request(
            "POST",
            "/api/v1/outputs/batch/",
            body=_batch_body(f"probe-{time.time_ns()}", _item_variants(seed=1), 1),
            headers={
                "Authorization": f"Bearer {token}",
                "Content-Type": "application/json",
                "Accept": COMPACT_TYPE,
            },
        )
        response = conn.getresponse()
        response.read()
        return response.status != 406
    finally:
        conn.close()


def summarise_against(runs: dict[str, dict[str, list[dict[str, Any]]]]) -> dict[str, Any]:
    """Per phase and side, the median throughput (requests and outputs a second), the
    errors, and after over before: the ratio of the medians and each round's."""
    summary: dict[str, Any] = {}
    for name, by_side in runs.items():
        entry: dict[str, Any] = {}
        for side, results in by_side.items():
            entry[side] = {
                "requests_per_second": round(
                    statistics.median(r["throughput_rps"] for r in results), 2
                ),
                "rounds_requests_per_second": [r["throughput_rps"] for r in results],
                "p50_ms": round(statistics.median(r["p50_ms"] or 0 for r in results), 2),
                "errors": sum(r["errors"] for r in results),
            }
            if "outputs_per_second" in results[0]:
                entry[side]["outputs_per_second"] = round(
                    statistics.median(r["outputs_per_second"] for r in results), 1
                )
        after, before = entry["after"], entry["before"]
        entry["after_over_before"] = round(
            after["requests_per_second"] / before["requests_per_second"], 3
        )
        entry["round_ratios"] = [
            round(a / b, 3)
            for a, b in zip(
                after["rounds_requests_per_second"],
                before["rounds_requests_per_second"],
                strict=True,
            )
        ]
        summary[name] = entry
    return summary


def _against_targets(phases: dict[str, Any]) -> dict[str, Any]:
    """The ingest targets, for each side: single over trivial, the batch's outputs a
    second (full and compact answers), and agent batches over plain ones."""
    targets: dict[str, Any] = {}
    for side in ("after", "before"):
        rps = {name: phase[side]["requests_per_second"] for name, phase in phases.items()}
        ops = {
            name: phase[side].get("outputs_per_second")
            for name, phase in phases.items()
            if "outputs_per_second" in phase[side]
        }
        targets[side] = {
            "single_vs_trivial_ratio": round(rps["single"] / rps["trivial"], 3),
            "batch_outputs_per_second": ops["batch"],
            "batch_compact_outputs_per_second": ops["batch-compact"],
            "agent_vs_plain_batch": round(ops["batch-agent"] / ops["batch"], 3),
            "agent_vs_plain_batch_compact": round(
                ops["batch-agent-compact"] / ops["batch-compact"], 3
            ),
        }
    targets["wanted"] = {
        "single_vs_trivial_ratio": TARGETS["single_vs_trivial_ratio"],
        "batch_outputs_per_second": TARGETS["batch_outputs_per_second"],
        "agent_vs_plain_batch": SHADOW_TARGET,
    }
    return targets


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.against:
        return main_against(args)
    port = args.port or free_port()
    # One server runs the plain phases. The shadow phases get two fresh ones, started
    # together and alike but for the setting.
    env = {**app_env(args.db_name), "SHADOW_SCORING": "true"}
    shadow_envs = {"on": env, "off": {**env, "SHADOW_SCORING": "false"}}
    run_tag = f"b{int(time.time())}"

    agent_variants: list[str] = []
    cost: dict[str, Any] = {}
    if args.shadow_rounds > 0:
        agent_variants = _checked_agent_variants(max(args.clients, args.batch_clients))
        body = _batch_body("x" * 40, _agent_variants(seed=0), BATCH_SIZE)
        log(
            f"{len(agent_variants)} agent payloads validate; a batch of {BATCH_SIZE} is "
            f"{len(body) / 2**20:.2f} MiB"
        )
        if len(body) > MAX_BODY_BYTES:
            raise SystemExit(f"an agent batch of {len(body)} bytes exceeds {MAX_BODY_BYTES}")
        log("scoring the agent payloads in process")
        cost = scoring_cost(agent_variants)
        log(
            f"in process: gate {cost['gate_shadow_off_us']} us per output without shadow "
            f"scoring, {cost['gate_shadow_on_us']} us with it"
        )

    log(f"creating database {args.db_name}")
    pg_version = recreate_database(args.db_name)
    machine = machine_facts(pg_version)
    procs: list[subprocess.Popen] = []
    log_files = [
        Path(tempfile.mkstemp(prefix=f"gatehouse-bench-gunicorn-{which}-", suffix=".log")[1])
        for which in ("plain", "on", "off")
    ]
    shadow_runs: list[tuple[str, str, str, dict[str, Any]]] = []
    shadow_results: dict[str, dict[str, Any]] = {}
    shadow_stored: dict[str, Any] = {}
    try:
        log("migrating")
        manage(env, "migrate", "--noinput", "-v", "0")
        manage(env, "create_user", "benchgw", "--role", "gateway")
        token = manage(env, "create_api_token", "benchgw").strip()

        procs.append(start_gunicorn(env, port, args.workers, args.threads, log_files[0], log=log))
        wait_healthy(procs[0], port)
        log(f"gunicorn answering on port {port}")

        phases = [
            PhaseSpec("trivial", "GET", "/api/v1/ping/", 200, args.clients, args.duration),
            _single_spec("single", args),
            _batch_spec("batch", args),
        ]
        results: dict[str, dict[str, Any]] = {}
        expected_rows = 0
        spawn = multiprocessing.get_context("spawn")
        with concurrent.futures.ProcessPoolExecutor(max_workers=1, mp_context=spawn) as client:

            def measure(spec: PhaseSpec, on_port: int) -> dict[str, Any]:
                nonlocal expected_rows
                if args.warmup > 0:
                    warm = PhaseSpec(
                        **{
                            **asdict(spec),
                            "duration_s": args.warmup,
                            "tag": f"{run_tag}-w{spec.name}",
                        }
                    )
                    log(f"{spec.name}: warm-up {args.warmup:g} s")
                    warm_result = client.submit(run_phase, warm, on_port, token).result()
                    expected_rows += warm_result.get("outputs_stored", 0)
                measured = PhaseSpec(**{**asdict(spec), "tag": f"{run_tag}-{spec.name}"})
                log(f"{spec.name}: {spec.clients} clients for {args.duration:g} s")
                result = client.submit(run_phase, measured, on_port, token).result()
                expected_rows += result.get("outputs_stored", 0)
                log(
                    f"{spec.name}: {result['throughput_rps']} req/s, "
                    f"{result.get('outputs_per_second', '-')} outputs/s, "
                    f"p50 {result['p50_ms']} ms, p99 {result['p99_ms']} ms, "
                    f"errors {result['errors']}"
                )
                return result

            for spec in phases:
                results[spec.name] = measure(spec, port)

            if args.shadow_rounds > 0:
                log("stopping gunicorn")
                stop_gunicorn(procs[0], log=log)
                ports = {"on": free_port(), "off": free_port()}
                while ports["off"] == ports["on"]:
                    ports["off"] = free_port()
                for mode, log_file in zip(("on", "off"), log_files[1:], strict=True):
                    procs.append(
                        start_gunicorn(
                            shadow_envs[mode],
                            ports[mode],
                            args.workers,
                            args.threads,
                            log_file,
                            log=log,
                        )
                    )
                for mode, proc in zip(("on", "off"), procs[1:], strict=True):
                    wait_healthy(proc, ports[mode])
                    setting = shadow_envs[mode]["SHADOW_SCORING"]
                    log(f"gunicorn with SHADOW_SCORING={setting} answering on port {ports[mode]}")
                for payload, path, mode, spec in shadow_phases(args.shadow_rounds, args):
                    result = measure(spec, ports[mode])
                    shadow_runs.append((payload, path, mode, result))
                    shadow_results[spec.name] = result
        stored_rows = _count_outputs(args.db_name)
        if shadow_runs:
            shadow_stored = _shadow_stored(args.db_name)
    except BaseException:
        for log_file in log_files:
            if log_file.exists():
                sys.stderr.write(log_file.read_text()[-4000:])
        raise
    finally:
        for proc in procs:
            if proc.poll() is None:
                log("stopping gunicorn")
                stop_gunicorn(proc, log=log)
        if args.keep_db:
            log(f"keeping database {args.db_name}")
        else:
            log(f"dropping database {args.db_name}")
            drop_database(args.db_name)

    gunicorn_log = "".join(log_file.read_text() for log_file in log_files)
    for log_file in log_files:
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
            "shadow_rounds": args.shadow_rounds,
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
    if shadow_runs:
        report["shadow_scoring"] = {
            "payloads": {
                "agent": f"{len(AGENT_PATTERNS)} investigation patterns of "
                f"{len(AGENT_TASK_TYPES)} agent task types, each output with evidence and "
                "provenance, so that all four scorers apply",
                "plain": "validators only, as the other phases: every other scorer is skipped",
            },
            **summarise_shadow(shadow_runs),
            "stored": shadow_stored,
            "in_process": cost,
            "order": list(shadow_results),
            "phases": shadow_results,
        }
    json.dump(report, sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
