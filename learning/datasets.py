"""Datasets of reviewed outputs, for fine-tuning and evals (docs/datasets.md).

A dataset is a saved filter over the outputs whose label is settled, plus outputs a lead
added by hand; a version is a snapshot of its rows, copied into DatasetRow and never
changed after. The filter's meaning is here and only here (``reviews_matching``): the API
and the page both come through these functions.

What goes in: an output the gate held for review, whose final status (approved, modified,
rejected) a person's review gave, with no round still open. So where the first two
reviewers disagreed, only once a lead has adjudicated. Left out:

- outputs decided by a bulk decision, wholly or in part: one lead's call on a set, not a
  judgment of this output (the learning cycles leave them out too);
- outputs delivered by the gate (approved or warned), audited or not: their status is the
  gate's, and an audit's verdict does not change it;
- outputs released by backlog relief, which no one reviewed.

Each output's row reads its label and corrected text from the output (what was
delivered), and its reject reason and rubric scores from its deciding review: the last
independent review, gold checks aside (as learning.selectors.verdicts reads them).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from datetime import datetime

from django.conf import settings
from django.db import connection, transaction
from django.db.models import (
    Case,
    Count,
    Exists,
    F,
    FloatField,
    Func,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
    Sum,
    Value,
    When,
    Window,
)
from django.db.models.functions import Coalesce, RowNumber
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from gating import rubrics
from gating.audit import audit_record
from gating.exceptions import FieldInvalid, NotFound
from gating.models import AuditEvent, Output, Review, ReviewItem, TaskType
from learning import dataset_formats
from learning.models import (
    CycleRun,
    Dataset,
    DatasetOutput,
    DatasetRow,
    DatasetVersion,
    ReviewerReliability,
)

SETTLED = (Output.Status.APPROVED, Output.Status.MODIFIED, Output.Status.REJECTED)
NAME_MAX = 100
DESCRIPTION_MAX = 2_000
# How the output's reviewers came to its label.
AGREEMENT = ("single", "agreed", "adjudicated")
MAX_LIST = 100
# PostgreSQL's text (and jsonb) cannot hold NUL: refused by name rather than as a 500.
NUL = "\x00"
NUL_REFUSED = "Must not contain NUL (\\u0000) characters."
# What a JSON Schema pattern's \s matches (ECMAScript's white space and line terminators),
# so that the schema and this module refuse the same names.
JSON_SPACE = (
    "\t\n\v\f\r \u00a0\u1680"
    + "".join(map(chr, range(0x2000, 0x200B)))
    + ("\u2028\u2029\u202f\u205f\u3000\ufeff")
)
MAX_SCORE_CONDITIONS = rubrics.MAX_DIMENSIONS
MAX_OUTPUTS_PER_CALL = 1_000
# Reliabilities are clipped so that no one reviewer's word is certain (a logit of ±inf).
RELIABILITY_CLIP = (0.01, 0.99)
FILTER_KEYS = (
    "task_types",
    "labels",
    "reject_reasons",
    "agreement",
    "scores",
    "decided_after",
    "decided_before",
)
FIELDS = dataset_formats.FIELDS


# --------------------------------------------------------------------------- input rules


def filter_clean(raw) -> dict | None:
    """The filter as stored, or FieldInvalid naming the key at fault. null: hand-added
    outputs only; {}: every settled output. Every key is optional, and the keys combine
    with AND, the values of a list with OR."""
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise FieldInvalid("filter", "Must be a JSON object or null.")
    if unknown := sorted(set(raw) - set(FILTER_KEYS)):
        raise FieldInvalid(f"filter.{unknown[0]}", "Unknown key.")
    clean: dict = {}
    if "task_types" in raw:
        names = _strings(raw["task_types"], "task_types", max_chars=100)
        known = set(TaskType.objects.filter(name__in=names).values_list("name", flat=True))
        if missing := [n for n in names if n not in known]:
            raise FieldInvalid("filter.task_types", f"No task type {missing[0]!r}.")
        clean["task_types"] = names
    for key, allowed in (
        ("labels", SETTLED),
        ("reject_reasons", tuple(settings.REVIEW_REJECT_REASONS)),
        ("agreement", AGREEMENT),
    ):
        if key in raw:
            values = _strings(raw[key], key, max_chars=50)
            if wrong := [v for v in values if v not in allowed]:
                raise FieldInvalid(
                    f"filter.{key}", f"{wrong[0]!r}: use one of {', '.join(allowed)}."
                )
            clean[key] = values
    if "scores" in raw:
        clean["scores"] = _score_conditions(raw["scores"])
    for key in ("decided_after", "decided_before"):
        if key in raw:
            clean[key] = _moment(raw[key], key).isoformat()
    after, before = clean.get("decided_after"), clean.get("decided_before")
    if after and before and parse_datetime(after) >= parse_datetime(before):
        raise FieldInvalid("filter.decided_before", "Must be after decided_after.")
    return clean


def _strings(raw, key: str, *, max_chars: int) -> list[str]:
    if not isinstance(raw, list) or not all(isinstance(v, str) for v in raw):
        raise FieldInvalid(f"filter.{key}", "Must be a list of strings.")
    if not 1 <= len(raw) <= MAX_LIST:
        raise FieldInvalid(f"filter.{key}", f"From 1 to {MAX_LIST} values; leave it out for any.")
    if any(not 1 <= len(v) <= max_chars for v in raw):
        raise FieldInvalid(f"filter.{key}", f"Each from 1 to {max_chars} characters.")
    if any(NUL in v for v in raw):
        raise FieldInvalid(f"filter.{key}", NUL_REFUSED)
    return list(dict.fromkeys(raw))


def _number(value) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _score_conditions(raw) -> list[dict]:
    """[{"dimension", "min"?, "max"?} or {"dimension", "equals"}]: a numeric dimension's
    range (both ends included), or a categorical or boolean dimension's value."""
    at = "filter.scores"
    if not isinstance(raw, list) or not 1 <= len(raw) <= MAX_SCORE_CONDITIONS:
        raise FieldInvalid(at, f"A list of 1 to {MAX_SCORE_CONDITIONS} conditions.")
    clean = []
    for i, condition in enumerate(raw):
        here = f"{at}[{i}]"
        if not isinstance(condition, dict):
            raise FieldInvalid(here, "Must be a JSON object.")
        if unknown := sorted(set(condition) - {"dimension", "min", "max", "equals"}):
            raise FieldInvalid(f"{here}.{unknown[0]}", "Unknown key.")
        name = condition.get("dimension")
        if not isinstance(name, str) or not rubrics.NAME_PATTERN.match(name):
            raise FieldInvalid(f"{here}.dimension", "A dimension's name, e.g. accuracy.")
        bounds = {k: condition[k] for k in ("min", "max") if k in condition}
        if "equals" in condition:
            value = condition["equals"]
            if bounds:
                raise FieldInvalid(here, "Either equals, or min and max: not both.")
            if not (
                isinstance(value, str | bool)
                or (_number(value) and abs(value) <= rubrics.NUMBER_LIMIT)
            ):
                raise FieldInvalid(
                    f"{here}.equals",
                    f"A string, a boolean or a number from -{rubrics.NUMBER_LIMIT} to "
                    f"{rubrics.NUMBER_LIMIT}.",
                )
            if isinstance(value, str) and not 1 <= len(value) <= rubrics.CHOICE_MAX_CHARS:
                raise FieldInvalid(
                    f"{here}.equals", f"From 1 to {rubrics.CHOICE_MAX_CHARS} characters."
                )
            if isinstance(value, str) and NUL in value:
                raise FieldInvalid(f"{here}.equals", NUL_REFUSED)
            clean.append({"dimension": name, "equals": value})
            continue
        if not bounds:
            raise FieldInvalid(here, "Give equals, or min or max (or both).")
        for key, value in bounds.items():
            if not _number(value) or abs(value) > rubrics.NUMBER_LIMIT:
                raise FieldInvalid(
                    f"{here}.{key}",
                    f"A number from -{rubrics.NUMBER_LIMIT} to {rubrics.NUMBER_LIMIT}.",
                )
        if "min" in bounds and "max" in bounds and bounds["min"] > bounds["max"]:
            raise FieldInvalid(f"{here}.max", "Must not be below min.")
        clean.append({"dimension": name, **bounds})
    return clean


