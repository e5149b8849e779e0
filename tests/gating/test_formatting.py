"""The dashboard's number formats, with known answers."""

import math

import pytest

from gating.formatting import count, duration, duration_unit, number, numbers_alike, percent


@pytest.mark.parametrize(
    ("share", "shown"),
    [
        (0.12345, "12%"),
        (0.5, "50%"),
        (0.1, "10%"),
        (0.9, "90%"),
        (0.0123, "1.2%"),
        (0.095, "9.5%"),
        (0.0996, "10%"),
        (0.95, "95%"),
        (0.995, "99.5%"),
        (0.0, "0%"),
        (1.0, "100%"),
        (0.00001, "<0.1%"),
        (0.99999, ">99.9%"),
        (math.nan, "–"),
    ],
)
def test_percent(share, shown):
    assert percent(share) == shown


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (7.254, "7.25"),
        (10.0, "10.00"),
        (1234.5, "1,234.50"),
        (0.12345, "0.12"),
        (0.1, "0.10"),
        (0.012345, "0.012"),
        (0.00012345, "0.00012"),
        (0.0996, "0.10"),
        (-0.05, "-0.050"),
        (0, "0"),
        (math.nan, "–"),
    ],
)
def test_number_keeps_two_significant_decimals(value, shown):
    assert number(value) == shown


def test_count_separates_thousands():
    assert count(12345) == "12,345"
    assert count(7) == "7"


@pytest.mark.parametrize(
    ("seconds", "shown"),
    [
        (0, "0 s"),
        (45, "45 s"),
        (45.4, "45 s"),
        (59.6, "1 min"),
        (90, "1 min 30 s"),
        (600, "10 min"),
        (3599.6, "1 h"),
        (11520, "3 h 12 min"),
        (11545, "3 h 12 min"),
        (11555, "3 h 13 min"),
        (86399, "1 d"),
        (183600, "2 d 3 h"),
    ],
)
def test_duration_in_its_two_largest_units(seconds, shown):
    assert duration(seconds) == shown


@pytest.mark.parametrize("seconds", [-1, math.nan])
def test_duration_refuses_what_is_not_one(seconds):
    with pytest.raises(ValueError, match="seconds"):
        duration(seconds)


@pytest.mark.parametrize(
    ("longest", "unit"),
    [(100, (1, "s")), (1800, (60, "min")), (7200, (60, "min")), (86400, (3600, "h"))],
)
def test_duration_unit_for_an_axis(longest, unit):
    assert duration_unit(longest) == unit


def test_duration_unit_is_days_past_two_days():
    assert duration_unit(3 * 86400) == (86400, "d")


def test_a_moment_in_utc_on_a_24_hour_clock():
    from datetime import UTC, datetime, timedelta, timezone

    from gating.formatting import utc_time, waited

    afternoon = datetime(2026, 11, 28, 14, 5, 59, tzinfo=UTC)
    assert utc_time(afternoon) == "2026-11-28 14:05 UTC"
    # Another zone is written in UTC: 09:05 at UTC-5 is 14:05 UTC.
    assert utc_time(afternoon.astimezone(timezone(timedelta(hours=-5)))) == "2026-11-28 14:05 UTC"
    # How long since, as every duration is written: 13 days 8 hours; never below 0.
    assert waited(afternoon - timedelta(days=13, hours=8), afternoon) == "13 d 8 h"
    assert waited(afternoon + timedelta(minutes=1), afternoon) == "0 s"


@pytest.mark.parametrize(
    ("values", "shown"),
    [
        # By hand: the largest, 0.2, needs two places for two significant digits.
        ([0.2, 0.001, -3.3e-15], ["0.20", "0.00", "0.00"]),
        # 0.012 needs three; 0.0004 is below the third place.
        ([0.012, 0.0004, -0.0004], ["0.012", "0.000", "0.000"]),
        ([1234.5, 0.5], ["1,234.50", "0.50"]),
        ([0.0, float("nan")], ["0", "–"]),
    ],
)
def test_numbers_side_by_side_are_written_to_the_places_the_largest_needs(values, shown):
    assert numbers_alike(values) == shown
