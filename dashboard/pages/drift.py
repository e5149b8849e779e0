"""Drift: first the population stability index per task type and model against the
score-shift alert's level, and each model's mean score (what a drift alert links to); then
how the scores and the reviewers' approval of them moved, and how the thresholds moved and
why."""

from __future__ import annotations

from dashboard import charts
from dashboard.filters import DashboardFilter
from dashboard.pages.monitoring import chart, monitoring_page, page_render
from gating.roles import WATCH_LEARNING
from learning import selectors as learning_selectors
from learning.alerts import PSI_LIMIT
from learning.statistics import drift as score_drift


@monitoring_page(WATCH_LEARNING)
def drift(request):
    return page_render(request, "dashboard/drift.html", drift_content)


def drift_content(f: DashboardFilter) -> dict:
    return {
        "threshold_history": chart(
            "threshold-history", charts.threshold_history_chart, f, until=f.until
        ),
        "score_heatmap": chart("score-heatmap", charts.score_heatmap, f),
        "approval_by_band": chart("approval-by-band", charts.approval_by_band_chart, f),
        "model_scores": chart("model-scores", charts.model_score_chart, f),
        "psi": chart("psi", charts.psi_chart, f, alert_level=PSI_LIMIT),
        "psi_limit": PSI_LIMIT,
        "psi_baseline_days": score_drift.BASELINE_DAYS,
        "psi_min_outputs": score_drift.MIN_OUTPUTS,
        "threshold_states": [
            s
            for s in learning_selectors.threshold_states()
            if not f.task_types or s.task_type in f.task_types
        ],
    }
