"""The dashboard's filter bar: the query string read into a filter, and a filter written back
as a query string, so that every view of the dashboard is a link that can be shared.

Pure: the known task type and model names come in as arguments, and ``now`` may too.

Parameters (all optional; an empty value counts as absent, as a form sends its empty fields):

* ``range``: a preset, one of ``24h``, ``7d``, ``30d``, ``90d``, which ends now; or
  ``custom``, which reads ``since`` and ``until``. With no ``range``, ``since`` or ``until``
  alone make a custom range, and with none of the three the range is the last 7 days.
  A preset with ``since`` or ``until`` beside it is refused, naming ``range``: one of the two
  would have to be ignored, and a shared link would say one range and show another (the
  filter bar's form disables its time inputs while a preset is picked, so it sends one).
* ``since``, ``until``: ISO 8601 times, converted to UTC; a time with no offset is UTC, a date
  alone is its midnight. The filter bar's inputs, labelled UTC, send "YYYY-MM-DD HH:MM"
  (INPUT_FORMAT), which ISO 8601 reads with a space for the "T". Each is
  written with its year from FIRST_YEAR to LAST_YEAR (TIME_PATTERN). The range is
  [since, until): ``until`` must be later than ``since``. A missing ``until`` is now; a
  missing ``since`` is 7 days before ``until``.
* ``task_type``, ``model``: repeated for several; none means all. Each must be known, and
  is held to the ingest's rule for identifiers (no spaces at its ends, no control
  characters): a name no output can have is refused as such, not trimmed into another.

No parameter may hold a NUL character: PostgreSQL's text cannot, so a query with one could
only fail.

Other parameters (a page number, say) are not the filter's and are left alone; pages read
their own text and whole numbers with ``parameter_text`` and ``parameter_whole``, which
refuse what the filter refuses in the same words.
"""

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from urllib.parse import urlencode

from gating.exceptions import FieldInvalid
from gating.submissions import identifier_problem

PRESETS: dict[str, tuple[timedelta, str]] = {
    "24h": (timedelta(hours=24), "Last 24 hours"),
    "7d": (timedelta(days=7), "Last 7 days"),
    "30d": (timedelta(days=30), "Last 30 days"),
    "90d": (timedelta(days=90), "Last 90 days"),
}
DEFAULT_PRESET = "7d"
CUSTOM = "custom"
# How the filter bar shows and takes a UTC time: 24-hour whatever the browser's locale, which
# a datetime-local input would follow (12-hour in en-US). INPUT_PATTERN is the input's
# pattern attribute; the parser reads any ISO 8601 time, this one included.
INPUT_FORMAT = "%Y-%m-%d %H:%M"
INPUT_PATTERN = r"[0-9]{4}-[0-9]{2}-[0-9]{2}[T ][0-9]{2}:[0-9]{2}"
# The years a filter's time may be written in. Nothing Gatehouse keeps is older than the
# first, and both leave room for any offset and for the windows pages take around a range
# (the PSI's baseline week before since, the last day before until, the day a range's start
# rounds up to), so that no arithmetic on a filter's times leaves the years a datetime holds.
# The rule is on the year as written, so that a pattern can state it: the API's schema
# publishes TIME_PATTERN, and the same pattern is the check.
FIRST_YEAR, LAST_YEAR = 2000, 9998
TIME_PATTERN = r"^(?:[2-8][0-9]{3}|9[0-8][0-9]{2}|99[0-8][0-9]|999[0-8])-"
_TIME_YEAR = re.compile(TIME_PATTERN, re.ASCII)
# Long enough for any name Gatehouse stores, short enough to quote in a message.
_QUOTED_LENGTH = 100
# ASCII digits only: str.isdigit() also takes "²", which int() refuses, and other scripts'
# digits, which int() reads.
_DIGITS = re.compile(r"[0-9]+", re.ASCII)
# The largest id or count a PostgreSQL bigint column holds.
_BIGINT_MAX = 2**63 - 1


class FilterInvalid(FieldInvalid):
    """A filter parameter that cannot be read; ``field`` names it. Pages answer 400 with the
    message, the API a 400 with ``{field: [message]}`` (gating.api.errors)."""


@dataclass(frozen=True)
class DashboardFilter:
    """What the dashboard shows: outputs created in [since, until) (UTC), of these task types
    and models (empty: all). ``preset`` is the preset the range came from, None if custom."""

    since: datetime
    until: datetime
    preset: str | None = None
    task_types: tuple[str, ...] = ()
    models: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        """The range in words, for a page's heading."""
        if self.preset is not None:
            return PRESETS[self.preset][1]
        return f"{self.since:%Y-%m-%d %H:%M} to {self.until:%Y-%m-%d %H:%M} UTC"

    @property
    def since_input(self) -> str:
        """since as the filter bar's input shows it (INPUT_FORMAT, UTC)."""
        return self.since.astimezone(UTC).strftime(INPUT_FORMAT)

    @property
    def until_input(self) -> str:
        """until as the filter bar's input shows it (INPUT_FORMAT, UTC)."""
        return self.until.astimezone(UTC).strftime(INPUT_FORMAT)

    @property
    def input_pattern(self) -> str:
        """The pattern attribute of the filter bar's time inputs."""
        return INPUT_PATTERN

    @property
    def preset_choices(self) -> list[tuple[str, str]]:
        """(value, label) of each preset, for the filter bar."""
        return [(value, label) for value, (_, label) in PRESETS.items()]


