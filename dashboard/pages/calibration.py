"""Calibration: whether the score means what it says (the reviewers' approval by score
bucket), how the scores of approved and not approved outputs differ, and how well the
score ranks them (AUROC per task type and model), how the scorers compare on the
same outputs (docs/scoring.md), and whether the label model predicts what leads say in
the gold checks (docs/learning.md)."""

from __future__ import annotations

from django.conf import settings

from dashboard import charts, selectors
from dashboard.filters import DashboardFilter
from dashboard.metrics import metric_rows
from dashboard.pages.monitoring import chart, monitoring_page, page_render
from gating.formatting import number
from gating.roles import WATCH_LEARNING
from learning.selectors import gold_check_rows


@monitoring_page(WATCH_LEARNING)
def calibration(request):
    return page_render(request, "dashboard/calibration.html", calibration_content)


def calibration_content(f: DashboardFilter) -> dict:
    auroc_rows = metric_rows("auroc", f)
    scorer_rows = metric_rows("scorer-auroc", f)
    return {
        "reliability": chart("calibration", charts.reliability_chart, f),
        "score_by_action": chart("score-by-action", charts.action_histogram, f),
        "auroc": charts.figure_data(charts.auroc_chart(auroc_rows)),
        "auroc_rows": [
            r | {"shown": {k: number(r[k]) for k in ("auroc", "low", "high")}} for r in auroc_rows
        ],
        "scorers_vs_reviewers": charts.figure_data(
            charts.scorer_auroc_chart(scorer_rows, selectors.AGAINST_REVIEWERS)
        ),
        "scorers_vs_truth": charts.figure_data(
            charts.scorer_auroc_chart(scorer_rows, selectors.AGAINST_TRUTH)
        ),
        "gold_rows": gold_check_rows(),
        "gold_share": settings.REVIEW_GOLD_SHARE,
        "scorer_rows": [
            r | {"shown": {k: number(r[k]) for k in ("auroc", "low", "high")}} for r in scorer_rows
        ],
    }
