"""An output held because its scorer failed raises an alert for its task type, which
resolves once a day passes without another."""

from datetime import timedelta

import pytest
from django.utils import timezone

from gating.models import AuditEvent
from gating.scorers import validators
from learning import alerts
from learning.models import Alert
from tests.factories import SubmissionFactory, TaskTypeFactory

pytestmark = pytest.mark.django_db


def test_a_scoring_fault_opens_an_alert_that_a_quiet_day_resolves(gateway_api, monkeypatch):
    TaskTypeFactory(name="summarize", reviewed_count=1000, cold_start_reviews=0)
    TaskTypeFactory(name="classify", reviewed_count=1000, cold_start_reviews=0)

    def broken(output):
        raise ZeroDivisionError("float division by zero")

    start = timezone.now()
    with monkeypatch.context() as patched:
        patched.setattr(validators, "gate_result", broken)
        for _ in range(2):
            response = gateway_api.post(
                "/api/v1/outputs/", SubmissionFactory(task_type="summarize"), format="json"
            )
            assert response.json()["decision"] == "pending_review"
    # A healthy task type raises nothing.
    gateway_api.post("/api/v1/outputs/", SubmissionFactory(task_type="classify"), format="json")
    assert AuditEvent.objects.filter(action=AuditEvent.Action.SCORING_FAULT).count() == 2

    alerts.alerts_evaluate(start + timedelta(minutes=1))

    [alert] = Alert.objects.filter(rule=Alert.Rule.SCORING_FAULT)
    assert (alert.subject, alert.state, alert.value) == ("summarize", "open", 2)
    assert "validators: ZeroDivisionError" in alert.message
    assert alert.link == "/dashboard/outputs/?range=7d&task_type=summarize"

    alerts.alerts_evaluate(start + timedelta(hours=25))

    alert.refresh_from_db()
    assert alert.state == "resolved"
    [resolution] = AuditEvent.objects.filter(action=AuditEvent.Action.ALERT_RESOLVE)
    assert resolution.after == {"state": "resolved", "value": 0}
