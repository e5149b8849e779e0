"""Every write refuses unknown and read-only fields by name and takes JSON types strictly;
a refused write changes nothing. Form bodies (the pages' htmx) are strings by nature."""

import pytest
from django.utils import timezone

from gating import reviews
from gating.models import AuditEvent, Output, Review, ReviewItem, TaskType
from gating.roles import Role
from learning.models import Alert
from tests.factories import SubmissionFactory, TaskTypeFactory

TASK_TYPE = "/api/v1/task-types/summarize/"


@pytest.fixture
def task_type(db):
    return TaskTypeFactory(name="summarize")


def assert_unchanged(task_type):
    before = (task_type.review_threshold, task_type.approve_threshold, task_type.updated_at)
    task_type.refresh_from_db()
    assert (task_type.review_threshold, task_type.approve_threshold, task_type.updated_at) == before
    assert not AuditEvent.objects.filter(action="threshold_edit").exists()


@pytest.mark.parametrize(
    ("body", "named"),
    [
        ({"review": 8, "approve": 6}, {"review", "approve"}),
        ({"review_threshold": 4.1, "approve": 6}, {"approve"}),
        ({"name": "renamed"}, {"name"}),
        ({"reviewed_count": 0, "in_cold_start": True}, {"reviewed_count", "in_cold_start"}),
        ({"created_at": "2026-01-01T00:00:00Z"}, {"created_at"}),
        ({"backlog_relief": "yes"}, {"backlog_relief"}),
        ({"backlog_relief": 1}, {"backlog_relief"}),
        ({"cold_start_margin": "4.15"}, {"cold_start_margin"}),
        ({"review_threshold": True}, {"review_threshold"}),
        ({"cold_start_reviews": 4.0}, {"cold_start_reviews"}),
        ({"cold_start_reviews": "4"}, {"cold_start_reviews"}),
        ({"threshold_policy": 1}, {"threshold_policy"}),
        ({"approve_requires": "sometimes"}, {"approve_requires"}),
        ({"approve_requires": False}, {"approve_requires"}),
        ({"review_threshold": None}, {"review_threshold"}),
        (
            {"review_threshold": 3.0, "colour": "blue", "backlog_relief": "no"},
            {"colour", "backlog_relief"},
        ),
    ],
)
def test_a_task_type_patch_with_a_field_it_cannot_apply_is_400_and_changes_nothing(
    admin_api, task_type, body, named
):
    response = admin_api.patch(TASK_TYPE, body, format="json")

    assert response.status_code == 400, response.content
    assert set(response.json()) == named
    assert_unchanged(task_type)


def test_a_task_type_patch_of_json_types_applies(admin_api, task_type):
    body = {"review_threshold": 3, "cold_start_reviews": 5, "backlog_relief": True}
    response = admin_api.patch(TASK_TYPE, body, format="json")

    assert response.status_code == 200, response.content
    task_type.refresh_from_db()
    assert (task_type.review_threshold, task_type.cold_start_reviews) == (3.0, 5)
    assert task_type.backlog_relief is True


@pytest.mark.parametrize("body", [{}, {"review_threshold": 4.0, "approve_threshold": 7.0}])
def test_a_patch_that_changes_nothing_is_200_and_records_nothing(admin_api, task_type, body):
    response = admin_api.patch(TASK_TYPE, body, format="json")

    assert response.status_code == 200
    assert response.json()["review_threshold"] == 4.0
    assert_unchanged(task_type)


# --------------------------------------------------------------------------- the queue


@pytest.fixture
def claimed(held_outputs, reviewer):
    held_outputs(1)
    return reviews.item_claim(reviewer=reviewer)


def assert_still_held(item, reviewer):
    current = ReviewItem.objects.get(pk=item.pk)
    assert (current.state, current.claimed_by_id) == ("open", reviewer.pk)
    assert current.lease_expires_at == item.lease_expires_at
    assert not Review.objects.exists()


@pytest.mark.parametrize(
    ("body", "named"),
    [
        ({"action": "approve", "colour": "blue"}, {"colour"}),
        ({"action": "approve", "reviewer": "someone"}, {"reviewer"}),
        ({"action": True}, {"action"}),
        ({"action": "approve", "note": 1}, {"note"}),
        ({"action": "reject", "reason": ["other"]}, {"reason"}),
        ({"action": "modify", "output": 42}, {"output"}),
    ],
)
def test_a_decision_with_a_field_it_cannot_take_is_400_and_decides_nothing(
    claimed, reviewer, reviewer_api, body, named
):
    response = reviewer_api.post(f"/api/v1/queue/{claimed.pk}/decision/", body, format="json")

    assert response.status_code == 400, response.content
    assert set(response.json()) == named
    assert_still_held(claimed, reviewer)


