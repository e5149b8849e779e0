"""The overview page's content under a filter: figures and rows from the metrics (which read
the rollups), the open alerts and the latest warnings. Only the alerts and warnings read
tables other than the rollups, each a short, indexed, limited query."""

from __future__ import annotations

from collections import Counter
from datetime import timedelta

from django.contrib.auth.models import AbstractUser

from dashboard import charts, selectors
from dashboard.filters import DashboardFilter
from dashboard.metrics import metric_rows
from dashboard.pages.alerts import page_link
from gating.models import Output, TaskType
from gating.roles import WATCH_LEARNING
from gating.scoring import Decision
from gating.selectors import outputs_visible_to
from learning.models import Alert

RECENT_WARNINGS = 20
OPEN_ALERTS = 10
# Snapshots are taken every five minutes: the latest lies within this of the range's end.
_LATEST_SNAPSHOT = timedelta(minutes=15)


def overview(
    dashboard_filter: DashboardFilter, *, user: AbstractUser, task_types: list[TaskType]
) -> dict:
    f = dashboard_filter
    by_decision: Counter[str] = Counter()
    by_status: Counter[str] = Counter()
    for row in metric_rows("outputs-by-decision", f):
        by_decision[row["decision"]] += row["count"]
        by_status[row["status"]] += row["count"]
    total = sum(by_decision.values())
    thresholds = _thresholds_of_one(f, task_types)
    histogram = charts.score_histogram(
        metric_rows("score-histogram", f),
        review_threshold=thresholds[0],
        approve_threshold=thresholds[1],
    )
    return {
        "total": total,
        "by_decision": [(d.value, by_decision[d.value]) for d in Decision],
        "by_status": sorted(by_status.items()),
        "held_share": by_decision[Decision.PENDING_REVIEW] / total if total else None,
        "audit_estimates": metric_rows("audit-estimates", f),
        "queue": _queue_now(f),
        "score_histogram": charts.figure_data(histogram),
        "alerts": _open_alerts(user, task_types),
        "recent_warnings": _recent_warnings(f, user),
    }


def _open_alerts(user: AbstractUser, task_types: list[TaskType]) -> list[tuple[Alert, str]] | None:
    """The latest open or acknowledged alerts, each with the page that shows what raised
    it, for those who may open the alerts and those pages; None for anyone else, who could
    not act on them."""
    if not user.has_perm(WATCH_LEARNING):
        return None
    names = [t.name for t in task_types]
    rows = (
        Alert.objects.filter(state__in=[Alert.State.OPEN, Alert.State.ACKNOWLEDGED])
        .select_related("acknowledged_by")
        .order_by("-first_seen", "-id")[:OPEN_ALERTS]
    )
    return [(alert, page_link(alert, names)) for alert in rows]


def _thresholds_of_one(f: DashboardFilter, task_types: list[TaskType]) -> tuple:
    """The thresholds in force, drawn only when the range shows one task type's outputs."""
    if len(f.task_types) != 1:
        return None, None
    (chosen,) = [t for t in task_types if t.name == f.task_types[0]]
    return chosen.review_threshold, chosen.approve_threshold


def _queue_now(f: DashboardFilter) -> dict:
    window = {
        "since": f.until - _LATEST_SNAPSHOT,
        "until": f.until,
        "task_types": f.task_types,
        "models": f.models,
    }
    sizes = selectors.queue_size_series(**window)
    oldest = selectors.queue_oldest_series(**window)
    return {
        "open_items": sizes[-1]["open_items"] if sizes else None,
        "oldest_seconds": oldest[-1]["oldest_seconds"] if oldest else None,
        "at": sizes[-1]["at"] if sizes else None,
    }


def _recent_warnings(f: DashboardFilter, user: AbstractUser) -> list[Output]:
    warnings = outputs_visible_to(user).filter(
        decision=Decision.WARNING, created_at__gte=f.since, created_at__lt=f.until
    )
    if f.task_types:
        warnings = warnings.filter(task_type__name__in=f.task_types)
    if f.models:
        warnings = warnings.filter(model__in=f.models)
    return list(warnings.order_by("-id")[:RECENT_WARNINGS])
