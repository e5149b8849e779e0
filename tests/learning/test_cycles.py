"""The learning cycles on the database: idempotent runs, atomic failures, and what each
cycle learns from a simulated history whose truth is known."""

from datetime import UTC, date, datetime, timedelta

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from gating.models import AuditEvent, OutboxMessage, TaskType, Validator
from gating.roles import Role
from learning import cycles
from learning.models import (
    CycleRun,
    ReviewerReliability,
    ThresholdChange,
    TierAssessment,
    ValidatorAssessment,
)
from simulator import run, world

pytestmark = pytest.mark.django_db

START = date(2026, 3, 2)  # a Monday


def simulate_history(days=4, outputs_per_day=1500, reviews_per_hour=40, **task_type_fields):
    """A simulated history with plenty of verdicts, recorded in bulk."""
    config = world.SimulationConfig(
        seed=21,
        days=days,
        outputs_per_day=outputs_per_day,
        start=START,
        task_types=(world.TaskType("summarize", requires_fact_check=True),),
    )
    if task_type_fields:
        TaskType.objects.create(name="summarize", **task_type_fields)
    run.simulation_run(config, reviews_per_hour=reviews_per_hour, live_days=0)
    return datetime.combine(START + timedelta(days=days), datetime.min.time(), UTC)


@pytest.mark.slow
def test_validators_cycle_weighs_each_failure_by_what_it_says():
    # Audits at a high rate: the verdicts on held outputs alone are a biased sample (an
    # output held although facts passed must have failed something else), which the
    # inverse-probability weights of the audits correct, at a variance their rate sets.
    end = simulate_history(
        reviews_per_hour=100,
        audit_rate_approved=0.5,
        audit_rate_warning=0.5,
        double_review_rate=0.0,
    )
    result = cycles.cycle_run("validators", end)

    assert result.status == "succeeded"
    rows = {a.validator.name: a for a in ValidatorAssessment.objects.filter(cycle=result)}
    # Shapley importance, the explanation: facts, the frequent strong signal, first.
    assert max(rows, key=lambda n: rows[n].importance) == "facts"
    # The coefficients, log odds ratios of error: in the world (simulator/world.py)
    # a failure of facts is 0.75 / 0.05 likelier on a bad output than on a good one, of
    # length equally likely (pure noise).
    assert rows["facts"].coefficient > 1.0
    assert abs(rows["length"].coefficient) < 0.5
    # Weights move toward the coefficients' shares by at most 0.1 a cycle, never under the
    # floor.
    for a in rows.values():
        assert abs(a.new_weight - a.old_weight) <= 0.1 + 1e-9
        assert a.new_weight >= 0.05
        assert Validator.objects.get(pk=a.validator_id).weight == a.new_weight
    assert rows["facts"].new_weight > rows["facts"].old_weight
    assert rows["length"].new_weight < rows["length"].old_weight


def test_a_second_run_for_the_same_window_changes_nothing():
    end = simulate_history(days=2)
    first = cycles.cycle_run("validators", end)
    weights = dict(Validator.objects.values_list("pk", "weight"))

    # A duplicate beat a minute later falls in the same 6-hour window.
    again = cycles.cycle_run("validators", end + timedelta(minutes=1))

    assert again.pk == first.pk
    assert again.attempts == 1
    assert dict(Validator.objects.values_list("pk", "weight")) == weights
    assert ValidatorAssessment.objects.filter(cycle=first).count() == len(weights)
    assert CycleRun.objects.filter(kind="validators").count() == 1


