"""Alerts: each rule against hand-made situations, opened once, notified once, acknowledged
by a lead, resolved by themselves."""

from datetime import UTC, datetime, timedelta

import pytest
from django.core import mail

from dashboard import metrics
from dashboard.filters import DashboardFilter
from dashboard.rollups import rollups_refresh
from gating import reviews, services
from gating.models import OutboxMessage, ReviewItem, TaskType, Webhook, WebhookDelivery
from gating.reviews import DecisionInput, RecordedDecision
from gating.roles import Role
from learning import alerts, cycles
from learning.models import Alert, CycleRun, ValidatorAssessment
from tests.factories import TaskTypeFactory, ingested_many, valid_submission

pytestmark = pytest.mark.django_db

NOW = datetime(2026, 3, 20, 12, 0, tzinfo=UTC)


def ingest(gateway, count, *, at, task_type="t", facts=True, model="model-a", **fields):
    if not TaskType.objects.filter(name=task_type).exists():
        # Always in cold start, so that every output is held for review.
        TaskTypeFactory(
            name=task_type,
            reviewed_count=0,
            cold_start_reviews=1_000_000,
            double_review_rate=0.0,
            **fields,
        )
    validators = [{"name": "facts", "passed": facts}, {"name": "tone", "passed": True}]
    submissions = [
        valid_submission(task_type=task_type, model=model, validators=validators)
        for _ in range(count)
    ]
    return ingested_many(gateway, submissions, at=at)


def decide(outputs, reviewer, action, at):
    decision = DecisionInput(action, reason="factual_error" if action == "reject" else "")
    reviews.decisions_record(
        [
            RecordedDecision(ReviewItem.objects.get(output=o, state="open"), reviewer, decision, at)
            for o in outputs
        ]
    )


def findings(rule, now=NOW):
    return {f.subject: f for f in rule(now)}


# --------------------------------------------------------------------------- backlog


def test_backlog_fires_on_the_oldest_item_and_on_the_projected_wait(gateway, user_in):
    reviewer = user_in(Role.REVIEWER)
    ingest(gateway, 5, at=NOW - timedelta(hours=30))
    (found,) = alerts.backlog(NOW)
    assert found.firing
    # No decisions in the last day: the wait is unbounded; the oldest waited 30 h, written
    # as every page writes a duration (gating.formatting).
    assert found.message == (
        "5 items waiting; the oldest for 1 d 6 h; at the last day's pace of 0 decisions the "
        "queue takes forever to clear (limit 1 d)."
    )

    # 48 decisions in the last 24 h is 2 an hour; 10 fresh items would take 5 h. Not a
    # backlog once the old ones are gone.
    old = [i.output for i in ReviewItem.objects.select_related("output")]
    decide(old, reviewer, "approve", NOW - timedelta(hours=1))
    extra = ingest(gateway, 43, at=NOW - timedelta(hours=20))
    decide(extra, reviewer, "approve", NOW - timedelta(hours=2))
    ingest(gateway, 10, at=NOW - timedelta(hours=1))
    (found,) = alerts.backlog(NOW)
    assert not found.firing
    assert found.value == pytest.approx(5.0)  # 10 items / (48 per 24 h)


def test_an_alert_opens_once_notifies_once_and_resolves_itself(
    gateway, user_in, client_for, django_capture_on_commit_callbacks
):
    lead = user_in(Role.LEAD, email="lead@example.com")
    user_in(Role.REVIEWER, email="reviewer@example.com")
    admin = user_in(Role.ADMIN)
    Webhook.objects.create(owner=admin, url="https://93.184.216.34/slack", kind="alerts")
    Webhook.objects.create(owner=gateway, url="https://93.184.216.34/decisions")
    outputs = ingest(gateway, 3, at=NOW - timedelta(hours=30))

    with django_capture_on_commit_callbacks(execute=True):
        alerts.alerts_evaluate(NOW)
        alerts.alerts_evaluate(NOW + timedelta(minutes=5))

    (alert,) = Alert.objects.filter(rule="backlog")
    assert alert.state == "open"
    assert alert.first_seen == NOW and alert.last_seen == NOW + timedelta(minutes=5)
    assert alert.link == "/dashboard/queue/"
    # Leads are told once, by email and by the alert webhook only.
    assert [m.to for m in mail.outbox] == [["lead@example.com"]]
    (delivery,) = WebhookDelivery.objects.all()
    assert list(OutboxMessage.objects.values_list("task", "args")) == [
        ("gating.tasks.webhook_deliver", [delivery.pk])
    ]
    assert delivery.webhook.kind == "alerts"
    assert delivery.payload["alert"]["rule"] == "backlog"
    assert "review queue" in delivery.payload["text"]

    api = client_for(lead)
    response = api.post(f"/api/v1/alerts/{alert.pk}/acknowledge/", {}, format="json")
    assert response.status_code == 400 and "note" in response.json()
    response = api.post(
        f"/api/v1/alerts/{alert.pk}/acknowledge/", {"note": "Two more on shift"}, format="json"
    )
    assert response.status_code == 200
    assert response.json()["state"] == "acknowledged"
    assert response.json()["acknowledged_by"] == lead.username

    reviewer = user_in(Role.REVIEWER)
    decide(outputs, reviewer, "approve", NOW + timedelta(minutes=6))
    alerts.alerts_evaluate(NOW + timedelta(minutes=10))
    alert.refresh_from_db()
    assert alert.state == "resolved" and alert.resolved_at == NOW + timedelta(minutes=10)
    assert len(mail.outbox) == 1

    response = api.post(f"/api/v1/alerts/{alert.pk}/acknowledge/", {"note": "x"}, format="json")
    assert response.status_code == 409
    assert client_for(reviewer).get("/api/v1/alerts/").status_code == 403
    listed = api.get("/api/v1/alerts/?state=resolved").json()
    assert [a["id"] for a in listed] == [alert.pk]


