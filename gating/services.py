"""Writes to the gate's data: ingest outputs, edit task types, create users and tokens."""

from __future__ import annotations

import math
import random
import threading
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from functools import cached_property
from typing import NamedTuple

from cachetools import TTLCache
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractUser
from django.db import IntegrityError, connection, models, transaction
from django.utils import timezone

from gating import bulk, gate_settings, reviews, scorers, scoring, users
from gating.audit import audit_record, audit_record_each, audit_record_many
from gating.exceptions import IdempotencyConflict, TaskTypeInvalid, TaskTypeRefused
from gating.models import (
    DEFAULT_FACT_CHECK_VALIDATORS,
    ApiToken,
    AuditEvent,
    GatewaySettings,
    Output,
    ReviewItem,
    TaskModelStats,
    TaskType,
    TaskTypeCreation,
    TaskTypeUse,
    Validator,
)
from gating.models.outputs import WEIGHT_RANGE
from gating.roles import Role
from gating.submissions import OutputSubmission, fingerprint
from gating.tokens import generate_token, hash_token


@dataclass(frozen=True)
class IngestResult:
    output: Output
    created: bool


@dataclass(frozen=True)
class _GateConfig:
    """A task type and its validators: what the gate needs besides the pair's counters."""

    task_type: TaskType
    validators: dict[str, Validator]


@dataclass(frozen=True)
class _TaskContext:
    """What the gate needs to know about one task type, fetched once per request."""

    task_type: TaskType
    validators: dict[str, Validator]
    pair_stats: dict[str, scoring.PairHistory]

    @cached_property
    def policy(self) -> scoring.GatePolicy:
        return self.task_type.gate_policy

    @cached_property
    def scorer(self) -> scorers.Scorer:
        # A name this code no longer knows (a scorer removed, a rollback) must not turn
        # every ingest of the task type into an error: the default scores it instead, and
        # since it cannot read what the missing scorer read, says so (score_and_gate).
        return scorers.REGISTRY.get(self.task_type.scorer) or scorers.MISSING

    @cached_property
    def outcomes(self) -> dict[tuple[str, bool], scoring.ValidatorOutcome]:
        """Each validator's two possible outcomes, made once rather than for every output."""
        return {
            (v.name, passed): scoring.ValidatorOutcome(v.name, passed, v.weight, v.is_fact_check)
            for v in self.validators.values()
            for passed in (True, False)
        }


# Per-process caches so that a steady stream of outputs costs no configuration queries.
# Entries are stored only after commit, so a rolled-back batch cannot leave a task type
# in the cache that the database never kept.
_configs: TTLCache = TTLCache(maxsize=1_000, ttl=settings.GATE_CACHE_SECONDS)
_pairs: TTLCache = TTLCache(maxsize=50_000, ttl=settings.GATE_CACHE_SECONDS)
# (gateway id, task type id) pairs known to have their TaskTypeUse.
_uses: TTLCache = TTLCache(maxsize=50_000, ttl=settings.GATE_CACHE_SECONDS)
_cache_lock = threading.Lock()


def gate_caches_clear() -> None:
    with _cache_lock:
        _configs.clear()
        _pairs.clear()
        _uses.clear()


def _cache_after_commit(cache: TTLCache, entries: dict) -> None:
    def store():
        with _cache_lock:
            cache.update(entries)

    transaction.on_commit(store)


def _load_configs(source: AbstractUser, needed: dict[str, set[str]]) -> dict[str, _GateConfig]:
    """Task types by name with their validators, creating what is missing as far as the
    gateway may: two queries when nothing is new."""
    task_types = {t.name: t for t in TaskType.objects.filter(name__in=needed)}
    if new := needed.keys() - task_types.keys():
        task_types |= _task_types_create(source=source, names=sorted(new))

    def validators_of(ids) -> dict[int, dict[str, Validator]]:
        found: dict[int, dict[str, Validator]] = {pk: {} for pk in ids}
        for v in Validator.objects.filter(task_type__in=ids):
            found[v.task_type_id][v.name] = v
        return found

    validators = validators_of([t.pk for t in task_types.values()])
    missing = [
        Validator(task_type=t, name=n, is_fact_check=n in DEFAULT_FACT_CHECK_VALIDATORS)
        for name, t in sorted(task_types.items())
        for n in sorted(needed[name] - validators[t.pk].keys())
    ]
    if missing:
        Validator.objects.bulk_create(missing, ignore_conflicts=True)
        validators.update(validators_of({v.task_type_id for v in missing}))
    return {
        name: _GateConfig(task_type=t, validators=validators[t.pk])
        for name, t in task_types.items()
    }


