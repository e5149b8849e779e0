"""The team-scale bench's reading of the certification forecast (bench/team_scale.py), on a
history of thresholds runs built by hand: what the thresholds page would have said on
days 7, 10 and 14, beside the day certification came."""

from dataclasses import replace

from bench import team_scale
from simulator import loop

NEED = 736.0


def run(day: int, state: str, at_9_5: float) -> loop.ThresholdRun:
    """The thresholds run at the end of ``day`` for task type 0, heading for 9.44 (read at
    9.5), with ``at_9_5`` effective outputs there."""
    return loop.ThresholdRun(
        block=(day + 1) * loop.BLOCKS_PER_DAY - 1,
        task_type=0,
        review=4.0,
        approve=7.0,
        approve_state=state,
        review_state="underpowered",
        audit_rate=0.25,
        estimated_error={},
        true_error={},
        evidence={
            "needed_effective_n": NEED,
            "toward": {"threshold": 9.44},
            "effective_n_at": {"9.5": at_9_5},
        },
    )


def history(runs: list[loop.ThresholdRun]) -> loop.History:
    empty = loop.History(
        config=loop.history_config(1, days=20, outputs_per_day=1),
        settings=loop.LoopSettings(),
        task_type=[],
        truth=[],
        block=[],
        decision=[],
        runs=[],
        weights=[],
        failed=[],
        final_scores=[],
    )
    return replace(empty, runs=runs)


def test_each_forecast_is_the_day_the_need_is_met_beside_the_day_it_was_certified():
    # 50 effective outputs a day at 9.5: on day 7, 400 of 736, (736 - 400) / 50 = 6.72
    # days to go, so day 13.7; on day 10, 550: day 13.7 again; certified on day 12, so
    # day 14 is not read. An uncertified run without a day before it says "unknown".
    runs = [run(day, "underpowered", 50.0 * day + 50) for day in range(6, 12)]
    runs.append(run(12, "certified", 800.0))
    said = team_scale.forecasts(history(runs), 0)
    assert said == [
        {"day": 7, "pace": "on_pace", "need_met_day": 13.7, "certified_day": 12},
        {"day": 10, "pace": "on_pace", "need_met_day": 13.7, "certified_day": 12},
    ]
    summary = team_scale.forecast_summary([{"forecasts": {"t": said}}], days=20)
    assert summary["7"]["certified_after_need_met_days"] == {
        "median": -1.7,
        "min": -1.7,
        "max": -1.7,
    }
    # Dated 13.7 within the 20 days, certified on day 12 within them: it said when, 1.7
    # days out. In a history of 13 days the date falls after its end.
    assert (
        summary["10"].items()
        >= {
            "dated_within_history": 1,
            "of_which_certified_in_it": 1,
            "certified_in_history": 1,
            "of_which_dated_within_it": 1,
            "of_which_within_3_days": 1,
        }.items()
    )
    short = team_scale.forecast_summary([{"forecasts": {"t": said}}], days=13)["7"]
    assert (short["dated_within_history"], short["of_which_dated_within_it"]) == (0, 0)
    assert summary["14"]["uncertified"] == 0


def test_no_gain_and_no_earlier_run_are_said_as_such():
    runs = [run(7, "underpowered", 300.0), run(9, "underpowered", 300.0)]
    runs.append(run(10, "underpowered", 300.0))
    said = team_scale.forecasts(history(runs), 0)
    assert [(f["day"], f["pace"], f["need_met_day"]) for f in said] == [
        (7, "unknown", None),
        (10, "too_slow", None),
    ]
    assert team_scale.forecast_summary([{"forecasts": {"t": said}}], days=20)["10"]["pace"] == {
        "too_slow": 1
    }
