"""The learning cycles' states for Prometheus, read from the database at each scrape
(gating.prometheus.DatabaseCollector runs it; docs/integrations.md lists the metrics)."""

from __future__ import annotations

from datetime import timedelta

from django.db.models import Count
from prometheus_client.core import GaugeMetricFamily

from learning.models import CycleRun

# The runs counted are those whose window ended this recently.
CYCLE_RUNS_WINDOW = timedelta(hours=24)


def cycle_states(now) -> list[GaugeMetricFamily]:
    kinds = CycleRun.Kind.values
    runs = GaugeMetricFamily(
        "gatehouse_learning_cycle_runs",
        "Learning cycle runs whose window ended in the last 24 hours, by kind and status.",
        labels=["kind", "status"],
    )
    counted = {
        (row["kind"], row["status"]): row["n"]
        for row in CycleRun.objects.filter(kind__in=kinds, window_end__gte=now - CYCLE_RUNS_WINDOW)
        .values("kind", "status")
        .annotate(n=Count("id"))
        .order_by()
    }
    for kind in kinds:
        for status in CycleRun.Status.values:
            runs.add_metric([kind, status], counted.get((kind, status), 0))

    success = GaugeMetricFamily(
        "gatehouse_learning_cycle_last_success",
        "1 when the latest finished run of the cycle succeeded, 0 when it failed.",
        labels=["kind"],
    )
    duration = GaugeMetricFamily(
        "gatehouse_learning_cycle_last_duration_seconds",
        "How long the latest finished run of the cycle took.",
        labels=["kind"],
    )
    finished = GaugeMetricFamily(
        "gatehouse_learning_cycle_last_finished_timestamp_seconds",
        "When the latest finished run of the cycle finished (Unix time).",
        labels=["kind"],
    )
    done = [CycleRun.Status.SUCCEEDED, CycleRun.Status.FAILED]
    for kind in kinds:
        # The newest finished run, through the (kind, -window_end) index.
        last = (
            CycleRun.objects.filter(kind=kind, status__in=done, finished_at__isnull=False)
            .order_by("-window_end")
            .values("status", "started_at", "finished_at")
            .first()
        )
        if last is None:
            continue
        success.add_metric([kind], 1 if last["status"] == CycleRun.Status.SUCCEEDED else 0)
        seconds = (last["finished_at"] - last["started_at"]).total_seconds()
        duration.add_metric([kind], max(seconds, 0.0))
        finished.add_metric([kind], last["finished_at"].timestamp())
    return [runs, success, duration, finished]
