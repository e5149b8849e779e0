"""The same external_id again: a replay answers the same, a different body conflicts."""

import hashlib
import json
import threading

import pytest
from django.db import connection
from rest_framework.test import APIClient

from gating.models import Output
from gating.roles import Role
from gating.submissions import OutputSubmission
from tests.factories import SubmissionFactory, token_for

URL = "/api/v1/outputs/"


def test_identical_replay_returns_200_and_the_same_answer(gateway_api):
    body = SubmissionFactory()
    first = gateway_api.post(URL, body, format="json")
    again = gateway_api.post(URL, dict(reversed(body.items())), format="json")

    assert first.status_code == 201
    assert again.status_code == 200
    assert again.json() == first.json()
    assert Output.objects.count() == 1


def test_same_external_id_with_another_body_is_409(gateway_api):
    body = SubmissionFactory()
    gateway_api.post(URL, body, format="json")
    response = gateway_api.post(URL, {**body, "output": "something else"}, format="json")

    assert response.status_code == 409
    assert body["external_id"] in response.json()["detail"]
    assert Output.objects.get().output_text == body["output"]


def test_outputs_hashed_before_the_orjson_fingerprint_still_replay(gateway_api):
    # Non-ASCII text and a float that the json module writes as 1e-05 and orjson as 1e-5:
    # the two canonical forms differ, so the stored hash is the old one.
    body = {**SubmissionFactory(), "output": "Résumé ✓", "metadata": {"tiny": 0.00001}}
    assert gateway_api.post(URL, body, format="json").status_code == 201
    sent = OutputSubmission.model_validate(body).model_dump(mode="json")
    old_hash = hashlib.sha256(
        json.dumps(sent, sort_keys=True, separators=(",", ":")).encode()
    ).hexdigest()
    output = Output.objects.get()
    assert output.request_hash != old_hash
    Output.objects.filter(pk=output.pk).update(request_hash=old_hash)

    assert gateway_api.post(URL, body, format="json").status_code == 200
    changed = {**body, "output": "Résumé ✗"}
    assert gateway_api.post(URL, changed, format="json").status_code == 409


def test_outputs_hashed_before_provenance_existed_still_replay(gateway_api):
    # Such a body was hashed without the provenance key, which the dump now holds as null.
    body = SubmissionFactory()
    assert gateway_api.post(URL, body, format="json").status_code == 201
    sent = OutputSubmission.model_validate(body).model_dump(mode="json")
    del sent["provenance"]
    old_hash = hashlib.sha256(
        json.dumps(sent, sort_keys=True, separators=(",", ":")).encode()
    ).hexdigest()
    output = Output.objects.get()
    assert output.request_hash != old_hash
    Output.objects.filter(pk=output.pk).update(request_hash=old_hash)

    assert gateway_api.post(URL, body, format="json").status_code == 200
    assert gateway_api.post(URL, {**body, "output": "Other."}, format="json").status_code == 409


def test_metadata_with_integers_beyond_64_bits_replays(gateway_api):
    body = {**SubmissionFactory(), "metadata": {"id": 2**70}}
    assert gateway_api.post(URL, body, format="json").status_code == 201
    assert gateway_api.post(URL, body, format="json").status_code == 200
    assert (
        gateway_api.post(URL, {**body, "metadata": {"id": 2**70 + 1}}, format="json").status_code
        == 409
    )


def test_external_ids_are_per_gateway(gateway_api, user_in, client_for):
    other = client_for(user_in(Role.GATEWAY))
    body = SubmissionFactory()
    assert gateway_api.post(URL, body, format="json").status_code == 201
    assert other.post(URL, {**body, "output": "x"}, format="json").status_code == 201
    assert Output.objects.count() == 2


@pytest.mark.django_db(transaction=True)
def test_concurrent_replays_store_one_output(requires_postgres, user_in):
    token = token_for(user_in(Role.GATEWAY))
    body = SubmissionFactory()
    statuses: list[int] = []
    barrier = threading.Barrier(8)

    def submit():
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
        barrier.wait()
        try:
            statuses.append(client.post(URL, body, format="json").status_code)
        finally:
            connection.close()

    threads = [threading.Thread(target=submit) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()

    assert sorted(statuses) == [200] * 7 + [201]
    assert Output.objects.count() == 1
