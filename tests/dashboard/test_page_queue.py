"""The queue charts page against the queue it summarises, its roles and its filter."""

from datetime import timedelta
from statistics import mean

import pytest
from django.test import Client
from django.utils import timezone

from dashboard.metrics import metric_rows
from dashboard.rollups import queue_snapshot_take, rollups_refresh
from gating import reviews, services
from gating.models import Review, ReviewItem
from gating.roles import Role
from tests.factories import TaskTypeFactory, UserFactory, valid_submission

pytestmark = pytest.mark.django_db

# Seconds from claim to decision of each decision, in order.
TOOK = [20, 45, 100, 250, 400]


@pytest.fixture
def queue(gateway):
    """Nine held outputs (cold start), five decided by two reviewers, four left open."""
    TaskTypeFactory(name="held", reviewed_count=0, double_review_rate=0.0)
    for _ in range(9):
        services.output_ingest(source=gateway, submission=valid_submission(task_type="held"))
    people = [UserFactory(role=Role.REVIEWER, username=n) for n in ("ann", "bob")]
    start = timezone.now() - timedelta(hours=2)
    for n, took in enumerate(TOOK):
        reviewer = people[n % 2]
        claimed_at = start + timedelta(minutes=10 * n)
        item = reviews.item_claim(reviewer=reviewer, now=claimed_at)
        reviews.item_decide(
            item_id=item.pk,
            reviewer=reviewer,
            decision=reviews.DecisionInput(action="approve"),
            now=claimed_at + timedelta(seconds=took),
        )
    queue_snapshot_take()
    rollups_refresh()
    return people


def _get(user, query=""):
    client = Client()
    client.force_login(user)
    return client.get("/dashboard/queue/" + query)


def _trace_total(figure) -> int:
    return sum(sum(y for y in trace["y"] if y) for trace in figure["data"])


def test_the_numbers_are_the_queue_s(queue):
    response = _get(UserFactory(role=Role.LEAD), "?range=24h")
    assert response.status_code == 200
    context = response.context
    open_items = ReviewItem.objects.filter(state="open")
    assert context["open_items"] == open_items.count() == 4
    assert context["queue_size"]["data"][0]["y"][-1] == 4
    assert _trace_total(context["queue_age"]) == 4
    assert [i.pk for i in context["oldest_items"]] == list(
        open_items.order_by("queued_at", "id").values_list("pk", flat=True)
    )
    per_reviewer = {
        trace["name"]: sum(trace["y"]) for trace in context["reviewer_decisions"]["data"]
    }
    assert per_reviewer == {
        name: Review.objects.filter(reviewer__username=name).count() for name in ("ann", "bob")
    }
    # Five decisions in the last day: 5 / 24 an hour, so four items take 4 / (5 / 24) hours.
    assert context["decisions_last_day"] == 5
    assert context["projected_wait_seconds"] == pytest.approx(4 / (5 / 24) * 3600)
    assert "19 hours" in response.content.decode() or "19 h" in response.content.decode()


def test_the_decision_times_are_the_reviews(queue):
    response = _get(UserFactory(role=Role.LEAD), "?range=24h")
    rows = {
        row["reviewer"]: row
        for row in metric_rows("reviewer-times", response.context["dashboard_filter"])
    }
    for name, took in (("ann", TOOK[0::2]), ("bob", TOOK[1::2])):
        assert rows[name]["decisions"] == len(took)
        assert rows[name]["mean_seconds"] == pytest.approx(mean(took))
    # The chart draws those rows: a bar per reviewer.
    assert sorted(response.context["reviewer_times"]["data"][0]["y"]) == ["ann", "bob"]


def test_the_oldest_items_link_to_review_for_reviewers_only(queue):
    lead_page = _get(UserFactory(role=Role.LEAD), "?range=24h").content.decode()
    item = ReviewItem.objects.filter(state="open").order_by("queued_at", "id").first()
    assert f'href="/review/{item.pk}/"' in lead_page


@pytest.mark.parametrize(
    ("role", "status"),
    [(Role.GATEWAY, 403), (Role.REVIEWER, 200), (Role.LEAD, 200), (Role.ADMIN, 200)],
)
def test_the_roles(queue, role, status):
    response = _get(UserFactory(role=role))
    assert response.status_code == status
    if status == 200:
        # The CSV links are for leads and admins.
        has_csv = "/api/v1/metrics/queue-size/?format=csv&amp;range=7d" in response.content.decode()
        assert has_csv == (role in (Role.LEAD, Role.ADMIN))


def test_a_bad_filter_is_a_400_that_names_it(queue):
    response = _get(UserFactory(role=Role.LEAD), "?range=custom&since=soon")
    assert response.status_code == 400
    assert 'data-field="since"' in response.content.decode()


def test_an_empty_range_says_so(queue):
    response = _get(UserFactory(role=Role.LEAD), "?range=custom&since=2020-01-01&until=2020-01-02")
    assert response.status_code == 200
    assert response.context["queue_size"] is None
    assert "No data in this range." in response.content.decode()


def test_a_reviewer_gets_no_link_to_an_adjudication(queue):
    item = ReviewItem.objects.filter(state="open").order_by("queued_at", "id").first()
    ReviewItem.objects.filter(pk=item.pk).update(kind="adjudication")
    reviewer_page = _get(UserFactory(role=Role.REVIEWER), "?range=24h").content.decode()
    lead_page = _get(UserFactory(role=Role.LEAD), "?range=24h").content.decode()
    assert f'href="/review/{item.pk}/"' not in reviewer_page
    assert f'href="/review/{item.pk}/"' in lead_page
