"""The reviewers' pages: the queue, the review page, bulk decisions, and the task types'
rubrics (which admins edit).

Reads go through the selectors and writes through ``gating.reviews``. The review page's
buttons post to the queue API (``gating.api.queue_views``) with the session and its CSRF
token, so the page and API clients go through one set of rules.

Everything from an output, its input, metadata or evidence is untrusted text: templates
show it through autoescaping only, never ``|safe``.
"""

import json

from django.conf import settings
from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.db.models import Max
from django.http import QueryDict
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from gating import comments, diffs, reviews, rubrics, selectors
from gating.api.filters import ReviewItemFilter, queue_filter_data, queue_filterset
from gating.api.serializers import BulkDecisionSerializer
from gating.exceptions import DecisionInvalid, FieldInvalid
from gating.formatting import pretty_json
from gating.models import COMMENT_MAX_CHARS, Output, Review, ReviewItem, TaskType
from gating.roles import page_for, refusal
from gating.scorers import interval

QUEUE_PAGE_ROWS = 100
_BULK_DONE = {Review.Action.APPROVE: "Approved", Review.Action.REJECT: "Rejected"}


def _filter_params(data) -> QueryDict:
    """The queue filters present in ``data``: what the pages carry from step to step. A
    form's empty fields mean any, so they are left out."""
    filters = QueryDict(mutable=True)
    for name, values in queue_filter_data(data).lists():
        if given := [value for value in values if value]:
            filters.setlist(name, given)
    return filters


def _queue_filter(data) -> ReviewItemFilter:
    return queue_filterset(_filter_params(data))


def _with_filters(url: str, filters: QueryDict) -> str:
    return f"{url}?{filters.urlencode()}" if filters else url


def _filter_choices(filters: QueryDict) -> dict:
    """What the filter fields' choosers offer and show chosen (templates/_choose_many.html):
    every task type, and the open queue's models with any chosen beside them."""
    chosen_models = filters.getlist("model")
    return {
        "task_type_names": selectors.task_type_names(),
        "model_names": sorted({*selectors.queue_models(), *chosen_models}),
        "chosen_task_types": filters.getlist("task_type"),
        "chosen_models": chosen_models,
    }


def _interval_bar(output) -> dict | None:
    """The interval's bounds as percentages of the 0-10 scale, for the bar on the page."""
    if output.interval_lower is None or output.interval_upper is None:
        return None
    lower, upper = output.interval_lower, output.interval_upper
    return {
        "lower": lower,
        "upper": upper,
        "width": upper - lower,
        "wide": interval.is_wide(upper - lower),
        "left_pct": round(lower * 10, 2),
        "width_pct": round(max(upper - lower, 0.0) * 10, 2),
        "score_pct": round(output.score * 10, 2),
    }


# --------------------------------------------------------------------------- the queue


@page_for("gating.review_items")
@require_GET
def queue_page(request):
    return _queue_response(request, "gating/queue.html", with_choosers=True)


@page_for("gating.review_items")
@require_GET
def queue_table(request):
    """The queue page's summary and table alone, which the page polls to stay current."""
    return _queue_response(request, "gating/_queue_table.html")


def _queue_response(request, template: str, *, with_choosers: bool = False):
    filterset = _queue_filter(request.GET)
    filters = _filter_params(request.GET)
    now = timezone.now()
    context = {
        "filter_form": filterset.form,
        "filters": filters,
        "filter_query": filters.urlencode(),
        "now": now,
        "row_limit": QUEUE_PAGE_ROWS,
    }
    if with_choosers:
        # The table the page polls has no filter fields: it skips their queries.
        context |= _filter_choices(filters)
    if not filterset.is_valid():
        return render(request, template, context, status=400)
    items, waiting_for_a_lead = selectors.queue_listing(filterset.qs, viewer=request.user)
    context |= {
        "waiting_for_a_lead": waiting_for_a_lead,
        "summary": selectors.queue_summary(items, now=now),
        "items": items.select_related("task_type", "claimed_by").order_by("turn_at", "id")[
            :QUEUE_PAGE_ROWS
        ],
        "held_item": reviews.item_held_by(request.user, now=now),
    }
    return render(request, template, context)


