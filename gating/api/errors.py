"""Domain errors to HTTP responses, in one place."""

from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from gating.api.responses import CompactJSONRenderer, ModelJSONRenderer
from gating.exceptions import (
    FieldInvalid,
    GatehouseError,
    IdempotencyConflict,
    NotFound,
    StateConflict,
    TaskTypeRefused,
)

# By the nearest class in an error's ancestry; any other GatehouseError is a 400.
_STATUS_BY_ERROR: dict[type[GatehouseError], int] = {
    NotFound: status.HTTP_404_NOT_FOUND,
    IdempotencyConflict: status.HTTP_409_CONFLICT,
    StateConflict: status.HTTP_409_CONFLICT,
}


def status_for(exc: GatehouseError) -> int:
    """The HTTP status of a domain error, for the API and the pages alike."""
    for cls in type(exc).__mro__:
        if cls in _STATUS_BY_ERROR:
            return _STATUS_BY_ERROR[cls]
    return status.HTTP_400_BAD_REQUEST


def exception_handler(exc, context):
    _errors_in_json(context.get("request"))
    if isinstance(exc, GatehouseError):
        return Response(_body(exc), status=status_for(exc))
    return drf_exception_handler(exc, context)


def _errors_in_json(request) -> None:
    """An error to a request that asked for the compact batch answer is application/json,
    as the schema says of every error: the compact media type is the shape of a batch's
    success only. DRF renders the response with the request's accepted renderer."""
    if isinstance(getattr(request, "accepted_renderer", None), CompactJSONRenderer):
        request.accepted_renderer = ModelJSONRenderer()
        request.accepted_media_type = ModelJSONRenderer.media_type


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
