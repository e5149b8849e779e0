"""Alerts: conditions a lead should see, kept open while they hold.

``alerts_evaluate(now)`` checks every rule and, for each (rule, subject): opens an alert
the first time the condition holds (and notifies leads once), refreshes it while it holds,
and resolves it by itself when it clears. A lead acknowledges an open alert once, with a
note. Each acknowledgement and each resolution is in the audit log.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, replace
from datetime import UTC, datetime, time, timedelta
from enum import IntEnum
from urllib.parse import urlencode

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.mail import send_mail
from django.db import transaction
from django.db.models import Count, IntegerField, Min, Q, Value
from django.db.models.functions import Cast, Floor, Least, TruncDate
from django.utils import timezone

from gating import formatting, reviews, webhooks
from gating.audit import audit_record
from gating.exceptions import FieldInvalid, StateConflict
from gating.models import AuditEvent, Output, Review, ReviewItem, TaskType
from gating.roles import Role
from learning import selectors
from learning.models import Alert, ThresholdChange
from learning.statistics import drift
from learning.statistics.forecast import need_toward, reading_toward

Rule = Alert.Rule

BACKLOG_HOURS = 24.0
THRESHOLD_DRIFT = 0.5
ACCURACY_DROP = 0.10
ACCURACY_MIN_VERDICTS = 30
# The accuracy alert compares the latest validators cycle with the latest one at least
# ACCURACY_SPAN before it, among the cycles of the last ACCURACY_LOOKBACK: the validators
# page's default range (30 days), so that both cycles are on the chart the alert links to.
ACCURACY_SPAN = timedelta(days=7)
ACCURACY_LOOKBACK = timedelta(days=30)
PSI_LIMIT = 0.25
SUBJECT_MAX = 200
# The longest acknowledgement note: the API's serializer, the alerts page's form and
# alert_acknowledge all read this one.
NOTE_MAX = 2000
RELIEF_AFTER = timedelta(days=7)
# A threshold found not attainable this many runs in a row raises its alert: one run can
# be a bad window; two (a day apart at most) are a pattern.
NOT_ATTAINABLE_RUNS = 2
# A scoring fault alert fires while a fault came in this many hours, and its task type is
# measured for FAULT_MEMORY longer, so that a quiet day resolves it.
FAULT_HOURS = 24.0
FAULT_MEMORY = timedelta(days=7)


@dataclass(frozen=True)
class Finding:
    """One rule's measurement for one subject; ``firing`` says whether it crosses the limit."""

    rule: str
    subject: str
    firing: bool
    value: float | None
    limit: float
    message: str
    link: str


# --------------------------------------------------------------------------- rules


def backlog(now: datetime) -> list[Finding]:
    open_items = ReviewItem.objects.filter(state=ReviewItem.State.OPEN, queued_at__lte=now)
    # The longest wait is an output's, from its turn: its follow-up rounds keep it.
    summary = open_items.aggregate(n=Count("id"), oldest=Min("turn_at"))
    decided = Review.objects.filter(
        is_bulk=False, decided_at__gt=now - timedelta(hours=24), decided_at__lte=now
    ).count()
    n, oldest = summary["n"], summary["oldest"]
    oldest_seconds = (now - oldest).total_seconds() if oldest else 0.0
    oldest_hours = oldest_seconds / 3600
    # Throughput in items per hour over the last day; none at all means an unbounded wait.
    wait_hours = (n / (decided / 24.0) if decided else float("inf")) if n else 0.0
    value = max(oldest_hours, wait_hours)
    return [
        Finding(
            rule=Rule.BACKLOG,
            subject="review queue",
            firing=value > BACKLOG_HOURS,
            value=None if value == float("inf") else round(value, 2),
            limit=BACKLOG_HOURS,
            message=(
                f"{formatting.count(n)} items waiting; the oldest for "
                f"{formatting.duration(oldest_seconds)}; at the last day's pace of "
                f"{formatting.count(decided)} decisions the queue takes "
                + (
                    "forever"
                    if wait_hours == float("inf")
                    else formatting.duration(wait_hours * 3600)
                )
                + f" to clear (limit {formatting.duration(BACKLOG_HOURS * 3600)})."
            ),
            link=alert_page_path(Rule.BACKLOG),
        )
    ]


