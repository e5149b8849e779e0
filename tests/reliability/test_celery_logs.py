"""With LOG_FORMAT=json, a real Celery worker and beat write JSON lines, as the web server
does, so that a deployment's log store parses every line (docs/integrations.md, Logs).
Read while they run: the worker's two lines on a shutdown signal are Celery's own text."""

import json
import time

import pytest

from tests.gating.test_webhook_worker import broker_url  # noqa: F401
from tests.processes import celery_process, process_env

pytestmark = [pytest.mark.redis, pytest.mark.django_db(transaction=True)]

WAIT_SECONDS = 30


def _lines_once(log_path, needle: str) -> list[str]:
    """The log's lines once one of them holds ``needle`` (or the wait is over)."""
    deadline = time.monotonic() + WAIT_SECONDS
    while time.monotonic() < deadline:
        lines = [line for line in log_path.read_text().splitlines() if line.strip()]
        if any(needle in line for line in lines):
            return lines
        time.sleep(0.2)
    return log_path.read_text().splitlines()


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (
            ["--quiet", "worker", "--pool", "solo", "--without-mingle", "--without-gossip"],
            "ready.",
        ),
        (["--quiet", "beat", "--max-interval", "1"], "beat: Starting"),
    ],
    ids=["worker", "beat"],
)
def test_celery_writes_json_lines(requires_postgres, broker_url, tmp_path, args, needle):  # noqa: F811
    env = process_env(broker_url, LOG_FORMAT="json", LOG_LEVEL="INFO")
    args = [*args, "--loglevel", "INFO"]
    log_path = tmp_path / "celery.log"
    with celery_process(args, env, log_path):
        lines = _lines_once(log_path, needle)
    assert any(needle in line for line in lines), "\n".join(lines)
    records = [json.loads(line) for line in lines]  # every line, or it raises
    assert all({"time", "level", "logger", "message"} <= set(r) for r in records), records
    assert any(r["logger"].startswith("celery") for r in records)
