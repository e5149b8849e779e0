"""The client's pure parts: backoff bounds, Retry-After, when to stop, and error bodies."""

import random
from datetime import UTC, datetime

import pytest
from gatehouse_client import ConflictError, PollPolicy, RetryPolicy
from gatehouse_client._http import next_wait
from gatehouse_client.errors import api_error
from gatehouse_client.models import submission_body
from gatehouse_client.retry import retry_after_seconds


@pytest.mark.parametrize(("attempt", "cap"), [(1, 0.25), (2, 0.5), (3, 1.0), (6, 8.0), (40, 8.0)])
def test_backoff_is_full_jitter_under_the_capped_exponential(attempt, cap):
    policy = RetryPolicy(base_delay=0.25, max_delay=8.0)
    rng = random.Random(7)

    delays = [policy.delay(attempt, rng) for _ in range(2000)]

    assert all(0 <= d <= cap for d in delays)
    # Full jitter spreads over the whole range, not near its top only.
    assert min(delays) < cap * 0.05 and max(delays) > cap * 0.95


@pytest.mark.parametrize(("poll", "cap"), [(1, 1.0), (2, 2.0), (5, 16.0), (6, 30.0), (50, 30.0)])
def test_poll_intervals_grow_to_their_ceiling_between_half_and_all(poll, cap):
    rng = random.Random(3)

    intervals = [PollPolicy().interval(poll, rng) for _ in range(2000)]

    assert all(cap / 2 <= i <= cap for i in intervals)


def test_retry_after_reads_seconds_and_http_dates():
    now = datetime(2026, 12, 6, 13, 0, 0, tzinfo=UTC)

    assert retry_after_seconds("7") == 7.0
    assert retry_after_seconds("Sun, 06 Dec 2026 13:00:30 GMT", now=now) == 30.0
    assert retry_after_seconds("Sun, 06 Dec 2026 12:59:00 GMT", now=now) == 0.0
    assert retry_after_seconds("soon") is None
    assert retry_after_seconds(None) is None


def test_retries_stop_at_the_attempts_or_the_time_budget():
    policy = RetryPolicy(max_attempts=3, base_delay=1.0, max_delay=1.0, max_elapsed=10)

    assert next_wait(policy, 1, elapsed=0, retry_after=2.0) == 2.0
    assert next_wait(policy, 3, elapsed=0, retry_after=None) is None
    assert next_wait(policy, 1, elapsed=9.5, retry_after=1.0) is None


def test_a_field_error_body_is_flattened_by_field():
    error = api_error(400, {"outputs": {"2": {"coherence": ["Too big."]}}, "x": ["Unknown."]})

    assert error.field_errors == {"outputs.2.coherence": ["Too big."], "x": ["Unknown."]}
    assert error.detail == "outputs.2.coherence: Too big.; x: Unknown."


def test_a_batch_conflict_names_its_items():
    error = api_error(409, {"detail": "Reused external_ids.", "indexes": [0, 4]})

    assert isinstance(error, ConflictError)
    assert (error.status, error.detail, error.indexes) == (409, "Reused external_ids.", [0, 4])


def test_an_external_id_is_kept_or_made_once():
    assert submission_body({"external_id": "mine"})["external_id"] == "mine"
    made = submission_body({})["external_id"]
    assert len(made) == 36 and made != submission_body({})["external_id"]
