"""What the learning cycles read: human verdicts, reviewer weights, score samples."""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db.models import Exists, OuterRef

from gating.models import Review, ReviewItem, Rubric, TaskType
from gating.scoring import ApproveRequires, GatePolicy, Guarantee, approval_line
from learning.models import CycleRun, ThresholdChange, TierAssessment, ValidatorAssessment
from learning.statistics import importance
from learning.statistics.forecast import Forecast, forecast_of, need_toward, reading_toward

APPROVE = Review.Action.APPROVE


@dataclass(frozen=True)
class Verdict:
    """The human verdict that stands for one output: its last independent review, once
    every round (second review, adjudication) is done."""

    output_id: int
    task_type_id: int
    model: str
    tier: str
    score: float
    validator_results: list
    reviewer_id: int
    action: str
    inclusion_probability: float
    is_audit: bool
    decided_at: datetime
    decision: str = ""
    withheld: bool = False  # a would-be approval delivered as a warning (gating.scoring)
    scorer: str = ""  # the label of the scorer that decided, e.g. "validators-v1"
    input_clarity: float = 0.0
    coherence: float = 0.0
    requires_fact_check: bool = False

    @property
    def approved_unchanged(self) -> bool:
        return self.action == APPROVE


def verdicts(
    *, since: datetime, until: datetime, with_validators: bool = True, settled: bool = True
) -> list[Verdict]:
    """Final human verdicts decided in [since, until). Bulk decisions are left out: they are
    one lead's call on many outputs, not independent judgments. So are gold checks, and a
    gold check still open leaves its output settled: they check the label model from
    outside (``learning.evidence``). ``with_validators=False``
    skips reading each output's validator results, the bulk of the rows, for the cycles
    that do not use them.

    ``settled=False`` takes every output with a review decided in the window, as its reviews
    stood at ``until``, some rounds (a second review, an adjudication) perhaps still open:
    the outputs the label model judges on the verdicts they have. Which outputs get those
    rounds depends on what the first reviewer found, so that only settled outputs would be
    a sample chosen by its outcome."""
    gold = ReviewItem.Kind.GOLD
    reviews = Review.objects.filter(
        is_bulk=False, decided_at__gte=since, decided_at__lt=until
    ).exclude(item__kind=gold)
    if settled:
        # Final as of ``until``: no round still open, and none decided after it (a rerun of
        # the window, or one running late, sees the same verdicts).
        reviews = reviews.exclude(
            Exists(
                ReviewItem.objects.filter(
                    output=OuterRef("output"), state=ReviewItem.State.OPEN
                ).exclude(kind=gold)
            )
        ).exclude(
            Exists(
                Review.objects.filter(
                    output=OuterRef("output"), is_bulk=False, decided_at__gte=until
                ).exclude(item__kind=gold)
            )
        )
    reviews = reviews.order_by("decided_at", "id")
    columns = {
        "output_id": "output_id",
        "task_type_id": "output__task_type_id",
        "model": "output__model",
        "tier": "output__tier",
        "score": "output__score",
        "reviewer_id": "reviewer_id",
        "action": "action",
        "inclusion_probability": "item__inclusion_probability",
        "is_audit": "item__is_audit",
        "decided_at": "decided_at",
        "decision": "output__decision",
        "withheld": "output__withheld",
        "scorer": "output__scorer",
    }
    if with_validators:
        columns["validator_results"] = "output__validator_results"
        columns["input_clarity"] = "output__input_clarity"
        columns["coherence"] = "output__coherence"
        columns["requires_fact_check"] = "output__requires_fact_check"
    last: dict[int, tuple] = {}
    for row in reviews.values_list(*columns.values()):
        last[row[0]] = row  # later rounds overwrite earlier ones
    names = list(columns)
    return [
        Verdict(**{"validator_results": [], **dict(zip(names, row, strict=True))})
        for row in last.values()
    ]


def verdicts_by_task_type(
    *, since: datetime, until: datetime, with_validators: bool = False
) -> dict[int, list[Verdict]]:
    grouped: dict[int, list[Verdict]] = defaultdict(list)
    for v in verdicts(since=since, until=until, with_validators=with_validators):
        grouped[v.task_type_id].append(v)
    return grouped


