"""/metrics: who may read it, and that each number is what the database and the requests say."""

import ipaddress
import json
import os
import re
import subprocess
import sys
from datetime import timedelta
from unittest import mock

import pytest
from django.db import OperationalError, connection
from django.http import HttpResponse
from django.test import Client
from django.utils import timezone
from prometheus_client.parser import text_string_to_metric_families
from pydantic import BaseModel, RootModel

from dashboard.settings.base import BASE_DIR
from gating import prometheus
from gating.ingest_answers import answered_decisions
from gating.models import OutboxMessage, Output, ReviewItem, Webhook, WebhookDelivery
from learning.models import CycleRun
from tests.factories import SubmissionFactory, TaskTypeFactory

pytestmark = pytest.mark.django_db

TOKEN = "a-metrics-token-of-some-length"
GRAFANA = BASE_DIR / "docs" / "grafana" / "gatehouse.json"


def scrape(client=None, **headers) -> dict:
    """{(sample name, sorted labels): value} of one scrape from loopback."""
    response = (client or Client()).get("/metrics", **headers)
    assert response.status_code == 200, response.content
    assert response["Content-Type"].startswith("text/plain; version=")
    return samples(response.content.decode())


def samples(text: str) -> dict:
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def value(scraped: dict, name: str, **labels) -> float:
    return scraped.get((name, tuple(sorted(labels.items()))), 0.0)


# ---------------------------------------------------------------------------- access


def test_loopback_reads_the_metrics_when_nothing_is_configured():
    assert value(scrape(), "gatehouse_metrics_database_up") == 1


def test_another_address_gets_a_404_and_no_data():
    response = Client().get("/metrics", REMOTE_ADDR="203.0.113.9")
    assert response.status_code == 404
    assert b"gatehouse_" not in response.content


def test_a_forwarded_header_does_not_make_a_client_local():
    response = Client().get("/metrics", REMOTE_ADDR="203.0.113.9", HTTP_X_FORWARDED_FOR="127.0.0.1")
    assert response.status_code == 404


def test_the_token_opens_the_metrics_from_anywhere(settings):
    settings.METRICS_TOKEN, settings.METRICS_ALLOWED_NETWORKS = TOKEN, ()
    response = Client().get(
        "/metrics", REMOTE_ADDR="203.0.113.9", HTTP_AUTHORIZATION=f"Bearer {TOKEN}"
    )
    assert response.status_code == 200
    assert b"gatehouse_metrics_database_up 1.0" in response.content


@pytest.mark.parametrize(
    "authorization", [None, f"Bearer {TOKEN}x", f"Bearer {TOKEN[:-1]}", f"Basic {TOKEN}", "Bearer"]
)
def test_without_the_right_token_the_answer_is_401_and_no_data(settings, authorization):
    settings.METRICS_TOKEN, settings.METRICS_ALLOWED_NETWORKS = TOKEN, ()
    headers = {"HTTP_AUTHORIZATION": authorization} if authorization else {}
    # Loopback too: with a token configured and no network, only the token opens.
    response = Client().get("/metrics", **headers)
    assert response.status_code == 401
    assert response["WWW-Authenticate"].startswith("Bearer")
    assert b"gatehouse_" not in response.content
    assert TOKEN.encode() not in response.content


def test_an_allowed_network_reads_without_a_token(settings):
    settings.METRICS_ALLOWED_NETWORKS = (ipaddress.ip_network("10.0.0.0/8"),)
    assert Client().get("/metrics", REMOTE_ADDR="10.20.30.40").status_code == 200
    assert Client().get("/metrics", REMOTE_ADDR="::ffff:10.20.30.40").status_code == 200
    assert Client().get("/metrics", REMOTE_ADDR="11.0.0.1").status_code == 404
    assert Client().get("/metrics").status_code == 404  # loopback is not in the list


def test_only_get_and_head():
    assert Client().post("/metrics").status_code == 405


def test_metrics_are_not_in_the_api_schema(admin_api):
    schema = admin_api.get("/api/schema/", HTTP_ACCEPT="application/json").json()
    assert "/metrics" not in schema["paths"]
    assert "/api/v1/outputs/" in schema["paths"]


# ---------------------------------------------------------------------------- counted per request


