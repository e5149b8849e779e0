"""The strict request body mechanism itself (gating.api.strict), on serializers of its own:
what it refuses, with which words, and what it leaves to DRF. The endpoints' use of it is
tested in test_api_strict_input.py."""

import pytest
from django.http import QueryDict
from rest_framework import serializers

from gating.api.strict import READ_ONLY_FIELD, UNKNOWN_FIELD, StrictSerializer


class Filters(StrictSerializer):
    task_type = serializers.CharField(required=False)
    score_min = serializers.FloatField(required=False)
    limit = serializers.IntegerField(required=False)
    dry_run = serializers.BooleanField(default=False)
    created_at = serializers.DateTimeField(read_only=True)


def errors(data) -> dict:
    serializer = Filters(data=data)
    assert not serializer.is_valid()
    return serializer.errors


def test_each_refusal_names_the_field_with_its_reason():
    body = {
        "colour": "blue",
        "created_at": "2026-01-01T00:00:00Z",
        "score_min": "1.5",
        "limit": 4.0,
        "dry_run": 1,
        "task_type": 7,
    }
    assert errors(body) == {
        "colour": [UNKNOWN_FIELD],
        "created_at": [READ_ONLY_FIELD],
        "score_min": ["Must be a JSON number."],
        "limit": ["Must be a JSON integer."],
        "dry_run": ["Must be a JSON boolean (true or false)."],
        "task_type": ["Must be a JSON string."],
    }
    # The words a client reads, spelled out once here.
    assert UNKNOWN_FIELD == "Unknown field."
    assert READ_ONLY_FIELD == "Read-only field: it cannot be written."


def test_the_csrf_field_is_taken_only_from_a_form():
    assert errors({"csrfmiddlewaretoken": "abc"}) == {"csrfmiddlewaretoken": [UNKNOWN_FIELD]}
    assert Filters(data=QueryDict("csrfmiddlewaretoken=abc")).is_valid()


def test_a_body_that_is_not_an_object_is_left_to_drf():
    # DRF's own answer, word for word: the items of a list are not field names.
    assert errors(["colour"]) == {
        "non_field_errors": ["Invalid data. Expected a dictionary, but got list."]
    }


def test_a_refused_form_is_still_read_as_a_form():
    # An HTML form sends an emptied optional text field as "": DRF reads that as absent in
    # a form, but as a blank string, which task_type refuses, in a JSON object. So the
    # form's only error is the unknown field.
    assert errors(QueryDict("colour=blue&task_type=")) == {"colour": [UNKNOWN_FIELD]}
    assert errors({"colour": "blue", "task_type": ""}) == {
        "colour": [UNKNOWN_FIELD],
        "task_type": ["This field may not be blank."],
    }


def test_a_field_with_no_known_json_type_is_a_programming_error():
    class WithADate(StrictSerializer):
        day = serializers.DateField()

    with pytest.raises(TypeError) as raised:
        WithADate(data={"day": "2026-01-01"}).is_valid()
    assert str(raised.value) == "No JSON type is known for DateField: add it to _JSON_TYPES."