def pattern_counts(
    verdicts: list[Verdict],
    names: tuple[str, ...],
    weight: Callable[[Verdict], float] = lambda verdict: 1.0,
) -> importance.PatternCounts:
    """The verdicts grouped by the pass/fail pattern of ``names`` (a validator an output
    did not report counts as passed), with each group's weighted approved and
    not-approved totals."""
    approved: Counter = Counter()
    not_approved: Counter = Counter()
    for v in verdicts:
        failed = {r["name"] for r in v.validator_results if not r.get("passed", True)}
        pattern = tuple(name not in failed for name in names)
        (approved if v.approved_unchanged else not_approved)[pattern] += weight(v)
    patterns = tuple(sorted(set(approved) | set(not_approved)))
    return importance.PatternCounts(
        names=names,
        patterns=patterns,
        approved=tuple(approved[p] for p in patterns),
        not_approved=tuple(not_approved[p] for p in patterns),
    )


def judgments(*, since: datetime, until: datetime) -> list[tuple[int, int, str]]:
    """Every independent (output, reviewer, action) decided in [since, until)."""
    return list(
        Review.objects.filter(is_bulk=False, decided_at__gte=since, decided_at__lt=until)
        .order_by("id")
        .values_list("output_id", "reviewer_id", "action")
    )


def last_certified_approve(task_type_id: int) -> float | None:
    """The approve threshold the last certified thresholds run set for the task type."""
    return (
        ThresholdChange.objects.filter(
            task_type_id=task_type_id,
            which=ThresholdChange.Which.APPROVE,
            state=ThresholdChange.State.CERTIFIED,
        )
        .order_by("-at")
        .values_list("new_value", flat=True)
        .first()
    )


def _latest_in_a_row(task_type_id: int, which: str) -> tuple[ThresholdChange | None, int]:
    """A threshold's latest thresholds-run record, and how many runs in a row (up to 50)
    ended in its state."""
    latest = list(
        ThresholdChange.objects.filter(task_type_id=task_type_id, which=which).order_by(
            "-at", "-id"
        )[:50]
    )
    if not latest:
        return None, 0
    run = 1
    while run < len(latest) and latest[run].state == latest[0].state:
        run += 1
    return latest[0], run


@dataclass(frozen=True)
class GoldCheckRow:
    """A task type's gold checks as its latest thresholds run found them: per measure
    (``learning.statistics.gold.MEASURES``), the label model's mean predicted chance of the
    leads' verdicts against their share, with its interval; empty where the run's window
    held none."""

    task_type: str
    at: datetime
    checks: dict[str, dict]


def gold_check_rows() -> list[GoldCheckRow]:
    """What the calibration page shows of the gold checks, per task type with a thresholds
    run of the guarded policy."""
    rows = []
    for task_type in TaskType.objects.order_by("name"):
        latest = (
            ThresholdChange.objects.filter(
                task_type=task_type, which=ThresholdChange.Which.APPROVE, evidence__has_key="gold"
            )
            .order_by("-at", "-id")
            .first()
        )
        if latest is not None:
            rows.append(GoldCheckRow(task_type.name, latest.at, latest.evidence["gold"]))
    return rows


def approve_history(task_type_id: int) -> tuple[ThresholdChange | None, int]:
    """The approve threshold's latest record and how many runs in a row ended in its state."""
    return _latest_in_a_row(task_type_id, ThresholdChange.Which.APPROVE)


def best_certifiable(evidence: dict) -> tuple[float, float] | None:
    """From an approve record's evidence, (error, threshold) of the budget furthest from
    reach: the one whose best certifiable threshold is highest."""
    found = [
        b
        for b in ((evidence or {}).get(k) for k in ("best_edit", "best_bad"))
        if isinstance(b, dict)
    ]
    if not found:
        return None
    worst = max(found, key=lambda b: b["threshold"])
    return worst["error"], worst["threshold"]