def _moment(raw, key: str) -> datetime:
    parsed = parse_datetime(raw) if isinstance(raw, str) else None
    if parsed is None or parsed.tzinfo is None:
        raise FieldInvalid(f"filter.{key}", "An ISO 8601 date and time with its offset.")
    return parsed


def fields_clean(raw) -> list[str]:
    """The row fields a dataset selects, in FIELDS' order."""
    if not isinstance(raw, list) or not all(isinstance(v, str) for v in raw) or not raw:
        raise FieldInvalid("fields", f"A non-empty list of: {', '.join(FIELDS)}.")
    if wrong := [v for v in raw if v not in FIELDS]:
        raise FieldInvalid("fields", f"{wrong[0]!r}: use any of {', '.join(FIELDS)}.")
    if len(set(raw)) != len(raw):
        raise FieldInvalid("fields", "Each field once.")
    return [name for name in FIELDS if name in raw]


# --------------------------------------------------------------------------- what goes in


def _deciding_reviews() -> QuerySet[Review]:
    """One review per settled output (module docstring): its deciding review, with how
    its reviewers came to the label annotated as ``agreement``."""
    gold = ReviewItem.Kind.GOLD
    same_output = {"output": OuterRef("output")}
    later = (
        Review.objects.filter(**same_output, is_bulk=False)
        .exclude(item__kind=gold)
        .filter(
            Q(decided_at__gt=OuterRef("decided_at"))
            | Q(decided_at=OuterRef("decided_at"), id__gt=OuterRef("id"))
        )
    )
    decided = ReviewItem.objects.filter(**same_output, state=ReviewItem.State.DECIDED)
    return (
        Review.objects.filter(is_bulk=False, item__is_audit=False, output__status__in=SETTLED)
        .exclude(item__kind=gold)
        .exclude(Exists(later))
        .exclude(Exists(Review.objects.filter(**same_output, is_bulk=True)))
        .exclude(
            Exists(
                ReviewItem.objects.filter(**same_output, state=ReviewItem.State.OPEN).exclude(
                    kind=gold
                )
            )
        )
        .annotate(
            agreement=Case(
                When(
                    Exists(decided.filter(kind=ReviewItem.Kind.ADJUDICATION)),
                    then=Value("adjudicated"),
                ),
                When(Exists(decided.filter(kind=ReviewItem.Kind.SECOND)), then=Value("agreed")),
                default=Value("single"),
            )
        )
    )


