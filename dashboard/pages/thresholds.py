"""The thresholds page: a task type's gate settings and its validators' weights, which
admins edit (each edit with a reason, through gating.services.gate_settings_change) and
leads read; a what-if panel for candidate thresholds; and a button that queues a learning
cycle now."""

from __future__ import annotations

import math
from collections import defaultdict
from datetime import UTC, datetime, time, timedelta

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.db.models import F, FloatField, Sum
from django.http import HttpResponseBadRequest
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_POST

from dashboard import selectors, whatif
from dashboard.filters import (
    DashboardFilter,
    FilterInvalid,
    filter_query,
    parameter_text,
)
from dashboard.metrics import metric_rows
from dashboard.models import REVIEW_BUCKET_WIDTH, ReviewRollup
from dashboard.pages.monitoring import filter_bar
from gating import scorers
from gating.exceptions import TaskTypeInvalid
from gating.forms import WEIGHT_PREFIX, GateSettingsForm
from gating.gate_settings import BY_NAME, in_words
from gating.models import ReviewItem, TaskType, Validator
from gating.roles import RUN_CYCLES, WATCH_LEARNING, page_for, refusal
from gating.scoring import approval_line
from gating.services import (
    EditSource,
    gate_settings_change,
    gate_settings_problems,
    reason_problem,
    weight_problem,
)
from learning import selectors as learning_selectors
from learning.models import CycleRun
from learning.services import cycle_queue


@require_http_methods(["GET", "POST"])
@page_for(WATCH_LEARNING)
def thresholds(request):
    if request.method == "POST" and not request.user.has_perm("gating.change_tasktype"):
        raise PermissionDenied(f"Saving thresholds: {refusal('gating.change_tasktype')}")
    bar = filter_bar(request.GET)
    dashboard_filter = bar["dashboard_filter"]
    known = {"task_types": bar["task_type_names"], "models": bar["model_names"]}
    try:
        if bar["filter_error"]:
            raise bar["filter_error"]
        task_type = _one_task_type(dashboard_filter, known["task_types"])
    except FilterInvalid as exc:
        context = _context(dashboard_filter, None, known, filter_error=exc)
        return render(request, "dashboard/thresholds.html", context, status=400)
    if task_type is None:
        return render(request, "dashboard/thresholds.html", _context(dashboard_filter, None, known))
    if request.method == "POST":
        return _save(request, dashboard_filter, task_type, known)
    return _show(request, dashboard_filter, task_type, known)


def _one_task_type(f: DashboardFilter, names: list[str]) -> TaskType | None:
    if len(f.task_types) > 1:
        raise FilterInvalid("task_type", "Choose one task type: thresholds are each its own.")
    name = f.task_types[0] if f.task_types else (names[0] if names else None)
    return TaskType.objects.get(name=name) if name else None


def _show(request, f: DashboardFilter, task_type: TaskType, known: dict, **extra):
    candidates, candidate_error = _candidates(request.GET, task_type)
    context = _context(f, task_type, known, **extra)
    context["candidate_error"] = candidate_error
    context["candidates"] = candidates
    # The lowest score approved at the candidate threshold: none while approvals wait for
    # a guarantee or auto-approve is off, the estimated line where that is higher.
    line = (
        approval_line(task_type.gate_policy, candidates[1]) if task_type.auto_approve else math.inf
    )
    context["approvals_from"] = None if math.isinf(line) else line
    context["what_if"] = (
        _what_if(f, task_type, *candidates, approvals_from=line) if not candidate_error else None
    )
    # htmx swaps in only successful responses: the panel asked for as the admin types shows
    # its refusal with a 200, and a plain request gets the 400 of a bad parameter.
    refused = extra.get("problems") or (candidate_error and not request.htmx)
    status = 400 if refused else 200
    return render(request, "dashboard/thresholds.html", context, status=status)


