from datetime import UTC

import django_filters
from django import forms
from django.core.validators import MaxValueValidator
from django.db.models import F, Q
from django_filters.fields import IsoDateTimeField, ModelChoiceField
from drf_spectacular.utils import extend_schema_field

from gating.api.strict import empty_query_values
from gating.models import Output, ReviewItem, TaskType
from gating.scorers.interval import WIDE_INTERVAL, WIDE_TOLERANCE
from gating.scoring import Decision
from gating.selectors import queue_open_items
from gating.submissions import IDENTIFIER_PATTERN, identifier_problem

# What the API's filters take, as the schema states it: the same definitions check them.
IDENTIFIER_SCHEMA = {"type": "string", "minLength": 1, "pattern": IDENTIFIER_PATTERN}
# A score filter's bound: django-filter's own for numbers, which a float column can compare.
SCORE_FILTER_MAX = 1e50
SCORE_SCHEMA = {"type": "number", "format": "double", "maximum": SCORE_FILTER_MAX}


class StrictFilterForm(forms.Form):
    """A filter set's form for the API: a filter given empty is refused by name
    (gating.api.strict), where django-filter would skip it."""

    def clean(self):
        cleaned = super().clean()
        for name, messages in empty_query_values(self.data, self.fields).items():
            self.add_error(name, messages)
        return cleaned


class UtcDateTimeField(IsoDateTimeField):
    """An ISO 8601 instant with any offset Python reads, taken as its UTC instant:
    PostgreSQL refuses offsets beyond 15:59 and compares instants anyway."""

    def to_python(self, value):
        moment = super().to_python(value)
        if moment is None:
            return None
        try:
            return moment.astimezone(UTC)
        except OverflowError:
            raise forms.ValidationError(
                "In UTC this instant falls outside the years 1 to 9999.", code="overflow"
            ) from None


class UtcDateTimeFilter(django_filters.IsoDateTimeFilter):
    field_class = UtcDateTimeField


def _refuse_bad_identifier(value) -> None:
    # A name no output can have: said so, where a trimmed value would quietly match
    # another name (or none).
    if isinstance(value, str) and value and (problem := identifier_problem(value)):
        raise forms.ValidationError(problem, code="identifier")


class IdentifierField(forms.CharField):
    """A name as the ingest stores it (gating.submissions.identifier_problem): read as
    given, not trimmed, and refused by the ingest's rule."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, strip=False, **kwargs)

    def validate(self, value):
        super().validate(value)
        _refuse_bad_identifier(value)


@extend_schema_field(IDENTIFIER_SCHEMA)
class IdentifierFilter(django_filters.CharFilter):
    field_class = IdentifierField


class TaskTypeChoiceField(ModelChoiceField):
    def to_python(self, value):
        _refuse_bad_identifier(value)
        return super().to_python(value)


@extend_schema_field(IDENTIFIER_SCHEMA)
class TaskTypeFilter(django_filters.ModelChoiceFilter):
    """A task type by name; the pages show the choices."""

    field_class = TaskTypeChoiceField


@extend_schema_field(SCORE_SCHEMA)
class ScoreFilter(django_filters.NumberFilter):
    def get_max_validator(self):
        return MaxValueValidator(SCORE_FILTER_MAX)


class OutputFilter(django_filters.FilterSet):
    task_type = IdentifierFilter(field_name="task_type__name")
    model = IdentifierFilter()
    decision = django_filters.ChoiceFilter(choices=[(d.value, d.value) for d in Decision])
    status = django_filters.ChoiceFilter(choices=Output.Status.choices)
    created_after = UtcDateTimeFilter(field_name="created_at", lookup_expr="gte")
    created_before = UtcDateTimeFilter(field_name="created_at", lookup_expr="lt")

    class Meta:
        model = Output
        fields = ["task_type", "model", "decision", "status", "created_after", "created_before"]
        form = StrictFilterForm


class ReviewItemFilter(django_filters.FilterSet):
    """The queue's filters: the list, the claim, and the bulk decision all take these."""

    task_type = TaskTypeFilter(queryset=TaskType.objects.all(), to_field_name="name")
    model = IdentifierFilter()
    score_min = ScoreFilter(field_name="score", lookup_expr="gte")
    score_max = ScoreFilter(field_name="score", lookup_expr="lt")
    kind = django_filters.ChoiceFilter(choices=ReviewItem.Kind.choices, method="filter_kind")
    # A choice rather than a BooleanFilter, whose form quietly ignores values like "yes".
    uncertain = django_filters.ChoiceFilter(
        choices=[("true", "wide only"), ("false", "not wide")],
        method="filter_uncertain",
        label="Interval",
        help_text=f"true: only outputs whose confidence interval is at least {WIDE_INTERVAL:g} "
        "points wide (uncertain, worth investigating); false: only the others.",
    )

    class Meta:
        model = ReviewItem
        fields = ["task_type", "model", "score_min", "score_max", "kind", "uncertain"]
        form = StrictFilterForm

    def filter_uncertain(self, queryset, name, value):
        # interval.is_wide in SQL. An output without an interval is not wide: the width is
        # NULL there, and a plain exclude() would drop those outputs from both answers.
        queryset = queryset.alias(
            interval_width=F("output__interval_upper") - F("output__interval_lower")
        )
        wide = Q(interval_width__gte=WIDE_INTERVAL - WIDE_TOLERANCE)
        if value == "true":
            return queryset.filter(wide)
        return queryset.filter(Q(interval_width__isnull=True) | ~wide)

    def filter_kind(self, queryset, name, value):
        # A review is never an audit and an audit always is. Saying so lets the claim that
        # puts audits first (reviews.audit_due) start past, or at, the audits in its index
        # instead of reading every open audit to find no review among them.
        queryset = queryset.filter(kind=value)
        if value in _KIND_IS_AUDIT:
            queryset = queryset.filter(is_audit=_KIND_IS_AUDIT[value])
        return queryset


_KIND_IS_AUDIT = {ReviewItem.Kind.REVIEW: False, ReviewItem.Kind.AUDIT: True}


def queue_filterset(data) -> ReviewItemFilter:
    """The open queue under the filters in ``data``: the API and the pages both start here."""
    return ReviewItemFilter(data=data, queryset=queue_open_items())
