from django.contrib import admin

from gating.authentication import forget_tokens
from gating.models import ApiToken, Output, TaskModelStats, TaskType, Validator


class ValidatorInline(admin.TabularInline):
    model = Validator
    extra = 0
    fields = ["name", "weight", "is_fact_check"]


@admin.register(TaskType)
class TaskTypeAdmin(admin.ModelAdmin):
    list_display = [
        "name",
        "review_threshold",
        "approve_threshold",
        "reviewed_count",
        "in_cold_start",
    ]
    readonly_fields = ["reviewed_count", "created_at", "updated_at"]
    inlines = [ValidatorInline]

    @admin.display(boolean=True)
    def in_cold_start(self, obj):
        return obj.in_cold_start


@admin.register(TaskModelStats)
class TaskModelStatsAdmin(admin.ModelAdmin):
    list_display = ["task_type", "model", "reviewed_count", "approved_unchanged_count"]
    list_filter = ["task_type"]
    readonly_fields = ["task_type", "model", "reviewed_count", "approved_unchanged_count"]


@admin.register(Output)
class OutputAdmin(admin.ModelAdmin):
    list_display = [
        "external_id",
        "task_type",
        "model",
        "score",
        "decision",
        "status",
        "created_at",
    ]
    list_filter = ["decision", "status", "task_type"]
    search_fields = ["external_id", "model"]
    list_select_related = ["task_type"]
    show_full_result_count = False

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    list_display = ["prefix", "user", "name", "created_at", "last_used_at", "revoked_at"]
    readonly_fields = ["key_hash", "prefix", "created_at", "last_used_at"]
    fields = ["user", "name", "prefix", "key_hash", "created_at", "last_used_at", "revoked_at"]

    def has_add_permission(self, request):
        # A token made here would never be shown; use create_api_token instead.
        return False

    def save_model(self, request, obj, form, change):
        super().save_model(request, obj, form, change)
        forget_tokens()
