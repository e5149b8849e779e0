"""The sync and async clients. They share everything but the waiting (gatehouse_client._http);
each method reads top to bottom the same in both."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable, Mapping
from typing import Any

import httpx

from gatehouse_client import _http
from gatehouse_client.errors import DecisionTimeout, GatehouseUnavailable
from gatehouse_client.models import (
    BatchResult,
    OutputResult,
    OutputStatus,
    Submission,
    submission_body,
)
from gatehouse_client.retry import PollPolicy, RetryPolicy

SubmissionLike = Submission | Mapping[str, Any]
OutputRef = OutputResult | int


def _already_final(output: OutputRef) -> OutputStatus | None:
    """The answer without asking, for an output the gate did not hold."""
    if isinstance(output, OutputResult) and not output.is_held:
        return OutputStatus(
            id=output.id,
            decision=output.decision,
            status=output.status,
            modified_output=output.final_output if output.status == "modified" else None,
            decided_at=output.decided_at,
        )
    return None


def _output_id(output: OutputRef) -> int:
    return output.id if isinstance(output, OutputResult) else int(output)


class GatehouseClient:
    """Gatehouse over HTTP, blocking (httpx.Client).

    ``GatehouseClient("https://gatehouse.example.com", api_token)``; use it as a context
    manager, or call ``close()``. ``transport`` is passed to httpx (a test's MockTransport,
    or a proxy's).
    """

    def __init__(
        self,
        base_url: str,
        api_token: str,
        *,
        timeout: float = 10.0,
        retry: RetryPolicy | None = None,
        poll: PollPolicy | None = None,
        transport: httpx.BaseTransport | None = None,
    ):
        self.retry = retry or RetryPolicy()
        self.poll = poll or PollPolicy()
        self._http = httpx.Client(
            base_url=base_url.rstrip("/"),
            headers=_http.headers(api_token),
            timeout=timeout,
            transport=transport,
        )

    def __enter__(self) -> GatehouseClient:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    def submit(self, submission: SubmissionLike) -> OutputResult:
        """Send one output to the gate; its decision comes back at once."""
        response = self._send("POST", _http.OUTPUTS, json=submission_body(submission))
        return OutputResult.from_json(response.json())

    def submit_batch(self, submissions: Iterable[SubmissionLike]) -> BatchResult:
        """Send up to 1,000 outputs at once: all are stored, or none (the error says why)."""
        body = _http.batch_body([submission_body(s) for s in submissions])
        return BatchResult.from_json(self._send("POST", _http.BATCH, json=body).json())

    def get_output(self, output_id: int) -> OutputResult:
        return OutputResult.from_json(self._send("GET", _http.output_path(output_id)).json())

    def wait_for_decision(self, output: OutputRef, timeout: float) -> OutputStatus:
        """Poll the output's status until a reviewer decides, for up to ``timeout`` seconds;
        raise DecisionTimeout if none did. Polls back off (PollPolicy) and send the last
        ETag, so an unchanged answer is a bodiless 304."""
        if (final := _already_final(output)) is not None:
            return final
        output_id = _output_id(output)
        deadline = time.monotonic() + timeout
        poll = _http.StatusPoll(output_id)
        while True:
            try:
                response = self._http.get(poll.path, headers=poll.headers())
            except httpx.TransportError:
                response = None
            if (final := poll.read(response)) is not None:
                return final
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise DecisionTimeout(output_id, timeout, poll.last)
            time.sleep(min(poll.next_wait(self.poll), remaining))

    def _send(self, method: str, path: str, **kwargs) -> httpx.Response:
        """One request, retried on network errors, 5xx and 429 by the retry policy."""
        started = time.monotonic()
        attempt = 0
        while True:
            attempt += 1
            response: httpx.Response | None = None
            try:
                response = self._http.request(method, path, **kwargs)
                if not _http.is_transient(response):
                    _http.raise_for_error(response)
                    return response
                failure: Exception = _http.error_of(response)
            except httpx.TransportError as exc:
                failure = exc
            wait = _http.next_wait(
                self.retry, attempt, time.monotonic() - started, _http.retry_after(response)
            )
            if wait is None:
                raise GatehouseUnavailable(
                    f"{method} {path} failed after {attempt} attempts: {failure}"
                ) from failure
            time.sleep(wait)


class AsyncGatehouseClient:
    """Gatehouse over HTTP, for asyncio (httpx.AsyncClient); the same methods as
    GatehouseClient, awaited."""

    def __init__(
        self,
        base_url: str,
        api_token: str,
        *,
        timeout: float = 10.0,
        retry: RetryPolicy | None = None,
        poll: PollPolicy | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ):
        self.retry = retry or RetryPolicy()
        self.poll = poll or PollPolicy()
        self._http = httpx.AsyncClient(
            base_url=base_url.rstrip("/"),
            headers=_http.headers(api_token),
            timeout=timeout,
            transport=transport,
        )

    async def __aenter__(self) -> AsyncGatehouseClient:
        return self

    async def __aexit__(self, *exc_info) -> None:
        await self.close()

    async def close(self) -> None:
        await self._http.aclose()

    async def submit(self, submission: SubmissionLike) -> OutputResult:
        response = await self._send("POST", _http.OUTPUTS, json=submission_body(submission))
        return OutputResult.from_json(response.json())

    async def submit_batch(self, submissions: Iterable[SubmissionLike]) -> BatchResult:
        body = _http.batch_body([submission_body(s) for s in submissions])
        return BatchResult.from_json((await self._send("POST", _http.BATCH, json=body)).json())

    async def get_output(self, output_id: int) -> OutputResult:
        response = await self._send("GET", _http.output_path(output_id))
        return OutputResult.from_json(response.json())

    async def wait_for_decision(self, output: OutputRef, timeout: float) -> OutputStatus:
        if (final := _already_final(output)) is not None:
            return final
        output_id = _output_id(output)
        deadline = time.monotonic() + timeout
        poll = _http.StatusPoll(output_id)
        while True:
            try:
                response = await self._http.get(poll.path, headers=poll.headers())
            except httpx.TransportError:
                response = None
            if (final := poll.read(response)) is not None:
                return final
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise DecisionTimeout(output_id, timeout, poll.last)
            await asyncio.sleep(min(poll.next_wait(self.poll), remaining))

    async def _send(self, method: str, path: str, **kwargs) -> httpx.Response:
        started = time.monotonic()
        attempt = 0
        while True:
            attempt += 1
            response: httpx.Response | None = None
            try:
                response = await self._http.request(method, path, **kwargs)
                if not _http.is_transient(response):
                    _http.raise_for_error(response)
                    return response
                failure: Exception = _http.error_of(response)
            except httpx.TransportError as exc:
                failure = exc
            wait = _http.next_wait(
                self.retry, attempt, time.monotonic() - started, _http.retry_after(response)
            )
            if wait is None:
                raise GatehouseUnavailable(
                    f"{method} {path} failed after {attempt} attempts: {failure}"
                ) from failure
            await asyncio.sleep(wait)