@pytest.mark.parametrize("action", ["heartbeat", "release"])
def test_heartbeat_and_release_take_no_fields(claimed, reviewer, reviewer_api, action):
    response = reviewer_api.post(
        f"/api/v1/queue/{claimed.pk}/{action}/", {"lease_seconds": 9999}, format="json"
    )

    assert response.status_code == 400
    assert set(response.json()) == {"lease_seconds"}
    assert_still_held(claimed, reviewer)


@pytest.mark.parametrize(
    ("body", "named"),
    [
        ({"colour": "blue"}, {"colour"}),
        ({"score_min": "1.5"}, {"score_min"}),
        ({"model": 7}, {"model"}),
    ],
)
def test_a_claim_body_takes_only_the_queue_filters_as_json(held_outputs, reviewer_api, body, named):
    held_outputs(1)

    response = reviewer_api.post("/api/v1/queue/claim/", body, format="json")

    assert response.status_code == 400
    assert set(response.json()) == named
    assert not ReviewItem.objects.filter(claimed_by__isnull=False).exists()


def test_a_claim_body_with_json_filters_claims(held_outputs, reviewer_api):
    held_outputs(1, task_type="t")
    body = {"task_type": "t", "score_min": 0, "score_max": 10.5}
    response = reviewer_api.post("/api/v1/queue/claim/", body, format="json")
    assert response.status_code == 200, response.content


@pytest.fixture
def lead_api(user_in, client_for):
    return client_for(user_in(Role.LEAD))


@pytest.mark.parametrize(
    ("body", "named"),
    [
        ({"action": "reject", "reason": "broken", "dry_run": "yes"}, {"dry_run"}),
        ({"action": "reject", "reason": "broken", "everything": True}, {"everything"}),
        ({"action": "reject", "reason": "broken", "score_max": "5"}, {"score_max"}),
    ],
)
def test_a_bulk_decision_with_a_field_it_cannot_take_is_400_and_decides_nothing(
    held_outputs, lead_api, body, named
):
    held_outputs(2)

    response = lead_api.post("/api/v1/queue/bulk-decision/", body, format="json")

    assert response.status_code == 400, response.content
    assert set(response.json()) == named
    assert not Review.objects.exists()


def test_form_bodies_are_strings_and_carry_the_csrf_token(held_outputs, reviewer, client_for):
    held_outputs(1)
    item = reviews.item_claim(reviewer=reviewer)
    api = client_for(reviewer)
    form = "application/x-www-form-urlencoded"

    unknown = api.post(
        f"/api/v1/queue/{item.pk}/decision/", "action=approve&colour=blue", content_type=form
    )
    decided = api.post(
        f"/api/v1/queue/{item.pk}/decision/",
        "action=approve&csrfmiddlewaretoken=abc",
        content_type=form,
    )

    assert unknown.status_code == 400 and set(unknown.json()) == {"colour"}
    assert decided.status_code == 201, decided.content


def test_a_form_dry_run_is_read_from_its_text(held_outputs, lead_api):
    held_outputs(2)
    response = lead_api.post(
        "/api/v1/queue/bulk-decision/",
        "action=reject&reason=broken&dry_run=true",
        content_type="application/x-www-form-urlencoded",
    )
    assert response.json() == {"outputs": 2, "dry_run": True}
    assert not Review.objects.exists()


# --------------------------------------------------------------------------- alerts


@pytest.fixture
def alert(db):
    now = timezone.now()
    return Alert.objects.create(
        rule="backlog", subject="review queue", message="m", first_seen=now, last_seen=now
    )


@pytest.mark.parametrize(
    ("body", "named"),
    [
        ({"note": "on it", "state": "resolved"}, {"state"}),
        ({"note": "on it", "acknowledged_by": "me"}, {"acknowledged_by"}),
        ({"note": 5}, {"note"}),
    ],
)
def test_an_acknowledgement_with_a_field_it_cannot_take_is_400(alert, lead_api, body, named):
    response = lead_api.post(f"/api/v1/alerts/{alert.pk}/acknowledge/", body, format="json")

    assert response.status_code == 400, response.content
    assert set(response.json()) == named
    alert.refresh_from_db()
    assert alert.state == "open"


# --------------------------------------------------------------------------- outputs


@pytest.mark.parametrize("field", ["id", "score", "decision", "status"])
def test_an_output_submission_with_a_read_only_field_is_400(gateway_api, field):
    response = gateway_api.post("/api/v1/outputs/", SubmissionFactory(**{field: 1}), format="json")

    assert response.status_code == 400
    assert set(response.json()) == {field}
    assert not Output.objects.exists()
    assert not TaskType.objects.exists()
