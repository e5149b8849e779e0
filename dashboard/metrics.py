"""What each dashboard chart shows, as rows: the one query layer behind a chart's page, its
JSON endpoint (/api/v1/metrics/<chart>/) and its CSV download, so the three cannot differ.

Each metric reads the rollups through dashboard.selectors under the filter bar's filter.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import timedelta

from scipy.stats import norm

from dashboard import selectors
from dashboard.estimates import weighted_rate, wilson_interval
from dashboard.filters import DashboardFilter
from gating.models import AuditEvent, TaskType, Validator
from gating.rubrics import DimensionKind
from gating.scoring import Decision
from learning import selectors as learning_selectors
from learning.models import CycleRun, PairAgreement, ReviewerReliability, ThresholdChange
from learning.statistics import agreement, drift

PINNED_REASON = "Held: pinned by an admin."


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


def _cycles(kind: str, f: DashboardFilter):
    """Succeeded cycle runs of a kind whose window ended in the filter's range."""
    return CycleRun.objects.filter(
        kind=kind,
        status=CycleRun.Status.SUCCEEDED,
        window_end__gte=f.since,
        window_end__lt=f.until,
    )


def _threshold_history(f: DashboardFilter) -> list[dict]:
    """Every thresholds cycle's call (moved, held, or held by a pin) and every edit of a
    threshold through the admin, the API or a page, per task type, oldest first."""
    changes = ThresholdChange.objects.filter(at__gte=f.since, at__lt=f.until).select_related(
        "task_type"
    )
    if f.task_types:
        changes = changes.filter(task_type__name__in=f.task_types)
    rows = [
        {
            "at": c.at,
            "task_type": c.task_type.name,
            "which": c.which,
            "before": c.old_value,
            "value": c.new_value,
            "source": "pinned" if c.reason.startswith(PINNED_REASON) else "cycle",
            "reason": c.reason,
            "actor": "",
        }
        for c in changes.order_by("at", "id")
    ]
    edits = (
        AuditEvent.objects.filter(
            action=AuditEvent.Action.THRESHOLD_EDIT, at__gte=f.since, at__lt=f.until
        )
        .exclude(after__source="cycle")
        .select_related("actor")
        .order_by("at", "id")
    )
    names = dict(TaskType.objects.values_list("pk", "name"))
    for event in edits:
        name = names.get(int(event.object_id))
        if name is None or (f.task_types and name not in f.task_types):
            continue
        for which in ("review", "approve"):
            value = (event.after or {}).get(f"{which}_threshold")
            if value is None:
                continue
            rows.append(
                {
                    "at": event.at,
                    "task_type": name,
                    "which": which,
                    "before": (event.before or {}).get(f"{which}_threshold"),
                    "value": value,
                    "source": "admin",
                    "reason": event.after.get("reason", ""),
                    "actor": event.actor.username if event.actor else "",
                }
            )
    return sorted(rows, key=lambda r: (r["at"], r["task_type"], r["which"]))


def _psi(f: DashboardFilter) -> list[dict]:
    """Per task type, model and day (UTC) of the range, the PSI of that day's scores
    against the days before it, as the score-shift alert reads it
    (``learning.statistics.drift.daily_psi``)."""
    window = _window(f) | {"since": f.since - timedelta(days=drift.BASELINE_DAYS)}
    return [
        {"at": day, "task_type": task_type, "model": model, "psi": value}
        for (task_type, model), days in sorted(selectors.daily_score_bins(**window).items())
        for day, value in drift.daily_psi(days).items()
        if day >= f.since.date()
    ]


def validators_task_type(f: DashboardFilter) -> str | None:
    """The one task type the validator charts show: the filter's first, or the first of
    all by name."""
    if f.task_types:
        return f.task_types[0]
    return TaskType.objects.order_by("name").values_list("name", flat=True).first()


def _assessments(f: DashboardFilter):
    return learning_selectors.validator_assessments(
        validators_task_type(f), since=f.since, until=f.until
    )


