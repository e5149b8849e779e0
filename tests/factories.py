from datetime import timedelta

import factory
from django.contrib.auth import get_user_model
from django.test import Client

from gating import services
from gating.models import Output, TaskModelStats, TaskType
from gating.roles import Role
from gating.submissions import OutputSubmission


class UserFactory(factory.django.DjangoModelFactory):
    """A user in one role: ``UserFactory(role=Role.LEAD)``."""

    class Meta:
        model = get_user_model()
        skip_postgeneration_save = True

    username = factory.Sequence(lambda n: f"user{n}")
    password = factory.django.Password("pw-for-tests")

    @factory.post_generation
    def role(obj, create, extracted, **kwargs):
        if extracted:
            from django.contrib.auth.models import Group

            obj.groups.add(Group.objects.get(name=Role(extracted).value))
            if Role(extracted) is Role.ADMIN:
                obj.is_staff = True
                obj.save(update_fields=["is_staff"])


class TaskTypeFactory(factory.django.DjangoModelFactory):
    """A task type past its cold start, with no random audits or second reviews, and no
    warning until certified, unless told otherwise: a test that wants them asks for them."""

    class Meta:
        model = TaskType
        django_get_or_create = ["name"]

    name = factory.Sequence(lambda n: f"task-{n}")
    reviewed_count = 100
    # Approving from the approve threshold as stored, whether certified or not.
    approve_requires = "nothing"
    audit_rate_approved = 0.0
    audit_rate_warning = 0.0
    double_review_rate = 0.0


class TaskModelStatsFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = TaskModelStats

    task_type = factory.SubFactory(TaskTypeFactory)
    model = "model-a"
    reviewed_count = 40
    approved_unchanged_count = 30


class SubmissionFactory(factory.DictFactory):
    """A valid ingest body, as the gateway would send it."""

    external_id = factory.Sequence(lambda n: f"ext-{n}")
    task_type = "summarize"
    model = "model-a"
    tier = "fast"
    input = "Summarise the quarterly report."
    output = "Revenue grew 4% on the quarter."
    validators = factory.LazyFunction(
        lambda: [
            {"name": "facts", "passed": True},
            {"name": "schema", "passed": True},
            {"name": "grammar", "passed": True},
            {"name": "length", "passed": False, "detail": "12 words over"},
        ]
    )
    input_clarity = 0.8
    coherence = 0.9
    requires_fact_check = True
    metadata = factory.LazyFunction(lambda: {"request_id": "r-1"})


def token_for(user) -> str:
    _, raw = services.api_token_create(user=user)
    return raw


def logged_in(user=None, **client_options) -> Client:
    """A page client with ``user``'s session (anonymous without one)."""
    client = Client(**client_options)
    if user is not None:
        client.force_login(user)
    return client


def ingested(gateway, **fields) -> Output:
    """One output sent through the gate by ``gateway``: a ``SubmissionFactory`` with ``fields``."""
    return services.output_ingest(
        source=gateway, submission=OutputSubmission(**SubmissionFactory(**fields))
    ).output


def ingested_many(gateway, submissions, *, at=None) -> list[Output]:
    """``submissions`` sent through the gate in one batch by ``gateway``; with ``at``, each
    arriving then, as the simulator stores history."""
    created_at = None if at is None else [at] * len(submissions)
    results = services.output_ingest_batch(
        source=gateway, submissions=submissions, created_at=created_at
    )
    return [r.output for r in results]


def valid_submission(**fields) -> OutputSubmission:
    """A valid submission, as a gateway sends one: ``SubmissionFactory`` with ``fields``."""
    return OutputSubmission(**SubmissionFactory(**fields))


def threshold_record(
    task_type, *, at, state="underpowered", evidence=None, value=7.0, which=("approve",)
) -> None:
    """What a guarded thresholds run at ``at`` records for ``task_type``: one decision per
    threshold in ``which``, in ``state``, held at ``value``, with ``evidence``. Runs at the
    same moment share their cycle run, as one run covers every task type."""
    from learning.models import CycleRun, ThresholdChange

    run, _ = CycleRun.objects.get_or_create(
        kind="thresholds",
        window_end=at,
        defaults={"window_start": at - timedelta(days=30), "started_at": at, "status": "succeeded"},
    )
    for threshold in which:
        ThresholdChange.objects.create(
            cycle=run,
            task_type=task_type,
            which=threshold,
            policy="guarded",
            state=state,
            old_value=value,
            new_value=value,
            reason=f"{state}.",
            evidence=evidence or {},
            at=at,
        )
