"""The thresholds page: a task type's gate settings and its validators' weights, which
admins edit (each edit with a reason, through gating.services.gate_settings_change) and
leads read; a what-if panel for candidate thresholds; and a button that queues a learning
cycle now."""

from __future__ import annotations

import math
import re
from datetime import UTC

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
    filter_parse,
    filter_query,
    parameter_text,
)
from dashboard.metrics import metric_rows
from dashboard.models import REVIEW_BUCKET_WIDTH, ReviewRollup
from gating import scorers
from gating.exceptions import TaskTypeInvalid
from gating.models import ReviewItem, TaskType, Validator
from gating.roles import RUN_CYCLES, WATCH_LEARNING, page_for, refusal
from gating.scoring import ApproveRequires
from gating.services import (
    SETTING_RANGES,
    EditSource,
    gate_settings_change,
    gate_settings_problems,
    reason_problem,
    weight_problem,
)
from learning import selectors as learning_selectors
from learning.models import CycleRun
from learning.services import cycle_queue

# The settings the page edits, in the order it shows them (backlog relief stays with the
# admin site). Whole numbers are read as such so that 20.5 reviews is refused in words.
NUMBERS = (
    "review_threshold",
    "approve_threshold",
    "alpha_approve",
    "alpha_bad",
    "alpha_warning",
    "delta",
    "audit_rate_approved",
    "audit_rate_budget",
    "audit_rate_warning",
    "double_review_rate",
    "cold_start_reviews",
    "cold_start_margin",
)
SWITCHES = (
    "review_threshold_pinned",
    "approve_threshold_pinned",
    "auto_approve",
)
LABELS = {
    "review_threshold": "Review below",
    "approve_threshold": "Approve from",
    "alpha_approve": "α, auto-approved: largest share that truly needs an edit or is bad",
    "alpha_bad": "α, auto-approved: largest share that is truly bad",
    "alpha_warning": "α, warnings: largest share that is truly bad",
    "delta": "δ (chance a threshold's bound is wrong)",
    "audit_rate_approved": "Audit rate of auto-approved outputs",
    "audit_rate_budget": "Audit budget: the highest rate the cycles may set when underpowered",
    "audit_rate_warning": "Audit rate of warnings",
    "double_review_rate": "Second-review rate",
    "cold_start_reviews": "Cold start: human reviews before the gate stops holding everything",
    "cold_start_margin": "Cold start margin (raises both thresholds for a model's first reviews)",
    "review_threshold_pinned": "Pin the review threshold (the cycles leave it)",
    "approve_threshold_pinned": "Pin the approve threshold (the cycles leave it)",
    "auto_approve": "Auto-approve (off: what would be approved is delivered as a warning)",
}
# What must stand behind the approve threshold for what reaches it to be approved.
APPROVE_REQUIRES = [
    (
        ApproveRequires.ESTIMATE.value,
        "A certified threshold, or until then the estimated approve line",
    ),
    (ApproveRequires.CERTIFIED.value, "A certified threshold"),
    (ApproveRequires.NOTHING.value, "Nothing: approve at the threshold in force"),
]
_WHOLE = frozenset({"cold_start_reviews"})
_WEIGHT = "weight:"


@require_http_methods(["GET", "POST"])
@page_for(WATCH_LEARNING)
def thresholds(request):
    if request.method == "POST" and not request.user.has_perm("gating.change_tasktype"):
        raise PermissionDenied(f"Saving thresholds: {refusal('gating.change_tasktype')}")
    known = selectors.filter_choices()
    names = known["task_types"]
    try:
        dashboard_filter = filter_parse(request.GET, **known)
        task_type = _one_task_type(dashboard_filter, names)
    except FilterInvalid as exc:
        context = _context(filter_parse({}, **known), None, known, filter_error=exc)
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
    context["what_if"] = _what_if(f, task_type, *candidates) if not candidate_error else None
    # htmx swaps in only successful responses: the panel asked for as the admin types shows
    # its refusal with a 200, and a plain request gets the 400 of a bad parameter.
    refused = extra.get("problems") or (candidate_error and not request.htmx)
    status = 400 if refused else 200
    return render(request, "dashboard/thresholds.html", context, status=status)


def _context(f: DashboardFilter, task_type: TaskType | None, known: dict, **extra) -> dict:
    context = {
        "dashboard_filter": f,
        "task_type": task_type,
        "task_type_names": known["task_types"],
        "model_names": known["models"],
        "filter_query": filter_query(f) if task_type is None else _query(f, task_type),
        "policies": TaskType.ThresholdPolicy.choices,
        "approve_requires_choices": APPROVE_REQUIRES,
        "scorer_choices": _scorer_choices(task_type),
        "cycle_kinds": CycleRun.Kind.choices,
        "ranges": SETTING_RANGES,
        "problems": {},
        "values": {},
        "reason": "",
        **extra,
    }
    if task_type is not None:
        validators = list(Validator.objects.filter(task_type=task_type).order_by("name"))
        values = {name: getattr(task_type, name) for name in (*NUMBERS, *SWITCHES)}
        values["threshold_policy"] = task_type.threshold_policy
        values["approve_requires"] = task_type.approve_requires
        values["scorer"] = task_type.scorer
        values |= {f"{_WEIGHT}{v.name}": v.weight for v in validators}
        values |= context["values"]
        problems = {name: in_words(message) for name, message in context["problems"].items()}
        context["problems"] = problems
        context["threshold_history"] = _history(f, task_type)
        context["number_fields"] = [
            (name, LABELS[name], values[name], problems.get(name), *SETTING_RANGES[name])
            for name in NUMBERS
        ]
        context["switch_fields"] = [
            (name, LABELS[name], values[name], problems.get(name)) for name in SWITCHES
        ]
        context["policy"] = (values["threshold_policy"], problems.get("threshold_policy"))
        context["approve_requires"] = (
            values["approve_requires"],
            problems.get("approve_requires"),
        )
        context["scorer"] = (values["scorer"], problems.get("scorer"))
        context["threshold_states"] = [
            s for s in learning_selectors.threshold_states() if s.task_type == task_type.name
        ]
        context["weight_fields"] = [
            (
                f"{_WEIGHT}{v.name}",
                v.name,
                values[f"{_WEIGHT}{v.name}"],
                problems.get(f"{_WEIGHT}{v.name}"),
            )
            for v in validators
        ]
    return context


