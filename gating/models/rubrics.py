"""A task type's rubric: what reviewers read and score. Each edit is a new version; a review
keeps the version it was scored against."""

from django.conf import settings
from django.db import models


class Rubric(models.Model):
    """One version of a task type's rubric, never changed once saved (gating.rubrics)."""

    task_type = models.ForeignKey(
        "gating.TaskType", on_delete=models.CASCADE, related_name="rubrics", db_index=False
    )
    version = models.PositiveIntegerField()
    # Markdown as the admin wrote it; shown rendered without raw HTML and sanitised.
    instructions = models.TextField(blank=True)
    # The score dimensions, as gating.rubrics.dimensions_clean leaves them.
    dimensions = models.JSONField(default=list)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, null=True, related_name="+"
    )
    created_at = models.DateTimeField()

    class Meta:
        ordering = ["task_type", "-version"]
        constraints = [
            # Also the index that finds a task type's rubric in force (its highest version).
            models.UniqueConstraint(
                fields=["task_type", "version"], name="rubric_task_type_version"
            ),
        ]

    def __str__(self) -> str:
        return f"Rubric v{self.version} of {self.task_type_id}"
