"""When to try again, and how long to wait: pure functions, shared by both clients.

Retries are safe because every submission carries an external_id: the server answers a
repeat of a stored request with the stored answer (200), never a second output.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

# 429 asks us to slow down; 5xx may be a restart or an overload that passes.
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})


@dataclass(frozen=True)
class RetryPolicy:
    """Exponential backoff with full jitter (a random wait between 0 and the capped
    exponential), within a number of attempts and a total time. Full jitter spreads the
    retries of many clients that failed together, so that they do not return together."""

    max_attempts: int = 5
    base_delay: float = 0.25
    max_delay: float = 8.0
    max_elapsed: float = 30.0

    def delay(self, attempt: int, rng: random.Random | None = None) -> float:
        """Seconds to wait after failed attempt ``attempt`` (1 for the first)."""
        cap = min(self.max_delay, self.base_delay * 2.0 ** min(attempt - 1, 32))
        return (rng or random).uniform(0.0, cap)


@dataclass(frozen=True)
class PollPolicy:
    """How often a waiting client asks for a decision: from ``first_interval``, doubling up
    to ``max_interval``, each wait drawn between half and all of it. Reviews take minutes,
    so the interval grows quickly; the jitter keeps many waiting clients from polling in
    step."""

    first_interval: float = 1.0
    max_interval: float = 30.0

    def interval(self, poll: int, rng: random.Random | None = None) -> float:
        """Seconds to wait after poll ``poll`` (1 for the first)."""
        cap = min(self.max_interval, self.first_interval * 2.0 ** min(poll - 1, 32))
        return (rng or random).uniform(cap / 2, cap)


def retry_after_seconds(value: str | None, now: datetime | None = None) -> float | None:
    """Retry-After as seconds to wait (RFC 9110: delay-seconds or an HTTP-date), or None
    when absent or unreadable."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())
