import re

from django import forms
from django.contrib import admin, messages
from django.contrib.auth import get_user_model
from django.contrib.auth.admin import GroupAdmin, UserAdmin
from django.contrib.auth.forms import AdminUserCreationForm, UserChangeForm
from django.contrib.auth.models import Group
from django.core.exceptions import PermissionDenied, ValidationError
from django.db.models import Count
from django.http import HttpResponseRedirect
from django.utils.html import format_html

from gating import gate_settings, services, users, webhooks
from gating.authentication import forget_tokens
from gating.exceptions import TaskTypeInvalid
from gating.formatting import pretty_json
from gating.forms import scorer_choices, setting_form_field
from gating.models import (
    ApiToken,
    AuditEvent,
    GatewaySettings,
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
from gating.roles import Role, user_role
from gating.submissions import NAME_PATTERN, NAME_REFUSED


def _names_as_gateways_send_them(form: forms.ModelForm) -> None:
    """A task type's or validator's name typed here must be one a gateway can send
    (submissions.NAME_PATTERN): refused as typed, not trimmed, like the ingest's."""
    if field := form.fields.get("name"):
        field.strip = False
        field.validators.append(_name_as_gateways_send_it)


def _name_as_gateways_send_it(value: str) -> None:
    # fullmatch: re's $ also matches before a final newline.
    if not re.fullmatch(NAME_PATTERN, value):
        raise ValidationError(f"The name {NAME_REFUSED}.", code="name")


class ValidatorInlineForm(forms.ModelForm):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        _names_as_gateways_send_them(self)

    def clean_weight(self):
        weight = self.cleaned_data["weight"]
        if problem := services.weight_problem(weight):
            raise ValidationError(problem)
        return weight


class ValidatorInline(admin.TabularInline):
    model = Validator
    form = ValidatorInlineForm
    extra = 0
    fields = ["name", "weight", "is_fact_check"]


class TaskTypeAdminForm(forms.ModelForm):
    reason = forms.CharField(
        required=False,
        max_length=services.REASON_MAX_LENGTH,
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text="Why the change is made: kept in the audit log with it.",
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        _names_as_gateways_send_them(self)
        # Each setting as the thresholds page and the API show it: words, meaning, type.
        for setting in gate_settings.SETTINGS:
            if setting.name in self.fields:
                choices = scorer_choices(self.instance.scorer) if setting.name == "scorer" else None
                declared = setting_form_field(setting, choices=choices)
                # A new task type's form starts from the model's defaults.
                declared.initial = self.fields[setting.name].initial
                self.fields[setting.name] = declared

    def clean(self):
        cleaned = super().clean()
        if self.instance.pk is None:
            # A new task type: its values are checked against the defaults.
            stored = self.instance
            changes = {name: cleaned[name] for name in cleaned if name in services.GATE_SETTINGS}
        else:
            # Locked until the admin's post commits (ModelAdmin posts in one transaction),
            # so the rules are checked on the row the edit will change, not a stale copy;
            # as the service locks it, without holding up new outputs.
            stored = TaskType.objects.select_for_update(no_key=True).get(pk=self.instance.pk)
            changes = {name: cleaned[name] for name in self.changed_data if name in cleaned}
            changes.pop("reason", None)
            # Who sees the task type is not a setting of the gate (services.task_type_share).
            changes.pop("shared", None)
            # The form cannot tell whether the inline's weights changed: every post asks why.
            reason = cleaned.get("reason", "")
            if problem := services.reason_problem(reason, services.EditSource.ADMIN):
                self.add_error("reason", problem)
        for name, problem in services.gate_settings_problems(stored, changes).items():
            self.add_error(name if name in self.fields else None, problem)
        return cleaned


@admin.register(TaskType)
class TaskTypeAdmin(admin.ModelAdmin):
    """An edit of a task type's settings and its validators' weights goes through the gate
    settings service, like the API's and the cycles': checked in words next to each field,
    audited with its reason, and applied to the gate at once."""

    form = TaskTypeAdminForm
    list_display = [
        "name",
        "review_threshold",
        "approve_threshold",
        "threshold_policy",
        "scorer",
        "shared",
        "recommended_tier",
        "reviewed_count",
        "in_cold_start",
    ]
    inlines = [ValidatorInline]

    def get_fields(self, request, obj=None):
        fields = super().get_fields(request, obj)
        return fields if obj is not None else [f for f in fields if f != "reason"]

    def get_readonly_fields(self, request, obj=None):
        readonly = ["recommended_tier", "reviewed_count", "created_at", "updated_at"]
        # Gateways name the task type in every output: renamed, their next output would
        # create another one with the default settings.
        return readonly if obj is None else ["name", *readonly]

    def changeform_view(self, request, object_id=None, form_url="", extra_context=None):
        try:
            return super().changeform_view(request, object_id, form_url, extra_context)
        except TaskTypeInvalid as refused:
            # A rule the form could not check (a validator deleted meanwhile): the post's
            # transaction rolled back, so nothing changed.
            self.message_user(
                request, f"Nothing was changed: {refused.field}: {refused}", messages.ERROR
            )
            return HttpResponseRedirect(request.get_full_path())

    def save_model(self, request, obj, form, change):
        # An edit is saved in save_related, together with the validators' weights.
        if not change:
            super().save_model(request, obj, form, change)

    def save_related(self, request, form, formsets, change):
        if change and "shared" in form.changed_data:
            services.task_type_share(
                task_type=form.instance, shared=form.cleaned_data["shared"], actor=request.user
            )
        if change:
            services.gate_settings_change(
                task_type=form.instance,
                changes={
                    name: form.cleaned_data[name]
                    for name in form.changed_data
                    if name in services.GATE_SETTINGS
                },
                weights=_weights_edited(formsets),
                actor=request.user,
                reason=form.cleaned_data["reason"],
                source=services.EditSource.ADMIN,
            )
        super().save_related(request, form, formsets, change)

    def save_formset(self, request, form, formset, change):
        # The service has saved the weights of existing validators (save_related); the
        # formset saves the rest: names, fact checks, added and deleted validators.
        formset.save(commit=False)
        for validator in formset.deleted_objects:
            validator.delete()
        for validator in formset.new_objects:
            validator.save()
        for validator, changed in formset.changed_objects:
            if rest := [name for name in changed if name != "weight"]:
                validator.save(update_fields=rest)

    @admin.display(boolean=True)
    def in_cold_start(self, obj):
        return obj.in_cold_start


def _weights_edited(formsets) -> dict[str, float]:
    """The weights changed in the validators inline, by each validator's stored name (a
    rename is saved after them)."""
    return {
        form.initial["name"]: form.cleaned_data["weight"]
        for formset in formsets
        if formset.model is Validator
        for form in formset.initial_forms
        if "weight" in form.changed_data and not form.cleaned_data.get("DELETE")
    }


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
    # A token's user is fixed: moving a token to another account would hand whoever holds
    # it that account's role. Revoke it and create another instead.
    readonly_fields = ["user", "key_hash", "prefix", "created_at", "last_used_at"]
    fields = ["user", "name", "prefix", "key_hash", "created_at", "last_used_at", "revoked_at"]

    def has_add_permission(self, request):
        # A token made here would never be shown; use create_api_token instead.
        return False

    def save_model(self, request, obj, form, change):
        super().save_model(request, obj, form, change)
        forget_tokens()


def _json_block(value) -> str:
    """JSON shown indented and escaped: it can hold model outputs, which are untrusted text."""
    if value is None:
        return "-"
    return format_html("<pre>{}</pre>", pretty_json(value))


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

    list_display = ["target", "kind", "owner", "is_active", "created_at"]
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

    @admin.display(description="URL", ordering="url")
    def target(self, obj):
        # The full URL only in the webhook's own editor: lists are read over shoulders.
        return obj.url_redacted

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
                hook.url_redacted,
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
        return _json_block(obj.payload)


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
        return _json_block(obj.before)

    @admin.display(description="after")
    def after_json(self, obj):
        return _json_block(obj.after)


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
    list_display = ["decided_at", "reviewer", "action", "style_only", "reason", "is_bulk", "output"]
    list_filter = ["action", "style_only", "is_bulk", "reason"]
    list_select_related = ["reviewer", "output"]
    search_fields = ["output__external_id", "reviewer__username"]
    raw_id_fields = ["output", "item"]
    date_hierarchy = "decided_at"
    show_full_result_count = False


# --------------------------------------------------------------------------- users and roles
# Access is given as one role, through gating.users, which decides who may give what and
# records every change in the audit log. Django's raw fields (groups, permissions, the
# superuser and staff flags) are never edited here.

ROLE_RULE = (
    "One role per account. An admin gives gateway, reviewer or lead to accounts that are "
    "neither admins nor superusers. Only a superuser gives the admin role or the superuser "
    "flag, or changes an admin's or a superuser's account. Nobody changes their own role. "
    "Every change is in the audit log."
)
RAW_ACCESS_FIELDS = {"is_superuser", "is_staff", "groups", "user_permissions"}


class AccessFormMixin(forms.Form):
    """The role choice (and, for superusers, the superuser flag) of the user editor,
    offering only what the signed-in user may give."""

    role = forms.ChoiceField(label="Role", required=False, help_text=ROLE_RULE)
    actor = None  # the signed-in user: UserAccessAdmin.get_form sets it for each request

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        user = self.instance
        current = user_role(user) if user.pk else None
        offered = users.roles_grantable(actor=self.actor, user=user)
        field = self.fields["role"]
        field.choices = [("", "No role")] + [(r.value, r.value) for r in offered or Role]
        field.initial = current.value if current else ""
        # An account's own access is shown but not changed (gating.users refuses it too).
        field.disabled = not offered

    def clean_role(self) -> Role | None:
        value = self.cleaned_data["role"]
        return Role(value) if value else None


class UserAddForm(AccessFormMixin, AdminUserCreationForm):
    pass


class UserAccessChangeForm(AccessFormMixin, UserChangeForm):
    superuser = forms.BooleanField(
        label="Superuser",
        required=False,
        help_text="Every permission, whatever the role. Only a superuser gives it.",
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if not self.actor.is_superuser:
            del self.fields["superuser"]
            return
        refusal = users.superuser_change_refusal(actor=self.actor, user=self.instance)
        self.fields["superuser"].initial = self.instance.is_superuser
        self.fields["superuser"].disabled = refusal is not None


admin.site.unregister(get_user_model())


@admin.register(get_user_model())
class UserAccessAdmin(UserAdmin):
    form = UserAccessChangeForm
    add_form = UserAddForm
    add_fieldsets = [
        (
            None,
            {
                "classes": ["wide"],
                "fields": ["username", "usable_password", "password1", "password2", "role"],
            },
        )
    ]
    readonly_fields = ["last_login", "date_joined"]
    list_display = ["username", "email", "first_name", "last_name", "role", "is_active"]

    def get_fieldsets(self, request, obj=None):
        if obj is None:
            return self.add_fieldsets
        access = (
            ["role", "superuser", "is_active"]
            if request.user.is_superuser
            else ["role", "is_active"]
        )
        return [
            (None, {"fields": ["username", "password"]}),
            ("Personal info", {"fields": ["first_name", "last_name", "email"]}),
            ("Access", {"fields": access}),
            ("Important dates", {"fields": ["last_login", "date_joined"]}),
        ]

    def get_form(self, request, obj=None, **kwargs):
        form = super().get_form(request, obj, **kwargs)
        return type(form.__name__, (form,), {"actor": request.user})

    def get_queryset(self, request):
        return super().get_queryset(request).prefetch_related("groups")

    def has_change_permission(self, request, obj=None):
        if not super().has_change_permission(request, obj):
            return False
        return obj is None or users.account_editable_by(actor=request.user, user=obj)

    def changeform_view(self, request, object_id=None, form_url="", extra_context=None):
        if request.method == "POST" and RAW_ACCESS_FIELDS & set(request.POST):
            # The editor never offers these fields: a post that carries them was made by hand.
            raise PermissionDenied
        with users.access_changes_by(request.user):
            return super().changeform_view(request, object_id, form_url, extra_context)

    def save_model(self, request, obj, form, change):
        super().save_model(request, obj, form, change)
        if "role" in form.changed_data:
            users.user_role_set(user=obj, role=form.cleaned_data["role"], actor=request.user)
        if "superuser" in form.changed_data:
            users.user_superuser_set(
                user=obj, is_superuser=form.cleaned_data["superuser"], actor=request.user
            )

    @admin.display(description="role")
    def role(self, obj):
        role = user_role(obj)
        return role.value if role else "-"


admin.site.unregister(Group)


@admin.register(Group)
class RoleGroupAdmin(GroupAdmin):
    """The roles' groups, read-only: gating/roles.py defines them and ensure_roles puts them
    back after every migrate, so an edit here would be undone without a word."""

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(GatewaySettings)
class GatewaySettingsAdmin(admin.ModelAdmin):
    """Whether and how many task types each gateway may create by naming them; a gateway
    without a row has the defaults. A gateway's settings belong to its account, so whoever
    may see or change users may see or change them. Edits go through the service, which
    audits them; deleting a row is setting the defaults, so it is not offered."""

    list_display = ["user", "may_create_task_types", "task_type_limit", "task_types_created"]
    fields = ["user", "may_create_task_types", "task_type_limit"]
    list_select_related = ["user"]

    def get_queryset(self, request):
        return super().get_queryset(request).annotate(created=Count("user__task_types_created"))

    def get_readonly_fields(self, request, obj=None):
        return ["user"] if obj is not None else []

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        if db_field.name == "user":
            kwargs["queryset"] = get_user_model().objects.filter(groups__name=Role.GATEWAY.value)
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    def has_view_permission(self, request, obj=None):
        return request.user.has_perm("auth.view_user")

    def has_add_permission(self, request):
        return request.user.has_perm("auth.change_user")

    def has_change_permission(self, request, obj=None):
        return request.user.has_perm("auth.change_user")

    def has_delete_permission(self, request, obj=None):
        return False

    def save_model(self, request, obj, form, change):
        services.gateway_settings_set(
            user=obj.user,
            may_create_task_types=obj.may_create_task_types,
            task_type_limit=obj.task_type_limit,
            actor=request.user,
        )

    @admin.display(description="task types created", ordering="created")
    def task_types_created(self, obj):
        return obj.created