@page_for("gating.review_items")
@require_POST
def queue_next(request):
    """Claim the next item matching the posted filters (``reviews.item_claim``: the oldest,
    or the oldest audit for the audit share) and open it, or open the one held."""
    filterset = _queue_filter(request.POST)
    filters = _filter_params(request.POST)
    if not filterset.is_valid():
        messages.error(request, "Those filters are not valid: fix them and try again.")
        return redirect(_with_filters(reverse("queue"), filters))
    item = reviews.item_claim(reviewer=request.user, items=filterset.qs)
    if item is None:
        messages.info(request, "Nothing left to review.")
        return redirect(_with_filters(reverse("queue"), filters))
    return redirect(_with_filters(reverse("review", args=[item.pk]), filters))


# --------------------------------------------------------------------------- one item


@page_for("gating.review_items")
@require_GET
def review_page(request, item_id: int):
    item = get_object_or_404(
        ReviewItem.objects.select_related("output", "output__task_type"), pk=item_id
    )
    if item.state != ReviewItem.State.OPEN or item.claimed_by_id != request.user.pk:
        messages.warning(
            request, f"You do not hold item {item_id}: take the next one from the queue."
        )
        return redirect("queue")
    output = item.output
    rubric = rubrics.rubric_in_force(item.task_type_id)
    # Only an adjudication has prior reviews: a second review must stay independent.
    prior_reviews = [
        {
            "review": review,
            "diff": diffs.word_diff(output.output_text, review.edited_output)
            if review.edited_output is not None
            else None,
        }
        for review in selectors.item_prior_reviews(item)
    ]
    return render(
        request,
        "gating/review.html",
        {
            "item": item,
            "output": output,
            "now": timezone.now(),
            "prior_reviews": prior_reviews,
            "evidence_json": None if output.evidence is None else pretty_json(output.evidence),
            "provenance_json": (
                None if output.provenance is None else pretty_json(output.provenance)
            ),
            "interval": _interval_bar(output),
            "shadow_scores": sorted(output.shadow_scores.items()),
            "metadata_json": pretty_json(output.metadata) if output.metadata else None,
            "reject_reasons": settings.REVIEW_REJECT_REASONS,
            "undo_seconds": settings.REVIEW_UNDO_SECONDS,
            "rubric": rubric,
            "filters": _filter_params(request.GET),
            **comments_context(request, output, action=reverse("review-comment", args=[item.pk])),
        },
    )


@page_for("gating.review_items")
@require_POST
def review_diff(request, item_id: int):
    """The live preview of a modification: the posted text against the original output.

    Not limited to the claim's holder: every reviewer can read the output through the API
    anyway, and a preview must not break while a lapsed lease changes hands.
    """
    item = get_object_or_404(ReviewItem.objects.select_related("output"), pk=item_id)
    original = item.output.output_text
    edited = request.POST.get("output", "")
    return render(
        request,
        "gating/_diff.html",
        {"segments": diffs.word_diff(original, edited), "changed": edited != original},
    )


# --------------------------------------------------------------------------- comments


def comments_context(request, output: Output, *, action: str) -> dict:
    """What templates/gating/_comments.html shows: the thread to those who may read it, and
    the form, posting to ``action``, to those who may add to it."""
    if not request.user.has_perm("gating.view_comment"):
        return {}
    can_add = request.user.has_perm("gating.add_comment")
    return {
        "comments": comments.comments_of(output),
        "comment_action": action if can_add else None,
        "comment_max_chars": COMMENT_MAX_CHARS,
    }


def comment_posted(request, output: Output, *, action: str, page: str):
    """Add the posted comment and answer: to htmx, the thread again (the page stays as it
    is, with whatever the reviewer had typed elsewhere on it), a refused comment with its
    text kept and the reason (200 all the same: htmx swaps no 4xx, and the section is the
    answer either way); without JavaScript, back to ``page``, with a message if it was
    refused."""
    text = request.POST.get("text", "")
    try:
        comments.comment_add(output=output, author=request.user, text=text)
    except FieldInvalid as error:
        why_refused = f"The comment was not added: {error}"
    else:
        why_refused = None
    if not request.htmx:
        if why_refused:
            messages.error(request, why_refused)
        return redirect(f"{page}#comments")
    context = comments_context(request, output, action=action) | {
        "comment_refusal": why_refused,
        "comment_text": text if why_refused else "",
        "comment_posted": True,
    }
    return render(request, "gating/_comments.html", context)


@page_for("gating.add_comment")
@require_POST
def review_comment(request, item_id: int):
    """A comment from the review page, which it goes back to. Whoever may comment may
    comment on any output, through the API too, so holding the item is not required."""
    item = get_object_or_404(ReviewItem.objects.select_related("output"), pk=item_id)
    page = _with_filters(reverse("review", args=[item.pk]), _filter_params(request.POST))
    action = reverse("review-comment", args=[item.pk])
    return comment_posted(request, item.output, action=action, page=page)


