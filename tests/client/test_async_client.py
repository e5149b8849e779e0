"""AsyncGatehouseClient against a live Gatehouse: the same calls as the blocking client,
awaited (each test runs its own event loop)."""

from __future__ import annotations

import asyncio

import httpx
import pytest
from gatehouse_client import (
    ApiError,
    AsyncGatehouseClient,
    DecisionTimeout,
    GatehouseUnavailable,
    PollPolicy,
    RetryPolicy,
)

from gating.models import Output

pytestmark = [pytest.mark.serial, pytest.mark.slow]

FAST_RETRY = RetryPolicy(max_attempts=3, base_delay=0.01, max_delay=0.05, max_elapsed=5)
FAST_POLL = PollPolicy(first_interval=0.05, max_interval=0.2)


class FlakyAsync(httpx.AsyncBaseTransport):
    """The live server behind scripted failures, one per request, then passing."""

    def __init__(self, failures: list):
        self.real = httpx.AsyncHTTPTransport()
        self.failures = list(failures)
        self.sent = 0

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.sent += 1
        failure = self.failures.pop(0) if self.failures else None
        if failure == "connect":
            raise httpx.ConnectError("refused", request=request)
        if isinstance(failure, httpx.Response):
            return failure
        return await self.real.handle_async_request(request)


def client_for(gatehouse, **options) -> AsyncGatehouseClient:
    return AsyncGatehouseClient(
        gatehouse.base_url, gatehouse.gateway_token, retry=FAST_RETRY, poll=FAST_POLL, **options
    )


def test_submit_and_batch(gatehouse):
    async def run():
        async with client_for(gatehouse) as client:
            one = await client.submit(gatehouse.body("approve"))
            batch = await client.submit_batch([gatehouse.body("warn"), gatehouse.body("hold")])
            again = await client.get_output(one.id)
        return one, batch, again

    one, batch, again = asyncio.run(run())

    assert one.decision == "approved"
    assert [o.decision for o in batch.outputs] == ["warning", "pending_review"]
    assert again == one
    assert Output.objects.count() == 3


def test_failures_are_retried_and_store_once(gatehouse):
    body = gatehouse.body("approve", external_id="async-retried")
    flaky = FlakyAsync(["connect", httpx.Response(503)])

    async def run():
        async with client_for(gatehouse, transport=flaky) as client:
            return await client.submit(body)

    assert asyncio.run(run()).external_id == "async-retried"
    assert flaky.sent == 3
    assert Output.objects.filter(external_id="async-retried").count() == 1


def test_retries_run_out(gatehouse):
    flaky = FlakyAsync([httpx.Response(500)] * 5)

    async def run():
        async with client_for(gatehouse, transport=flaky) as client:
            await client.submit(gatehouse.body("approve"))

    with pytest.raises(GatehouseUnavailable):
        asyncio.run(run())
    assert flaky.sent == FAST_RETRY.max_attempts


def test_a_bad_field_is_named(gatehouse):
    async def run():
        async with client_for(gatehouse) as client:
            await client.submit(gatehouse.body("approve", model=""))

    with pytest.raises(ApiError) as raised:
        asyncio.run(run())
    assert (raised.value.status, list(raised.value.field_errors)) == (400, ["model"])


def test_waiting_for_a_reviewer(gatehouse):
    async def run():
        async with client_for(gatehouse) as client:
            held = await client.submit(gatehouse.body("hold"))
            reviewer = gatehouse.review_later(0.3, "modify", output="Edited.")
            decided = await client.wait_for_decision(held, timeout=20)
            reviewer.join()
            return decided

    decided = asyncio.run(run())

    assert (decided.status, decided.modified_output) == ("modified", "Edited.")


def test_waiting_times_out(gatehouse):
    async def run():
        async with client_for(gatehouse) as client:
            held = await client.submit(gatehouse.body("hold"))
            await client.wait_for_decision(held, timeout=0.3)

    with pytest.raises(DecisionTimeout):
        asyncio.run(run())
