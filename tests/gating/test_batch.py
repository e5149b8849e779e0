"""POST /api/v1/outputs/batch/: every output stored, or none."""

from gating.models import Output, TaskType
from tests.factories import SubmissionFactory

URL = "/api/v1/outputs/batch/"


def test_batch_stores_all_and_answers_in_order(gateway_api):
    bodies = SubmissionFactory.create_batch(5)
    response = gateway_api.post(URL, {"outputs": bodies}, format="json")

    assert response.status_code == 201
    answered = [o["external_id"] for o in response.json()["outputs"]]
    assert answered == [b["external_id"] for b in bodies]
    assert Output.objects.count() == 5


def test_one_bad_item_stores_nothing_and_names_index_and_field(gateway_api):
    bodies = SubmissionFactory.create_batch(4, task_type="brand-new")
    bodies[1]["coherence"] = 1.5
    del bodies[3]["model"]
    response = gateway_api.post(URL, {"outputs": bodies}, format="json")

    assert response.status_code == 400
    errors = response.json()["outputs"]
    assert set(errors) == {"1", "3"}
    assert "coherence" in errors["1"]
    assert "model" in errors["3"]
    assert Output.objects.count() == 0
    assert not TaskType.objects.filter(name="brand-new").exists()


def test_duplicate_external_ids_in_one_batch_are_400(gateway_api):
    bodies = SubmissionFactory.create_batch(3)
    bodies[2]["external_id"] = bodies[0]["external_id"]
    response = gateway_api.post(URL, {"outputs": bodies}, format="json")

    assert response.status_code == 400
    assert response.json() == {"outputs": {"2": {"external_id": ["Repeats item 0 of this batch."]}}}
    assert Output.objects.count() == 0


def test_conflicting_item_fails_the_whole_batch(gateway_api):
    stored = SubmissionFactory()
    gateway_api.post("/api/v1/outputs/", stored, format="json")
    bodies = [*SubmissionFactory.create_batch(2), {**stored, "output": "changed"}]
    response = gateway_api.post(URL, {"outputs": bodies}, format="json")

    assert response.status_code == 409
    assert response.json()["indexes"] == [2]
    assert Output.objects.count() == 1


def test_replayed_items_are_returned_not_stored_again(gateway_api):
    stored = SubmissionFactory()
    first = gateway_api.post("/api/v1/outputs/", stored, format="json").json()
    fresh = SubmissionFactory()
    response = gateway_api.post(URL, {"outputs": [stored, fresh]}, format="json")

    assert response.status_code == 201
    assert response.json()["outputs"][0] == first
    assert Output.objects.count() == 2
    again = gateway_api.post(URL, {"outputs": [stored, fresh]}, format="json")
    assert again.status_code == 200
    assert Output.objects.count() == 2


def test_limits_on_batch_size(gateway_api):
    assert gateway_api.post(URL, {"outputs": []}, format="json").status_code == 400
    too_many = [
        {"external_id": f"e{i}", "task_type": "t", "model": "m", "input": "", "output": ""}
        for i in range(1001)
    ]
    response = gateway_api.post(URL, {"outputs": too_many}, format="json")
    assert response.status_code == 400
    assert "outputs" in response.json()
    assert Output.objects.count() == 0


def test_text_and_json_keep_every_value_through_the_bulk_insert(gateway_api):
    metadata = {"big": 2**70, "unicode": "café ✓", "nested": [1.5, None, True, {"k": "v"}]}
    bodies = SubmissionFactory.create_batch(3)
    bodies[0]["metadata"] = metadata
    bodies[1]["evidence"] = {
        "intent": "locate",
        "entries": [{"tool": "grep", "query": 'He said "hi"', "match": "exact", "match_count": 2}],
    }
    bodies[2]["output"] = 'tab\there,\r\nnew line, \\N and \\ backslashes, "quotes", ✓'
    response = gateway_api.post(URL, {"outputs": bodies}, format="json")

    assert response.status_code == 201, response.json()
    stored = {o.external_id: o for o in Output.objects.all()}
    assert stored[bodies[0]["external_id"]].metadata == metadata
    evidence = stored[bodies[1]["external_id"]].evidence
    assert evidence["entries"][0]["query"] == 'He said "hi"'
    assert evidence["intent"] == "locate"
    # SQL NULL, as the ORM stores None, rather than JSON null (which also loads as None).
    assert Output.objects.filter(evidence__isnull=True).count() == 2
    assert stored[bodies[2]["external_id"]].output_text == bodies[2]["output"]