def threshold_drift(now: datetime) -> list[Finding]:
    """Any threshold more than 0.5 away from where it stood 24 hours ago (by admins or the
    cycles alike: both leave threshold edits in the audit log)."""
    since = now - timedelta(hours=24)
    earliest: dict[tuple[str, str], float] = {}
    for object_id, before in (
        AuditEvent.objects.filter(
            action=AuditEvent.Action.THRESHOLD_EDIT, at__gt=since, at__lte=now
        )
        .order_by("at", "id")
        .values_list("object_id", "before")
    ):
        for field in ("review_threshold", "approve_threshold"):
            if before and field in before:
                earliest.setdefault((object_id, field), before[field])
    findings = []
    for task_type in TaskType.objects.all():
        for field in ("review_threshold", "approve_threshold"):
            then = earliest.get((str(task_type.pk), field))
            # Rounded: 7.4 - 6.9 is 0.50000000000000089 in binary floating point.
            moved = round(abs(getattr(task_type, field) - then), 6) if then is not None else 0.0
            findings.append(
                Finding(
                    rule=Rule.THRESHOLD_DRIFT,
                    subject=f"{task_type.name} {field.replace('_', ' ')}",
                    firing=moved > THRESHOLD_DRIFT,
                    value=round(moved, 4),
                    limit=THRESHOLD_DRIFT,
                    message=f"The {field.replace('_', ' ')} of {task_type.name} moved "
                    f"{moved:.2f} in 24 h (limit {THRESHOLD_DRIFT:g}): check for feedback bias.",
                    link=alert_page_path(Rule.THRESHOLD_DRIFT, task_type.name),
                )
            )
    return findings


def validator_accuracy(now: datetime) -> list[Finding]:
    """Each validator's accuracy in the latest validators cycle against the latest cycle at
    least ACCURACY_SPAN before it: the values the validators page charts and exports
    (``selectors.validator_assessments``), so that the alert and the chart it links to say
    the same. Each value is the cycle's (the label model's verdicts over its lookback
    window); a cycle that judged fewer than ACCURACY_MIN_VERDICTS outputs is not read."""
    findings = []
    for task_type in TaskType.objects.order_by("name"):
        by_validator = defaultdict(list)
        # Through ``now``: a validators cycle whose window ends this very moment counts.
        for a in selectors.validator_assessments(
            task_type.name, since=now - ACCURACY_LOOKBACK, until=now + timedelta.resolution
        ):
            if a.accuracy is not None and a.n >= ACCURACY_MIN_VERDICTS:
                by_validator[a.validator.name].append(a)
        for name, assessed in sorted(by_validator.items()):
            latest = assessed[-1]
            earlier = [
                a for a in assessed if a.cycle.window_end <= latest.cycle.window_end - ACCURACY_SPAN
            ]
            if not earlier:
                continue
            then = earlier[-1]
            drop = then.accuracy - latest.accuracy
            findings.append(
                Finding(
                    rule=Rule.VALIDATOR_ACCURACY,
                    subject=f"{task_type.name} {name}",
                    firing=drop > ACCURACY_DROP,
                    value=round(drop, 4),
                    limit=ACCURACY_DROP,
                    message=f"{name} on {task_type.name}: accuracy {then.accuracy:.0%} in the "
                    f"validators cycle to {then.cycle.window_end:%Y-%m-%d %H:%M} UTC, "
                    f"{latest.accuracy:.0%} in the cycle to "
                    f"{latest.cycle.window_end:%Y-%m-%d %H:%M} UTC ({latest.n} verdicts): "
                    "possible model degradation.",
                    link=alert_page_path(Rule.VALIDATOR_ACCURACY, task_type.name),
                )
            )
    return findings


