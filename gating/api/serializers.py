from rest_framework import serializers

from gating.api.strict import StrictModelSerializer, StrictSerializer
from gating.models import Output, Review, ReviewItem, TaskType


def _iso(moment) -> str | None:
    return moment.isoformat().replace("+00:00", "Z") if moment else None


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
        "created_at": _iso(output.created_at),
        "decided_at": _iso(output.decided_at),
    }


def output_for_review(output: Output) -> dict:
    """Everything a reviewer needs to judge an output: the gate's view plus the texts."""
    return {
        **output_representation(output),
        "input": output.input_text,
        "output": output.output_text,
        "validators": output.validator_results,
        "input_clarity": output.input_clarity,
        "coherence": output.coherence,
        "requires_fact_check": output.requires_fact_check,
        "evidence": output.evidence,
        "metadata": output.metadata,
    }


def review_representation(review: Review) -> dict:
    return {
        "id": review.pk,
        "item": review.item_id,
        "kind": review.item.kind,
        "reviewer": review.reviewer.username,
        "action": review.action,
        "output": review.edited_output,
        "reason": review.reason,
        "note": review.note,
        "is_bulk": review.is_bulk,
        "decided_at": _iso(review.decided_at),
    }


def queue_entry_representation(item: ReviewItem, *, now) -> dict:
    """A queue row: enough to pick and filter, without the texts."""
    return {
        "id": item.pk,
        "kind": item.kind,
        "output_id": item.output_id,
        "task_type": item.task_type.name,
        "model": item.model,
        "score": round(item.score, 4),
        "queued_at": _iso(item.queued_at),
        "age_seconds": round((now - item.queued_at).total_seconds(), 1),
        "claimed_by": item.claimed_by.username if item.claimed_by_id else None,
        "lease_expires_at": _iso(item.lease_expires_at),
    }


def review_item_representation(item: ReviewItem, *, now, prior_reviews=()) -> dict:
    """A claimed item as the review page and the API show it. ``prior_reviews`` is only
    ever non-empty for an adjudication."""
    return {
        **queue_entry_representation(item, now=now),
        "is_audit": item.is_audit,
        "state": item.state,
        "output": output_for_review(item.output),
        "prior_reviews": [review_representation(r) for r in prior_reviews],
    }


class DecisionSerializer(StrictSerializer):
    action = serializers.ChoiceField(choices=Review.Action.choices)
    output = serializers.CharField(
        required=False, allow_blank=True, trim_whitespace=False, max_length=200_000
    )
    reason = serializers.CharField(required=False, allow_blank=True, max_length=50, default="")
    note = serializers.CharField(required=False, allow_blank=True, max_length=5_000, default="")


class QueueFilters(StrictSerializer):
    """The queue's filters as a claim's or a bulk decision's body may carry them (the pages'
    forms post them): typed here, their values checked by gating.api.filters.ReviewItemFilter."""

    task_type = serializers.CharField(required=False)
    model = serializers.CharField(required=False)
    score_min = serializers.FloatField(required=False)
    score_max = serializers.FloatField(required=False)
    kind = serializers.CharField(required=False)


class BulkDecisionSerializer(QueueFilters):
    action = serializers.ChoiceField(choices=[Review.Action.APPROVE, Review.Action.REJECT])
    reason = serializers.CharField(max_length=500)
    dry_run = serializers.BooleanField(default=False)


class OutputSerializer(serializers.BaseSerializer):
    def to_representation(self, instance: Output) -> dict:
        return output_representation(instance)


class TaskTypeSerializer(StrictModelSerializer):
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
