from django.contrib import admin, messages
from django.http import HttpResponseRedirect
from django.urls import path, reverse
from django.utils.html import format_html

from gating.admin import ReadOnlyAdmin
from gating.roles import RUN_CYCLES
from learning import services
from learning.models import (
    Alert,
    CycleRun,
    PairAgreement,
    ReviewerReliability,
    ThresholdChange,
    TierAssessment,
    ValidatorAssessment,
)


@admin.register(CycleRun)
class CycleRunAdmin(ReadOnlyAdmin):
    list_display = ["kind", "window_end", "status", "attempts", "started_at", "finished_at"]
    list_filter = ["kind", "status"]
    date_hierarchy = "window_end"
    readonly_fields = [f.name for f in CycleRun._meta.fields]
    change_list_template = "admin/learning/cyclerun/change_list.html"

    def get_urls(self):
        return [
            path(
                "run/<str:kind>/",
                self.admin_site.admin_view(self.run_now),
                name="learning_cyclerun_run",
            ),
            *super().get_urls(),
        ]

    def changelist_view(self, request, extra_context=None):
        extra_context = {
            **(extra_context or {}),
            "cycle_kinds": CycleRun.Kind.choices,
            "can_run": request.user.has_perm(RUN_CYCLES),
        }
        return super().changelist_view(request, extra_context)

    def run_now(self, request, kind):
        """Queue the cycle for the current window on the worker ("run now")."""
        back = HttpResponseRedirect(reverse("admin:learning_cyclerun_changelist"))
        if request.method != "POST" or not request.user.has_perm(RUN_CYCLES):
            messages.error(request, "Running a cycle needs the run_cycle permission and a POST.")
            return back
        if kind not in CycleRun.Kind.values:
            messages.error(request, f"No such cycle: {kind}.")
            return back
        services.cycle_queue(kind)
        messages.success(request, f"The {kind} cycle is queued; it appears here when done.")
        return back


@admin.register(ValidatorAssessment)
class ValidatorAssessmentAdmin(ReadOnlyAdmin):
    list_display = [
        "validator",
        "task_type",
        "cycle",
        "n",
        "accuracy",
        "importance",
        "old_weight",
        "new_weight",
    ]
    list_filter = ["validator__task_type", "validator__name"]
    list_select_related = ["validator__task_type", "cycle"]

    @admin.display(ordering="validator__task_type__name")
    def task_type(self, obj):
        return obj.validator.task_type


@admin.register(ThresholdChange)
class ThresholdChangeAdmin(ReadOnlyAdmin):
    list_display = ["at", "task_type", "which", "policy", "old_value", "new_value", "n", "bound"]
    list_filter = ["task_type", "which", "policy"]
    readonly_fields = [f.name for f in ThresholdChange._meta.fields]


@admin.register(TierAssessment)
class TierAssessmentAdmin(ReadOnlyAdmin):
    list_display = ["cycle", "task_type", "rank", "model", "tier", "reviews", "adjusted_score"]
    list_filter = ["task_type", "model"]


@admin.register(ReviewerReliability)
class ReviewerReliabilityAdmin(ReadOnlyAdmin):
    list_display = ["cycle", "reviewer", "n", "reliability", "agreement_with_gate"]
    list_filter = ["reviewer"]


@admin.register(PairAgreement)
class PairAgreementAdmin(ReadOnlyAdmin):
    list_display = ["cycle", "first", "second", "n", "raw_agreement", "kappa"]


@admin.register(Alert)
class AlertAdmin(ReadOnlyAdmin):
    list_display = ["rule", "subject", "state", "value", "limit", "first_seen", "last_seen", "go"]
    list_filter = ["rule", "state"]
    readonly_fields = [f.name for f in Alert._meta.fields]

    @admin.display(description="chart")
    def go(self, obj):
        return format_html('<a href="{}">open</a>', obj.link) if obj.link else ""