def score_shift(now: datetime) -> list[Finding]:
    """PSI of each (task type, model)'s scores on the latest UTC day that has enough of them
    (today so far, or else yesterday) against the days before it: the latest point of that
    line on the drift page's PSI chart (``drift.daily_psi``, one definition for both)."""
    today = now.astimezone(UTC).date()
    since = datetime.combine(today - timedelta(days=drift.BASELINE_DAYS + 1), time(), UTC)
    # Binned in the database: a week of traffic is a million rows, its histogram is 20.
    score_bin = Least(Cast(Floor("score"), IntegerField()), Value(9))
    counts: dict[tuple, dict] = defaultdict(lambda: defaultdict(lambda: [0] * 10))
    for task_type_id, model, day, bin_, n in (
        Output.objects.filter(created_at__gte=since, created_at__lte=now)
        .annotate(day=TruncDate("created_at", tzinfo=UTC), bin=score_bin)
        .values_list("task_type_id", "model", "day", "bin")
        .annotate(n=Count("id"))
        .order_by()
    ):
        counts[(task_type_id, model)][day][max(bin_, 0)] += n
    names = dict(TaskType.objects.values_list("pk", "name"))
    findings = []
    for (task_type_id, model), days in sorted(counts.items()):
        series = drift.daily_psi(days)
        latest = [day for day in series if day >= today - timedelta(days=1)]
        if not latest:
            continue  # too few scores lately for the index to mean anything
        day = max(latest)
        value, task_type = series[day], names[task_type_id]
        findings.append(
            Finding(
                rule=Rule.SCORE_SHIFT,
                subject=f"{task_type} {model}",
                firing=value > PSI_LIMIT,
                value=round(value, 4),
                limit=PSI_LIMIT,
                message=f"The scores of model {model} on {task_type} on {day:%Y-%m-%d} (UTC"
                f"{', so far' if day == today else ''}) differ from the "
                f"{drift.BASELINE_DAYS} days before: PSI {value:.3f} (limit {PSI_LIMIT:g}).",
                link=alert_page_path(Rule.SCORE_SHIFT, task_type, model=model),
            )
        )
    return findings


def threshold_evidence(now: datetime) -> list[Finding]:
    """Per task type under the guarded policy, from its approve threshold's latest
    thresholds runs: "insufficient evidence" while it is underpowered, and "not attainable"
    once it has been so NOT_ATTAINABLE_RUNS runs in a row. A task type no run has assessed
    yet is not measured."""
    findings = []
    for task_type in TaskType.objects.filter(
        threshold_policy=TaskType.ThresholdPolicy.GUARDED
    ).order_by("name"):
        latest, runs = selectors.approve_history(task_type.pk)
        if latest is None:
            continue
        link = alert_page_path(Rule.INSUFFICIENT_EVIDENCE, task_type.name)
        evidence = latest.evidence or {}
        reading = reading_toward(evidence)
        needed = need_toward(evidence)
        findings.append(
            Finding(
                rule=Rule.INSUFFICIENT_EVIDENCE,
                subject=task_type.name,
                firing=latest.state == ThresholdChange.State.UNDERPOWERED,
                value=reading[1] if reading else None,
                # Where no amount of today's data passes, the least any candidate needs:
                # the alert's numbers stay finite (JSON has no infinity).
                limit=(
                    needed
                    if needed is not None and math.isfinite(needed)
                    else evidence.get("needed_effective_n") or 0.0
                ),
                message=f"The approve threshold of {task_type.name} is underpowered: "
                f"{latest.reason} Its audit rate is {task_type.audit_rate_approved:g} "
                f"(budget {task_type.audit_rate_budget:g})." + _forecast_words(latest),
                link=link,
            )
        )
        best = selectors.best_certifiable(evidence)
        findings.append(
            Finding(
                rule=Rule.NOT_ATTAINABLE,
                subject=task_type.name,
                # Auto-approval off is the admin's answer to this alert: nothing to choose.
                firing=latest.state == ThresholdChange.State.NOT_ATTAINABLE
                and runs >= NOT_ATTAINABLE_RUNS
                and task_type.auto_approve,
                value=best[0] if best else None,
                limit=task_type.alpha_approve,
                message=f"No approve threshold of {task_type.name} can be certified with "
                f"P(edit or bad) <= {task_type.alpha_approve:g} and P(bad) <= "
                f"{task_type.alpha_bad:g} ({runs} runs in a row): "
                + _tested_words(evidence.get("stopped_at"))
                + (
                    f"At best, an error of {best[0]:.4f} could be certified, at threshold "
                    f"{best[1]:g}. "
                    if best
                    else ""
                )
                + "More audits would not change this; outputs that are wrong less often, or "
                "budgets above these estimates, would. "
                + f"The threshold is held at {task_type.approve_threshold:g} with its guarantee "
                "suspended: choose between keeping it as it is and turning auto-approval off "
                "(the task type's auto-approve switch: pinning the threshold at 10 still "
                "approves the outputs that reach the capped score of 10).",
                link=link,
            )
        )
    return findings


