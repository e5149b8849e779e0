"""GET /api/v1/outputs/<id>/status/: what a waiting gateway polls."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from gating import reviews
from gating.reviews import DecisionInput
from gating.roles import Role

pytestmark = pytest.mark.django_db


def status_url(output) -> str:
    return f"/api/v1/outputs/{output.pk}/status/"


def decide(reviewer, action: str, **fields) -> None:
    item = reviews.item_claim(reviewer=reviewer)
    reviews.item_decide(
        item_id=item.pk, reviewer=reviewer, decision=DecisionInput(action, **fields)
    )


def test_a_held_output_is_pending_with_no_text(gateway_api, held_outputs):
    (output,) = held_outputs(1)

    response = gateway_api.get(status_url(output))

    assert response.status_code == 200
    assert response.json() == {
        "id": output.pk,
        "decision": "pending_review",
        "status": "pending",
        "modified_output": None,
        "decided_at": None,
    }
    assert response["Cache-Control"] == "private, no-cache"


def test_the_same_etag_answers_304_with_no_body(gateway_api, held_outputs):
    (output,) = held_outputs(1)
    etag = gateway_api.get(status_url(output))["ETag"]

    response = gateway_api.get(status_url(output), HTTP_IF_NONE_MATCH=etag)

    assert response.status_code == 304
    assert response.content == b""
    assert response["ETag"] == etag


@pytest.mark.parametrize("header", ["*", 'W/"{etag}"', '"other", "{etag}"'])
def test_if_none_match_compares_weakly_and_takes_lists(gateway_api, held_outputs, header):
    (output,) = held_outputs(1)
    etag = gateway_api.get(status_url(output))["ETag"].strip('"')

    response = gateway_api.get(status_url(output), HTTP_IF_NONE_MATCH=header.format(etag=etag))

    assert response.status_code == 304


@pytest.mark.parametrize("header", ['"stale"', "garbage", ""])
def test_another_or_malformed_etag_gets_the_body(gateway_api, held_outputs, header):
    (output,) = held_outputs(1)

    response = gateway_api.get(status_url(output), HTTP_IF_NONE_MATCH=header)

    assert response.status_code == 200
    assert response.json()["status"] == "pending"


def test_a_modification_changes_the_etag_and_carries_the_text(gateway_api, held_outputs, reviewer):
    (output,) = held_outputs(1)
    etag = gateway_api.get(status_url(output))["ETag"]

    decide(reviewer, "modify", edited_output="The corrected text.")
    response = gateway_api.get(status_url(output), HTTP_IF_NONE_MATCH=etag)

    assert response.status_code == 200
    assert response["ETag"] != etag
    body = response.json()
    assert (body["status"], body["modified_output"]) == ("modified", "The corrected text.")
    assert body["decided_at"] is not None


def test_an_approval_does_not_send_the_text_again(gateway_api, held_outputs, reviewer):
    (output,) = held_outputs(1)

    decide(reviewer, "approve")
    body = gateway_api.get(status_url(output)).json()

    assert (body["status"], body["modified_output"]) == ("approved", None)


def test_another_gateways_output_is_404(held_outputs, user_in, client_for):
    (output,) = held_outputs(1)
    stranger = client_for(user_in(Role.GATEWAY, username="gateway-2"))

    assert stranger.get(status_url(output)).status_code == 404


def test_staff_see_every_gateways_output(held_outputs, user_in, client_for):
    (output,) = held_outputs(1)

    assert client_for(user_in(Role.REVIEWER)).get(status_url(output)).status_code == 200


def test_a_poll_is_one_query(gateway_api, held_outputs):
    (output,) = held_outputs(1)
    etag = gateway_api.get(status_url(output))["ETag"]  # loads and caches the token

    with CaptureQueriesContext(connection) as queries:
        gateway_api.get(status_url(output), HTTP_IF_NONE_MATCH=etag)

    assert len(queries) == 1, [q["sql"] for q in queries]
    assert "JOIN" not in queries[0]["sql"]
