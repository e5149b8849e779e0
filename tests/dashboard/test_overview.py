"""The overview's numbers against the raw rows they summarise, and its filter errors."""

import pytest
from django.test import Client
from django.utils import timezone
from statsmodels.stats.proportion import proportion_confint

from dashboard.rollups import rollups_refresh
from gating import reviews, services
from gating.models import Output, ReviewItem
from gating.roles import Role
from gating.submissions import OutputSubmission
from learning.models import Alert
from tests.factories import TaskTypeFactory, UserFactory, valid_submission

pytestmark = pytest.mark.django_db


def _submission(n: int) -> OutputSubmission:
    # Vary the validators so the gate's decisions vary.
    validators = [
        {"name": "facts", "passed": n % 3 != 0},
        {"name": "schema", "passed": n % 2 == 0},
        {"name": "grammar", "passed": True},
    ]
    return valid_submission(task_type="overview", validators=validators)


@pytest.fixture
def history(gateway):
    """30 outputs out of cold start, every delivered one audited (inclusion probability 1),
    and a reviewer who rejects every third audit."""
    TaskTypeFactory(
        name="overview",
        review_threshold=4.0,
        approve_threshold=7.5,
        reviewed_count=1000,
        audit_rate_approved=1.0,
        audit_rate_warning=1.0,
        double_review_rate=0.0,
    )
    for n in range(30):
        services.output_ingest(source=gateway, submission=_submission(n))
    reviewer = UserFactory(role=Role.REVIEWER)
    for n, item in enumerate(ReviewItem.objects.filter(kind="audit").order_by("id")):
        claimed = reviews.item_claim(reviewer=reviewer, items=ReviewItem.objects.filter(pk=item.pk))
        action = "reject" if n % 3 == 0 else "approve"
        reviews.item_decide(
            item_id=claimed.pk,
            reviewer=reviewer,
            decision=reviews.DecisionInput(
                action=action, reason="factual_error" if action == "reject" else ""
            ),
        )
    rollups_refresh()
    return reviewer


def _overview(user, query=""):
    client = Client()
    client.force_login(user)
    return client.get("/" + query)


def test_the_counts_are_the_raw_outputs(history):
    response = _overview(UserFactory(role=Role.LEAD), "?range=24h")
    assert response.status_code == 200
    context = response.context

    outputs = list(Output.objects.all())
    assert context["total"] == len(outputs) == 30
    raw = {
        d: sum(o.decision == d for o in outputs) for d in ("approved", "warning", "pending_review")
    }
    assert dict(context["by_decision"]) == raw
    assert all(raw.values())  # every decision occurs, or the test says little
    assert dict(context["by_status"]) == {
        s: sum(o.status == s for o in outputs) for s in {o.status for o in outputs}
    }
    assert context["held_share"] == pytest.approx(raw["pending_review"] / 30)
    histogram = context["score_histogram"]
    assert sum(sum(trace["y"]) for trace in histogram["data"] if trace["type"] == "bar") == 30


def test_the_audit_estimates_are_the_plain_rates_when_every_output_is_audited(history):
    response = _overview(UserFactory(role=Role.LEAD), "?range=24h")
    estimates = {row["decision"]: row for row in response.context["audit_estimates"]}

    for decision in ("approved", "warning"):
        audits = ReviewItem.objects.filter(kind="audit", output__decision=decision)
        n = audits.count()
        rejected = audits.filter(review__action="reject").count()
        row = estimates[decision]
        assert row["audits"] == n
        if n == 0:
            assert row["rate"] is None
            continue
        # Inclusion probability 1: every weight is 1, so the estimate is the plain share.
        assert row["rate"] == pytest.approx(rejected / n)
        assert (row["low"], row["high"]) == pytest.approx(
            proportion_confint(rejected, n, alpha=0.05, method="wilson")
        )


def test_the_range_filters_what_is_counted(history):
    response = _overview(
        UserFactory(role=Role.LEAD), "?range=custom&since=2020-01-01&until=2020-01-02"
    )
    assert response.status_code == 200
    assert response.context["total"] == 0
    assert "No data in this range." in response.content.decode()


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("?range=fortnight", "range"),
        ("?range=custom&since=yesterday", "since"),
        ("?range=custom&since=2026-02-02&until=2026-02-01", "until"),
        ("?task_type=no-such-task", "task_type"),
    ],
)
def test_a_bad_filter_is_a_400_that_names_it(history, query, field):
    response = _overview(UserFactory(role=Role.REVIEWER), query)
    assert response.status_code == 400
    page = response.content.decode()
    assert f'data-field="{field}"' in page
    assert response.context["filter_error"].field == field


def test_open_alerts_link_to_their_page_for_those_who_may_open_it(db):
    # A score shift on one model, as the alerts cycle stores it: a lead sees it linked to
    # the drift page filtered to the model; a reviewer, who may not open that page or the
    # alerts, is not shown it at all.
    now = timezone.now()
    Alert.objects.create(
        rule=Alert.Rule.SCORE_SHIFT,
        subject="t gpt-x",
        message="The scores of model gpt-x on t differ.",
        value=0.4,
        limit=0.25,
        link="/dashboard/drift/?range=30d&task_type=t&model=gpt-x",
        first_seen=now,
        last_seen=now,
    )
    lead = _overview(UserFactory(role=Role.LEAD)).content.decode()
    assert (
        '<a href="/dashboard/drift/?range=30d&amp;task_type=t&amp;model=gpt-x">t gpt-x</a>' in lead
    )
    reviewer = _overview(UserFactory(role=Role.REVIEWER)).content.decode()
    assert "Open alerts" not in reviewer and "t gpt-x" not in reviewer
