"""The gate's domain errors. gating.api.errors maps each to its HTTP status in one place."""


class GatehouseError(Exception):
    """Base for errors a client can act on."""


class IdempotencyConflict(GatehouseError):
    """An external_id was reused with a different body."""

    def __init__(self, message: str, indexes: list[int] | None = None):
        super().__init__(message)
        self.indexes = indexes or []


class ReviewConflict(GatehouseError):
    """The review slot is decided already, or the caller does not hold its claim."""


class FieldInvalid(GatehouseError):
    """A request a service refuses for one field's value; the field is named."""

    def __init__(self, field: str, message: str):
        super().__init__(message)
        self.field = field


class DecisionInvalid(FieldInvalid):
    """A decision or bulk decision that cannot be applied as asked."""


class TaskTypeInvalid(FieldInvalid):
    """A task type edit that would break a rule of task types (review < approve)."""
