"""POST /api/v1/outputs/batch/ with Accept: application/vnd.gatehouse.compact+json: each
output's id and decision only, for the same storing as a full answer."""

import gc

import pytest

from gating.models import Output
from tests.factories import SubmissionFactory, TaskTypeFactory

URL = "/api/v1/outputs/batch/"
COMPACT_TYPE = "application/vnd.gatehouse.compact+json"

pytestmark = pytest.mark.django_db


def post_compact(client, bodies):
    return client.post(URL, {"outputs": bodies}, format="json", HTTP_ACCEPT=COMPACT_TYPE)


def test_a_compact_answer_names_each_output_and_its_decision(gateway_api):
    TaskTypeFactory(name="held", reviewed_count=0)  # cold start: every output held
    bodies = SubmissionFactory.create_batch(3, task_type="held")

    response = post_compact(gateway_api, bodies)

    assert response.status_code == 201
    assert response["Content-Type"] == COMPACT_TYPE
    stored = {o.external_id: o for o in Output.objects.all()}
    assert response.json() == {
        "outputs": [
            {
                "id": stored[b["external_id"]].pk,
                "external_id": b["external_id"],
                "task_type": "held",
                "decision": "pending_review",
            }
            for b in bodies
        ]
    }


def test_compact_and_full_answers_agree_on_the_decisions(gateway_api):
    bodies = SubmissionFactory.create_batch(4)
    full = gateway_api.post(URL, {"outputs": bodies}, format="json").json()["outputs"]

    # The same body again is a replay, answered from what was stored.
    compact = post_compact(gateway_api, bodies)

    assert compact.status_code == 200
    assert [(o["id"], o["decision"]) for o in compact.json()["outputs"]] == [
        (o["id"], o["decision"]) for o in full
    ]


@pytest.mark.parametrize("accept", ["application/json", "*/*", None])
def test_the_full_answer_is_the_default(gateway_api, accept):
    headers = {"HTTP_ACCEPT": accept} if accept else {}

    response = gateway_api.post(
        URL, {"outputs": SubmissionFactory.create_batch(2)}, format="json", **headers
    )

    assert response["Content-Type"] == "application/json"
    assert set(response.json()["outputs"][0]) >= {"score", "reasons", "thresholds", "trace_id"}


def test_a_refused_batch_is_answered_in_json_as_the_schema_says_of_errors(gateway_api):
    bad = SubmissionFactory.create_batch(2)
    bad[1]["coherence"] = 2.0

    response = post_compact(gateway_api, bad)

    assert response.status_code == 400
    assert response["Content-Type"] == "application/json"
    assert list(response.json()["outputs"]) == ["1"]
    assert not Output.objects.exists()


def test_a_refused_caller_is_answered_in_json_too(reviewer_api):
    # A reviewer may not submit outputs.
    response = post_compact(reviewer_api, SubmissionFactory.create_batch(1))

    assert response.status_code == 403
    assert response["Content-Type"] == "application/json"


def test_the_cycle_collector_is_on_again_after_a_batch(gateway_api):
    bad = SubmissionFactory.create_batch(2)
    bad[1]["coherence"] = 2.0

    post_compact(gateway_api, SubmissionFactory.create_batch(2))
    assert gc.isenabled()
    gateway_api.post(URL, {"outputs": bad}, format="json")
    assert gc.isenabled()
