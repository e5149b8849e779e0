"""Reads of the gate's data."""

from django.contrib.auth.models import AbstractUser
from django.db.models import QuerySet

from gating.models import Output


def outputs_visible_to(user: AbstractUser) -> QuerySet[Output]:
    """Staff roles see every output; a gateway user sees only the outputs it submitted."""
    outputs = Output.objects.select_related("task_type")
    if user.has_perm("gating.view_all_outputs"):
        return outputs
    return outputs.filter(source=user)