# --------------------------------------------------------------------------- thresholds


def test_threshold_drift_counts_every_edit_within_a_day(user_in):
    admin = user_in(Role.ADMIN)
    task_type = TaskTypeFactory(name="drifting", approve_threshold=7.0)

    def edit(hours_ago, value):
        with pytest.MonkeyPatch.context() as patched:
            patched.setattr("django.utils.timezone.now", lambda: NOW - timedelta(hours=hours_ago))
            services.gate_settings_change(
                task_type=task_type,
                changes={"approve_threshold": value},
                actor=admin,
                reason="tuning",
                source=services.EditSource.PAGE,
            )

    edit(30, 6.9)
    edit(20, 7.2)
    edit(10, 7.4)
    found = findings(alerts.threshold_drift)["drifting approve threshold"]
    # Within 24 h it went from 6.9 (before the edit 20 h ago) to 7.4: 0.5, not over.
    assert found.value == pytest.approx(0.5)
    assert not found.firing
    edit(1, 7.5)
    found = findings(alerts.threshold_drift)["drifting approve threshold"]
    assert found.value == pytest.approx(0.6)
    assert found.firing
    assert found.link == "/dashboard/drift/?range=7d&task_type=drifting"
    assert not findings(alerts.threshold_drift)["drifting review threshold"].firing


# --------------------------------------------------------------------------- validators


def test_the_accuracy_alert_says_what_its_chart_shows(gateway, user_in, settings):
    # Three weeks ago: facts passes on the 40 approved outputs and fails on the 40 rejected.
    # The validators cycle a week ago judges those 80 alone. Three days ago: 120 more, facts
    # passing on all, every one rejected; the cycle now judges all 200 over its 30 days. The
    # alert compares the two cycles, and its numbers are the validators chart's points.
    settings.LEARNING_MIN_VERDICTS = 50
    reviewer = user_in(Role.REVIEWER)
    weeks_ago = NOW - timedelta(days=20)
    decide(ingest(gateway, 40, at=weeks_ago), reviewer, "approve", weeks_ago)
    decide(ingest(gateway, 40, at=weeks_ago, facts=False), reviewer, "reject", weeks_ago)
    week_ago = cycles.cycle_run(CycleRun.Kind.VALIDATORS, NOW - timedelta(days=7))
    recent_at = NOW - timedelta(days=3)
    decide(ingest(gateway, 120, at=recent_at), reviewer, "reject", recent_at)
    latest = cycles.cycle_run(CycleRun.Kind.VALIDATORS, NOW)

    shown = metrics.METRICS["validator-accuracy"].rows(
        DashboardFilter(since=NOW - timedelta(days=30), until=NOW + timedelta(hours=1))
    )
    point = {(r["at"], r["validator"]): r["value"] for r in shown}
    then, now = point[(week_ago.window_end, "facts")], point[(latest.window_end, "facts")]
    # The cycles read the label model's verdicts, not the reviewer's alone: facts agreed
    # with nearly all of the first window's, and with well under nine in ten of the second.
    assert then == pytest.approx(1.0, abs=0.02)
    assert now < then - alerts.ACCURACY_DROP

    found = findings(alerts.validator_accuracy)
    assert found["t facts"].value == pytest.approx(round(then - now, 4))
    assert found["t facts"].firing
    assert (
        f"accuracy {then:.0%} in the validators cycle to {week_ago.window_end:%Y-%m-%d %H:%M}"
        in (found["t facts"].message)
    )
    assert f"{now:.0%} in the cycle to {latest.window_end:%Y-%m-%d %H:%M} UTC (200 verdicts)" in (
        found["t facts"].message
    )
    assert found["t facts"].link == "/dashboard/validators/?range=30d&task_type=t"
    # tone passed throughout: it agrees with the approvals only, which became fewer.
    tone_then, tone_now = point[(week_ago.window_end, "tone")], point[(latest.window_end, "tone")]
    assert found["t tone"].value == pytest.approx(round(tone_then - tone_now, 4))

    # A cycle that judged fewer than 30 outputs is not read.
    ValidatorAssessment.objects.filter(cycle=week_ago).update(n=29)
    assert "t facts" not in findings(alerts.validator_accuracy)


