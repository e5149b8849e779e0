"""Gatehouse's Python client: submit outputs to the gate, wait for reviewers' decisions,
verify webhook signatures. The LiteLLM guardrail is gatehouse_client.litellm (the
``litellm`` extra)."""

from gatehouse_client.client import AsyncGatehouseClient, GatehouseClient
from gatehouse_client.errors import (
    ApiError,
    ConflictError,
    DecisionTimeout,
    GatehouseError,
    GatehouseUnavailable,
)
from gatehouse_client.models import (
    MAX_BATCH_OUTPUTS,
    BatchResult,
    OutputResult,
    OutputStatus,
    Submission,
    Validator,
)
from gatehouse_client.retry import PollPolicy, RetryPolicy
from gatehouse_client.webhooks import verify_signature

__all__ = [
    "MAX_BATCH_OUTPUTS",
    "ApiError",
    "AsyncGatehouseClient",
    "BatchResult",
    "ConflictError",
    "DecisionTimeout",
    "GatehouseClient",
    "GatehouseError",
    "GatehouseUnavailable",
    "OutputResult",
    "OutputStatus",
    "PollPolicy",
    "RetryPolicy",
    "Submission",
    "Validator",
    "verify_signature",
]