def test_a_failed_run_leaves_nothing_and_its_retry_completes(monkeypatch):
    end = simulate_history(days=2)
    before = dict(TaskType.objects.values_list("name", "approve_threshold"))

    def broken(*args, **kwargs):
        raise RuntimeError("worker lost mid-cycle")

    with monkeypatch.context() as patched:
        # Fail after the cycle has computed and started writing.
        patched.setattr(ThresholdChange.objects, "bulk_create", broken)
        with pytest.raises(RuntimeError):
            cycles.cycle_run("thresholds", end)

    failed = CycleRun.objects.get(kind="thresholds")
    assert failed.status == "failed"
    assert failed.attempts == 1
    assert "worker lost" in failed.error
    assert not ThresholdChange.objects.exists()
    assert dict(TaskType.objects.values_list("name", "approve_threshold")) == before

    with monkeypatch.context() as patched:
        patched.setattr(ThresholdChange.objects, "bulk_create", broken)
        with pytest.raises(RuntimeError):
            cycles.cycle_run("thresholds", end)
    assert CycleRun.objects.get(kind="thresholds").attempts == 2

    retried = cycles.cycle_run("thresholds", end)
    assert retried.pk == failed.pk
    assert retried.status == "succeeded"
    assert retried.attempts == 3
    assert ThresholdChange.objects.filter(cycle=retried).count() == 2 * TaskType.objects.count()


def test_thresholds_cycle_records_every_decision_and_respects_pins():
    end = simulate_history(days=3, approve_threshold_pinned=True)
    result = cycles.cycle_run("thresholds", end)

    task_type = TaskType.objects.get(name="summarize")
    changes = {c.which: c for c in ThresholdChange.objects.filter(cycle=result)}
    assert set(changes) == {"review", "approve"}
    assert changes["approve"].new_value == changes["approve"].old_value == 7.0
    assert task_type.approve_threshold == 7.0
    review = changes["review"]
    assert abs(review.new_value - review.old_value) <= 0.1 + 1e-9
    assert task_type.review_threshold == review.new_value < task_type.approve_threshold
    assert review.reason and review.policy == "guarded"
    if review.new_value != review.old_value:
        edit = AuditEvent.objects.get(action="threshold_edit", object_id=str(task_type.pk))
        assert edit.actor is None
        assert edit.before == {"review_threshold": review.old_value}


def test_tiers_cycle_ranks_models_by_adjusted_score():
    end = simulate_history(days=2)
    result = cycles.cycle_run("tiers", end)

    rows = list(TierAssessment.objects.filter(cycle=result).order_by("rank"))
    assert [r.rank for r in rows] == list(range(1, len(rows) + 1))
    scores = [r.adjusted_score for r in rows]
    assert scores == sorted(scores, reverse=True)
    for r in rows:
        # By hand from ADR-017: confidence = min(1, n/20), adjusted = accuracy x confidence.
        assert r.confidence == pytest.approx(min(1.0, r.reviews / 20))
        assert r.adjusted_score == pytest.approx((r.accuracy or 0) * r.confidence)
    # gpt-x-large has the lowest error rates in the simulated world.
    assert rows[0].model == "gpt-x-large"


@pytest.mark.slow
def test_agreement_cycle_weights_reviewers_in_their_true_order():
    simulate_history(days=4, reviews_per_hour=60, double_review_rate=0.6)
    end = datetime.combine(START + timedelta(days=4), datetime.min.time(), UTC)
    result = cycles.cycle_run("agreement", end)

    reliability = {
        r.reviewer.username: r.reliability
        for r in ReviewerReliability.objects.filter(cycle=result).select_related("reviewer")
    }
    assert set(reliability) == {f"sim-{r.name}" for r in world.DEFAULT_REVIEWERS}
    # The accurate reviewer is the most reliable and the noisy one the least.
    ranked = sorted(reliability, key=reliability.get, reverse=True)
    assert ranked[0] == "sim-accurate"
    assert ranked[-1] == "sim-noisy"
    assert result.changes[0]["krippendorff_alpha"] is not None