# --------------------------------------------------------------------------- scores


def test_score_shift_names_the_model_and_says_what_its_chart_shows(gateway):
    # On one task type, model steady scores as it did; model gpt-x fails a validator today.
    # Same distribution: no alert. (Submissions from the factory all score alike.)
    ingest(gateway, 50, at=NOW - timedelta(days=4), model="steady")
    ingest(gateway, 40, at=NOW - timedelta(hours=3), model="steady")
    ingest(gateway, 50, at=NOW - timedelta(days=4), model="gpt-x")
    ingest(gateway, 40, at=NOW - timedelta(hours=3), model="gpt-x", facts=False)
    # Fewer than 30 scores today or yesterday: no index at all.
    ingest(gateway, 50, at=NOW - timedelta(days=4), model="quiet")
    ingest(gateway, 29, at=NOW - timedelta(hours=3), model="quiet", facts=False)

    found = findings(alerts.score_shift)
    assert found["t steady"].value == pytest.approx(0.0)
    assert not found["t steady"].firing
    shifted = found["t gpt-x"]
    assert shifted.firing
    assert "model gpt-x on t on 2026-03-20 (UTC, so far)" in shifted.message
    assert shifted.link == "/dashboard/drift/?range=30d&task_type=t&model=gpt-x"
    assert "t quiet" not in found

    # The drift page's PSI chart, for the filter the alert links to, ends on that value.
    rollups_refresh(NOW)
    shown = metrics.METRICS["psi"].rows(
        DashboardFilter(
            since=NOW - timedelta(days=30), until=NOW, task_types=("t",), models=("gpt-x",)
        )
    )
    latest = max(shown, key=lambda r: r["at"])
    assert (latest["at"], latest["model"]) == (NOW.date(), "gpt-x")
    assert shifted.value == pytest.approx(round(latest["psi"], 4))


# --------------------------------------------------------------------------- relief


def test_backlog_relief_after_a_week_releases_near_threshold_items_as_warnings(gateway, user_in):
    from gating.models import AuditEvent, Output

    # Review threshold 4.0: items scoring from 3.0 up are released, lower ones stay.
    near = ingest(gateway, 4, at=NOW - timedelta(days=9), task_type="relieved")
    # Out of cold start (which holds everything, whatever the score: not relieved).
    TaskType.objects.filter(name="relieved").update(
        backlog_relief=True, audit_rate_warning=1.0, review_threshold=4.0, cold_start_reviews=0
    )
    Output.objects.filter(pk=near[0].pk).update(score=2.5)
    ReviewItem.objects.filter(output=near[0]).update(score=2.5)
    Output.objects.filter(pk__in=[o.pk for o in near[1:]]).update(score=3.2)
    ReviewItem.objects.filter(output__in=near[1:]).update(score=3.2)
    untouched = ingest(gateway, 2, at=NOW - timedelta(days=9), task_type="not-opted-in")
    ReviewItem.objects.filter(output__in=untouched).update(score=3.5)

    alerts.alerts_evaluate(NOW - timedelta(days=8))  # the backlog alert opens
    counts, _ = alerts.alerts_evaluate(NOW - timedelta(days=2))  # 6 days: not yet
    assert "relieved" not in counts
    counts, changes = alerts.alerts_evaluate(NOW)  # 8 days
    assert counts["relieved"] == 3
    assert {"backlog_relief": {"relieved": 3}} in changes

    released = Output.objects.filter(pk__in=[o.pk for o in near[1:]])
    assert {(o.status, o.decision) for o in released} == {("approved", "warning")}
    assert Output.objects.get(pk=near[0].pk).status == "pending"
    assert set(
        Output.objects.filter(pk__in=[o.pk for o in untouched]).values_list("status", flat=True)
    ) == {"pending"}
    # Audit-sampled at the warning rate (1.0 here) and logged.
    assert ReviewItem.objects.filter(output__in=released, kind="audit", state="open").count() == 3
    assert AuditEvent.objects.filter(action="backlog_relief").count() == 3


def test_each_rules_value_reads_with_its_unit():
    words = alerts.measure_words
    assert words("backlog", 309.5) == "12 d 22 h"
    assert words("validator_accuracy", 0.125) == "12.50 percentage points lower"
    assert words("validator_accuracy", -0.05) == "5.00 percentage points higher"
    assert words("score_shift", 0.3141) == "PSI 0.31"
    assert words("insufficient_evidence", 735.93) == "736 effective outputs"
    assert words("not_attainable", 0.0123) == "error 1.2%"
    assert words("scoring_fault", 3) == "3 outputs"
    assert words("backlog", None) == "—"