def _context(
    f: DashboardFilter,
    task_type: TaskType | None,
    known: dict,
    *,
    form: GateSettingsForm | None = None,
    **extra,
) -> dict:
    context = {
        "dashboard_filter": f,
        "task_type": task_type,
        "task_type_names": known["task_types"],
        "model_names": known["models"],
        "filter_query": filter_query(f) if task_type is None else _query(f, task_type),
        "cycle_kinds": CycleRun.Kind.choices,
        "problems": {},
        "reason": "",
        **extra,
    }
    if task_type is not None:
        validators = list(Validator.objects.filter(task_type=task_type).order_by("name"))
        if form is None:
            form = _stored_form(task_type, validators)
        problems = {name: in_words(message) for name, message in context["problems"].items()}
        context["problems"] = problems
        context["threshold_history"] = _history(f, task_type)
        # Each field with its declaration (None for a weight) and what is wrong with it.
        fields = [(form[name], BY_NAME.get(name), problems.get(name)) for name in form.fields]
        context["number_fields"] = [f for f in fields if f[1] is not None and f[1].is_number]
        context["switch_fields"] = [f for f in fields if f[1] is not None and f[1].kind == "switch"]
        context["choice_fields"] = [f for f in fields if f[1] is not None and f[1].kind == "choice"]
        context["weight_fields"] = [f for f in fields if f[1] is None]
        context["scorer_descriptions"] = _scorer_descriptions(task_type)
        context["threshold_states"] = [
            s for s in learning_selectors.threshold_states() if s.task_type == task_type.name
        ]
    return context


def _scorer_descriptions(task_type: TaskType) -> dict[str, str]:
    """What each scorer on the menu is, for its option's title."""
    descriptions = {name: scorer.description for name, scorer in scorers.REGISTRY.items()}
    descriptions.setdefault(
        task_type.scorer,
        f"Not in this version of Gatehouse: the {scorers.DEFAULT} scorer scores this task "
        "type's outputs until another is chosen.",
    )
    return descriptions


def _stored_form(task_type: TaskType, validators: list[Validator]) -> GateSettingsForm:
    """The settings form holding the task type's stored settings and weights."""
    initial = {
        name: getattr(task_type, name) for name, setting in BY_NAME.items() if setting.on_page
    }
    initial |= {f"{WEIGHT_PREFIX}{v.name}": v.weight for v in validators}
    return GateSettingsForm(
        initial=initial, scorer=task_type.scorer, validators=[v.name for v in validators]
    )


def _history(f: DashboardFilter, task_type: TaskType) -> list[dict]:
    """Each change of the task type's thresholds in the range, newest first: who (an admin,
    or the cycle), when, why, before and after. A cycle's run that held a threshold changed
    nothing, and is left out."""
    chosen = DashboardFilter(f.since, f.until, f.preset, (task_type.name,), f.models)
    rows = metric_rows("threshold-history", chosen)
    return [row for row in reversed(rows) if row["before"] != row["value"]]


def _query(f: DashboardFilter, task_type: TaskType) -> str:
    """The filter with this one task type, for links and the forms' actions."""
    chosen = DashboardFilter(f.since, f.until, f.preset, (task_type.name,), f.models)
    return filter_query(chosen)


# --------------------------------------------------------------------------- editing


def _save(request, f: DashboardFilter, task_type: TaskType, known: dict):
    validators = {v.name: v for v in Validator.objects.filter(task_type=task_type)}
    form = GateSettingsForm(request.POST, scorer=task_type.scorer, validators=validators)
    form.is_valid()
    # What could not be read, then the service's rules on what could.
    problems = {name: errors[0] for name, errors in form.errors.items()}
    changes, weights = form.settings_changes(), form.weights()
    problems |= {
        name: message
        for name, message in gate_settings_problems(task_type, changes).items()
        if name not in problems
    }
    for name, weight in weights.items():
        if validators[name].weight != weight and (problem := weight_problem(weight)):
            problems[f"{WEIGHT_PREFIX}{name}"] = problem
    try:
        reason = parameter_text(request.POST, "reason")
    except FilterInvalid as exc:
        reason, problems["reason"] = "", str(exc)
    else:
        if problem := reason_problem(reason, EditSource.PAGE):
            problems["reason"] = problem
    if not problems:
        try:
            gate_settings_change(
                task_type=task_type,
                changes=changes,
                weights=weights,
                actor=request.user,
                reason=reason,
                source=EditSource.PAGE,
            )
        except TaskTypeInvalid as exc:
            # Another edit committed between the check and the lock.
            problems[exc.field.replace("weights.", WEIGHT_PREFIX)] = str(exc)
    if problems:
        return _show(request, f, task_type, known, problems=problems, form=form, reason=reason)
    messages.success(request, f"Saved the settings of {task_type.name}.")
    return redirect(reverse("dashboard-thresholds") + "?" + _query(f, task_type))


def _number(raw: str) -> float | None:
    try:
        return float(raw)
    except ValueError:
        return None


# --------------------------------------------------------------------------- what-if


