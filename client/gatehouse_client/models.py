"""What the client sends and what Gatehouse answers, as dataclasses.

The answers mirror the server's OpenAPI schema (OutputResult, BatchResult, OutputStatus).
Fields the server adds later are ignored rather than refused, so that an older client keeps
working against a newer server; a field it needs and does not find is an error.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

Decision = Literal["approved", "warning", "pending_review"]
Status = Literal["pending", "approved", "modified", "rejected"]
Guarantee = Literal["certified", "estimated", "none"]

MAX_BATCH_OUTPUTS = 1000


# ---------------------------------------------------------------------------- requests


@dataclass(frozen=True)
class Validator:
    """One validator's result, as the gateway ran it."""

    name: str
    passed: bool
    detail: str = ""


@dataclass(frozen=True)
class Submission:
    """One output for the gate. Without an external_id the client gives it a random one
    before the first attempt, so that every retry of the request is the same request and
    the server answers a repeat with the answer it stored."""

    task_type: str
    model: str
    input: str
    output: str
    validators: list[Validator]
    input_clarity: float
    coherence: float
    external_id: str | None = None
    tier: str = ""
    requires_fact_check: bool = False
    evidence: Any = None
    provenance: Any = None
    metadata: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        body = dataclasses.asdict(self)
        # Left out when absent: the server refuses null for these.
        for optional in ("evidence", "provenance"):
            if body[optional] is None:
                del body[optional]
        return body


def submission_body(submission: Submission | Mapping[str, Any]) -> dict[str, Any]:
    """The JSON body for one output, with an external_id (a new uuid4 when it has none)."""
    body = submission.to_json() if isinstance(submission, Submission) else dict(submission)
    if not body.get("external_id"):
        body["external_id"] = str(uuid.uuid4())
    return body


# ---------------------------------------------------------------------------- answers


def _datetime(value: str | None) -> datetime | None:
    return None if value is None else datetime.fromisoformat(value)


@dataclass(frozen=True)
class Thresholds:
    review: float
    approve: float


@dataclass(frozen=True)
class Interval:
    lower: float
    upper: float
    wide: bool


@dataclass(frozen=True)
class Impact:
    factor: str
    points: float
    detail: str


@dataclass(frozen=True)
class OutputResult:
    """The gate's answer for one output (and what GET /api/v1/outputs/<id>/ returns)."""

    id: int
    external_id: str
    task_type: str
    model: str
    tier: str
    score: float
    base_score: float
    decision: Decision
    approve_guarantee: Guarantee
    status: Status
    final_output: str | None
    reasons: list[str]
    impacts: list[Impact]
    thresholds: Thresholds
    scorer: str
    interval: Interval | None
    shadow_scores: dict[str, dict[str, Any]]
    created_at: datetime
    decided_at: datetime | None

    @property
    def is_held(self) -> bool:
        """Held for a reviewer, who has not decided yet."""
        return self.status == "pending"

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> OutputResult:
        interval = body["interval"]
        return cls(
            id=body["id"],
            external_id=body["external_id"],
            task_type=body["task_type"],
            model=body["model"],
            tier=body["tier"],
            score=body["score"],
            base_score=body["base_score"],
            decision=body["decision"],
            approve_guarantee=body["approve_guarantee"],
            status=body["status"],
            final_output=body["final_output"],
            reasons=list(body["reasons"]),
            impacts=[Impact(i["factor"], i["points"], i["detail"]) for i in body["impacts"]],
            thresholds=Thresholds(body["thresholds"]["review"], body["thresholds"]["approve"]),
            scorer=body["scorer"],
            interval=None
            if interval is None
            else Interval(interval["lower"], interval["upper"], interval["wide"]),
            shadow_scores=dict(body["shadow_scores"]),
            created_at=_datetime(body["created_at"]),
            decided_at=_datetime(body["decided_at"]),
        )


@dataclass(frozen=True)
class BatchResult:
    outputs: list[OutputResult]

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> BatchResult:
        return cls(outputs=[OutputResult.from_json(o) for o in body["outputs"]])


@dataclass(frozen=True)
class OutputStatus:
    """Where an output stands (GET /api/v1/outputs/<id>/status/)."""

    id: int
    decision: Decision
    status: Status
    modified_output: str | None
    decided_at: datetime | None

    @property
    def is_final(self) -> bool:
        return self.status != "pending"

    def text_to_deliver(self, original: str) -> str | None:
        """The text to send on: the original when approved, the reviewer's when modified,
        None when rejected or still pending."""
        if self.status == "approved":
            return original
        if self.status == "modified":
            return self.modified_output
        return None

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> OutputStatus:
        return cls(
            id=body["id"],
            decision=body["decision"],
            status=body["status"],
            modified_output=body["modified_output"],
            decided_at=_datetime(body["decided_at"]),
        )
