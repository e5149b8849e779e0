"""Prometheus metrics at /metrics: what the gate did, counted in the processes that did it,
and the state of the queue, the learning cycles, the outbox and the webhooks, read from the
database when Prometheus scrapes.

Two kinds of numbers, each where it is correct under gunicorn's several workers:
- The ingest latency and the decisions answered are counted by the worker that served the
  request (gating.middleware.IngestMetricsMiddleware). With PROMETHEUS_MULTIPROC_DIR set
  (dashboard/gunicorn.conf.py sets it), each worker keeps its counts in a file there and a
  scrape, whichever worker answers it, sums every file, those of exited workers included,
  so the counters never go back while the server runs. Counting decisions from the outputs
  table instead would aggregate millions of rows at every scrape.
- The queue, cycles, outbox and webhooks are states, not events: one set of indexed queries
  at scrape time gives the same answer whichever worker runs them. A database that fails or
  is slow (METRICS_DB_TIMEOUT_SECONDS) leaves them out and sets gatehouse_metrics_database_up
  to 0; the scrape itself still succeeds.

Access: a bearer METRICS_TOKEN, or a client address in METRICS_ALLOWED_NETWORKS (loopback
only when neither is set). Anyone else gets 401 (a token is configured) or 404, never data.
"""

from __future__ import annotations

import hmac
import ipaddress
import logging
import os
import time
from collections import Counter as Tally
from collections.abc import Callable, Iterable
from datetime import datetime

from django.conf import settings
from django.db import DatabaseError, connection, transaction
from django.db.models import Count, Min, Q
from django.http import HttpResponse, HttpResponseNotFound
from django.utils import timezone
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    Counter,
    Histogram,
    disable_created_metrics,
    generate_latest,
    multiprocess,
)
from prometheus_client.core import GaugeMetricFamily

from gating.ingest_answers import answered_decisions
from gating.models import OutboxMessage, ReviewItem, WebhookDelivery

logger = logging.getLogger(__name__)

# ---------------------------------------------------------------------------- counted per request

# No *_created series: multi-process mode has none, and single-process mode should export
# what gunicorn does.
disable_created_metrics()

INGEST_SECONDS = Histogram(
    "gatehouse_ingest_request_duration_seconds",
    "Time to answer an ingest request (POST /api/v1/outputs/ or its /batch/), by route and "
    "status class.",
    ["route", "status"],
    # The gate answers a single output in milliseconds and a batch of 1,000 in seconds.
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0),
)
DECISIONS = Counter(
    "gatehouse_gate_decisions",
    "Outputs the gate answered, by task type and decision (a replayed external_id is "
    "answered, and counted, again).",
    ["task_type", "decision"],
)


def ingest_observe(*, route: str, response, seconds: float) -> None:
    """Count one ingest request: its latency, and each decision its answer carries."""
    INGEST_SECONDS.labels(route=route, status=f"{response.status_code // 100}xx").observe(seconds)
    for (task_type, decision), n in Tally(answered_decisions(response)).items():
        DECISIONS.labels(task_type=task_type, decision=decision).inc(n)


# ---------------------------------------------------------------------------- read at scrape time

StateReader = Callable[[datetime], list[GaugeMetricFamily]]


class DatabaseCollector:
    """The states Prometheus should see, read from the database at each scrape by
    ``readers``: gating's own (``gating_states``) and those of the apps above it, which the
    project's /metrics view passes in (gating never imports them)."""

    def __init__(self, readers: Iterable[StateReader]):
        self.readers = tuple(readers)

    def collect(self):
        started = time.perf_counter()
        try:
            families, read = _read_database(timezone.now(), self.readers), True
        except DatabaseError as exc:
            # The class only: a database error's text can quote the query's values.
            logger.warning("metrics: the database read failed (%s)", type(exc).__name__)
            families, read = [], False
        yield from families
        up = GaugeMetricFamily(
            "gatehouse_metrics_database_up",
            "1 when this scrape read the database; 0 when it failed or timed out, and the "
            "queue, cycle, outbox and webhook metrics are missing.",
        )
        up.add_metric([], 1 if read else 0)
        yield up
        spent = GaugeMetricFamily(
            "gatehouse_metrics_database_seconds", "Time this scrape spent reading the database."
        )
        spent.add_metric([], time.perf_counter() - started)
        yield spent


def _read_database(now, readers: tuple[StateReader, ...]) -> list[GaugeMetricFamily]:
    with transaction.atomic():
        if connection.vendor == "postgresql":
            # For this transaction only: a slow database fails the read, not the scrape.
            timeout_ms = int(settings.METRICS_DB_TIMEOUT_SECONDS * 1000)
            with connection.cursor() as cursor:
                cursor.execute(f"SET LOCAL statement_timeout = {timeout_ms}")
        return [family for read in readers for family in read(now)]


def gating_states(now) -> list[GaugeMetricFamily]:
    """The queue, the outbox and the webhooks."""
    return [*_queue(now), *_outbox(now), *_webhooks()]


