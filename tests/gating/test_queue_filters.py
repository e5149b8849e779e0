"""The queue's task_type and model: repeated for several (none: all), as the dashboard's filter
takes them; a body takes one name or a list. Unknown task types and a score band that matches
nothing are refused by name, in words."""

from urllib.parse import urlencode

import pytest

from gating.api.strict import EMPTY_VALUE
from gating.roles import Role
from tests.factories import logged_in

QUEUE = "/api/v1/queue/"
CLAIM = "/api/v1/queue/claim/"
BULK = "/api/v1/queue/bulk-decision/"
DRY_RUN = {"action": "approve", "reason": "all good", "dry_run": True}


@pytest.fixture
def lead_api(user_in, client_for):
    return client_for(user_in(Role.LEAD))


@pytest.fixture
def three_types(held_outputs):
    return {name: held_outputs(1, task_type=name, model=f"m-{name}") for name in "abc"}


def listed_types(response) -> set[str]:
    return {entry["task_type"] for entry in response.json()["results"]}


def test_the_list_takes_task_type_repeated(reviewer_api, three_types):
    response = reviewer_api.get(f"{QUEUE}?task_type=a&task_type=c")

    assert response.status_code == 200
    assert listed_types(response) == {"a", "c"}


def test_the_list_takes_model_repeated(reviewer_api, three_types):
    response = reviewer_api.get(f"{QUEUE}?model=m-a&model=m-b")

    assert listed_types(response) == {"a", "b"}


def test_an_unknown_task_type_is_refused_in_words(reviewer_api, three_types):
    response = reviewer_api.get(f"{QUEUE}?task_type=a&task_type=nope")

    assert response.status_code == 400
    assert response.json() == {"task_type": ['Unknown task type "nope".']}


def test_an_unknown_model_matches_nothing(reviewer_api, three_types):
    # The queue knows a model only by its open items: a model whose last item was taken is
    # "nothing left", not a refusal.
    response = reviewer_api.get(f"{QUEUE}?model=gone")

    assert response.status_code == 200
    assert response.json()["results"] == []


@pytest.mark.parametrize("task_type", ["b", ["b"], ["a", "b"]])
def test_a_body_takes_one_name_or_a_list(lead_api, three_types, task_type):
    response = lead_api.post(BULK, DRY_RUN | {"task_type": task_type}, format="json")

    assert response.status_code == 200
    assert response.json()["outputs"] == len(task_type) if isinstance(task_type, list) else 1


def test_a_claim_takes_a_body_s_list(reviewer_api, three_types):
    response = reviewer_api.post(CLAIM, {"task_type": ["c"]}, format="json")

    assert response.json()["output"]["task_type"] == "c"


def test_a_form_body_repeats_the_field(lead_api, three_types):
    # The pages' forms post the parameter once for each name chosen.
    form = {"task_type": ["a", "c"], "action": "approve", "reason": "ok", "dry_run": "true"}

    response = lead_api.post(
        BULK, urlencode(form, doseq=True), content_type="application/x-www-form-urlencoded"
    )

    assert response.json() == {"outputs": 2, "dry_run": True}


@pytest.mark.parametrize(
    ("task_type", "message"),
    [
        ([], EMPTY_VALUE),
        (7, "Must be a JSON string or a list of strings."),
        (["a", 7], "Must be a JSON string or a list of strings."),
        ({"name": "a"}, "Must be a JSON string or a list of strings."),
        ([""], "This field may not be blank."),
        (["nope"], 'Unknown task type "nope".'),
    ],
)
def test_a_body_s_bad_names_are_refused_and_nothing_is_decided(
    lead_api, three_types, task_type, message
):
    body = DRY_RUN | {"task_type": task_type, "dry_run": False}

    response = lead_api.post(BULK, body, format="json")

    assert response.status_code == 400
    assert response.json() == {"task_type": [message]}
    assert lead_api.post(BULK, DRY_RUN, format="json").json()["outputs"] == 3


@pytest.mark.parametrize("query", ["score_min=5&score_max=5", "score_min=5&score_max=4"])
def test_a_score_max_not_above_score_min_is_refused_in_the_query(reviewer_api, query):
    response = reviewer_api.get(f"{QUEUE}?{query}")

    assert response.status_code == 400
    [message] = response.json()["score_max"]
    assert message.startswith("score_max (")
    assert "must be above score_min (5)" in message


def test_a_score_max_not_above_score_min_is_refused_in_the_body(lead_api, three_types):
    body = DRY_RUN | {"score_min": 3.0, "score_max": 3.0}

    response = lead_api.post(BULK, body, format="json")

    assert response.status_code == 400
    assert list(response.json()) == ["score_max"]


def test_the_queue_page_takes_task_type_repeated(user_in, three_types):
    page = logged_in(user_in(Role.REVIEWER)).get("/queue/?task_type=a&task_type=b")

    html = page.content.decode()
    assert page.status_code == 200
    assert '<option value="a" selected>' in html
    assert '<option value="c">' in html
    assert html.count('<input type="hidden" name="task_type"') == 2


def test_the_bulk_page_previews_several_task_types(user_in, three_types):
    form = {"task_type": ["a", "b"], "action": "reject", "reason": "broke", "step": "preview"}

    preview = logged_in(user_in(Role.LEAD)).post("/queue/bulk/", form)

    assert '<strong id="bulk-count">2</strong>' in preview.content.decode()


def test_the_bulk_page_refuses_a_score_band_that_matches_nothing(user_in, three_types):
    form = {"score_min": "4", "score_max": "4", "action": "reject", "reason": "x"}

    response = logged_in(user_in(Role.LEAD)).post("/queue/bulk/", form)

    assert response.status_code == 400
    assert "score_max (4) must be above score_min (4)" in response.content.decode()


def test_the_outputs_api_takes_task_type_repeated(gateway_api, three_types):
    response = gateway_api.get("/api/v1/outputs/?task_type=a&task_type=b")

    assert {o["task_type"] for o in response.json()["results"]} == {"a", "b"}
