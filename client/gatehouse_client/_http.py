"""What the sync and async clients share: headers, reading answers, deciding to retry."""

from __future__ import annotations

import json
from typing import Any

import httpx

from gatehouse_client.errors import ApiError, api_error
from gatehouse_client.models import MAX_BATCH_OUTPUTS
from gatehouse_client.retry import RETRY_STATUSES, RetryPolicy, retry_after_seconds

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
