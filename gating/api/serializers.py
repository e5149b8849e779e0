from django.http import QueryDict
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers
from rest_framework.fields import empty

from gating import gate_settings, rubrics, services
from gating.api.filters import IDENTIFIER_SCHEMA, NAMES_SCHEMA, SCORE_FILTER_MAX
from gating.api.strict import EMPTY_VALUE, StrictModelSerializer, StrictSerializer
from gating.models import COMMENT_MAX_CHARS, Review, ReviewItem, TaskType
from gating.selectors import score_band_problem
from gating.submissions import identifier_problem


@extend_schema_field(
    {
        "type": "object",
        "maxProperties": rubrics.MAX_DIMENSIONS,
        "additionalProperties": {
            "oneOf": [{"type": "number"}, {"type": "string"}, {"type": "boolean"}]
        },
    }
)
class ScoresField(serializers.JSONField):
    """A rubric's scores: a JSON object, or in a form body the JSON text of one (the review
    page sends it so). Each value is checked against its dimension by gating.rubrics."""

    default_error_messages = {"invalid": "Must be an object of dimension names and values."}
    # For gating.api.strict: in a JSON body, an object and nothing else (a form body's value
    # is text, which it does not type-check).
    json_type = ((dict,), default_error_messages["invalid"])

    def to_internal_value(self, data):
        value = super().to_internal_value(data)
        if not isinstance(value, dict):
            self.fail("invalid")
        return value


class DecisionSerializer(StrictSerializer):
    """approve; modify with the edited output, marked style_only if the output was fine;
    or reject with a reason code. A note is optional with each."""

    action = serializers.ChoiceField(choices=Review.Action.choices)
    output = serializers.CharField(
        required=False, allow_blank=True, trim_whitespace=False, max_length=200_000
    )
    style_only = serializers.BooleanField(
        required=False,
        default=False,
        help_text="Modify only: the output was fine and the edit is a matter of taste, so "
        "the learning cycles do not count it as an error. True with any other action is "
        "refused.",
    )
    reason = serializers.CharField(required=False, allow_blank=True, max_length=50, default="")
    note = serializers.CharField(required=False, allow_blank=True, max_length=5_000, default="")
    scores = ScoresField(
        required=False,
        default=dict,
        help_text="The task type's rubric scores by dimension name: a number in a numeric "
        "dimension's range, one of a categorical dimension's choices, or true or false. Every "
        "required dimension must be scored; the rules are the rubric's (GET "
        "/api/v1/task-types/{name}/rubric/).",
    )
    rubric_version = serializers.IntegerField(
        required=False,
        min_value=1,
        max_value=2**31 - 1,
        help_text="The rubric version you scored against; a decision on an older version "
        "than the one in force is refused.",
    )


@extend_schema_field(IDENTIFIER_SCHEMA)
class IdentifierInput(serializers.CharField):
    """A name, as the ingest stores it (gating.submissions.identifier_problem)."""

    def __init__(self, **kwargs):
        super().__init__(trim_whitespace=False, **kwargs)

    def to_internal_value(self, data):
        value = super().to_internal_value(data)
        if problem := identifier_problem(value):
            raise serializers.ValidationError(problem)
        return value


@extend_schema_field({"oneOf": [IDENTIFIER_SCHEMA, NAMES_SCHEMA]})
class NamesInput(serializers.Field):
    """One name, or a list of names (none: all), as a body gives the queue's task_type and
    model: a single name as clients sent it before lists, or several, as the query string
    repeats them. A form body repeats the field, as a query string does."""

    json_type = ((str, list), "Must be a JSON string or a list of strings.")

    def get_value(self, dictionary):
        if isinstance(dictionary, QueryDict):
            return dictionary.getlist(self.field_name) if self.field_name in dictionary else empty
        return super().get_value(dictionary)

    def to_internal_value(self, data) -> list[str]:
        names = [data] if isinstance(data, str) else data
        if not isinstance(names, list) or not all(isinstance(name, str) for name in names):
            raise serializers.ValidationError(self.json_type[1])
        if not names:
            # As an empty query value (gating.api.strict): most often an unset variable, and
            # read as all it would widen a bulk decision to every held output.
            raise serializers.ValidationError(EMPTY_VALUE)
        return [IdentifierInput().run_validation(name) for name in names]