def test_run_cycle_command(capsys):
    call_command("run_cycle", "tiers", "--at", "2026-03-03T10:00Z")
    out = capsys.readouterr().out
    assert "tiers cycle up to 2026-03-03 00:00" in out
    with pytest.raises(CommandError, match="time zone"):
        call_command("run_cycle", "tiers", "--at", "2026-03-03T10:00")
    with pytest.raises(CommandError, match="ISO 8601"):
        call_command("run_cycle", "tiers", "--at", "yesterday")


def test_run_cycle_refuses_a_future_window():
    tomorrow = (timezone.now() + timedelta(days=1)).isoformat()
    with pytest.raises(CommandError, match="in the future"):
        call_command("run_cycle", "tiers", "--at", tomorrow)
    # Nothing was marked done for it.
    assert not CycleRun.objects.exists()


def test_routing_api_gives_the_latest_tiers_cycle(gateway_api):
    assert gateway_api.get("/api/v1/routing/").json() == []
    end = simulate_history(days=2)
    cycles.cycle_run("tiers", end)
    # The simulated outputs come from another gateway: this one sees shared task types.
    TaskType.objects.filter(name="summarize").update(shared=True)

    (summarize,) = gateway_api.get("/api/v1/routing/").json()
    rows = TierAssessment.objects.filter(task_type__name="summarize").order_by("rank")
    assert summarize["task_type"] == "summarize"
    assert [m["model"] for m in summarize["models"]] == [r.model for r in rows]
    assert summarize["recommended_tier"] in {"fast", "medium"}
    assert summarize["reason"]
    assert TaskType.objects.get(name="summarize").recommended_tier == summarize["recommended_tier"]


def test_admins_run_a_cycle_now_from_the_admin(client, user_in):
    admin = user_in(Role.ADMIN)
    client.force_login(admin)

    page = client.get("/admin/learning/cyclerun/")
    assert page.status_code == 200
    assert b"Run thresholds now" in page.content
    before = timezone.now()
    response = client.post("/admin/learning/cyclerun/run/thresholds/", follow=True)
    assert b"is queued" in response.content
    # Through the outbox: the page never waits on the broker, up or down.
    (message,) = OutboxMessage.objects.all()
    assert message.task == "learning.tasks.cycle" and message.args[0] == "thresholds"
    assert before <= datetime.fromisoformat(message.args[1]) <= timezone.now()

    lead = user_in(Role.LEAD)
    client.force_login(lead)
    assert client.post("/admin/learning/cyclerun/run/alerts/").status_code == 302
    assert OutboxMessage.objects.count() == 1


def test_a_late_failure_never_overwrites_a_success():
    end = datetime(2026, 3, 3, tzinfo=UTC)
    done = cycles.cycle_run("tiers", end)
    # An attempt that failed while this one held the window's lock records its failure
    # only after the success committed.
    cycles._record_failure(CycleRun.Kind.TIERS, done.window_start, end, RuntimeError("late"))
    done.refresh_from_db()
    assert done.status == "succeeded" and done.error == ""


def test_admin_threshold_edits_are_audited(client, user_in):
    task_type = TaskType.objects.create(name="edited")
    admin = user_in(Role.ADMIN)
    client.force_login(admin)
    page = client.get(f"/admin/gating/tasktype/{task_type.pk}/change/")
    form = page.context["adminform"].form
    data = {
        name: form.initial.get(name, "")
        for name in form.fields
        if form.initial.get(name) is not None
    }
    data.update(
        {
            "approve_threshold": "7.5",
            "reason": "fewer false approvals",
            "validators-TOTAL_FORMS": "0",
            "validators-INITIAL_FORMS": "0",
        }
    )
    response = client.post(f"/admin/gating/tasktype/{task_type.pk}/change/", data)
    assert response.status_code == 302, response.content[:2000]
    task_type.refresh_from_db()
    assert task_type.approve_threshold == 7.5
    edit = AuditEvent.objects.get(action="threshold_edit", object_id=str(task_type.pk))
    assert edit.actor == admin
    assert edit.before == {"approve_threshold": 7.0}
    assert edit.after["reason"] == "fewer false approvals"
