"""The queue over time: its size, how long pending items have waited, the oldest of them,
how fast reviewers decide, and how long a new item can expect to wait."""

from __future__ import annotations

from datetime import timedelta

from django.contrib.auth.models import AbstractUser

from dashboard import charts, selectors
from dashboard.filters import DashboardFilter
from dashboard.pages.monitoring import chart, monitoring_page, page_render
from gating.models import ReviewItem
from gating.selectors import queue_open_items

OLDEST_ITEMS = 10
# The pace a projected wait divides by: the decisions of the range's last day.
PACE_WINDOW = timedelta(hours=24)


@monitoring_page("gating.view_all_outputs")
def queue_charts(request):
    return page_render(
        request, "dashboard/queue.html", lambda f: queue_content(f, user=request.user)
    )


def queue_content(f: DashboardFilter, *, user: AbstractUser) -> dict:
    sizes = selectors.queue_size_series(**_window(f))
    open_items = sizes[-1]["open_items"] if sizes else None
    decided = sum(
        row["decisions"]
        for row in selectors.decisions_per_reviewer_per_day(
            **_window(f) | {"since": f.until - PACE_WINDOW}
        )
    )
    return {
        "queue_size": chart("queue-size", charts.queue_size_chart, f),
        "queue_age": chart("queue-age", charts.queue_age_chart, f),
        "reviewer_decisions": chart("reviewer-decisions", charts.reviewer_decisions_chart, f),
        "reviewer_times": chart(
            "reviewer-times", charts.reviewer_time_chart, f, row_type=charts.ReviewerTime
        ),
        "open_items": open_items,
        "open_at": sizes[-1]["at"] if sizes else None,
        "decisions_last_day": decided,
        "pace_per_hour": decided / (PACE_WINDOW.total_seconds() / 3600),
        "projected_wait_seconds": projected_wait(open_items, decided, PACE_WINDOW),
        "oldest_items": _oldest_items(f),
        "can_review": user.has_perm("gating.review_items"),
        # An adjudication opens only for those who may settle it.
        "can_adjudicate": user.has_perm("gating.adjudicate_items"),
    }


def projected_wait(open_items: int | None, decisions: int, window: timedelta) -> float | None:
    """How long the open items take at the pace of ``decisions`` per ``window``, in
    seconds: open items ÷ decisions per hour. None when nothing was decided (no pace) or
    no snapshot says what is open."""
    if open_items is None or not decisions:
        return None
    per_hour = decisions / (window.total_seconds() / 3600)
    return open_items / per_hour * 3600


def _oldest_items(f: DashboardFilter) -> list[ReviewItem]:
    # In turn (ReviewItem.turn_at), which the queue's partial index on open items serves,
    # whatever its size.
    items = queue_open_items().select_related("task_type", "output")
    if f.task_types:
        items = items.filter(task_type__name__in=f.task_types)
    if f.models:
        items = items.filter(model__in=f.models)
    return list(items.order_by("turn_at", "id")[:OLDEST_ITEMS])


def _window(f: DashboardFilter) -> dict:
    return {"since": f.since, "until": f.until, "task_types": f.task_types, "models": f.models}
