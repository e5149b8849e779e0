import django_filters
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import generics, serializers
from rest_framework.decorators import api_view, permission_classes, renderer_classes
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response

from gating import selectors as gating_selectors
from gating.api.filters import StrictFilterForm
from gating.api.permissions import require_perm
from gating.api.responses import RENDERERS, Detail
from gating.api.strict import StrictSerializer
from gating.roles import ACKNOWLEDGE_ALERTS, WATCH_LEARNING
from learning import alerts, selectors
from learning.api.responses import RoutingAdvice, ThresholdStateAnswer, ThresholdStates
from learning.models import Alert


@extend_schema(
    summary="Routing advice for the gateway",
    description="Per task type you may see (a gateway: those it sends outputs of, and the "
    "shared ones), from the latest daily tiers cycle: the recommended default "
    "tier (ADR-0003's rule) and the models ranked by adjusted score (accuracy x "
    "min(1, reviews/20)). Empty until the first tiers cycle has run.",
    responses={200: RoutingAdvice},
)
@api_view(["GET"])
@permission_classes([IsAuthenticated, require_perm("gating.view_tasktype")])
@renderer_classes(RENDERERS)
def routing(request):
    visible = _visible_task_type_names(request.user)
    return Response(
        RoutingAdvice([row for row in selectors.routing_advice() if row["task_type"] in visible])
    )


@extend_schema(
    summary="Threshold states",
    description="Per task type you may see (a gateway: those it sends outputs of, and the "
    "shared ones), the review and approve thresholds in force, the latest "
    "thresholds run's state (certified, underpowered, not attainable), what the error "
    "budget amounts to now, the reason, and for the approve threshold the best certifiable "
    "error (docs/learning.md).",
    responses={200: ThresholdStates},
)
@api_view(["GET"])
@permission_classes([IsAuthenticated, require_perm("gating.view_tasktype")])
@renderer_classes(RENDERERS)
def threshold_states(request):
    visible = _visible_task_type_names(request.user)
    return Response(
        ThresholdStates(
            [
                {name: getattr(state, name) for name in ThresholdStateAnswer.model_fields}
                for state in selectors.threshold_states()
                if state.task_type in visible
            ]
        )
    )


def _visible_task_type_names(user) -> set[str]:
    return set(gating_selectors.task_types_visible_to(user).values_list("name", flat=True))


class AlertSerializer(serializers.ModelSerializer):
    acknowledged_by = serializers.SlugRelatedField(
        slug_field="username", read_only=True, allow_null=True
    )

    class Meta:
        model = Alert
        fields = [
            "id",
            "rule",
            "subject",
            "state",
            "message",
            "value",
            "limit",
            "link",
            "first_seen",
            "last_seen",
            "acknowledged_by",
            "acknowledged_at",
            "note",
            "resolved_at",
        ]
        read_only_fields = fields


class AlertFilter(django_filters.FilterSet):
    class Meta:
        model = Alert
        fields = ["state", "rule"]
        form = StrictFilterForm


class AlertList(generics.ListAPIView):
    """Alerts, newest first; ``?state=open`` (or acknowledged, resolved) and ``?rule=``."""

    serializer_class = AlertSerializer
    permission_classes = [IsAuthenticated, require_perm(WATCH_LEARNING)]
    filterset_class = AlertFilter

    def get_queryset(self):
        return Alert.objects.select_related("acknowledged_by").order_by("-first_seen", "-id")


class AcknowledgeSerializer(StrictSerializer):
    """A lead takes the alert on, saying what is being done."""

    note = serializers.CharField(
        max_length=alerts.NOTE_MAX, help_text="What is being done about it."
    )


@extend_schema(
    summary="Acknowledge an alert",
    description="An open alert, once: it stays acknowledged until its condition clears.",
    request=AcknowledgeSerializer,
    responses={
        200: AlertSerializer,
        409: OpenApiResponse(
            Detail,
            description="The alert is acknowledged already (the first note stands), or has "
            "resolved.",
        ),
    },
)
@api_view(["POST"])
@permission_classes([IsAuthenticated, require_perm(ACKNOWLEDGE_ALERTS)])
def alert_acknowledge(request, pk: int):
    alert = get_object_or_404(Alert, pk=pk)
    body = AcknowledgeSerializer(data=request.data)
    body.is_valid(raise_exception=True)
    alert = alerts.alert_acknowledge(
        alert=alert, lead=request.user, note=body.validated_data["note"]
    )
    return Response(AlertSerializer(alert).data)
