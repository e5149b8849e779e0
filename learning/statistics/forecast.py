"""When the approve threshold could be certified, at today's pace and today's estimates:
pure arithmetic.

The search certifies a candidate once its bound, widened for the label model, is within
both budgets (``certify.certify_approve_threshold``). Each run records, for the candidate
that certification is heading for (``Certification.toward``: where the label model's
estimates pass with their margin, or before any does the one with the most data), the
effective sample at which that bound would pass with the estimates and mix of weights it
has today (``ThresholdEvidence.needed_to_pass``). The forecast reads how fast that
candidate gained effective outputs between two thresholds runs, and extends the line:

    days = (need to pass - have) / gain per day

Why that need: the one a clean record needs (``Certification.needed_effective_n``) is met
long before a bound on an estimate near its budget passes. Forecast from it, of the 22 task
types dated within the month at a team's scale, 2 were certified in it (docs/learning.md).
Why that candidate: the one with the most data scores far below any threshold that could be
certified (5 to 8 in the simulated world), and its estimates are over budget.

It is a straight line through two points, no more, at today's estimates: where they move,
the need moves with them. Effective outputs grow about in proportion to the audits reviewed
while the lookback window fills; once it is full, what leaves the window takes away what
comes in, the gain falls towards zero, and the forecast says that today's pace will not get
there. Doubling the audits reviewed a day doubles the gain and halves the days, so the
reviews a day that would halve the forecast are twice today's audits.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum


class Pace(StrEnum):
    READY = "ready"  # the data is there: the bound passes at today's estimates
    # The data is there at today's estimates, yet the run's bound, widened for the label
    # model's uncertainty, did not pass: more data of the same kind is not what it waits on.
    WIDENED = "widened"
    ON_PACE = "on_pace"  # ``days`` to the need at today's pace
    OVER_BUDGET = "over_budget"  # an estimate is over its budget: no amount of such data passes
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
        if self.pace is Pace.WIDENED:
            return (
                "data enough at today's estimates, but the bound, widened for the "
                "uncertainty of the reviewers' labels, does not pass yet"
            )
        if self.pace is Pace.OVER_BUDGET:
            return "not until the estimates are within budget"
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
    certified: bool = False,
) -> Forecast:
    """From the effective outputs now (``have``) and ``days_between`` days earlier
    (``have_before``; None if there was no run then), the need (infinite: no amount of data
    like today's passes), the audits reviewed a day lately, and whether the run certified:
    with the need met at today's estimates and no certification, the widening of the bound
    is what holds it back (Pace.WIDENED), not the data."""
    for name, value in (("have", have), ("audits_per_day", audits_per_day)):
        if not (math.isfinite(value) and value >= 0):
            raise ValueError(f"{name} must be a finite number at least 0, not {value!r}")
    if not need >= 0:
        raise ValueError(f"need must be a number at least 0, not {need!r}")
    if math.isinf(need):
        return Forecast(Pace.OVER_BUDGET)
    if have >= need:
        return Forecast(Pace.READY if certified else Pace.WIDENED, days=0.0)
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


def need_toward(evidence: Mapping) -> float | None:
    """The effective sample the ``toward`` candidate needs for its bound to pass at today's
    estimates; infinite where no amount would (recorded as None). Runs recorded before
    2026-12-07 kept only what a clean record needs, and are read by that. None where the run
    recorded no candidates (ADR-0003's rule)."""
    if "needed_effective_n" not in evidence:
        return None
    toward = evidence.get("toward") or {}
    if "needed_to_pass" not in toward:
        return evidence["needed_effective_n"]
    need = toward["needed_to_pass"]
    return math.inf if need is None else need


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
    certified: bool = False,
) -> Forecast:
    """The forecast of a run's evidence against an earlier run's (``before``, None with
    none), both read at this run's ``reading_toward`` tenth; ``certified``: the run
    certified its approve threshold."""
    reading, need = reading_toward(evidence), need_toward(evidence)
    if reading is None or need is None:
        return Forecast(Pace.UNKNOWN)
    tenth, have = reading
    earlier = None if before is None else _at_or_above(before, tenth)
    return certification_forecast(
        have=have,
        need=need,
        have_before=None if earlier is None or earlier[0] != tenth else earlier[1],
        days_between=days_between,
        audits_per_day=audits_per_day,
        certified=certified,
    )
