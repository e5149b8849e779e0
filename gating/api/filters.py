import django_filters

from gating.models import Output
from gating.scoring import Decision


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