def _task_types_create(*, source: AbstractUser, names: list[str]) -> dict[str, TaskType]:
    """Create the task types a gateway names for the first time, as its GatewaySettings
    allow, and record it as their creator.

    The settings row stays locked while the gateway's task types are counted and created,
    so that two requests cannot each find room for the last one. Rows are created in the
    order given (name order): two batches creating the same task types (or validators) in
    different orders would each hold a row the other waits for, and deadlock.

    Raises TaskTypeRefused naming each task type the gateway may not create; then none is.
    """
    with transaction.atomic():
        allowance, _ = GatewaySettings.objects.select_for_update().get_or_create(user=source)
        refused = allowance.task_types_refused(
            names, created=TaskTypeCreation.objects.filter(gateway=source).count()
        )
        if refused:
            raise TaskTypeRefused(refused)
        task_types = {}
        for name in names:
            task_types[name], created = TaskType.objects.get_or_create(name=name)
            if created:
                TaskTypeCreation.objects.create(task_type=task_types[name], gateway=source)
    return task_types


def _task_contexts(
    source: AbstractUser, submissions: Iterable[OutputSubmission]
) -> dict[str, _TaskContext]:
    """The gate's inputs for each task type (created on first use), from cache where fresh."""
    needed: dict[str, set[str]] = {}
    models: dict[str, set[str]] = {}
    for s in submissions:
        needed.setdefault(s.task_type, set()).update(v.name for v in s.validators)
        models.setdefault(s.task_type, set()).add(s.model)

    with _cache_lock:
        configs = {name: _configs.get(name) for name in needed}
    stale = {
        name: needed[name]
        for name, config in configs.items()
        if config is None or not needed[name] <= config.validators.keys()
    }
    loaded = _load_configs(source, stale) if stale else {}
    configs.update(loaded)
    if loaded:
        _cache_after_commit(_configs, loaded)
    _task_type_uses_record(source, {c.task_type.pk for c in configs.values()})

    keys = {(configs[name].task_type.pk, m) for name in needed for m in models[name]}
    with _cache_lock:
        pairs = {k: _pairs[k] for k in keys if k in _pairs}
    if missing := keys - pairs.keys():
        fetched = {k: scoring.PairHistory() for k in missing}
        rows = TaskModelStats.objects.filter(
            task_type__in={tt for tt, _ in missing}, model__in={m for _, m in missing}
        )
        for row in rows:
            if (row.task_type_id, row.model) in missing:
                fetched[(row.task_type_id, row.model)] = scoring.PairHistory(
                    reviewed=row.reviewed_count, approved_unchanged=row.approved_unchanged_count
                )
        pairs.update(fetched)
        _cache_after_commit(_pairs, fetched)

    return {
        name: _TaskContext(
            task_type=c.task_type,
            validators=c.validators,
            pair_stats={m: pairs[(c.task_type.pk, m)] for m in models[name]},
        )
        for name, c in configs.items()
    }


