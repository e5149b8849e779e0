from collections.abc import Callable
from datetime import UTC

import django_filters
from django import forms
from django.core.validators import MaxValueValidator
from django.db.models import F, Q
from django.http import QueryDict
from django_filters.fields import IsoDateTimeField
from drf_spectacular.utils import extend_schema_field

from gating.api.strict import empty_query_values
from gating.models import Output, ReviewItem, TaskType
from gating.scorers.interval import WIDE_INTERVAL, WIDE_TOLERANCE
from gating.scoring import Decision
from gating.selectors import outputs_matching, queue_open_items, score_band_problem
from gating.submissions import IDENTIFIER_PATTERN, identifier_problem

# What the API's filters take, as the schema states it: the same definitions check them.
IDENTIFIER_SCHEMA = {"type": "string", "minLength": 1, "pattern": IDENTIFIER_PATTERN}
# Names in a query string: the parameter repeated, one for each.
NAMES_SCHEMA = {"type": "array", "items": IDENTIFIER_SCHEMA, "minItems": 1}
# As much of a name as an error quotes (dashboard.filters quotes as much).
_QUOTED_LENGTH = 100
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


class NamesField(forms.Field):
    """Names: a query string's parameter repeated for each (task_type=a&task_type=b), or a
    JSON body's string or list of strings. None means all. Each name is read as given and
    held to the ingest's rule; with ``known``, a name it does not know is refused in words,
    as the dashboard's filter refuses it (dashboard.filters)."""

    # Reads every value of a repeated parameter (QueryDict.getlist), a body's value as given.
    widget = forms.SelectMultiple

    def __init__(self, *args, what: str, known: Callable[[list[str]], set[str]] | None, **kwargs):
        self.what, self.known = what, known
        super().__init__(*args, **kwargs)

    def to_python(self, value) -> list[str]:
        if value in self.empty_values:
            return []
        # An empty value is the strict form's to refuse by name (StrictFilterForm).
        return [name for name in ([value] if isinstance(value, str) else value) if name != ""]

    def validate(self, value):
        super().validate(value)
        for name in value:
            _refuse_bad_identifier(name)
        known = self.known(value) if self.known and value else set(value)
        for name in value:
            if name not in known:
                quoted = name if len(name) <= _QUOTED_LENGTH else name[:_QUOTED_LENGTH] + "…"
                raise forms.ValidationError(f'Unknown {self.what} "{quoted}".', code="unknown")


@extend_schema_field(NAMES_SCHEMA)
class NamesFilter(django_filters.Filter):
    """Names, repeated for several (NamesField); matches any of them."""

    field_class = NamesField

    def __init__(self, *args, what: str, known=None, **kwargs):
        super().__init__(*args, what=what, known=known, **kwargs)

    def filter(self, qs, value):
        return qs.filter(**{f"{self.field_name}__in": value}) if value else qs


def _known_task_types(names: list[str]) -> set[str]:
    return set(TaskType.objects.filter(name__in=names).values_list("name", flat=True))


@extend_schema_field(SCORE_SCHEMA)
class ScoreFilter(django_filters.NumberFilter):
    def get_max_validator(self):
        return MaxValueValidator(SCORE_FILTER_MAX)


class OutputFilter(django_filters.FilterSet):
    """The outputs API's filters, read here and applied by the outputs query that the
    outputs page shares (selectors.outputs_matching). Task types and models are not
    checked against the known names: a gateway sees only its own, and a refusal would tell
    it another gateway's names exist."""

    task_type = NamesFilter(what="task type")
    model = NamesFilter(what="model")
    decision = django_filters.ChoiceFilter(choices=[(d.value, d.value) for d in Decision])
    status = django_filters.ChoiceFilter(choices=Output.Status.choices)
    created_after = UtcDateTimeFilter(field_name="created_at")
    created_before = UtcDateTimeFilter(field_name="created_at")

    class Meta:
        model = Output
        fields = ["task_type", "model", "decision", "status", "created_after", "created_before"]
        form = StrictFilterForm

    def filter_queryset(self, queryset):
        # In place of django-filter's filter by filter: the one outputs query takes them all.
        given = self.form.cleaned_data
        return outputs_matching(
            queryset,
            task_types=given["task_type"],
            models=given["model"],
            decision=given["decision"],
            status=given["status"],
            created_after=given["created_after"],
            created_before=given["created_before"],
        )


class QueueFilterForm(StrictFilterForm):
    """The queue's filter form: a score band that matches nothing is refused, naming
    score_max (selectors.score_band_problem), rather than answered with an empty queue."""

    def clean(self):
        cleaned = super().clean()
        problem = score_band_problem(cleaned.get("score_min"), cleaned.get("score_max"))
        if problem and "score_max" not in self.errors:
            self.add_error("score_max", problem)
        return cleaned


class ReviewItemFilter(django_filters.FilterSet):
    """The queue's filters: the list, the claim, and the bulk decision all take these."""

    task_type = NamesFilter(
        what="task type", known=_known_task_types, method="filter_task_types", label="Task types"
    )
    # Not checked against known names: the queue knows a model only by its open items, and
    # a claim for a model whose last item was just taken must be answered "nothing left"
    # (204), not refused.
    model = NamesFilter(what="model", label="Models")
    score_min = ScoreFilter(field_name="score", lookup_expr="gte")
    score_max = ScoreFilter(field_name="score", lookup_expr="lt")
    # "Any", where django's empty choice reads "---------".
    kind = django_filters.ChoiceFilter(
        choices=ReviewItem.Kind.choices, method="filter_kind", empty_label="Any"
    )
    # A choice rather than a BooleanFilter, whose form quietly ignores values like "yes".
    uncertain = django_filters.ChoiceFilter(
        choices=[("true", "wide only"), ("false", "not wide")],
        method="filter_uncertain",
        empty_label="Any",
        label="Interval",
        help_text=f"true: only outputs whose confidence interval is at least {WIDE_INTERVAL:g} "
        "points wide (uncertain, worth investigating); false: only the others.",
    )

    class Meta:
        model = ReviewItem
        fields = ["task_type", "model", "score_min", "score_max", "kind", "uncertain"]
        form = QueueFilterForm

    def filter_task_types(self, queryset, name, value):
        # By id, which the open queue's per-task-type index leads with.
        ids = TaskType.objects.filter(name__in=value).values_list("pk", flat=True)
        return queryset.filter(task_type_id__in=list(ids))

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


def queue_filter_data(data) -> QueryDict:
    """The queue's filters in ``data`` (a query string, a form, or a JSON body's object) as a
    query string holds them, each value of a repeated or listed one kept."""
    filters = QueryDict(mutable=True)
    for name in ReviewItemFilter.base_filters:
        if name in data:
            values = data.getlist(name) if isinstance(data, QueryDict) else data[name]
            filters.setlist(name, values if isinstance(values, list) else [values])
    return filters


def queue_filterset(data) -> ReviewItemFilter:
    """The open queue under the filters in ``data``: the API and the pages both start here."""
    return ReviewItemFilter(data=data, queryset=queue_open_items())