def _validator_importance(f: DashboardFilter) -> list[dict]:
    """Each validator's importance in the latest validators cycle of the range that
    measured it, beside the weight the gate uses now."""
    latest: dict = {}
    for a in _assessments(f).exclude(importance=None):
        latest[a.validator.name] = a.importance
    weights = dict(
        Validator.objects.filter(task_type__name=validators_task_type(f)).values_list(
            "name", "weight"
        )
    )
    return [
        {"validator": name, "importance": importance, "weight": weights[name]}
        for name, importance in sorted(latest.items())
    ]


def _validator_series(field: str) -> Callable[[DashboardFilter], list[dict]]:
    def rows(f: DashboardFilter) -> list[dict]:
        return [
            {"at": a.cycle.window_end, "validator": a.validator.name, "value": getattr(a, field)}
            for a in _assessments(f)
            if getattr(a, field) is not None
        ]

    return rows


def _latest_agreement(f: DashboardFilter) -> CycleRun | None:
    return _cycles(CycleRun.Kind.AGREEMENT, f).order_by("-window_end").first()


def _reviewer_kappa(f: DashboardFilter) -> list[dict]:
    """Cohen's kappa of each pair of reviewers in the latest agreement cycle of the range
    (the cycle judges every task type together)."""
    cycle = _latest_agreement(f)
    if cycle is None:
        return []
    pairs = PairAgreement.objects.filter(cycle=cycle).select_related("first", "second")
    return [
        {"first": p.first.username, "second": p.second.username, "kappa": p.kappa, "n": p.n}
        for p in pairs.order_by("first__username", "second__username")
    ]


def _reviewer_alpha(f: DashboardFilter) -> list[dict]:
    """Krippendorff's alpha of every agreement cycle in the range, at its window's end."""
    rows = []
    for cycle in _cycles(CycleRun.Kind.AGREEMENT, f).order_by("window_end"):
        alpha = next(
            (c.get("krippendorff_alpha") for c in cycle.changes if isinstance(c, dict)), None
        )
        if alpha is not None:
            rows.append(
                {
                    "at": cycle.window_end,
                    "alpha": alpha,
                    "n": cycle.counts["units_with_two_or_more"],
                }
            )
    return rows


def _reviewer_summary(f: DashboardFilter) -> list[dict]:
    """Per reviewer: decisions by action and their median time (the rollups, under the
    filter), and the Dawid-Skene reliability and agreement with the gate of the latest
    agreement cycle in the range."""
    people: dict = {}

    def person(name: str) -> dict:
        return people.setdefault(
            name,
            {
                "reviewer": name,
                "approve": 0,
                "modify": 0,
                "reject": 0,
                "decisions": 0,
                "median_seconds": None,
                "reliability": None,
                "agreement_with_gate": None,
                "kappa_with_gate": None,
            },
        )

    for row in selectors.reviewer_actions(**_window(f)):
        entry = person(row["reviewer"])
        entry[row["action"]] = entry.get(row["action"], 0) + row["decisions"]
        entry["decisions"] += row["decisions"]
    for row in selectors.reviewer_decision_times(**_window(f)):
        person(row["reviewer"])["median_seconds"] = row["median_seconds"]
    cycle = _latest_agreement(f)
    if cycle is not None:
        for r in ReviewerReliability.objects.filter(cycle=cycle).select_related("reviewer"):
            entry = person(r.reviewer.username)
            entry["reliability"] = r.reliability
            entry["agreement_with_gate"] = r.agreement_with_gate
            entry["kappa_with_gate"] = r.kappa_with_gate
    return [people[name] for name in sorted(people)]


def _rubric_dimensions(items: Iterable) -> dict[tuple[str, str, str], dict]:
    """Each dimension scored in ``items`` (selectors' ScoredReview or ScoredPair), by
    (task type, name, kind), as the latest version that has it defines it: the versions
    of a rubric are pooled where a dimension kept its name and kind. In task type order,
    then the order of the latest version; dimensions dropped since after those kept."""
    latest: dict[tuple[str, str, str], tuple[int, int, dict]] = {}
    for item in items:
        for position, dimension in enumerate(item.dimensions):
            key = (item.task_type, dimension["name"], dimension["kind"])
            if key not in latest or item.rubric_version > latest[key][0]:
                latest[key] = (item.rubric_version, position, dimension)
    ordered = sorted(latest.items(), key=lambda kv: (kv[0][0], -kv[1][0], kv[1][1]))
    return {key: dimension for key, (_, _, dimension) in ordered}