def filter_parse(
    query: Mapping,
    *,
    task_types: Iterable[str],
    models: Iterable[str],
    now: datetime | None = None,
) -> DashboardFilter:
    """Read a query string (a QueryDict, or a dict of strings or lists of strings) into a
    filter, against the known task type and model names. Raises FilterInvalid naming the
    parameter for an unknown preset, a preset given with times, an unknown task type or
    model, a time it cannot read, or a range that ends before it starts."""
    now = (now or datetime.now(UTC)).astimezone(UTC)
    preset = _one(query, "range")
    since_text, until_text = _one(query, "since"), _one(query, "until")
    if preset is None and since_text is None and until_text is None:
        preset = DEFAULT_PRESET

    if preset is not None and preset != CUSTOM:
        if preset not in PRESETS:
            choices = ", ".join([*PRESETS, CUSTOM])
            raise FilterInvalid("range", f"Unknown range {_quote(preset)}: use one of {choices}.")
        if since_text is not None or until_text is not None:
            given = " and ".join(n for n, t in (("since", since_text), ("until", until_text)) if t)
            raise FilterInvalid(
                "range",
                f"range={preset} is a preset ending now, so it cannot be given with {given}: "
                f"drop {given}, or use range={CUSTOM} for your own times.",
            )
        since, until = now - PRESETS[preset][0], now
    else:
        preset = None
        since = _time(since_text, "since") if since_text is not None else None
        until = _time(until_text, "until") if until_text is not None else now
        if since is None:
            since = until - PRESETS[DEFAULT_PRESET][0]
        if until <= since:
            raise FilterInvalid(
                "until",
                f"until ({_iso(until)}) must be later than since ({_iso(since)}).",
            )

    return DashboardFilter(
        since=since,
        until=until,
        preset=preset,
        task_types=_known(_values(query, "task_type"), set(task_types), "task_type", "task type"),
        models=_known(_values(query, "model"), set(models), "model", "model"),
    )


def filter_query(dashboard_filter: DashboardFilter) -> str:
    """The query string (without "?") that filter_parse reads back into the same filter: a
    preset by its name, so that a shared link keeps ending now; a custom range by its UTC
    times."""
    pairs: list[tuple[str, str]] = []
    if dashboard_filter.preset is not None:
        pairs.append(("range", dashboard_filter.preset))
    else:
        pairs += [
            ("range", CUSTOM),
            ("since", _iso(dashboard_filter.since)),
            ("until", _iso(dashboard_filter.until)),
        ]
    pairs += [("task_type", name) for name in dashboard_filter.task_types]
    pairs += [("model", name) for name in dashboard_filter.models]
    return urlencode(pairs)


def parameter_text(query: Mapping, name: str) -> str:
    """A page's own text parameter: its last value, stripped; "" when absent or empty.
    Raises FilterInvalid naming it for a NUL character."""
    return (_one(query, name) or "").strip()


def parameter_whole(query: Mapping, name: str, message: str) -> int | None:
    """A page's own whole-number parameter (an id, say): ASCII digits, at most a bigint;
    None when absent or empty. Raises FilterInvalid naming it, with ``message``, otherwise."""
    text = (_one(query, name) or "").strip()
    if not text:
        return None
    if not _DIGITS.fullmatch(text) or int(text) > _BIGINT_MAX:
        raise FilterInvalid(name, message)
    return int(text)


def _values(query: Mapping, name: str) -> list[str]:
    if hasattr(query, "getlist"):
        values = query.getlist(name)
    else:
        value = query.get(name)
        values = [] if value is None else [value] if isinstance(value, str) else list(value)
    if any("\x00" in value for value in values):
        raise FilterInvalid(name, f"{name} cannot hold a NUL character.")
    # Empty is absent, as a form sends its empty fields; anything else is read as written.
    return [value for value in values if value]


def _one(query: Mapping, name: str) -> str | None:
    # As QueryDict.get: the last value given wins.
    values = _values(query, name)
    return values[-1] if values else None


def _time(text: str, name: str) -> datetime:
    if not _TIME_YEAR.match(text):
        raise FilterInvalid(
            name,
            f"{name} is not a time from {FIRST_YEAR} to {LAST_YEAR}: {_quote(text)}. "
            "Use ISO 8601, e.g. 2025-05-01T09:30Z.",
        )
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise FilterInvalid(
            name, f"{name} is not a time: {_quote(text)}. Use ISO 8601, e.g. 2025-05-01T09:30Z."
        ) from None
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def _known(names: list[str], known: set[str], name: str, what: str) -> tuple[str, ...]:
    for value in names:
        if problem := identifier_problem(value):
            raise FilterInvalid(name, f"{name} {problem}: {_quote(value)}.")
        if value not in known:
            raise FilterInvalid(name, f"Unknown {what} {_quote(value)}.")
    return tuple(sorted(set(names)))


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


def _quote(text: str) -> str:
    if len(text) > _QUOTED_LENGTH:
        text = text[:_QUOTED_LENGTH] + "…"
    return f'"{text}"'
