"""The alerts page: open, acknowledged and resolved alerts, grouped by rule with the most
urgent first, filtered by rule and severity, each with a link to the dashboard page that
shows what raised it, its value and limit in words, and the lead's acknowledgement with a
note, one at a time or many at once."""

import re
from dataclasses import dataclass, replace
from itertools import groupby
from urllib.parse import urlencode

from django import forms
from django.contrib import messages
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from dashboard.filters import FilterInvalid, parameter_text
from gating.api.errors import status_for
from gating.models import TaskType
from gating.roles import ACKNOWLEDGE_ALERTS, WATCH_LEARNING, page_for
from learning.alerts import (
    NOTE_MAX,
    SEVERITY,
    AlertConflict,
    Severity,
    alert_acknowledge,
    alert_page_path,
    measure_words,
)
from learning.models import Alert

ALERTS_PER_PAGE = 100
# An alert's number as a form sends it: ASCII digits, within a database id's range.
_ALERT_ID = re.compile(r"[0-9]{1,18}")
# Task types a rule's subject begins with ("<task type> review threshold", "<task type>
# <validator>"); the backlog's subject is the queue, and score shift's the task type alone.
_ABOUT_A_TASK_TYPE = {Alert.Rule.THRESHOLD_DRIFT, Alert.Rule.VALIDATOR_ACCURACY}


@dataclass(frozen=True)
class Triage:
    """What the alerts list shows: one state's alerts, of some rules and severities (none
    chosen: all). It lives in the URL, and a form sends it back so that the list stays
    where the lead was."""

    state: str = Alert.State.OPEN
    rules: tuple[str, ...] = ()
    severities: tuple[Severity, ...] = ()

    def query(self) -> str:
        pairs = [("state", self.state)]
        pairs += [("rule", rule) for rule in self.rules]
        pairs += [("severity", severity.label) for severity in self.severities]
        return urlencode(pairs)

    def url(self, anchor: str = "") -> str:
        return f"{reverse('dashboard-alerts')}?{self.query()}" + (f"#{anchor}" if anchor else "")


def triage_parse(query) -> Triage:
    """The list's filters from a query string or form; FilterInvalid names what is unknown."""
    state = parameter_text(query, "state") or Alert.State.OPEN
    if state not in Alert.State.values:
        choices = ", ".join(Alert.State.values)
        raise FilterInvalid("state", f"Unknown state {state!r}: use one of {choices}.")
    rules = tuple(query.getlist("rule"))
    for rule in rules:
        if rule not in Alert.Rule.values:
            choices = ", ".join(Alert.Rule.values)
            raise FilterInvalid("rule", f"Unknown rule {rule!r}: use one of {choices}.")
    by_label = {severity.label: severity for severity in Severity}
    severities = []
    for label in query.getlist("severity"):
        if label not in by_label:
            raise FilterInvalid(
                "severity", f"Unknown severity {label!r}: use one of {', '.join(by_label)}."
            )
        severities.append(by_label[label])
    return Triage(state=state, rules=rules, severities=tuple(severities))


@require_GET
@page_for(WATCH_LEARNING)
def alerts(request):
    try:
        triage = triage_parse(request.GET)
    except FilterInvalid as exc:
        return _page(request, Triage(), status=400, error=str(exc), error_field=exc.field)
    return _page(request, triage)


class AcknowledgeForm(forms.Form):
    # Django's CharField refuses NUL characters, as the API's serializer does.
    note = forms.CharField(
        max_length=NOTE_MAX,
        error_messages={
            "required": "Say what is being done: the note is kept with the alert.",
            "max_length": f"At most {NOTE_MAX} characters.",
        },
    )


def _triage_sent(request) -> Triage:
    """The list the lead acknowledged from, as the form sent it back; the open list if it
    cannot be read."""
    try:
        return triage_parse(request.POST)
    except FilterInvalid:
        return Triage()


@require_POST
@page_for(ACKNOWLEDGE_ALERTS)
def alert_acknowledge_page(request, pk: int):
    alert = get_object_or_404(Alert, pk=pk)
    triage = _triage_sent(request)
    form = AcknowledgeForm(request.POST)
    if not form.is_valid():
        return _page(request, triage, status=400, note_errors={alert.pk: form.errors["note"][0]})
    try:
        alert_acknowledge(alert=alert, lead=request.user, note=form.cleaned_data["note"])
    except AlertConflict as exc:
        return _page(request, triage, status=status_for(exc), error=str(exc))
    messages.success(request, f"Acknowledged: {alert.get_rule_display()}, {alert.subject}.")
    # Back where the lead was: the same list, at the next alert down.
    return redirect(triage.url(anchor="alerts"))


