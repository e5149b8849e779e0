"""Run schemathesis against a served Gatehouse with one role's token, and read its verdict.

The CLI (``schemathesis run``) in its own process, so that generation does not share an
interpreter with anything else and the same command can be rerun by hand: the config file it
is given, its full output and its NDJSON event log stay in the work directory. The schema is
the served one (``/api/schema/``), so what is tested is what clients read.

Shared by the contract test (``tests/contract``, a small fixed budget on every run) and the
deeper ``bench/contract.py``.
"""

from __future__ import annotations

import base64
import json
import os
import re
import shlex
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    # Only for annotations: bench.contract reads the checks before Django is set up.
    from gating.roles import Role
    from tests.contract.world import World

# The checks the contract holds the API to: no 5xx, only documented status codes, the
# documented content type, and bodies that match the documented schema.
CHECKS = (
    "not_a_server_error",
    "status_code_conformance",
    "content_type_conformance",
    "response_schema_conformance",
)
# Every check schemathesis has: on top of those, that invalid data is refused and valid
# data accepted (the schema states the server's rules, no more and no less), the response
# headers, a missing required header, undeclared methods and their Allow header, and
# access without credentials. The stateful ones (use_after_free,
# ensure_resource_availability) need the stateful phase, which is left out (below).
ALL_CHECKS = (
    *CHECKS,
    "response_headers_conformance",
    "negative_data_rejection",
    "positive_data_acceptance",
    "missing_required_header",
    "unsupported_method",
    "allow_header_conformance",
    "use_after_free",
    "ensure_resource_availability",
    "ignored_auth",
)
# Examples from the schema, then the boundary and type-violation cases derived from it
# (coverage), then random valid and invalid requests (fuzzing). Positive and negative data.
PHASES = ("examples", "coverage", "fuzzing")
# Stateful testing is left out: it needs links between operations, which the schema does not
# declare, and inferring them costs more than the CI budget.
ALL_PHASES = ("examples", "coverage", "fuzzing", "stateful")
# Fixed, with Hypothesis derandomised and no example database: the same code and data give
# the same requests on every machine, so a CI failure reproduces locally.
SEED = 20240601

SCHEMATHESIS = Path(sys.executable).with_name("schemathesis")
# The failures a run may leave out: 400s for rules the schema cannot state, and no others.
HOOKS = Path(__file__).with_name("hooks.py")
TOKEN_VARIABLE = "GATEHOUSE_CONTRACT_TOKEN"


def config_toml(world: World, *, max_examples: int, checks: tuple[str, ...] = CHECKS) -> str:
    """The run's configuration: the role's token (from the environment), and dictionaries
    of seeded ids and names, drawn for half of the generated values, so that the fuzzing
    reaches rows that exist and not only 404s."""

    def values(items) -> str:
        return json.dumps(list(items))

    def bind(dictionary: str) -> str:
        return f'{{ dictionary = "{dictionary}", probability = 0.5 }}'

    return f"""\
seed = {SEED}
workers = 1
continue-on-failure = true
hooks = "{HOOKS}"

[cache]
enabled = false

[output.sanitization]
# The tokens are the test's own; unsanitised, each curl below reproduces as printed.
enabled = false

[generation]
deterministic = true
max-examples = {max_examples}

[phases]
{"".join(f"{name}.enabled = {str(name in PHASES).lower()}{chr(10)}" for name in ALL_PHASES)}
[checks]
enabled = false
{"".join(f"{name}.enabled = true{chr(10)}" for name in checks)}
[auth.openapi.bearerAuth]
bearer = "${{{TOKEN_VARIABLE}}}"

[dictionaries]
item_ids = {{ values = {values(world.item_ids)} }}
output_ids = {{ values = {values(world.output_ids)} }}
alert_ids = {{ values = {values(world.alert_ids)} }}
dataset_ids = {{ values = {values(world.dataset_ids)} }}
version_numbers = {{ values = [1] }}
task_types = {{ values = {values(world.task_types)} }}
models = {{ values = {values(world.models)} }}

[parameters]
"path.item_id" = {bind("item_ids")}
"path.name" = {bind("task_types")}
"query.task_type" = {bind("task_types")}
"query.model" = {bind("models")}
"path.number" = {bind("version_numbers")}
"path.output_id" = {bind("output_ids")}

[[operations]]
include-path = "/api/v1/outputs/{{id}}/"
parameters = {{ "path.id" = {bind("output_ids")} }}

[[operations]]
include-path = "/api/v1/alerts/{{id}}/acknowledge/"
parameters = {{ "path.id" = {bind("alert_ids")} }}

[[operations]]
include-path-regex = "^/api/v1/datasets/[{{]id[}}]/"
parameters = {{ "path.id" = {bind("dataset_ids")} }}
"""


