"""The Python client (client/, gatehouse_client) against a live Gatehouse: submitting,
replays and conflicts, validation errors, batches, retries through failing transports, and
waiting for a reviewer."""

from __future__ import annotations

import uuid

import httpx
import pytest
from gatehouse_client import (
    ApiError,
    ConflictError,
    DecisionTimeout,
    GatehouseClient,
    GatehouseUnavailable,
    PollPolicy,
    RetryPolicy,
    Submission,
    Validator,
)
from gatehouse_client import client as client_module

from gating.models import Output

pytestmark = [pytest.mark.serial, pytest.mark.slow]

FAST_RETRY = RetryPolicy(max_attempts=4, base_delay=0.01, max_delay=0.05, max_elapsed=5)
FAST_POLL = PollPolicy(first_interval=0.05, max_interval=0.2)


class Flaky(httpx.BaseTransport):
    """A real transport to the live server behind scripted failures: each entry of
    ``failures`` is used for one request, in order, then requests pass."""

    def __init__(self, failures: list):
        self.real = httpx.HTTPTransport()
        self.failures = list(failures)
        self.sent: list[str] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.sent.append(f"{request.method} {request.url.path}")
        failure = self.failures.pop(0) if self.failures else None
        if failure == "connect":
            raise httpx.ConnectError("refused", request=request)
        if failure == "lost":
            # The server stores the output, and its answer is lost on the way back.
            self.real.handle_request(request).read()
            raise httpx.ReadTimeout("timed out", request=request)
        if isinstance(failure, httpx.Response):
            return failure
        return self.real.handle_request(request)


def client_for(gatehouse, **options) -> GatehouseClient:
    options.setdefault("retry", FAST_RETRY)
    options.setdefault("poll", FAST_POLL)
    return GatehouseClient(gatehouse.base_url, gatehouse.gateway_token, **options)


def stored(external_id: str) -> int:
    return Output.objects.filter(external_id=external_id).count()


def test_an_output_that_passes_every_validator_is_approved(gatehouse):
    with client_for(gatehouse) as client:
        result = client.submit(gatehouse.body("approve", external_id="ok-1"))

    row = Output.objects.get(external_id="ok-1")
    assert (result.id, result.decision, result.status) == (row.pk, "approved", "approved")
    assert result.score == pytest.approx(9.75)
    assert result.final_output == row.output_text
    assert result.thresholds.approve == row.approve_threshold


def test_a_typed_submission_without_external_id_gets_a_uuid4(gatehouse):
    submission = Submission(
        task_type="client-warn",
        model="model-a",
        input="Summarise the report.",
        output="Revenue grew.",
        validators=[Validator("facts", True), Validator("schema", False, "missing field")],
        input_clarity=0.8,
        coherence=0.9,
    )
    with client_for(gatehouse) as client:
        result = client.submit(submission)

    assert uuid.UUID(result.external_id).version == 4
    assert result.decision == "warning"
    assert result.score == pytest.approx(8 * 0.5 + 0.4 + 1.35)


def test_a_replay_answers_the_stored_output(gatehouse):
    body = gatehouse.body("approve", external_id="replayed")
    with client_for(gatehouse) as client:
        first, again = client.submit(body), client.submit(body)

    assert again == first
    assert stored("replayed") == 1


def test_the_same_external_id_with_another_body_is_a_conflict(gatehouse):
    with client_for(gatehouse) as client:
        client.submit(gatehouse.body("approve", external_id="taken"))
        with pytest.raises(ConflictError) as raised:
            client.submit(gatehouse.body("approve", external_id="taken", output="Other text."))

    assert raised.value.status == 409
    assert raised.value.detail


def test_a_bad_field_is_a_400_naming_it(gatehouse):
    with client_for(gatehouse) as client, pytest.raises(ApiError) as raised:
        client.submit(gatehouse.body("approve", input_clarity=2.0))

    assert raised.value.status == 400
    assert list(raised.value.field_errors) == ["input_clarity"]


def test_an_unknown_field_is_refused_by_name(gatehouse):
    with client_for(gatehouse) as client, pytest.raises(ApiError) as raised:
        client.submit({**gatehouse.body("approve"), "colour": "blue"})

    assert raised.value.status == 400
    assert "colour" in raised.value.field_errors


def test_a_batch_answers_in_order(gatehouse):
    bodies = [gatehouse.body(kind) for kind in ("approve", "warn", "hold")]
    with client_for(gatehouse) as client:
        result = client.submit_batch(bodies)

    assert [o.external_id for o in result.outputs] == [b["external_id"] for b in bodies]
    assert [o.decision for o in result.outputs] == ["approved", "warning", "pending_review"]
    assert [o.is_held for o in result.outputs] == [False, False, True]


def test_a_batch_names_its_bad_item_and_stores_nothing(gatehouse):
    bodies = [gatehouse.body("approve"), gatehouse.body("approve", coherence=-1)]
    with client_for(gatehouse) as client, pytest.raises(ApiError) as raised:
        client.submit_batch(bodies)

    assert raised.value.status == 400
    assert list(raised.value.field_errors) == ["outputs.1.coherence"]
    assert stored(bodies[0]["external_id"]) == 0


def test_a_batch_over_the_servers_limit_is_refused_before_sending(gatehouse):
    flaky = Flaky([])
    with client_for(gatehouse, transport=flaky) as client, pytest.raises(ValueError):
        client.submit_batch([gatehouse.body("approve") for _ in range(1001)])

    assert flaky.sent == []


def test_network_errors_and_5xx_are_retried_and_store_once(gatehouse):
    body = gatehouse.body("approve", external_id="retried")
    flaky = Flaky(["connect", httpx.Response(503), "lost", httpx.Response(502)])
    five = RetryPolicy(max_attempts=5, base_delay=0.01, max_delay=0.05)
    with client_for(gatehouse, transport=flaky, retry=five) as client:
        result = client.submit(body)

    assert len(flaky.sent) == 5
    assert result.external_id == "retried"
    assert stored("retried") == 1


