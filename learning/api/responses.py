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


class DatasetAnswer(ResponseModel):
    id: int
    name: str
    description: str
    filter: dict | None = Field(
        description="The saved filter (docs/datasets.md); null: hand-added outputs only."
    )
    fields: list[str] = Field(description="The row fields its versions carry.")
    hand_added: int = Field(description="How many outputs were added by hand.")
    versions: int = Field(description="How many versions (snapshots) it has.")
    created_by: str | None
    created_at: datetime

    @classmethod
    def of(cls, dataset) -> "DatasetAnswer":
        return cls(
            id=dataset.pk,
            name=dataset.name,
            description=dataset.description,
            filter=dataset.filter,
            fields=dataset.fields,
            hand_added=dataset.hand_added_count,
            versions=dataset.version_count,
            created_by=dataset.created_by.username if dataset.created_by else None,
            created_at=dataset.created_at,
        )


class Datasets(RootModel[list[DatasetAnswer]]):
    """Every dataset, by name."""


class DatasetVersionAnswer(ResponseModel):
    number: int
    row_count: int = Field(description="How many rows (outputs) the snapshot holds.")
    filter: dict | None = Field(description="The dataset's filter when the snapshot was taken.")
    fields: list[str]
    created_by: str | None
    created_at: datetime
    exports: dict[str, str] = Field(
        description="Per format (chat, eval, csv, parquet), the download's URL; the chat "
        "format only where the fields include input and corrected."
    )


class DatasetVersions(RootModel[list[DatasetVersionAnswer]]):
    """A dataset's versions, newest first."""


class OutputsAdded(ResponseModel):
    added: list[int] = Field(description="The outputs newly added (the others were in already).")