# A setting's name in a message, as the API writes it ("review_threshold"), and as this
# page labels it.
_SETTING_NAME = re.compile(r"\b(" + "|".join(sorted(LABELS, key=len, reverse=True)) + r")\b")


def in_words(message: str) -> str:
    """A message about the settings with each setting's name as the page labels it:
    'Must be above review_threshold (4).' reads 'Must be above “Review below” (4).'"""
    return _SETTING_NAME.sub(lambda m: f"“{LABELS[m.group(1)]}”", message)


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
    changes, weights, problems = _read_form(request.POST, validators)
    problems |= {
        name: message
        for name, message in gate_settings_problems(task_type, changes).items()
        if name not in problems
    }
    for name, weight in weights.items():
        if validators[name].weight != weight and (problem := weight_problem(weight)):
            problems[f"{_WEIGHT}{name}"] = problem
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
            field = exc.field.replace("weights.", _WEIGHT)
            problems[field] = str(exc)
    if problems:
        submitted = {name: request.POST.get(name, "") for name in NUMBERS}
        submitted |= {name: name in request.POST for name in SWITCHES}
        submitted["threshold_policy"] = request.POST.get("threshold_policy", "")
        submitted["approve_requires"] = request.POST.get("approve_requires", "")
        submitted["scorer"] = request.POST.get("scorer", task_type.scorer)
        submitted |= {
            f"{_WEIGHT}{name}": request.POST.get(f"{_WEIGHT}{name}", "") for name in validators
        }
        return _show(
            request, f, task_type, known, problems=problems, values=submitted, reason=reason
        )
    messages.success(request, f"Saved the settings of {task_type.name}.")
    return redirect(reverse("dashboard-thresholds") + "?" + _query(f, task_type))


def _scorer_choices(task_type: TaskType | None) -> list[tuple[str, str, str]]:
    """The menu's (value, label, description): every registered scorer and, kept selected,
    a name this version no longer has. Without it the browser would submit the first
    scorer, and saving any other setting would quietly switch the task type's scorer."""
    choices = [(s.name, s.name, s.description) for s in scorers.REGISTRY.values()]
    if task_type is not None and task_type.scorer not in scorers.REGISTRY:
        choices.append(
            (
                task_type.scorer,
                f"{task_type.scorer} (not in this version)",
                f"Not in this version of Gatehouse: the {scorers.DEFAULT} scorer scores "
                "this task type's outputs until another is chosen.",
            )
        )
    return choices


def _read_form(post, validators: dict) -> tuple[dict, dict, dict]:
    """The form's settings and weights as numbers and switches, and what could not be read
    as one, in words by field."""
    changes: dict[str, object] = {}
    problems: dict[str, str] = {}
    for name in NUMBERS:
        raw = post.get(name, "").strip()
        value = _number(raw, whole=name in _WHOLE)
        if value is None:
            problems[name] = "Must be a whole number." if name in _WHOLE else "Must be a number."
        else:
            changes[name] = value
    for name in SWITCHES:
        changes[name] = name in post
    changes["threshold_policy"] = post.get("threshold_policy", "")
    changes["approve_requires"] = post.get("approve_requires", "")
    if "scorer" in post:
        changes["scorer"] = post["scorer"]
    weights: dict[str, float] = {}
    for name in validators:
        value = _number(post.get(f"{_WEIGHT}{name}", "").strip(), whole=False)
        if value is None:
            problems[f"{_WEIGHT}{name}"] = "Must be a number."
        else:
            weights[name] = value
    return changes, weights, problems


def _number(raw: str, *, whole: bool) -> float | int | None:
    if whole:
        try:
            return int(raw)
        except ValueError:
            pass
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
        value = _number(raw, whole=False) if raw else stored
        if value is None or not math.isfinite(value) or not 0.0 <= value <= 10.0:
            return (task_type.review_threshold, task_type.approve_threshold), (
                f"The candidate {name} threshold must be a number from 0 to 10."
            )
        values.append(value)
    review, approve = values
    if review >= approve:
        return (review, approve), "The candidate review threshold must be below the approve one."
    return (review, approve), ""


def _what_if(f: DashboardFilter, task_type: TaskType, review: float, approve: float):
    window = {
        "since": f.since,
        "until": f.until,
        "task_types": [task_type.name],
        "models": f.models,
    }
    histogram = selectors.score_histogram(**window)
    days = (f.until - f.since).total_seconds() / 86400
    return whatif.what_if(
        review_threshold=review,
        approve_threshold=approve,
        histogram=histogram,
        review_cells=review_cells(f, task_type),
        days=days,
        audit_rate_approved=task_type.audit_rate_approved,
        audit_rate_warning=task_type.audit_rate_warning,
        double_review_rate=task_type.double_review_rate,
    )


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
