import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from django.conf import settings

from dashboard.settings.base import BASE_DIR
from tests.contract.world import World, seed_world
from tests.processes import free_port, process_env

HOST = "127.0.0.1"


@dataclass
class Server:
    base_url: str
    log_path: Path

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")


@pytest.fixture
def contract_world(requires_postgres, transactional_db) -> World:
    """Committed rows, so that a server in another process sees them."""
    return seed_world()


def _wait_healthy(process: subprocess.Popen, url: str, log_path: Path) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if process.poll() is not None:
            log = log_path.read_text()
            raise RuntimeError(f"gunicorn exited with {process.returncode}:\n{log}")
        try:
            with urllib.request.urlopen(f"{url}/healthz", timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(f"{url}/healthz did not answer within 30 s:\n{log_path.read_text()}")


@pytest.fixture
def api_server(contract_world, tmp_path) -> Iterator[Server]:
    """The app under gunicorn, as production serves it, on the test database.

    One sync worker: schemathesis sends one request at a time, and one process keeps the
    run's order of effects (claims, decisions) the same on every run. Stopped before the
    test's teardown flushes the tables.
    """
    port = free_port()
    log_path = tmp_path / "gunicorn.log"
    # Errors only: the log is there for the tracebacks of any 5xx.
    env = process_env(settings.CELERY_BROKER_URL, DEBUG="false", LOG_LEVEL="ERROR")
    command = [
        str(Path(sys.executable).with_name("gunicorn")),
        "dashboard.wsgi",
        "--bind",
        f"{HOST}:{port}",
        "--workers",
        "1",
        "--log-level",
        "warning",
    ]
    with log_path.open("w") as log:
        process = subprocess.Popen(
            command, cwd=BASE_DIR, env=env, stdout=log, stderr=subprocess.STDOUT
        )
    try:
        base_url = f"http://{HOST}:{port}"
        _wait_healthy(process, base_url, log_path)
        yield Server(base_url=base_url, log_path=log_path)
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
