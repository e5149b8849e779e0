"""Writes to the gate's data: ingest outputs, edit task types, create users and tokens."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractUser, Group
from django.db import IntegrityError, transaction
from django.utils import timezone

from gating import scoring
from gating.exceptions import IdempotencyConflict
from gating.models import (
    DEFAULT_FACT_CHECK_VALIDATORS,
    ApiToken,
    Output,
    TaskModelStats,
    TaskType,
    Validator,
)
from gating.roles import Role
from gating.submissions import OutputSubmission
from gating.tokens import generate_token, hash_token


@dataclass(frozen=True)
class IngestResult:
    output: Output
    created: bool


@dataclass
class _TaskContext:
    """What the gate needs to know about one task type, fetched once per request."""

    task_type: TaskType
    validators: dict[str, Validator]
    pair_stats: dict[str, scoring.PairHistory]

    @property
    def policy(self) -> scoring.GatePolicy:
        t = self.task_type
        return scoring.GatePolicy(
            review_threshold=t.review_threshold,
            approve_threshold=t.approve_threshold,
            cold_start_reviews=t.cold_start_reviews,
            cold_start_margin=t.cold_start_margin,
            task_type_reviewed=t.reviewed_count,
        )


def _task_contexts(submissions: Iterable[OutputSubmission]) -> dict[str, _TaskContext]:
    """Load (creating on first use) the task types, validators and pair counters needed."""
    wanted_validators: dict[str, set[str]] = {}
    wanted_models: dict[str, set[str]] = {}
    for s in submissions:
        wanted_validators.setdefault(s.task_type, set()).update(v.name for v in s.validators)
        wanted_models.setdefault(s.task_type, set()).add(s.model)

    task_types = {t.name: t for t in TaskType.objects.filter(name__in=wanted_validators)}
    for name in wanted_validators.keys() - task_types.keys():
        task_types[name], _ = TaskType.objects.get_or_create(name=name)

    validators: dict[int, dict[str, Validator]] = {t.pk: {} for t in task_types.values()}
    for v in Validator.objects.filter(task_type__in=task_types.values()):
        validators[v.task_type_id][v.name] = v
    missing = [
        Validator(task_type=t, name=n, is_fact_check=n in DEFAULT_FACT_CHECK_VALIDATORS)
        for t in task_types.values()
        for n in wanted_validators[t.name] - validators[t.pk].keys()
    ]
    if missing:
        Validator.objects.bulk_create(missing, ignore_conflicts=True)
        for v in Validator.objects.filter(
            task_type__in={m.task_type_id for m in missing}, name__in={m.name for m in missing}
        ):
            validators[v.task_type_id][v.name] = v

    stats: dict[int, dict[str, scoring.PairHistory]] = {t.pk: {} for t in task_types.values()}
    all_models = set().union(*wanted_models.values())
    for row in TaskModelStats.objects.filter(
        task_type__in=task_types.values(), model__in=all_models
    ):
        stats[row.task_type_id][row.model] = scoring.PairHistory(
            reviewed=row.reviewed_count, approved_unchanged=row.approved_unchanged_count
        )
    return {
        name: _TaskContext(task_type=t, validators=validators[t.pk], pair_stats=stats[t.pk])
        for name, t in task_types.items()
    }


def _gate(submission: OutputSubmission, context: _TaskContext) -> scoring.GateResult:
    outcomes = [
        scoring.ValidatorOutcome(
            name=v.name,
            passed=v.passed,
            weight=context.validators[v.name].weight,
            is_fact_check=context.validators[v.name].is_fact_check,
        )
        for v in submission.validators
    ]
    return scoring.score_output(
        validators=outcomes,
        input_clarity=submission.input_clarity,
        coherence=submission.coherence,
        requires_fact_check=submission.requires_fact_check,
        pair=context.pair_stats.get(submission.model, scoring.PairHistory()),
        policy=context.policy,
    )


def _build_output(
    *, source: AbstractUser, submission: OutputSubmission, context: _TaskContext, now
) -> Output:
    result = _gate(submission, context)
    held = result.decision is scoring.Decision.PENDING_REVIEW
    return Output(
        source=source,
        external_id=submission.external_id,
        request_hash=submission.fingerprint(),
        task_type=context.task_type,
        model=submission.model,
        tier=submission.tier,
        input_text=submission.input,
        output_text=submission.output,
        input_clarity=submission.input_clarity,
        coherence=submission.coherence,
        requires_fact_check=submission.requires_fact_check,
        validator_results=[v.model_dump() for v in submission.validators],
        evidence=submission.evidence,
        metadata=submission.metadata,
        score=result.score,
        base_score=result.base_score,
        decision=result.decision.value,
        review_threshold=result.review_threshold,
        approve_threshold=result.approve_threshold,
        scorer=result.scorer,
        impacts=[i.as_dict() for i in result.impacts],
        reasons=result.reasons,
        status=Output.Status.PENDING if held else Output.Status.APPROVED,
        final_output_text=None if held else submission.output,
        created_at=now,
        decided_at=None if held else now,
    )


def _replay(existing: Output, submission: OutputSubmission) -> IngestResult:
    if existing.request_hash != submission.fingerprint():
        raise IdempotencyConflict(
            f"external_id {existing.external_id!r} was already submitted with a different body."
        )
    return IngestResult(output=existing, created=False)


def output_ingest(*, source: AbstractUser, submission: OutputSubmission) -> IngestResult:
    """Score and store one output, or return the stored one for an identical replay.

    Raises IdempotencyConflict when the external_id was used before with another body.
    """
    existing = _existing_output(source, submission.external_id)
    if existing is not None:
        return _replay(existing, submission)
    context = _task_contexts([submission])[submission.task_type]
    output = _build_output(
        source=source, submission=submission, context=context, now=timezone.now()
    )
    try:
        with transaction.atomic():
            output.save(force_insert=True)
    except IntegrityError:
        # Another request with the same external_id got there first.
        existing = _existing_output(source, submission.external_id)
        if existing is None:
            raise
        return _replay(existing, submission)
    return IngestResult(output=output, created=True)


def output_ingest_batch(
    *, source: AbstractUser, submissions: list[OutputSubmission]
) -> list[IngestResult]:
    """Score and store a batch in one transaction: every new output is stored, or none is.

    Items already stored with an identical body are replays; one stored with a different
    body makes the whole batch fail with IdempotencyConflict naming each such index.
    """
    with transaction.atomic():
        existing = {
            o.external_id: o
            for o in Output.objects.select_related("task_type").filter(
                source=source, external_id__in=[s.external_id for s in submissions]
            )
        }
        conflicts = [
            index
            for index, s in enumerate(submissions)
            if s.external_id in existing and existing[s.external_id].request_hash != s.fingerprint()
        ]
        if conflicts:
            raise IdempotencyConflict(
                "These items reuse an external_id with a different body.", indexes=conflicts
            )
        fresh = [s for s in submissions if s.external_id not in existing]
        contexts = _task_contexts(fresh) if fresh else {}
        now = timezone.now()
        built = [
            _build_output(source=source, submission=s, context=contexts[s.task_type], now=now)
            for s in fresh
        ]
        try:
            with transaction.atomic():
                Output.objects.bulk_create(built)
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


def _existing_output(source: AbstractUser, external_id: str) -> Output | None:
    return (
        Output.objects.select_related("task_type")
        .filter(source=source, external_id=external_id)
        .first()
    )


def task_type_update(*, task_type: TaskType, changes: dict) -> TaskType:
    """Apply already-validated threshold and cold-start changes to a task type."""
    for field, value in changes.items():
        setattr(task_type, field, value)
    task_type.save(update_fields=[*changes, "updated_at"])
    return task_type


def user_create(*, username: str, role: Role, password: str | None = None) -> AbstractUser:
    user = get_user_model().objects.create_user(username=username, password=password)
    if role is Role.ADMIN:
        user.is_staff = True
        user.save(update_fields=["is_staff"])
    user.groups.add(Group.objects.get(name=role.value))
    return user


def api_token_create(*, user: AbstractUser, name: str = "") -> tuple[ApiToken, str]:
    """Create a token for the user. Returns the stored record and the raw token, shown once."""
    raw = generate_token()
    token = ApiToken.objects.create(user=user, name=name, key_hash=hash_token(raw), prefix=raw[:10])
    return token, raw
