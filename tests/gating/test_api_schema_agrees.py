"""The schema says what the server does: what it refuses, the schema forbids, and what the
schema allows, it takes (schemathesis's negative_data_rejection and
positive_data_acceptance, on the cases its run found)."""

import pytest

from gating.api.filters import SCORE_FILTER_MAX
from gating.api.strict import EMPTY_VALUE
from gating.roles import Role
from gating.submissions import IDENTIFIER_PATTERN
from tests.factories import SubmissionFactory

OUTPUTS = "/api/v1/outputs/"
QUEUE = "/api/v1/queue/"


@pytest.fixture
def lead_api(user_in, client_for):
    return client_for(user_in(Role.LEAD))


@pytest.fixture(scope="module")
def schema(django_db_blocker):
    from rest_framework.test import APIClient

    with django_db_blocker.unblock():
        return APIClient().get("/api/schema/?format=json").json()


def query_parameters(schema, path, method="get") -> dict[str, dict]:
    operation = schema["paths"][path][method]
    return {p["name"]: p["schema"] for p in operation["parameters"] if p["in"] == "query"}


@pytest.mark.parametrize(
    ("url", "name"),
    [
        (OUTPUTS, "created_after"),
        (OUTPUTS, "created_before"),
        (OUTPUTS, "task_type"),
        (OUTPUTS, "model"),
        (OUTPUTS, "decision"),
        (OUTPUTS, "status"),
        (OUTPUTS, "cursor"),
        (OUTPUTS, "page_size"),
        (QUEUE, "task_type"),
        (QUEUE, "model"),
        (QUEUE, "score_min"),
        (QUEUE, "score_max"),
        (QUEUE, "kind"),
        (QUEUE, "uncertain"),
        (QUEUE, "cursor"),
        ("/api/v1/queue/summary/", "kind"),
    ],
)
def test_an_empty_query_value_is_400_naming_it(reviewer_api, url, name):
    response = reviewer_api.get(f"{url}?{name}=")

    assert response.status_code == 400
    assert list(response.json()) == [name]


def test_an_empty_filter_never_widens_a_bulk_decision(held_outputs, lead_api):
    held_outputs(2, task_type="a")

    response = lead_api.post(
        "/api/v1/queue/bulk-decision/?task_type=",
        {"action": "approve", "reason": "all good", "dry_run": True},
        format="json",
    )

    assert response.status_code == 400
    assert response.json() == {"task_type": [EMPTY_VALUE]}


@pytest.mark.parametrize("name", ["state", "rule"])
def test_an_empty_alert_filter_is_400_naming_it(lead_api, name):
    response = lead_api.get(f"/api/v1/alerts/?{name}=")

    assert response.status_code == 400
    assert list(response.json()) == [name]


def test_the_schema_forbids_empty_query_values(schema):
    for path, item in schema["paths"].items():
        if not path.startswith(("/api/v1/outputs", "/api/v1/queue", "/api/v1/alerts")):
            continue
        for method, operation in item.items():
            for parameter in operation.get("parameters", []):
                if parameter["in"] != "query":
                    continue
                kind = parameter["schema"]
                if kind.get("type") == "array":
                    kind = kind["items"]
                if kind.get("type") == "string" and "enum" not in kind:
                    assert kind.get("minLength", 0) >= 1, (path, method, parameter["name"])


def test_the_score_filters_state_the_bound_they_check(schema, reviewer_api):
    for name in ("score_min", "score_max"):
        assert query_parameters(schema, QUEUE)[name]["maximum"] == SCORE_FILTER_MAX
        assert reviewer_api.get(QUEUE, {name: SCORE_FILTER_MAX}).status_code == 200
        assert reviewer_api.get(QUEUE, {name: SCORE_FILTER_MAX * 10}).status_code == 400


def test_identifier_filters_publish_the_ingest_s_rule(schema):
    for path in (OUTPUTS, QUEUE):
        for name in ("task_type", "model"):
            names = query_parameters(schema, path)[name]
            assert names["type"] == "array"
            assert names["items"]["pattern"] == IDENTIFIER_PATTERN


def test_a_body_s_queue_filters_have_the_query_s_schema(schema):
    components = schema["components"]["schemas"]
    body = components["QueueFiltersRequest"]["properties"]
    query = query_parameters(schema, "/api/v1/queue/claim/", "post")
    for name in ("task_type", "model"):
        # One name as clients sent it before lists, or the query string's list of names.
        one, several = body[name]["oneOf"]
        assert several == query[name]
        assert one == query[name]["items"]
    for name in ("kind", "score_min", "score_max"):
        in_body = body[name]
        if "$ref" in in_body:
            in_body = components[in_body["$ref"].rsplit("/", 1)[-1]]
        for key in ("pattern", "maximum", "minLength"):
            assert in_body.get(key) == query[name].get(key), (name, key)
        assert set(in_body.get("enum", [])) == set(query[name].get("enum", [])), name


