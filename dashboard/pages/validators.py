"""Validators of one task type: how much each one tells the gate (importance) beside the
weight the gate gives it now, each one's accuracy, and how its weight moved."""

from __future__ import annotations

from dashboard import charts
from dashboard.filters import DashboardFilter
from dashboard.metrics import validators_task_type
from dashboard.pages.monitoring import chart, monitoring_page, page_render
from gating.roles import WATCH_LEARNING


@monitoring_page(WATCH_LEARNING)
def validators(request):
    return page_render(request, "dashboard/validators.html", validators_content)


def validators_content(f: DashboardFilter) -> dict:
    return {
        "task_type": validators_task_type(f),
        # Validators belong to one task type: the charts show one, and say so.
        "task_type_chosen": len(f.task_types) == 1,
        "importance": chart("validator-importance", charts.validator_importance_chart, f),
        "accuracy": chart("validator-accuracy", charts.validator_accuracy_chart, f),
        "weights": chart("validator-weights", charts.validator_weight_chart, f),
    }
