"""draw_coverage: the audits drawn in a window per task type and stratum, and how many of
them had their first review before the window's end, whatever rounds followed it."""

from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import pytest

from gating import reviews, selectors, services
from gating.models import Output, ReviewItem, TaskType
from gating.reviews import DecisionInput
from gating.roles import Role
from gating.scoring import Decision
from tests.factories import TaskTypeFactory, valid_submission

pytestmark = pytest.mark.django_db

SINCE = datetime(2026, 3, 2, 0, 0, tzinfo=UTC)
UNTIL = SINCE + timedelta(hours=10)


def at(hours: float) -> datetime:
    return SINCE + timedelta(hours=hours)


@dataclass
class Audit:
    """One audit as the scenario made it: when drawn, and when its first round was decided."""

    output: Output
    first_at: datetime | None = None


@pytest.fixture
def people(user_in):
    return {
        "first": user_in(Role.REVIEWER),
        "second": user_in(Role.REVIEWER),
        "lead": user_in(Role.LEAD),
    }


@pytest.fixture
def draw(gateway):
    """Ingest one delivered output at ``when`` into ``task_type``, audited for sure, with
    the gate's decision ``stratum``; its audit item needs a second review if asked."""

    def _draw(task_type: str, stratum: Decision, when: datetime, second=False) -> Audit:
        # Thresholds that put the submission's score above approve, or between the two.
        approve = 2.0 if stratum == Decision.APPROVED else 9.99
        TaskTypeFactory(name=task_type, audit_rate_approved=1.0, audit_rate_warning=1.0)
        TaskType.objects.filter(name=task_type).update(
            review_threshold=1.0, approve_threshold=approve
        )
        services.gate_caches_clear()
        submission = valid_submission(task_type=task_type)
        (result,) = services.output_ingest_batch(
            source=gateway, submissions=[submission], created_at=[when]
        )
        assert result.output.decision == stratum
        ReviewItem.objects.filter(output=result.output).update(needs_second_review=second)
        return Audit(result.output)

    return _draw


def decide(audit: Audit, kind: str, who, when: datetime, action="approve", **fields) -> None:
    """Claim this output's open ``kind`` item at ``when`` and decide it."""
    item = ReviewItem.objects.get(output=audit.output, kind=kind, state="open")
    claimed = reviews.item_claim(
        reviewer=who, items=ReviewItem.objects.filter(pk=item.pk), now=when
    )
    assert claimed.pk == item.pk
    reviews.item_decide(
        item_id=item.pk, reviewer=who, decision=DecisionInput(action, **fields), now=when
    )


def expected_from(audits: list[Audit]) -> dict[tuple[int, str], tuple[int, int]]:
    created, decided = Counter(), Counter()
    for audit in audits:
        if SINCE <= audit.output.created_at < UNTIL:
            key = (audit.output.task_type_id, audit.output.decision)
            created[key] += 1
            decided[key] += audit.first_at is not None and audit.first_at < UNTIL
    return {key: (created[key], decided[key]) for key in created}


def test_audits_drawn_and_decided_in_a_window_by_task_type_and_stratum(draw, people, held_outputs):
    first, second, lead = people["first"], people["second"], people["lead"]
    approved, warning = Decision.APPROVED, Decision.WARNING
    audits = []

    def audit(*args, **kwargs) -> Audit:
        audits.append(made := draw(*args, **kwargs))
        return made

    # Decided in one round: before the end, after it, or never.
    before_window = audit("a", approved, at(-1))
    decide(before_window, "audit", first, at(1))
    before_window.first_at = at(1)
    on_the_start = audit("a", approved, at(0))
    decide(on_the_start, "audit", first, at(1))
    on_the_start.first_at = at(1)
    decided_late = audit("a", approved, at(2))
    decide(decided_late, "audit", first, UNTIL)
    decided_late.first_at = UNTIL
    audit("a", approved, at(3))
    on_the_end = audit("a", approved, UNTIL)
    decide(on_the_end, "audit", first, UNTIL + timedelta(hours=1))
    just_in_time = audit("a", warning, at(2))
    decide(just_in_time, "audit", first, UNTIL - timedelta(seconds=1))
    just_in_time.first_at = UNTIL - timedelta(seconds=1)

    # Later rounds, done or still open, change nothing: the first review counts.
    agreed = audit("a", approved, at(4), second=True)
    decide(agreed, "audit", first, at(5))
    decide(agreed, "second", second, at(6))
    agreed.first_at = at(5)
    waiting = audit("a", warning, at(2), second=True)
    decide(waiting, "audit", first, at(3))
    waiting.first_at = at(3)
    disputed = audit("a", warning, at(1), second=True)
    decide(disputed, "audit", first, at(2))
    decide(disputed, "second", second, at(3), action="reject", reason="other")
    disputed.first_at = at(2)
    settled = audit("a", warning, at(1), second=True)
    decide(settled, "audit", first, at(2))
    decide(settled, "second", second, at(3), action="reject", reason="other")
    decide(settled, "adjudication", lead, at(4))
    settled.first_at = at(2)
    # A first review after the end, however its rounds went on.
    first_late = audit("a", warning, at(1), second=True)
    decide(first_late, "audit", first, UNTIL + timedelta(minutes=1))
    decide(first_late, "second", second, UNTIL + timedelta(minutes=2))
    first_late.first_at = UNTIL + timedelta(minutes=1)

    other_task = audit("b", approved, at(5))
    decide(other_task, "audit", first, at(6))
    other_task.first_at = at(6)
    # A held output is drawn too, always: a stratum of its own, with its first review.
    held = held_outputs(1)[0]
    ReviewItem.objects.filter(output=held).update(queued_at=at(5))
    decide(Audit(held), "review", first, at(6))

    coverage = selectors.draw_coverage(since=SINCE, until=UNTIL)

    held_stratum = (held.task_type_id, "pending_review")
    assert coverage.pop(held_stratum) == (1, 1)
    assert coverage == expected_from(audits)
    a, b = (TaskType.objects.get(name=name).pk for name in ("a", "b"))
    assert coverage == {(a, "approved"): (4, 2), (a, "warning"): (5, 4), (b, "approved"): (1, 1)}


def test_a_window_with_no_audits_is_empty(db):
    assert selectors.draw_coverage(since=SINCE, until=UNTIL) == {}
