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
