"""What each dashboard chart shows, as rows: the one query layer behind a chart's page, its
JSON endpoint (/api/v1/metrics/<chart>/) and its CSV download, so the three cannot differ.

Each metric reads the rollups through dashboard.selectors under the filter bar's filter.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from dashboard import selectors
from dashboard.estimates import weighted_rate
from dashboard.filters import DashboardFilter
from gating.scoring import Decision


def _window(f: DashboardFilter) -> dict:
    return {"since": f.since, "until": f.until, "task_types": f.task_types, "models": f.models}


@dataclass(frozen=True)
class Metric:
    title: str
    description: str
    rows: Callable[[DashboardFilter], list[dict]]


def _audit_estimates(f: DashboardFilter) -> list[dict]:
    cells = selectors.audit_cells(**_window(f))
    rows = []
    for decision in (Decision.APPROVED, Decision.WARNING):
        estimate = weighted_rate(c for c in cells if c["decision"] == decision)
        rows.append(
            {
                "decision": decision.value,
                "audits": estimate.audits,
                "effective_n": round(estimate.effective_n, 2),
                "rate": estimate.rate,
                "low": estimate.low,
                "high": estimate.high,
            }
        )
    return rows


METRICS: dict[str, Metric] = {
    "score-histogram": Metric(
        "Scores by decision",
        "Outputs per half-point score bucket and gate decision: [{lower, upper, decision, count}].",
        lambda f: selectors.score_histogram(**_window(f)),
    ),
    "outputs-by-decision": Metric(
        "Outputs by decision and status",
        "Outputs created per day by the gate's decision and their status now: "
        "[{at, decision, status, count}].",
        lambda f: selectors.outputs_by_decision_and_status(**_window(f)),
    ),
    "review-share": Metric(
        "Share held for review",
        "Per day, outputs created and how many the gate held for review: [{at, outputs, held}].",
        lambda f: selectors.review_share(**_window(f)),
    ),
    "audit-estimates": Metric(
        "Estimated non-approval of delivered outputs",
        "For auto-approved and warning outputs, the share a reviewer would not approve "
        "unchanged, estimated from the audits weighted by 1 / inclusion probability, with a "
        "95% Wilson interval at Kish's effective sample size: "
        "[{decision, audits, effective_n, rate, low, high}].",
        _audit_estimates,
    ),
    "queue-size": Metric(
        "Queue size",
        "Open review items at each snapshot (every five minutes): [{at, open_items}].",
        lambda f: selectors.queue_size_series(**_window(f)),
    ),
}


def metric_rows(name: str, dashboard_filter: DashboardFilter) -> list[dict]:
    return METRICS[name].rows(dashboard_filter)