def _forecast_words(latest: ThresholdChange) -> str:
    """When the approve threshold's need of evidence is met, as the thresholds page says."""
    forecast = selectors.certification_forecast_of(latest)
    return f" Certification at today's estimates: {forecast.words}." if forecast else ""


def _tested_words(stopped_at: dict | None) -> str:
    """What the search tested to find the budgets out of reach, in words."""
    if not stopped_at:
        return ""
    edit, bad = stopped_at.get("edit") or {}, stopped_at.get("bad") or {}
    if edit.get("estimate") is None or bad.get("estimate") is None:
        return ""
    return (
        f"at threshold {stopped_at['threshold']:g}, the highest that could be the approve "
        f"threshold with data enough to read ({edit.get('effective_n', 0):.0f} effective "
        f"outputs), P(edit or bad) is estimated at {edit['estimate']:.1%} and P(bad) at "
        f"{bad['estimate']:.1%}. "
    )


def scoring_faults(now: datetime) -> list[Finding]:
    """Outputs held because their scorer failed (gating.scoring.fault_result), per task
    type: firing while any came in the last 24 h. The task types with a fault in the 7 days
    before are measured too, so that their alert resolves once a day passes without one."""
    day_ago = now - timedelta(hours=FAULT_HOURS)
    faults = AuditEvent.objects.filter(
        action=AuditEvent.Action.SCORING_FAULT, at__gt=day_ago - FAULT_MEMORY, at__lte=now
    )
    recent: dict[str, int] = defaultdict(int)
    causes: dict[str, str] = {}
    for after, at in faults.order_by("at").values_list("after", "at"):
        task_type = after["task_type"]
        recent[task_type] += at > day_ago
        causes[task_type] = after["cause"]
    return [
        Finding(
            rule=Rule.SCORING_FAULT,
            subject=task_type,
            firing=n > 0,
            value=n,
            limit=0,
            message=f"{n} outputs of {task_type} in the last {FAULT_HOURS:g} h could not be "
            f"scored and were held for review; the latest cause: {causes[task_type]}. The "
            "reviewers decide them; the scorer needs fixing.",
            link=alert_page_path(Rule.SCORING_FAULT, task_type),
        )
        for task_type, n in sorted(recent.items())
    ]


RULES = (
    backlog,
    threshold_drift,
    validator_accuracy,
    score_shift,
    threshold_evidence,
    scoring_faults,
)


class Severity(IntEnum):
    """How soon an alert needs a person, the most urgent first."""

    HIGH = 1  # outputs wait or are gated wrongly now
    MEDIUM = 2  # the gate's inputs moved: look before it costs
    LOW = 3  # a standing condition the thresholds page tracks

    @property
    def label(self) -> str:
        return self.name.lower()


# One home for each rule's urgency and for how its value and limit read.
SEVERITY: dict[str, Severity] = {
    Rule.BACKLOG: Severity.HIGH,
    Rule.SCORING_FAULT: Severity.HIGH,
    Rule.NOT_ATTAINABLE: Severity.HIGH,
    Rule.SCORE_SHIFT: Severity.MEDIUM,
    Rule.VALIDATOR_ACCURACY: Severity.MEDIUM,
    Rule.THRESHOLD_DRIFT: Severity.MEDIUM,
    Rule.INSUFFICIENT_EVIDENCE: Severity.LOW,
}


def measure_words(rule: str, value: float | None) -> str:
    """An alert's value or limit with its unit, in words, as the rule measures it."""
    if value is None:
        return "—"
    if rule == Rule.BACKLOG:
        return formatting.duration(value * 3600)
    if rule == Rule.THRESHOLD_DRIFT:
        return f"{formatting.number(value)} points of score in 24 h"
    if rule == Rule.VALIDATOR_ACCURACY:
        # The value is the drop: a negative one is a rise (the measurement that resolves).
        side = "lower" if value >= 0 else "higher"
        return f"{formatting.number(abs(value) * 100)} percentage points {side}"
    if rule == Rule.SCORE_SHIFT:
        return f"PSI {formatting.number(value)}"
    if rule == Rule.INSUFFICIENT_EVIDENCE:
        return f"{formatting.count(round(value))} effective outputs"
    if rule == Rule.NOT_ATTAINABLE:
        return f"error {formatting.percent(value)}"
    return f"{formatting.count(round(value))} outputs"


