"""The client's exceptions: one base, and one class per way a call can fail."""

from __future__ import annotations

from typing import Any


class GatehouseError(Exception):
    """Anything the client raises on purpose."""


class ApiError(GatehouseError):
    """Gatehouse answered with an error status.

    ``detail`` is the server's message; for a 400 that names fields, ``field_errors`` maps
    each bad field (a batch's items under ``outputs.<index>.<field>``) to its messages.
    """

    def __init__(self, status: int, detail: str, field_errors: dict[str, list[str]], body: Any):
        self.status = status
        self.detail = detail
        self.field_errors = field_errors
        self.body = body
        super().__init__(f"Gatehouse answered {status}: {detail}")


class ConflictError(ApiError):
    """409: an external_id was sent before with a different body; nothing was stored.
    ``indexes`` names a batch's conflicting items."""

    def __init__(self, status: int, detail: str, field_errors, body: Any, indexes: list[int]):
        super().__init__(status, detail, field_errors, body)
        self.indexes = indexes


class GatehouseUnavailable(GatehouseError):
    """Gatehouse could not be reached, or kept failing (network errors, 5xx, 429), until
    the retry policy's attempts or time ran out. The last failure is the ``__cause__``."""


class DecisionTimeout(GatehouseError):
    """No reviewer decided within the time given. ``last_status`` is the last answer seen
    (None if none came)."""

    def __init__(self, output_id: int, timeout: float, last_status=None):
        self.output_id = output_id
        self.timeout = timeout
        self.last_status = last_status
        super().__init__(f"Output {output_id} was still undecided after {timeout:g} s.")


def _flatten(errors: Any, prefix: str = "") -> dict[str, list[str]]:
    if isinstance(errors, list):
        return {prefix or "non_field_errors": [str(e) for e in errors]}
    if isinstance(errors, dict):
        flat: dict[str, list[str]] = {}
        for key, value in errors.items():
            flat.update(_flatten(value, f"{prefix}.{key}" if prefix else str(key)))
        return flat
    return {prefix or "non_field_errors": [str(errors)]}


def api_error(status: int, body: Any) -> ApiError:
    """The exception for an error answer, from its status and (parsed JSON or text) body."""
    field_errors: dict[str, list[str]] = {}
    if isinstance(body, dict) and isinstance(body.get("detail"), str):
        detail = body["detail"]
    elif isinstance(body, dict | list) and body:
        field_errors = _flatten(body)
        detail = "; ".join(f"{name}: {' '.join(msgs)}" for name, msgs in field_errors.items())
    else:
        detail = str(body) if body else "no detail given"
    if status == 409:
        indexes = body.get("indexes", []) if isinstance(body, dict) else []
        return ConflictError(status, detail, field_errors, body, list(indexes))
    return ApiError(status, detail, field_errors, body)
