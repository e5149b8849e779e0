"""The data the contract run fuzzes against: a user and a token per role, task types, held
and delivered outputs, review items in every state, alerts in every state, a tiers cycle
for the routing advice, a decisions webhook, and the dashboard's rollups of it all.

Without it most operations would only ever answer 403 or 404. The ids it returns feed
schemathesis's dictionaries, so that a share of the generated path and query values name
rows that exist, and the code behind them runs. Shared by ``tests/contract`` and
``bench/contract.py``; it writes through the services, as the API would.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import timedelta

from django.utils import timezone

from dashboard.rollups import queue_snapshot_take, rollups_refresh
from gating import reviews, services
from gating.authentication import forget_tokens
from gating.models import Output, ReviewItem, TaskType, Webhook
from gating.roles import Role
from gating.submissions import OutputSubmission
from learning import dataset_formats, datasets
from learning.models import Alert, CycleRun, TierAssessment

# Fixed, so that the sampling draws (audits, second reviews) and so the seeded queue are
# the same on every run: with schemathesis's fixed seed, a failure reproduces.
SEED = 20240601

MODELS = ("model-a", "model-b")
# (name, fields): one in cold start, so everything it gets is held for review, and one
# past it that samples audits and second reviews of what it lets through.
TASK_TYPES = {
    "held": {"reviewed_count": 0, "double_review_rate": 0.0},
    "summarize": {
        "reviewed_count": 100,
        "audit_rate_approved": 0.5,
        "audit_rate_warning": 0.5,
        "double_review_rate": 0.5,
    },
}


@dataclass
class World:
    tokens: dict[Role, str]
    usernames: dict[Role, str]
    task_types: list[str]
    models: list[str]
    output_ids: list[int]
    item_ids: list[int]
    alert_ids: list[int]
    # A dataset with a version (of the settled outputs), and one of hand-added outputs only.
    dataset_ids: list[int] = field(default_factory=list)
    # Per role that reviews: the item the role's user holds a live claim on.
    held_item_ids: dict[Role, int] = field(default_factory=dict)


def _submission(n: int, *, task_type: str, model: str, passed: int) -> OutputSubmission:
    names = ("facts", "schema", "grammar", "length")
    return OutputSubmission(
        external_id=f"contract-{task_type}-{n}",
        task_type=task_type,
        model=model,
        tier="fast" if model == "model-a" else "quality",
        input=f"Summarise report {n}.",
        output=f"Revenue grew {n}% on the quarter.",
        validators=[{"name": name, "passed": i < passed} for i, name in enumerate(names)],
        input_clarity=0.5 + (n % 5) / 10,
        coherence=0.5 + (n % 4) / 10,
        requires_fact_check=n % 2 == 0,
        metadata={"request_id": f"r-{n}"},
    )


def _ingest(source, task_type: str, count: int, rng: random.Random) -> list[Output]:
    submissions = [
        _submission(n, task_type=task_type, model=MODELS[n % len(MODELS)], passed=n % 5)
        for n in range(count)
    ]
    results = services.output_ingest_batch(source=source, submissions=submissions, rng=rng)
    return [r.output for r in results]


def _alerts(lead) -> list[int]:
    now = timezone.now()
    common = {"message": "12 outputs held for over an hour.", "value": 12.0, "limit": 10.0}
    open_ = Alert.objects.create(
        rule=Alert.Rule.BACKLOG, subject="held", first_seen=now, last_seen=now, **common
    )
    acknowledged = Alert.objects.create(
        rule=Alert.Rule.SCORE_SHIFT,
        subject="summarize",
        state=Alert.State.ACKNOWLEDGED,
        acknowledged_by=lead,
        acknowledged_at=now,
        note="Looking into it.",
        first_seen=now - timedelta(hours=2),
        last_seen=now,
        **common,
    )
    resolved = Alert.objects.create(
        rule=Alert.Rule.BACKLOG,
        subject="summarize",
        state=Alert.State.RESOLVED,
        first_seen=now - timedelta(days=1),
        last_seen=now - timedelta(hours=20),
        resolved_at=now - timedelta(hours=20),
        **common,
    )
    return [open_.pk, acknowledged.pk, resolved.pk]


def _tiers_cycle() -> None:
    """A finished tiers cycle, so that the routing advice is not empty."""
    now = timezone.now()
    cycle = CycleRun.objects.create(
        kind=CycleRun.Kind.TIERS,
        status=CycleRun.Status.SUCCEEDED,
        window_start=now - timedelta(days=1),
        window_end=now,
        started_at=now,
        finished_at=now,
        changes=[
            {"task_type": "summarize", "recommended_tier": "fast", "reason": "fast is accurate"}
        ],
    )
    summarize = TaskType.objects.get(name="summarize")
    for rank, (model, tier, accuracy) in enumerate(
        [("model-a", "fast", 0.92), ("model-b", "quality", None)], start=1
    ):
        TierAssessment.objects.create(
            cycle=cycle,
            task_type=summarize,
            model=model,
            tier=tier,
            reviews=25 if accuracy else 0,
            accuracy=accuracy,
            mean_score=7.5 if accuracy else None,
            confidence=1.0 if accuracy else 0.0,
            adjusted_score=accuracy or 0.0,
            rank=rank,
        )


def _datasets(lead, *, settled: int) -> list[int]:
    every = datasets.dataset_create(name="contract-all", filter={}, fields=["input"], actor=lead)
    datasets.version_create(dataset=every, actor=lead)
    by_hand = datasets.dataset_create(
        name="contract-hand", filter=None, fields=list(dataset_formats.FIELDS), actor=lead
    )
    datasets.outputs_add(dataset=by_hand, output_ids=[settled], actor=lead)
    datasets.version_create(dataset=by_hand, actor=lead)
    return [every.pk, by_hand.pk]


def seed_world() -> World:
    # The gate's per-process caches may still hold the rows of a world flushed before.
    services.gate_caches_clear()
    forget_tokens()
    rng = random.Random(SEED)
    users = {
        role: services.user_create(username=f"contract-{role.value}", role=role) for role in Role
    }
    # A second gateway, whose outputs the first must not see, and a second reviewer, who
    # holds a claim that nobody else may decide.
    other_gateway = services.user_create(username="contract-gateway-2", role=Role.GATEWAY)
    other_reviewer = services.user_create(username="contract-reviewer-2", role=Role.REVIEWER)
    tokens = {role: services.api_token_create(user=user)[1] for role, user in users.items()}

    for name, fields in TASK_TYPES.items():
        TaskType.objects.create(name=name, **fields)
    Webhook.objects.create(
        owner=users[Role.GATEWAY], url="https://93.184.216.34/decisions", secret="s"
    )

    outputs = [
        *_ingest(users[Role.GATEWAY], "held", 20, rng),
        *_ingest(users[Role.GATEWAY], "summarize", 30, rng),
        *_ingest(other_gateway, "summarize", 5, rng),
    ]
    # Claims: a decided item (a 409 for everyone), the other reviewer's live claim (a 409
    # for anyone else), then one live claim per reviewing role.
    decided = reviews.item_claim(reviewer=other_reviewer)
    reviews.item_decide(
        item_id=decided.pk,
        reviewer=other_reviewer,
        decision=reviews.DecisionInput(action="approve", edited_output=None, reason="", note=""),
    )
    reviews.item_claim(reviewer=other_reviewer)
    held = {
        role: reviews.item_claim(reviewer=users[role]).pk
        for role in (Role.REVIEWER, Role.LEAD, Role.ADMIN)
    }

    alert_ids = _alerts(users[Role.LEAD])
    # An output of a task type without second reviews, approved: settled, so datasets take it.
    settling = (
        ReviewItem.objects.filter(
            task_type__name="held", state=ReviewItem.State.OPEN, lease_expires_at__isnull=True
        )
        .order_by("id")
        .first()
    )
    reviews.decisions_record(
        [
            reviews.RecordedDecision(
                settling, other_reviewer, reviews.DecisionInput(action="approve"), timezone.now()
            )
        ]
    )
    dataset_ids = _datasets(users[Role.LEAD], settled=settling.output_id)
    _tiers_cycle()
    # The dashboard's metrics read the rollups and the queue's snapshots, not the outputs.
    queue_snapshot_take()
    rollups_refresh()
    return World(
        tokens=tokens,
        usernames={role: user.username for role, user in users.items()},
        task_types=sorted(TASK_TYPES),
        models=list(MODELS),
        output_ids=sorted(o.pk for o in outputs),
        item_ids=sorted(ReviewItem.objects.values_list("pk", flat=True)),
        alert_ids=alert_ids,
        dataset_ids=dataset_ids,
        held_item_ids=held,
    )
