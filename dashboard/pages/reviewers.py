"""Reviewers: how far they agree with each other (Cohen's kappa per pair, Krippendorff's
alpha over time, and per dimension of each task type's rubric), how they score the rubrics,
and, per reviewer, what they decide, how reliable the Dawid-Skene model finds them, how
often they agree with the gate, and how long they take."""

from __future__ import annotations

from dashboard import charts
from dashboard.filters import DashboardFilter
from dashboard.meanings import alpha_words, kappa_words
from dashboard.metrics import metric_rows
from dashboard.pages.monitoring import chart, monitoring_page, page_render
from gating.formatting import number
from gating.roles import WATCH_LEARNING
from learning.statistics.agreement import Statistic


@monitoring_page(WATCH_LEARNING)
def reviewers(request):
    return page_render(request, "dashboard/reviewers.html", reviewers_content)


def reviewers_content(f: DashboardFilter) -> dict:
    agreement_rows = metric_rows("rubric-agreement", f)
    return {
        "kappa": chart("reviewer-kappa", charts.kappa_matrix_chart, f),
        "alpha": chart("reviewer-alpha", charts.alpha_chart, f),
        "reviewers": [_with_shares(row) for row in metric_rows("reviewer-summary", f)],
        "rubric_agreement": charts.figure_data(charts.rubric_agreement_chart(agreement_rows)),
        "rubric_agreement_rows": [_with_band(row) for row in agreement_rows],
        "rubric_scores": chart(
            "rubric-scores", charts.rubric_scores_chart, f, row_type=charts.RubricScoreRow
        ),
    }


def _with_band(row: dict) -> dict:
    """A rubric dimension's agreement as shown, with its band in words (both None without a
    value)."""
    if row["value"] is None:
        return row | {"shown": None, "band": None}
    words = kappa_words if row["statistic"] == Statistic.COHEN_KAPPA else alpha_words
    return row | {"shown": number(row["value"]), "band": words(row["value"])}


def _with_shares(row: dict) -> dict:
    total = row["decisions"]
    return row | {
        f"{action}_share": row[action] / total if total else None
        for action in ("approve", "modify", "reject")
    }
