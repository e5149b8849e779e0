import django_filters

from gating.models import Output, ReviewItem, TaskType
from gating.scoring import Decision
from gating.selectors import queue_open_items


class OutputFilter(django_filters.FilterSet):
    task_type = django_filters.CharFilter(field_name="task_type__name")
    model = django_filters.CharFilter()
    decision = django_filters.ChoiceFilter(choices=[(d.value, d.value) for d in Decision])
    status = django_filters.ChoiceFilter(choices=Output.Status.choices)
    created_after = django_filters.IsoDateTimeFilter(field_name="created_at", lookup_expr="gte")
    created_before = django_filters.IsoDateTimeFilter(field_name="created_at", lookup_expr="lt")

    class Meta:
        model = Output
        fields = ["task_type", "model", "decision", "status", "created_after", "created_before"]


class ReviewItemFilter(django_filters.FilterSet):
    """The queue's filters: the list, the claim, and the bulk decision all take these."""

    task_type = django_filters.ModelChoiceFilter(
        queryset=TaskType.objects.all(), to_field_name="name"
    )
    model = django_filters.CharFilter()
    score_min = django_filters.NumberFilter(field_name="score", lookup_expr="gte")
    score_max = django_filters.NumberFilter(field_name="score", lookup_expr="lt")
    kind = django_filters.ChoiceFilter(choices=ReviewItem.Kind.choices)

    class Meta:
        model = ReviewItem
        fields = ["task_type", "model", "score_min", "score_max", "kind"]


def queue_filterset(data) -> ReviewItemFilter:
    """The open queue under the filters in ``data``: the API and the pages both start here."""
    return ReviewItemFilter(data=data, queryset=queue_open_items())
