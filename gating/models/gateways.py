"""What a gateway may do beyond sending outputs: create task types by naming them.

A gateway without a GatewaySettings row has the defaults, which are the gate's behaviour
from before the settings existed: it may create task types, up to DEFAULT_TASK_TYPE_LIMIT.
"""

from django.conf import settings
from django.db import models

from gating.models.outputs import TaskType

DEFAULT_TASK_TYPE_LIMIT = 50


class GatewaySettings(models.Model):
    user = models.OneToOneField(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        primary_key=True,
        related_name="gateway_settings",
    )
    may_create_task_types = models.BooleanField(
        default=True,
        help_text="An output naming a task type that does not exist creates it. Without "
        "this, such an output is refused and an admin creates task types.",
    )
    task_type_limit = models.PositiveIntegerField(
        default=DEFAULT_TASK_TYPE_LIMIT,
        help_text="How many task types this gateway may create by naming them. Task types "
        "an admin or another gateway created do not count.",
    )

    class Meta:
        verbose_name = "gateway settings"
        verbose_name_plural = "gateway settings"

    def __str__(self) -> str:
        return f"Settings of {self.user}"

    def task_types_refused(self, names: list[str], *, created: int) -> dict[str, str]:
        """Why each of ``names`` (new task types, in the order they would be created) may
        not be created by this gateway, which has created ``created`` so far."""
        if not self.may_create_task_types:
            return {
                name: f"Task type {name!r} does not exist, and this gateway may not create "
                "task types: an admin creates it."
                for name in names
            }
        room = max(self.task_type_limit - created, 0)
        return {
            name: f"Task type {name!r} does not exist, and this gateway has created "
            f"{created} of the {self.task_type_limit} task types it may create: an admin "
            "creates it or raises the limit."
            for name in names[room:]
        }


class TaskTypeCreation(models.Model):
    """Which gateway created a task type by naming it: what its task_type_limit counts."""

    task_type = models.OneToOneField(
        TaskType, on_delete=models.CASCADE, primary_key=True, related_name="creation"
    )
    gateway = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="task_types_created"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"{self.task_type} by {self.gateway}"
