"""When the approve threshold's candidate will have data enough to be tested, at today's
pace: pure arithmetic. Not when it will be certified: a bound on an estimate near its
budget, widened for the label model, needs more than the need, which is what a clean
record needs (at a team's scale, docs/learning.md, 2 of 22 task types whose need was dated
within the month were certified in it).

The search tests a candidate once its effective sample reaches the need
(``certify.certify_approve_threshold``). The forecast reads how fast the candidate that
certification is heading for (``Certification.toward``: where the label model's estimates
pass with their margin) gained effective outputs between two thresholds runs, and extends
that line:

    days = (need - have) / gain per day

Why that candidate: the one with the most data scores far below any threshold that could
be certified (5 to 8 in the simulated world), so its need was met a week or more before
certification came, and the forecast said "data enough now" all that time.

It is a straight line through two points, no more. Effective outputs grow about in
proportion to the audits reviewed while the lookback window fills; once it is full, what
leaves the window takes away what comes in, the gain falls towards zero, and the forecast
says that today's pace will not get there. Doubling the audits reviewed a day doubles the
gain and halves the days, so the reviews a day that would halve the forecast are twice
today's audits.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum


class Pace(StrEnum):
    READY = "ready"  # the data is there: what is missing is an estimate within budget
    ON_PACE = "on_pace"  # ``days`` to the need at today's pace
    TOO_SLOW = "too_slow"  # no gain between the two runs: today's pace does not get there
    UNKNOWN = "unknown"  # no earlier run to measure the pace against


@dataclass(frozen=True)
class Forecast:
    """``days`` to the need at today's pace (0 when ready, None unless on pace);
    ``audits_per_day_to_halve``: the audits reviewed a day that would halve ``days`` (None
    with nothing to halve, or with no audits lately to scale)."""

    pace: Pace
    days: float | None = None
    audits_per_day_to_halve: float | None = None

    @property
    def words(self) -> str:
        """The forecast in a few words, for the pages and the alerts alike."""
        if self.pace is Pace.READY:
            return "data enough now"
        if self.pace is Pace.TOO_SLOW:
            return "not at today's pace: more audits needed"
        if self.pace is Pace.UNKNOWN:
            return "after a day of runs"
        said = f"about {self.days:.0f} days at today's pace"
        if self.audits_per_day_to_halve is not None:
            said += f"; {self.audits_per_day_to_halve:.0f} audits a day would halve it"
        return said


def certification_forecast(
    *,
    have: float,
    need: float,
    have_before: float | None,
    days_between: float,
    audits_per_day: float,
) -> Forecast:
    """From the effective outputs now (``have``) and ``days_between`` days earlier
    (``have_before``; None if there was no run then), the need, and the audits reviewed a
    day lately."""
    for name, value in (("have", have), ("need", need), ("audits_per_day", audits_per_day)):
        if not (math.isfinite(value) and value >= 0):
            raise ValueError(f"{name} must be a finite number at least 0, not {value!r}")
    if have >= need:
        return Forecast(Pace.READY, days=0.0)
    if have_before is None or not days_between > 0:
        return Forecast(Pace.UNKNOWN)
    gain = (have - have_before) / days_between
    if not gain > 0:
        return Forecast(Pace.TOO_SLOW)
    return Forecast(
        Pace.ON_PACE,
        days=(need - have) / gain,
        # With no audits lately the gain came from elsewhere: more audits' share is unknown.
        audits_per_day_to_halve=2 * audits_per_day if audits_per_day > 0 else None,
    )


def reading_toward(evidence: Mapping) -> tuple[float, float] | None:
    """From a thresholds run's evidence (``Certification.as_dict``): the tenth of a point at
    or above its ``toward`` candidate, and the effective sample scoring at least that tenth
    (no more than the candidate's own, since the sample shrinks as the threshold rises).
    None where the run recorded no candidates (ADR-0003's rule)."""
    toward = (evidence.get("toward") or {}).get("threshold")
    if toward is None:
        # Runs recorded before 2026-12-06: the candidate with the most data, as they were
        # read then.
        most = evidence.get("most_data") or {}
        have = (most.get("edit") or {}).get("effective_n")
        return None if have is None or most.get("threshold") is None else (most["threshold"], have)
    return _at_or_above(evidence, toward)


def _at_or_above(evidence: Mapping, threshold: float) -> tuple[float, float] | None:
    curve = evidence.get("effective_n_at") or {}
    above = [float(t) for t in curve if float(t) >= threshold - 1e-9]
    if not above:
        return None
    tenth = min(above)
    return tenth, curve[f"{tenth:.1f}"]


def forecast_of(
    evidence: Mapping,
    *,
    before: Mapping | None,
    days_between: float,
    audits_per_day: float,
) -> Forecast:
    """The forecast of a run's evidence against an earlier run's (``before``, None with
    none), both read at this run's ``reading_toward`` tenth."""
    reading = reading_toward(evidence)
    if reading is None or "needed_effective_n" not in evidence:
        return Forecast(Pace.UNKNOWN)
    tenth, have = reading
    earlier = None if before is None else _at_or_above(before, tenth)
    return certification_forecast(
        have=have,
        need=evidence["needed_effective_n"],
        have_before=None if earlier is None or earlier[0] != tenth else earlier[1],
        days_between=days_between,
        audits_per_day=audits_per_day,
    )
