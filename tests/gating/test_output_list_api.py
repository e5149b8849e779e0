"""GET /api/v1/outputs/ with filters and cursor pagination."""

from datetime import timedelta

from django.utils import timezone

from gating.models import Output
from tests.factories import SubmissionFactory, TaskModelStatsFactory, TaskTypeFactory

URL = "/api/v1/outputs/"


def submit(client, **fields):
    return client.post(URL, SubmissionFactory(**fields), format="json").json()


def ids(response):
    return [o["id"] for o in response.json()["results"]]


def test_filters_by_task_type_model_decision_and_status(gateway_api):
    TaskModelStatsFactory(task_type=TaskTypeFactory(name="seasoned"), model="m1")
    held = submit(gateway_api, task_type="fresh")
    approved = submit(gateway_api, task_type="seasoned", model="m1")
    other_model = submit(gateway_api, task_type="seasoned", model="m2")

    assert ids(gateway_api.get(URL, {"task_type": "fresh"})) == [held["id"]]
    assert ids(gateway_api.get(URL, {"model": "m1"})) == [approved["id"]]
    assert set(ids(gateway_api.get(URL, {"decision": "pending_review"}))) == {held["id"]}
    assert approved["decision"] == "approved" and other_model["decision"] != "approved"
    assert ids(gateway_api.get(URL, {"status": "pending"})) == [held["id"]]


def test_created_range(gateway_api):
    old = submit(gateway_api)
    new = submit(gateway_api)
    Output.objects.filter(pk=old["id"]).update(created_at=timezone.now() - timedelta(days=3))
    cut = (timezone.now() - timedelta(days=1)).isoformat()

    assert ids(gateway_api.get(URL, {"created_after": cut})) == [new["id"]]
    assert ids(gateway_api.get(URL, {"created_before": cut})) == [old["id"]]


def test_bad_filter_values_are_400_naming_them(gateway_api):
    response = gateway_api.get(URL, {"created_after": "yesterday", "decision": "maybe"})
    assert response.status_code == 400
    assert {"created_after", "decision"} <= set(response.json())


def test_cursor_pagination_walks_every_output_once(gateway_api):
    made = [submit(gateway_api)["id"] for _ in range(7)]
    seen, url, params = [], URL, {"page_size": 3}
    while url:
        page = gateway_api.get(url, params).json()
        seen += [o["id"] for o in page["results"]]
        url, params = page["next"], None
    assert seen == sorted(made, reverse=True)