def _task_type_uses_record(source: AbstractUser, task_type_ids: set[int]) -> None:
    """Record that the gateway sends outputs of these task types, which lets it see them
    (selectors.task_types_visible_to): one INSERT of the pairs this process has not
    recorded within GATE_CACHE_SECONDS, no query for the others.

    In the batch's transaction, so a refused batch records nothing. A single output is
    stored without one on PostgreSQL (output_ingest), so its pair may stay when its insert
    fails: the gateway did name the task type, as when it creates one.
    """
    keys = {(source.pk, pk) for pk in task_type_ids}
    with _cache_lock:
        new = sorted(k for k in keys if k not in _uses)
    if not new:
        return
    # Sorted, and ON CONFLICT DO NOTHING: two requests recording the same pairs wait for
    # each other in one order, and neither fails.
    TaskTypeUse.objects.bulk_create(
        [TaskTypeUse(gateway_id=gateway, task_type_id=pk) for gateway, pk in new],
        ignore_conflicts=True,
    )
    _cache_after_commit(_uses, dict.fromkeys(new, True))


def _gate(submission: OutputSubmission, context: _TaskContext, now: datetime) -> scorers.Scoring:
    outcome = context.outcomes
    scorer_input = scorers.ScorerInput(
        validators=tuple(outcome[v.name, v.passed] for v in submission.validators),
        input_clarity=submission.input_clarity,
        coherence=submission.coherence,
        requires_fact_check=submission.requires_fact_check,
        pair=context.pair_stats.get(submission.model, scoring.PairHistory()),
        policy=context.policy,
        now=now,
        evidence=submission.evidence,
        provenance=submission.provenance,
    )
    return scorers.score_and_gate(context.scorer, scorer_input, shadow=settings.SHADOW_SCORING)


class _Built(NamedTuple):
    """A new output, unsaved, and why its scorer failed if it did (scoring.fault_result)."""

    output: Output
    fault: str | None


def _build_output(
    *,
    source: AbstractUser,
    submission: OutputSubmission,
    context: _TaskContext,
    now,
    trace_id: str = "",
) -> _Built:
    scored = _gate(submission, context, now)
    result = scored.result
    held = result.decision is scoring.Decision.PENDING_REVIEW
    sent = submission.model_dump(mode="json")
    values = {
        "source_id": source.pk,
        "external_id": submission.external_id,
        "request_hash": fingerprint(sent),
        "task_type_id": context.task_type.pk,
        "model": submission.model,
        "tier": submission.tier,
        "input_text": submission.input,
        "output_text": submission.output,
        "input_clarity": submission.input_clarity,
        "coherence": submission.coherence,
        "requires_fact_check": submission.requires_fact_check,
        "validator_results": sent["validators"],
        "evidence": sent["evidence"],
        "provenance": sent["provenance"],
        "metadata": submission.metadata,
        "score": result.score,
        "base_score": result.base_score,
        "decision": result.decision.value,
        "review_threshold": result.review_threshold,
        "approve_threshold": result.approve_threshold,
        "approve_guarantee": context.task_type.approve_guarantee,
        "withheld": result.withheld,
        "scorer": result.scorer,
        "impacts": [i.as_dict() for i in result.impacts],
        "reasons": result.reasons,
        "interval_lower": scored.interval[0] if scored.interval else None,
        "interval_upper": scored.interval[1] if scored.interval else None,
        "shadow_scores": scored.shadow,
        "status": Output.Status.PENDING if held else Output.Status.APPROVED,
        "final_output_text": None if held else submission.output,
        "created_at": now,
        "decided_at": None if held else now,
        "trace_id": trace_id,
    }
    output = bulk.unsaved(Output, values)
    Output.source.field.set_cached_value(output, source)
    Output.task_type.field.set_cached_value(output, context.task_type)
    return _Built(output, result.fault)


def _faults_record(built: Sequence[_Built]) -> None:
    """An audit event for each output held because its scorer failed: the alerts cycle
    raises an alert from them. Faults should never happen, so this costs nothing else."""
    rows = [
        (
            None,
            b.output.created_at,
            b.output,
            None,
            {"cause": b.fault, "task_type": b.output.task_type.name},
        )
        for b in built
        if b.fault
    ]
    if rows:
        audit_record_each(action=AuditEvent.Action.SCORING_FAULT, rows=rows)


