"""Rubrics: a task type's instructions for reviewers and the dimensions they score.

A rubric is versioned: an edit saves a new version and never changes an old one, so that a
review's scores are always read against the dimensions they were given for. The rules of a
dimension and of a score live here, and only here: the API, the admin's page and the
review page all come through these functions.

The instructions are Markdown written by admins, shown to every reviewer: rendered with
raw HTML off, then sanitised (nh3), so that a pasted script or ``javascript:`` link cannot
run in a reviewer's session.
"""

from __future__ import annotations

import math
import re
from enum import StrEnum

import nh3
from django.db import transaction
from django.utils import timezone
from markdown_it import MarkdownIt

from gating.audit import audit_record
from gating.exceptions import FieldInvalid
from gating.models import AuditEvent, Rubric, TaskType

INSTRUCTIONS_MAX_CHARS = 20_000
MAX_DIMENSIONS = 12
LABEL_MAX_CHARS = 80
HELP_MAX_CHARS = 500
MAX_CHOICES = 10
CHOICE_MAX_CHARS = 40
# A numeric dimension's bounds: a scale people score on, not a measurement.
NUMBER_LIMIT = 1_000_000
NAME_PATTERN = re.compile(r"[a-z][a-z0-9_]{0,39}\Z")


class DimensionKind(StrEnum):
    NUMERIC = "numeric"
    CATEGORICAL = "categorical"
    BOOLEAN = "boolean"


_COMMON_KEYS = {"name", "label", "kind", "required", "help"}
KEYS = {
    DimensionKind.NUMERIC: _COMMON_KEYS | {"minimum", "maximum"},
    DimensionKind.CATEGORICAL: _COMMON_KEYS | {"choices"},
    DimensionKind.BOOLEAN: _COMMON_KEYS,
}


# --------------------------------------------------------------------------- pure rules


def _is_number(value) -> bool:
    # JSON's true is not 1 here: bool is a subclass of int in Python.
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _text(value, field: str, *, max_chars: int, required: bool = True) -> str:
    if not isinstance(value, str):
        raise FieldInvalid(field, "Must be text.")
    if "\x00" in value:
        raise FieldInvalid(field, "Must not contain NUL (\\u0000) characters.")
    value = value.strip()
    if required and not value:
        raise FieldInvalid(field, "Must not be empty.")
    if len(value) > max_chars:
        raise FieldInvalid(field, f"At most {max_chars} characters; this has {len(value)}.")
    return value


def dimension_clean(raw, at: str) -> dict:
    """One dimension as stored, or FieldInvalid naming the key at fault (``at`` is the
    dimension's place, as "dimensions[2]")."""
    if not isinstance(raw, dict):
        raise FieldInvalid(at, "Must be an object with name, label and kind.")
    kind = raw.get("kind")
    if kind not in DimensionKind.__members__.values():
        raise FieldInvalid(f"{at}.kind", f"Must be one of: {', '.join(DimensionKind)}.")
    kind = DimensionKind(kind)
    if unknown := sorted(set(raw) - KEYS[kind]):
        raise FieldInvalid(
            f"{at}.{unknown[0]}",
            f"Not a key of a {kind} dimension; its keys are: {', '.join(sorted(KEYS[kind]))}.",
        )
    name = raw.get("name")
    if not isinstance(name, str) or not NAME_PATTERN.match(name):
        raise FieldInvalid(
            f"{at}.name",
            "Must be 1 to 40 lowercase letters, digits or underscores, starting with a letter.",
        )
    required = raw.get("required", False)
    if not isinstance(required, bool):
        raise FieldInvalid(f"{at}.required", "Must be true or false.")
    dimension = {
        "name": name,
        "label": _text(raw.get("label"), f"{at}.label", max_chars=LABEL_MAX_CHARS),
        "kind": kind.value,
        "required": required,
        "help": _text(raw.get("help", ""), f"{at}.help", max_chars=HELP_MAX_CHARS, required=False),
    }
    if kind is DimensionKind.NUMERIC:
        for key in ("minimum", "maximum"):
            value = raw.get(key)
            if not _is_number(value) or abs(value) > NUMBER_LIMIT:
                raise FieldInvalid(
                    f"{at}.{key}", f"Must be a number from {-NUMBER_LIMIT:,} to {NUMBER_LIMIT:,}."
                )
            dimension[key] = value
        if dimension["minimum"] >= dimension["maximum"]:
            raise FieldInvalid(f"{at}.maximum", "Must be above the minimum.")
    elif kind is DimensionKind.CATEGORICAL:
        choices = raw.get("choices")
        if not isinstance(choices, list) or not 2 <= len(choices) <= MAX_CHOICES:
            raise FieldInvalid(f"{at}.choices", f"Must be a list of 2 to {MAX_CHOICES} choices.")
        cleaned = [
            _text(c, f"{at}.choices[{i}]", max_chars=CHOICE_MAX_CHARS)
            for i, c in enumerate(choices)
        ]
        if len(set(cleaned)) != len(cleaned):
            raise FieldInvalid(f"{at}.choices", "Each choice must be listed once.")
        dimension["choices"] = cleaned
    return dimension