def _filter_q(f: dict) -> Q:
    q = Q()
    if "task_types" in f:
        q &= Q(output__task_type__name__in=f["task_types"])
    if "labels" in f:
        q &= Q(output__status__in=f["labels"])
    if "reject_reasons" in f:
        q &= Q(output__status=Output.Status.REJECTED, reason__in=f["reject_reasons"])
    if "agreement" in f:
        q &= Q(agreement__in=f["agreement"])
    for condition in f.get("scores", []):
        key = f"scores__{condition['dimension']}"
        if "equals" in condition:
            q &= Q(**{key: condition["equals"]})
        if "min" in condition:
            q &= Q(**{f"{key}__gte": condition["min"]})
        if "max" in condition:
            q &= Q(**{f"{key}__lte": condition["max"]})
    if "decided_after" in f:
        q &= Q(output__decided_at__gte=parse_datetime(f["decided_after"]))
    if "decided_before" in f:
        q &= Q(output__decided_at__lt=parse_datetime(f["decided_before"]))
    return q


def reviews_matching(*, filter: dict | None, dataset: Dataset | None = None) -> QuerySet[Review]:
    """The deciding reviews of the settled outputs that ``filter`` (as filter_clean left
    it) matches, or that were added to ``dataset`` by hand: one per output."""
    settled = _deciding_reviews()
    if filter is not None and not (wanted := _filter_q(filter)):
        return settled  # an empty filter: every settled output, the hand-added among them
    if filter is None:
        wanted = Q(pk__in=[])
    if dataset is not None:
        hand_added = DatasetOutput.objects.filter(dataset=dataset).values("output_id")
        wanted |= Q(output_id__in=hand_added)
    return settled.filter(wanted)


def settled_output_ids(output_ids: list[int]) -> set[int]:
    """Those of ``output_ids`` whose label is settled: the ones a dataset can take."""
    return set(
        _deciding_reviews().filter(output_id__in=output_ids).values_list("output_id", flat=True)
    )


# --------------------------------------------------------------------------- weighted label


def reliabilities() -> dict[int, float]:
    """Each reviewer's reliability from the latest agreement cycle that succeeded."""
    latest = (
        CycleRun.objects.filter(kind=CycleRun.Kind.AGREEMENT, status=CycleRun.Status.SUCCEEDED)
        .order_by("-window_end")
        .first()
    )
    if latest is None:
        return {}
    return dict(
        ReviewerReliability.objects.filter(cycle=latest).values_list("reviewer_id", "reliability")
    )


def _logit(reliability: float) -> float:
    low, high = RELIABILITY_CLIP
    r = min(high, max(low, reliability))
    return math.log(r / (1 - r))


