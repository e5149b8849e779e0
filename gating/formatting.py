"""Values as people read them: one set of formatters for the pages, the alerts, their emails
and the charts' labels, so that a duration, a count, a share or a moment reads the same
wherever it appears; and stored JSON as it is shown on the review page, the output's page
and the admin.

Pure functions of plain values. The charts format on the server so that every page and the
CSV link's readers see the same words, and so that durations, which plotly.js cannot
format, read like the rest.
"""

import json
import math
from collections.abc import Sequence
from datetime import UTC, datetime

_MINUTE = 60
_HOUR = 60 * _MINUTE
_DAY = 24 * _HOUR


def percent(share: float) -> str:
    """A share in [0, 1] as a percentage: whole percents from 10 % to 90 %, one decimal
    below and above, so that a rare rejection or a near-total approval does not read as
    "0%" or "100%": 0.12345 → "12%", 0.0123 → "1.2%", 0.995 → "99.5%", 0.95 → "95%".
    What would still round to 0 % or 100 % reads "<0.1%" or ">99.9%".
    """
    if math.isnan(share):
        return "–"
    value = share * 100
    if share <= 0 or share >= 1 or 10 <= value <= 90:
        return f"{value:.0f}%"
    shown = f"{value:.1f}"
    if shown == "0.0":
        return "<0.1%"
    if shown == "100.0":
        return ">99.9%"
    return f"{shown.removesuffix('.0')}%"


def number(value: float) -> str:
    """A measure (a score, a kappa, a PSI) with two significant decimals: two decimal places
    from 1 up, and two significant digits below 1, so that small values keep their size:
    7.254 → "7.25", 0.12345 → "0.12", 0.012345 → "0.012", 0 → "0".
    """
    if math.isnan(value):
        return "–"
    if value == 0:
        return "0"
    size = abs(value)
    if size >= 1:
        return f"{value:,.2f}"
    places = max(2, 1 - math.floor(math.log10(size)))
    shown = f"{value:.{places}f}"
    # 0.0996 rounds to 0.100 with three places: one digit fewer says the same.
    if abs(float(shown)) >= 0.1 and places > 2:
        shown = f"{value:.{places - 1}f}"
    return shown


def numbers_alike(values: Sequence[float]) -> list[str]:
    """Values of one measure, side by side, written to the same decimal places: as many as
    the largest needs for two significant digits (number's rule). What is smaller than the
    last place reads 0, as it tells nothing beside the others: a validator's importance of
    -0.0000000000000033 (a sum that is 0 but for floating point) beside 0.2 reads "0.00".
    [0.2, 0.001] → ["0.20", "0.00"]; [0.012, 0.0004] → ["0.012", "0.000"]."""
    sizes = [abs(v) for v in values if math.isfinite(v) and v != 0]
    if not sizes:
        return [number(v) for v in values]
    places = max(2, 1 - math.floor(math.log10(max(sizes))))
    shown = []
    for value in values:
        if math.isnan(value):
            shown.append("–")
            continue
        written = f"{value:,.{places}f}"
        # No "-0.00": a value rounded to nothing has no sign.
        shown.append(written.lstrip("-") if set(written) <= set("-0.,") else written)
    return shown


def count(n: int) -> str:
    """A count with thousands separated: 12345 → "12,345"."""
    return f"{n:,}"


def duration(seconds: float) -> str:
    """A duration in its two largest units, rounded in the smaller one:
    45 → "45 s", 90 → "1 min 30 s", 11520 → "3 h 12 min", 183600 → "2 d 3 h".
    """
    if seconds < 0 or math.isnan(seconds):
        raise ValueError(f"A duration is a number of seconds from 0 up, not {seconds!r}.")
    whole_seconds = round(seconds)
    if whole_seconds < _MINUTE:
        return f"{whole_seconds} s"
    if whole_seconds < _HOUR:
        return _two_units(*divmod(whole_seconds, _MINUTE), "min", "s")
    minutes = round(seconds / _MINUTE)
    if minutes < _DAY // _MINUTE:
        return _two_units(*divmod(minutes, 60), "h", "min")
    hours = round(seconds / _HOUR)
    return _two_units(*divmod(hours, 24), "d", "h")


def _two_units(large: int, small: int, large_unit: str, small_unit: str) -> str:
    if small == 0:
        return f"{large} {large_unit}"
    return f"{large} {large_unit} {small} {small_unit}"


def duration_unit(longest_seconds: float) -> tuple[int, str]:
    """The unit in which to draw durations up to ``longest_seconds`` on an axis, as
    (seconds per unit, its name): seconds up to 2 minutes, minutes up to 2 hours, hours up
    to 2 days, then days."""
    if longest_seconds <= 2 * _MINUTE:
        return 1, "s"
    if longest_seconds <= 2 * _HOUR:
        return _MINUTE, "min"
    if longest_seconds <= 2 * _DAY:
        return _HOUR, "h"
    return _DAY, "d"


def utc_time(moment: datetime) -> str:
    """A moment in UTC, to the minute, on a 24-hour clock: "2026-11-28 14:05 UTC"."""
    return f"{moment.astimezone(UTC):%Y-%m-%d %H:%M} UTC"


def waited(since: datetime, now: datetime) -> str:
    """How long from ``since`` to ``now``, as a duration (nothing less than 0)."""
    return duration(max(0.0, (now - since).total_seconds()))


def pretty_json(value) -> str:
    """Indented, keys sorted, non-ASCII kept as written. The text is not escaped here: it can
    hold model outputs, so every page escapes it where it is put into HTML."""
    return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True)


# What a spreadsheet would run as a formula at the start of a cell (OWASP's CSV injection).
CSV_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(value) -> str:
    """A value as a CSV cell that a spreadsheet shows and never runs: null empty, a boolean
    true or false, a list or object as its JSON, and text starting with a formula character
    after a ' (OWASP's CSV injection advice). The CSV downloads (metrics, datasets) all
    write their cells through this."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict | list):
        return json.dumps(value, separators=(",", ":"))
    if isinstance(value, str) and value.startswith(CSV_FORMULA_STARTS):
        return "'" + value
    return str(value)
