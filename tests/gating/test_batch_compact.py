"""POST /api/v1/outputs/batch/?response=compact: each output's id and decision only, for
the same storing as a full answer."""

import gc

import pytest

from gating.models import Output
from tests.factories import SubmissionFactory, TaskTypeFactory

URL = "/api/v1/outputs/batch/"
COMPACT = f"{URL}?response=compact"

pytestmark = pytest.mark.django_db


def test_a_compact_answer_names_each_output_and_its_decision(gateway_api):
    TaskTypeFactory(name="held", reviewed_count=0)  # cold start: every output held
    bodies = SubmissionFactory.create_batch(3, task_type="held")

    response = gateway_api.post(COMPACT, {"outputs": bodies}, format="json")

    assert response.status_code == 201
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
    compact = gateway_api.post(COMPACT, {"outputs": bodies}, format="json")

    assert compact.status_code == 200
    assert [(o["id"], o["decision"]) for o in compact.json()["outputs"]] == [
        (o["id"], o["decision"]) for o in full
    ]


def test_full_is_the_default_and_may_be_named(gateway_api):
    bodies = SubmissionFactory.create_batch(2)

    named = gateway_api.post(f"{URL}?response=full", {"outputs": bodies}, format="json")

    assert set(named.json()["outputs"][0]) >= {"score", "reasons", "thresholds", "trace_id"}


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("response=brief", "Must be one of: full, compact."),
        ("response=", "Must not be empty: leave the parameter out instead."),
    ],
)
def test_an_unknown_answer_shape_is_refused_and_stores_nothing(gateway_api, query, message):
    response = gateway_api.post(
        f"{URL}?{query}", {"outputs": SubmissionFactory.create_batch(2)}, format="json"
    )

    assert response.status_code == 400
    assert response.json() == {"response": [message]}
    assert not Output.objects.exists()


def test_the_cycle_collector_is_on_again_after_a_batch(gateway_api):
    bad = SubmissionFactory.create_batch(2)
    bad[1]["coherence"] = 2.0

    gateway_api.post(COMPACT, {"outputs": SubmissionFactory.create_batch(2)}, format="json")
    assert gc.isenabled()
    gateway_api.post(URL, {"outputs": bad}, format="json")
    assert gc.isenabled()