@dataclass(frozen=True)
class ThresholdState:
    """Where one threshold of a task type stands after the latest thresholds run."""

    task_type: str
    which: str
    value: float
    state: str  # certified, underpowered, not_attainable; blank under ADR-0003's rule
    guarantee: str
    reason: str
    at: datetime | None
    runs_in_a_row: int
    best_certifiable_error: float | None
    best_certifiable_threshold: float | None
    # Approve threshold: the effective outputs (Kish's size of the weighted audits) scoring
    # at least ``effective_n_from``, the tenth at or above the candidate certification is
    # heading for (statistics.forecast.reading_toward), against what its bound needs to pass
    # at today's estimates (infinite: no amount would; statistics.forecast.need_toward).
    # Staff's to see: the API's answer leaves them out (learning.api.views).
    effective_n: float | None = None
    effective_n_from: float | None = None
    needed_effective_n: float | None = None
    # Approve threshold: when the need could be met at today's pace (statistics.forecast),
    # and the audits of the last week a day, drawn (the plan) and given a first review.
    forecast: Forecast | None = None
    audits_drawn_per_day: float | None = None
    audits_reviewed_per_day: float | None = None
    # Approve threshold: what is auto-approved from now on, on the latest run's evidence
    # at the value in force: P(needs an edit or bad) and P(bad), each estimated and
    # bounded above at 1 - delta (learning.cycles._in_force); None before it was recorded.
    approved_error: dict | None = None

    @property
    def state_label(self) -> str:
        return ThresholdChange.State(self.state).label if self.state else ""

    @property
    def have_need_words(self) -> str:
        """The approve threshold's effective outputs against its need, in a few words."""
        if self.needed_effective_n is None:
            return "—"
        have = f"{self.effective_n or 0:,.0f}"
        where = "" if self.effective_n_from is None else f" scoring ≥ {self.effective_n_from:.1f}"
        if not math.isfinite(self.needed_effective_n):
            return f"{have}{where}; no amount passes at today's estimates"
        return f"{have} / {self.needed_effective_n:,.0f}{where}"

    @property
    def forecast_words(self) -> str:
        """The certification forecast in a few words; none for a threshold that is not
        attainable, whose estimates are over budget already."""
        if self.state == ThresholdChange.State.NOT_ATTAINABLE:
            return "none: more audits would not help at these budgets"
        return self.forecast.words if self.forecast else "—"


def _guarantee(
    state: str,
    which: str,
    last_certified: float | None,
    *,
    value: float = 0.0,
    auto_approve: bool = True,
    approve_requires: str = ApproveRequires.NOTHING,
    approve_guarantee: str = Guarantee.NONE,
    estimated_line: float | None = None,
) -> str:
    """What the threshold's budget amounts to now, in a few words; an estimated guarantee
    names where the gate approves from (``scoring.approval_line``: the higher of the
    threshold ``value`` and the estimated line)."""
    approve = which == ThresholdChange.Which.APPROVE
    if approve and not auto_approve:
        return "not needed: auto-approval is off"
    if state == ThresholdChange.State.CERTIFIED:
        return "holds"
    requires = ApproveRequires(approve_requires)
    if approve and not requires.allows(Guarantee(approve_guarantee)):
        needed = "certified" if requires is ApproveRequires.CERTIFIED else "certified or estimated"
        return f"none: what reaches it is delivered as a warning until it is {needed}"
    if approve and approve_guarantee == Guarantee.ESTIMATED and estimated_line is not None:
        policy = GatePolicy(
            approve_threshold=value,
            approve_requires=requires,
            approve_guarantee=Guarantee.ESTIMATED,
            estimated_approve=estimated_line,
        )
        return (
            f"estimated: approves from {approval_line(policy, value):g}, where the label "
            "model's estimates are within budget with a margin; uncertified"
        )
    if state == ThresholdChange.State.NOT_ATTAINABLE:
        return "suspended" if approve else "not met: all held"
    if state == ThresholdChange.State.UNDERPOWERED:
        if which == ThresholdChange.Which.REVIEW or last_certified is None:
            return "not shown: uncertified"
        return "not shown now: the last certified value is kept"
    return "none (ADR-0003 rule)"


def threshold_states() -> list[ThresholdState]:
    """Per task type, each threshold's value, state and reason from its latest thresholds
    run ("not assessed yet" before the first), with how many runs in a row ended in that
    state, and, for the approve threshold, the best certifiable error."""
    states = []
    for task_type in TaskType.objects.order_by("name"):
        for which in ThresholdChange.Which:
            latest, run = _latest_in_a_row(task_type.pk, which)
            value = getattr(task_type, f"{which}_threshold")
            if latest is None:
                states.append(
                    ThresholdState(
                        task_type.name,
                        which,
                        value,
                        "",
                        "uncertified",
                        "Not assessed yet.",
                        None,
                        0,
                        None,
                        None,
                    )
                )
                continue
            best = best_certifiable(latest.evidence)
            last_certified = (
                last_certified_approve(task_type.pk)
                if which == ThresholdChange.Which.APPROVE
                else None
            )
            states.append(
                ThresholdState(
                    task_type=task_type.name,
                    which=which,
                    value=value,
                    state=latest.state,
                    guarantee=_guarantee(
                        latest.state,
                        which,
                        last_certified,
                        value=value,
                        auto_approve=task_type.auto_approve,
                        approve_requires=task_type.approve_requires,
                        approve_guarantee=task_type.approve_guarantee,
                        estimated_line=task_type.estimated_approve_threshold,
                    ),
                    reason=latest.reason,
                    at=latest.at,
                    runs_in_a_row=run,
                    best_certifiable_error=best[0] if best else None,
                    best_certifiable_threshold=best[1] if best else None,
                    **_approve_reading(which, latest),
                )
            )
    return states