def weighted_label_of(votes: list[tuple[float, bool]]) -> float:
    """The reliability-weighted probability that an output was good, from its reviewers'
    (reliability, found no fault) votes: the logistic function of the sum of +logit(r) for
    a good vote and -logit(r) for a fault found: the posterior of a one-coin
    Dawid-Skene model (each reviewer right with probability r, whatever the truth) under
    an even prior. The reference the SQL in ``_weighted_label`` is tested against."""
    total = sum(_logit(r) if good else -_logit(r) for r, good in votes)
    return 1 / (1 + math.exp(-total))


class _Exp(Func):
    function = "EXP"
    output_field = FloatField()


def _weighted_label(reliability: dict[int, float]):
    """``weighted_label_of`` in SQL over the output's independent reviews (every round but
    gold checks): a reviewer the latest agreement cycle did not assess counts at the prior
    reliability (LEARNING_RELIABILITY_PRIOR)."""
    logit = Case(
        *(When(reviewer_id=pk, then=Value(_logit(r))) for pk, r in sorted(reliability.items())),
        default=Value(_logit(settings.LEARNING_RELIABILITY_PRIOR)),
        output_field=FloatField(),
    )
    found_fault = Q(action=Review.Action.REJECT) | Q(action=Review.Action.MODIFY, style_only=False)
    signed = Case(When(found_fault, then=-logit), default=logit, output_field=FloatField())
    total = (
        Review.objects.filter(output=OuterRef("output"), is_bulk=False)
        .exclude(item__kind=ReviewItem.Kind.GOLD)
        .order_by()
        .values("output")
        .annotate(total=Sum(signed))
        .values("total")
    )
    total = Coalesce(Subquery(total, output_field=FloatField()), Value(0.0))
    return Value(1.0) / (Value(1.0) + _Exp(-total))


# --------------------------------------------------------------------------- services

# Each row field: the expression its value is copied from, on the deciding review.
_SOURCES = {
    "external_id": F("output__external_id"),
    "task_type": F("output__task_type__name"),
    "model": F("output__model"),
    "input": F("output__input_text"),
    "original": F("output__output_text"),
    "corrected": F("output__final_output_text"),
    "label": F("output__status"),
    "reject_reason": Case(When(reason="", then=Value(None)), default=F("reason")),
    "agreement": F("agreement"),
    "scores": F("scores"),
    "decided_at": F("output__decided_at"),
}


def dataset_create(
    *, name: str, description: str = "", filter, fields, actor, now: datetime | None = None
) -> Dataset:
    """A new dataset, audited. Raises FieldInvalid for a taken name or a bad filter."""
    filter = filter_clean(filter)
    fields = fields_clean(fields)
    if not 1 <= len(name) <= NAME_MAX:
        raise FieldInvalid("name", f"From 1 to {NAME_MAX} characters.")
    if name != name.strip(JSON_SPACE):
        raise FieldInvalid("name", "No spaces at either end.")
    if len(description) > DESCRIPTION_MAX:
        raise FieldInvalid("description", f"At most {DESCRIPTION_MAX} characters.")
    for field, text in (("name", name), ("description", description)):
        if NUL in text:
            raise FieldInvalid(field, NUL_REFUSED)
    with transaction.atomic():
        if Dataset.objects.filter(name=name).exists():
            raise FieldInvalid("name", "A dataset of that name exists.")
        dataset = Dataset.objects.create(
            name=name,
            description=description,
            filter=filter,
            fields=fields,
            created_by=actor,
            created_at=now or timezone.now(),
        )
        audit_record(
            actor=actor,
            action=AuditEvent.Action.DATASET_EDIT,
            obj=dataset,
            after={"name": name, "filter": filter, "fields": fields},
        )
    return dataset


def outputs_add(*, dataset: Dataset, output_ids: list[int], actor, now=None) -> list[int]:
    """Add settled outputs to ``dataset`` by hand; returns those newly added. An output
    that is not settled (or does not exist) is refused by id, and nothing is added."""
    now = now or timezone.now()
    wanted = list(dict.fromkeys(output_ids))
    settled = settled_output_ids(wanted)
    if missing := [pk for pk in wanted if pk not in settled]:
        raise FieldInvalid(
            "output_ids",
            f"Not an output whose label is settled by a person's review: {missing[:10]}.",
        )
    with transaction.atomic():
        present = set(
            DatasetOutput.objects.filter(dataset=dataset, output_id__in=wanted).values_list(
                "output_id", flat=True
            )
        )
        added = [pk for pk in wanted if pk not in present]
        DatasetOutput.objects.bulk_create(
            DatasetOutput(dataset=dataset, output_id=pk, added_by=actor, added_at=now)
            for pk in added
        )
        if added:
            audit_record(
                actor=actor,
                action=AuditEvent.Action.DATASET_EDIT,
                obj=dataset,
                after={"added": added},
                at=now,
            )
    return added


