"""The gate's domain errors. gating.api.errors maps each to its HTTP status in one place."""


class GatehouseError(Exception):
    """Base for errors a client can act on."""


class IdempotencyConflict(GatehouseError):
    """An external_id was reused with a different body."""

    def __init__(self, message: str, indexes: list[int] | None = None):
        super().__init__(message)
        self.indexes = indexes or []


class NotFound(GatehouseError):
    """The object a request names does not exist (or is not the caller's to see)."""


class StateConflict(GatehouseError):
    """The object's state no longer takes the request: someone or something got there first."""


class ReviewConflict(StateConflict):
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


class TaskTypeRefused(GatehouseError):
    """Outputs name task types their gateway may not create (its GatewaySettings)."""

    def __init__(self, reasons: dict[str, str], items: dict[int, str] | None = None):
        super().__init__(" ".join(reasons.values()))
        self.reasons = reasons
        # For a batch: why, by the index of each item naming a refused task type.
        self.items = items

    def at_items(self, task_types: list[str]) -> "TaskTypeRefused":
        """The same refusal, naming the items of a batch whose task types are ``task_types``."""
        items = {i: self.reasons[name] for i, name in enumerate(task_types) if name in self.reasons}
        return TaskTypeRefused(self.reasons, items)
