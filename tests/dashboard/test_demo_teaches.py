"""The demo that `make run` seeds teaches what the learning does: on its own settings, at
least one approve threshold is certified and moves, and ends certified, the queue is one
its team keeps up with, what is auto-approved is within its budget by the simulator's
hidden truth, and leads' gold checks test the label model (docs/simulation.md, "The
demo")."""

from datetime import UTC, datetime, timedelta

import pytest

from dashboard import demo
from dashboard.filters import DashboardFilter
from dashboard.metrics import metric_rows
from dashboard.settings import base as base_settings
from gating.models import AuditEvent, ReviewItem, TaskType
from gating.scoring import Decision
from learning.models import SimulatedTruth, ThresholdChange
from learning.statistics.agreement import MIN_PAIRS
from simulator.world import Truth

# Slow (seeds the whole demo): `make check` leaves it out. On a fresh database, as make run
# seeds it: ids from 1. Gold checks are drawn by the output's id (gating.reviews.gold_drawn),
# so ids offset by the tests run before in the same process drew other gold checks, and
# the history took another course (seeded three times in one process, the demo ended at
# three different classify thresholds).
pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True, reset_sequences=True)]

# A Wednesday afternoon, as make run might be started.
UNTIL = datetime(2026, 3, 4, 15, 30, tzinfo=UTC)


def test_the_demo_certifies_and_keeps_its_budgets(settings):
    # As make run seeds it: with the gold checks the test settings leave out.
    settings.REVIEW_GOLD_SHARE = base_settings.REVIEW_GOLD_SHARE
    config = demo.demo_config(until=UNTIL)
    report = demo.demo_traffic_seed(config, until=UNTIL)

    certified = ThresholdChange.objects.filter(which="approve", state="certified")
    assert certified.exists(), _approve_states_at_the_end()
    moved = TaskType.objects.exclude(approve_threshold=7.0)
    assert set(moved.values_list("name", flat=True)) & set(
        certified.values_list("task_type__name", flat=True)
    )
    # And it ends certified: the demo's team works every day, so its last thresholds run is
    # the same whatever weekday make run starts on.
    assert TaskType.objects.filter(approve_guarantee="certified").exists(), (
        _approve_states_at_the_end()
    )

    # The team keeps up: what is open at the end is less than two days of traffic.
    open_items = ReviewItem.objects.filter(state=ReviewItem.State.OPEN).count()
    assert open_items == report.open_items < 2 * demo.DEMO_OUTPUTS_PER_DAY

    # What each task type auto-approved in the last week, by the truth: within its budgets
    # (P(edit or bad) and P(bad)), on the outputs it approved.
    since = UNTIL - timedelta(days=7)
    approving = 0
    for task_type in TaskType.objects.all():
        truths = list(
            SimulatedTruth.objects.filter(
                output__task_type=task_type,
                output__decision=Decision.APPROVED,
                output__created_at__gte=since,
            ).values_list("truth", flat=True)
        )
        if not truths:
            continue
        approving += 1
        edit_or_bad = sum(t != Truth.GOOD for t in truths) / len(truths)
        bad = sum(t == Truth.BAD for t in truths) / len(truths)
        assert edit_or_bad <= task_type.alpha_approve, task_type.name
        assert bad <= task_type.alpha_bad, task_type.name
    assert approving >= 1

    # Leads took gold checks, and the thresholds runs checked the label model against them.
    assert ReviewItem.objects.filter(kind=ReviewItem.Kind.GOLD, state="decided").exists()
    checked = [
        change.evidence["gold"]["finds_fault"]["n"]
        for change in ThresholdChange.objects.filter(which="approve", evidence__has_key="gold")
        if change.evidence["gold"]
    ]
    assert checked and max(checked) > 0

    # The rubrics, saved as an admin's edit is, were scored by the simulated reviewers: the
    # reviewers page has an agreement for every dimension of both over the last week.
    edits = AuditEvent.objects.filter(action=AuditEvent.Action.RUBRIC_EDIT)
    assert sorted(e.after["task_type"] for e in edits) == sorted(demo.DEMO_RUBRICS)
    week = DashboardFilter(since=since, until=UNTIL)
    rows = metric_rows("rubric-agreement", week)
    assert {(r["task_type"], r["dimension"]) for r in rows} == {
        (name, d["name"]) for name in demo.DEMO_RUBRICS for d in demo.DEMO_RUBRIC_DIMENSIONS
    }
    assert all(r["value"] is not None and r["n"] >= MIN_PAIRS for r in rows), rows


def _approve_states_at_the_end() -> str:
    """What the last thresholds run found for each approve threshold, to read a failure by."""
    last = ThresholdChange.objects.filter(which="approve").order_by("-at").first()
    if last is None:
        return "No thresholds run."
    return "\n".join(
        f"{c.task_type.name}: {c.state} at {c.new_value} (n={c.n}, bound={c.bound})"
        for c in ThresholdChange.objects.filter(which="approve", at=last.at)
    )
