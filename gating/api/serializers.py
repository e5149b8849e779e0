from rest_framework import serializers

from gating.api.strict import StrictModelSerializer, StrictSerializer
from gating.models import Review, TaskType


class DecisionSerializer(StrictSerializer):
    """approve; modify with the edited output; or reject with a reason code. A note is
    optional with each."""

    action = serializers.ChoiceField(choices=Review.Action.choices)
    output = serializers.CharField(
        required=False, allow_blank=True, trim_whitespace=False, max_length=200_000
    )
    reason = serializers.CharField(required=False, allow_blank=True, max_length=50, default="")
    note = serializers.CharField(required=False, allow_blank=True, max_length=5_000, default="")


class QueueFilters(StrictSerializer):
    """The queue's filters, which may come in the body as well as in the query string."""

    # Typed here, for the strict body; their values are checked by ReviewItemFilter.

    task_type = serializers.CharField(required=False)
    model = serializers.CharField(required=False)
    score_min = serializers.FloatField(required=False)
    score_max = serializers.FloatField(required=False)
    kind = serializers.CharField(required=False)


class BulkDecisionSerializer(QueueFilters):
    """approve or reject, with a reason, every held output the filters match."""

    action = serializers.ChoiceField(choices=[Review.Action.APPROVE, Review.Action.REJECT])
    reason = serializers.CharField(max_length=500)
    dry_run = serializers.BooleanField(default=False)


class TaskTypeSerializer(StrictModelSerializer):
    """A task type's thresholds, cold start and sampling. A PATCH changes the writable
    fields it names; {} or values equal to the current ones change and record nothing."""

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
            "threshold_policy",
            "alpha_approve",
            "alpha_warning",
            "delta",
            "review_threshold_pinned",
            "approve_threshold_pinned",
            "backlog_relief",
            "recommended_tier",
            "reviewed_count",
            "in_cold_start",
            "created_at",
            "updated_at",
        ]
        read_only_fields = [
            "name",
            "recommended_tier",
            "reviewed_count",
            "in_cold_start",
            "created_at",
            "updated_at",
        ]

    in_cold_start = serializers.BooleanField(read_only=True)
    review_threshold = serializers.FloatField(min_value=0.0, max_value=10.0, required=False)
    approve_threshold = serializers.FloatField(min_value=0.0, max_value=10.0, required=False)
    cold_start_reviews = serializers.IntegerField(min_value=0, max_value=100_000, required=False)
    cold_start_margin = serializers.FloatField(min_value=0.0, max_value=10.0, required=False)
    audit_rate_approved = serializers.FloatField(min_value=0.0, max_value=1.0, required=False)
    audit_rate_warning = serializers.FloatField(min_value=0.0, max_value=1.0, required=False)
    double_review_rate = serializers.FloatField(min_value=0.0, max_value=1.0, required=False)
    alpha_approve = serializers.FloatField(min_value=0.001, max_value=0.5, required=False)
    alpha_warning = serializers.FloatField(min_value=0.001, max_value=0.9, required=False)
    delta = serializers.FloatField(min_value=0.001, max_value=0.5, required=False)