def _queue(now) -> list[GaugeMetricFamily]:
    # One scan of the open items' partial index (is_audit, turn_at, id).
    rows = {
        row["is_audit"]: row
        for row in ReviewItem.objects.filter(state=ReviewItem.State.OPEN)
        .values("is_audit")
        .annotate(n=Count("id"), oldest=Min("turn_at"))
        .order_by()
    }
    items = GaugeMetricFamily(
        "gatehouse_review_queue_items",
        "Open review items: held outputs (queue=held) and audits of delivered ones (queue=audit).",
        labels=["queue"],
    )
    wait = GaugeMetricFamily(
        "gatehouse_review_queue_oldest_wait_seconds",
        "How long the open item first in line has waited since its output entered the queue; "
        "0 when none is open.",
        labels=["queue"],
    )
    for queue, is_audit in (("held", False), ("audit", True)):
        row = rows.get(is_audit, {"n": 0, "oldest": None})
        items.add_metric([queue], row["n"])
        wait.add_metric([queue], _age(now, row["oldest"]))
    return [items, wait]


def _outbox(now) -> list[GaugeMetricFamily]:
    # Both through the partial index of unpublished rows; the lowest id is the oldest.
    waiting = OutboxMessage.objects.filter(published_at__isnull=True)
    count = GaugeMetricFamily(
        "gatehouse_outbox_unpublished_messages",
        "Tasks stored by requests that the outbox relay has not yet published to the broker.",
    )
    count.add_metric([], waiting.count())
    lag = GaugeMetricFamily(
        "gatehouse_outbox_oldest_unpublished_age_seconds",
        "Age of the oldest task still waiting for the outbox relay; 0 when none waits.",
    )
    oldest = waiting.order_by("id").values_list("created_at", flat=True).first()
    lag.add_metric([], _age(now, oldest))
    return [count, lag]


def _webhooks() -> list[GaugeMetricFamily]:
    # Pending deliveries only, through their partial index: failed-for-good ones have no
    # index to count them by, and a delivery fails for good only after WEBHOOK_RETRY_HOURS
    # of retries, which this gauge shows all along.
    pending = WebhookDelivery.objects.filter(status=WebhookDelivery.Status.PENDING).aggregate(
        total=Count("id"), retrying=Count("id", filter=Q(attempt_count__gt=0))
    )
    waiting = GaugeMetricFamily(
        "gatehouse_webhook_deliveries_pending",
        "Webhook deliveries not yet made: never attempted (attempted=false), or attempted and "
        "failed, waiting to retry (attempted=true; a first attempt under way counts here too).",
        labels=["attempted"],
    )
    waiting.add_metric(["false"], pending["total"] - pending["retrying"])
    waiting.add_metric(["true"], pending["retrying"])
    return [waiting]


def _age(now, since) -> float:
    return max((now - since).total_seconds(), 0.0) if since else 0.0


# ---------------------------------------------------------------------------- the endpoint


def scrape_registry(readers: Iterable[StateReader]) -> CollectorRegistry:
    """What one scrape exports: every worker's counts (or this process's, without
    PROMETHEUS_MULTIPROC_DIR, as under runserver) and the database's states."""
    registry = CollectorRegistry()
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        multiprocess.MultiProcessCollector(registry)
    else:
        registry.register(_ThisProcess())
    registry.register(DatabaseCollector(readers))
    return registry


class _ThisProcess:
    def collect(self):
        return REGISTRY.collect()


def metrics_access_allowed(request) -> bool:
    token = settings.METRICS_TOKEN
    if token:
        scheme, _, presented = request.headers.get("Authorization", "").partition(" ")
        if scheme.lower() == "bearer" and hmac.compare_digest(
            presented.strip().encode(), token.encode()
        ):
            return True
    return _client_in(settings.METRICS_ALLOWED_NETWORKS, request.META.get("REMOTE_ADDR", ""))


def _client_in(networks, address: str) -> bool:
    # REMOTE_ADDR is the peer that connected: behind a proxy, the proxy. Forwarded headers
    # are the client's to write, so they never grant access.
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    if ip.version == 6 and ip.ipv4_mapped:
        ip = ip.ipv4_mapped
    return any(ip in network for network in networks)


def metrics_answer(request, readers: Iterable[StateReader]) -> HttpResponse:
    """The /metrics answer (the view is the project's, dashboard.views.metrics): the
    scrape to whom may read it, 401 or 404 to anyone else."""
    if not metrics_access_allowed(request):
        if settings.METRICS_TOKEN:
            response = HttpResponse(
                "A bearer token is required.\n", status=401, content_type="text/plain"
            )
            response["WWW-Authenticate"] = 'Bearer realm="metrics"'
            return response
        return HttpResponseNotFound("Not found.\n", content_type="text/plain")
    response = HttpResponse(
        generate_latest(scrape_registry(readers)), content_type=CONTENT_TYPE_LATEST
    )
    response["Cache-Control"] = "no-store"
    return response
