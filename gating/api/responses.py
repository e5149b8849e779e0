"""The API's answers: one pydantic model per shape, built by the views, dumped by
ModelJSONRenderer and published by drf-spectacular in the OpenAPI schema.

The schema and the answers come from these definitions alone, so they cannot drift: an
answer that does not fit its model fails when it is built, in the tests before anywhere.
Building validates (about 5 µs an output more than a hand-built dict), and the renderer
dumps in compiled code, which wins that back over the json module: a batch of 1,000
outputs is built and rendered in about the time it took before.

The gate's stored JSON rows (impacts, validator results) are TypedDicts: they pass
through as the dicts they are, checked but not turned into objects. Error bodies are
DRF's and gating.api.errors'; their models here are for the schema, and the schema test
checks real ones against them.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal, NotRequired, get_args

import pydantic
import pydantic_core
from pydantic import BaseModel, ConfigDict, Field, RootModel, StringConstraints
from rest_framework.renderers import JSONRenderer
from typing_extensions import TypedDict

from gating import rubrics
from gating.models import Comment, Output, Review, ReviewItem, Rubric
from gating.scorers.interval import WIDE_INTERVAL, is_wide
from gating.scoring import Decision, Guarantee

# ---------------------------------------------------------------------------- the base


class ResponseModel(BaseModel):
    # Lax on input: values come from the database as it stores them (a status as text),
    # and become the declared types (Output.Status) that the schema names.
    model_config = ConfigDict(extra="forbid", frozen=True)


class ModelJSONRenderer(JSONRenderer):
    """DRF's JSON renderer, dumping a ResponseModel with pydantic."""

    def render(self, data, accepted_media_type=None, renderer_context=None):
        if not isinstance(data, BaseModel):
            return super().render(data, accepted_media_type, renderer_context)
        # As DRF does: U+2028 and U+2029 are valid in JSON but end a line in JavaScript.
        return (
            pydantic_core.to_json(data)
            .replace("\u2028".encode(), b"\\u2028")
            .replace("\u2029".encode(), b"\\u2029")
        )


RENDERERS = [ModelJSONRenderer]

# A batch's answer in short (CompactBatchResult), for a client that asks for it by media
# type. Asked for in the Accept header rather than in the query, so that one URL and one
# body take either answer, and a client that says nothing gets the full one.
COMPACT_MEDIA_TYPE = "application/vnd.gatehouse.compact+json"


class CompactJSONRenderer(ModelJSONRenderer):
    media_type = COMPACT_MEDIA_TYPE


BATCH_RENDERERS = [ModelJSONRenderer, CompactJSONRenderer]


class Page(ResponseModel):
    """A page of a list, with the links to the pages either side."""

    # gating.api.pagination builds it, and its schema with the list's item in results.

    next: str | None = Field(description="The next page's URL; null on the last page.")
    previous: str | None = Field(description="The previous page's URL; null on the first.")
    results: list[Any]


# ---------------------------------------------------------------------------- outputs


class Impact(TypedDict):
    factor: str
    points: float
    detail: str


class ValidatorResult(TypedDict):
    name: str
    passed: bool
    detail: str


class Thresholds(ResponseModel):
    review: float
    approve: float


class Interval(ResponseModel):
    lower: float
    upper: float
    wide: bool = Field(
        description=f"At least {WIDE_INTERVAL:g} points wide: uncertain, worth investigating."
    )


class ShadowScore(TypedDict):
    version: str
    score: float
    level: NotRequired[str]
    interval: NotRequired[list[float]]


def _interval(output: Output) -> Interval | None:
    if output.interval_lower is None or output.interval_upper is None:
        return None
    lower, upper = output.interval_lower, output.interval_upper
    return Interval(lower=round(lower, 4), upper=round(upper, 4), wide=is_wide(upper - lower))


def _output_fields(output: Output) -> dict[str, Any]:
    return {
        "id": output.pk,
        "external_id": output.external_id,
        "task_type": output.task_type.name,
        "model": output.model,
        "tier": output.tier,
        "score": round(output.score, 4),
        "base_score": round(output.base_score, 4),
        "decision": output.decision,
        "approve_guarantee": output.approve_guarantee,
        "status": output.status,
        "final_output": output.final_output_text,
        "reasons": output.reasons,
        "impacts": output.impacts,
        "thresholds": Thresholds(
            review=round(output.review_threshold, 4), approve=round(output.approve_threshold, 4)
        ),
        "scorer": output.scorer,
        "interval": _interval(output),
        "shadow_scores": output.shadow_scores,
        "created_at": output.created_at,
        "decided_at": output.decided_at,
        "trace_id": output.trace_id or None,
    }


TRACE_ID_PATTERN = r"^[0-9a-f]{32}$"


