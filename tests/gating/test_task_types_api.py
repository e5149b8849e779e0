"""GET/PATCH /api/v1/task-types/{name}/: admins edit thresholds within the rules."""

import pytest

from gating import services
from gating.exceptions import TaskTypeInvalid
from gating.models import TaskType
from gating.roles import Role
from tests.factories import SubmissionFactory, TaskTypeFactory

URL = "/api/v1/task-types/summarize/"


@pytest.fixture
def task_type(db):
    return TaskTypeFactory(name="summarize", reviewed_count=3)


def test_list_shows_thresholds_and_cold_start(admin_api, task_type):
    rows = admin_api.get("/api/v1/task-types/").json()
    assert rows == [
        {
            **rows[0],
            "name": "summarize",
            "review_threshold": 4.0,
            "approve_threshold": 7.0,
            "cold_start_reviews": 20,
            "cold_start_margin": 1.0,
            "reviewed_count": 3,
            "in_cold_start": True,
        }
    ]


def test_admin_edits_thresholds_and_the_gate_uses_them(admin_api, gateway_api, task_type):
    response = admin_api.patch(
        URL,
        {"review_threshold": 2.0, "approve_threshold": 3.0, "cold_start_reviews": 0},
        format="json",
    )
    assert response.status_code == 200
    task_type.refresh_from_db()
    assert (task_type.review_threshold, task_type.approve_threshold) == (2.0, 3.0)

    body = SubmissionFactory(task_type="summarize")
    answer = gateway_api.post("/api/v1/outputs/", body, format="json").json()
    # No pair history: thresholds raised by 1.0 * (1 - 0/20) = 1.0 -> 3.0 and 4.0
    assert answer["thresholds"] == {"review": 3.0, "approve": 4.0}
    assert answer["decision"] == "approved"


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"review_threshold": 7.5}, "review_threshold"),
        ({"review_threshold": 5.0, "approve_threshold": 5.0}, "review_threshold"),
        ({"approve_threshold": 10.5}, "approve_threshold"),
        ({"review_threshold": -1}, "review_threshold"),
        ({"review_threshold": "high"}, "review_threshold"),
        ({"cold_start_reviews": -3}, "cold_start_reviews"),
        ({"cold_start_margin": "NaN"}, "cold_start_margin"),
    ],
)
def test_invalid_thresholds_are_400_and_unchanged(admin_api, task_type, change, field):
    response = admin_api.patch(URL, change, format="json")
    assert response.status_code == 400
    assert field in response.json()
    task_type.refresh_from_db()
    assert (task_type.review_threshold, task_type.approve_threshold) == (4.0, 7.0)


def test_name_is_read_only(admin_api, task_type):
    response = admin_api.patch(URL, {"name": "renamed"}, format="json")
    assert response.status_code == 400
    assert response.json() == {"name": ["Read-only field: it cannot be written."]}
    assert TaskType.objects.filter(name="summarize").exists()


def test_unknown_task_type_is_404(admin_api):
    assert admin_api.get("/api/v1/task-types/nope/").status_code == 404


def test_a_rule_the_serializer_does_not_see_is_refused_by_the_service_by_name(task_type, user_in):
    # Other doors than the API (the admin, the page, the cycles) reach the same rules.
    with pytest.raises(TaskTypeInvalid) as refused:
        services.gate_settings_change(
            task_type=task_type,
            changes={"audit_rate_approved": 2.0},
            actor=user_in(Role.ADMIN),
            reason="audit everything",
            source=services.EditSource.PAGE,
        )

    assert refused.value.field == "audit_rate_approved"
    assert str(refused.value) == "Must be between 0 and 1."
    task_type.refresh_from_db()
    assert task_type.audit_rate_approved == 0.0