class QueueFilters(StrictSerializer):
    """The queue's filters, which may come in the body as well as in the query string."""

    # Typed here as the query string's are (gating.api.filters), for the strict body and
    # its schema; ReviewItemFilter then reads them as it reads the query string.

    task_type = NamesInput(required=False)
    model = NamesInput(required=False)
    score_min = serializers.FloatField(required=False, max_value=SCORE_FILTER_MAX)
    score_max = serializers.FloatField(required=False, max_value=SCORE_FILTER_MAX)
    kind = serializers.ChoiceField(choices=ReviewItem.Kind.values, required=False)
    uncertain = serializers.ChoiceField(choices=["true", "false"], required=False)

    def validate(self, attrs):
        if problem := score_band_problem(attrs.get("score_min"), attrs.get("score_max")):
            raise serializers.ValidationError({"score_max": [problem]})
        return attrs


class BulkDecisionSerializer(QueueFilters):
    """approve or reject, with a reason, every held output the filters match."""

    action = serializers.ChoiceField(choices=[Review.Action.APPROVE, Review.Action.REJECT])
    reason = serializers.CharField(max_length=500)
    dry_run = serializers.BooleanField(default=False)


def _gate_setting_kwargs() -> dict[str, dict]:
    """Each gate setting's field arguments, from its declaration: the words, the range the
    schema publishes, and (for PATCH) not required."""
    kwargs = {}
    for setting in gate_settings.SETTINGS:
        kwargs[setting.name] = {"label": setting.label, "help_text": setting.meaning}
        if setting.is_number:
            kwargs[setting.name] |= {"min_value": setting.low, "max_value": setting.high}
        elif setting.kind is gate_settings.Kind.CHOICE:
            choices = ", ".join(setting.values)
            invalid = f'"{{input}}" is not a choice of {setting.name}; one of: {choices}.'
            kwargs[setting.name]["error_messages"] = {"invalid_choice": invalid}
    return kwargs


class GatewayTaskTypeSerializer(serializers.ModelSerializer):
    """A task type as a gateway sees it: what its outputs are scored by and gated at. Its
    learning state (reviews counted, cold start, sampling, error budgets, recommended
    tier) is the staff's, and would tell one gateway how much another sends; each output's
    answer carries the thresholds that gated it, cold start included."""

    class Meta:
        model = TaskType
        fields = ["name", "scorer", "review_threshold", "approve_threshold", "auto_approve"]
        read_only_fields = fields


class TaskTypeSerializer(StrictModelSerializer):
    """A task type's thresholds, cold start and sampling, as staff roles see it. A PATCH
    changes the writable fields it names, with an optional reason kept in the audit log;
    {} or values equal to the current ones change and record nothing. ``shared`` shows it
    to every gateway; otherwise a gateway sees only the task types it sent outputs of."""

    class Meta:
        model = TaskType
        fields = [
            "name",
            "review_threshold",
            "approve_threshold",
            "cold_start_reviews",
            "cold_start_margin",
            "audit_rate_approved",
            "audit_rate_warning",
            "double_review_rate",
            "audit_rate_budget",
            "threshold_policy",
            "scorer",
            "alpha_approve",
            "alpha_bad",
            "alpha_warning",
            "delta",
            "review_threshold_pinned",
            "approve_threshold_pinned",
            "auto_approve",
            "approve_requires",
            "approve_guarantee",
            "estimated_approve_threshold",
            "backlog_relief",
            "shared",
            "recommended_tier",
            "reviewed_count",
            "in_cold_start",
            "created_at",
            "updated_at",
            "reason",
        ]
        read_only_fields = [
            "name",
            "approve_guarantee",
            "estimated_approve_threshold",
            "recommended_tier",
            "reviewed_count",
            "in_cold_start",
            "created_at",
            "updated_at",
        ]
        extra_kwargs = _gate_setting_kwargs()

    in_cold_start = serializers.BooleanField(read_only=True)
    reason = serializers.CharField(
        write_only=True,
        required=False,
        allow_blank=True,
        max_length=services.REASON_MAX_LENGTH,
        help_text="Why the change is made: kept in the audit log with it.",
    )