def _kind_of(item, name: str) -> str | None:
    return next((d["kind"] for d in item.dimensions if d["name"] == name), None)


def _rubric_agreement(f: DashboardFilter) -> list[dict]:
    """Per task type and rubric dimension, the agreement of the first and second reviews of
    the outputs double-reviewed in the range, both scored against the same rubric version:
    Cohen's kappa for a choice or a yes/no, interval Krippendorff's alpha for a number;
    no value below ``agreement.MIN_PAIRS`` pairs."""
    pairs = learning_selectors.rubric_scored_pairs(**_window(f))
    rows = []
    for (task_type, name, kind), dimension in _rubric_dimensions(pairs).items():
        scored = [
            (p.first[name], p.second[name])
            for p in pairs
            if p.task_type == task_type
            and _kind_of(p, name) == kind
            # An optional dimension one of the two left unscored makes no pair.
            and name in p.first
            and name in p.second
        ]
        result = agreement.paired_agreement(scored, interval=kind == DimensionKind.NUMERIC)
        rows.append(
            {
                "task_type": task_type,
                "dimension": name,
                "label": dimension["label"],
                "kind": kind,
                "statistic": result.statistic.value,
                "value": result.value,
                "n": result.n,
            }
        )
    return rows


def _value_order(dimension: dict, values: Iterable) -> list:
    """A dimension's values in reading order: a scale upward, yes before no, choices as the
    rubric lists them (those of older versions after them)."""
    values = set(values)
    if dimension["kind"] == DimensionKind.NUMERIC:
        return sorted(values)
    if dimension["kind"] == DimensionKind.BOOLEAN:
        return [v for v in (True, False) if v in values]
    listed = [c for c in dimension["choices"] if c in values]
    return listed + sorted(values - set(listed), key=str)


def _rubric_scores(f: DashboardFilter) -> list[dict]:
    """Per task type and rubric dimension, how many of the reviews decided in the range gave
    each value (every review that scored the rubric, whatever its round)."""
    scored = learning_selectors.rubric_scored_reviews(**_window(f))
    counts: Counter = Counter()
    for review in scored:
        for dimension in review.dimensions:
            if dimension["name"] in review.scores:
                key = (review.task_type, dimension["name"], dimension["kind"])
                counts[key, review.scores[dimension["name"]]] += 1
    rows = []
    for key, dimension in _rubric_dimensions(scored).items():
        given = {value: n for (k, value), n in counts.items() if k == key}
        for value in _value_order(dimension, given):
            rows.append(
                {
                    "task_type": key[0],
                    "dimension": key[1],
                    "label": dimension["label"],
                    "kind": key[2],
                    "value": value,
                    "reviews": given[value],
                }
            )
    return rows


def _calibration(f: DashboardFilter) -> list[dict]:
    rows = []
    for bucket in selectors.calibration_buckets(**_window(f)):
        if not bucket["reviewed"]:
            continue
        low, high = wilson_interval(bucket["approved"] / bucket["reviewed"], bucket["reviewed"])
        rows.append(bucket | {"low": low, "high": high})
    return rows


def hanley_mcneil_interval(
    area: float, positives: int, negatives: int, confidence: float = 0.95
) -> tuple[float, float]:
    """A normal interval for an AUROC from Hanley and McNeil's (1982) standard error, which
    takes the two classes' scores as exponential-like: Q1 = A / (2 - A), Q2 = 2A² / (1 + A).
    Clipped to [0, 1]."""
    q1, q2 = area / (2 - area), 2 * area * area / (1 + area)
    variance = (
        area * (1 - area)
        + (positives - 1) * (q1 - area * area)
        + (negatives - 1) * (q2 - area * area)
    ) / (positives * negatives)
    half = norm.ppf(0.5 + confidence / 2) * math.sqrt(max(variance, 0.0))
    return max(0.0, area - half), min(1.0, area + half)


