"""A thread of comments on an output, between its reviewers and leads."""

from django.conf import settings
from django.db import models

# One declared limit, which the service checks, the API documents and the forms carry.
COMMENT_MAX_CHARS = 2_000


class Comment(models.Model):
    # No index of its own: the (output, created_at) index below leads with it.
    output = models.ForeignKey(
        "gating.Output", on_delete=models.CASCADE, related_name="comments", db_index=False
    )
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="comments"
    )
    # Plain text, untrusted: shown escaped, never as HTML or Markdown.
    text = models.TextField()
    created_at = models.DateTimeField()

    class Meta:
        ordering = ["created_at", "id"]
        # The thread of one output, oldest first: the only query that reads comments.
        indexes = [models.Index(fields=["output", "created_at"], name="comment_output_created")]

    def __str__(self) -> str:
        return f"Comment {self.pk} on output {self.output_id} by {self.author}"
