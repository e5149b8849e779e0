"""Bad input gets a 400 (or 413/415) naming what is wrong, stores nothing, and never a 500."""

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gating.models import Output, TaskType
from gating.roles import Role
from tests.factories import SubmissionFactory

URL = "/api/v1/outputs/"


def with_change(**changes):
    body = SubmissionFactory(task_type="never-stored")
    for key, value in changes.items():
        if value is ...:
            del body[key]
        else:
            body[key] = value
    return body


BAD_BODIES = [
    ("missing external_id", with_change(external_id=...), "external_id"),
    ("empty external_id", with_change(external_id=""), "external_id"),
    ("blank external_id", with_change(external_id="   "), "external_id"),
    ("missing output", with_change(output=...), "output"),
    ("number as model", with_change(model=7), "model"),
    ("string as clarity", with_change(input_clarity="0.5"), "input_clarity"),
    ("clarity above 1", with_change(input_clarity=1.01), "input_clarity"),
    ("coherence below 0", with_change(coherence=-0.1), "coherence"),
    ("bool as coherence", with_change(coherence=True), "coherence"),
    ("over-long external_id", with_change(external_id="x" * 201), "external_id"),
    ("over-long model", with_change(model="m" * 201), "model"),
    ("over-long output", with_change(output="o" * 200_001), "output"),
    ("metadata a list", with_change(metadata=["a"]), "metadata"),
    ("metadata a string", with_change(metadata="a"), "metadata"),
    ("task type with a space", with_change(task_type="two words"), "task_type"),
    ("validators not a list", with_change(validators={"facts": True}), "validators"),
    (
        "validator without passed",
        with_change(validators=[{"name": "facts"}]),
        "validators.0.passed",
    ),
    (
        "duplicate validator names",
        with_change(
            validators=[{"name": "facts", "passed": True}, {"name": "facts", "passed": False}]
        ),
        "validators",
    ),
    ("unknown field", with_change(colour="blue"), "colour"),
    ("NUL in output", with_change(output="a\x00b"), "output"),
    ("NUL in metadata", with_change(metadata={"k": "\x00"}), "metadata"),
]


@pytest.mark.parametrize(("case", "body", "field"), BAD_BODIES, ids=[c[0] for c in BAD_BODIES])
def test_bad_field_is_named_and_nothing_stored(gateway_api, case, body, field):
    response = gateway_api.post(URL, body, format="json")

    assert response.status_code == 400, response.content
    assert field in response.json()
    assert Output.objects.count() == 0
    assert not TaskType.objects.filter(name="never-stored").exists()


@pytest.mark.parametrize(
    ("raw", "field"),
    [
        ('"input_clarity": NaN', "input_clarity"),
        ('"coherence": Infinity', "coherence"),
        ('"input_clarity": 1e999', "input_clarity"),
        ('"input_clarity": 0.5, "metadata": {"k": NaN}', "metadata"),
    ],
)
def test_non_finite_numbers_are_refused(gateway_api, raw, field):
    body = with_change(input_clarity=..., coherence=..., metadata=...)
    text = json.dumps(body)[:-1] + ", " + raw
    if "coherence" not in raw:
        text += ', "coherence": 0.5'
    if "input_clarity" not in raw:
        text += ', "input_clarity": 0.5'
    response = gateway_api.post(URL, text + "}", content_type="application/json")

    assert response.status_code == 400
    assert field in response.json()
    assert Output.objects.count() == 0


@pytest.mark.parametrize(
    "raw",
    [b"", b"{", b"[]", b"null", b'"text"', b'{"external_id": "\\ud800"}', b"\xff\xfe"],
)
def test_malformed_json_is_400(gateway_api, raw):
    response = gateway_api.post(URL, raw, content_type="application/json")
    assert response.status_code == 400
    assert response.json()


def test_body_over_two_mib_is_413(gateway_api):
    body = with_change(output="x" * (2 * 1024 * 1024))
    response = gateway_api.post(URL, body, format="json")
    assert response.status_code == 413
    assert "larger than" in response.json()["detail"]
    assert Output.objects.count() == 0


def test_form_encoded_body_is_415(gateway_api):
    response = gateway_api.post(URL, {"external_id": "x"})
    assert response.status_code == 415


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.integers()
    | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=20,
)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    field=st.sampled_from(sorted(SubmissionFactory.build().keys())),
    value=json_values,
)
def test_no_value_in_any_field_yields_a_500(gateway_api, field, value):
    body = SubmissionFactory()
    body[field] = value
    response = gateway_api.post(URL, body, format="json")
    assert response.status_code in (200, 201, 400, 409), response.content


def test_nul_in_text_is_refused_in_words_and_lengths_still_count(gateway_api):
    body = with_change(
        output="a\x00b",
        validators=[{"name": "facts", "passed": False, "detail": "x\x00"}],
        tier="t" * 51,
    )
    response = gateway_api.post(URL, body, format="json")

    assert response.status_code == 400
    errors = response.json()
    refused = ["must not contain NUL (\\u0000) characters"]
    assert errors["output"] == refused
    assert errors["validators.0.detail"] == refused
    assert errors["tier"] == ["String should have at most 50 characters"]
    assert Output.objects.count() == 0


@pytest.mark.parametrize("url", [URL, f"{URL}batch/"])
@pytest.mark.parametrize(
    "content_type",
    [
        "application/jsonfoo",
        "application/json-seq",
        "text/json",
        "application/json; charset=latin-1",
    ],
)
def test_a_body_that_is_not_utf8_json_is_415(gateway_api, url, content_type):
    body = SubmissionFactory() if url == URL else {"outputs": [SubmissionFactory()]}
    response = gateway_api.post(url, json.dumps(body), content_type=content_type)

    assert response.status_code == 415, response.content
    assert "detail" in response.json()
    assert Output.objects.count() == 0


@pytest.mark.parametrize(
    "content_type",
    ["application/json; charset=utf-8", "Application/JSON", "application/json;charset=UTF-8"],
)
def test_json_with_parameters_or_in_capitals_is_json(gateway_api, content_type):
    response = gateway_api.post(URL, json.dumps(SubmissionFactory()), content_type=content_type)
    assert response.status_code == 201, response.content


API_ROUTES = [
    "/api/v1/outputs/",
    "/api/v1/outputs/batch/",
    "/api/v1/outputs/1/",
    "/api/v1/task-types/",
    "/api/v1/task-types/summarize/",
    "/api/v1/ping/",
    "/api/v1/queue/",
    "/api/v1/queue/summary/",
    "/api/v1/queue/claim/",
    "/api/v1/queue/1/heartbeat/",
    "/api/v1/queue/1/release/",
    "/api/v1/queue/1/decision/",
    "/api/v1/queue/bulk-decision/",
    "/api/v1/routing/",
    "/api/v1/alerts/",
    "/api/v1/alerts/1/acknowledge/",
]


@pytest.mark.parametrize("method", ["options", "head", "put", "delete"])
@pytest.mark.parametrize("role", [Role.GATEWAY, Role.ADMIN])
def test_other_methods_on_every_route_are_never_a_500(user_in, client_for, role, method):
    api = client_for(user_in(role))
    for route in API_ROUTES:
        assert getattr(api, method)(route).status_code < 500, (method, route)
