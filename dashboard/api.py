"""Every dashboard chart's numbers through the API: /api/v1/metrics/ lists the charts, and
/api/v1/metrics/<name>/ gives one chart's rows under the filter bar's parameters, as JSON or,
with ``?format=csv`` (or ``Accept: text/csv``), as a CSV download.

The rows are dashboard.metrics' (metric_rows), the one query layer behind a chart's page,
its JSON and its CSV; the registry is read per request and when the schema is generated, so
a metric added there is served and published without a change here.
"""

from __future__ import annotations

import csv
import io
from datetime import UTC, datetime
from typing import Any

import pydantic_core
from django.urls import reverse
from drf_spectacular.openapi import AutoSchema
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from pydantic import Field, RootModel
from rest_framework.exceptions import NotAcceptable, NotFound, ValidationError
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.permissions import IsAuthenticated
from rest_framework.renderers import BaseRenderer
from rest_framework.response import Response
from rest_framework.views import APIView

from dashboard import selectors
from dashboard.filters import (
    CUSTOM,
    FIRST_YEAR,
    LAST_YEAR,
    PRESETS,
    TIME_PATTERN,
    DashboardFilter,
    filter_parse,
)
from dashboard.metrics import METRICS, metric_rows
from gating.api.filters import IDENTIFIER_SCHEMA
from gating.api.permissions import require_perm
from gating.api.responses import ModelJSONRenderer, ResponseModel
from gating.api.strict import refuse_empty_query_values
from gating.formatting import csv_cell
from gating.roles import WATCH_LEARNING

FILTER_PARAMETERS = ("range", "since", "until", "task_type", "model")
# DRF's own: it picks the renderer.
FORMAT = "format"
UNKNOWN_PARAMETER = (
    "Unknown query parameter: the filters are range, since, until, task_type and model, "
    "and format picks json or csv."
)

# ---------------------------------------------------------------------------- answers


class MetricSummary(ResponseModel):
    name: str
    title: str
    description: str = Field(description="What the chart shows, and its rows' fields.")
    url: str = Field(description="The rows as JSON; takes the filter's query parameters.")
    csv_url: str = Field(description="The same rows as a CSV download.")


class MetricList(RootModel[list[MetricSummary]]):
    """Every chart the dashboard draws, by name."""


class MetricFilter(ResponseModel):
    """The filter the rows are under, as it was read: [since, until) in UTC."""

    since: datetime
    until: datetime
    preset: str | None = Field(description="The range's preset (24h, 7d, …); null if custom.")
    task_types: list[str] = Field(description="Empty: all task types.")
    models: list[str] = Field(description="Empty: all models.")

    @classmethod
    def of(cls, f: DashboardFilter) -> MetricFilter:
        return cls(
            since=f.since,
            until=f.until,
            preset=f.preset,
            task_types=list(f.task_types),
            models=list(f.models),
        )


class MetricResult(ResponseModel):
    """One chart's rows under a filter: what its page draws and its CSV holds."""

    metric: str
    title: str
    filter: MetricFilter
    rows: list[dict[str, Any]] = Field(
        description="The chart's rows; their fields are in the metric's description. "
        "Times are ISO 8601 in UTC, numbers unrounded."
    )


# ---------------------------------------------------------------------------- CSV


def metric_csv(rows: list[dict[str, Any]]) -> str:
    """The rows as CSV: a header line of their fields (in the order first seen), then one
    line per row. Values are written as the JSON answer has them (times in ISO 8601 UTC,
    numbers unrounded), an absent or null value empty, a list or object as its JSON, and
    text that a spreadsheet would run as a formula after a ' (OWASP's CSV injection
    advice): model names come from the gateways, and the file goes to a lead's spreadsheet."""
    plain = pydantic_core.to_jsonable_python(rows)
    header = list(dict.fromkeys(key for row in plain for key in row))
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(header)
    for row in plain:
        writer.writerow([csv_cell(row.get(key)) for key in header])
    return out.getvalue()


class MetricCSVRenderer(BaseRenderer):
    media_type = "text/csv"
    format = "csv"
    charset = "utf-8"

    def render(self, data, accepted_media_type=None, renderer_context=None):
        return metric_csv(data.rows).encode(self.charset)


class MetricNegotiation(DefaultContentNegotiation):
    """DRF's negotiation, except that an unknown ``?format=`` is a 400 naming it (DRF's
    404 would read as an unknown metric), and an Accept header that names nothing we write
    gets JSON rather than a 406 that no client of this API expects."""

    def select_renderer(self, request, renderers, format_suffix=None):
        wanted = request.query_params.get(FORMAT)
        formats = [renderer.format for renderer in renderers]
        if wanted and wanted not in formats:
            raise ValidationError({FORMAT: [f"Unknown format: use {' or '.join(formats)}."]})
        try:
            return super().select_renderer(request, renderers, format_suffix)
        except NotAcceptable:
            return renderers[0], renderers[0].media_type


class _MetricsView(APIView):
    permission_classes = [IsAuthenticated, require_perm(WATCH_LEARNING)]
    content_negotiation_class = MetricNegotiation
    # DRF's OPTIONS answer describes a serializer, and these views have none: a 405.
    metadata_class = None

    def finalize_response(self, request, response, *args, **kwargs):
        # Errors are JSON whatever was asked for: a CSV of an error body would be nonsense.
        if response.status_code >= 400:
            request.accepted_renderer = ModelJSONRenderer()
            request.accepted_media_type = ModelJSONRenderer.media_type
        return super().finalize_response(request, response, *args, **kwargs)