def _replay(existing: Output, submission: OutputSubmission) -> IngestResult:
    if not submission.is_replay_of(existing.request_hash):
        raise IdempotencyConflict(
            f"external_id {existing.external_id!r} was already submitted with a different body."
        )
    return IngestResult(output=existing, created=False)


def output_ingest(
    *, source: AbstractUser, submission: OutputSubmission, trace_id: str = ""
) -> IngestResult:
    """Score and store one output, or return the stored one for an identical replay.

    ``trace_id`` is the W3C trace the request belongs to (gating.tracing), stored with a
    new output; a replay keeps the trace of the request that stored it.

    Raises IdempotencyConflict when the external_id was used before with another body, and
    TaskTypeRefused when it names a task type the gateway may not create.
    """
    context = _task_contexts(source, [submission])[submission.task_type]
    built = _build_output(
        source=source,
        submission=submission,
        context=context,
        now=timezone.now(),
        trace_id=trace_id,
    )
    output = built.output
    # Insert first and let the unique constraint find replays: they are rare, and checking
    # first would cost every new output a query. Inside a transaction a savepoint keeps
    # that transaction usable after the constraint fires.
    items = reviews.review_items_for([output])
    # A held output and its queue item (and a fault's audit event) are stored together, or
    # none is: PostgreSQL inserts an output and its item in one statement; elsewhere, or
    # with an event, they need a transaction.
    needs_transaction = (items and connection.vendor != "postgresql") or built.fault
    guard = (
        transaction.atomic() if connection.in_atomic_block or needs_transaction else nullcontext()
    )
    try:
        with guard:
            _insert_outputs([output], items)
            _faults_record([built])
    except IntegrityError:
        existing = _existing_output(source, submission.external_id)
        if existing is None:
            raise
        return _replay(existing, submission)
    return IngestResult(output=output, created=True)


def output_ingest_batch(
    *,
    source: AbstractUser,
    submissions: list[OutputSubmission],
    created_at: list[datetime] | None = None,
    rng: random.Random | None = None,
    trace_id: str = "",
) -> list[IngestResult]:
    """Score and store a batch in one transaction: every new output is stored, or none is.

    Items already stored with an identical body are replays; one stored with a different
    body makes the whole batch fail with IdempotencyConflict naming each such index, and
    one naming a task type the gateway may not create with TaskTypeRefused naming each
    such item. The simulator passes each output's ``created_at`` and a seeded ``rng`` for
    the queue's sampling draws, to replay history repeatably. ``trace_id`` is stored with
    every new output, as by output_ingest.
    """
    try:
        return _ingest_batch(source, submissions, created_at, rng, trace_id)
    except TaskTypeRefused as refused:
        raise refused.at_items([s.task_type for s in submissions]) from None


def _ingest_batch(
    source: AbstractUser,
    submissions: list[OutputSubmission],
    created_at: list[datetime] | None,
    rng: random.Random | None,
    trace_id: str,
) -> list[IngestResult]:
    # The simulator replays history, so it gives each output its own arrival time.
    arrivals = (
        {s.external_id: t for s, t in zip(submissions, created_at, strict=True)}
        if created_at
        else {}
    )
    with transaction.atomic():
        # Insert first and let the unique constraint find replays, as for one output:
        # most batches are all new, and looking them up first costs a query per batch.
        try:
            with transaction.atomic():
                built = _store_new(source, submissions, arrivals, rng, trace_id)
            return [IngestResult(output=o, created=True) for o in built]
        except IntegrityError:
            pass
        existing = {
            o.external_id: o
            for o in Output.objects.select_related("task_type").filter(
                source=source, external_id__in=[s.external_id for s in submissions]
            )
        }
        conflicts = [
            index
            for index, s in enumerate(submissions)
            if s.external_id in existing
            and not s.is_replay_of(existing[s.external_id].request_hash)
        ]
        if conflicts:
            raise IdempotencyConflict(
                "These items reuse an external_id with a different body.", indexes=conflicts
            )
        fresh = [s for s in submissions if s.external_id not in existing]
        try:
            with transaction.atomic():
                built = _store_new(source, fresh, arrivals, rng, trace_id)
        except IntegrityError as exc:
            raise IdempotencyConflict(
                "Another request stored some of these external_ids at the same time; "
                "retry the batch."
            ) from exc
    created = iter(built)
    return [
        IngestResult(output=existing[s.external_id], created=False)
        if s.external_id in existing
        else IngestResult(output=next(created), created=True)
        for s in submissions
    ]