# What gating.comments.comment_text_clean takes, exactly, for the schema: stripped of white
# space (Python's, which str.strip and the regex's \s share), 1 to COMMENT_MAX_CHARS
# characters, no NUL (which PostgreSQL's text cannot hold). The raw text has no length of
# its own to state: only its stripped length counts.
COMMENT_TEXT_SCHEMA = {
    "type": "string",
    "minLength": 1,
    "pattern": rf"^\s*[^\s\u0000](?:[^\u0000]{{0,{COMMENT_MAX_CHARS - 2}}}[^\s\u0000])?\s*$",
    "description": f"Plain text, 1 to {COMMENT_MAX_CHARS} characters once stripped of "
    "surrounding white space.",
}


@extend_schema_field(COMMENT_TEXT_SCHEMA)
class CommentTextInput(serializers.CharField):
    """A comment's text as sent: its rules are the service's (gating.comments), which names
    the field, so that the API and the pages refuse the same texts in the same words."""

    def __init__(self, **kwargs):
        super().__init__(trim_whitespace=False, **kwargs)


class CommentInput(StrictSerializer):
    text = CommentTextInput()


_DIMENSION_COMMON = {
    # Anchored at both ends: a JSON Schema pattern matches anywhere in the value.
    "name": {
        "type": "string",
        "pattern": "^" + rubrics.NAME_PATTERN.pattern.removesuffix(r"\Z") + "$",
    },
    "label": {"type": "string", "minLength": 1, "maxLength": rubrics.LABEL_MAX_CHARS},
    "required": {"type": "boolean"},
    "help": {"type": "string", "maxLength": rubrics.HELP_MAX_CHARS},
}
_NUMBER_BOUND = {
    "type": "number",
    "minimum": -rubrics.NUMBER_LIMIT,
    "maximum": rubrics.NUMBER_LIMIT,
}
_DIMENSION_KEYS = {
    rubrics.DimensionKind.NUMERIC: {"minimum": _NUMBER_BOUND, "maximum": _NUMBER_BOUND},
    rubrics.DimensionKind.CATEGORICAL: {
        "choices": {
            "type": "array",
            "minItems": 2,
            "maxItems": rubrics.MAX_CHOICES,
            "items": {"type": "string", "minLength": 1, "maxLength": rubrics.CHOICE_MAX_CHARS},
        }
    },
    rubrics.DimensionKind.BOOLEAN: {},
}
DIMENSIONS_SCHEMA = {
    "type": "array",
    "maxItems": rubrics.MAX_DIMENSIONS,
    "items": {
        "oneOf": [
            {
                "type": "object",
                "additionalProperties": False,
                "required": ["name", "label", "kind", *extra],
                "properties": {
                    **_DIMENSION_COMMON,
                    "kind": {"type": "string", "enum": [kind.value]},
                    **extra,
                },
            }
            for kind, extra in _DIMENSION_KEYS.items()
        ]
    },
}


@extend_schema_field(DIMENSIONS_SCHEMA)
class DimensionsField(serializers.JSONField):
    """The rubric's dimensions, checked by gating.rubrics.dimensions_clean, which names the
    dimension and key at fault."""

    json_type = ((list,), "Must be a list of dimensions.")


class RubricInput(StrictSerializer):
    """A rubric's new version: Markdown instructions and the score dimensions."""

    instructions = serializers.CharField(
        allow_blank=True, trim_whitespace=False, max_length=rubrics.INSTRUCTIONS_MAX_CHARS
    )
    dimensions = DimensionsField()