def test_a_lost_answer_is_retried_with_the_same_generated_external_id(gatehouse):
    body = gatehouse.body("approve")
    del body["external_id"]
    flaky = Flaky(["lost"])
    with client_for(gatehouse, transport=flaky) as client:
        result = client.submit(body)

    assert len(flaky.sent) == 2
    assert stored(result.external_id) == 1


def test_retry_after_is_honoured(gatehouse, monkeypatch):
    waits: list[float] = []
    monkeypatch.setattr(client_module.time, "sleep", waits.append)
    too_many = httpx.Response(429, headers={"Retry-After": "3"}, json={"detail": "Slow down."})
    with client_for(gatehouse, transport=Flaky([too_many])) as client:
        client.submit(gatehouse.body("approve"))

    assert waits == [3.0]


def test_retries_stop_after_the_policys_attempts(gatehouse):
    flaky = Flaky([httpx.Response(503)] * 10)
    with client_for(gatehouse, transport=flaky) as client, pytest.raises(GatehouseUnavailable):
        client.submit(gatehouse.body("approve"))

    assert len(flaky.sent) == FAST_RETRY.max_attempts


def test_a_retry_after_past_the_time_budget_gives_up_at_once(gatehouse):
    flaky = Flaky([httpx.Response(503, headers={"Retry-After": "3600"})])
    with client_for(gatehouse, transport=flaky) as client, pytest.raises(GatehouseUnavailable):
        client.submit(gatehouse.body("approve"))

    assert len(flaky.sent) == 1


def test_a_bad_token_is_not_retried(gatehouse):
    flaky = Flaky([])
    client = GatehouseClient(gatehouse.base_url, "wrong", retry=FAST_RETRY, transport=flaky)
    with client, pytest.raises(ApiError) as raised:
        client.submit(gatehouse.body("approve"))

    assert raised.value.status == 401
    assert len(flaky.sent) == 1


def test_an_unreachable_server_is_unavailable():
    with socket_closed_port() as url:
        client = GatehouseClient(url, "token", retry=FAST_RETRY)
        with client, pytest.raises(GatehouseUnavailable) as raised:
            client.submit({"external_id": "x"})

    assert isinstance(raised.value.__cause__, httpx.ConnectError)


# --------------------------------------------------------------------------- waiting


def test_waiting_returns_the_reviewers_modification(gatehouse):
    flaky = Flaky([])
    with client_for(gatehouse, transport=flaky) as client:
        held = client.submit(gatehouse.body("hold"))
        reviewer = gatehouse.review_later(0.5, "modify", output="The reviewer's text.")
        decided = client.wait_for_decision(held, timeout=20)
        reviewer.join()

    assert (decided.id, decided.status) == (held.id, "modified")
    assert decided.text_to_deliver(held.final_output or "") == "The reviewer's text."
    polls = [s for s in flaky.sent if s.endswith("/status/")]
    assert len(polls) >= 2


def test_waiting_returns_an_approval(gatehouse):
    with client_for(gatehouse) as client:
        held = client.submit(gatehouse.body("hold", output="As sent."))
        reviewer = gatehouse.review_later(0.3, "approve")
        decided = client.wait_for_decision(held.id, timeout=20)
        reviewer.join()

    assert decided.status == "approved"
    assert decided.text_to_deliver("As sent.") == "As sent."


def test_unchanged_polls_are_304s(gatehouse):
    statuses: list[int] = []
    hooks = {"response": [lambda response: statuses.append(response.status_code)]}
    with client_for(gatehouse) as client:
        held = client.submit(gatehouse.body("hold"))
        client._http.event_hooks = hooks
        with pytest.raises(DecisionTimeout):
            client.wait_for_decision(held, timeout=0.6)

    assert statuses[0] == 200
    assert set(statuses[1:]) == {304}


def test_waiting_times_out_with_the_last_status(gatehouse):
    with client_for(gatehouse) as client:
        held = client.submit(gatehouse.body("hold"))
        with pytest.raises(DecisionTimeout) as raised:
            client.wait_for_decision(held, timeout=0.3)

    assert raised.value.last_status.status == "pending"
    assert raised.value.output_id == held.id


def test_an_output_not_held_needs_no_wait(gatehouse):
    flaky = Flaky([])
    with client_for(gatehouse, transport=flaky) as client:
        approved = client.submit(gatehouse.body("approve"))
        decided = client.wait_for_decision(approved, timeout=0)

    assert decided.status == "approved"
    assert flaky.sent == ["POST /api/v1/outputs/"]


def test_waiting_on_another_gateways_output_is_404(gatehouse):
    with client_for(gatehouse) as client, pytest.raises(ApiError) as raised:
        client.wait_for_decision(999_999, timeout=5)

    assert raised.value.status == 404


def test_waiting_rides_over_server_errors(gatehouse):
    flaky = Flaky([])
    with client_for(gatehouse, transport=flaky) as client:
        held = client.submit(gatehouse.body("hold"))
        flaky.failures = [httpx.Response(503), "connect", httpx.Response(500)]
        reviewer = gatehouse.review_later(0.3, "reject", reason="factual_error")
        decided = client.wait_for_decision(held, timeout=20)
        reviewer.join()

    assert decided.status == "rejected"
    assert decided.text_to_deliver("anything") is None


class socket_closed_port:
    """A URL on a local port that nothing listens on."""

    def __enter__(self) -> str:
        import socket

        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        return f"http://127.0.0.1:{port}"

    def __exit__(self, *exc_info) -> None:
        pass
