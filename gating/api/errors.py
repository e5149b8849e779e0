"""Domain errors to HTTP responses, in one place."""

from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from gating.exceptions import (
    FieldInvalid,
    GatehouseError,
    IdempotencyConflict,
    ReviewConflict,
    TaskTypeRefused,
)

_STATUS_BY_ERROR: dict[type[GatehouseError], int] = {
    IdempotencyConflict: status.HTTP_409_CONFLICT,
    ReviewConflict: status.HTTP_409_CONFLICT,
}


def exception_handler(exc, context):
    if isinstance(exc, GatehouseError):
        return Response(
            _body(exc), status=_STATUS_BY_ERROR.get(type(exc), status.HTTP_400_BAD_REQUEST)
        )
    return drf_exception_handler(exc, context)


def _body(exc: GatehouseError) -> dict:
    if isinstance(exc, FieldInvalid):
        return {exc.field: [str(exc)]}
    if isinstance(exc, TaskTypeRefused):
        if exc.items is None:
            return {"task_type": list(exc.reasons.values())}
        # As a batch's other bad items: each under its index.
        return {"outputs": {str(i): {"task_type": [why]} for i, why in exc.items.items()}}
    if isinstance(exc, IdempotencyConflict) and exc.indexes:
        return {"detail": str(exc), "indexes": exc.indexes}
    return {"detail": str(exc)}