@require_POST
@page_for(ACKNOWLEDGE_ALERTS)
def alerts_acknowledge_page(request):
    """Acknowledge every alert ticked, with one note; those another lead or the cycle took
    first are named, and the rest are acknowledged all the same."""
    triage = _triage_sent(request)
    form = AcknowledgeForm(request.POST)
    sent = request.POST.getlist("alert")
    if any(not _ALERT_ID.fullmatch(pk) for pk in sent):
        return _page(
            request,
            triage,
            status=400,
            error="Each ticked alert is an alert's number.",
            error_field="alert",
        )
    ticked = [int(pk) for pk in sent]
    if not ticked:
        return _page(
            request,
            triage,
            status=400,
            error="Tick the alerts to acknowledge.",
            error_field="alert",
        )
    if not form.is_valid():
        return _page(request, triage, status=400, error=form.errors["note"][0], error_field="note")
    done, refused = 0, []
    for alert in Alert.objects.filter(pk__in=ticked).order_by("id"):
        try:
            alert_acknowledge(alert=alert, lead=request.user, note=form.cleaned_data["note"])
            done += 1
        except AlertConflict as exc:
            refused.append(str(exc))
    messages.success(request, f"Acknowledged {done} alert{'s' if done != 1 else ''}.")
    for reason in refused:
        messages.warning(request, reason)
    return redirect(triage.url(anchor="alerts"))


def _page(
    request,
    triage: Triage,
    *,
    status: int = 200,
    error: str = "",
    error_field: str = "",
    note_errors=None,
):
    found = Alert.objects.filter(state=triage.state)
    if triage.rules:
        found = found.filter(rule__in=triage.rules)
    if triage.severities:
        found = found.filter(rule__in=[r for r, s in SEVERITY.items() if s in triage.severities])
    rows = list(
        found.select_related("acknowledged_by").order_by("-first_seen", "-id")[:ALERTS_PER_PAGE]
    )
    # Grouped by rule, the most urgent rules first; within one, by subject.
    rows.sort(key=lambda a: (SEVERITY[a.rule], a.rule, a.subject))
    names = list(TaskType.objects.values_list("name", flat=True))
    groups = [
        {
            "rule": rule,
            "label": Alert.Rule(rule).label,
            "severity": SEVERITY[rule].label,
            "alerts": [
                {
                    "alert": alert,
                    "link": page_link(alert, names),
                    "value": measure_words(alert.rule, alert.value),
                    "limit": measure_words(alert.rule, alert.limit),
                }
                for alert in members
            ],
        }
        for rule, members in groupby(rows, key=lambda a: a.rule)
        for members in [list(members)]
    ]
    context = {
        "triage": triage,
        "state": triage.state,
        "states": [
            (value, label, replace(triage, state=value).url())
            for value, label in Alert.State.choices
        ],
        "rule_choices": [(r.value, r.label, r.value in triage.rules) for r in Alert.Rule],
        "severity_choices": [(s.label, s in triage.severities) for s in Severity],
        "groups": groups,
        "shown": len(rows),
        "error": error,
        "error_field": error_field,
        "note_errors": note_errors or {},
        "per_page": ALERTS_PER_PAGE,
        "note_max": NOTE_MAX,
    }
    return render(request, "dashboard/alerts.html", context, status=status)


def page_link(alert: Alert, task_type_names: list[str]) -> str:
    """The dashboard page that shows what raised ``alert``: its stored link, or for alerts
    stored before links pointed at the dashboard (at admin pages leads may not open), the
    same page found from the rule and the task type its subject names."""
    if alert.link.startswith("/dashboard/"):
        return alert.link
    if alert.rule == Alert.Rule.BACKLOG:
        return alert_page_path(alert.rule)
    if alert.rule in _ABOUT_A_TASK_TYPE:
        # The longest name, so that "summarize long" wins over "summarize".
        named = [n for n in task_type_names if alert.subject.startswith(n + " ")]
        task_type = max(named, key=len, default=None)
    else:
        task_type = alert.subject if alert.subject in task_type_names else None
    return alert_page_path(alert.rule, task_type)
