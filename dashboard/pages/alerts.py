"""The alerts page: open, acknowledged and resolved alerts, each with a link to the dashboard
page that shows what raised it, and the lead's acknowledgement with a note."""

from django import forms
from django.contrib import messages
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from dashboard.filters import FilterInvalid, parameter_text
from gating.api.errors import status_for
from gating.models import TaskType
from gating.roles import ACKNOWLEDGE_ALERTS, WATCH_LEARNING, page_for
from learning.alerts import NOTE_MAX, AlertConflict, alert_acknowledge, alert_page_path
from learning.models import Alert

ALERTS_PER_PAGE = 100
# Task types a rule's subject begins with ("<task type> review threshold", "<task type>
# <validator>"); the backlog's subject is the queue, and score shift's the task type alone.
_ABOUT_A_TASK_TYPE = {Alert.Rule.THRESHOLD_DRIFT, Alert.Rule.VALIDATOR_ACCURACY}


@require_GET
@page_for(WATCH_LEARNING)
def alerts(request):
    try:
        state = parameter_text(request.GET, "state") or Alert.State.OPEN
        if state not in Alert.State.values:
            choices = ", ".join(Alert.State.values)
            raise FilterInvalid("state", f"Unknown state {state!r}: use one of {choices}.")
    except FilterInvalid as exc:
        return _page(request, Alert.State.OPEN, status=400, error=str(exc), error_field=exc.field)
    return _page(request, state)


class AcknowledgeForm(forms.Form):
    # Django's CharField refuses NUL characters, as the API's serializer does.
    note = forms.CharField(
        max_length=NOTE_MAX,
        error_messages={
            "required": "Say what is being done: the note is kept with the alert.",
            "max_length": f"At most {NOTE_MAX} characters.",
        },
    )


@require_POST
@page_for(ACKNOWLEDGE_ALERTS)
def alert_acknowledge_page(request, pk: int):
    alert = get_object_or_404(Alert, pk=pk)
    form = AcknowledgeForm(request.POST)
    if not form.is_valid():
        return _page(
            request, alert.state, status=400, note_errors={alert.pk: form.errors["note"][0]}
        )
    try:
        alert_acknowledge(alert=alert, lead=request.user, note=form.cleaned_data["note"])
    except AlertConflict as exc:
        # The service refreshed the alert: show the tab it is on now, with why.
        return _page(request, alert.state, status=status_for(exc), error=str(exc))
    messages.success(request, f"Acknowledged: {alert.get_rule_display()}, {alert.subject}.")
    return redirect(reverse("dashboard-alerts") + "?state=acknowledged")


def _page(
    request,
    state: str,
    *,
    status: int = 200,
    error: str = "",
    error_field: str = "",
    note_errors=None,
):
    rows = list(
        Alert.objects.filter(state=state)
        .select_related("acknowledged_by")
        .order_by("-first_seen", "-id")[:ALERTS_PER_PAGE]
    )
    names = list(TaskType.objects.values_list("name", flat=True))
    context = {
        "state": state,
        "states": Alert.State.choices,
        "alerts": [(alert, page_link(alert, names)) for alert in rows],
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
