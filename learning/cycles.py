"""The learning cycles: each reads the human verdicts of a window and adjusts the gate.

``cycle_run(kind, at)`` is the one entry point, for Celery, the run_cycle command, the
admin's "run now" button and the simulator. A run is idempotent per (kind, window): the
window ends at ``at`` rounded down to the cycle's period, and a run that already
succeeded for it is returned as it is. The attempt is recorded as running first, in its
own transaction; everything the run then writes, its own record's success included,
commits in one more, so a worker killed mid-cycle leaves nothing half-written, only a
"running" record that cycles_resume queues again within minutes.
"""

from __future__ import annotations

import logging
import math
from collections import defaultdict
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.db.models import Avg, F, Max
from django.utils import timezone

from gating import scoring, services
from gating.models import Output, TaskType, Validator
from gating.outbox import outbox_enqueue
from learning import alerts, evidence, selectors
from learning.models import (
    CycleRun,
    PairAgreement,
    ReviewerReliability,
    ThresholdChange,
    TierAssessment,
    ValidatorAssessment,
)
from learning.services import CYCLE_TASK
from learning.statistics import agreement, importance, thresholds, tiers, weights

log = logging.getLogger(__name__)
Kind = CycleRun.Kind

PERIODS = {
    Kind.VALIDATORS: timedelta(hours=6),
    Kind.THRESHOLDS: timedelta(hours=12),
    Kind.TIERS: timedelta(hours=24),
    Kind.AGREEMENT: timedelta(hours=6),
    Kind.ALERTS: timedelta(minutes=5),
}
ADR_WINDOW = timedelta(hours=48)
# Without row locks to tell a live run from a dead one (SQLite), only a run still
# "running" this long after it started is taken for lost.
STALLED_AFTER = timedelta(hours=1)
_EPOCH = datetime(2000, 1, 3, tzinfo=UTC)  # a Monday at midnight: windows align to it