class OutputResult(ResponseModel):
    """What the gate answers for one output, and what GET returns for it later."""

    id: int
    external_id: str
    task_type: str
    model: str
    tier: str
    score: float
    base_score: float
    decision: Decision = Field(description="The gate's decision when the output came in.")
    approve_guarantee: Guarantee = Field(
        description="What stood behind the approve threshold then: `certified` when the "
        "latest thresholds cycle bounded the error of what it approves (docs/learning.md), "
        "`none` otherwise. With `none`, an approval rests on the threshold's value alone."
    )
    status: Output.Status = Field(description="Final once not pending.")
    final_output: str | None = Field(description="The text to deliver; null until decided.")
    reasons: list[str]
    impacts: list[Impact]
    thresholds: Thresholds
    scorer: str = Field(description="The scorer that decided, with its version.")
    interval: Interval | None = Field(
        description="The confidence interval on 0-10, where the interval scorer had "
        "provenance to read (as the deciding scorer or in shadow)."
    )
    shadow_scores: dict[str, ShadowScore] = Field(
        description="What every other scorer with its inputs in the payload made of the "
        "output, by scorer name; they do not decide (docs/scoring.md)."
    )
    created_at: datetime
    decided_at: datetime | None = Field(description="When the status became final.")
    trace_id: Annotated[str, StringConstraints(pattern=TRACE_ID_PATTERN)] | None = Field(
        description="The W3C trace id of the request that stored the output: the one its "
        "traceparent header named, or the gate's own when it exports traces; null when "
        "there was none. A replay answers with the first request's."
    )

    @classmethod
    def of(cls, output: Output) -> OutputResult:
        return cls(**_output_fields(output))


class BatchResult(ResponseModel):
    outputs: list[OutputResult] = Field(description="In the order of the batch's items.")


class CompactOutputResult(ResponseModel):
    """An output in a compact answer: enough to deliver or hold it; GET
    /api/v1/outputs/{id}/ gives the rest."""

    id: int
    external_id: str
    task_type: str
    decision: Decision

    @classmethod
    def of(cls, output: Output) -> CompactOutputResult:
        return cls(
            id=output.pk,
            external_id=output.external_id,
            task_type=output.task_type.name,
            decision=output.decision,
        )


class CompactBatchResult(ResponseModel):
    """A batch's answer with ``Accept: application/vnd.gatehouse.compact+json``: each
    output's id and decision only, about a twentieth of the full answer's bytes, and
    cheaper to build."""

    outputs: list[CompactOutputResult] = Field(description="In the order of the batch's items.")


class OutputForReview(OutputResult):
    """Everything a reviewer needs to judge an output: the gate's view plus the texts."""

    input: str
    output: str
    validators: list[ValidatorResult]
    input_clarity: float
    coherence: float
    requires_fact_check: bool
    evidence: Any
    provenance: Any
    metadata: dict[str, Any]

    @classmethod
    def of(cls, output: Output) -> OutputForReview:
        return cls(
            **_output_fields(output),
            input=output.input_text,
            output=output.output_text,
            validators=output.validator_results,
            input_clarity=output.input_clarity,
            coherence=output.coherence,
            requires_fact_check=output.requires_fact_check,
            evidence=output.evidence,
            provenance=output.provenance,
            metadata=output.metadata,
        )


# ---------------------------------------------------------------------------- the queue


class ReviewResult(ResponseModel):
    id: int
    item: int
    kind: ReviewItem.Kind
    reviewer: str
    action: Review.Action
    output: str | None = Field(description="The modified text; null unless modified.")
    style_only: bool = Field(
        description="A modification of taste: the output was fine. False unless modified."
    )
    reason: str
    note: str
    is_bulk: bool
    decided_at: datetime
    rubric_version: int | None = Field(
        description="The version of the task type's rubric the scores are for; null where "
        "the task type had no rubric, and for bulk decisions."
    )
    scores: dict[str, float | str | bool] = Field(
        description="The rubric's scores by dimension name; optional dimensions left "
        "unscored are absent."
    )

    @classmethod
    def of(cls, review: Review) -> ReviewResult:
        return cls(
            id=review.pk,
            item=review.item_id,
            kind=review.item.kind,
            reviewer=review.reviewer.username,
            action=review.action,
            output=review.edited_output,
            style_only=review.style_only,
            reason=review.reason,
            note=review.note,
            is_bulk=review.is_bulk,
            decided_at=review.decided_at,
            **rubrics.review_scores(review),
        )


def _entry_fields(item: ReviewItem, now: datetime) -> dict[str, Any]:
    return {
        "id": item.pk,
        "kind": item.kind,
        "output_id": item.output_id,
        "task_type": item.task_type.name,
        "model": item.model,
        "score": round(item.score, 4),
        "queued_at": item.queued_at,
        "age_seconds": round((now - item.queued_at).total_seconds(), 1),
        "turn_at": item.turn_at,
        "claimed_by": item.claimed_by.username if item.claimed_by_id else None,
        "lease_expires_at": item.lease_expires_at,
    }


