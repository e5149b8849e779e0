"""What the sync and async clients share: headers, reading answers, deciding to retry."""

from __future__ import annotations

import json
from typing import Any

import httpx

from gatehouse_client.errors import ApiError, api_error
from gatehouse_client.models import MAX_BATCH_OUTPUTS, OutputStatus
from gatehouse_client.retry import RETRY_STATUSES, PollPolicy, RetryPolicy, retry_after_seconds

USER_AGENT = "gatehouse-client/0.1"
OUTPUTS = "/api/v1/outputs/"
BATCH = "/api/v1/outputs/batch/"


def output_path(output_id: int) -> str:
    return f"/api/v1/outputs/{int(output_id)}/"


def status_path(output_id: int) -> str:
    return f"/api/v1/outputs/{int(output_id)}/status/"


def headers(api_token: str) -> dict[str, str]:
    return {
        "Authorization": f"Bearer {api_token}",
        "Accept": "application/json",
        "User-Agent": USER_AGENT,
    }


def body_of(response: httpx.Response) -> Any:
    try:
        return response.json()
    except (json.JSONDecodeError, UnicodeDecodeError):
        return response.text


def is_transient(response: httpx.Response) -> bool:
    return response.status_code in RETRY_STATUSES


def error_of(response: httpx.Response) -> ApiError:
    return api_error(response.status_code, body_of(response))


def raise_for_error(response: httpx.Response) -> None:
    if response.status_code >= 400:
        raise error_of(response)


def retry_after(response: httpx.Response | None) -> float | None:
    return None if response is None else retry_after_seconds(response.headers.get("Retry-After"))


def next_wait(
    policy: RetryPolicy, attempt: int, elapsed: float, retry_after: float | None, rng=None
) -> float | None:
    """Seconds to wait before another attempt after failed ``attempt``, or None to stop:
    the attempts are spent, or waiting would pass the policy's total time."""
    if attempt >= policy.max_attempts:
        return None
    wait = retry_after if retry_after is not None else policy.delay(attempt, rng)
    if elapsed + wait > policy.max_elapsed:
        return None
    return wait


def batch_body(bodies: list[dict[str, Any]]) -> dict[str, Any]:
    if not 1 <= len(bodies) <= MAX_BATCH_OUTPUTS:
        raise ValueError(f"A batch holds 1 to {MAX_BATCH_OUTPUTS} outputs, not {len(bodies)}.")
    return {"outputs": bodies}


class StatusPoll:
    """One wait for a decision, between polls of the output's status: the last answer and
    its ETag (sent back in If-None-Match, so that an unchanged answer is a bodiless 304),
    and how long to wait before the next poll."""

    def __init__(self, output_id: int):
        self.path = status_path(output_id)
        self.polls = 0
        self.etag: str | None = None
        self.last: OutputStatus | None = None
        self._retry_after: float | None = None

    def headers(self) -> dict[str, str]:
        return {"If-None-Match": self.etag} if self.etag else {}

    def read(self, response: httpx.Response | None) -> OutputStatus | None:
        """The final status once a reviewer has decided, else None. ``response`` is None
        after a network error; a 5xx or 429 is waited out like one, any other error raised."""
        self.polls += 1
        self._retry_after = None
        if response is not None and response.status_code in (200, 304):
            if response.status_code == 200:
                self.last = OutputStatus.from_json(response.json())
                self.etag = response.headers.get("ETag")
            return self.last if self.last is not None and self.last.is_final else None
        if response is not None and not is_transient(response):
            raise error_of(response)
        self._retry_after = retry_after(response)
        return None

    def next_wait(self, policy: PollPolicy) -> float:
        """Seconds before the next poll: what a Retry-After asked, else the policy's."""
        return policy.interval(self.polls) if self._retry_after is None else self._retry_after
