"""What every monitoring page does around its content: the permission, the filter bar read
from the query string (a bad parameter is a 400 that names it, the page drawn with the
default filter), and each chart's CSV link for those who may download rows."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import fields
from urllib.parse import urlencode

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from dashboard import charts, selectors
from dashboard.filters import DashboardFilter, FilterInvalid, filter_parse, filter_query
from dashboard.metrics import METRICS, metric_rows
from gating.roles import WATCH_LEARNING, page_for

DOWNLOAD_PERMISSION = WATCH_LEARNING


def monitoring_page(permission: str):
    """``page_for``, for a page that only reads."""
    page = page_for(permission)

    def decorator(view):
        return page(require_GET(view))

    return decorator


def page_render(
    request: HttpRequest,
    template: str,
    compose: Callable[[DashboardFilter], dict],
) -> HttpResponse:
    """Read the filter bar, compose the page's content under the filter and render it."""
    bar = filter_bar(request.GET)
    dashboard_filter = bar["dashboard_filter"]
    context = {
        **bar,
        "csv": csv_links(dashboard_filter) if request.user.has_perm(DOWNLOAD_PERMISSION) else {},
        **compose(dashboard_filter),
    }
    return render(request, template, context, status=400 if bar["filter_error"] else 200)


def filter_bar(query) -> dict:
    """The filter bar read from ``query``, as templates/dashboard/_filter_bar.html takes it:
    the filter (the default one when a parameter is bad), the error naming that parameter,
    and the task types and models it offers."""
    known = selectors.filter_choices()
    try:
        dashboard_filter, error = filter_parse(query, **known), None
    except FilterInvalid as exc:
        dashboard_filter, error = filter_parse({}, **known), exc
    return {
        "dashboard_filter": dashboard_filter,
        "filter_error": error,
        "task_type_names": known["task_types"],
        "model_names": known["models"],
    }


def csv_links(dashboard_filter: DashboardFilter) -> dict[str, str]:
    """Each metric's CSV under the filter, by the metric's name with underscores for
    hyphens (so that templates can name it)."""
    query = filter_query(dashboard_filter)
    return {
        name.replace("-", "_"): f"/api/v1/metrics/{name}/?{urlencode({'format': 'csv'})}&{query}"
        for name in METRICS
    }


def chart(
    name: str,
    builder: Callable,
    dashboard_filter: DashboardFilter,
    *,
    row_type: type | None = None,
    **options,
) -> dict | None:
    """A metric's rows drawn by its chart builder, as the chart partial takes it. With
    ``row_type`` (the builder's row dataclass), keys the chart does not draw, which the
    metric's rows carry for the CSV, are left out."""
    rows = metric_rows(name, dashboard_filter)
    if row_type is not None:
        keys = [field.name for field in fields(row_type)]
        rows = [{key: row[key] for key in keys} for row in rows]
    return charts.figure_data(builder(rows, **options))
