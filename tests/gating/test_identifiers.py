"""Identifiers (external_id, task_type, model, tier, validator names) are stored as sent or
refused with the field named: no control characters, no white space at either end. The
query filters read them by the same rule, so whatever was stored can be found again."""

import sys

import pytest

from gating.models import Output
from gating.submissions import IDENTIFIER_PATTERN, identifier_problem
from tests.factories import SubmissionFactory

OUTPUTS = "/api/v1/outputs/"
BATCH = "/api/v1/outputs/batch/"
EDGE = "must not begin or end with white space"
CONTROL = "must not contain control characters (U+0000 to U+001F, U+007F to U+009F)"


@pytest.mark.parametrize("field", ["external_id", "model", "tier"])
@pytest.mark.parametrize(
    ("value", "problem"),
    [
        (" gpt-x", EDGE),
        ("gpt-x ", EDGE),
        ("\u3000gpt-x", EDGE),
        ("gpt-x\u00a0", EDGE),
        ("gpt\x00x", CONTROL),
        ("gpt\tx", CONTROL),
        ("gpt-x\n", CONTROL),
        ("gpt\x85x", CONTROL),
    ],
)
def test_an_identifier_that_could_not_be_found_again_is_refused_by_name(
    gateway_api, field, value, problem
):
    response = gateway_api.post(OUTPUTS, SubmissionFactory(**{field: value}), format="json")

    assert response.status_code == 400
    assert response.json() == {field: [problem]}
    assert not Output.objects.exists()


def test_a_batch_names_the_item_and_the_field(gateway_api):
    items = [SubmissionFactory(), SubmissionFactory(model="gpt-x ")]

    response = gateway_api.post(BATCH, {"outputs": items}, format="json")

    assert response.status_code == 400
    assert response.json() == {"outputs": {"1": {"model": [EDGE]}}}


@pytest.mark.parametrize("name", ["task_type", "validators.0.name"])
def test_names_with_their_own_pattern_refuse_white_space_too(gateway_api, name):
    body = SubmissionFactory(task_type=" summarize")
    if name != "task_type":
        body = SubmissionFactory()
        body["validators"][0]["name"] = "facts "

    response = gateway_api.post(OUTPUTS, body, format="json")

    assert response.status_code == 400
    assert list(response.json()) == [name]


def test_white_space_inside_is_kept_and_found_again(gateway_api):
    made = gateway_api.post(OUTPUTS, SubmissionFactory(model="gpt x 2"), format="json")
    assert made.status_code == 201

    found = gateway_api.get(OUTPUTS, {"model": "gpt x 2"}).json()["results"]

    assert [o["id"] for o in found] == [made.json()["id"]]
    assert found[0]["model"] == "gpt x 2"


@pytest.mark.parametrize(
    ("url", "name"),
    [
        (OUTPUTS, "model"),
        (OUTPUTS, "task_type"),
        ("/api/v1/queue/", "model"),
        ("/api/v1/queue/", "task_type"),
        ("/api/v1/queue/summary/", "model"),
    ],
)
@pytest.mark.parametrize(("value", "problem"), [("model-a ", EDGE), ("model\x07a", CONTROL)])
def test_a_filter_is_not_trimmed_but_refused_by_the_same_rule(
    held_outputs, reviewer_api, url, name, value, problem
):
    held_outputs(1, task_type="model-a", model="model-a")

    response = reviewer_api.get(url, {name: value})

    assert response.status_code == 400
    assert response.json() == {name: [problem]}


def test_a_claim_filter_in_the_body_follows_the_rule(held_outputs, reviewer_api):
    held_outputs(1, model="model-a")

    response = reviewer_api.post("/api/v1/queue/claim/", {"model": " model-a"}, format="json")

    assert response.status_code == 400
    assert response.json() == {"model": [EDGE]}


def test_the_rule_s_white_space_is_python_s_and_its_control_characters_unicode_s():
    # The filters used to strip() their values: every character strip() removes must be
    # refused at an edge, or a stored name could again differ from any filter's value.
    import unicodedata

    for code in range(sys.maxunicode + 1):
        char = chr(code)
        if 0xD800 <= code <= 0xDFFF:
            continue
        control = unicodedata.category(char) == "Cc"
        assert (identifier_problem(f"a{char}b") is not None) == control, hex(code)
        refused_at_edge = identifier_problem(f"{char}ab") is not None
        assert refused_at_edge == (control or char.isspace()), hex(code)


def test_the_schema_publishes_the_rule(client):
    schema = client.get("/api/schema/?format=json").json()
    submission = schema["components"]["schemas"]["OutputSubmission"]["properties"]

    for field in ("external_id", "model", "tier"):
        assert submission[field]["pattern"] == IDENTIFIER_PATTERN, field


def test_the_admin_refuses_a_task_type_name_no_gateway_can_send(db, client):
    from django.contrib.auth import get_user_model

    from gating.models import TaskType

    client.force_login(get_user_model().objects.create_superuser("root"))
    form = client.get("/admin/gating/tasktype/add/").context["adminform"].form
    data = {name: value for name, value in form.initial.items() if name in form.fields}
    data = {k: ("on" if v is True else v) for k, v in data.items() if v not in (False, None)}
    data |= {"name": "summarize ", "validators-TOTAL_FORMS": "0", "validators-INITIAL_FORMS": "0"}

    response = client.post("/admin/gating/tasktype/add/", data)

    assert response.status_code == 200
    assert response.context["adminform"].form.errors["name"] == [
        "The name must be letters, digits and _ . : - only, beginning with a letter or digit."
    ]
    assert not TaskType.objects.exists()