class QueueEntry(ResponseModel):
    """A queue row: enough to pick and filter, without the texts."""

    id: int
    kind: ReviewItem.Kind
    output_id: int
    task_type: str
    model: str
    score: float
    queued_at: datetime
    age_seconds: float
    turn_at: datetime | None = Field(
        description="Its place in line: when its output first entered the queue. A second "
        "review or an adjudication keeps the first round's. Items are listed and claimed in "
        "this order (audits first while a reviewer is short of the audit share). Null only "
        "on items decided before turns were kept."
    )
    claimed_by: str | None
    lease_expires_at: datetime | None

    @classmethod
    def of(cls, item: ReviewItem, *, now: datetime) -> QueueEntry:
        return cls(**_entry_fields(item, now))


class ClaimedItem(QueueEntry):
    """A claimed item as the review page and the API show it."""

    is_audit: bool
    state: ReviewItem.State
    output: OutputForReview
    prior_reviews: list[ReviewResult] = Field(
        description="The disagreeing decisions; only ever given for an adjudication."
    )

    @classmethod
    def of(cls, item: ReviewItem, *, now: datetime, prior_reviews=()) -> ClaimedItem:
        return cls(
            **_entry_fields(item, now),
            is_audit=item.is_audit,
            state=item.state,
            output=OutputForReview.of(item.output),
            prior_reviews=[ReviewResult.of(r) for r in prior_reviews],
        )


class QueueSummary(ResponseModel):
    size: int
    oldest_queued_at: datetime | None
    oldest_age_seconds: float | None


class Lease(ResponseModel):
    id: int
    lease_expires_at: datetime


class BulkDecisionResult(ResponseModel):
    outputs: int = Field(description="Held outputs decided (with dry_run: that would be).")
    dry_run: bool


class Ping(ResponseModel):
    ok: bool


# ---------------------------------------------------------------------------- comments


class CommentAnswer(ResponseModel):
    id: int
    output: int
    author: str = Field(description="The author's username.")
    text: str = Field(description="Plain text as written, stripped: never HTML or Markdown.")
    created_at: datetime

    @classmethod
    def of(cls, comment: Comment) -> CommentAnswer:
        return cls(
            id=comment.pk,
            output=comment.output_id,
            author=comment.author.username,
            text=comment.text,
            created_at=comment.created_at,
        )


class CommentThread(RootModel[list[CommentAnswer]]):
    """An output's comments, oldest first."""


DimensionKind = Literal["numeric", "categorical", "boolean"]
assert set(get_args(DimensionKind)) == set(rubrics.Kind)


class RubricDimension(TypedDict):
    """A score dimension: numeric (a number from minimum to maximum), categorical (one of
    its choices) or boolean."""

    name: str
    label: str
    # Spelled out rather than rubrics.Kind: an enum is published under its class name, and
    # ReviewItem.Kind has that name already (the schema would give both one component).
    kind: DimensionKind
    required: bool
    help: str
    minimum: NotRequired[float]
    maximum: NotRequired[float]
    choices: NotRequired[list[str]]


class RubricAnswer(ResponseModel):
    task_type: str
    version: int
    instructions: str = Field(description="Markdown, as written.")
    instructions_html: str = Field(
        description="The instructions rendered without raw HTML and sanitised: safe to show."
    )
    dimensions: list[RubricDimension]
    created_by: str | None = Field(description="The admin who saved this version.")
    created_at: datetime

    @classmethod
    def of(cls, rubric: Rubric) -> RubricAnswer:
        return cls(
            task_type=rubric.task_type.name,
            version=rubric.version,
            instructions=rubric.instructions,
            instructions_html=rubrics.instructions_html(rubric.instructions),
            dimensions=rubric.dimensions,
            created_by=rubric.created_by.username if rubric.created_by else None,
            created_at=rubric.created_at,
        )


class RubricVersions(RootModel[list[RubricAnswer]]):
    """Every version of a task type's rubric, newest first."""


# ---------------------------------------------------------------------------- errors


class Detail(ResponseModel):
    """An error in words: 401, 403, 404, 409, 413, 415, and a 400 that no one field caused."""

    detail: str


class FieldErrors(RootModel[dict[str, list[str]]]):
    """A 400 naming each bad field (or query parameter) with its messages;
    ``non_field_errors`` for what no one field caused."""


class BadRequest(RootModel[FieldErrors | Detail]):
    """A 400: each bad field named, or the request's fault in words (malformed JSON)."""


class ItemErrors(RootModel[dict[str, dict[str, list[str]]]]):
    """A batch's bad items, each under its index, with its bad fields."""


class BatchErrors(RootModel[dict[str, list[str] | ItemErrors]]):
    """A 400 for a batch: ``outputs`` holds the bad items by index; other keys name bad
    fields of the batch itself."""


class BatchConflict(ResponseModel):
    """A 409 for a batch: the items that reuse an external_id with a different body."""

    detail: str
    indexes: list[int] = Field(default_factory=list)


def json_schema(model: type[BaseModel]) -> dict:
    """A model's JSON schema with its definitions referenced as OpenAPI components."""
    return pydantic.TypeAdapter(model).json_schema(
        ref_template="#/components/schemas/{model}", mode="serialization"
    )
