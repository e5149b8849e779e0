"""A LiteLLM proxy guardrail that puts every response through Gatehouse's gate (the
``litellm`` extra).

After the model answers (``mode: post_call``), the guardrail submits the response with the
request's task type and validator results, and acts on the decision:

- ``approved``: the response passes;
- ``warning``: it passes, with the decision and score in its headers;
- ``pending_review``: by ``on_hold``, either blocked at once (``block``), or held up to
  ``wait_seconds`` for a reviewer (``wait``): approved, it passes; modified, the reviewer's
  text replaces the model's; rejected or undecided in time, it is blocked.

It fails closed: when Gatehouse cannot be reached or answers with an error, or the request
lacks what the gate needs, the response is blocked, never passed. A streamed response is
refused, since its chunks would reach the caller before the gate saw the whole of it.

Configured in the proxy's YAML::

    guardrails:
      - guardrail_name: gatehouse
        litellm_params:
          guardrail: gatehouse_client.litellm.GatehouseGuardrail
          mode: post_call
          default_on: true
          api_base: os.environ/GATEHOUSE_URL
          api_key: os.environ/GATEHOUSE_API_KEY
          task_type: chat           # when the request's metadata names none
          on_hold: wait             # or block
          wait_seconds: 30

Each request may carry, in ``metadata.gatehouse``: ``task_type``, ``validators`` (a list of
``{"name", "passed", "detail"}``), ``input_clarity``, ``coherence``,
``requires_fact_check``, ``tier`` and ``external_id``. Without an external_id the
request's LiteLLM call id is used, so a retried submission is the same submission.
"""

from __future__ import annotations

from typing import Any, Literal

from litellm.exceptions import GuardrailRaisedException
from litellm.integrations.custom_guardrail import CustomGuardrail
from litellm.types.utils import ModelResponse

from gatehouse_client.client import AsyncGatehouseClient
from gatehouse_client.errors import DecisionTimeout, GatehouseError
from gatehouse_client.models import OutputResult, OutputStatus
from gatehouse_client.retry import RetryPolicy

OnHold = Literal["block", "wait"]

DECISION_HEADER = "x-gatehouse-decision"
SCORE_HEADER = "x-gatehouse-score"
OUTPUT_HEADER = "x-gatehouse-output-id"

# Read from metadata.gatehouse, or from the guardrail's config when the request has none.
_SUBMISSION_FIELDS = (
    "task_type",
    "validators",
    "input_clarity",
    "coherence",
    "requires_fact_check",
    "tier",
)


class Blocked(GuardrailRaisedException):
    """The response does not go out; the message says why."""


class GatehouseGuardrail(CustomGuardrail):
    def __init__(
        self,
        api_base: str | None = None,
        api_key: str | None = None,
        task_type: str | None = None,
        validators: list[dict[str, Any]] | None = None,
        input_clarity: float | None = None,
        coherence: float | None = None,
        on_hold: OnHold = "block",
        wait_seconds: float = 0.0,
        gatehouse_timeout: float = 10.0,
        **kwargs: Any,
    ):
        if not api_base or not api_key:
            raise ValueError("The Gatehouse guardrail needs api_base and api_key.")
        if on_hold not in ("block", "wait"):
            raise ValueError(f"on_hold must be block or wait, not {on_hold!r}.")
        self.api_base, self.api_key = api_base, api_key
        self.defaults = {
            "task_type": task_type,
            "validators": validators or [],
            "input_clarity": input_clarity,
            "coherence": coherence,
        }
        self.on_hold = on_hold
        self.wait_seconds = float(wait_seconds)
        self.gatehouse_timeout = float(gatehouse_timeout)
        self._client: AsyncGatehouseClient | None = None
        super().__init__(**kwargs)

    def client(self) -> AsyncGatehouseClient:
        # Made on first use, inside the proxy's event loop, which an AsyncClient is bound to.
        if self._client is None:
            self._client = AsyncGatehouseClient(
                self.api_base,
                self.api_key,
                timeout=self.gatehouse_timeout,
                # A few quick tries: the caller of the proxy is waiting.
                retry=RetryPolicy(max_attempts=3, base_delay=0.2, max_delay=1.0, max_elapsed=5),
            )
        return self._client

    async def async_post_call_success_hook(self, data: dict, user_api_key_dict, response):
        if not isinstance(response, ModelResponse):
            return response
        if len(response.choices) != 1:
            # The gate judges one output: another choice would go out unjudged.
            raise self._blocked(
                f"The Gatehouse guardrail judges one choice a response, not "
                f"{len(response.choices)}: send n: 1."
            )
        try:
            submission = submission_for(data, response, self.defaults)
            result = await self.client().submit(submission)
            status = await self._final_status(result)
        except Blocked:
            raise
        except GatehouseError as exc:
            raise self._blocked(f"Gatehouse could not judge the response: {exc}", 503) from exc
        except Exception as exc:
            # Fail closed: whatever went wrong, an unjudged response does not go out.
            raise self._blocked(f"The response could not be judged: {exc}", 503) from exc
        return _delivered(response, result, status, self._blocked)

    async def async_post_call_streaming_iterator_hook(
        self, user_api_key_dict, response, request_data
    ):
        # A stream reaches the caller chunk by chunk, before the gate could judge the whole
        # response: refused rather than passed ungated.
        raise self._blocked(
            "Streamed responses cannot pass the Gatehouse guardrail: send stream: false."
        )
        yield  # an async generator, as the proxy expects of this hook

    async def _final_status(self, result: OutputResult) -> OutputStatus | None:
        """The reviewer's decision when the output is held and the guardrail waits; None
        when it is not held."""
        if not result.is_held:
            return None
        if self.on_hold == "block":
            raise self._blocked(
                f"Held for human review by Gatehouse (output {result.id}); not delivered."
            )
        try:
            return await self.client().wait_for_decision(result, timeout=self.wait_seconds)
        except DecisionTimeout as exc:
            raise self._blocked(
                f"Held for human review by Gatehouse (output {result.id}), and no reviewer "
                f"decided within {self.wait_seconds:g} s; not delivered."
            ) from exc

    def _blocked(self, message: str, status_code: int = 400) -> Blocked:
        return Blocked(
            guardrail_name=self.guardrail_name,
            message=message,
            should_wrap_with_default_message=False,
            status_code=status_code,
            blocked_content=status_code == 400,
        )


