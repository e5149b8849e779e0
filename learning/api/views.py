from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import generics, serializers
from rest_framework.decorators import api_view, permission_classes
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response

from gating.api.permissions import require_perm
from gating.api.strict import StrictSerializer
from learning import alerts, selectors
from learning.models import Alert

_RANKED_MODELS = inline_serializer(
    "RankedModel",
    many=True,
    fields={
        "model": serializers.CharField(),
        "tier": serializers.CharField(),
        "rank": serializers.IntegerField(),
        "reviews": serializers.IntegerField(),
        "accuracy": serializers.FloatField(allow_null=True),
        "mean_score": serializers.FloatField(allow_null=True),
        "confidence": serializers.FloatField(),
        "adjusted_score": serializers.FloatField(),
    },
)
_ROUTING = inline_serializer(
    "Routing",
    many=True,
    fields={
        "task_type": serializers.CharField(),
        "recommended_tier": serializers.CharField(),
        "reason": serializers.CharField(),
        "assessed_at": serializers.DateTimeField(),
        "models": _RANKED_MODELS,
    },
)


@extend_schema(
    summary="Routing advice for the gateway",
    description="Per task type, from the latest daily tiers cycle: the recommended default "
    "tier (ADR-0003's rule) and the models ranked by adjusted score (accuracy x "
    "min(1, reviews/20)). Empty until the first tiers cycle has run.",
    responses={200: _ROUTING},
)
@api_view(["GET"])
@permission_classes([IsAuthenticated, require_perm("gating.view_tasktype")])
def routing(request):
    return Response(selectors.routing_advice())


class AlertSerializer(serializers.ModelSerializer):
    acknowledged_by = serializers.SlugRelatedField(slug_field="username", read_only=True)

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


class AlertList(generics.ListAPIView):
    """Alerts, newest first; ``?state=open`` (or acknowledged, resolved) and ``?rule=``."""

    serializer_class = AlertSerializer
    permission_classes = [IsAuthenticated, require_perm("learning.view_alert")]
    filterset_fields = ["state", "rule"]

    def get_queryset(self):
        return Alert.objects.select_related("acknowledged_by").order_by("-first_seen", "-id")


class AcknowledgeSerializer(StrictSerializer):
    note = serializers.CharField(max_length=2000, help_text="What is being done about it.")


@extend_schema(
    summary="Acknowledge an alert",
    request=AcknowledgeSerializer,
    responses={200: AlertSerializer},
)
@api_view(["POST"])
@permission_classes([IsAuthenticated, require_perm("learning.acknowledge_alert")])
def alert_acknowledge(request, pk: int):
    alert = get_object_or_404(Alert, pk=pk)
    body = AcknowledgeSerializer(data=request.data)
    body.is_valid(raise_exception=True)
    try:
        alert = alerts.alert_acknowledge(
            alert=alert, lead=request.user, note=body.validated_data["note"]
        )
    except alerts.AlertResolved as exc:
        return Response({"detail": str(exc)}, status=409)
    return Response(AlertSerializer(alert).data)
