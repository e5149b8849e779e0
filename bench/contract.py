"""Contract benchmark: the contract test's schemathesis run, with a budget a CI run cannot
afford.

For each role (admin, lead, reviewer, gateway), against a fresh PostgreSQL database and the
app under gunicorn: the tables are flushed, the contract test's world is seeded
(``tests/contract/world.py``: users and tokens, task types, held and delivered outputs,
claims, alerts, a tiers cycle), and ``schemathesis run`` goes over every operation of the
served schema with that role's token, with the same checks, phases, seed and dictionaries as
``tests/contract`` (``tests/contract/runner.py``). Only the budget differs, and with
``--checks`` the checks: ``--examples`` random test cases per role, spread evenly over the
operations, on top of the schema's boundary and type-violation cases.

Output: one JSON object on stdout, per role the operations tested, the test cases run, the
distinct failures by check, the failures left out as beyond the schema
(``tests/contract/hooks.py``) and the duration; progress, and each failure with its curl, go
to stderr. The work directories (each run's config, full output and NDJSON events) are kept
and named in the JSON. Run by hand, never as a timed test.

    .venv/bin/python -m bench.contract [--examples 2000] [--roles admin,gateway]
        [--checks contract|all|<check>,...] [--keep-db]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from bench.harness import (
    HOST,
    app_env,
    drop_database,
    free_port,
    machine_facts,
    manage,
    recreate_database,
    start_gunicorn,
    stderr_log,
    stop_gunicorn,
    wait_healthy,
)

DEFAULT_DB = "gatehouse_bench_contract"
ROLES = ("admin", "lead", "reviewer", "gateway")
HTTP_METHODS = {"get", "put", "post", "delete", "options", "head", "patch", "trace"}

log = stderr_log("contract")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument(
        "--examples",
        type=int,
        default=2000,
        help="random test cases per role, spread over the operations (default 2000)",
    )
    p.add_argument("--roles", default=",".join(ROLES), help="comma-separated (default: all four)")
    p.add_argument(
        "--checks",
        default="contract",
        help="contract: the contract test's checks (the default); all: every check "
        "schemathesis has; or a comma-separated list of check names",
    )
    p.add_argument(
        "--db-name", default=DEFAULT_DB, help=f"database to create (default {DEFAULT_DB})"
    )
    p.add_argument("--keep-db", action="store_true", help="keep the bench database afterwards")
    args = p.parse_args(argv)
    args.roles = [r.strip() for r in args.roles.split(",") if r.strip()]
    unknown = set(args.roles) - set(ROLES)
    if unknown:
        p.error(f"unknown roles: {', '.join(sorted(unknown))}")
    args.checks = _checks(p, args.checks)
    return args


def _checks(p: argparse.ArgumentParser, value: str) -> tuple[str, ...]:
    from tests.contract import runner

    named = {"contract": runner.CHECKS, "all": runner.ALL_CHECKS}
    if value in named:
        return named[value]
    checks = tuple(c.strip() for c in value.split(",") if c.strip())
    if unknown := set(checks) - set(runner.ALL_CHECKS):
        p.error(f"unknown checks: {', '.join(sorted(unknown))}")
    return checks


def _operation_count(base_url: str) -> int:
    with urllib.request.urlopen(f"{base_url}/api/schema/?format=json", timeout=30) as response:
        schema = json.load(response)
    return sum(1 for item in schema["paths"].values() for method in item if method in HTTP_METHODS)


def _setup_django(env: dict[str, str]) -> None:
    """This process seeds through the services, on the bench database."""
    os.environ.update(
        DATABASE_URL=env["DATABASE_URL"], DJANGO_SETTINGS_MODULE=env["DJANGO_SETTINGS_MODULE"]
    )
    import django

    django.setup()


def _run_role(role_name: str, args, env, workroot: Path) -> dict:
    from django.core.management import call_command

    from gating.roles import Role
    from tests.contract import runner
    from tests.contract.world import seed_world

    role = Role(role_name)
    log(f"{role}: flushing and seeding")
    call_command("flush", interactive=False, verbosity=0)
    world = seed_world()
    port = free_port()
    workdir = workroot / role.value
    workdir.mkdir(parents=True)
    server_log = workdir / "gunicorn.log"
    proc = start_gunicorn(env, port, 1, 1, server_log, log=log)
    try:
        wait_healthy(proc, port)
        base_url = f"http://{HOST}:{port}"
        operations = _operation_count(base_url)
        max_examples = max(1, math.ceil(args.examples / operations))
        log(f"{role}: schemathesis, {max_examples} random cases per operation ({operations})")
        result = runner.run(
            base_url,
            world,
            role,
            max_examples=max_examples,
            workdir=workdir / "schemathesis",
            checks=args.checks,
        )
    finally:
        stop_gunicorn(proc, log=log)
    if result.failures:
        log(runner.describe(result, server_log=server_log.read_text(errors="replace")))
    log(
        f"{role}: {result.test_cases} test cases, {len(result.failures)} distinct failures, "
        f"{result.seconds:.1f} s"
    )
    return {
        "max_examples_per_operation": max_examples,
        **result.summary(),
        "failures": [
            {
                "operation": f.operation,
                "check": f.check,
                "title": f.title,
                "status": f.status,
                "test_cases": f.count,
            }
            for f in result.failures
        ],
        "workdir": str(result.workdir),
    }


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    # Errors only in the server's log: it is kept for the tracebacks of any 5xx.
    env = {**app_env(args.db_name), "LOG_LEVEL": "ERROR"}
    log(f"creating database {args.db_name}")
    pg_version = recreate_database(args.db_name)
    machine = machine_facts(pg_version)
    workroot = Path(tempfile.mkdtemp(prefix="gatehouse-bench-contract-"))
    started = time.monotonic()
    roles: dict[str, dict] = {}
    try:
        log("migrating")
        manage(env, "migrate", "--noinput", "-v", "0")
        _setup_django(env)
        for role_name in args.roles:
            roles[role_name] = _run_role(role_name, args, env, workroot)
    finally:
        if "django.db" in sys.modules:
            from django.db import connections

            connections.close_all()
        if args.keep_db:
            log(f"keeping database {args.db_name}")
        else:
            log(f"dropping database {args.db_name}")
            drop_database(args.db_name)

    from tests.contract import runner

    version = subprocess.run(
        [str(runner.SCHEMATHESIS), "--version"], capture_output=True, text=True, check=True
    ).stdout.strip()
    print(
        json.dumps(
            {
                "benchmark": "contract",
                "machine": machine,
                "schemathesis": version,
                "config": {
                    "examples_per_role": args.examples,
                    "seed": runner.SEED,
                    "checks": list(args.checks),
                    "phases": list(runner.PHASES),
                },
                "roles": roles,
                "failures_total": sum(r["unique_failures"] for r in roles.values()),
                "duration_s": round(time.monotonic() - started, 1),
                "workdir": str(workroot),
            },
            indent=2,
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