# How far back the certification forecast measures the pace: the latest run against the
# latest one at least this much older, and the audits reviewed over the last week.
FORECAST_SPAN = timedelta(days=1)
AUDIT_PACE_SPAN = timedelta(days=7)


def certification_forecast_of(latest: ThresholdChange) -> Forecast | None:
    """The approve threshold's forecast after a guarded run (``_approve_reading``)."""
    return _approve_reading(ThresholdChange.Which.APPROVE, latest).get("forecast")


def _approve_reading(which: str, latest: ThresholdChange) -> dict:
    """For the approve threshold after a guarded run: the effective outputs against the
    need, the forecast of when the need is met, and the error of what it approves now.
    Nothing for the review threshold or ADR-0003's rule."""
    evidence = latest.evidence or {}
    if which != ThresholdChange.Which.APPROVE or "needed_effective_n" not in evidence:
        return {}
    reading = reading_toward(evidence)
    before = (
        ThresholdChange.objects.filter(
            task_type_id=latest.task_type_id, which=which, at__lte=latest.at - FORECAST_SPAN
        )
        .order_by("-at", "-id")
        .first()
    )
    reviewed = audits_reviewed(latest.task_type_id, until=latest.at)
    return {
        "effective_n": reading[1] if reading else None,
        "effective_n_from": reading[0] if reading else None,
        "needed_effective_n": need_toward(evidence),
        "forecast": forecast_of(
            evidence,
            # None too where the earlier run read no candidates (ADR-0003's rule then).
            before=before.evidence if before else None,
            days_between=(latest.at - before.at) / timedelta(days=1) if before else 0.0,
            audits_per_day=reviewed / AUDIT_PACE_SPAN.days,
            certified=latest.state == ThresholdChange.State.CERTIFIED,
        ),
        "audits_drawn_per_day": audits_drawn(latest.task_type_id, until=latest.at)
        / AUDIT_PACE_SPAN.days,
        "audits_reviewed_per_day": reviewed / AUDIT_PACE_SPAN.days,
        "approved_error": evidence.get("in_force"),
    }


def audits_drawn(task_type_id: int, *, until: datetime, span: timedelta = AUDIT_PACE_SPAN) -> int:
    """Audits of the task type drawn (queued) in the ``span`` before ``until``: the plan
    that ``audits_reviewed`` is measured against."""
    return ReviewItem.objects.filter(
        task_type_id=task_type_id,
        kind=ReviewItem.Kind.AUDIT,
        queued_at__gte=until - span,
        queued_at__lt=until,
    ).count()


def audits_reviewed(
    task_type_id: int, *, until: datetime, span: timedelta = AUDIT_PACE_SPAN
) -> int:
    """Audits of the task type given their first review in the ``span`` before ``until``
    (a bulk decision leaves audits alone)."""
    return Review.objects.filter(
        item__task_type_id=task_type_id,
        item__kind=ReviewItem.Kind.AUDIT,
        decided_at__gte=until - span,
        decided_at__lt=until,
    ).count()


def routing_advice() -> list[dict]:
    """Per task type, from the latest tiers cycle that succeeded: the recommended tier, the
    reason, and the models ranked by adjusted score."""
    latest = (
        CycleRun.objects.filter(kind=CycleRun.Kind.TIERS, status=CycleRun.Status.SUCCEEDED)
        .order_by("-window_end")
        .first()
    )
    if latest is None:
        return []
    reasons = {c["task_type"]: c for c in latest.changes if "task_type" in c}
    ranked: dict[str, list[dict]] = {}
    for row in (
        TierAssessment.objects.filter(cycle=latest)
        .select_related("task_type")
        .order_by("task_type__name", "rank")
    ):
        ranked.setdefault(row.task_type.name, []).append(
            {
                "model": row.model,
                "tier": row.tier,
                "rank": row.rank,
                "reviews": row.reviews,
                "accuracy": row.accuracy,
                "mean_score": row.mean_score,
                "confidence": row.confidence,
                "adjusted_score": row.adjusted_score,
            }
        )
    return [
        {
            "task_type": name,
            "recommended_tier": reasons.get(name, {}).get("recommended_tier", ""),
            "reason": reasons.get(name, {}).get("reason", ""),
            "assessed_at": latest.window_end,
            "models": models,
        }
        for name, models in ranked.items()
    ]


