"""End to end: a reviewer's decision reaches a receiver through a real Celery worker.

The worker and the outbox relay are separate processes on Redis and the test's PostgreSQL
database, so this is the path production takes: the decision stores its task in the outbox,
the relay publishes it, and the worker picks it up, retries after a 500 with a countdown,
and records each attempt.
"""

import json
import os
import time

import pytest
import redis
from django.conf import settings

from dashboard.celery import app as celery_app
from gating import services, webhooks
from gating.models import WebhookDelivery
from gating.reviews import DecisionInput, item_claim, item_decide
from gating.roles import Role
from tests.factories import TaskTypeFactory, UserFactory, valid_submission
from tests.gating.test_webhooks import Receiver, expected_signature, signature_parts
from tests.processes import celery_process, process_env, relay_process

pytestmark = [pytest.mark.redis, pytest.mark.django_db(transaction=True)]

WAIT_SECONDS = 30


@pytest.fixture
def broker_url(monkeypatch):
    """Redis database 15, emptied, with this process's Celery app publishing to it."""
    url = settings.CELERY_BROKER_URL
    if not getattr(settings, "REDIS_AVAILABLE", False) or not url.startswith("redis://"):
        pytest.skip("needs Redis on 127.0.0.1:6379 (CI=true makes its absence an error instead)")
    client = redis.Redis.from_url(url)
    client.flushdb()  # tasks left in the queue by an earlier run would name other rows
    client.close()
    # The decision's on_commit hook must really publish: never run the task in-process.
    monkeypatch.setitem(celery_app.conf, "task_always_eager", False)
    assert celery_app.conf.broker_url == url
    return url


@pytest.fixture
def worker(requires_postgres, transactional_db, broker_url, tmp_path):
    """A Celery worker process, stopped before the test database is flushed or dropped."""
    env = process_env(
        broker_url, WEBHOOK_ALLOW_PRIVATE_ADDRESSES="true", WEBHOOK_RETRY_BASE_SECONDS="1"
    )
    log_path = tmp_path / "worker.log"
    args = [
        "worker",
        "--pool", "solo", "--concurrency", "1", "-Q", "celery",
        "--hostname", f"webhook-test-{os.getpid()}@%h",
        "--without-mingle", "--without-gossip", "--loglevel", "INFO",
    ]  # fmt: skip
    with (
        celery_process(args, env, log_path) as process,
        relay_process(env, tmp_path / "relay.log"),
    ):
        yield process, log_path


@pytest.fixture
def receiver():
    server = Receiver([500, 200])
    yield server
    server.close()


def test_a_decision_is_delivered_by_a_real_worker_after_one_retry(worker, receiver, settings):
    process, log_path = worker
    settings.WEBHOOK_ALLOW_PRIVATE_ADDRESSES = True
    gateway = UserFactory(role=Role.GATEWAY)
    reviewer = UserFactory(role=Role.REVIEWER)
    hook, secret = webhooks.webhook_register(
        owner=gateway, url=receiver.url, actor=UserFactory(role=Role.ADMIN)
    )
    TaskTypeFactory(name="fresh", reviewed_count=0, double_review_rate=0)
    submission = valid_submission(task_type="fresh")
    output = services.output_ingest(source=gateway, submission=submission).output
    assert output.decision == "pending_review"  # cold start holds it
    item = item_claim(reviewer=reviewer)

    item_decide(item_id=item.pk, reviewer=reviewer, decision=DecisionInput(action="approve"))

    delivery = WebhookDelivery.objects.get(webhook=hook)
    deadline = time.monotonic() + WAIT_SECONDS
    while time.monotonic() < deadline and process.poll() is None:
        delivery.refresh_from_db()
        if len(receiver.received) >= 2 and delivery.status == WebhookDelivery.Status.DELIVERED:
            break
        time.sleep(0.2)
    worker_log = log_path.read_text()[-4000:]
    assert delivery.status == WebhookDelivery.Status.DELIVERED, worker_log
    assert len(receiver.received) == 2, worker_log

    assert delivery.attempt_count == 2
    first, second = delivery.attempts.order_by("at", "id")
    assert (first.status_code, second.status_code) == (500, 200)
    # The retry waited for its countdown (WEBHOOK_RETRY_BASE_SECONDS=1 for the worker), give
    # or take the broker's timer precision.
    assert (second.at - first.at).total_seconds() >= 0.9
    for request in receiver.received:
        assert json.loads(request.body) == delivery.payload
        assert request.headers["X-Gatehouse-Event"] == "output.decided"
        assert request.headers["X-Gatehouse-Delivery"] == str(delivery.event_id)
        timestamp, v1 = signature_parts(request.headers["X-Gatehouse-Signature"])
        assert v1 == expected_signature(secret, timestamp, request.body)
    body = json.loads(receiver.received[1].body)
    assert body["output"]["external_id"] == output.external_id
    assert body["output"]["status"] == "approved"
    assert body["review"]["action"] == "approve"