# The dashboard page that shows what raised each rule's alert, and the range (a preset of
# its filter bar) that covers the rule's window: a lead can open these, whereas the Django
# admin refuses leads. Paths, not reversed URL names: learning does not depend on the
# dashboard's pages, and the emails and webhooks that carry a link outlive any one request.
# The query string is what dashboard.filters.filter_query writes for the same filter.
ALERT_PAGES: dict[str, tuple[str, str | None]] = {
    Rule.BACKLOG: ("/dashboard/queue/", None),
    # The 24 hours compared, with the days before them for context.
    Rule.THRESHOLD_DRIFT: ("/dashboard/drift/", "7d"),
    # Two validators cycles a week apart, within the last 30 days.
    Rule.VALIDATOR_ACCURACY: ("/dashboard/validators/", "30d"),
    # The latest day against the 7 days before it, with the weeks before for context.
    Rule.SCORE_SHIFT: ("/dashboard/drift/", "30d"),
    # The thresholds' history with their states.
    Rule.INSUFFICIENT_EVIDENCE: ("/dashboard/drift/", "30d"),
    Rule.NOT_ATTAINABLE: ("/dashboard/drift/", "30d"),
    # The held outputs themselves, whose reasons name the fault.
    Rule.SCORING_FAULT: ("/dashboard/outputs/", "7d"),
}


def alert_page_path(rule: str, task_type: str | None = None, *, model: str | None = None) -> str:
    """The path of the dashboard page, with its filter, that shows what raised an alert of
    ``rule`` about ``task_type`` (by name; None for the backlog, which is every task type's)
    and ``model`` where the alert names one."""
    path, preset = ALERT_PAGES[rule]
    pairs = [("range", preset)] if preset else []
    if task_type is not None:
        pairs.append(("task_type", task_type))
    if model is not None:
        pairs.append(("model", model))
    return path + (f"?{urlencode(pairs)}" if pairs else "")


# --------------------------------------------------------------------------- lifecycle


def alerts_evaluate(now: datetime) -> tuple[dict, list]:
    """Check every rule at ``now``; open, refresh and resolve alerts. Returns the cycle's
    counts and the list of alerts opened and resolved."""
    findings = [replace(f, subject=f.subject[:SUBJECT_MAX]) for rule in RULES for f in rule(now)]
    live = {
        (a.rule, a.subject): a
        for a in Alert.objects.select_for_update().exclude(state=Alert.State.RESOLVED)
    }
    counts = {"checked": len(findings), "opened": 0, "resolved": 0, "open": 0}
    changes = []
    for f in findings:
        alert = live.pop((f.rule, f.subject), None)
        if f.firing and alert is None:
            alert = Alert.objects.create(
                rule=f.rule,
                subject=f.subject,
                message=f.message,
                value=f.value,
                limit=f.limit,
                link=f.link,
                first_seen=now,
                last_seen=now,
            )
            _notify(alert)
            counts["opened"] += 1
            changes.append({"opened": f.rule, "subject": f.subject, "value": f.value})
        elif f.firing:
            alert.last_seen, alert.value, alert.message = now, f.value, f.message
            alert.save(update_fields=["last_seen", "value", "message"])
        elif alert is not None:
            _resolve(alert, now, f.value)
            counts["resolved"] += 1
            changes.append({"resolved": f.rule, "subject": f.subject, "value": f.value})
        if f.firing:
            counts["open"] += 1
    # Alerts whose subject was not measured this time (too few verdicts, no traffic) stay
    # as they are: only a measurement under the limit resolves one.
    relieved = _backlog_relief(now)
    if relieved:
        counts["relieved"] = sum(relieved.values())
        changes.append({"backlog_relief": relieved})
    return counts, changes


def _backlog_relief(now: datetime) -> dict[str, int]:
    """After a backlog alert has been open for RELIEF_AFTER, release near-threshold held
    outputs of the task types that allow it (off by default)."""
    backlog = (
        Alert.objects.filter(rule=Rule.BACKLOG, first_seen__lte=now - RELIEF_AFTER)
        .exclude(state=Alert.State.RESOLVED)
        .exists()
    )
    if not backlog:
        return {}
    released = {
        task_type.name: reviews.backlog_relieve(task_type=task_type, now=now)
        for task_type in TaskType.objects.filter(backlog_relief=True)
    }
    return {name: n for name, n in released.items() if n}


