"""Query parameters of the list endpoints: any value answers 200 or a 400 naming the
parameter, never a 500."""

import base64
from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.factories import SubmissionFactory

OUTPUTS = "/api/v1/outputs/"
QUEUE = "/api/v1/queue/"


def ids(response):
    return [o["id"] for o in response.json()["results"]]


def cursor(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


@pytest.mark.parametrize("offset_hours", [16, -16, 23])
def test_any_offset_python_accepts_is_taken_as_its_utc_instant(gateway_api, offset_hours):
    made = gateway_api.post(OUTPUTS, SubmissionFactory(), format="json").json()
    zone = timezone(timedelta(hours=offset_hours))
    hour_ago = (datetime.now(UTC) - timedelta(hours=1)).astimezone(zone).isoformat()
    hour_ahead = (datetime.now(UTC) + timedelta(hours=1)).astimezone(zone).isoformat()

    assert ids(gateway_api.get(OUTPUTS, {"created_after": hour_ago})) == [made["id"]]
    assert ids(gateway_api.get(OUTPUTS, {"created_after": hour_ahead})) == []
    assert ids(gateway_api.get(OUTPUTS, {"created_before": hour_ahead})) == [made["id"]]


@pytest.mark.parametrize("name", ["created_after", "created_before"])
@pytest.mark.parametrize("value", ["0001-01-01T00:00:00+01:00", "9999-12-31T23:59:59-01:00"])
def test_an_instant_outside_the_years_utc_can_hold_is_400_naming_it(gateway_api, name, value):
    response = gateway_api.get(OUTPUTS, {name: value})

    assert response.status_code == 400
    assert list(response.json()) == [name]


@pytest.mark.parametrize(
    "value",
    [
        "zzz",
        cursor("p=abc"),
        cursor("p=2026-01-01T00:00:00+16:00"),
        cursor("p=2026-01-01 00:00:00"),
        cursor("p=99999999999999999999999"),
        cursor("p=1\x00"),
        cursor("p=nan"),
        cursor("o=-1"),
    ],
)
@pytest.mark.parametrize("url", [OUTPUTS, QUEUE])
def test_a_bad_or_tampered_cursor_is_400_naming_it(reviewer_api, held_outputs, url, value):
    held_outputs(2)

    response = reviewer_api.get(url, {"cursor": value})

    assert response.status_code == 400, response.content
    assert list(response.json()) == ["cursor"]


@pytest.mark.parametrize("url", [OUTPUTS, QUEUE])
@pytest.mark.parametrize("value", ["0", "-1", "abc", "1.5", "99999999999999999999999"])
def test_a_page_size_outside_its_range_is_400_naming_it(reviewer_api, url, value):
    response = reviewer_api.get(url, {"page_size": value})

    assert response.status_code == 400
    assert list(response.json()) == ["page_size"]


@pytest.mark.parametrize("value", ["NaN", "inf", "-Infinity", "1e999", "4,5"])
@pytest.mark.parametrize("name", ["score_min", "score_max"])
def test_a_score_filter_that_is_not_a_finite_number_is_400(reviewer_api, name, value):
    response = reviewer_api.get(QUEUE, {name: value})

    assert response.status_code == 400
    assert list(response.json()) == [name]


def test_the_cursors_handed_out_walk_the_queue(reviewer_api, held_outputs):
    made = held_outputs(5)
    seen, url, params = [], QUEUE, {"page_size": 2}
    while url:
        page = reviewer_api.get(url, params).json()
        seen += [entry["output_id"] for entry in page["results"]]
        url, params = page["next"], None
    assert seen == [o.pk for o in made]


PARAMS = {
    OUTPUTS: ["task_type", "model", "decision", "status", "created_after", "created_before"],
    QUEUE: ["task_type", "model", "score_min", "score_max", "kind"],
}


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    url=st.sampled_from([OUTPUTS, QUEUE]),
    pick=st.integers(min_value=0),
    value=st.text(max_size=40) | st.sampled_from(["1e999", "NaN", "2026-01-01T00:00:00+23:59"]),
)
def test_no_query_value_yields_a_500(reviewer_api, url, pick, value):
    names = [*PARAMS[url], "cursor", "page_size"]
    name = names[pick % len(names)]

    response = reviewer_api.get(url, {name: value})

    assert response.status_code in (200, 400), response.content
    if response.status_code == 400:
        assert list(response.json()) == [name]