def _store_new(
    source: AbstractUser,
    submissions: list[OutputSubmission],
    arrivals: dict[str, datetime],
    rng: random.Random | None,
    trace_id: str,
) -> list[Output]:
    if not submissions:
        return []
    contexts = _task_contexts(source, submissions)
    now = timezone.now()
    built = [
        _build_output(
            source=source,
            submission=s,
            context=contexts[s.task_type],
            now=arrivals.get(s.external_id, now),
            trace_id=trace_id,
        )
        for s in submissions
    ]
    outputs = [b.output for b in built]
    _insert_outputs(outputs, reviews.review_items_for(outputs, rng=rng))
    _faults_record(built)
    return outputs


def _existing_output(source: AbstractUser, external_id: str) -> Output | None:
    return (
        Output.objects.select_related("task_type")
        .filter(source=source, external_id=external_id)
        .order_by()
        .first()
    )


def _insert_outputs(outputs: list[Output], items: list[ReviewItem]) -> None:
    """Insert new outputs with their queue items and set their ids.

    This is the gate's hot path, so on PostgreSQL it bypasses the ORM's per-row SQL
    compilation: one output (and its item) goes in as a single statement, and a batch as
    COPY, which is several times faster than a multi-row INSERT for rows with large JSON
    columns. Other databases use bulk_create.
    """
    if connection.vendor == "postgresql" and len(outputs) == 1:
        with connection.cursor() as cursor, connection.wrap_database_errors:
            _insert_one(cursor, outputs[0], items[0] if items else None)
        bulk.mark_saved([*outputs, *items])
        return
    bulk.insert_rows(outputs)
    for item in items:
        item.output_id = item.output.pk
    bulk.insert_rows(items)


def _insert_one(cursor, output: Output, item: ReviewItem | None) -> None:
    table = bulk.Table.of(Output)
    insert = (
        f"INSERT INTO {table.quoted} ({table.columns}) VALUES ({table.placeholders}) RETURNING id"
    )
    if item is None:
        cursor.execute(insert, table.row(output))
        (output.pk,) = cursor.fetchone()
        return
    # A held output and its queue item in one statement: atomic without a transaction's
    # extra round trips.
    items = bulk.Table.of(ReviewItem, exclude=("output_id",))
    cursor.execute(
        f"WITH new_output AS ({insert}) "
        f"INSERT INTO {items.quoted} (output_id, {items.columns}) "
        f"SELECT id, {items.placeholders} FROM new_output RETURNING output_id, id",
        [*table.row(output), *items.row(item)],
    )
    output.pk, item.pk = cursor.fetchone()
    item.output_id = output.pk


# --------------------------------------------------------------------------- the gate's settings
# A task type's thresholds, cold start, sampling and learning settings, and its validators'
# weights, have one writer whoever moves them: the API's PATCH, the Django admin, the
# thresholds page and the learning cycles all go through gate_settings_change(_many), which
# checks every rule in words naming the field, records the edit in the audit log and clears
# the gate's caches once it commits.


class EditSource(StrEnum):
    """The door a change of the gate's settings came through, as the audit log names it."""

    API = "api"
    ADMIN = "admin"
    PAGE = "page"
    CYCLE = "cycle"


# People say why they move the gate. The API's reason is optional, so that clients written
# before it existed keep working; the cycles give theirs with each edit.
REASON_REQUIRED = frozenset({EditSource.ADMIN, EditSource.PAGE})
REASON_MAX_LENGTH = 500