def test_each_ingest_request_is_timed_and_each_decision_counted(gateway_api):
    TaskTypeFactory(name="metrics-approve", review_threshold=0.0, approve_threshold=0.01)
    TaskTypeFactory(name="metrics-held", reviewed_count=0, double_review_rate=0.0)
    before = scrape()
    for task_type in ["metrics-approve"] * 3 + ["metrics-held"] * 2:
        response = gateway_api.post(
            "/api/v1/outputs/", SubmissionFactory(task_type=task_type), format="json"
        )
        assert response.status_code == 201
    batch = {"outputs": [SubmissionFactory(task_type="metrics-held") for _ in range(4)]}
    assert gateway_api.post("/api/v1/outputs/batch/", batch, format="json").status_code == 201
    bad = gateway_api.post("/api/v1/outputs/", {"task_type": "metrics-held"}, format="json")
    assert bad.status_code == 400
    after = scrape()

    def grew(name, **labels):
        return value(after, name, **labels) - value(before, name, **labels)

    stored = Output.objects.filter(task_type__name__startswith="metrics-")
    by_pair = {}
    for output in stored.select_related("task_type"):
        key = (output.task_type.name, output.decision)
        by_pair[key] = by_pair.get(key, 0) + 1
    assert sum(by_pair.values()) == 9
    assert len(by_pair) >= 2  # approved and held outputs both
    for (task_type, decision), n in by_pair.items():
        assert grew("gatehouse_gate_decisions_total", task_type=task_type, decision=decision) == n
    histogram = "gatehouse_ingest_request_duration_seconds_count"
    assert grew(histogram, route="single", status="2xx") == 5
    assert grew(histogram, route="single", status="4xx") == 1
    assert grew(histogram, route="batch", status="2xx") == 1


def test_reads_are_not_ingest(gateway_api):
    before = scrape()
    assert gateway_api.get("/api/v1/outputs/").status_code == 200
    after = scrape()
    name = "gatehouse_ingest_request_duration_seconds_count"
    assert {k: v for k, v in after.items() if k[0] == name} == {
        k: v for k, v in before.items() if k[0] == name
    }


# ---------------------------------------------------------------------------- read at scrape time


def test_the_queue_counts_open_items_and_the_oldest_wait(held_outputs):
    held_outputs(3, task_type="queue-metrics")
    an_hour_ago = timezone.now() - timedelta(hours=1)
    first = ReviewItem.objects.filter(state="open").order_by("id").first()
    ReviewItem.objects.filter(pk=first.pk).update(turn_at=an_hour_ago)
    decided = ReviewItem.objects.filter(state="open").order_by("id").last()
    ReviewItem.objects.filter(pk=decided.pk).update(state="decided")

    scraped = scrape()
    assert value(scraped, "gatehouse_review_queue_items", queue="held") == 2
    assert value(scraped, "gatehouse_review_queue_items", queue="audit") == 0
    wait = value(scraped, "gatehouse_review_queue_oldest_wait_seconds", queue="held")
    assert 3600 <= wait < 3600 + 60
    assert value(scraped, "gatehouse_review_queue_oldest_wait_seconds", queue="audit") == 0


def test_the_outbox_lag_is_the_oldest_unpublished_task():
    now = timezone.now()
    OutboxMessage.objects.create(task="t", created_at=now - timedelta(hours=2), published_at=now)
    OutboxMessage.objects.create(task="t", created_at=now - timedelta(seconds=300))
    OutboxMessage.objects.create(task="t", created_at=now - timedelta(seconds=10))
    scraped = scrape()
    assert value(scraped, "gatehouse_outbox_unpublished_messages") == 2
    assert 300 <= value(scraped, "gatehouse_outbox_oldest_unpublished_age_seconds") < 360