def output_remove(*, dataset: Dataset, output_id: int, actor) -> None:
    """Take a hand-added output out of ``dataset``; NotFound if it was not added by hand
    (one the filter matches stays: change the filter instead)."""
    with transaction.atomic():
        deleted, _ = DatasetOutput.objects.filter(dataset=dataset, output_id=output_id).delete()
        if not deleted:
            raise NotFound(f"Output {output_id} was not added to this dataset by hand.")
        audit_record(
            actor=actor,
            action=AuditEvent.Action.DATASET_EDIT,
            obj=dataset,
            after={"removed": output_id},
        )


def version_create(*, dataset: Dataset, actor, now: datetime | None = None) -> DatasetVersion:
    """Snapshot ``dataset``: a new version whose rows are copied, in one INSERT ... SELECT,
    from the outputs it matches now. Rows are numbered by output id."""
    now = now or timezone.now()
    fields = list(dataset.fields)
    with transaction.atomic():
        # Locks the dataset, so that two snapshots at once number their versions in turn.
        dataset = Dataset.objects.select_for_update().get(pk=dataset.pk)
        last = dataset.versions.order_by("-number").values_list("number", flat=True).first()
        version = DatasetVersion.objects.create(
            dataset=dataset,
            number=(last or 0) + 1,
            filter=dataset.filter,
            fields=fields,
            created_by=actor,
            created_at=now,
        )
        version.row_count = _rows_insert(version, dataset, fields)
        version.save(update_fields=["row_count"])
        audit_record(
            actor=actor,
            action=AuditEvent.Action.DATASET_EDIT,
            obj=dataset,
            after={"version": version.number, "row_count": version.row_count},
            at=now,
        )
    return version


def _rows_insert(version: DatasetVersion, dataset: Dataset, fields: list[str]) -> int:
    sources = {f"c_{name}": _SOURCES[name] for name in fields if name in _SOURCES}
    if "weighted_label" in fields:
        sources["c_weighted_label"] = _weighted_label(reliabilities())
    select = (
        reviews_matching(filter=dataset.filter, dataset=dataset)
        .order_by()
        .annotate(
            c_output_id=F("output_id"),
            c_position=Window(RowNumber(), order_by=F("output_id").asc()),
            **sources,
        )
        .values("c_output_id", "c_position", *sources)
    )
    sql, params = select.query.sql_with_params()
    quote = connection.ops.quote_name
    columns = ["output_id", "position", *(alias[2:] for alias in sources)]
    aliases = ["c_output_id", "c_position", *sources]
    insert = (
        f"INSERT INTO {quote(DatasetRow._meta.db_table)} "
        f"({quote('version_id')}, {', '.join(quote(c) for c in columns)}) "
        f"SELECT %s, {', '.join('matched.' + quote(a) for a in aliases)} FROM ({sql}) matched"
    )
    with connection.cursor() as cursor:
        cursor.execute(insert, [version.pk, *params])
        return cursor.rowcount


def version_rows(version: DatasetVersion, *, chunk_size: int = 2_000) -> Iterator[tuple]:
    """The version's rows as tuples of its fields, in order, read through a server-side
    cursor (PostgreSQL) ``chunk_size`` rows at a time."""
    return (
        DatasetRow.objects.filter(version=version)
        .order_by("position")
        .values_list(*version.fields)
        .iterator(chunk_size=chunk_size)
    )


def export_started(*, version: DatasetVersion, export_format: str, actor) -> Iterator[bytes]:
    """The version in ``export_format``, as the chunks of a streamed download; audited
    when asked for. Raises FieldInvalid when the version's fields cannot make the format."""
    if problem := dataset_formats.format_problem(export_format, version.fields):
        raise FieldInvalid("format", problem)
    audit_record(
        actor=actor,
        action=AuditEvent.Action.DATASET_EXPORT,
        obj=version.dataset,
        after={"version": version.number, "format": export_format},
    )
    return dataset_formats.export_chunks(export_format, version_rows(version), version.fields)


def datasets_listed() -> QuerySet[Dataset]:
    """Datasets by name, with their hand-added outputs and versions counted."""
    return (
        Dataset.objects.select_related("created_by")
        .annotate(
            hand_added_count=Count("hand_added", distinct=True),
            version_count=Count("versions", distinct=True),
        )
        .order_by("name")
    )