# What a setting is, its type and its range: gating.gate_settings declares each one.
GATE_SETTINGS = frozenset(gate_settings.BY_NAME)
# The approve threshold's guarantee is the thresholds cycle's alone to give. A person who
# moves what it certified (the threshold, the budgets and confidence it was certified at,
# the policy, or the scorer whose scores it was certified on) takes it back.
GUARANTEE = "approve_guarantee"
# ... and so is the estimated approve line that an estimated guarantee approves from.
ESTIMATED_LINE = "estimated_approve_threshold"
_UNSET = object()
_CERTIFIED_ON = frozenset(
    {"approve_threshold", "alpha_approve", "alpha_bad", "delta", "threshold_policy", "scorer"}
)


@dataclass(frozen=True)
class GateSettingsEdit:
    """One task type's edit: settings by field, validators' weights by name, and why."""

    task_type: TaskType
    changes: Mapping[str, object] = field(default_factory=dict)
    weights: Mapping[str, float] = field(default_factory=dict)
    reason: str = ""
    # Recorded with the edit besides its reason and source: a cycle's run and policy.
    context: Mapping[str, object] = field(default_factory=dict)


def gate_settings_change(
    *,
    task_type: TaskType,
    changes: Mapping[str, object] | None = None,
    weights: Mapping[str, float] | None = None,
    actor: AbstractUser | None,
    reason: str,
    source: EditSource,
) -> TaskType:
    """Change one task type's settings and its validators' weights, as a person does from
    the thresholds page, the API or the admin. Returns the task type as stored.

    Raises TaskTypeInvalid naming the first field that breaks a rule; see
    gate_settings_change_many.
    """
    edit = GateSettingsEdit(task_type, changes or {}, weights or {}, reason)
    [stored] = gate_settings_change_many(edits=[edit], actor=actor, source=source)
    return stored


def gate_settings_change_many(
    *,
    edits: Sequence[GateSettingsEdit],
    actor: AbstractUser | None,
    source: EditSource,
    at: datetime | None = None,
) -> list[TaskType]:
    """The one writer of the gate's settings: apply every edit, or none, in a handful of
    queries whatever their number (the cycles edit every task type at once). Returns the
    edits' task types as stored.

    The task types' rows, and those of the validators whose weights are edited, are locked
    in id order, and every rule is checked on the stored values merged with the edit: two
    edits at once, each valid alone (review up, approve down), must not both pass a check
    made on a stale copy. A value equal to the stored one is no change; an edit left with
    none is neither saved nor audited, so it looks like no edit in the log or in updated_at.

    Each task type that changes gets one threshold_edit event in the audit log, at ``at``
    (a cycle's window end; now by default). ``before`` holds the old values of what
    changed, with the weights under "weights"; ``after`` the new ones likewise, plus
    "reason", "source" and the edit's context. The gate's per-process caches are cleared
    when the edits commit, so the next output is scored with the new settings.

    Raises TaskTypeInvalid naming the first field that breaks a rule (gate_settings_problems,
    weight_problem, reason_problem), "weights.<validator>" for a weight.
    """
    now = timezone.now()
    with transaction.atomic():
        stored, validators = _settings_locked(edits)
        retouched: dict[int, TaskType] = {}
        fields: set[str] = set()
        reweighted: list[Validator] = []
        events = []
        for edit in edits:
            task_type, own = stored[edit.task_type.pk], validators[edit.task_type.pk]
            changes = dict(edit.changes)
            guarantee = changes.pop(GUARANTEE, None)
            estimated = changes.pop(ESTIMATED_LINE, _UNSET)
            _refuse(gate_settings_problems(task_type, changes))
            _refuse(_weights_problems(task_type, own, edit.weights))
            if source is not EditSource.CYCLE:
                if guarantee is not None:
                    raise TaskTypeInvalid(GUARANTEE, "Only the thresholds cycle certifies.")
                if estimated is not _UNSET:
                    raise TaskTypeInvalid(ESTIMATED_LINE, "Only the thresholds cycle estimates.")
                if any(
                    getattr(task_type, name) != changes[name]
                    for name in changes.keys() & _CERTIFIED_ON
                ):
                    guarantee, estimated = scoring.Guarantee.NONE, None
            if guarantee is not None:
                changes[GUARANTEE] = scoring.Guarantee(guarantee).value
            if estimated is not _UNSET:
                changes[ESTIMATED_LINE] = estimated
            before, after = _apply_changed(task_type, changes)
            if after:
                task_type.updated_at = now
                retouched[task_type.pk] = task_type
                fields.update(after)
            moved = [own[name] for name, w in edit.weights.items() if own[name].weight != w]
            if moved:
                before["weights"] = {v.name: v.weight for v in moved}
                for v in moved:
                    v.weight = edit.weights[v.name]
                after["weights"] = {v.name: v.weight for v in moved}
                reweighted += moved
            if not after:
                continue
            if problem := reason_problem(edit.reason, source):
                raise TaskTypeInvalid("reason", problem)
            extra = {"reason": edit.reason, "source": str(source), **edit.context}
            events.append((task_type, before, {**after, **extra}))
        if retouched:
            TaskType.objects.bulk_update(retouched.values(), [*sorted(fields), "updated_at"])
        if reweighted:
            Validator.objects.bulk_update(reweighted, ["weight"])
        if events:
            audit_record_many(
                actor=actor, action=AuditEvent.Action.THRESHOLD_EDIT, rows=events, at=at or now
            )
            transaction.on_commit(gate_caches_clear)
    return [stored[e.task_type.pk] for e in edits]


