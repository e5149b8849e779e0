"""Cursor pagination for the lists: a bad cursor or page size is a 400 naming it.

DRF answers a cursor it cannot decode with 404 and passes a decoded position to the
database unchecked, so a hand-made cursor could answer 500; a page size it cannot read
falls back to the default without a word.
"""

from datetime import UTC

from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import models
from django.utils.dateparse import parse_datetime
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.pagination import Cursor, CursorPagination
from rest_framework.response import Response

from gating.api.responses import Page
from gating.api.strict import refuse_empty_query_values

_BAD_CURSOR = "Invalid cursor: pass a next or previous link's cursor unchanged."


class StrictCursorPagination(CursorPagination):
    page_size_query_param = "page_size"

    def paginate_queryset(self, queryset, request, view=None):
        self.model = queryset.model
        return super().paginate_queryset(queryset, request, view)

    def get_page_size(self, request) -> int:
        raw = request.query_params.get(self.page_size_query_param)
        if raw is None:
            return self.page_size
        if not (raw.isascii() and raw.isdigit() and 1 <= int(raw) <= self.max_page_size):
            raise ValidationError(
                {
                    self.page_size_query_param: [
                        f"Must be a whole number from 1 to {self.max_page_size}."
                    ]
                }
            )
        return int(raw)

    def decode_cursor(self, request) -> Cursor | None:
        # DRF reads an empty cursor as the first page.
        refuse_empty_query_values(request.query_params, [self.cursor_query_param])
        try:
            cursor = super().decode_cursor(request)
        except NotFound:
            raise ValidationError({self.cursor_query_param: [_BAD_CURSOR]}) from None
        if cursor is None or cursor.position is None:
            return cursor
        try:
            position = self._position(cursor.position)
        except (DjangoValidationError, ValueError, OverflowError):
            raise ValidationError({self.cursor_query_param: [_BAD_CURSOR]}) from None
        return Cursor(offset=cursor.offset, reverse=cursor.reverse, position=position)

    def _position(self, raw: str):
        """The cursor's position as a value of the ordering's first field, checked as the
        database would take it."""
        field = self.model._meta.get_field(self.ordering[0].lstrip("-"))
        if isinstance(field, models.DateTimeField):
            # Positions handed out carry their offset; one without is not ours.
            moment = parse_datetime(raw)
            if moment is None or moment.tzinfo is None:
                raise ValueError(raw)
            return moment.astimezone(UTC)
        return field.clean(raw, None)

    def get_schema_operation_parameters(self, view):
        parameters = super().get_schema_operation_parameters(view)
        for parameter in parameters:
            if parameter["name"] == self.page_size_query_param:
                parameter["schema"] |= {"minimum": 1, "maximum": self.max_page_size}
        return parameters

    def get_paginated_response(self, data) -> Response:
        return Response(
            Page(next=self.get_next_link(), previous=self.get_previous_link(), results=data)
        )

    def get_paginated_response_schema(self, schema):
        # The page's own model, with the list's item: null links as OpenAPI 3.1 has them
        # (anyOf null), where DRF's schema says "nullable", which 3.1 ignores.
        envelope = Page.model_json_schema(mode="serialization")
        envelope["properties"]["results"] = schema
        return envelope


class OutputCursorPagination(StrictCursorPagination):
    ordering = "-id"
    page_size = 100
    max_page_size = 1000


class QueueCursorPagination(StrictCursorPagination):
    ordering = ("turn_at", "id")  # in turn: when each output entered the queue
    page_size = 50
    max_page_size = 500
