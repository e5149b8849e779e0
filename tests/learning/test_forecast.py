"""The certification forecast (learning/statistics/forecast.py), by hand."""

import math

import pytest

from learning.statistics.forecast import (
    Pace,
    certification_forecast,
    forecast_of,
    need_toward,
    reading_toward,
)


def forecast(**kw):
    args = {"have": 200.0, "need": 736.0, "have_before": 140.0, "days_between": 1.0}
    return certification_forecast(**{**args, "audits_per_day": 30.0, **kw})


def test_a_straight_line_through_two_runs():
    # 60 effective outputs gained in a day; 536 to go: 536 / 60 = 8.93 days. Twice the
    # 30 audits a day doubles the gain and halves that.
    f = forecast()
    assert f.pace is Pace.ON_PACE
    assert f.days == pytest.approx(536 / 60)
    assert f.audits_per_day_to_halve == 60.0
    # Runs 12 hours apart: the same 60 is 120 a day, 536 / 120 = 4.47 days.
    assert forecast(days_between=0.5).days == pytest.approx(536 / 120)


def test_ready_unknown_and_too_slow():
    assert forecast(have=736.0) == forecast(have=900.0, have_before=None)
    ready = forecast(have=736.0, certified=True)
    assert ready.pace is Pace.READY and ready.days == 0.0
    # The need met at today's estimates and yet not certified: the bound's widening for
    # the label model holds it, and the words do not say the data is all it needs.
    held = forecast(have=900.0)
    assert held.pace is Pace.WIDENED and "data enough now" not in held.words
    assert "widened" in held.words
    assert forecast(have_before=None).pace is Pace.UNKNOWN
    assert forecast(days_between=0.0).pace is Pace.UNKNOWN
    # The window sheds as much as it gains (it is full), or more.
    for before in (200.0, 260.0):
        f = forecast(have_before=before)
        assert f.pace is Pace.TOO_SLOW and f.days is None and f.audits_per_day_to_halve is None


def test_the_forecast_in_words():
    assert forecast().words == "about 9 days at today's pace; 60 audits a day would halve it"
    assert forecast(audits_per_day=0.0).words == "about 9 days at today's pace"
    assert forecast(have=736.0, certified=True).words == "data enough now"
    assert forecast(have_before=None).words == "after a day of runs"
    assert forecast(have_before=200.0).words == "not at today's pace: more audits needed"


def test_no_audits_lately_has_nothing_to_scale():
    f = forecast(audits_per_day=0.0)
    assert f.pace is Pace.ON_PACE and f.audits_per_day_to_halve is None


@pytest.mark.parametrize("field", ["have", "need", "audits_per_day"])
@pytest.mark.parametrize("value", [-1.0, math.nan, math.inf])
def test_refuses_what_is_not_a_count(field, value):
    if field == "need" and value == math.inf:
        return  # an infinite need is a reading: test_no_amount_of_todays_data_passes
    with pytest.raises(ValueError, match=field):
        forecast(**{field: value})


def test_no_amount_of_todays_data_passes():
    f = forecast(need=math.inf)
    assert f.pace is Pace.OVER_BUDGET and f.days is None
    assert f.words == "not until the estimates are within budget"


# --------------------------------------------------------------------------- from a run's evidence

CURVE = {"8.0": 900.0, "9.4": 420.0, "9.5": 380.0, "9.6": 300.0}


def test_the_reading_is_at_the_tenth_at_or_above_where_certification_heads():
    assert reading_toward({"toward": {"threshold": 9.42}, "effective_n_at": CURVE}) == (
        9.5,
        380.0,
    )
    assert reading_toward({"toward": {"threshold": 9.4}, "effective_n_at": CURVE}) == (9.4, 420.0)
    # Above every recorded tenth; a run recorded before 2026-12-06 is read at its candidate
    # with the most data, as it was then; a run with no candidates is not read.
    assert reading_toward({"toward": {"threshold": 9.7}, "effective_n_at": CURVE}) is None
    before = {"most_data": {"threshold": 8.02, "edit": {"effective_n": 640.0}}}
    assert reading_toward(before) == (8.02, 640.0)
    assert reading_toward({"needed_effective_n": 736.0}) is None


def test_the_pace_is_read_at_the_latest_runs_tenth_in_both_runs():
    # The earlier run headed for 8.0 (900 there); the latest heads for 9.42, read at 9.5:
    # 380 then 500, 120 a day, (736 - 500) / 120 = 1.97 days.
    now = {"needed_effective_n": 736.0, "toward": {"threshold": 9.42}}
    now["effective_n_at"] = {**CURVE, "9.5": 500.0}
    before = {"needed_effective_n": 736.0, "toward": {"threshold": 8.0}, "effective_n_at": CURVE}
    f = forecast_of(now, before=before, days_between=1.0, audits_per_day=30.0)
    assert f.pace is Pace.ON_PACE
    assert f.days == pytest.approx(236 / 120)
    # An earlier run with no reading at that tenth, or none at all: no pace to read.
    assert forecast_of(now, before={}, days_between=1.0, audits_per_day=30.0).pace is Pace.UNKNOWN
    assert forecast_of(now, before=None, days_between=1.0, audits_per_day=30.0).pace is (
        Pace.UNKNOWN
    )
    # The need met at the tenth: ready, whatever came before.
    ready = {**now, "effective_n_at": {"9.5": 736.0}}
    assert forecast_of(
        ready, before=None, days_between=0.0, audits_per_day=0.0, certified=True
    ).pace is (Pace.READY)
    assert forecast_of(ready, before=None, days_between=0.0, audits_per_day=0.0).pace is (
        Pace.WIDENED
    )


def test_the_need_is_what_the_heading_candidate_needs_to_pass():
    run = {"needed_effective_n": 298.07, "toward": {"threshold": 9.42, "needed_to_pass": 1009.5}}
    assert need_toward(run) == 1009.5
    # Recorded as None: no amount of today's data passes.
    over = {**run, "toward": {"threshold": 9.42, "needed_to_pass": None}}
    assert need_toward(over) == math.inf
    # Runs recorded before the need to pass was: a clean record's need, as read then.
    assert need_toward({**run, "toward": {"threshold": 9.42}}) == 298.07
    assert need_toward({"toward": {"threshold": 9.42}}) is None
    # The forecast extends the line to the need to pass: 380 then 500 at 9.5, 120 a day,
    # (1009.5 - 500) / 120 = 4.25 days; over budget, no line to extend.
    now = {**run, "effective_n_at": {**CURVE, "9.5": 500.0}}
    before = {**run, "effective_n_at": CURVE}
    f = forecast_of(now, before=before, days_between=1.0, audits_per_day=30.0)
    assert f.pace is Pace.ON_PACE and f.days == pytest.approx(509.5 / 120)
    now_over = {**over, "effective_n_at": now["effective_n_at"]}
    assert forecast_of(now_over, before=before, days_between=1.0, audits_per_day=30.0).pace is (
        Pace.OVER_BUDGET
    )
