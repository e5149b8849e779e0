"""The filter bar's query string: read into a filter, refused by name, written back."""

from datetime import UTC, datetime, timedelta

import pytest
from django.http import QueryDict

from dashboard.filters import DashboardFilter, FilterInvalid, filter_parse, filter_query

NOW = datetime(2025, 5, 10, 12, 0, tzinfo=UTC)
TASK_TYPES = ["summary", "translation", "support reply"]
MODELS = ["gpt-small", "gpt-large"]


def parse(query: str) -> DashboardFilter:
    return filter_parse(QueryDict(query), task_types=TASK_TYPES, models=MODELS, now=NOW)


def refusal(query: str) -> FilterInvalid:
    with pytest.raises(FilterInvalid) as caught:
        parse(query)
    return caught.value


def test_no_parameters_mean_the_last_7_days_of_everything():
    assert parse("") == DashboardFilter(since=NOW - timedelta(days=7), until=NOW, preset="7d")


@pytest.mark.parametrize(
    ("preset", "length"),
    [("24h", timedelta(hours=24)), ("7d", timedelta(days=7)), ("30d", timedelta(days=30)),
     ("90d", timedelta(days=90))],
)  # fmt: skip
def test_a_preset_ends_now(preset, length):
    dashboard_filter = parse(f"range={preset}")
    assert (dashboard_filter.since, dashboard_filter.until) == (NOW - length, NOW)
    assert dashboard_filter.preset == preset


@pytest.mark.parametrize(
    ("query", "named"),
    [
        ("range=30d&since=2025-05-03T12:00", "since"),
        ("range=24h&until=2025-02-01", "until"),
        ("range=7d&since=2025-01-01&until=2025-02-01", "since and until"),
    ],
)
def test_a_preset_beside_times_is_refused_naming_range_and_the_times(query, named):
    # Neither may win silently: a shared link would say one range and show another.
    error = refusal(query)
    assert error.field == "range"
    assert f"cannot be given with {named}" in str(error)
    assert "range=custom" in str(error)


def test_custom_beside_times_and_a_preset_alone_are_read():
    assert parse("range=custom&since=2025-05-01").since == datetime(2025, 5, 1, tzinfo=UTC)
    assert parse("range=30d&since=&until=").preset == "30d"


def test_the_filter_bars_24_hour_input_format_is_read_as_utc():
    dashboard_filter = parse("range=custom&since=2025-05-01+21:30&until=2025-05-02+00:05")
    assert dashboard_filter.since == datetime(2025, 5, 1, 21, 30, tzinfo=UTC)
    assert dashboard_filter.until == datetime(2025, 5, 2, 0, 5, tzinfo=UTC)


def test_custom_times_with_offsets_are_converted_to_utc():
    dashboard_filter = parse(
        "range=custom&since=2025-05-01T09:30:00%2B02:00&until=2025-05-02T00:00Z"
    )
    assert dashboard_filter.since == datetime(2025, 5, 1, 7, 30, tzinfo=UTC)
    assert dashboard_filter.until == datetime(2025, 5, 2, tzinfo=UTC)
    assert dashboard_filter.preset is None


def test_times_without_an_offset_are_utc_and_a_date_is_its_midnight():
    dashboard_filter = parse("since=2025-05-01T09:30&until=2025-05-03")
    assert dashboard_filter.since == datetime(2025, 5, 1, 9, 30, tzinfo=UTC)
    assert dashboard_filter.until == datetime(2025, 5, 3, tzinfo=UTC)


def test_a_custom_range_without_until_ends_now_and_without_since_is_7_days_long():
    assert parse("since=2025-05-09").until == NOW
    assert parse("until=2025-05-03").since == datetime(2025, 4, 26, tzinfo=UTC)


def test_empty_fields_count_as_absent():
    assert parse("range=&since=&until=&task_type=&model=") == parse("")


def test_task_types_and_models_are_repeated_parameters():
    dashboard_filter = parse("task_type=translation&task_type=summary&model=gpt-small")
    assert dashboard_filter.task_types == ("summary", "translation")
    assert dashboard_filter.models == ("gpt-small",)


def test_a_plain_dict_reads_like_a_query_dict():
    query = {"range": "30d", "task_type": ["summary"], "model": "gpt-large"}
    dashboard_filter = filter_parse(query, task_types=TASK_TYPES, models=MODELS, now=NOW)
    assert dashboard_filter == parse("range=30d&task_type=summary&model=gpt-large")


def test_other_parameters_are_not_the_filters():
    assert parse("page=3&sort=score") == parse("")


def test_an_unknown_preset_is_refused_by_name():
    error = refusal("range=2w")
    assert error.field == "range"
    assert '"2w"' in str(error) and "24h" in str(error)


@pytest.mark.parametrize("name", ["since", "until"])
@pytest.mark.parametrize("text", ["yesterday", "2025-13-01", "2025-05-01T25:00"])
def test_a_time_that_cannot_be_read_is_refused_by_name(name, text):
    error = refusal(f"range=custom&{name}={text}")
    assert error.field == name
    assert text in str(error) and "ISO 8601" in str(error)


@pytest.mark.parametrize(
    "query",
    [
        "since=2025-05-02&until=2025-05-01",
        "since=2025-05-01T10:00Z&until=2025-05-01T12:00%2B02:00",
        "since=2025-05-11",
    ],
)
def test_a_range_that_does_not_end_after_it_starts_is_refused(query):
    error = refusal(query)
    assert error.field == "until"
    assert "later than since" in str(error)


def test_an_unknown_task_type_is_refused_by_name():
    error = refusal("task_type=summary&task_type=poetry")
    assert (error.field, str(error)) == ("task_type", 'Unknown task type "poetry".')


def test_an_unknown_model_is_refused_by_name():
    error = refusal("model=gpt-huge")
    assert (error.field, str(error)) == ("model", 'Unknown model "gpt-huge".')


def test_a_long_unknown_value_is_shortened_in_the_message():
    error = refusal("model=" + "x" * 5000)
    assert len(str(error)) < 150


def test_a_preset_filter_round_trips_through_its_query_string():
    dashboard_filter = parse("range=30d&task_type=support+reply&model=gpt-small&model=gpt-large")
    assert filter_query(dashboard_filter) == (
        "range=30d&task_type=support+reply&model=gpt-large&model=gpt-small"
    )
    assert parse(filter_query(dashboard_filter)) == dashboard_filter


def test_a_custom_filter_round_trips_through_its_query_string():
    dashboard_filter = parse(
        "since=2025-05-01T09:30:00.5%2B02:00&until=2025-05-02&task_type=summary"
    )
    assert filter_query(dashboard_filter) == (
        "range=custom&since=2025-05-01T07%3A30%3A00.500000Z&until=2025-05-02T00%3A00%3A00Z"
        "&task_type=summary"
    )
    assert parse(filter_query(dashboard_filter)) == dashboard_filter


def test_the_default_filter_round_trips_too():
    assert parse(filter_query(parse(""))) == parse("")


def test_labels_say_the_range_in_words():
    assert parse("range=24h").label == "Last 24 hours"
    assert parse("since=2025-05-01&until=2025-05-02T06:00").label == (
        "2025-05-01 00:00 to 2025-05-02 06:00 UTC"
    )
