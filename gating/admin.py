import json

from django import forms
from django.contrib import admin, messages
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.utils.html import format_html

from gating import services, webhooks
from gating.authentication import forget_tokens
from gating.models import (
    ApiToken,
    AuditEvent,
    Output,
    Review,
    ReviewItem,
    TaskModelStats,
    TaskType,
    Validator,
    Webhook,
    WebhookAttempt,
    WebhookDelivery,
)
from gating.roles import Role


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
        "threshold_policy",
        "recommended_tier",
        "reviewed_count",
        "in_cold_start",
    ]
    readonly_fields = ["recommended_tier", "reviewed_count", "created_at", "updated_at"]
    inlines = [ValidatorInline]

    def save_model(self, request, obj, form, change):
        # Edits go through the service, so that they are audited like the API's (and the
        # threshold-drift alert sees admins' moves as well as the cycles').
        if not change:
            super().save_model(request, obj, form, change)
            return
        changes = {field: form.cleaned_data[field] for field in form.changed_data}
        if changes:
            services.task_type_update(
                task_type=TaskType.objects.get(pk=obj.pk), changes=changes, actor=request.user
            )

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


def _pretty_json(value) -> str:
    """JSON shown indented and escaped: it can hold model outputs, which are untrusted text."""
    if value is None:
        return "-"
    return format_html("<pre>{}</pre>", json.dumps(value, indent=2, ensure_ascii=False))


class WebhookAddForm(forms.ModelForm):
    url = forms.URLField(max_length=500, assume_scheme="https")

    class Meta:
        model = Webhook
        fields = ["kind", "owner", "url"]
        help_texts = {
            "owner": "Decisions: the gateway user whose outputs' decisions go here. "
            "Alerts: an admin (usually you)."
        }

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["owner"].queryset = (
            get_user_model()
            .objects.filter(groups__name__in=[Role.GATEWAY.value, Role.ADMIN.value])
            .distinct()
        )

    def clean(self):
        cleaned = super().clean()
        if cleaned.get("owner") is not None and cleaned.get("url"):
            try:
                webhooks.webhook_validate(
                    owner=cleaned["owner"], url=cleaned["url"], kind=cleaned.get("kind")
                )
            except ValidationError as exc:
                self.add_error(None, exc)
        return cleaned


@admin.register(Webhook)
class WebhookAdmin(admin.ModelAdmin):
    """Webhooks are added through webhook_register, which checks the URL and makes the
    secret; the secret is shown once, in a message, and never again. A URL is not edited:
    add the new one and deactivate or delete the old."""

    list_display = ["url", "kind", "owner", "is_active", "created_at"]
    list_filter = ["kind", "is_active", "owner"]
    search_fields = ["url", "owner__username"]
    list_select_related = ["owner"]
    actions = ["rotate_secret"]

    def get_fields(self, request, obj=None):
        if obj is None:
            return ["kind", "owner", "url"]
        return ["kind", "owner", "url", "is_active", "created_at"]

    def get_readonly_fields(self, request, obj=None):
        return [] if obj is None else ["kind", "owner", "url", "created_at"]

    def get_form(self, request, obj=None, **kwargs):
        if obj is None:
            kwargs["form"] = WebhookAddForm
        return super().get_form(request, obj, **kwargs)

    def save_form(self, request, form, change):
        if change:
            return super().save_form(request, form, change)
        hook, secret = webhooks.webhook_register(
            owner=form.cleaned_data["owner"],
            url=form.cleaned_data["url"],
            actor=request.user,
            kind=form.cleaned_data["kind"],
        )
        self._show_secret(request, hook, secret)
        return hook

    def save_model(self, request, obj, form, change):
        # A new webhook is already saved, by webhook_register in save_form.
        if change:
            webhooks.webhook_set_active(hook=obj, is_active=obj.is_active, actor=request.user)

    def save_related(self, request, form, formsets, change):
        # A webhook has nothing related to save, and an added one never went through
        # form.save(), which is what save_related would finish.
        if change:
            super().save_related(request, form, formsets, change)

    def delete_model(self, request, obj):
        webhooks.webhook_delete(hook=obj, actor=request.user)

    def delete_queryset(self, request, queryset):
        for hook in queryset:
            webhooks.webhook_delete(hook=hook, actor=request.user)

    @admin.action(description="Rotate the signing secret of the selected webhooks")
    def rotate_secret(self, request, queryset):
        for hook in queryset:
            self._show_secret(
                request, hook, webhooks.webhook_secret_rotate(hook=hook, actor=request.user)
            )

    def _show_secret(self, request, hook, secret):
        self.message_user(
            request,
            format_html(
                "Signing secret for {}: <code>{}</code>. Copy it now: it is not shown again.",
                hook.url,
                secret,
            ),
            messages.WARNING,
        )


class WebhookAttemptInline(admin.TabularInline):
    model = WebhookAttempt
    extra = 0
    fields = ["at", "status_code", "error", "duration_ms"]
    readonly_fields = fields
    can_delete = False

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False


class ReadOnlyAdmin(admin.ModelAdmin):
    """A record kept for inspection: nobody adds, edits or deletes it from the admin."""

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(WebhookDelivery)
class WebhookDeliveryAdmin(ReadOnlyAdmin):
    list_display = [
        "event_type",
        "webhook",
        "status",
        "attempt_count",
        "created_at",
        "next_attempt_at",
        "delivered_at",
    ]
    list_filter = ["status", "event_type"]
    list_select_related = ["webhook"]
    fields = [
        "webhook",
        "event_type",
        "event_id",
        "status",
        "attempt_count",
        "created_at",
        "next_attempt_at",
        "delivered_at",
        "payload_json",
    ]
    readonly_fields = fields
    inlines = [WebhookAttemptInline]
    show_full_result_count = False

    @admin.display(description="payload")
    def payload_json(self, obj):
        return _pretty_json(obj.payload)


@admin.register(AuditEvent)
class AuditEventAdmin(ReadOnlyAdmin):
    """The append-only log, read-only here too."""

    list_display = ["at", "actor", "action", "object_type", "object_id"]
    list_filter = ["action", "object_type", "actor"]
    search_fields = ["object_id"]
    date_hierarchy = "at"
    list_select_related = ["actor"]
    fields = ["at", "actor", "action", "object_type", "object_id", "before_json", "after_json"]
    readonly_fields = fields
    show_full_result_count = False

    @admin.display(description="before")
    def before_json(self, obj):
        return _pretty_json(obj.before)

    @admin.display(description="after")
    def after_json(self, obj):
        return _pretty_json(obj.after)


@admin.register(ReviewItem)
class ReviewItemAdmin(ReadOnlyAdmin):
    list_display = ["id", "kind", "state", "task_type", "model", "score", "queued_at", "claimed_by"]
    list_filter = ["kind", "state", "is_audit", "task_type"]
    list_select_related = ["task_type", "claimed_by"]
    search_fields = ["output__external_id"]
    raw_id_fields = ["output"]
    show_full_result_count = False


@admin.register(Review)
class ReviewAdmin(ReadOnlyAdmin):
    list_display = ["decided_at", "reviewer", "action", "reason", "is_bulk", "output"]
    list_filter = ["action", "is_bulk", "reason"]
    list_select_related = ["reviewer", "output"]
    search_fields = ["output__external_id", "reviewer__username"]
    raw_id_fields = ["output", "item"]
    date_hierarchy = "decided_at"
    show_full_result_count = False
