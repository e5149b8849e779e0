"""Domain errors to HTTP responses, in one place."""

from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from gating.exceptions import FieldInvalid, GatehouseError, IdempotencyConflict, ReviewConflict

_STATUS_BY_ERROR: dict[type[GatehouseError], int] = {
    IdempotencyConflict: status.HTTP_409_CONFLICT,
    ReviewConflict: status.HTTP_409_CONFLICT,
}


def exception_handler(exc, context):
    if isinstance(exc, GatehouseError):
        body = {"detail": str(exc)}
        if isinstance(exc, FieldInvalid):
            body = {exc.field: [str(exc)]}
        if isinstance(exc, IdempotencyConflict) and exc.indexes:
            body["indexes"] = exc.indexes
        return Response(body, status=_STATUS_BY_ERROR.get(type(exc), status.HTTP_400_BAD_REQUEST))
    return drf_exception_handler(exc, context)