def test_the_evidence_rules_between_fields_are_in_the_schema(schema, gateway_api):
    entry = schema["components"]["schemas"]["EvidenceEntryIn"]
    assert entry["properties"]["factors"]["uniqueItems"] is True
    rules = entry["allOf"]
    match_only_for_search = {
        "if": {"properties": {"tool": {"not": {"enum": ["find", "grep", "references"]}}}},
        "then": {"properties": {"match": {"type": "null"}}},
    }
    assert match_only_for_search in rules
    body = SubmissionFactory(evidence={"entries": [{"tool": "read", "match": "exact"}]})
    assert gateway_api.post(OUTPUTS, body, format="json").status_code == 400


@pytest.mark.parametrize(
    ("body", "left_out"),
    [
        ({"cursor": ["Invalid cursor: pass a next or previous link's cursor unchanged."]}, True),
        ({"task_type": ['Unknown task type "nope".']}, True),
        ({"score_max": ["score_max (2) must be above score_min (2): scores are ..."]}, True),
        # The same words under another field are the schema's to state (an enum): kept.
        ({"kind": ["Select a valid choice. 0 is not one of the available choices."]}, False),
        ({"review_threshold": ["Must be below approve_threshold (0)."]}, True),
        ({"outputs": {"3": {"external_id": ["Repeats item 0 of this batch."]}}}, True),
        ({"evidence.entries.1": ["exact_match_count must not exceed match_count"]}, True),
        # One error beyond the schema does not excuse another beside it.
        (
            {
                "cursor": ["Invalid cursor: pass a next or previous link's cursor unchanged."],
                "model": ["must not begin or end with white space"],
            },
            False,
        ),
        ({"outputs": {"8": {"metadata": ["must not contain NUL (\\u0000) characters"]}}}, False),
        ({}, False),
    ],
)
def test_the_contract_run_leaves_out_only_rules_the_schema_cannot_state(body, left_out):
    from tests.contract.hooks import beyond_the_schema

    assert beyond_the_schema(body) is left_out


@pytest.mark.parametrize(
    ("metadata", "valid"),
    [
        ({"a": [1, {"b": "c"}], "d": None}, True),
        ({"a\x00": 1}, False),
        ({"a": {"b": ["c\x00"]}}, False),
    ],
)
def test_the_schema_of_metadata_refuses_nul_at_any_depth_as_the_ingest_does(
    metadata, valid, gateway_api
):
    from jsonschema import Draft202012Validator

    from gating.submissions import OutputSubmission

    schema = OutputSubmission.model_json_schema()
    validator = Draft202012Validator({**schema["properties"]["metadata"], "$defs": schema["$defs"]})
    response = gateway_api.post(OUTPUTS, SubmissionFactory(metadata=metadata), format="json")

    assert validator.is_valid(metadata) is valid
    assert (response.status_code == 201) is valid


BULK = {"action": "approve", "reason": "all good", "dry_run": True}


@pytest.mark.parametrize(
    ("query", "body", "outputs"),
    [
        # A bad value in the query is refused even where the body gives the filter too.
        ("score_max=oops", {"score_max": 5.0}, None),
        ("uncertain=maybe", {"uncertain": "false"}, None),
        # Both apply: the same filter in each narrows to what meets both.
        ("task_type=a", {"task_type": "a"}, 2),
        ("task_type=a", {"task_type": "b"}, 0),
        ("score_min=0", {"score_min": 10.0}, 0),
        ("uncertain=false", {"uncertain": "false"}, 3),
    ],
)
def test_the_query_s_filters_and_the_body_s_both_apply(
    held_outputs, lead_api, query, body, outputs
):
    held_outputs(2, task_type="a")
    held_outputs(1, task_type="b")

    response = lead_api.post(f"/api/v1/queue/bulk-decision/?{query}", body | BULK, format="json")

    if outputs is None:
        assert response.status_code == 400
        assert list(response.json()) == [query.split("=")[0]]
    else:
        assert response.json() == {"outputs": outputs, "dry_run": True}


def test_a_filter_repeated_in_the_query_is_refused_if_any_value_is_empty(held_outputs, lead_api):
    held_outputs(1, task_type="a")

    response = lead_api.post("/api/v1/queue/claim/?model=&model=model-a")

    assert response.status_code == 400
    assert response.json() == {"model": [EMPTY_VALUE]}