def _settings_locked(
    edits: Sequence[GateSettingsEdit],
) -> tuple[dict[int, TaskType], dict[int, dict[str, Validator]]]:
    """The edited task types by id, and the validators of those whose weights are edited
    by task type id and name, locked in id order: two writers locking the same rows in
    different orders would each hold one the other waits for, and deadlock.

    The locks are PostgreSQL's NO KEY UPDATE, which writers of settings wait on but the
    foreign-key checks of new outputs and validators do not: a plain FOR UPDATE would
    hold up every output of these task types until the edit commits.
    """
    task_types = TaskType.objects.select_for_update(no_key=True).filter(
        pk__in={e.task_type.pk for e in edits}
    )
    stored = {t.pk: t for t in task_types.order_by("pk")}
    validators: dict[int, dict[str, Validator]] = defaultdict(dict)
    if reweighted := {e.task_type.pk for e in edits if e.weights}:
        rows = Validator.objects.select_for_update(no_key=True).filter(task_type__in=reweighted)
        for v in rows.order_by("pk"):
            validators[v.task_type_id][v.name] = v
    return stored, validators


def gate_settings_problems(task_type: TaskType, changes: Mapping[str, object]) -> dict[str, str]:
    """What is wrong with ``changes`` to ``task_type`` as stored, in words by field; empty
    when nothing is. Forms call this to show each problem next to its field.

    A value equal to the stored one is no change and is not checked: a rule tightened since
    a value was stored must not block every other edit of its task type.
    """
    problems = {}
    changed = {}
    for name, value in changes.items():
        if name not in GATE_SETTINGS:
            problems[name] = "Not a setting of the gate: it cannot be changed here."
        elif getattr(task_type, name) != value:
            changed[name] = value
            if problem := gate_settings.BY_NAME[name].problem(value):
                problems[name] = problem
    if problems.keys() & {"review_threshold", "approve_threshold"}:
        return problems
    # The database's task_type_thresholds_ordered, in words naming the field that moved.
    review = changed.get("review_threshold", task_type.review_threshold)
    approve = changed.get("approve_threshold", task_type.approve_threshold)
    if review >= approve:
        if "review_threshold" in changed:
            problems["review_threshold"] = f"Must be below approve_threshold ({approve:g})."
        else:
            problems["approve_threshold"] = f"Must be above review_threshold ({review:g})."
    return problems


def weight_problem(value: object) -> str | None:
    """A validator's weight is a number in WEIGHT_RANGE: 0 leaves it out of the score."""
    low, high = WEIGHT_RANGE
    if not _is_number(value) or not math.isfinite(value) or not low <= value <= high:
        return f"Must be a number from {low:g} to {high:g}."
    return None


