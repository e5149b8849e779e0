"""The outputs page: search and filter outputs, newest first, a page at a time; and one
output's whole history, from the gate's result to its webhook deliveries.

Everything from an output (its texts, validators' details, metadata, reviewers' notes) is
untrusted text: the templates show it through autoescaping only.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlencode

from django.db.models import Q, QuerySet
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from dashboard.filters import (
    DashboardFilter,
    FilterInvalid,
    filter_query,
    parameter_text,
    parameter_whole,
)
from dashboard.pages.monitoring import filter_bar
from gating.formatting import pretty_json
from gating.models import AuditEvent, Output, Review, ReviewItem, WebhookDelivery
from gating.roles import page_for
from gating.scoring import Decision
from gating.selectors import outputs_matching, outputs_visible_to, score_band_problem
from gating.views import comment_posted, comments_context
from learning.models import Dataset

PAGE_SIZE = 50
_TEXT_MAX = 200
_ID_MATCHES = ("exact", "prefix")


@dataclass(frozen=True)
class OutputSearch:
    """The outputs page's own parameters, on top of the filter bar's range, task types and
    models. Empty strings and None mean "any". Scores are from score_min (included) to below
    score_max, as in the queue API."""

    external_id: str = ""
    id_match: str = "exact"
    text: str = ""
    decision: str = ""
    status: str = ""
    score_min: float | None = None
    score_max: float | None = None
    before: int | None = None  # the keyset cursor: outputs with a smaller id

    def query(self) -> list[tuple[str, str]]:
        """These parameters (but the cursor) as query string pairs, for the next page's link."""
        pairs = [
            ("external_id", self.external_id),
            ("id_match", self.id_match if self.external_id else ""),
            ("text", self.text),
            ("decision", self.decision),
            ("status", self.status),
            ("score_min", "" if self.score_min is None else f"{self.score_min:g}"),
            ("score_max", "" if self.score_max is None else f"{self.score_max:g}"),
        ]
        return [(name, value) for name, value in pairs if value]


def search_parse(query) -> OutputSearch:
    """Read the page's parameters; raises FilterInvalid naming the first it cannot read."""
    text = parameter_text(query, "text")
    if len(text) > _TEXT_MAX:
        raise FilterInvalid("text", f"At most {_TEXT_MAX} characters.")
    external_id = parameter_text(query, "external_id")
    id_match = parameter_text(query, "id_match") or "exact"
    if id_match not in _ID_MATCHES:
        raise FilterInvalid("id_match", f"Use one of {', '.join(_ID_MATCHES)}.")
    decision = parameter_text(query, "decision")
    if decision and decision not in {d.value for d in Decision}:
        raise FilterInvalid("decision", f"Use one of {', '.join(d.value for d in Decision)}.")
    status = parameter_text(query, "status")
    if status and status not in Output.Status.values:
        raise FilterInvalid("status", f"Use one of {', '.join(Output.Status.values)}.")
    score_min, score_max = _score(query, "score_min"), _score(query, "score_max")
    if problem := score_band_problem(score_min, score_max):
        raise FilterInvalid("score_max", problem)
    return OutputSearch(
        external_id=external_id,
        id_match=id_match,
        text=text,
        decision=decision,
        status=status,
        score_min=score_min,
        score_max=score_max,
        before=parameter_whole(query, "before", "Must be an output id."),
    )


def _score(query, name: str) -> float | None:
    raw = parameter_text(query, name)
    if not raw:
        return None
    try:
        value = float(raw)
    except ValueError:
        raise FilterInvalid(name, "Must be a number from 0 to 10.") from None
    if not 0.0 <= value <= 10.0:
        raise FilterInvalid(name, "Must be a number from 0 to 10.")
    return value


def outputs_search(
    outputs: QuerySet[Output], dashboard_filter: DashboardFilter, search: OutputSearch
) -> QuerySet[Output]:
    """The outputs that match, newest (largest id) first, before the cursor.

    Cost: every search is held to the filter's time range (the created_at indexes) and is
    read a page at a time by id. The external id is matched without an index of its own
    (the unique one leads with the gateway), and the text is a case-insensitive contains,
    which no B-tree can serve: both scan the range's outputs until a page is found, the
    text search reading each output's text. A trigram index (pg_trgm) would serve the
    contains, but it would cost every ingest a GIN update of the longest column in the
    database for a page leads open now and then, so the range and the page size bound it
    instead.
    """
    f = dashboard_filter
    found = outputs_matching(
        outputs,
        created_after=f.since,
        created_before=f.until,
        task_types=f.task_types,
        models=f.models,
        external_id=search.external_id,
        external_id_prefix=search.id_match == "prefix",
        text=search.text,
        decision=search.decision,
        status=search.status,
        score_min=search.score_min,
        score_max=search.score_max,
        before_id=search.before,
    )
    return found.order_by("-id")