def _auroc_cell(positive: list[int], negative: list[int]) -> dict | None:
    """The AUROC of bucket counts with its 95% Hanley-McNeil interval and n; None without
    both kinds."""
    area = selectors.auroc(positive, negative)
    if area is None:
        return None
    positives, negatives = sum(positive), sum(negative)
    low, high = hanley_mcneil_interval(area, positives, negatives)
    return {"auroc": area, "low": low, "high": high, "n": positives + negatives}


def _auroc(f: DashboardFilter) -> list[dict]:
    """The AUROC of the score as a predictor of approval unchanged, per task type and
    model, with a 95% Hanley-McNeil interval; pairs without both kinds left out."""
    rows = []
    for pair in selectors.approval_counts_by_pair(**_window(f)):
        if cell := _auroc_cell(pair["approved"], pair["not_approved"]):
            rows.append({"task_type": pair["task_type"], "model": pair["model"], **cell})
    return rows


def _scorer_auroc(f: DashboardFilter) -> list[dict]:
    """Per task type and scorer, the AUROC of the scorer's score against the reviewers'
    first decisions and, where the outputs were simulated, against the truth, with a 95%
    Hanley-McNeil interval, each on the reviewed outputs it scored; and the share of
    outputs it tied at the top of the scale."""
    rows = []
    for counts in selectors.scorer_counts(**_window(f)):
        if cell := _auroc_cell(counts["positive"], counts["negative"]):
            keys = {k: counts[k] for k in ("task_type", "scorer", "against")}
            tied = selectors.tied_at_10(counts["weight"], counts["top_weight"])
            rows.append(keys | cell | {"tied_at_10": tied})
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
    "queue-age": Metric(
        "Pending items by time waiting",
        "The open items of the range's latest queue snapshot by how long they had waited: "
        "[{lower_seconds, upper_seconds, count}] (no upper: or longer).",
        lambda f: selectors.queue_age_distribution(**_window(f)),
    ),
    "reviewer-decisions": Metric(
        "Decisions per reviewer per day",
        "Decisions each reviewer made per day (UTC), bulk decisions left out: "
        "[{day, reviewer, decisions}].",
        lambda f: selectors.decisions_per_reviewer_per_day(**_window(f)),
    ),
    "reviewer-times": Metric(
        "Median decision time",
        "Each reviewer's median time from claim to decision, estimated from time buckets, "
        "and the exact mean: [{reviewer, median_seconds, decisions, mean_seconds}].",
        lambda f: selectors.reviewer_decision_times(**_window(f)),
    ),
    "threshold-history": Metric(
        "Threshold history",
        "Every thresholds cycle's call on each threshold (source cycle, or pinned when a pin "
        "held it) and every other edit of a threshold (source admin), with the reason and "
        "who: [{at, task_type, which, before, value, source, reason, actor}].",
        _threshold_history,
    ),
    "score-heatmap": Metric(
        "Scores over time",
        "Outputs per day (UTC) and half-point score bucket: [{day, lower, upper, count}].",
        lambda f: selectors.score_heatmap(**_window(f)),
    ),
    "approval-by-band": Metric(
        "Approval by score band",
        "Per two-point score band and day of review, outputs reviewers approved unchanged of "
        "those they reviewed (first reviews): [{day, band, approved, reviewed}].",
        lambda f: selectors.approval_rate_by_band(**_window(f)),
    ),
    "model-scores": Metric(
        "Mean score per model",
        "Each model's mean score per day (UTC), exact (from the score sums): "
        "[{day, model, mean_score, outputs}].",
        lambda f: selectors.mean_score_by_day(**_window(f)),
    ),
    "psi": Metric(
        "Score drift (PSI)",
        "Per task type, model and day (UTC), the population stability index of the day's "
        f"scores against the {drift.BASELINE_DAYS} days before, in one-point bins; days where "
        f"either side has fewer than {drift.MIN_OUTPUTS} outputs are left out: "
        "[{at, task_type, model, psi}].",
        _psi,
    ),
    "validator-importance": Metric(
        "Validator importance and weight",
        "For one task type (the filter's first, or the first by name), each validator's "
        "importance (Shapley value, nats) in the range's latest validators cycle, and the "
        "weight the gate uses now: [{validator, importance, weight}].",
        _validator_importance,
    ),
    "validator-accuracy": Metric(
        "Validator accuracy",
        "For one task type, each validator's accuracy per validators cycle: "
        "[{at, validator, value}].",
        _validator_series("accuracy"),
    ),
    "validator-weights": Metric(
        "Validator weights",
        "For one task type, the weight each validators cycle left each validator with: "
        "[{at, validator, value}].",
        _validator_series("new_weight"),
    ),
    "reviewer-kappa": Metric(
        "Agreement between reviewers",
        "Cohen's kappa of each pair of reviewers over the outputs both judged, from the "
        "range's latest agreement cycle: [{first, second, kappa, n}].",
        _reviewer_kappa,
    ),
    "reviewer-alpha": Metric(
        "Krippendorff's alpha",
        "Krippendorff's alpha (nominal) of all reviewers per agreement cycle, over the "
        "outputs two or more judged: [{at, alpha, n}].",
        _reviewer_alpha,
    ),
    "reviewer-summary": Metric(
        "Reviewers",
        "Per reviewer: decisions by action, their median time, and the latest agreement "
        "cycle's Dawid-Skene reliability and agreement with the gate: [{reviewer, approve, "
        "modify, reject, decisions, median_seconds, reliability, agreement_with_gate, "
        "kappa_with_gate}].",
        _reviewer_summary,
    ),
    "rubric-agreement": Metric(
        "Agreement per rubric dimension",
        "Per task type and rubric dimension, the agreement of the first and the second review "
        "of the outputs whose second review was decided in the range, over the n pairs "
        "scored against the same rubric version (bulk decisions left out): Cohen's kappa "
        "(statistic cohen_kappa) for a choice or a yes/no, interval Krippendorff's alpha "
        "(krippendorff_alpha_interval) for a number; value null below "
        f"{agreement.MIN_PAIRS} pairs or where undefined: "
        "[{task_type, dimension, label, kind, statistic, value, n}].",
        _rubric_agreement,
    ),
    "rubric-scores": Metric(
        "Rubric scores",
        "Per task type and rubric dimension, how many reviews decided in the range gave each "
        "value (bulk decisions left out, which score nothing): "
        "[{task_type, dimension, label, kind, value, reviews}].",
        _rubric_scores,
    ),
    "calibration": Metric(
        "Reliability diagram",
        "Per half-point score bucket, first reviews approved unchanged of those reviewed, "
        "with a 95% Wilson interval: [{lower, upper, approved, reviewed, low, high}].",
        _calibration,
    ),
    "score-by-action": Metric(
        "Scores by the reviewer's decision",
        "Reviewed outputs per half-point score bucket and the reviewer's action: "
        "[{lower, upper, action, count}].",
        lambda f: selectors.score_histogram_by_action(**_window(f)),
    ),
    "auroc": Metric(
        "AUROC of the score",
        "Per task type and model, the AUROC of the score as a predictor of approval "
        "unchanged, with a 95% Hanley-McNeil interval, over n reviewed outputs: "
        "[{task_type, model, auroc, low, high, n}].",
        _auroc,
    ),
    "scorer-auroc": Metric(
        "AUROC of each scorer",
        "Per task type and scorer (the deciding one and those that scored in shadow), the "
        "AUROC of its score against the reviewers' first decisions (approved unchanged or "
        "not) and, for simulated outputs, against the truth (good or not), with a 95% "
        "Hanley-McNeil interval, over the n reviewed outputs that scorer scored (deciding "
        "or in shadow: a scorer that reads evidence counts only outputs that carried it); "
        "and tied_at_10, the estimated share of outputs it scored at 10 (9.9995 or more), "
        "which no threshold can separate, from the same outputs weighted by 1 / their "
        "chance of review (null without weights): "
        "[{task_type, scorer, against, auroc, low, high, n, tied_at_10}].",
        _scorer_auroc,
    ),
}


def metric_rows(name: str, dashboard_filter: DashboardFilter) -> list[dict]:
    return METRICS[name].rows(dashboard_filter)
