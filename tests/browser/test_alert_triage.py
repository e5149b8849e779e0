"""Alert triage in a real browser: filter by severity, acknowledge many with one note, and
stay on the list one was on."""

import re

from django.utils import timezone

from gating.roles import Role
from learning.models import Alert
from tests.browser.helpers import accessibility_violations, log_in
from tests.factories import UserFactory


def _alert(subject: str, rule: str = "threshold_drift", value: float = 0.6) -> Alert:
    now = timezone.now()
    return Alert.objects.create(
        rule=rule, subject=subject, message=f"{subject} moved.", value=value, limit=0.5,
        link="/dashboard/drift/?range=7d", first_seen=now, last_seen=now,
    )  # fmt: skip


def test_a_lead_triages_the_medium_alerts_and_stays_on_the_list(page, problems):
    drifts = [_alert("summarize approve threshold"), _alert("classify approve threshold")]
    backlog = _alert("review queue", rule="backlog", value=30.0)
    log_in(page, UserFactory(role=Role.LEAD, username="lena"))
    page.goto("/dashboard/alerts/")
    assert accessibility_violations(page) == []

    page.get_by_role("checkbox", name="medium").check()
    page.get_by_role("button", name="Show").click()
    page.wait_for_url(re.compile(r"[?&]severity=medium"))
    assert page.get_by_role("link", name="review queue").count() == 0
    for alert in drifts:
        page.get_by_role("checkbox", name=f"Tick {alert.subject}").check()
    page.get_by_label("Note for every alert ticked below").fill("Looking at the audits")
    page.get_by_role("button", name="Acknowledge the ticked alerts").click()

    # Back on the open, medium list, told what was done; the backlog is still open.
    page.wait_for_url(re.compile(r"state=open&severity=medium#alerts$"))
    assert "Acknowledged 2 alerts." in page.locator(".messages").inner_text()
    assert page.locator("#alerts-title").inner_text() == "0 open alerts"
    assert {a.state for a in Alert.objects.filter(pk__in=[d.pk for d in drifts])} == {
        Alert.State.ACKNOWLEDGED
    }
    backlog.refresh_from_db()
    assert backlog.state == Alert.State.OPEN
    assert problems == []
