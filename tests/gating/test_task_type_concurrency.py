"""Two threshold edits at once, on PostgreSQL: each is valid alone, together they would
break review < approve. One applies; the other is refused by name, never a 500. And an
edit in progress lets the gate store new outputs meanwhile."""

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import connection, transaction
from rest_framework.test import APIClient

from gating import services
from gating.exceptions import TaskTypeInvalid
from gating.models import AuditEvent, TaskType
from gating.roles import Role
from tests.factories import TaskTypeFactory, UserFactory, token_for, valid_submission

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("requires_postgres")]

URL = "/api/v1/task-types/racing/"
EDITS = [{"review_threshold": 6.5}, {"approve_threshold": 6.0}]


def _patch_at_once(token: str) -> list[tuple[int, dict]]:
    start = threading.Barrier(len(EDITS))

    def patch(body: dict) -> tuple[int, dict]:
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
        start.wait()
        try:
            response = client.patch(URL, body, format="json")
            return response.status_code, response.json()
        except Exception as exc:  # the test client re-raises a server error
            return 500, {"error": repr(exc)}
        finally:
            connection.close()

    with ThreadPoolExecutor(len(EDITS)) as pool:
        return list(pool.map(patch, EDITS))


@pytest.mark.parametrize("attempt", range(5))
def test_two_edits_that_clash_one_applies_the_other_is_400(attempt):
    TaskTypeFactory(name="racing", review_threshold=4.0, approve_threshold=7.0)
    token = token_for(UserFactory(role=Role.ADMIN))

    answers = _patch_at_once(token)

    codes = sorted(code for code, _ in answers)
    assert codes == [200, 400], answers
    (refused,) = [body for code, body in answers if code == 400]
    assert set(refused) <= {"review_threshold", "approve_threshold"}
    task_type = TaskType.objects.get(name="racing")
    assert task_type.review_threshold < task_type.approve_threshold
    assert AuditEvent.objects.filter(action="threshold_edit").count() == 1


def test_the_service_checks_the_rule_on_the_stored_row_not_the_callers_copy(user_in):
    stale = TaskTypeFactory(name="racing", review_threshold=4.0, approve_threshold=7.0)
    admin = user_in(Role.ADMIN)
    services.gate_settings_change(
        task_type=TaskType.objects.get(pk=stale.pk),
        changes=EDITS[0],
        actor=admin,
        reason="raise the review threshold",
        source=services.EditSource.PAGE,
    )

    with pytest.raises(TaskTypeInvalid) as refused:
        services.gate_settings_change(
            task_type=stale,
            changes=EDITS[1],
            actor=admin,
            reason="lower the approve threshold",
            source=services.EditSource.PAGE,
        )

    assert refused.value.field == "approve_threshold"
    stored = TaskType.objects.get(pk=stale.pk)
    assert (stored.review_threshold, stored.approve_threshold) == (6.5, 7.0)


def test_an_edit_in_progress_does_not_hold_up_new_outputs_of_its_task_type(gateway):
    # New outputs check their task type's row as a foreign key at commit: a lock that
    # blocks that check would stall the gate for as long as the edit (or a cycle) lasts.
    TaskTypeFactory(name="racing", review_threshold=4.0, approve_threshold=7.0)
    admin = UserFactory(role=Role.ADMIN)
    locked, finish = threading.Event(), threading.Event()

    def edit():
        try:
            with transaction.atomic():
                services.gate_settings_change(
                    task_type=TaskType.objects.get(name="racing"),
                    changes={"review_threshold": 5.0},
                    actor=admin,
                    reason="held open while an output arrives",
                    source=services.EditSource.PAGE,
                )
                locked.set()
                finish.wait(timeout=10)
        finally:
            connection.close()

    submission = valid_submission(task_type="racing")
    with ThreadPoolExecutor(1) as pool:
        editing = pool.submit(edit)
        assert locked.wait(timeout=10)
        try:
            with connection.cursor() as cursor:
                cursor.execute("SET lock_timeout = '2s'")
            result = services.output_ingest(source=gateway, submission=submission)
        finally:
            finish.set()
            with connection.cursor() as cursor:
                cursor.execute("RESET lock_timeout")
        editing.result()

    assert result.created
    assert TaskType.objects.get(name="racing").review_threshold == 5.0