def _metadata(data: dict) -> dict[str, Any]:
    """The request's metadata.gatehouse: the proxy keeps what the caller sent under
    metadata (and, for some routes, litellm_metadata), and the caller's own copy under
    requester_metadata."""
    for key in ("metadata", "litellm_metadata"):
        bucket = data.get(key) or {}
        for candidate in (bucket, bucket.get("requester_metadata") or {}):
            if isinstance(candidate.get("gatehouse"), dict):
                return candidate["gatehouse"]
    return {}


def _conversation(messages: list[dict[str, Any]]) -> str:
    """The request's messages as a reviewer reads them, one ``role: content`` a line."""
    lines = []
    for message in messages or []:
        content = message.get("content")
        if isinstance(content, list):  # text parts of a multi-part message
            content = " ".join(p.get("text", "") for p in content if isinstance(p, dict))
        lines.append(f"{message.get('role', 'user')}: {content or ''}")
    return "\n".join(lines)


def submission_for(data: dict, response: ModelResponse, defaults: dict[str, Any]) -> dict:
    """The ingest body for a response: what metadata.gatehouse gives, else the config's."""
    given = _metadata(data)
    body = {
        field: given[field] if field in given else defaults.get(field)
        for field in _SUBMISSION_FIELDS
    }
    missing = [f for f in ("task_type", "input_clarity", "coherence") if body[f] is None]
    if missing:
        raise ValueError(
            f"no {', '.join(missing)} in metadata.gatehouse nor in the guardrail's config"
        )
    body = {k: v for k, v in body.items() if v is not None}
    call_id = data.get("litellm_call_id")
    body["external_id"] = given.get("external_id") or (f"litellm-{call_id}" if call_id else "")
    body["model"] = data.get("model") or response.model
    body["input"] = _conversation(data.get("messages", []))
    body["output"] = response.choices[0].message.content or ""
    body["metadata"] = {"source": "litellm", "litellm_call_id": call_id}
    return body


def _delivered(response: ModelResponse, result: OutputResult, status, blocked) -> ModelResponse:
    """The response as it goes out after the gate (and the reviewer, if waited for)."""
    if status is not None:
        if status.status == "rejected":
            raise blocked(f"Rejected by a Gatehouse reviewer (output {result.id}).")
        if status.status == "modified":
            response.choices[0].message.content = status.modified_output
    headers = response._hidden_params.setdefault("additional_headers", {})
    headers[DECISION_HEADER] = result.decision
    headers[SCORE_HEADER] = f"{result.score:g}"
    headers[OUTPUT_HEADER] = str(result.id)
    if status is not None:
        headers["x-gatehouse-status"] = status.status
    return response