@dataclass
class Failure:
    operation: str
    check: str
    title: str
    message: str
    curl: str
    status: int | None
    content_type: str
    body: str
    count: int = 1


@dataclass
class RoleRun:
    role: Role
    seconds: float
    client_cpu_seconds: float
    server_seconds: float
    report: dict
    failures: list[Failure]
    workdir: Path
    output: str = field(repr=False)

    @property
    def test_cases(self) -> int:
        return self.report["test_cases"]["generated"]

    @property
    def dropped(self) -> int:
        """Test cases whose failure hooks.py left out: 400s for rules beyond the schema."""
        return self.report.get("filtered") or 0

    @property
    def operations(self) -> dict:
        return self.report["operations"] or {}

    def failures_by_check(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for failure in self.failures:
            counts[failure.check] = counts.get(failure.check, 0) + 1
        return counts

    def summary(self) -> dict:
        return {
            "operations": self.operations.get("tested"),
            "operations_in_schema": self.operations.get("total"),
            "test_cases": self.test_cases,
            "unique_failures": len(self.failures),
            "failures_by_check": self.failures_by_check(),
            "left_out_beyond_schema": self.dropped,
            "errors": self.report.get("errors") or [],
            "duration_s": round(self.seconds, 1),
            # Where the time went, apart from waiting for a busy machine's CPUs:
            # schemathesis's own CPU, and the server's answers as schemathesis timed them.
            "client_cpu_s": round(self.client_cpu_seconds, 1),
            "server_s": round(self.server_seconds, 1),
        }


def run(
    base_url: str,
    world: World,
    role: Role,
    *,
    max_examples: int,
    workdir: Path,
    checks: tuple[str, ...] = CHECKS,
) -> RoleRun:
    """``schemathesis run`` over every operation with ``role``'s token."""
    workdir.mkdir(parents=True, exist_ok=True)
    config = workdir / "schemathesis.toml"
    config.write_text(config_toml(world, max_examples=max_examples, checks=checks))
    reports = workdir / "reports"
    command = [
        str(SCHEMATHESIS),
        "--config-file",
        str(config),
        "run",
        f"{base_url}/api/schema/",
        "--report",
        "json,ndjson",
        "--report-json-path",
        str(reports / "report.json"),
        "--report-ndjson-path",
        str(reports / "events.ndjson"),
        "--no-color",
    ]
    env = {**os.environ, TOKEN_VARIABLE: world.tokens[role]}
    started = time.monotonic()
    # In the work directory: Hypothesis and schemathesis write their caches where they run.
    output = workdir / "output.txt"
    with output.open("w") as out:
        process = subprocess.Popen(
            command, cwd=workdir, env=env, stdout=out, stderr=subprocess.STDOUT, text=True
        )
        # wait4: this child's own CPU time, which a busy machine does not inflate.
        _, status, usage = os.wait4(process.pid, 0)
        process.returncode = os.waitstatus_to_exitcode(status)
    seconds = time.monotonic() - started
    report_path = reports / "report.json"
    if not report_path.exists():
        raise RuntimeError(
            f"schemathesis wrote no report (exit {process.returncode}):\n{output.read_text()}"
        )
    failures, server_seconds = read_events(reports / "events.ndjson")
    return RoleRun(
        role=role,
        seconds=seconds,
        client_cpu_seconds=usage.ru_utime + usage.ru_stime,
        server_seconds=server_seconds,
        report=json.loads(report_path.read_text()),
        failures=failures,
        workdir=workdir,
        output=output.read_text(),
    )


def read_events(path: Path) -> tuple[list[Failure], float]:
    """Each distinct failure (operation, check, message) once, with the first request that
    showed it and how many test cases did; and the time the server took to answer."""
    found: dict[tuple[str, str, str], Failure] = {}
    server_seconds = 0.0
    with path.open() as events:
        for line in events:
            # Only finished scenarios carry requests and check results.
            if not line.startswith('{"ScenarioFinished"'):
                continue
            recorder = json.loads(line)["ScenarioFinished"].get("recorder") or {}
            interactions = recorder.get("interactions", {})
            server_seconds += sum(
                (i.get("response") or {}).get("elapsed", 0.0) for i in interactions.values()
            )
            for case_id, checks in recorder.get("checks", {}).items():
                for check in checks:
                    info = (check.get("failure_info") or {}).get("failure")
                    if check["status"] != "failure" or not info:
                        continue
                    key = (info["operation"], check["name"], info["message"])
                    if key in found:
                        found[key].count += 1
                        continue
                    found[key] = _failure(info, check["name"], interactions.get(case_id))
    failures = sorted(found.values(), key=lambda f: (f.operation, f.check, f.status or 0))
    return failures, server_seconds


def _failure(info: dict, check: str, interaction: dict | None) -> Failure:
    request = (interaction or {}).get("request") or {}
    response = (interaction or {}).get("response") or {}
    headers = {k.lower(): v for k, v in (response.get("headers") or {}).items()}
    return Failure(
        operation=info["operation"],
        check=check,
        title=f"{info['code']} {info['title']}",
        message=info["message"],
        curl=_curl(request) if request else "(no request recorded)",
        status=response.get("status_code"),
        content_type=", ".join(headers.get("content-type", [])),
        body=_decode(response.get("content")),
    )


def _decode(payload: dict | None) -> str:
    if not payload:
        return ""
    if "$base64" in payload:
        return base64.b64decode(payload["$base64"]).decode("utf-8", "replace")
    return payload.get("string", "")


_CURL_BODY_LIMIT = 1000


def _curl(request: dict) -> str:
    parts = ["curl", "-X", request["method"]]
    for name, values in (request.get("headers") or {}).items():
        for value in values:
            parts += ["-H", f"{name}: {value}"]
    body = _decode(request.get("body"))
    note = ""
    if len(body) > _CURL_BODY_LIMIT:
        note = f"  # body cut to {_CURL_BODY_LIMIT} of {len(body)} characters"
        body = body[:_CURL_BODY_LIMIT]
    if body:
        parts += ["-d", body]
    parts.append(request["uri"])
    return shlex.join(parts) + note


def describe(result: RoleRun, *, server_log: str = "") -> str:
    """The failures of one run, for a person: operation, check, curl, response."""
    lines = [
        f"{len(result.failures)} distinct contract failures with the {result.role} token "
        f"({result.test_cases} test cases in {result.seconds:.0f} s, seed {SEED}). "
        f"Full output and events: {result.workdir}",
        "",
    ]
    for n, failure in enumerate(result.failures, start=1):
        body = failure.body.strip().replace("\n", " ")
        if len(body) > 600:
            body = body[:600] + "…"
        lines += [
            f"{n}. {failure.operation}: {failure.check} ({failure.title}), "
            f"{failure.count} test case{'s' if failure.count != 1 else ''}",
            *(f"   {line}" for line in failure.message.splitlines() if line.strip()),
            f"   {failure.curl}",
            f"   -> {failure.status} ({failure.content_type or 'no content type'}): {body}",
            "",
        ]
    errors = server_errors(server_log)
    if errors and any(f.status and f.status >= 500 for f in result.failures):
        lines += ["The server's errors (the tracebacks of the 5xx):", errors[-20000:]]
    return "\n".join(lines)


_LOG_RECORD = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d+ (\w+) ")


def server_errors(log: str) -> str:
    """The ERROR and CRITICAL records of the app's log, tracebacks included."""
    kept: list[str] = []
    keeping = False
    for line in log.splitlines():
        record = _LOG_RECORD.match(line)
        if record:
            keeping = record[1] in {"ERROR", "CRITICAL"}
        if keeping:
            kept.append(line)
    return "\n".join(kept)
