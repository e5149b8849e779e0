"""The per-process caches on the hot path: fewer queries, never a stale or phantom row."""

import re

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from gating import services
from gating.models import TaskType
from tests.factories import SubmissionFactory, TaskTypeFactory, valid_submission

pytestmark = pytest.mark.django_db(transaction=True)
URL = "/api/v1/outputs/"


def config_queries(queries):
    tables = ("gating_tasktype", "gating_validator", "gating_taskmodelstats", "auth_permission")
    return [q["sql"] for q in queries if any(t in q["sql"] for t in tables)]


def _inserted_tables(queries):
    return [table for q in queries for table in re.findall(r'INSERT INTO "(\w+)"', q["sql"])]


def test_a_warm_ingest_reads_no_configuration(gateway_api):
    # Past cold start and never audited: a delivered output is one INSERT and nothing else.
    TaskTypeFactory(name="summarize", audit_rate_approved=0.0, audit_rate_warning=0.0)
    gateway_api.post(URL, SubmissionFactory(), format="json")
    with CaptureQueriesContext(connection) as ctx:
        response = gateway_api.post(URL, SubmissionFactory(), format="json")

    assert response.status_code == 201
    assert response.json()["decision"] != "pending_review"
    assert config_queries(ctx.captured_queries) == []
    assert _inserted_tables(ctx.captured_queries) == ["gating_output"]


def test_a_held_output_is_stored_with_its_queue_item(gateway_api):
    gateway_api.post(URL, SubmissionFactory(task_type="new"), format="json")
    with CaptureQueriesContext(connection) as ctx:
        response = gateway_api.post(URL, SubmissionFactory(task_type="new"), format="json")

    assert response.json()["decision"] == "pending_review"  # cold start holds everything
    assert config_queries(ctx.captured_queries) == []
    assert _inserted_tables(ctx.captured_queries) == ["gating_output", "gating_reviewitem"]


def test_a_threshold_edit_applies_at_once_in_this_process(gateway_api, admin_api):
    gateway_api.post(URL, SubmissionFactory(task_type="t"), format="json")
    admin_api.patch("/api/v1/task-types/t/", {"review_threshold": 1.0}, format="json")

    answer = gateway_api.post(URL, SubmissionFactory(task_type="t"), format="json").json()
    # new pair: raised by 1.0 -> review 2.0
    assert answer["thresholds"]["review"] == 2.0


def test_a_rolled_back_transaction_leaves_no_task_type_in_the_cache(gateway_api, gateway):
    submission = valid_submission(task_type="phantom")
    with pytest.raises(RuntimeError), transaction.atomic():
        services.output_ingest(source=gateway, submission=submission)
        raise RuntimeError("roll back after the task type was created and loaded")
    assert not TaskType.objects.filter(name="phantom").exists()

    response = gateway_api.post(URL, SubmissionFactory(task_type="phantom"), format="json")
    assert response.status_code == 201
    assert TaskType.objects.filter(name="phantom").exists()
