"""/metrics under gunicorn with several workers, as compose and make run serve it: the
requests that different workers served are summed in one scrape, whichever worker answers.
"""

import sys
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from django.conf import settings
from prometheus_client.parser import text_string_to_metric_families

from gating.models import Output
from gating.roles import Role
from tests.factories import SubmissionFactory, TaskTypeFactory, UserFactory, token_for
from tests.processes import free_port, process_env, running

pytestmark = [pytest.mark.slow, pytest.mark.serial, pytest.mark.django_db(transaction=True)]

WORKERS = 2
BATCH_SIZE = 3


@contextmanager
def gunicorn(env: dict, port: int, log_path: Path):
    command = [
        str(Path(sys.executable).with_name("gunicorn")), "dashboard.wsgi",
        "-c", "dashboard/gunicorn.conf.py",
        "--bind", f"127.0.0.1:{port}", "--workers", str(WORKERS),
    ]  # fmt: skip
    with running(command, env, log_path) as process:
        yield process


def scrape(base_url: str) -> dict:
    response = httpx.get(f"{base_url}/metrics", timeout=30)
    assert response.status_code == 200, response.text
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(response.text)
        for s in family.samples
    }


def served_by(multiproc_dir: Path) -> set[int]:
    """The pids of the workers that observed an ingest request (each writes its own file)."""
    return {int(p.stem.rpartition("_")[2]) for p in multiproc_dir.glob("histogram_*.db")}


def test_a_scrape_sums_the_requests_every_worker_served(requires_postgres, tmp_path):
    multiproc_dir = tmp_path / "prometheus"
    multiproc_dir.mkdir()
    stale = multiproc_dir / "counter_4242.db"
    stale.write_bytes(b"left by the last run")  # the start must clear it
    gateway = UserFactory(role=Role.GATEWAY)
    TaskTypeFactory(name="workers", reviewed_count=0, double_review_rate=0.0)  # all held
    token = token_for(gateway)
    env = process_env(
        settings.CELERY_BROKER_URL,
        PROMETHEUS_MULTIPROC_DIR=str(multiproc_dir),
        LOG_LEVEL="WARNING",
    )
    env.pop("METRICS_TOKEN", None)
    env.pop("METRICS_ALLOWED_NETWORKS", None)
    port = free_port()
    base_url = f"http://127.0.0.1:{port}"
    log_path = tmp_path / "gunicorn.log"

    with gunicorn(env, port, log_path) as server:
        deadline = time.monotonic() + 60
        while True:
            assert server.poll() is None, log_path.read_text()
            try:
                if httpx.get(f"{base_url}/healthz", timeout=5).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, log_path.read_text()
            time.sleep(0.2)
        assert not stale.exists()

        def post_one(_):
            # A connection of its own each time, so that any worker may accept it.
            return httpx.post(
                f"{base_url}/api/v1/outputs/",
                json=SubmissionFactory(task_type="workers"),
                headers={"Authorization": f"Bearer {token}"},
                timeout=30,
            ).status_code

        sent = 0
        # Four at a time, so that while one worker is busy the other takes the next; until
        # both have served some (a few rounds at most).
        with ThreadPoolExecutor(max_workers=4) as pool:
            while len(served_by(multiproc_dir)) < WORKERS:
                assert sent < 200, "one worker served every request"
                assert list(pool.map(post_one, range(8))) == [201] * 8
                sent += 8
        batch = {"outputs": [SubmissionFactory(task_type="workers") for _ in range(BATCH_SIZE)]}
        answer = httpx.post(
            f"{base_url}/api/v1/outputs/batch/",
            json=batch,
            headers={"Authorization": f"Bearer {token}"},
            timeout=30,
        )
        assert answer.status_code == 201, answer.text

        # Several scrapes, answered by either worker: each sums them all.
        scrapes = [scrape(base_url) for _ in range(6)]

    stored = Output.objects.filter(task_type__name="workers")
    assert stored.count() == sent + BATCH_SIZE
    assert set(stored.values_list("decision", flat=True)) == {"pending_review"}
    decisions = (
        "gatehouse_gate_decisions_total",
        (("decision", "pending_review"), ("task_type", "workers")),
    )
    single = (
        "gatehouse_ingest_request_duration_seconds_count",
        (("route", "single"), ("status", "2xx")),
    )
    batch_count = (
        "gatehouse_ingest_request_duration_seconds_count",
        (("route", "batch"), ("status", "2xx")),
    )
    for scraped in scrapes:
        assert scraped[decisions] == sent + BATCH_SIZE
        assert scraped[single] == sent
        assert scraped[batch_count] == 1
        assert scraped[("gatehouse_review_queue_items", (("queue", "held"),))] == sent + BATCH_SIZE
        assert scraped[("gatehouse_metrics_database_up", ())] == 1
