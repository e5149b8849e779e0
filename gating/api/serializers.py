from rest_framework import serializers

from gating.models import Output, TaskType


def output_representation(output: Output) -> dict:
    """The one JSON shape of an output: the ingest answer, its replay, and GET."""
    return {
        "id": output.pk,
        "external_id": output.external_id,
        "task_type": output.task_type.name,
        "model": output.model,
        "tier": output.tier,
        "score": round(output.score, 4),
        "base_score": round(output.base_score, 4),
        "decision": output.decision,
        "status": output.status,
        "final_output": output.final_output_text,
        "reasons": output.reasons,
        "impacts": output.impacts,
        "thresholds": {
            "review": round(output.review_threshold, 4),
            "approve": round(output.approve_threshold, 4),
        },
        "scorer": output.scorer,
        "created_at": output.created_at.isoformat().replace("+00:00", "Z"),
    }


class OutputSerializer(serializers.BaseSerializer):
    def to_representation(self, instance: Output) -> dict:
        return output_representation(instance)


class TaskTypeSerializer(serializers.ModelSerializer):
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
            "reviewed_count",
            "in_cold_start",
            "created_at",
            "updated_at",
        ]
        read_only_fields = ["name", "reviewed_count", "in_cold_start", "created_at", "updated_at"]

    in_cold_start = serializers.BooleanField(read_only=True)
    review_threshold = serializers.FloatField(min_value=0.0, max_value=10.0, required=False)
    approve_threshold = serializers.FloatField(min_value=0.0, max_value=10.0, required=False)
    cold_start_reviews = serializers.IntegerField(min_value=0, max_value=100_000, required=False)
    cold_start_margin = serializers.FloatField(min_value=0.0, max_value=10.0, required=False)
    audit_rate_approved = serializers.FloatField(min_value=0.0, max_value=1.0, required=False)
    audit_rate_warning = serializers.FloatField(min_value=0.0, max_value=1.0, required=False)
    double_review_rate = serializers.FloatField(min_value=0.0, max_value=1.0, required=False)

    def validate(self, attrs):
        review = attrs.get("review_threshold", getattr(self.instance, "review_threshold", None))
        approve = attrs.get("approve_threshold", getattr(self.instance, "approve_threshold", None))
        if review is not None and approve is not None and not review < approve:
            raise serializers.ValidationError(
                {"review_threshold": [f"Must be below approve_threshold ({approve:g})."]}
            )
        return attrs
