"""Parameters the pages and the metrics API cannot serve are a 400 that names them, with
nothing stored: times outside the years the filter allows, NUL characters, digits that are
not ASCII."""

from datetime import UTC, datetime
from functools import partial

import pytest
from django.http import QueryDict

from dashboard.filters import (
    FilterInvalid,
    filter_parse,
    parameter_text,
    parameter_whole,
)
from gating.gate_settings import BY_NAME
from gating.models import AuditEvent, TaskType, Validator
from gating.roles import Role
from tests.factories import TaskTypeFactory, logged_in

NOW = datetime(2025, 5, 10, 12, 0, tzinfo=UTC)


def refusal(query: str) -> FilterInvalid:
    with pytest.raises(FilterInvalid) as caught:
        filter_parse(QueryDict(query), task_types=["summary"], models=["gpt-small"], now=NOW)
    return caught.value


# --------------------------------------------------------------------------- the parser


@pytest.mark.parametrize(
    ("query", "name"),
    [
        ("since=0001-01-01", "since"),
        ("since=1999-12-31T23:59Z", "since"),
        ("until=0001-01-01T05:00", "until"),
        ("since=0001-01-01T00:00&until=0001-01-01T05:00", "since"),
        ("since=9999-12-31T05:00&until=9999-12-31T23:00", "since"),
        ("until=9999-01-01", "until"),
        ("since=0001-01-01T00:00%2B01:00", "since"),
        ("since=%202025-05-01", "since"),
        ("since=20250501T000000", "since"),
    ],
)
def test_a_time_outside_the_years_a_filter_takes_is_refused_by_name(query, name):
    error = refusal(query)
    assert error.field == name
    assert "2000 to 9998" in str(error)


def test_the_first_and_last_years_are_taken_at_any_offset():
    f = filter_parse(
        QueryDict("since=2000-01-01T00:00%2B23:59&until=9998-12-31T23:59-23:59"),
        task_types=[],
        models=[],
        now=NOW,
    )
    assert (f.since, f.until) == (
        datetime(1999, 12, 31, 0, 1, tzinfo=UTC),
        datetime(9999, 1, 1, 23, 58, tzinfo=UTC),
    )


def test_the_schema_pattern_is_the_rule_for_every_year():
    # The pattern the API's schema publishes decides: each year from 1 to 9999, written as
    # a date, is taken exactly when it lies in the years the docs name (2000 to 9998).
    for year in range(1, 10000):
        text = f"{year:04d}-06-15"
        query = QueryDict(f"since={text}&until={year:04d}-06-16")
        try:
            filter_parse(query, task_types=[], models=[], now=NOW)
            taken = True
        except FilterInvalid:
            taken = False
        assert taken == (2000 <= year <= 9998), text


@pytest.mark.parametrize("query", ["model=%20gpt-small", "model=gpt-small%20", "model=gpt%09small"])
def test_a_model_name_no_output_can_have_is_refused_not_trimmed(query):
    # Trimmed, " gpt-small" would quietly read as the model "gpt-small".
    error = refusal(query)
    assert error.field == "model"
    assert "Unknown" not in str(error)


@pytest.mark.parametrize("name", ["range", "since", "until", "task_type", "model"])
def test_a_nul_in_any_filter_parameter_is_refused_by_name(name):
    error = refusal(f"{name}=a%00b")
    assert error.field == name
    assert "NUL" in str(error)


def test_a_nul_in_a_text_parameter_is_refused_by_name():
    with pytest.raises(FilterInvalid) as caught:
        parameter_text(QueryDict("text=a%00b"), "text")
    assert caught.value.field == "text"
    assert parameter_text(QueryDict("text=+a+b+&text=c"), "text") == "c"
    assert parameter_text(QueryDict(""), "text") == ""


@pytest.mark.parametrize("value", ["²", "١٢", "1.5", "-1", "%2B1", "1e3", "99999999999999999999"])
def test_a_whole_number_is_ascii_digits_within_a_database_integer(value):
    with pytest.raises(FilterInvalid) as caught:
        parameter_whole(QueryDict(f"before={value}"), "before", "Must be an output id.")
    assert (caught.value.field, str(caught.value)) == ("before", "Must be an output id.")


def test_a_whole_number_is_read():
    assert parameter_whole(QueryDict("before=+42+"), "before", "") == 42
    assert parameter_whole(QueryDict("before="), "before", "") is None


# --------------------------------------------------------------------------- the pages


_client = partial(logged_in, raise_request_exception=False)


@pytest.fixture
def lead(db, user_in):
    TaskTypeFactory(name="summarize")
    return _client(user_in(Role.LEAD))


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("url", "name"),
    [
        ("/dashboard/drift/?since=0001-01-01", "since"),
        ("/dashboard/queue/?since=0001-01-01T00:00&until=0001-01-01T05:00", "since"),
        ("/dashboard/outputs/?text=a%00b", "text"),
        ("/dashboard/outputs/?external_id=a%00b", "external_id"),
        ("/dashboard/outputs/?before=%C2%B2", "before"),
        ("/dashboard/alerts/?state=open%00", "state"),
    ],
)
def test_a_page_refuses_a_parameter_it_cannot_serve_with_a_400_naming_it(lead, url, name):
    response = lead.get(url)
    assert response.status_code == 400
    assert f'data-field="{name}"' in response.content.decode()


@pytest.mark.django_db
@pytest.mark.parametrize("fmt", ["json", "csv"])
def test_the_psi_metric_refuses_a_since_before_the_floor(lead, fmt):
    response = lead.get("/api/v1/metrics/psi/", {"since": "0001-01-01", "format": fmt})
    assert response.status_code == 400
    assert list(response.json()) == ["since"]


@pytest.mark.django_db
def test_a_nul_in_the_thresholds_reason_is_named_and_nothing_is_saved(user_in):
    task_type = TaskTypeFactory(name="summarize")
    Validator.objects.create(task_type=task_type, name="facts", weight=1.0)
    form = {
        name: str(getattr(task_type, name))
        for name, setting in BY_NAME.items()
        if setting.is_number or setting.kind == "choice"
    }
    form |= {"weight:facts": "1.0", "audit_rate_warning": "0.5", "reason": "because\x00"}

    response = _client(user_in(Role.ADMIN)).post("/dashboard/thresholds/?task_type=summarize", form)

    assert response.status_code == 400
    assert 'data-field="reason"' in response.content.decode()
    assert TaskType.objects.get(pk=task_type.pk).audit_rate_warning == 0.0
    assert not AuditEvent.objects.filter(action="threshold_edit").exists()
