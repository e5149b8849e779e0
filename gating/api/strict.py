"""Strict request bodies for the DRF serializers, and strict query strings: the one place
that refuses what a request cannot take, instead of DRF's habit of ignoring it or coercing
it.

- A key that is not a writable field of the serializer is refused by name: unknown and
  read-only fields alike. An ignored field is a silent half-applied edit.
- In a JSON body each value must have its field's JSON type: ``"yes"`` is not a boolean,
  ``"4.15"`` is not a number, ``4.0`` is not an integer and ``1`` is not a string.
- A form body (the pages' htmx forms) is text by nature, so only its keys are checked;
  Django's CSRF field is not one of them.

The ingest endpoints do the same with pydantic's strict models (gating.submissions).

A query parameter given with an empty value (``?model=``) is refused by name, not read as
absent: an empty value is most often a client's unset variable, and taking it as no filter
would widen the answer, for a bulk decision to every held output. The schema says so
(gating.api.schema gives each text parameter a minLength of 1). The pages read their
forms, whose empty fields mean "any", and leave those out before filtering.
"""

from collections.abc import Iterable, Mapping

from django.http import QueryDict
from rest_framework import serializers

UNKNOWN_FIELD = "Unknown field."
EMPTY_VALUE = "Must not be empty: leave the parameter out instead."
READ_ONLY_FIELD = "Read-only field: it cannot be written."
_CSRF_FORM_FIELD = "csrfmiddlewaretoken"

# The JSON type each kind of field takes, most specific first. bool is a subclass of int
# in Python, so it is excluded from the numbers by hand.
_JSON_TYPES: list[tuple[type[serializers.Field], tuple[type, ...], str]] = [
    (serializers.BooleanField, (bool,), "Must be a JSON boolean (true or false)."),
    (serializers.IntegerField, (int,), "Must be a JSON integer."),
    (serializers.FloatField, (int, float), "Must be a JSON number."),
    (serializers.CharField, (str,), "Must be a JSON string."),
    # Every choice in Gatehouse is text (actions, reasons, policies).
    (serializers.ChoiceField, (str,), "Must be a JSON string."),
]


def _json_type_error(field: serializers.Field, value) -> str | None:
    if value is None:
        # DRF answers null itself, by the field's allow_null.
        return None
    # A field of Gatehouse's own may state its JSON types: (types, message).
    if (own := getattr(field, "json_type", None)) is not None:
        types, message = own
        return None if isinstance(value, types) else message
    for kind, types, message in _JSON_TYPES:
        if isinstance(field, kind):
            if isinstance(value, bool) and bool not in types:
                return message
            return None if isinstance(value, types) else message
    raise TypeError(f"No JSON type is known for {type(field).__name__}: add it to _JSON_TYPES.")


class StrictInput:
    # Mixed into a Serializer or ModelSerializer that reads a request body. No docstring:
    # drf-spectacular would publish it as the description of every body that has none.

    def to_internal_value(self, data):
        refused = self._refused(data) if isinstance(data, Mapping) else {}
        if refused and not isinstance(data, QueryDict):
            # The refused values must not reach DRF's own coercion.
            data = {key: value for key, value in data.items() if key not in refused}
        try:
            value = super().to_internal_value(data)
        except serializers.ValidationError as exc:
            raise serializers.ValidationError({**exc.detail, **refused}) from None
        if refused:
            raise serializers.ValidationError(refused)
        return value

    def _refused(self, data: Mapping) -> dict[str, list[str]]:
        is_form = isinstance(data, QueryDict)
        refused = {}
        for key in data:
            field = self.fields.get(key)
            if field is None:
                if not (is_form and key == _CSRF_FORM_FIELD):
                    refused[key] = [UNKNOWN_FIELD]
            elif field.read_only:
                refused[key] = [READ_ONLY_FIELD]
            elif not is_form and (message := _json_type_error(field, data[key])):
                refused[key] = [message]
        return refused


def empty_query_values(query: Mapping, names: Iterable[str]) -> dict[str, list[str]]:
    """Each of ``names`` that ``query`` gives with an empty value (any of its values, for
    a parameter given more than once), with the message to answer under it."""
    getlist = getattr(query, "getlist", lambda name: [query[name]])
    return {name: [EMPTY_VALUE] for name in names if name in query and "" in getlist(name)}


def refuse_empty_query_values(query: Mapping, names: Iterable[str] | None = None) -> None:
    """A 400 naming each of ``names`` (by default every parameter) given empty."""
    if refused := empty_query_values(query, query.keys() if names is None else names):
        raise serializers.ValidationError(refused)


class StrictSerializer(StrictInput, serializers.Serializer):
    pass


class StrictModelSerializer(StrictInput, serializers.ModelSerializer):
    pass


class NoFields(StrictSerializer):
    """The body of an action that takes nothing: empty, or refused by name."""