def _refuse_unknown(query, known: tuple[str, ...]) -> None:
    unknown = sorted(set(query) - {*known, FORMAT})
    if unknown:
        raise ValidationError({name: [UNKNOWN_PARAMETER] for name in unknown})


# ---------------------------------------------------------------------------- views


class MetricIndex(_MetricsView):
    renderer_classes = [ModelJSONRenderer]

    @extend_schema(
        summary="The dashboard's charts",
        description="Each chart's name, title, what its rows hold, and where to get them.",
        operation_id="v1_metrics_list",
        responses={200: MetricList},
    )
    def get(self, request):
        _refuse_unknown(request.query_params, ())
        return Response(
            MetricList(
                [
                    MetricSummary(
                        name=name,
                        title=metric.title,
                        description=metric.description,
                        url=_metric_url(request, name),
                        csv_url=_metric_url(request, name) + "?format=csv",
                    )
                    for name, metric in METRICS.items()
                ]
            )
        )


def _metric_url(request, name: str) -> str:
    return request.build_absolute_uri(reverse("api-metric", args=[name]))


class MetricSchema(AutoSchema):
    """The metric names, and what each one's rows hold, from the registry as it is when
    the schema is generated."""

    def get_override_parameters(self):
        name = OpenApiParameter(
            "name",
            OpenApiTypes.STR,
            OpenApiParameter.PATH,
            enum=sorted(METRICS),
            description="The chart: one of GET /api/v1/metrics/'s names.",
        )
        return [name, *super().get_override_parameters()]

    def get_description(self):
        charts = "\n".join(f"- `{name}`: {m.description}" for name, m in METRICS.items())
        return (
            "The rows the chart's page draws, under the filter bar's parameters. "
            "`?format=csv` (or `Accept: text/csv`) gives them as a CSV download: a header "
            "line of the rows' fields, then a line per row. The metrics and their rows:"
            f"\n\n{charts}"
        )


_CHOICES = ", ".join([*PRESETS, CUSTOM])
_YEARS = f"written with a year from {FIRST_YEAR} to {LAST_YEAR}"
# The filter's own rules, as the schema states them: the same definitions check them.
_TIME_SCHEMA = {"type": "string", "format": "date-time", "pattern": TIME_PATTERN}
_IDENTIFIERS_SCHEMA = {"type": "array", "items": IDENTIFIER_SCHEMA}


@extend_schema(
    summary="One chart's rows, as JSON or CSV",
    parameters=[
        OpenApiParameter(
            "range",
            OpenApiTypes.STR,
            enum=[*PRESETS, CUSTOM],
            description=f"A preset ending now ({_CHOICES}); custom reads since and until. "
            "A preset given with since or until is refused (400 naming range). "
            "Default: since and until if given, else 7d.",
        ),
        OpenApiParameter(
            "since",
            _TIME_SCHEMA,
            description=f"ISO 8601; no offset is UTC; {_YEARS}. Default: 7 days before until.",
        ),
        OpenApiParameter(
            "until",
            _TIME_SCHEMA,
            description=f"ISO 8601, later than since (the range is [since, until)); {_YEARS}. "
            "Default: now.",
        ),
        OpenApiParameter(
            "task_type",
            _IDENTIFIERS_SCHEMA,
            explode=True,
            description="Repeat for several; none means all. Each must be known.",
        ),
        OpenApiParameter(
            "model",
            _IDENTIFIERS_SCHEMA,
            explode=True,
            description="Repeat for several; none means all. Each must be one the rollups "
            "have seen.",
        ),
        OpenApiParameter(
            FORMAT,
            OpenApiTypes.STR,
            enum=["json", "csv"],
            description="csv for the CSV download. Default: json.",
        ),
    ],
    responses={
        (200, "application/json"): MetricResult,
        (200, "text/csv"): OpenApiResponse(
            OpenApiTypes.STR,
            description="The rows as CSV, as an attachment named "
            "<name>-<since>-<until>.csv (times as 20250501T093000Z). Text that a "
            "spreadsheet would run as a formula (starting =, +, -, @) starts with a '.",
        ),
    },
)
class MetricDetail(_MetricsView):
    renderer_classes = [ModelJSONRenderer, MetricCSVRenderer]
    schema = MetricSchema()

    def get(self, request, name: str):
        if name not in METRICS:
            raise NotFound(f"No metric {name!r}: GET /api/v1/metrics/ lists them.")
        _refuse_unknown(request.query_params, FILTER_PARAMETERS)
        # As the API's other filters: an empty value is a mistake named, not "absent" (an
        # empty since would silently widen the window to the default).
        refuse_empty_query_values(request.query_params)
        dashboard_filter = filter_parse(request.query_params, **selectors.filter_choices())
        result = MetricResult(
            metric=name,
            title=METRICS[name].title,
            filter=MetricFilter.of(dashboard_filter),
            rows=metric_rows(name, dashboard_filter),
        )
        headers = {}
        if request.accepted_renderer.format == MetricCSVRenderer.format:
            headers["Content-Disposition"] = (
                f'attachment; filename="{_csv_filename(name, dashboard_filter)}"'
            )
        return Response(result, headers=headers)


def _csv_filename(name: str, f: DashboardFilter) -> str:
    return f"{name}-{_compact(f.since)}-{_compact(f.until)}.csv"


def _compact(moment: datetime) -> str:
    # Not strftime: its %Y drops the leading zeros of a year before 1000.
    plain = moment.astimezone(UTC).replace(microsecond=0, tzinfo=None).isoformat()
    return plain.replace("-", "").replace(":", "") + "Z"