def reason_problem(reason: str, source: EditSource) -> str | None:
    """Why an edit was made, as the audit log keeps it; people must say (REASON_REQUIRED)."""
    if len(reason) > REASON_MAX_LENGTH:
        return f"At most {REASON_MAX_LENGTH} characters."
    if "\x00" in reason:
        return "Must not contain a NUL character."
    if source in REASON_REQUIRED and not reason.strip():
        return "Say why: the reason is kept in the audit log with the change."
    return None


def _weights_problems(
    task_type: TaskType, validators: dict[str, Validator], weights: Mapping[str, float]
) -> dict[str, str]:
    problems = {}
    for name, weight in weights.items():
        if name not in validators:
            problems[f"weights.{name}"] = f"{task_type.name} has no validator named {name!r}."
        elif validators[name].weight != weight and (problem := weight_problem(weight)):
            problems[f"weights.{name}"] = problem
    return problems


def _refuse(problems: dict[str, str]) -> None:
    if problems:
        name, message = next(iter(problems.items()))
        raise TaskTypeInvalid(name, message)


def _is_number(value: object) -> bool:
    # bool is an int to Python, but true is not a threshold.
    return isinstance(value, int | float) and not isinstance(value, bool)


def _apply_changed(obj: models.Model, wanted: Mapping[str, object]) -> tuple[dict, dict]:
    """Set on ``obj`` each value of ``wanted`` that differs from its own. Returns the old and
    the new values of those alone, as the audit log records an edit."""
    after = {name: value for name, value in wanted.items() if getattr(obj, name) != value}
    before = {name: getattr(obj, name) for name in after}
    for name, value in after.items():
        setattr(obj, name, value)
    return before, after


def gateway_settings_set(
    *, user: AbstractUser, may_create_task_types: bool, task_type_limit: int, actor: AbstractUser
) -> GatewaySettings:
    """Set whether and how many task types a gateway may create by naming them.

    Audited as an access change: it is what the account may do. Only what changed is
    recorded, from the defaults for a gateway that had no settings yet.
    """
    with transaction.atomic():
        current, _ = GatewaySettings.objects.select_for_update().get_or_create(user=user)
        _access_change(
            current,
            {"may_create_task_types": may_create_task_types, "task_type_limit": task_type_limit},
            actor=actor,
        )
    return current


def task_type_share(*, task_type: TaskType, shared: bool, actor: AbstractUser) -> TaskType:
    """Share a task type with every gateway, or stop sharing it, so that only the gateways
    that sent its outputs see it (selectors.task_types_visible_to).

    Audited as an access change: it is what the gateways may see. Sharing what is shared
    already changes and records nothing.
    """
    with transaction.atomic():
        current = TaskType.objects.select_for_update(no_key=True).get(pk=task_type.pk)
        _access_change(current, {"shared": shared}, actor=actor, also_saved=("updated_at",))
    return current


def _access_change(
    obj: models.Model, wanted: Mapping[str, object], *, actor, also_saved: Sequence[str] = ()
) -> None:
    """Save what of ``wanted`` differs on ``obj`` and audit it as an access change (what an
    account may do or see); what is already so changes and records nothing."""
    before, after = _apply_changed(obj, wanted)
    if after:
        obj.save(update_fields=[*after, *also_saved])
        audit_record(
            actor=actor, action=AuditEvent.Action.ACCESS_CHANGE, obj=obj, before=before, after=after
        )


def user_create(*, username: str, role: Role, password: str | None = None) -> AbstractUser:
    user = get_user_model().objects.create_user(username=username, password=password)
    users.user_role_set(user=user, role=role, actor=None)
    return user


def api_token_create(*, user: AbstractUser, name: str = "") -> tuple[ApiToken, str]:
    """Create a token for the user. Returns the stored record and the raw token, shown once."""
    raw = generate_token()
    token = ApiToken.objects.create(user=user, name=name, key_hash=hash_token(raw), prefix=raw[:10])
    return token, raw
