"""The datasets API: strict input, who may, and the streamed exports."""

import csv
import io
import json

import pyarrow.parquet as pq
import pytest
from django.http import StreamingHttpResponse

from gating.models import AuditEvent
from gating.roles import Role
from learning.models import Dataset, DatasetRow
from tests.learning.test_datasets import world  # noqa: F401  (the fixture)

URL = "/api/v1/datasets/"


@pytest.fixture
def lead_api(world, client_for):  # noqa: F811
    return client_for(world["lead"])


def _create(api, **body):
    return api.post(URL, {"name": "all", "filter": {}, **body}, format="json")


def test_a_lead_creates_snapshots_and_lists_a_dataset(world, lead_api):  # noqa: F811
    created = _create(lead_api, fields=["input", "corrected", "label"])
    assert created.status_code == 201, created.content
    dataset = created.json()
    assert dataset["fields"] == ["input", "corrected", "label"]
    assert (dataset["filter"], dataset["versions"], dataset["hand_added"]) == ({}, 0, 0)

    snapshot = lead_api.post(f"{URL}{dataset['id']}/versions/")
    assert snapshot.status_code == 201, snapshot.content
    version = snapshot.json()
    assert (version["number"], version["row_count"]) == (1, 5)
    assert set(version["exports"]) == {"chat", "eval", "csv", "parquet"}
    assert version["exports"]["csv"].endswith(f"{URL}{dataset['id']}/versions/1/export/csv/")

    listed = lead_api.get(URL).json()
    assert [(d["name"], d["versions"]) for d in listed] == [("all", 1)]
    assert lead_api.get(f"{URL}{dataset['id']}/versions/").json()[0]["row_count"] == 5
    assert lead_api.get(f"{URL}{dataset['id']}/").json()["versions"] == 1


def test_outputs_are_added_and_removed_by_hand(world, lead_api):  # noqa: F811
    dataset = _create(lead_api, filter=None).json()
    approved = world["outputs"]["approved"].pk

    added = lead_api.post(
        f"{URL}{dataset['id']}/outputs/", {"output_ids": [approved]}, format="json"
    )
    assert added.status_code == 200, added.content
    assert added.json() == {"added": [approved]}
    again = lead_api.post(
        f"{URL}{dataset['id']}/outputs/", {"output_ids": [approved]}, format="json"
    )
    assert again.json() == {"added": []}
    assert lead_api.get(f"{URL}{dataset['id']}/").json()["hand_added"] == 1

    assert lead_api.delete(f"{URL}{dataset['id']}/outputs/{approved}/").status_code == 204
    assert lead_api.delete(f"{URL}{dataset['id']}/outputs/{approved}/").status_code == 404
    pending = world["outputs"]["pending"].pk
    refused = lead_api.post(
        f"{URL}{dataset['id']}/outputs/", {"output_ids": [pending]}, format="json"
    )
    assert refused.status_code == 400
    assert "output_ids" in refused.json()


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"name": "x", "filter": {}, "colour": "red"}, "colour"),  # unknown field
        ({"name": 5, "filter": {}}, "name"),  # wrong JSON type
        ({"name": "x", "filter": "all"}, "filter"),
        ({"name": "x", "filter": {}, "fields": "input"}, "fields"),
        ({"name": "x", "filter": {}, "fields": ["input", "password"]}, "fields"),
        ({"name": "x" * 101, "filter": {}}, "name"),
        ({"name": "x", "filter": {"labels": ["pending"]}}, "filter.labels"),
        # Out of range: a score bound past the rubrics' limit.
        (
            {"name": "x", "filter": {"scores": [{"dimension": "a", "min": 1e9}]}},
            "filter.scores[0].min",
        ),
        ({"filter": {}}, "name"),  # missing
        ({"name": " spaced ", "filter": {}}, "name"),
        ({"name": "x", "filter": {}, "description": "a\x00b"}, "description"),
    ],
)
def test_a_bad_dataset_is_refused_by_the_field_at_fault(lead_api, body, field):
    response = lead_api.post(URL, body, format="json")
    assert response.status_code == 400, response.content
    assert field in response.json(), response.json()
    assert not Dataset.objects.exists()


@pytest.mark.parametrize(
    "output_ids",
    [[], [0], [2**63], ["1"], [True], 1, [1.5], list(range(1, 1002))],
    ids=["empty", "zero", "too-big", "string", "bool", "not-a-list", "float", "too-many"],
)
def test_bad_output_ids_are_refused(world, lead_api, output_ids):  # noqa: F811
    dataset = _create(lead_api).json()
    response = lead_api.post(
        f"{URL}{dataset['id']}/outputs/", {"output_ids": output_ids}, format="json"
    )
    assert response.status_code == 400, response.content
    assert "output_ids" in response.json()


