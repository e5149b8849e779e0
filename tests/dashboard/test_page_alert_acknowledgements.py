"""Acknowledging an alert from the alerts page: once, with the API's cap on the note, no
NUL, and the service's audit record."""

from functools import partial

import pytest
from django.utils import timezone

from gating.models import AuditEvent
from gating.roles import Role
from learning.alerts import NOTE_MAX
from learning.models import Alert
from tests.factories import logged_in

pytestmark = pytest.mark.django_db


def _alert() -> Alert:
    now = timezone.now()
    return Alert.objects.create(
        rule=Alert.Rule.BACKLOG,
        subject="review queue",
        message="30 items waiting.",
        value=30.0,
        limit=24.0,
        link="/dashboard/queue/",
        first_seen=now,
        last_seen=now,
    )


_client = partial(logged_in, raise_request_exception=False)


def _acknowledge(client, alert, note):
    return client.post(f"/dashboard/alerts/{alert.pk}/acknowledge/", {"note": note})


def test_a_second_acknowledgement_is_a_409_that_keeps_the_first(user_in):
    alert = _alert()
    assert _acknowledge(_client(user_in(Role.LEAD)), alert, "On it").status_code == 302

    response = _acknowledge(_client(user_in(Role.ADMIN)), alert, "Me too")

    assert response.status_code == 409
    assert "already acknowledged" in response.content.decode()
    alert.refresh_from_db()
    assert alert.note == "On it"
    assert AuditEvent.objects.filter(action=AuditEvent.Action.ALERT_ACKNOWLEDGE).count() == 1


def test_an_acknowledged_alert_offers_no_second_acknowledgement(user_in):
    alert = _alert()
    client = _client(user_in(Role.LEAD))
    _acknowledge(client, alert, "On it")

    page = client.get("/dashboard/alerts/?state=acknowledged").content.decode()

    assert f"/dashboard/alerts/{alert.pk}/acknowledge/" not in page


@pytest.mark.parametrize("note", ["x" * (NOTE_MAX + 1), "on\x00it"])
def test_a_note_the_api_would_refuse_is_a_400_naming_it(user_in, note):
    alert = _alert()

    response = _acknowledge(_client(user_in(Role.LEAD)), alert, note)

    assert response.status_code == 400
    assert 'data-field="note"' in response.content.decode()
    alert.refresh_from_db()
    assert (alert.state, alert.note) == (Alert.State.OPEN, "")


def test_a_note_at_the_cap_is_taken_and_audited(user_in):
    alert = _alert()
    lead = user_in(Role.LEAD)

    assert _acknowledge(_client(lead), alert, "x" * NOTE_MAX).status_code == 302

    event = AuditEvent.objects.get(action=AuditEvent.Action.ALERT_ACKNOWLEDGE)
    assert (event.actor, event.after["note"]) == (lead, "x" * NOTE_MAX)