def test_learning_cycles_their_outcomes_and_the_latest_duration():
    now = timezone.now()

    def run(kind, status, hours_ago, seconds):
        end = now - timedelta(hours=hours_ago)
        CycleRun.objects.create(
            kind=kind,
            status=status,
            window_start=end - timedelta(hours=6),
            window_end=end,
            started_at=end,
            finished_at=end + timedelta(seconds=seconds) if status != "running" else None,
        )

    run("thresholds", "succeeded", 30, 5)  # outside the 24 hours counted
    run("thresholds", "succeeded", 12, 40)
    run("thresholds", "failed", 1, 3)
    run("alerts", "succeeded", 2, 7)
    run("alerts", "running", 1, 0)
    scraped = scrape()
    runs = "gatehouse_learning_cycle_runs"
    assert value(scraped, runs, kind="thresholds", status="succeeded") == 1
    assert value(scraped, runs, kind="thresholds", status="failed") == 1
    assert value(scraped, runs, kind="alerts", status="running") == 1
    assert value(scraped, runs, kind="tiers", status="succeeded") == 0
    assert value(scraped, "gatehouse_learning_cycle_last_success", kind="thresholds") == 0
    assert value(scraped, "gatehouse_learning_cycle_last_duration_seconds", kind="thresholds") == 3
    # The running one has not finished: the latest finished alerts run is the one before.
    assert value(scraped, "gatehouse_learning_cycle_last_success", kind="alerts") == 1
    assert value(scraped, "gatehouse_learning_cycle_last_duration_seconds", kind="alerts") == 7
    assert ("gatehouse_learning_cycle_last_success", (("kind", "tiers"),)) not in scraped
    finished_at = "gatehouse_learning_cycle_last_finished_timestamp_seconds"
    finished = value(scraped, finished_at, kind="alerts")
    assert finished == pytest.approx((now - timedelta(hours=2, seconds=-7)).timestamp())


def test_webhook_deliveries_waiting_and_failing(gateway):
    hook = Webhook.objects.create(owner=gateway, url="https://example.com/hook", secret="s")
    for status, attempts in [("pending", 0), ("pending", 0), ("pending", 3), ("delivered", 1)]:
        WebhookDelivery.objects.create(
            webhook=hook, event_type="output.decided", payload={}, status=status,
            attempt_count=attempts,
        )  # fmt: skip
    scraped = scrape()
    assert value(scraped, "gatehouse_webhook_deliveries_pending", attempted="false") == 2
    assert value(scraped, "gatehouse_webhook_deliveries_pending", attempted="true") == 1


# ---------------------------------------------------------------------------- a failing database


def test_a_failing_database_leaves_its_metrics_out_and_the_scrape_answers(caplog):
    with mock.patch.object(prometheus, "_queue", side_effect=OperationalError("secret row 42")):
        response = Client().get("/metrics")
    assert response.status_code == 200
    scraped = samples(response.content.decode())
    assert value(scraped, "gatehouse_metrics_database_up") == 0
    assert not any(name.startswith("gatehouse_review_queue") for name, _ in scraped)
    assert "gatehouse_gate_decisions_total" in response.content.decode()
    assert "secret row 42" not in caplog.text
    assert "OperationalError" in caplog.text


def test_a_slow_database_times_out_within_the_setting(requires_postgres, settings):
    settings.METRICS_DB_TIMEOUT_SECONDS = 0.2

    def slow(now):
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_sleep(3)")
        return []

    with mock.patch.object(prometheus, "_queue", side_effect=slow):
        response = Client().get("/metrics")
    assert response.status_code == 200
    assert value(samples(response.content.decode()), "gatehouse_metrics_database_up") == 0
    assert value(samples(response.content.decode()), "gatehouse_metrics_database_seconds") < 2


# ---------------------------------------------------------------------------- the dashboard


def test_the_grafana_dashboard_uses_only_exported_metrics_and_shows_them_all(gateway_api):
    TaskTypeFactory(name="grafana")
    gateway_api.post("/api/v1/outputs/", SubmissionFactory(task_type="grafana"), format="json")
    end = timezone.now()
    CycleRun.objects.create(
        kind="alerts", status="succeeded", window_start=end - timedelta(minutes=5),
        window_end=end, started_at=end, finished_at=end,
    )  # fmt: skip
    text = Client().get("/metrics").content.decode()
    families = {f.name for f in text_string_to_metric_families(text)}
    families = {name for name in families if name.startswith("gatehouse_")}
    sample_names = {name for name, _ in samples(text)}

    dashboard = json.loads(GRAFANA.read_text())
    exprs = [target["expr"] for panel in dashboard["panels"] for target in panel.get("targets", [])]
    used = {name for expr in exprs for name in re.findall(r"\bgatehouse_[a-z_]+", expr)}
    assert used, "the dashboard queries no metric"
    assert used <= sample_names, used - sample_names
    # Every family has a panel: a histogram by its _bucket or _count, a counter by _total.
    shown = {re.sub(r"_(bucket|count|sum|total)$", "", name) for name in used}
    families = {re.sub(r"_total$", "", name) for name in families}
    assert families <= shown, families - shown