def dimensions_clean(raw) -> list[dict]:
    """The dimensions as stored, in the order given, or FieldInvalid naming the one at fault."""
    if not isinstance(raw, list):
        raise FieldInvalid("dimensions", "Must be a list of dimensions.")
    if len(raw) > MAX_DIMENSIONS:
        raise FieldInvalid("dimensions", f"At most {MAX_DIMENSIONS} dimensions.")
    dimensions = [dimension_clean(d, f"dimensions[{i}]") for i, d in enumerate(raw)]
    names = [d["name"] for d in dimensions]
    for i, name in enumerate(names):
        if name in names[:i]:
            raise FieldInvalid(f"dimensions[{i}].name", f'"{name}" is named twice.')
    return dimensions


def instructions_clean(raw) -> str:
    return _text(raw, "instructions", max_chars=INSTRUCTIONS_MAX_CHARS, required=False)


def score_problem(dimension: dict, value) -> str | None:
    """Why ``value`` is not a score of ``dimension``, or None. Types are JSON's, strictly."""
    kind = dimension["kind"]
    if kind == DimensionKind.NUMERIC:
        low, high = dimension["minimum"], dimension["maximum"]
        if not _is_number(value) or not low <= value <= high:
            return f"Must be a number from {low:g} to {high:g}."
    elif kind == DimensionKind.CATEGORICAL:
        if not isinstance(value, str) or value not in dimension["choices"]:
            return f"Must be one of: {', '.join(dimension['choices'])}."
    elif not isinstance(value, bool):
        return "Must be true or false."
    return None


def scores_clean(dimensions: list[dict], scores) -> dict:
    """The scores as stored, in the rubric's order, or FieldInvalid naming the dimension at
    fault: an unknown one, a value of the wrong type or range, or a required one missing.
    An optional dimension left out (or null) is not stored."""
    if not isinstance(scores, dict):
        raise FieldInvalid("scores", "Must be an object of dimension names and values.")
    names = {d["name"] for d in dimensions}
    if unknown := sorted(set(scores) - names):
        known = ", ".join(d["name"] for d in dimensions) or "none: this task type has no rubric"
        raise FieldInvalid(
            f"scores.{unknown[0]}", f"Not a dimension of the rubric; its dimensions: {known}."
        )
    cleaned = {}
    for dimension in dimensions:
        name = dimension["name"]
        value = scores.get(name)
        if value is None:
            if dimension["required"]:
                raise FieldInvalid(f"scores.{name}", f"Required: score {dimension['label']}.")
            continue
        if problem := score_problem(dimension, value):
            raise FieldInvalid(f"scores.{name}", problem)
        cleaned[name] = value
    return cleaned


_MARKDOWN = MarkdownIt("commonmark", {"html": False}).enable("table")
# nh3's safe tags, less images: an image in the instructions would be fetched from wherever
# it points by every reviewer's browser, telling that host who reviews and when.
_TAGS = nh3.ALLOWED_TAGS - {"img"}


def instructions_html(instructions: str) -> str:
    """The instructions as HTML safe to put in a page: Markdown without raw HTML, sanitised
    again by nh3 (links get rel="noopener noreferrer", no script or event attribute
    survives, and no image is loaded)."""
    return nh3.clean(_MARKDOWN.render(instructions), tags=_TAGS)


# --------------------------------------------------------------------------- services


def review_scores(review) -> dict:
    """A review's rubric version and scores, as the API, webhooks and audit log carry them."""
    version = review.rubric.version if review.rubric_id is not None else None
    return {"rubric_version": version, "scores": review.scores}


def rubric_in_force(task_type_id: int) -> Rubric | None:
    """The task type's latest rubric version, or None if it has none."""
    return Rubric.objects.filter(task_type_id=task_type_id).order_by("-version").first()


def rubrics_in_force(task_type_ids) -> dict[int, Rubric]:
    """The rubric in force of each task type that has one."""
    return {pk: rubric for pk in set(task_type_ids) if (rubric := rubric_in_force(pk)) is not None}


def _audit_view(rubric: Rubric | None) -> dict | None:
    if rubric is None:
        return None
    return {
        "version": rubric.version,
        "instructions": rubric.instructions,
        "dimensions": rubric.dimensions,
    }


def rubric_save(
    *, task_type: TaskType, instructions, dimensions, actor, now=None
) -> tuple[Rubric, bool]:
    """Save the task type's rubric as its next version, audited, and return it with True; or,
    if nothing differs from the version in force, return that with False and store
    nothing. Raises FieldInvalid naming the field at fault."""
    instructions = instructions_clean(instructions)
    dimensions = dimensions_clean(dimensions)
    now = now or timezone.now()
    with transaction.atomic():
        # Versions of one task type are numbered one after another.
        TaskType.objects.select_for_update().filter(pk=task_type.pk).first()
        current = rubric_in_force(task_type.pk)
        if (
            current is not None
            and current.instructions == instructions
            and current.dimensions == dimensions
        ):
            return current, False
        rubric = Rubric.objects.create(
            task_type=task_type,
            version=current.version + 1 if current else 1,
            instructions=instructions,
            dimensions=dimensions,
            created_by=actor,
            created_at=now,
        )
        audit_record(
            actor=actor,
            action=AuditEvent.Action.RUBRIC_EDIT,
            obj=rubric,
            before=_audit_view(current),
            after=_audit_view(rubric) | {"task_type": task_type.name},
            at=now,
        )
    return rubric, True
