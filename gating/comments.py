"""Comments on an output: a thread between its reviewers, leads and admins.

The text is untrusted plain text: stored as written (stripped), shown escaped only.
"""

from __future__ import annotations

from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from gating.audit import audit_record
from gating.exceptions import FieldInvalid
from gating.models import COMMENT_MAX_CHARS, AuditEvent, Comment, Output


def comment_text_clean(text) -> str:
    """The text as stored: stripped of surrounding whitespace, 1 to COMMENT_MAX_CHARS
    characters, no NUL. Raises FieldInvalid naming ``text`` otherwise."""
    if not isinstance(text, str):
        raise FieldInvalid("text", "Must be text.")
    # PostgreSQL's text cannot hold NUL: refused here, by name, rather than as a 500.
    if "\x00" in text:
        raise FieldInvalid("text", "Must not contain NUL (\\u0000) characters.")
    cleaned = text.strip()
    if not cleaned:
        raise FieldInvalid("text", "Write a comment: it must not be empty.")
    if len(cleaned) > COMMENT_MAX_CHARS:
        raise FieldInvalid(
            "text", f"At most {COMMENT_MAX_CHARS} characters; this one has {len(cleaned)}."
        )
    return cleaned


def comment_add(*, output: Output, author, text: str) -> Comment:
    """Add a comment to the output's thread, with its audit event, both or neither."""
    cleaned = comment_text_clean(text)
    now = timezone.now()
    with transaction.atomic():
        comment = Comment.objects.create(output=output, author=author, text=cleaned, created_at=now)
        # The audit log is an admin's view of who did what: the comment's id and length say
        # that, and its words stay in the thread, where only those who may read it see them.
        audit_record(
            actor=author,
            action=AuditEvent.Action.COMMENT,
            obj=output,
            after={"comment": comment.pk, "length": len(cleaned)},
            at=now,
        )
    return comment


def comments_of(output: Output) -> QuerySet[Comment]:
    """The output's thread, oldest first."""
    return (
        Comment.objects.filter(output=output).select_related("author").order_by("created_at", "id")
    )