# ---------------------------------------------------------------------------- reading answers


class _Item(BaseModel):
    id: int
    task_type: str
    decision: str


class _Batch(BaseModel):
    outputs: list[_Item]


class _Answer(RootModel[_Batch | _Item]):
    pass


@pytest.mark.parametrize(
    "data",
    [
        _Batch(outputs=[_Item(id=1, task_type="a", decision="approved")] * 2),
        _Answer(_Batch(outputs=[_Item(id=1, task_type="a", decision="approved")] * 2)),
        {"outputs": [{"id": 1, "task_type": "a", "decision": "approved"}] * 2},
    ],
    ids=["model", "root model", "dict"],
)
def test_a_batch_answer_is_read_in_any_of_its_shapes(data):
    response = HttpResponse(status=201)
    response.data = data
    assert answered_decisions(response) == [("a", "approved")] * 2


def test_a_single_answer_from_its_json_and_a_refusal_has_none():
    single = HttpResponse(json.dumps({"task_type": "b", "decision": "warning"}), status=200)
    assert answered_decisions(single) == [("b", "warning")]
    refused = HttpResponse(json.dumps({"task_type": "b", "decision": "warning"}), status=409)
    assert answered_decisions(refused) == []
    assert answered_decisions(HttpResponse(b"not json", status=201)) == []


# ---------------------------------------------------------------------------- settings


@pytest.mark.parametrize(
    ("variable", "value", "says"),
    [
        ("METRICS_TOKEN", "too-short", "at least 16 characters"),
        ("METRICS_ALLOWED_NETWORKS", "10.0.0.0/8,10.0.0.1/8", "'10.0.0.1/8' is not a network"),
        ("METRICS_DB_TIMEOUT_SECONDS", "0", "between 0.1 and 30"),
    ],
)
def test_a_bad_metrics_setting_stops_the_start(variable, value, says):
    env = {k: v for k, v in os.environ.items() if not k.startswith("METRICS_")}
    done = subprocess.run(
        [sys.executable, "-c", "import dashboard.settings.base"],
        cwd=BASE_DIR, env={**env, variable: value}, capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode != 0
    assert says in done.stderr


def test_a_token_closes_the_loopback_default_and_networks_are_parsed():
    env = {k: v for k, v in os.environ.items() if not k.startswith("METRICS_")}
    code = "import dashboard.settings.base as s; print(s.METRICS_ALLOWED_NETWORKS)"

    def run(**extra) -> str:
        done = subprocess.run(
            [sys.executable, "-c", code], cwd=BASE_DIR, env={**env, **extra},
            capture_output=True, text=True, check=True,
        )  # fmt: skip
        return done.stdout.strip()

    assert run() == "(IPv4Network('127.0.0.0/8'), IPv6Network('::1/128'))"
    assert run(METRICS_TOKEN="t" * 16) == "()"
    assert run(METRICS_ALLOWED_NETWORKS="") == run()  # empty, as compose passes it: unset
    assert run(METRICS_ALLOWED_NETWORKS=" 10.0.0.0/8 ,") == "(IPv4Network('10.0.0.0/8'),)"


def test_a_compact_batch_answer_is_counted_too(gateway_api):
    TaskTypeFactory(name="compact", reviewed_count=0, double_review_rate=0.0)  # all held
    before = scrape()
    batch = {"outputs": [SubmissionFactory(task_type="compact") for _ in range(3)]}
    response = gateway_api.post("/api/v1/outputs/batch/?response=compact", batch, format="json")
    assert response.status_code == 201, response.content
    labels = {"task_type": "compact", "decision": "pending_review"}
    name = "gatehouse_gate_decisions_total"
    grew = value(scrape(), name, **labels) - value(before, name, **labels)
    assert grew == Output.objects.filter(decision="pending_review").count() == 3