def test_a_snapshot_takes_no_body_and_a_field_sent_is_refused(world, lead_api):  # noqa: F811
    dataset = _create(lead_api).json()
    url = f"{URL}{dataset['id']}/versions/"
    refused = lead_api.post(url, {"fields": ["input"]}, format="json")
    assert refused.status_code == 400
    assert "fields" in refused.json()
    assert lead_api.get(url).json() == []
    assert lead_api.post(url, {}, format="json").status_code == 201


def test_an_unknown_dataset_or_version_is_404(world, lead_api):  # noqa: F811
    assert lead_api.get(f"{URL}999999/").status_code == 404
    assert lead_api.post(f"{URL}999999/versions/").status_code == 404
    dataset = _create(lead_api).json()
    assert lead_api.get(f"{URL}{dataset['id']}/versions/3/export/csv/").status_code == 404


@pytest.mark.parametrize("role", [Role.GATEWAY, Role.REVIEWER])
def test_gateways_and_reviewers_are_refused_everything(world, lead_api, user_in, client_for, role):  # noqa: F811
    dataset = _create(lead_api).json()
    lead_api.post(f"{URL}{dataset['id']}/versions/")
    api = client_for(user_in(role))
    export = f"{URL}{dataset['id']}/versions/1/export/"
    for response in (
        api.get(URL),
        _create(api, name="mine"),
        api.get(f"{URL}{dataset['id']}/"),
        api.get(f"{URL}{dataset['id']}/versions/"),
        api.post(f"{URL}{dataset['id']}/versions/"),
        api.post(f"{URL}{dataset['id']}/outputs/", {"output_ids": [1]}, format="json"),
        *(api.get(f"{export}{name}/") for name in ("chat", "eval", "csv", "parquet")),
    ):
        assert response.status_code == 403, response.content
    assert not AuditEvent.objects.filter(action=AuditEvent.Action.DATASET_EXPORT).exists()


def _export(api, dataset_id: int, name: str):
    response = api.get(f"{URL}{dataset_id}/versions/1/export/{name}/")
    assert response.status_code == 200, response.content
    # Streamed: the body is a generator the server drains, never one string in memory.
    assert isinstance(response, StreamingHttpResponse)
    return response, b"".join(response.streaming_content)


def test_each_export_streams_the_versions_rows(world, lead_api):  # noqa: F811
    o = world["outputs"]
    dataset = _create(lead_api).json()
    lead_api.post(f"{URL}{dataset['id']}/versions/")
    rows = {r.output_id: r for r in DatasetRow.objects.all()}

    response, body = _export(lead_api, dataset["id"], "chat")
    assert response["Content-Type"] == "application/x-ndjson"
    assert response["Content-Disposition"] == 'attachment; filename="all-v1.chat.jsonl"'
    chats = [json.loads(line) for line in body.splitlines()]
    # Four delivered outputs in id order: approved, modified, agreed; the rejected ones
    # (rejected, adjudicated) have no assistant text.
    expected = [o["approved"], o["modified"], o["agreed"]]
    assert [c["messages"][0]["content"] for c in chats] == [x.input_text for x in expected]
    assert [c["messages"][1]["content"] for c in chats] == [
        o["approved"].output_text,
        "=SUM(A1) fixed",
        o["agreed"].output_text,
    ]

    _, body = _export(lead_api, dataset["id"], "eval")
    evals = [json.loads(line) for line in body.splitlines()]
    assert [e["output_id"] for e in evals] == sorted(rows)
    modified = next(e for e in evals if e["output_id"] == o["modified"].pk)
    assert (modified["label"], modified["corrected"], modified["scores"]) == (
        "modified",
        "=SUM(A1) fixed",
        {"accuracy": 3, "tone": "formal", "cites": False},
    )

    response, body = _export(lead_api, dataset["id"], "csv")
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    table = list(csv.DictReader(io.StringIO(body.decode())))
    by_id = {int(r["output_id"]): r for r in table}
    assert by_id[o["modified"].pk]["corrected"] == "'=SUM(A1) fixed"

    response, body = _export(lead_api, dataset["id"], "parquet")
    assert response["Content-Type"] == "application/vnd.apache.parquet"
    parquet = pq.read_table(io.BytesIO(body))
    assert parquet.column("output_id").to_pylist() == sorted(rows)
    assert parquet.column("label").to_pylist() == [rows[pk].label for pk in sorted(rows)]
    assert AuditEvent.objects.filter(action=AuditEvent.Action.DATASET_EXPORT).count() == 4


def test_the_chat_format_needs_input_and_corrected(world, lead_api):  # noqa: F811
    dataset = _create(lead_api, fields=["input", "label"]).json()
    version = lead_api.post(f"{URL}{dataset['id']}/versions/").json()
    assert "chat" not in version["exports"]
    response = lead_api.get(f"{URL}{dataset['id']}/versions/1/export/chat/")
    assert response.status_code == 400
    assert lead_api.get(f"{URL}{dataset['id']}/versions/1/export/xlsx/").status_code == 400
