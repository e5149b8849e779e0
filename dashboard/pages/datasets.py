"""The datasets page: every dataset with its versions and row counts, a form that creates
one from a filter, a snapshot button and a download link per format; and the "Add to
dataset" form on an output's page. The rules (what a filter means, what goes in) are
learning.datasets'; this page reads forms into its arguments.

Dataset rows hold LLM text, which is untrusted: the templates show it through autoescaping
only (and this page shows none of it, only names and counts).
"""

from __future__ import annotations

import re

from django.conf import settings
from django.contrib import messages
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from gating.exceptions import FieldInvalid
from gating.models import TaskType
from gating.roles import page_for
from learning import dataset_formats, datasets
from learning.models import Dataset

VIEW, ADD, CHANGE = "learning.view_dataset", "learning.add_dataset", "learning.change_dataset"
# A dataset's number as a form sends it: ASCII digits, within a database id's range.
_DATASET_ID = re.compile(r"[0-9]{1,18}")
# The fields a new dataset's form ticks unless told otherwise: what the eval export needs.
DEFAULT_FIELDS = ("output_id", "input", "original", "corrected", "label", "scores")


def filter_from_form(form) -> dict | None:
    """The filter a create form asks for, in filter_clean's terms: empty boxes mean "any",
    and "hand-added only" means no filter (null)."""
    if form.get("hand_added_only"):
        return None
    raw: dict = {}
    for key in ("task_types", "labels", "reject_reasons", "agreement"):
        if values := [v for v in form.getlist(key) if v]:
            raw[key] = values
    dimension = form.get("score_dimension", "").strip()
    if dimension:
        condition: dict = {"dimension": dimension}
        if equals := form.get("score_equals", "").strip():
            condition["equals"] = {"true": True, "false": False}.get(equals, equals)
        for key in ("min", "max"):
            if text := form.get(f"score_{key}", "").strip():
                try:
                    condition[key] = float(text)
                except ValueError:
                    raise FieldInvalid(f"filter.scores[0].{key}", "Must be a number.") from None
        raw["scores"] = [condition]
    for key in ("decided_after", "decided_before"):
        if day := form.get(key, "").strip():
            # A date input: from (or before) midnight UTC of that day.
            raw[key] = f"{day}T00:00:00+00:00"
    return raw


def _page(request, *, error: FieldInvalid | None = None, form=None):
    form = form or {}
    chosen = form.getlist("fields") if form else list(DEFAULT_FIELDS)
    context = {
        "datasets": datasets.datasets_listed(),
        "task_types": TaskType.objects.order_by("name").values_list("name", flat=True),
        "labels": datasets.SETTLED,
        "reject_reasons": settings.REVIEW_REJECT_REASONS,
        "agreement": datasets.AGREEMENT,
        "fields": [(name, name in chosen) for name in dataset_formats.FIELDS],
        "form": form,
        "error": error,
        "name_max": datasets.NAME_MAX,
    }
    return render(request, "dashboard/datasets.html", context, status=400 if error else 200)


@require_GET
@page_for(VIEW)
def datasets_page(request):
    return _page(request)


@require_POST
@page_for(ADD)
def dataset_create_page(request):
    try:
        dataset = datasets.dataset_create(
            name=request.POST.get("name", "").strip(),
            description=request.POST.get("description", ""),
            filter=filter_from_form(request.POST),
            fields=request.POST.getlist("fields"),
            actor=request.user,
        )
    except FieldInvalid as error:
        return _page(request, error=error, form=request.POST)
    messages.success(request, f"Created the dataset {dataset.name}.")
    return redirect("dashboard-dataset", pk=dataset.pk)


@require_GET
@page_for(VIEW)
def dataset_page(request, pk: int):
    dataset = get_object_or_404(datasets.datasets_listed(), pk=pk)
    versions = [
        (
            version,
            [
                (
                    name,
                    reverse(
                        "api-dataset-export",
                        kwargs={"pk": pk, "number": version.number, "export_format": name},
                    ),
                )
                for name in dataset_formats.FORMATS
                if dataset_formats.format_problem(name, version.fields) is None
            ],
        )
        for version in dataset.versions.select_related("created_by").order_by("-number")
    ]
    hand_added = dataset.hand_added.order_by("output_id").values_list("output_id", flat=True)
    context = {"dataset": dataset, "versions": versions, "hand_added": hand_added[:200]}
    return render(request, "dashboard/dataset.html", context)


@require_POST
@page_for(CHANGE)
def dataset_snapshot_page(request, pk: int):
    dataset = get_object_or_404(Dataset, pk=pk)
    version = datasets.version_create(dataset=dataset, actor=request.user)
    messages.success(
        request, f"Version {version.number} of {dataset.name}: {version.row_count} rows."
    )
    return redirect("dashboard-dataset", pk=pk)


@require_POST
@page_for(CHANGE)
def dataset_add_output_page(request, output_id: int):
    """From an output's page: add it to the chosen dataset by hand, and go back."""
    back = f"{reverse('dashboard-output', args=[output_id])}#datasets"
    dataset_id = request.POST.get("dataset", "")
    dataset = (
        Dataset.objects.filter(pk=int(dataset_id)).first()
        if _DATASET_ID.fullmatch(dataset_id)
        else None
    )
    if dataset is None:
        messages.error(request, "Choose a dataset.")
        return redirect(back)
    try:
        added = datasets.outputs_add(dataset=dataset, output_ids=[output_id], actor=request.user)
    except FieldInvalid:
        messages.error(
            request,
            "Only an output whose label a person's review settled can go in a dataset "
            "(not pending, not bulk-decided, not delivered by the gate alone).",
        )
        return redirect(back)
    if added:
        messages.success(request, f"Added to the dataset {dataset.name}.")
    else:
        messages.info(request, f"The dataset {dataset.name} has it already.")
    return redirect(back)