def _candidates(query, task_type: TaskType) -> tuple[tuple[float, float], str]:
    """The candidate thresholds of the what-if (``review``, ``approve``; the stored ones by
    default), and what is wrong with them in words, if anything."""
    values = []
    for name, stored in (
        ("review", task_type.review_threshold),
        ("approve", task_type.approve_threshold),
    ):
        raw = query.get(name, "").strip()
        value = _number(raw) if raw else stored
        if value is None or not math.isfinite(value) or not 0.0 <= value <= 10.0:
            return (task_type.review_threshold, task_type.approve_threshold), (
                f"The candidate {name} threshold must be a number from 0 to 10."
            )
        values.append(value)
    review, approve = values
    if review >= approve:
        return (review, approve), "The candidate review threshold must be below the approve one."
    return (review, approve), ""


def _what_if(
    f: DashboardFilter, task_type: TaskType, review: float, approve: float, approvals_from: float
):
    """The what-if over the range from its first output of the task type on, or its last
    day at least: a range that reaches back before the task type had traffic would read
    those days as quiet ones, and an hour's traffic is too little to say a day's."""
    window = {"until": f.until, "task_types": [task_type.name], "models": f.models}
    first = selectors.first_output_hour(since=f.since, **window)
    since = f.since if first is None else max(f.since, min(first, f.until - timedelta(days=1)))
    window["since"] = since
    return whatif.what_if(
        daily_histograms=_whole_day_histograms(since, f.until, window),
        review_threshold=review,
        approve_threshold=approve,
        approvals_from=approvals_from,
        histogram=selectors.score_histogram(**window),
        review_cells=review_cells(f, task_type),
        days=(f.until - since).total_seconds() / 86400,
        since=since,
        audit_rate_approved=task_type.audit_rate_approved,
        audit_rate_warning=task_type.audit_rate_warning,
        double_review_rate=task_type.double_review_rate,
    )


def _whole_day_histograms(since: datetime, until: datetime, window: dict) -> list[list[dict]]:
    """The outputs per score bucket of each whole UTC day in [since, until) (a day with
    none is an empty histogram): the ends a preset cuts mid-day would read as quiet days."""
    since, until = since.astimezone(UTC), until.astimezone(UTC)
    first = since.date() if since.time() == time(0) else since.date() + timedelta(days=1)
    days = [first + timedelta(days=k) for k in range((until.date() - first).days)]
    by_day = defaultdict(list)
    for row in selectors.score_heatmap(**window):
        by_day[row["day"]].append(row)
    return [by_day[day] for day in days]


def review_cells(f: DashboardFilter, task_type: TaskType) -> list[dict]:
    """The first reviews (held or audited; bulk decisions left out) decided in the range, per
    review score bucket and whether the output was approved unchanged: [{lower, upper,
    reviews, weight, squared, not_approved}].

    ``squared`` is the sum of each review's squared weight for Kish's effective n, summed
    in the database: a rollup row's reviews share one inclusion probability (one task type,
    model, decision and kind in one hour, as dashboard.selectors.audit_cells assumes), so
    its reviews' squared weights add up to weight² / reviews. A hundred buckets, whatever
    the range.
    """
    since = f.since.astimezone(UTC).replace(minute=0, second=0, microsecond=0)
    rows = ReviewRollup.objects.filter(
        hour__gte=since,
        hour__lt=f.until,
        task_type=task_type,
        kind__in=ReviewItem.FIRST_KINDS,
        is_bulk=False,
    )
    if f.models:
        rows = rows.filter(model__in=f.models)
    grouped = (
        rows.order_by()
        .values("score_bucket", "action")
        .annotate(
            # Named apart from the columns: F("reviews") must be each row's, not the sum.
            n=Sum("reviews"),
            w=Sum("weight_sum"),
            w2=Sum(F("weight_sum") * F("weight_sum") / F("reviews"), output_field=FloatField()),
        )
    )
    return [
        {
            "lower": round(row["score_bucket"] * REVIEW_BUCKET_WIDTH, 6),
            "upper": round((row["score_bucket"] + 1) * REVIEW_BUCKET_WIDTH, 6),
            "reviews": row["n"],
            "weight": row["w"],
            "squared": row["w2"],
            "not_approved": row["action"] != "approve",
        }
        for row in grouped
    ]


# --------------------------------------------------------------------------- cycles


@require_POST
@page_for(RUN_CYCLES)
def cycle_run(request):
    kind = request.POST.get("kind", "")
    if kind not in CycleRun.Kind.values:
        return HttpResponseBadRequest(f"kind: use one of {', '.join(CycleRun.Kind.values)}.")
    cycle_queue(kind)
    label = CycleRun.Kind(kind).label
    messages.success(
        request, f"Queued the {label.lower()} cycle: it runs as soon as a worker takes it."
    )
    back = request.POST.get("next", "")
    return redirect(reverse("dashboard-thresholds") + (f"?{back}" if back else ""))