def window_end(kind: str, at: datetime) -> datetime:
    period = PERIODS[Kind(kind)]
    return _EPOCH + ((at - _EPOCH) // period) * period


def cycle_run(kind: str, at: datetime | None = None) -> CycleRun:
    """Run the ``kind`` cycle for the window ending at ``at`` rounded down to its period,
    once: a run that already succeeded for that window is returned unchanged."""
    kind = Kind(kind)
    end = window_end(kind, at or timezone.now())
    start = end - _lookback(kind)
    try:
        _start(kind, start, end)
        with transaction.atomic():
            # Held until the work commits: a concurrent duplicate waits here, then finds
            # it succeeded; and cycles_resume tells a live run from a dead one by it.
            run = CycleRun.objects.select_for_update().get(kind=kind, window_end=end)
            if run.status == CycleRun.Status.SUCCEEDED:
                return run
            counts, changes = _CYCLES[kind](run)
            run.status = CycleRun.Status.SUCCEEDED
            run.finished_at = timezone.now()
            run.counts, run.changes, run.error = counts, changes, ""
            run.save()
    except Exception as exc:
        _record_failure(kind, start, end, exc)
        raise
    return run


def _start(kind: Kind, start: datetime, end: datetime) -> None:
    """Record the attempt as running, committed before the work begins, unless the window
    has succeeded: a worker killed mid-cycle leaves its run "running" and unlocked, which
    is how cycles_resume finds it."""
    now = timezone.now()
    try:
        with transaction.atomic():
            CycleRun.objects.get_or_create(
                kind=kind, window_end=end, defaults={"window_start": start, "started_at": now}
            )
    except IntegrityError:
        pass  # created concurrently: the update below counts this attempt on it
    # A conditional UPDATE: one that waited on a concurrent run's lock re-reads the status
    # after that run commits, so a success is never turned back into "running".
    CycleRun.objects.filter(kind=kind, window_end=end).exclude(
        status=CycleRun.Status.SUCCEEDED
    ).update(
        status=CycleRun.Status.RUNNING,
        attempts=F("attempts") + 1,
        started_at=now,
        window_start=start,
    )


def cycles_resume(*, now: datetime | None = None) -> list[CycleRun]:
    """Queue again the runs whose worker died mid-cycle; returns them.

    A run is dead when it is still "running" CYCLE_RESUME_AFTER_SECONDS after it started and no
    transaction holds its row: a live run holds it until it commits (cycle_run). Where the
    database cannot skip locked rows (SQLite), only age tells, so the wait is STALLED_AFTER.
    The run is queued through the outbox for its own window, so the redelivery finds the
    same record, and anything already done is not done again.
    """
    now = now or timezone.now()
    skip_locked = connection.features.has_select_for_update_skip_locked
    resume_after = timedelta(seconds=settings.CYCLE_RESUME_AFTER_SECONDS)
    older_than = now - (resume_after if skip_locked else STALLED_AFTER)
    with transaction.atomic():
        runs = list(
            CycleRun.objects.select_for_update(skip_locked=skip_locked).filter(
                status=CycleRun.Status.RUNNING, started_at__lt=older_than
            )
        )
        for run in runs:
            log.warning(
                "%s cycle for the window ending %s was lost; queued again", run.kind, run.window_end
            )
            # Restart the clock, so that the next pass does not queue it again while the
            # message waits for a worker.
            run.started_at = now
            run.save(update_fields=["started_at"])
            outbox_enqueue(CYCLE_TASK, run.kind, run.window_end.isoformat())
    return runs


def cycles_due(moment: datetime) -> list[Kind]:
    """The cycles whose period boundary ``moment`` is, in the order beat would run them:
    agreement first (the others weight reviewers by it), alerts last."""
    order = (Kind.AGREEMENT, Kind.VALIDATORS, Kind.THRESHOLDS, Kind.TIERS, Kind.ALERTS)
    return [kind for kind in order if window_end(kind, moment) == moment]


def cycles_run_due(moment: datetime) -> list[CycleRun]:
    """Run every cycle due at ``moment``: how the simulator replays beat's schedule. (It
    calls this on the hour, so alerts are checked hourly there rather than every 5 min.)"""
    return [cycle_run(kind, moment) for kind in cycles_due(moment)]


def _lookback(kind: Kind) -> timedelta:
    if kind == Kind.ALERTS:
        return PERIODS[Kind.ALERTS]
    return timedelta(days=settings.LEARNING_LOOKBACK_DAYS)


def _record_failure(kind: Kind, start: datetime, end: datetime, exc: Exception) -> None:
    """Record a failed attempt, unless a duplicate that waited on this window's lock has
    succeeded meanwhile: a success is never overwritten."""
    log.exception("%s cycle for the window ending %s failed", kind, end)
    failure = {
        "status": CycleRun.Status.FAILED,
        "error": f"{type(exc).__name__}: {exc}",
        "finished_at": timezone.now(),
    }
    runs = CycleRun.objects.filter(kind=kind, window_end=end)
    # _start counted the attempt, in its own transaction.
    if runs.exclude(status=CycleRun.Status.SUCCEEDED).update(**failure):
        return
    if runs.exists():
        return  # succeeded meanwhile
    try:
        with transaction.atomic():
            CycleRun.objects.create(
                kind=kind,
                window_end=end,
                window_start=start,
                started_at=timezone.now(),
                attempts=1,
                **failure,
            )
    except IntegrityError:
        pass  # another attempt recorded this window first


# --------------------------------------------------------------------------- validators


def _validators_cycle(run: CycleRun):
    """Each validator's weight moves toward its coefficient in a logistic model of the
    label model's P(needs an edit or bad): how much a failure says, not how often it
    matters. The Shapley importance is kept beside it, as the explanation."""
    found = evidence.judged_evidence(
        since=run.window_start, until=run.window_end, fit_share=settings.LEARNING_FIT_SHARE
    )
    validators_of: dict[int, dict[str, Validator]] = defaultdict(dict)
    for v in Validator.objects.filter(task_type__in=found.by_task_type):
        validators_of[v.task_type_id][v.name] = v
    counts = {"task_types": 0, "verdicts": 0, "reweighted": 0}
    changes = []
    assessments = []
    edits = []
    for task_type in TaskType.objects.filter(pk__in=found.by_task_type):
        own = found.by_task_type[task_type.pk]
        validators = validators_of[task_type.pk]
        names = own.validator_names
        errors = found.error_evidence(task_type.pk)
        n = errors.verdicts
        counts["task_types"] += 1
        counts["verdicts"] += n
        if n < settings.LEARNING_MIN_VERDICTS or not names:
            changes.append(
                {
                    "task_type": task_type.name,
                    "held": f"{n} verdicts; the cycle needs "
                    f"{settings.LEARNING_MIN_VERDICTS} to reweight.",
                }
            )
            continue
        update = weights.weight_update(
            {name: validators[name].weight for name in names},
            errors,
            min_verdicts=settings.LEARNING_MIN_VERDICTS,
            max_step=settings.LEARNING_MAX_WEIGHT_STEP,
            floor=settings.LEARNING_WEIGHT_FLOOR,
        )
        explained = errors.as_pattern_counts()
        accuracy = importance.validator_accuracy(explained)
        found_importance = (
            importance.validator_importance(explained)
            if len(names) <= importance.MAX_EXACT
            else dict.fromkeys(names)
        )
        new = update.weights
        for name in names:
            assessments.append(
                ValidatorAssessment(
                    cycle=run,
                    validator=validators[name],
                    n=n,
                    accuracy=accuracy[name],
                    importance=found_importance[name],
                    coefficient=update.coefficients.get(name),
                    held=update.held.get(name, ""),
                    old_weight=validators[name].weight,
                    new_weight=new[name],
                )
            )
        moved = {name: new[name] for name in names if new[name] != validators[name].weight}
        for name, weight in moved.items():
            changes.append(
                {
                    "task_type": task_type.name,
                    "validator": name,
                    "old": validators[name].weight,
                    "new": weight,
                    "coefficient": round(update.coefficients[name], 6),
                }
            )
        counts["reweighted"] += len(moved)
        if moved:
            edits.append(
                services.GateSettingsEdit(
                    task_type,
                    weights=moved,
                    reason=f"Moved toward each validator's log odds ratio of error in {n} "
                    "verdicts (the label model's P(needs an edit or bad)).",
                    context={"cycle": run.pk},
                )
            )
    ValidatorAssessment.objects.bulk_create(assessments)
    _gate_settings_change(run, edits)
    return counts, changes


def _gate_settings_change(run: CycleRun, edits: list[services.GateSettingsEdit]) -> None:
    """A cycle's moves, through the gate settings service as anyone's: audited with no
    actor at the window's end, and applied to the gate when the run commits."""
    if edits:
        services.gate_settings_change_many(
            edits=edits, actor=None, source=services.EditSource.CYCLE, at=run.window_end
        )


# --------------------------------------------------------------------------- thresholds


def _thresholds_cycle(run: CycleRun):
    now = run.window_end
    # Read once, on the first task type that needs them.
    found = adr_verdicts = None
    counts = {"task_types": 0, "verdicts": 0, "moved": 0}
    changes = []
    records = []
    edits = []
    # Locked as the gate settings service locks them, which lets new outputs in meanwhile.
    for task_type in TaskType.objects.select_for_update(no_key=True).order_by("pk"):
        counts["task_types"] += 1
        if task_type.threshold_policy == TaskType.ThresholdPolicy.ADR0003:
            if adr_verdicts is None:
                adr_verdicts = selectors.verdicts_by_task_type(since=now - ADR_WINDOW, until=now)
            recent = [
                thresholds.Judged(v.score, v.approved_unchanged)
                for v in adr_verdicts.get(task_type.pk, [])
                if not v.is_audit
            ]
            counts["verdicts"] += len(recent)
            proposals = thresholds.adr0003(
                recent, review=task_type.review_threshold, approve=task_type.approve_threshold
            )
            audit_rate = task_type.audit_rate_approved
        else:
            if found is None:
                found = evidence.judged_evidence(
                    since=run.window_start,
                    until=now,
                    replicates=settings.LEARNING_LABEL_REPLICATES,
                    seed=run.pk,
                    fit_share=settings.LEARNING_FIT_SHARE,
                )
            proposals, audit_rate = _guarded(task_type, found)
            counts["verdicts"] += (
                len(found.by_task_type[task_type.pk].rows)
                if task_type.pk in found.by_task_type
                else 0
            )
        final = thresholds.constrain(
            proposals,
            pins={
                "review": task_type.review_threshold_pinned,
                "approve": task_type.approve_threshold_pinned,
            },
        )
        guarantee = _approve_guarantee(proposals, final["approve"])
        if task_type.threshold_policy != TaskType.ThresholdPolicy.ADR0003:
            approve = final["approve"]
            approve.evidence["in_force"] = _in_force(task_type, found, approve, guarantee)
            approve.evidence["gold"] = {
                measure: check.as_record()
                for measure, check in found.gold_checks(
                    task_type.pk, confidence=1 - task_type.delta
                ).items()
            }
        records += _threshold_records(run, task_type, final)
        moved = [final[w] for w in ("review", "approve") if final[w].new != final[w].old]
        counts["moved"] += len(moved)
        changes += [
            {
                "task_type": task_type.name,
                "threshold": p.which,
                "old": p.old,
                "new": p.new,
                "state": str(p.state),
            }
            for p in moved
        ]
        updates = {f"{p.which}_threshold": p.new for p in moved}
        reasons = [f"{p.which.capitalize()}: {p.reason}" for p in moved]
        line = final["approve"].estimate
        if line != task_type.estimated_approve_threshold:
            updates[services.ESTIMATED_LINE] = line
            if line is not None:
                reasons.append(f"Estimated approve line: {line:g}.")
        if guarantee != task_type.approve_guarantee:
            updates[services.GUARANTEE] = guarantee
            reasons.append(_GUARANTEE_CHANGE[guarantee])
            changes.append(
                {
                    "task_type": task_type.name,
                    services.GUARANTEE: str(guarantee),
                    "old": task_type.approve_guarantee,
                }
            )
        if audit_rate != task_type.audit_rate_approved:
            updates["audit_rate_approved"] = audit_rate
            reasons.append(
                f"Audits of auto-approved outputs raised to {audit_rate:g} (the budget), "
                "while the approve threshold is underpowered."
            )
            changes.append(
                {
                    "task_type": task_type.name,
                    "audit_rate_approved": audit_rate,
                    "old": task_type.audit_rate_approved,
                }
            )
        if updates:
            edits.append(
                services.GateSettingsEdit(
                    task_type,
                    changes=updates,
                    reason=" ".join(reasons),
                    context={"cycle": run.pk, "policy": task_type.threshold_policy},
                )
            )
    ThresholdChange.objects.bulk_create(records)
    _gate_settings_change(run, edits)
    return counts, changes


_GUARANTEE_CHANGE = {
    scoring.Guarantee.CERTIFIED: "The approve threshold is certified.",
    scoring.Guarantee.ESTIMATED: "Uncertified: approvals follow the estimated approve line.",
    scoring.Guarantee.NONE: "The approve threshold is neither certified nor estimated.",
}


def _approve_guarantee(proposals, final: thresholds.Proposal) -> scoring.Guarantee:
    """Certified when this run certified the approve threshold now in force: the candidate
    it certified, or a pinned value above it (every candidate above a certified one passed
    its test too); a pinned value below it is not. Otherwise estimated where the run set
    an estimated approve line (the gate approves from the higher of it and the threshold,
    pinned or not); ADR-0003's rule, or any other state: none."""
    proposed = next(p for p in proposals if p.which == "approve")
    if final.state == thresholds.State.CERTIFIED and final.new >= proposed.new:
        return scoring.Guarantee.CERTIFIED
    if final.estimate is not None:
        return scoring.Guarantee.ESTIMATED
    return scoring.Guarantee.NONE


def _budgets(task_type: TaskType) -> thresholds.Budgets:
    return thresholds.Budgets(
        alpha_bad=task_type.alpha_bad,
        alpha_edit=task_type.alpha_approve,
        alpha_warning=task_type.alpha_warning,
        delta=task_type.delta,
    )


def _guarded(task_type: TaskType, found: evidence.JudgedEvidence):
    """The guarded policy's proposals for one task type, and the audit rate to use next."""
    budgets = _budgets(task_type)
    last_certified = selectors.last_certified_approve(task_type.pk)
    proposals = thresholds.guarded(
        found.window(task_type.pk),
        review=task_type.review_threshold,
        approve=task_type.approve_threshold,
        budgets=budgets,
        last_certified=last_certified,
        estimate=task_type.approve_requires == scoring.ApproveRequires.ESTIMATE,
        estimate_line=task_type.estimated_approve_threshold,
    )
    approve = next(p for p in proposals if p.which == "approve")
    approve.evidence["audits"] = found.audits_achieved(task_type.pk)
    audit_rate = thresholds.audit_rate(
        approve.state, task_type.audit_rate_approved, budget=task_type.audit_rate_budget
    )
    return proposals, audit_rate


def _in_force(
    task_type: TaskType,
    found: evidence.JudgedEvidence,
    approve: thresholds.Proposal,
    guarantee: scoring.Guarantee,
) -> dict:
    """What the outputs auto-approved from now on are estimated to be, on this run's
    evidence (``thresholds.reading_at``), from where the gate will approve them
    (``scoring.approval_line``). Where it approves nothing, what the approve threshold
    would approve, with ``approves_from`` None."""
    policy = scoring.GatePolicy(
        approve_threshold=approve.new,
        approve_requires=scoring.ApproveRequires(task_type.approve_requires),
        approve_guarantee=guarantee,
        estimated_approve=approve.estimate,
    )
    line = scoring.approval_line(policy, approve.new)
    approves_from = line if math.isfinite(line) else None
    reading = thresholds.reading_at(
        found.window(task_type.pk),
        approve.new if approves_from is None else approves_from,
        _budgets(task_type),
    )
    return {**reading, "approves_from": approves_from}


def _threshold_records(run: CycleRun, task_type: TaskType, final: dict) -> list[ThresholdChange]:
    """The cycle's decision on each threshold of the task type, moved or held, with its
    state and evidence."""
    rows = []
    for which in ("review", "approve"):
        p = final[which]
        shown = _shown_evidence(which, p.evidence)
        rows.append(
            ThresholdChange(
                cycle=run,
                task_type=task_type,
                which=which,
                policy=task_type.threshold_policy,
                state=str(p.state),
                old_value=p.old,
                new_value=p.new,
                n=shown.get("n") or 0,
                not_approved=shown.get("estimate"),
                bound=shown.get("bound"),
                reason=p.reason,
                evidence=p.evidence,
                at=run.window_end,
            )
        )
    return rows


def _shown_evidence(which: str, evidence: dict) -> dict:
    """The figures a threshold's history shows: for the approve threshold, the P(edit or
    bad) at the certified candidate (or the one that stopped the search, or the one with
    the most data); for the review threshold, the warning band's P(bad); for ADR-0003's
    rule, its count."""
    if not evidence:
        return {}
    if "rate" in evidence:  # ADR-0003
        return {"n": evidence["n"], "estimate": None, "bound": None}
    if which == "review":
        return evidence.get("band") or {}
    at = evidence.get("certified") or evidence.get("stopped_at") or evidence.get("most_data")
    return (at or {}).get("edit") or {}


# --------------------------------------------------------------------------- tiers


def _tiers_cycle(run: CycleRun):
    by_task_type = selectors.verdicts_by_task_type(since=run.window_start, until=run.window_end)
    outputs = Output.objects.filter(created_at__gte=run.window_start, created_at__lt=run.window_end)
    mean_scores = {
        (row["task_type_id"], row["model"]): row
        for row in outputs.values("task_type_id", "model").annotate(
            mean=Avg("score"), tier=Max("tier")
        )
    }
    fast_last_day = dict(
        outputs.filter(tier="fast", created_at__gte=run.window_end - timedelta(days=1))
        .values("task_type_id")
        .annotate(mean=Avg("score"))
        .values_list("task_type_id", "mean")
    )
    counts = {"task_types": 0, "models": 0, "recommendations_changed": 0}
    changes = []
    task_type_ids = {tt for tt, _ in mean_scores} | set(by_task_type)
    for task_type in TaskType.objects.filter(pk__in=task_type_ids).order_by("pk"):
        reviewed: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        for v in by_task_type.get(task_type.pk, []):
            reviewed[v.model][0] += 1
            reviewed[v.model][1] += int(v.approved_unchanged)
        models = {m for tt, m in mean_scores if tt == task_type.pk} | set(reviewed)
        records = [
            tiers.ModelRecord(
                model=m,
                tier=(mean_scores.get((task_type.pk, m)) or {}).get("tier") or "",
                reviews=reviewed[m][0],
                approved_unchanged=reviewed[m][1],
                mean_score=(mean_scores.get((task_type.pk, m)) or {}).get("mean"),
            )
            for m in sorted(models)
        ]
        ranking = tiers.ranked(records)
        TierAssessment.objects.bulk_create(
            TierAssessment(
                cycle=run,
                task_type=task_type,
                model=r.model,
                tier=r.tier,
                reviews=r.reviews,
                accuracy=r.accuracy,
                mean_score=r.mean_score,
                confidence=r.confidence,
                adjusted_score=r.adjusted_score,
                rank=rank,
            )
            for rank, r in enumerate(ranking, start=1)
        )
        tier, reason = tiers.recommended_tier(
            fast_last_day.get(task_type.pk), task_type.recommended_tier
        )
        counts["task_types"] += 1
        counts["models"] += len(records)
        changes.append({"task_type": task_type.name, "recommended_tier": tier, "reason": reason})
        if tier != task_type.recommended_tier:
            counts["recommendations_changed"] += 1
            task_type.recommended_tier = tier
            task_type.save(update_fields=["recommended_tier", "updated_at"])
    return counts, changes


# --------------------------------------------------------------------------- agreement


def _agreement_cycle(run: CycleRun):
    rows = selectors.judgments(since=run.window_start, until=run.window_end)
    counts = {"judgments": len(rows), "reviewers": 0, "units_with_two_or_more": 0}
    if not rows:
        return counts, [{"held": "No reviews in the window."}]
    units: dict[int, dict[int, str]] = defaultdict(dict)
    for output_id, reviewer_id, action in rows:
        units[output_id].setdefault(reviewer_id, action)
    shared = {u: r for u, r in units.items() if len(r) >= 2}
    counts["units_with_two_or_more"] = len(shared)

    pairs: dict[tuple[int, int], tuple[list, list]] = defaultdict(lambda: ([], []))
    for judged in shared.values():
        people = sorted(judged)
        for i, a in enumerate(people):
            for b in people[i + 1 :]:
                pairs[(a, b)][0].append(judged[a])
                pairs[(a, b)][1].append(judged[b])
    PairAgreement.objects.bulk_create(
        PairAgreement(
            cycle=run,
            first_id=a,
            second_id=b,
            n=len(first),
            raw_agreement=agreement.raw_agreement(first, second),
            kappa=agreement.finite_or_none(agreement.cohen_kappa(first, second)),
        )
        for (a, b), (first, second) in sorted(pairs.items())
    )
    alpha = agreement.finite_or_none(agreement.krippendorff_alpha(shared))

    reliabilities = agreement.reviewer_reliability(
        [
            (u, reviewer, action)
            for u, judged in units.items()
            for reviewer, action in judged.items()
        ],
        prior=settings.LEARNING_RELIABILITY_PRIOR,
        prior_strength=settings.LEARNING_RELIABILITY_PRIOR_STRENGTH,
    )
    gate = _gate_agreement(units)
    ReviewerReliability.objects.bulk_create(
        ReviewerReliability(
            cycle=run,
            reviewer_id=reviewer,
            n=r.n,
            reliability_raw=r.raw,
            reliability=r.shrunk,
            agreement_with_gate=gate.get(reviewer, (None, None))[0],
            kappa_with_gate=gate.get(reviewer, (None, None))[1],
        )
        for reviewer, r in reliabilities.items()
    )
    counts["reviewers"] = len(reliabilities)
    return counts, [
        {
            "krippendorff_alpha": alpha,
            "reliability": {str(k): round(r.shrunk, 4) for k, r in reliabilities.items()},
        }
    ]


def _gate_agreement(units: dict[int, dict[int, str]]) -> dict[int, tuple]:
    """Per reviewer: how often the gate's call (deliver or hold) matched theirs (approve
    unchanged or not), and the kappa of the two."""
    delivered = dict(Output.objects.filter(pk__in=list(units)).values_list("pk", "decision"))
    by_reviewer: dict[int, tuple[list, list]] = defaultdict(lambda: ([], []))
    for output_id, judged in units.items():
        gate_says = delivered.get(output_id) != "pending_review"
        for reviewer, action in judged.items():
            by_reviewer[reviewer][0].append(gate_says)
            by_reviewer[reviewer][1].append(action == selectors.APPROVE)
    return {
        reviewer: (
            agreement.raw_agreement(gate, human),
            agreement.finite_or_none(agreement.cohen_kappa(gate, human)),
        )
        for reviewer, (gate, human) in by_reviewer.items()
    }


# --------------------------------------------------------------------------- alerts


def _alerts_cycle(run: CycleRun):
    return alerts.alerts_evaluate(run.window_end)


_CYCLES: dict[Kind, Callable[[CycleRun], tuple[dict, list]]] = {
    Kind.VALIDATORS: _validators_cycle,
    Kind.THRESHOLDS: _thresholds_cycle,
    Kind.TIERS: _tiers_cycle,
    Kind.AGREEMENT: _agreement_cycle,
    Kind.ALERTS: _alerts_cycle,
}
