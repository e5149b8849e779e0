"""The four roles, as Django groups with permissions.

Each role includes the one before it (reviewer ⊂ lead ⊂ admin); the gateway role is
separate, for the LLM gateway's service users.
"""

from enum import StrEnum
from functools import wraps

from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import Group, Permission
from django.core.exceptions import PermissionDenied

# The abilities the pages and the API check by name, beyond a model's own view/change
# permissions: granted below, role by role.
WATCH_LEARNING = "learning.view_alert"  # the monitoring pages, alerts, downloads (leads up)
ACKNOWLEDGE_ALERTS = "learning.acknowledge_alert"
RUN_CYCLES = "learning.run_cycle"  # admins


def page_for(permission: str):
    """A page's access: anonymous visitors go to the login page; a signed-in role without
    ``permission`` gets 403, whose page (dashboard.views.permission_denied) names the roles
    that may open it."""

    def decorator(view):
        @wraps(view)
        def guarded(request, *args, **kwargs):
            if not request.user.has_perm(permission):
                raise PermissionDenied(refusal(permission))
            return view(request, *args, **kwargs)

        return login_required(guarded)

    return decorator


def roles_with(permission: str) -> list["Role"]:
    """The roles granted ``permission``, the weakest first."""
    return [role for role in reversed(_STRONGEST_FIRST) if permission in ROLE_PERMISSIONS[role]]


def refusal(permission: str) -> str:
    """Why a signed-in user without ``permission`` is refused, in words: who may."""
    roles = [f"{role.value}s" for role in roles_with(permission)]
    if not roles:
        return "No role may do this."
    who = roles[0] if len(roles) == 1 else ", ".join(roles[:-1]) + " and " + roles[-1]
    return f"This is for {who}."


class Role(StrEnum):
    GATEWAY = "gateway"
    REVIEWER = "reviewer"
    LEAD = "lead"
    ADMIN = "admin"


_REVIEWER = {
    "gating.view_output",
    "gating.view_all_outputs",
    "gating.view_tasktype",
    "gating.view_reviewitem",
    "gating.review_items",
    "gating.view_comment",
    "gating.add_comment",
    "gating.view_rubric",
}
_LEAD = _REVIEWER | {
    "gating.adjudicate_items",
    "gating.bulk_decide",
    WATCH_LEARNING,
    ACKNOWLEDGE_ALERTS,
    "learning.view_cyclerun",
    "learning.view_thresholdchange",
    "learning.view_validatorassessment",
    "learning.view_tierassessment",
    "learning.view_reviewerreliability",
    "learning.view_pairagreement",
    # Datasets of reviewed outputs (learning.datasets): texts of every gateway's outputs,
    # to be exported in bulk, so not for reviewers.
    "learning.view_dataset",
    "learning.add_dataset",
    "learning.change_dataset",
}
_ADMIN = _LEAD | {
    "gating.change_tasktype",
    "gating.add_rubric",
    "gating.view_validator",
    "gating.change_validator",
    "gating.view_auditevent",
    "gating.view_review",
    "gating.view_webhook",
    "gating.add_webhook",
    "gating.change_webhook",
    "gating.delete_webhook",
    "gating.view_webhookdelivery",
    "gating.view_webhookattempt",
    "auth.view_user",
    "auth.add_user",
    "auth.change_user",
    RUN_CYCLES,
    "django_celery_beat.view_periodictask",
    "django_celery_beat.change_periodictask",
    "django_celery_beat.view_crontabschedule",
    "django_celery_beat.add_crontabschedule",
    "django_celery_beat.change_crontabschedule",
    "django_celery_beat.view_intervalschedule",
    "django_celery_beat.add_intervalschedule",
    "django_celery_beat.change_intervalschedule",
}

ROLE_PERMISSIONS: dict[Role, set[str]] = {
    Role.GATEWAY: {"gating.add_output", "gating.view_output", "gating.view_tasktype"},
    Role.REVIEWER: _REVIEWER,
    Role.LEAD: _LEAD,
    Role.ADMIN: _ADMIN,
}


_STRONGEST_FIRST = [Role.ADMIN, Role.LEAD, Role.REVIEWER, Role.GATEWAY]


def user_role(user) -> Role | None:
    """The user's role: the role group it belongs to, the strongest if a shell put it in
    more than one; None for a user in none (a bare superuser, say)."""
    names = {group.name for group in user.groups.all()}
    return next((role for role in _STRONGEST_FIRST if role.value in names), None)


def ensure_roles(**kwargs) -> None:
    """Create or refresh each role's group so that it has exactly its permissions."""
    for role, codenames in ROLE_PERMISSIONS.items():
        group, _ = Group.objects.get_or_create(name=role.value)
        wanted = []
        for dotted in codenames:
            app_label, codename = dotted.split(".")
            wanted.extend(
                Permission.objects.filter(content_type__app_label=app_label, codename=codename)
            )
        group.permissions.set(wanted)
