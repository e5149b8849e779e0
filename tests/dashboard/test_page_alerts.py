"""The alerts page: who may open it and acknowledge, the note, resolved alerts, and links
to the dashboard pages that show what raised each alert."""

import pytest
from django.urls import Resolver404, resolve
from django.utils import timezone

from gating.roles import Role
from learning.alerts import alert_page_path
from learning.models import Alert
from tests.factories import TaskTypeFactory, logged_in

pytestmark = pytest.mark.django_db


def _alert(**fields) -> Alert:
    now = timezone.now()
    values = {
        "rule": Alert.Rule.THRESHOLD_DRIFT,
        "subject": "summarize approve threshold",
        "message": "The approve threshold of summarize moved 0.60 in 24 h (limit 0.5).",
        "value": 0.6,
        "limit": 0.5,
        "link": "/dashboard/drift/?range=7d&task_type=summarize",
        "first_seen": now,
        "last_seen": now,
    }
    return Alert.objects.create(**values | fields)


@pytest.mark.parametrize(
    ("role", "status"),
    [(Role.GATEWAY, 403), (Role.REVIEWER, 403), (Role.LEAD, 200), (Role.ADMIN, 200)],
)
def test_who_may_open_the_alerts(user_in, role, status):
    _alert()
    assert logged_in(user_in(role)).get("/dashboard/alerts/").status_code == status


@pytest.mark.parametrize(
    ("role", "status"),
    [(Role.GATEWAY, 403), (Role.REVIEWER, 403), (Role.LEAD, 302), (Role.ADMIN, 302)],
)
def test_who_may_acknowledge(user_in, role, status):
    alert = _alert()
    response = logged_in(user_in(role)).post(
        f"/dashboard/alerts/{alert.pk}/acknowledge/", {"note": "On it"}
    )
    assert response.status_code == status
    alert.refresh_from_db()
    assert (alert.state == "acknowledged") == (status == 302)


def test_anonymous_visitors_go_to_the_login_page(client):
    response = client.get("/dashboard/alerts/")
    assert response.status_code == 302 and response["Location"].startswith("/login/")


def test_a_lead_acknowledges_with_a_note_and_opens_the_link(user_in):
    alert = _alert(rule="backlog", subject="review queue", link=alert_page_path("backlog"))
    lead = logged_in(user_in(Role.LEAD, username="lee"))

    response = lead.post(
        f"/dashboard/alerts/{alert.pk}/acknowledge/", {"note": "Checking the audits"}, follow=True
    )

    # Back on the list the lead was on (the open one), not on another tab.
    assert response.redirect_chain == [("/dashboard/alerts/?state=open#alerts", 302)]
    assert "Acknowledged: Review backlog, review queue." in response.content.decode()
    alert.refresh_from_db()
    assert (alert.state, alert.acknowledged_by.username, alert.note) == (
        "acknowledged",
        "lee",
        "Checking the audits",
    )
    page = lead.get("/dashboard/alerts/?state=acknowledged").content.decode()
    assert "Checking the audits" in page
    assert 'href="/dashboard/queue/"' in page
    assert lead.get(alert.link).status_code == 200


@pytest.mark.parametrize(
    "rule", ["backlog", "threshold_drift", "validator_accuracy", "score_shift"]
)
def test_every_rules_link_is_a_page_a_lead_may_open(user_in, rule):
    TaskTypeFactory(name="summarize")
    link = alert_page_path(rule, None if rule == "backlog" else "summarize")
    try:
        resolve(link.split("?")[0])
    except Resolver404:
        pytest.skip(f"{link} is not routed yet")
    assert logged_in(user_in(Role.LEAD)).get(link).status_code == 200


def test_a_note_is_required(user_in):
    alert = _alert()
    response = logged_in(user_in(Role.LEAD)).post(
        f"/dashboard/alerts/{alert.pk}/acknowledge/", {"note": "  "}
    )
    assert response.status_code == 400
    assert 'data-field="note"' in response.content.decode()
    alert.refresh_from_db()
    assert alert.state == "open"


def test_a_resolved_alert_says_so_rather_than_failing(user_in):
    alert = _alert(state=Alert.State.RESOLVED, resolved_at=timezone.now())
    response = logged_in(user_in(Role.LEAD)).post(
        f"/dashboard/alerts/{alert.pk}/acknowledge/", {"note": "Too late"}
    )
    assert response.status_code == 409
    assert "already resolved" in response.content.decode()
    alert.refresh_from_db()
    assert alert.state == "resolved" and alert.note == ""


def test_the_state_in_the_url_chooses_the_tab(user_in):
    _alert(subject="open one")
    _alert(subject="closed one", state=Alert.State.RESOLVED, resolved_at=timezone.now())
    lead = logged_in(user_in(Role.LEAD))
    assert "open one" in lead.get("/dashboard/alerts/").content.decode()
    assert "closed one" not in lead.get("/dashboard/alerts/").content.decode()
    resolved = lead.get("/dashboard/alerts/?state=resolved").content.decode()
    assert "closed one" in resolved and "open one" not in resolved
    assert lead.get("/dashboard/alerts/?state=gone").status_code == 400


