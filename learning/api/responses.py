"""The learning API's answers, built by the views and published in the schema from these
definitions alone (see gating.api.responses)."""

from datetime import datetime

from pydantic import Field, RootModel

from gating.api.responses import ResponseModel


class RankedModel(ResponseModel):
    model: str
    tier: str
    rank: int
    reviews: int
    accuracy: float | None
    mean_score: float | None
    confidence: float
    adjusted_score: float


class Routing(ResponseModel):
    task_type: str
    recommended_tier: str
    reason: str
    assessed_at: datetime = Field(description="The end of the tiers cycle's window.")
    models: list[RankedModel] = Field(description="Best first, by adjusted score.")


class RoutingAdvice(RootModel[list[Routing]]):
    """Per task type, from the latest tiers cycle that succeeded; empty before the first."""


class ThresholdStateAnswer(ResponseModel):
    task_type: str
    which: str = Field(description="review or approve")
    value: float = Field(description="The threshold in force.")
    state: str = Field(
        description="The latest thresholds run's finding: certified, underpowered or "
        "not_attainable; blank under ADR-0003's rule or before the first run."
    )
    guarantee: str = Field(description="What the error budget amounts to now.")
    reason: str
    at: datetime | None = Field(description="The end of the latest run's window.")
    runs_in_a_row: int = Field(description="Latest runs in a row with this state.")
    best_certifiable_error: float | None = Field(
        description="Approve threshold: the smallest error budget that could be certified."
    )
    best_certifiable_threshold: float | None = Field(
        description="Approve threshold: the threshold it would be certified at."
    )


class ThresholdStates(RootModel[list[ThresholdStateAnswer]]):
    """Per task type, each threshold's state after the latest thresholds run."""