# --------------------------------------------------------------------------- bulk


@page_for("gating.bulk_decide")
@require_http_methods(["GET", "POST"])
def queue_bulk(request):
    """Filters, action and reason; then a preview with the count; then the decision."""
    data = request.POST if request.method == "POST" else request.GET
    filterset = _queue_filter(data)
    decision = BulkDecisionSerializer(
        data={"action": data.get("action", ""), "reason": data.get("reason", "")}
    )
    filters = _filter_params(data)
    context = {
        "filter_form": filterset.form,
        "filters": filters,
        **_filter_choices(filters),
        "actions": [Review.Action.APPROVE, Review.Action.REJECT],
        "action": data.get("action", ""),
        "reason": data.get("reason", ""),
    }
    if request.method == "GET":
        return render(request, "gating/bulk.html", context)
    # Both validated, so the page names every bad field at once.
    filters_valid, decision_valid = filterset.is_valid(), decision.is_valid()
    if not (filters_valid and decision_valid):
        return render(
            request, "gating/bulk.html", context | {"errors": decision.errors}, status=400
        )
    action, reason = decision.validated_data["action"], decision.validated_data["reason"]
    if request.POST.get("step") != "confirm":
        # What bulk_decide would decide, counted as the API's dry run counts it.
        matched = selectors.bulk_decision_count(filterset.qs)
        return render(
            request,
            "gating/bulk.html",
            context
            | {
                "preview": True,
                "matched": matched,
                "over_limit": matched > settings.BULK_DECISION_LIMIT,
                "limit": settings.BULK_DECISION_LIMIT,
            },
        )
    try:
        decided = reviews.bulk_decide(
            lead=request.user, items=filterset.qs, action=action, reason=reason
        )
    except DecisionInvalid as error:
        return render(
            request,
            "gating/bulk.html",
            context | {"errors": {error.field: [str(error)]}},
            status=400,
        )
    messages.success(
        request,
        f"{_BULK_DONE[action]} {decided} held output{'s' if decided != 1 else ''}.",
    )
    return redirect("queue-bulk")


# --------------------------------------------------------------------------- rubrics


@page_for("gating.view_rubric")
@require_GET
def rubrics_page(request):
    """Every task type, with its rubric's version in force (if any)."""
    task_types = TaskType.objects.order_by("name").annotate(rubric_version=Max("rubrics__version"))
    return render(request, "gating/rubrics.html", {"task_types": task_types})


@page_for("gating.view_rubric")
@require_http_methods(["GET", "POST"])
def rubric_page(request, name: str):
    """A task type's rubric: the version in force, its history, and (admins) a new version.

    The dimensions are edited as the JSON the API takes (docs/review-queue.md has an
    example); a refused one is named by its place and key, and the form keeps what was typed.
    """
    task_type = get_object_or_404(TaskType, name=name)
    current = rubrics.rubric_in_force(task_type.pk)
    may_edit = request.user.has_perm("gating.add_rubric")
    error = None
    instructions = current.instructions if current else ""
    dimensions_text = json.dumps(current.dimensions if current else [], indent=2)
    if request.method == "POST":
        if not may_edit:
            raise PermissionDenied(refusal("gating.add_rubric"))
        instructions = request.POST.get("instructions", "")
        dimensions_text = request.POST.get("dimensions", "")
        try:
            try:
                dimensions = json.loads(dimensions_text)
            except ValueError as bad:
                raise FieldInvalid("dimensions", f"Not JSON: {bad}.") from None
            rubric, created = rubrics.rubric_save(
                task_type=task_type,
                instructions=instructions,
                dimensions=dimensions,
                actor=request.user,
            )
        except FieldInvalid as refused:
            error = {"field": refused.field, "message": str(refused)}
        else:
            messages.success(
                request,
                f"Saved as version {rubric.version}."
                if created
                else f"Nothing changed: version {rubric.version} stays in force.",
            )
            return redirect("rubric", name=task_type.name)
    versions = task_type.rubrics.select_related("created_by").order_by("-version")
    return render(
        request,
        "gating/rubric.html",
        {
            "task_type": task_type,
            "rubric": current,
            "versions": versions,
            "may_edit": may_edit,
            "instructions": instructions,
            "dimensions_text": dimensions_text,
            "error": error,
            "instructions_max": rubrics.INSTRUCTIONS_MAX_CHARS,
        },
        status=400 if error else 200,
    )