def _resolve(alert: Alert, now: datetime, value: float | None) -> None:
    before = {"state": alert.state}
    alert.state = Alert.State.RESOLVED
    alert.resolved_at = now
    alert.save(update_fields=["state", "resolved_at"])
    audit_record(
        actor=None,
        action=AuditEvent.Action.ALERT_RESOLVE,
        obj=alert,
        before=before,
        after={"state": alert.state, "value": value},
        at=now,
    )


class AlertConflict(StateConflict):
    """An acknowledgement the alert's state no longer takes; the API (gating.api.errors) and
    the alerts page answer 409 with the message."""


class AlertResolved(AlertConflict):
    pass


class AlertAlreadyAcknowledged(AlertConflict):
    pass


def alert_acknowledge(*, alert: Alert, lead, note: str, now: datetime | None = None) -> Alert:
    """A lead takes an open alert on, saying what is being done. It stays acknowledged (and
    is not notified again) until its condition clears; a second acknowledgement raises
    AlertAlreadyAcknowledged, one of an alert that cleared AlertResolved, and a note that
    is blank, longer than NOTE_MAX or holds a NUL FieldInvalid naming ``note``."""
    _note_check(note)
    now = now or timezone.now()
    with transaction.atomic():
        # Conditional, so that of two leads acknowledging at once, or a lead and the alerts
        # cycle resolving it, one wins and the other is told what happened.
        taken = Alert.objects.filter(pk=alert.pk, state=Alert.State.OPEN).update(
            state=Alert.State.ACKNOWLEDGED, acknowledged_by=lead, acknowledged_at=now, note=note
        )
        alert.refresh_from_db()
        what = f"This alert ({alert.get_rule_display()}: {alert.subject})"
        if not taken and alert.state == Alert.State.RESOLVED:
            raise AlertResolved(
                f"{what} is already resolved: its condition cleared, so there is nothing to "
                "acknowledge."
            )
        if not taken:
            by = f" by {alert.acknowledged_by.username}" if alert.acknowledged_by else ""
            at = alert.acknowledged_at
            when = f" at {at.astimezone(UTC):%Y-%m-%d %H:%M} UTC" if at else ""
            raise AlertAlreadyAcknowledged(
                f"{what} is already acknowledged{by}{when}: its note stands until the "
                "condition clears."
            )
        audit_record(
            actor=lead,
            action=AuditEvent.Action.ALERT_ACKNOWLEDGE,
            obj=alert,
            before={"state": Alert.State.OPEN},
            after={"state": alert.state, "note": note},
            at=now,
        )
    return alert


def _note_check(note: str) -> None:
    if not note.strip():
        raise FieldInvalid("note", "Say what is being done: the note is kept with the alert.")
    if len(note) > NOTE_MAX:
        raise FieldInvalid("note", f"At most {NOTE_MAX} characters.")
    if "\x00" in note:
        raise FieldInvalid("note", "The note cannot hold a NUL character.")


def _notify(alert: Alert) -> None:
    """Once, when the alert opens: email to the leads, and the alert webhooks."""
    url = settings.SITE_URL.rstrip("/") + alert.link
    subject = f"[Gatehouse] {alert.get_rule_display()}: {alert.subject}"
    text = f"{subject}\n{alert.message}\n{url}"
    leads = list(
        get_user_model()
        .objects.filter(Q(groups__name=Role.LEAD.value) | Q(groups__name=Role.ADMIN.value))
        .filter(is_active=True)
        .exclude(email="")
        .values_list("email", flat=True)
        .distinct()
    )
    if leads:
        transaction.on_commit(lambda: send_mail(subject, text, None, leads, fail_silently=True))
    webhooks.alert_event_emit(
        payload={
            "text": text,
            "alert": {
                "id": alert.pk,
                "rule": alert.rule,
                "subject": alert.subject,
                "value": alert.value,
                "limit": alert.limit,
                "first_seen": alert.first_seen.isoformat(),
                "link": url,
            },
        }
    )
    alert.notified_at = alert.first_seen
    alert.save(update_fields=["notified_at"])