@require_GET
@page_for("gating.view_all_outputs")
def outputs(request):
    bar = filter_bar(request.GET)
    dashboard_filter, error = bar["dashboard_filter"], bar["filter_error"]
    try:
        search = search_parse(request.GET)
    except FilterInvalid as exc:
        search, error = OutputSearch(), error or exc
    rows = list(
        outputs_search(outputs_visible_to(request.user), dashboard_filter, search)[: PAGE_SIZE + 1]
    )
    more = len(rows) > PAGE_SIZE
    rows = rows[:PAGE_SIZE]
    next_query = None
    if more:
        pairs = [*search.query(), ("before", str(rows[-1].pk))]
        next_query = filter_query(dashboard_filter) + "&" + urlencode(pairs)
    context = {
        "outputs": rows,
        "search": search,
        "next_query": next_query,
        "first_query": filter_query(dashboard_filter) + "&" + urlencode(search.query()),
        **bar,
        "filter_error": error,
        "decisions": [d.value for d in Decision],
        "statuses": Output.Status.choices,
        "page_size": PAGE_SIZE,
    }
    return render(request, "dashboard/outputs.html", context, status=400 if error else 200)


@require_GET
@page_for("gating.view_all_outputs")
def output(request, pk: int):
    found = get_object_or_404(outputs_visible_to(request.user).select_related("source"), pk=pk)
    items = list(
        ReviewItem.objects.filter(output=found)
        .select_related("claimed_by")
        .order_by("queued_at", "id")
    )
    reviews = list(
        Review.objects.filter(output=found)
        .select_related("reviewer", "item", "rubric")
        .order_by("decided_at", "id")
    )
    # Decisions are recorded against the review, claims against the slot, relief and bulk
    # decisions against the output: each read through the (object_type, object_id) index.
    about = (
        Q(object_type="gating.output", object_id=str(found.pk))
        | Q(object_type="gating.reviewitem", object_id__in=[str(i.pk) for i in items])
        | Q(object_type="gating.review", object_id__in=[str(r.pk) for r in reviews])
    )
    events = list(AuditEvent.objects.filter(about).select_related("actor").order_by("at", "id"))
    # Only the output's own gateway's decision webhooks can carry it, and only from its
    # creation on: the JSON match reads those deliveries alone.
    deliveries = list(
        WebhookDelivery.objects.filter(
            webhook__owner_id=found.source_id,
            created_at__gte=found.created_at,
            payload__output__id=found.pk,
        )
        .select_related("webhook")
        .prefetch_related("attempts")
        .order_by("created_at", "id")
    )
    context = {
        "output": found,
        "metadata": pretty_json(found.metadata) if found.metadata else "",
        "evidence": pretty_json(found.evidence) if found.evidence is not None else "",
        "provenance": pretty_json(found.provenance) if found.provenance is not None else "",
        "items": items,
        "reviews": reviews,
        "events": [(e, pretty_json(e.before), pretty_json(e.after)) for e in events],
        "deliveries": deliveries,
        **comments_context(request, found, action=reverse("dashboard-output-comment", args=[pk])),
        # For the "Add to dataset" form, shown to those who may change datasets.
        "datasets": (
            list(Dataset.objects.order_by("name").values_list("pk", "name"))
            if request.user.has_perm("learning.change_dataset")
            else []
        ),
    }
    return render(request, "dashboard/output.html", context)


@require_POST
@page_for("gating.add_comment")
def output_comment(request, pk: int):
    """A comment from the output's page, which it goes back to."""
    found = get_object_or_404(outputs_visible_to(request.user), pk=pk)
    action = reverse("dashboard-output-comment", args=[pk])
    return comment_posted(
        request, found, action=action, page=reverse("dashboard-output", args=[pk])
    )