@pytest.mark.parametrize(
    ("rule", "subject", "link"),
    [
        ("backlog", "review queue", "/dashboard/queue/"),
        (
            "threshold_drift",
            "summarize long review threshold",
            "/dashboard/drift/?range=7d&amp;task_type=summarize+long",
        ),
        (
            "validator_accuracy",
            "summarize facts",
            "/dashboard/validators/?range=30d&amp;task_type=summarize",
        ),
        ("score_shift", "summarize", "/dashboard/drift/?range=30d&amp;task_type=summarize"),
    ],
)
def test_an_alert_stored_with_an_admin_link_links_to_the_dashboard(user_in, rule, subject, link):
    TaskTypeFactory(name="summarize")
    TaskTypeFactory(name="summarize long")
    _alert(rule=rule, subject=subject, link="/admin/learning/thresholdchange/?task_type__id=1")
    page = logged_in(user_in(Role.LEAD)).get("/dashboard/alerts/").content.decode()
    assert f'href="{link}"' in page
    assert "/admin/learning" not in page


def test_alert_text_is_escaped(user_in):
    _alert(subject="<script>alert(1)</script>", message="<b>bold</b>")
    page = logged_in(user_in(Role.LEAD)).get("/dashboard/alerts/").content.decode()
    assert "<script>alert(1)</script>" not in page and "<b>bold</b>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page


def test_alerts_are_grouped_by_rule_the_urgent_first_with_units_in_words(user_in):
    _alert()  # threshold drift: medium, 0.6 points
    _alert(rule="insufficient_evidence", subject="classify", value=61.0, limit=736.0)
    _alert(rule="backlog", subject="review queue", value=309.5, limit=24.0)
    page = logged_in(user_in(Role.LEAD)).get("/dashboard/alerts/").content.decode()
    groups = [
        "Review backlog · high · 1",
        "Threshold drift · medium · 1",
        "Insufficient evidence · low · 1",
    ]
    assert all(g in page for g in groups)
    assert [page.index(g) for g in groups] == sorted(page.index(g) for g in groups)
    # Each value and limit with its unit (learning.alerts.measure_words).
    assert "<td>12 d 22 h</td>" in page and "<td>1 d</td>" in page
    assert "<td>0.60 points of score in 24 h</td>" in page
    assert "<td>61 effective outputs</td>" in page and "<td>736 effective outputs</td>" in page


def test_the_list_filters_by_rule_and_severity_in_the_url(user_in):
    _alert()
    _alert(rule="backlog", subject="review queue", value=30.0, limit=24.0)
    lead = logged_in(user_in(Role.LEAD))
    high = lead.get("/dashboard/alerts/?state=open&severity=high").content.decode()
    assert "review queue" in high and "summarize approve threshold" not in high
    drift = lead.get("/dashboard/alerts/?rule=threshold_drift").content.decode()
    assert "summarize approve threshold" in drift and "review queue" not in drift
    for query, field in (("rule=nonsense", "rule"), ("severity=urgent", "severity")):
        response = lead.get(f"/dashboard/alerts/?{query}")
        assert response.status_code == 400
        assert f'data-field="{field}"' in response.content.decode()


def test_a_lead_acknowledges_many_with_one_note_and_is_told_of_any_taken(user_in):
    first = _alert(subject="summarize approve threshold")
    second = _alert(subject="classify approve threshold")
    taken = _alert(subject="draft approve threshold", state=Alert.State.RESOLVED)
    lead = logged_in(user_in(Role.LEAD, username="lee"))
    response = lead.post(
        "/dashboard/alerts/acknowledge/",
        {
            "alert": [first.pk, second.pk, taken.pk],
            "note": "Raising audits",
            "state": "open",
            "rule": "threshold_drift",
        },
        follow=True,
    )
    assert response.redirect_chain == [
        ("/dashboard/alerts/?state=open&rule=threshold_drift#alerts", 302)
    ]
    page = response.content.decode()
    assert "Acknowledged 2 alerts." in page and "already resolved" in page
    for alert in (first, second):
        alert.refresh_from_db()
        assert (alert.state, alert.note) == ("acknowledged", "Raising audits")
    # Nothing ticked, a number that is not one, or no note: a 400 naming what is wrong.
    for data, field in (
        ({"note": "x"}, "alert"),
        ({"alert": "²", "note": "x"}, "alert"),
        ({"alert": first.pk}, "note"),
    ):
        refused = lead.post("/dashboard/alerts/acknowledge/", data)
        assert refused.status_code == 400
        assert f'data-field="{field}"' in refused.content.decode()