def validator_assessments(task_type: str, *, since: datetime, until: datetime):
    """Each validators cycle's assessment of each validator of ``task_type`` (by name):
    succeeded cycles whose window ended in [since, until), oldest first. The one home of
    the validators' accuracy, importance and weight over time: the validators page's charts,
    their JSON and CSV, and the accuracy alert all read these rows."""
    return (
        ValidatorAssessment.objects.filter(
            validator__task_type__name=task_type,
            cycle__kind=CycleRun.Kind.VALIDATORS,
            cycle__status=CycleRun.Status.SUCCEEDED,
            cycle__window_end__gte=since,
            cycle__window_end__lt=until,
        )
        .select_related("validator", "cycle")
        .order_by("cycle__window_end", "validator__name")
    )


# --------------------------------------------------------------------------- rubric scores


@dataclass(frozen=True)
class ScoredReview:
    """One review's rubric scores, with the version of the task type's rubric they answer."""

    task_type: str
    rubric_version: int
    dimensions: list
    scores: dict


@dataclass(frozen=True)
class ScoredPair:
    """An output's two independent reviews, first (a review or an audit) and second, both
    scored against the same rubric version."""

    task_type: str
    rubric_version: int
    dimensions: list
    first: dict
    second: dict


def _scored_reviews(*, task_types, models):
    # A bulk decision is one lead's call on many outputs: it scores nothing (gating.bulk)
    # and is no independent judgment.
    reviews = Review.objects.filter(is_bulk=False, rubric__isnull=False)
    if task_types:
        reviews = reviews.filter(output__task_type__name__in=task_types)
    if models:
        reviews = reviews.filter(output__model__in=models)
    return reviews


def _rubrics_of(ids) -> dict[int, tuple[str, int, list]]:
    rows = Rubric.objects.filter(pk__in=set(ids)).values_list(
        "pk", "task_type__name", "version", "dimensions"
    )
    return {pk: (name, version, dimensions) for pk, name, version, dimensions in rows}


def rubric_scored_reviews(
    *, since: datetime, until: datetime, task_types=(), models=()
) -> list[ScoredReview]:
    """Every review decided in [since, until) that scored a rubric (first, second,
    adjudication or gold check; bulk decisions score nothing), of the task types and models
    given (empty: all)."""
    rows = list(
        _scored_reviews(task_types=task_types, models=models)
        .filter(decided_at__gte=since, decided_at__lt=until)
        .order_by("decided_at", "id")
        .values_list("rubric_id", "scores")
    )
    rubric_of = _rubrics_of(rubric_id for rubric_id, _ in rows)
    return [ScoredReview(*rubric_of[rubric_id], scores) for rubric_id, scores in rows]


def rubric_scored_pairs(
    *, since: datetime, until: datetime, task_types=(), models=()
) -> list[ScoredPair]:
    """The outputs whose second review was decided in [since, until), with the scores of
    their first review and of that second one, where both were scored against the same
    rubric version: scores against different versions may answer different questions. An
    adjudication is no independent review (the lead sees both), nor is a gold check."""
    reviews = _scored_reviews(task_types=task_types, models=models)
    seconds = reviews.filter(
        item__kind=ReviewItem.Kind.SECOND, decided_at__gte=since, decided_at__lt=until
    )
    second_of = {
        output_id: (rubric_id, scores)
        for output_id, rubric_id, scores in seconds.order_by("id").values_list(
            "output_id", "rubric_id", "scores"
        )
    }
    firsts = reviews.filter(
        item__kind__in=ReviewItem.FIRST_KINDS, output__in=seconds.values("output")
    ).order_by("output_id")
    matched = [
        (rubric_id, scores, second_of[output_id][1])
        for output_id, rubric_id, scores in firsts.values_list("output_id", "rubric_id", "scores")
        if second_of[output_id][0] == rubric_id
    ]
    rubric_of = _rubrics_of(rubric_id for rubric_id, _, _ in matched)
    return [
        ScoredPair(*rubric_of[rubric_id], first, second) for rubric_id, first, second in matched
    ]
