"""Acknowledging an alert: once, with a note of at most NOTE_MAX characters and no NUL, the
same through the service and the API; every acknowledgement and every resolution in the
audit log."""

from datetime import UTC, datetime, timedelta

import pytest
from django.utils import timezone

from gating.exceptions import FieldInvalid
from gating.models import AuditEvent
from gating.roles import Role
from learning import alerts
from learning.models import Alert

pytestmark = pytest.mark.django_db

NOW = datetime(2026, 3, 20, 12, 0, tzinfo=UTC)


def _alert(**fields) -> Alert:
    values = {
        "rule": Alert.Rule.BACKLOG,
        "subject": "review queue",
        "message": "30 items waiting.",
        "value": 30.0,
        "limit": 24.0,
        "link": "/dashboard/queue/",
        "first_seen": NOW - timedelta(hours=1),
        "last_seen": NOW - timedelta(hours=1),
    }
    return Alert.objects.create(**values | fields)


def _events(action) -> list[AuditEvent]:
    return list(AuditEvent.objects.filter(action=action).order_by("id"))


# --------------------------------------------------------------------------- the service


def test_an_acknowledgement_is_audited_with_its_lead_and_note(user_in):
    lead = user_in(Role.LEAD)
    alert = _alert()

    alerts.alert_acknowledge(alert=alert, lead=lead, note="Two more on shift", now=NOW)

    (event,) = _events(AuditEvent.Action.ALERT_ACKNOWLEDGE)
    assert (event.actor, event.at, event.object_type, event.object_id) == (
        lead,
        NOW,
        "learning.alert",
        str(alert.pk),
    )
    assert event.before == {"state": "open"}
    assert event.after == {"state": "acknowledged", "note": "Two more on shift"}


def test_a_second_acknowledgement_is_refused_and_keeps_the_first(user_in):
    first, second = user_in(Role.LEAD), user_in(Role.ADMIN)
    alert = _alert()
    alerts.alert_acknowledge(alert=alert, lead=first, note="On it", now=NOW)

    with pytest.raises(alerts.AlertAlreadyAcknowledged):
        alerts.alert_acknowledge(alert=alert, lead=second, note="Me too")

    alert.refresh_from_db()
    assert (alert.acknowledged_by, alert.note, alert.acknowledged_at) == (first, "On it", NOW)
    assert len(_events(AuditEvent.Action.ALERT_ACKNOWLEDGE)) == 1


def test_a_resolved_alert_is_refused_unaudited(user_in):
    alert = _alert(state=Alert.State.RESOLVED, resolved_at=NOW)
    with pytest.raises(alerts.AlertResolved):
        alerts.alert_acknowledge(alert=alert, lead=user_in(Role.LEAD), note="Too late")
    assert not _events(AuditEvent.Action.ALERT_ACKNOWLEDGE)


@pytest.mark.parametrize("note", ["", "  ", "x" * (alerts.NOTE_MAX + 1), "on\x00it"])
def test_the_service_refuses_a_note_it_cannot_keep(user_in, note):
    alert = _alert()
    with pytest.raises(FieldInvalid) as caught:
        alerts.alert_acknowledge(alert=alert, lead=user_in(Role.LEAD), note=note)
    assert caught.value.field == "note"
    alert.refresh_from_db()
    assert alert.state == Alert.State.OPEN
    assert not _events(AuditEvent.Action.ALERT_ACKNOWLEDGE)


def test_a_resolution_by_the_cycle_is_audited_with_no_actor_and_the_value(user_in):
    # The queue is empty: the backlog measures 0 hours and the alert resolves.
    alert = _alert()

    alerts.alerts_evaluate(NOW)

    alert.refresh_from_db()
    assert alert.state == Alert.State.RESOLVED
    (event,) = _events(AuditEvent.Action.ALERT_RESOLVE)
    assert (event.actor, event.at, event.object_id) == (None, NOW, str(alert.pk))
    assert event.before == {"state": "open"}
    assert event.after == {"state": "resolved", "value": 0.0}


def test_an_acknowledged_alert_that_resolves_is_audited_too(user_in):
    alert = _alert()
    alerts.alert_acknowledge(alert=alert, lead=user_in(Role.LEAD), note="On it", now=NOW)

    alerts.alerts_evaluate(NOW + timedelta(minutes=5))

    (event,) = _events(AuditEvent.Action.ALERT_RESOLVE)
    assert event.before == {"state": "acknowledged"}
    assert event.at == NOW + timedelta(minutes=5)


# --------------------------------------------------------------------------- the API


@pytest.fixture
def lead_api(user_in, client_for):
    return client_for(user_in(Role.LEAD))


def _acknowledge(api, alert, note):
    return api.post(f"/api/v1/alerts/{alert.pk}/acknowledge/", {"note": note}, format="json")


def test_a_second_acknowledgement_through_the_api_is_a_409(lead_api, user_in, client_for):
    alert = _alert(first_seen=timezone.now(), last_seen=timezone.now())
    assert _acknowledge(lead_api, alert, "On it").status_code == 200

    response = _acknowledge(client_for(user_in(Role.ADMIN)), alert, "Me too")

    assert response.status_code == 409
    assert "already acknowledged" in response.json()["detail"]
    alert.refresh_from_db()
    assert alert.note == "On it"


@pytest.mark.parametrize(
    ("note", "status"),
    [("x" * alerts.NOTE_MAX, 200), ("x" * (alerts.NOTE_MAX + 1), 400), ("on\x00it", 400)],
)
def test_the_api_takes_a_note_up_to_the_cap_and_without_nul(lead_api, note, status):
    alert = _alert()
    response = _acknowledge(lead_api, alert, note)
    assert response.status_code == status
    if status == 400:
        assert list(response.json()) == ["note"]


def test_the_schema_documents_the_409_of_a_second_acknowledgement(lead_api):
    schema = lead_api.get("/api/schema/", {"format": "json"}).json()
    operation = schema["paths"]["/api/v1/alerts/{id}/acknowledge/"]["post"]
    assert "acknowledged" in operation["responses"]["409"]["description"]
