"""The label-model evidence the cycles read from the database, the threshold states they
record, the alerts those states raise, and where leads and admins see them.

Expected values are worked out here from the rows the tests make: scores by the gate's own
``score_output``, weights from the rates and counts written into the test, states from
what the guarded policy is given."""

from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from gating import reviews, scoring, services
from gating.models import AuditEvent, Output, ReviewItem, TaskModelStats, TaskType, Validator
from gating.reviews import DecisionInput, RecordedDecision
from learning import alerts, cycles, evidence, selectors
from learning.models import Alert, ThresholdChange
from tests.factories import threshold_record
from tests.learning.test_alerts import decide, ingest

pytestmark = pytest.mark.django_db

NOW = datetime(2026, 3, 20, 12, 0, tzinfo=UTC)


def held_and_decided(gateway, reviewer, *, count=30, action="approve", **fields):
    outputs = ingest(gateway, count, at=NOW - timedelta(days=2), **fields)
    decide(outputs, reviewer, action, NOW - timedelta(days=1))
    return outputs


def audits_of_approved(gateway, count, *, rate):
    """``count`` outputs turned into audits of approved outputs drawn at ``rate``, the task
    type's approved audit rate set to it."""
    audited = ingest(gateway, count, at=NOW - timedelta(days=2))
    ReviewItem.objects.filter(output__in=audited).update(
        kind="audit", is_audit=True, inclusion_probability=rate
    )
    Output.objects.filter(pk__in=[o.pk for o in audited]).update(decision="approved")
    TaskType.objects.filter(name="t").update(audit_rate_approved=rate)
    return audited


def test_judged_outputs_are_rescored_with_todays_weights(gateway, user_in):
    reviewer = user_in("reviewer")
    outputs = held_and_decided(gateway, reviewer, facts=False)
    task_type = TaskType.objects.get(name="t")
    Validator.objects.filter(task_type=task_type, name="facts").update(weight=3.0)

    found = evidence.judged_evidence(since=NOW - timedelta(days=30), until=NOW)

    o = outputs[0]
    # The gate's formula with today's weight, fact-check flag and the pair's record now:
    # 30 approved unchanged of 30, so the full bonus of 0.5.
    stats = TaskModelStats.objects.get(task_type=task_type, model=o.model)
    assert (stats.reviewed_count, stats.approved_unchanged_count) == (30, 30)
    facts = Validator.objects.get(task_type=task_type, name="facts")
    by_hand = scoring.score_output(
        validators=[
            scoring.ValidatorOutcome("facts", False, 3.0, facts.is_fact_check),
            scoring.ValidatorOutcome("tone", True, 1.0),
        ],
        input_clarity=o.input_clarity,
        coherence=o.coherence,
        requires_fact_check=o.requires_fact_check,
        pair=scoring.PairHistory(30, 30),
        policy=scoring.GatePolicy(task_type_reviewed=100),
    ).score
    position = list(found.output_ids).index(o.pk)
    assert found.scores[position] == pytest.approx(by_hand)
    assert found.scores[position] != pytest.approx(o.score)  # stored with weight 1


def test_an_output_another_scorer_decided_keeps_its_stored_score(gateway, user_in):
    reviewer = user_in("reviewer")
    outputs = held_and_decided(gateway, reviewer, facts=False)
    task_type = TaskType.objects.get(name="t")
    # Half were decided by the interval scorer; its score does not read validator weights.
    by_interval = outputs[: len(outputs) // 2]
    Output.objects.filter(pk__in=[o.pk for o in by_interval]).update(scorer="interval-v1")
    Validator.objects.filter(task_type=task_type, name="facts").update(weight=3.0)

    found = evidence.judged_evidence(since=NOW - timedelta(days=30), until=NOW)

    positions = {pk: i for i, pk in enumerate(found.output_ids)}
    for o in by_interval:
        assert found.scores[positions[o.pk]] == o.score
    for o in outputs[len(outputs) // 2 :]:
        assert found.scores[positions[o.pk]] != pytest.approx(o.score)  # rescored


def test_a_style_only_modify_counts_as_an_approve(gateway, user_in):
    reviewer = user_in("reviewer")
    plain = ingest(gateway, 20, at=NOW - timedelta(days=2))
    styled = ingest(gateway, 20, at=NOW - timedelta(days=2))
    decide(plain, reviewer, "approve", NOW - timedelta(days=1))
    reviews.decisions_record(
        [
            RecordedDecision(
                ReviewItem.objects.get(output=o, state="open"),
                reviewer,
                DecisionInput("modify", edited_output="Same, reworded.", style_only=True),
                NOW - timedelta(days=1),
            )
            for o in styled
        ]
    )
    found = evidence.judged_evidence(since=NOW - timedelta(days=30), until=NOW)
    error = {int(i): e for i, e in zip(found.output_ids, found.fit.error, strict=True)}
    # One reviewer, every verdict an approve once style-only modifies count as approves:
    # the label model has nothing that says error.
    assert max(error.values()) < 0.05
    assert error[styled[0].pk] == pytest.approx(error[plain[0].pk])


def test_an_audit_stands_for_its_rate_times_the_share_of_audits_decided(
    gateway, user_in, monkeypatch
):
    reviewer = user_in("reviewer")
    held_and_decided(gateway, reviewer)
    task_type = TaskType.objects.get(name="t")
    # Two audits of approved outputs drawn at 0.2; one decided, one still waiting.
    audited = audits_of_approved(gateway, 2, rate=0.2)
    decide(audited[:1], reviewer, "approve", NOW - timedelta(days=1))

    found = evidence.judged_evidence(since=NOW - timedelta(days=30), until=NOW)

    weight = dict(zip(found.output_ids.tolist(), found.weights.tolist(), strict=True))
    assert audited[1].pk not in weight  # no verdict yet
    assert weight[audited[0].pk] == pytest.approx(1 / (0.2 * 0.5))
    held = [w for pk, w in weight.items() if pk not in {o.pk for o in audited}]
    assert held == [1.0] * 30
    assert found.audits_achieved(task_type.pk) == {
        "approved": {"drawn": 2, "decided": 1, "share_decided": 0.5},
        "pending_review": {"drawn": 30, "decided": 30, "share_decided": 1.0},
    }
    # And the thresholds run records them with the approve threshold's evidence.
    run = cycles.cycle_run("thresholds", NOW)
    approve = ThresholdChange.objects.get(cycle=run, which="approve")
    assert approve.evidence["audits"]["approved"]["share_decided"] == 0.5


def test_an_audit_that_found_fault_counts_before_its_second_review(gateway, user_in):
    reviewer = user_in("reviewer")
    held_and_decided(gateway, reviewer)
    task_type = TaskType.objects.get(name="t")
    audited = audits_of_approved(gateway, 2, rate=0.2)
    decide(audited, reviewer, "reject", NOW - timedelta(days=1))
    # An audit that finds fault goes to a second reviewer, who has not come yet.
    assert ReviewItem.objects.filter(output__in=audited, kind="second", state="open").count() == 2

    found = evidence.judged_evidence(since=NOW - timedelta(days=30), until=NOW)

    weight = dict(zip(found.output_ids.tolist(), found.weights.tolist(), strict=True))
    # Both are judged on the reject they have, each standing for 1 / 0.2 outputs: both
    # audits drawn had their first review.
    assert weight[audited[0].pk] == weight[audited[1].pk] == pytest.approx(1 / 0.2)
    assert found.audits_achieved(task_type.pk)["approved"]["share_decided"] == 1.0
    audited_pks = {o.pk for o in audited}
    error = dict(zip(found.output_ids.tolist(), found.fit.error.tolist(), strict=True))
    assert error[audited[0].pk] > max(e for pk, e in error.items() if pk not in audited_pks)
    # The cycles that read settled verdicts (the alerts) still wait for the last round.
    settled = selectors.verdicts(since=NOW - timedelta(days=30), until=NOW)
    assert not audited_pks & {v.output_id for v in settled}


def test_audits_drawn_sparser_than_their_rate_today_are_left_out(gateway, user_in):
    reviewer = user_in("reviewer")
    held_and_decided(gateway, reviewer)
    audited = ingest(gateway, 3, at=NOW - timedelta(days=2))
    ReviewItem.objects.filter(output__in=audited).update(
        kind="audit", is_audit=True, inclusion_probability=0.02
    )
    type(audited[0]).objects.filter(pk__in=[o.pk for o in audited]).update(decision="approved")
    decide(audited, reviewer, "approve", NOW - timedelta(days=1))
    TaskType.objects.filter(name="t").update(audit_rate_approved=0.25)

    found = evidence.judged_evidence(since=NOW - timedelta(days=30), until=NOW)

    assert not {o.pk for o in audited} & set(found.output_ids.tolist())
    task_type = TaskType.objects.get(name="t")
    assert found.by_task_type[task_type.pk].dropped_sparser_audits == 3


def test_an_underpowered_run_holds_raises_audits_and_says_so(gateway, user_in):
    reviewer = user_in("reviewer")
    held_and_decided(gateway, reviewer, count=40)
    task_type = TaskType.objects.get(name="t")
    before = task_type.approve_threshold

    run = cycles.cycle_run("thresholds", NOW)

    approve = ThresholdChange.objects.get(cycle=run, which="approve")
    assert approve.state == ThresholdChange.State.UNDERPOWERED
    assert approve.new_value == before  # never a silent climb
    assert approve.reason.startswith("Underpowered")
    task_type.refresh_from_db()
    assert task_type.audit_rate_approved == task_type.audit_rate_budget == 0.25
    assert any("audit_rate_approved" in c for c in run.changes)
    # What the threshold in force approves, read as the search reads a candidate: the 40
    # outputs scoring at least 7.0 (all of them, each weight 1), an estimate under its
    # bound.
    # Approvals require nothing here, so the gate approves from the threshold uncertified.
    in_force = approve.evidence["in_force"]
    scoring_above = Output.objects.filter(task_type=task_type, score__gte=before).count()
    assert (task_type.approve_requires, task_type.approve_guarantee) == ("nothing", "none")
    assert in_force["approves_from"] == in_force["threshold"] == before
    assert in_force["edit"]["n"] == in_force["bad"]["n"] == scoring_above == 40
    for loss in ("edit", "bad"):
        assert 0 <= in_force[loss]["estimate"] < in_force[loss]["bound"] <= 1
    # The insufficient-evidence alert opens from it.
    alerts.alerts_evaluate(NOW)
    alert = Alert.objects.get(rule=Alert.Rule.INSUFFICIENT_EVIDENCE, subject="t")
    assert "underpowered" in alert.message and "budget 0.25" in alert.message
    # One run so far: no pace to forecast from, as the thresholds page says.
    assert alert.message.endswith("Certification at today's estimates: after a day of runs.")


def test_an_underpowered_run_sets_an_estimated_line_where_approvals_require_one(gateway, user_in):
    # 250 clean held outputs, all reviewed (weight 1): too few to test against P(bad) <= 1 %
    # (299 needed), enough to read the estimates with their margin (165; docs/gate.md).
    reviewer = user_in("reviewer")
    held_and_decided(gateway, reviewer, count=250, approve_requires="estimate")
    task_type = TaskType.objects.get(name="t")

    run = cycles.cycle_run("thresholds", NOW)

    approve = ThresholdChange.objects.get(cycle=run, which="approve")
    assert approve.state == ThresholdChange.State.UNDERPOWERED
    assert approve.new_value == 7.0  # the approve threshold does not follow estimates
    # Every candidate from 10 down to 4.02 (above the review threshold) reads the same 250:
    # the line starts from the approve threshold and comes down one step, as a threshold
    # would.
    assert "Estimated approve line: 4.02 is the lowest threshold" in approve.reason
    task_type.refresh_from_db()
    assert (task_type.approve_guarantee, task_type.estimated_approve_threshold) == (
        "estimated",
        6.9,
    )
    # The gate approves from the higher of the threshold and the line, and the reading of
    # what it approves now is taken there.
    assert approve.evidence["in_force"]["approves_from"] == 7.0
    event = AuditEvent.objects.filter(action=AuditEvent.Action.THRESHOLD_EDIT).last()
    assert event.after["estimated_approve_threshold"] == 6.9
    assert event.after["approve_guarantee"] == "estimated"
    # A person who moves the approve threshold takes both back.
    services.gate_settings_change_many(
        edits=[services.GateSettingsEdit(task_type, {"approve_threshold": 8.0}, reason="why")],
        actor=None,
        source=services.EditSource.API,
    )
    task_type.refresh_from_db()
    assert (task_type.approve_guarantee, task_type.estimated_approve_threshold) == ("none", None)


def test_a_run_that_need_not_estimate_sets_no_line(gateway, user_in):
    reviewer = user_in("reviewer")
    held_and_decided(gateway, reviewer, count=250, approve_requires="certified")
    run = cycles.cycle_run("thresholds", NOW)
    task_type = TaskType.objects.get(name="t")
    assert (task_type.approve_guarantee, task_type.estimated_approve_threshold) == ("none", None)
    # Uncertified under "certified": nothing is approved, and the reading says so.
    approve = ThresholdChange.objects.get(cycle=run, which="approve")
    assert approve.evidence["in_force"]["approves_from"] is None


def record(task_type, state, at, evidence_=None, value=7.0):
    threshold_record(
        task_type, at=at, state=state, evidence=evidence_, value=value, which=("review", "approve")
    )


BEST = {
    "best_edit": {"error": 0.031, "threshold": 9.7},
    "best_bad": {"error": 0.004, "threshold": 9.2},
}


def test_not_attainable_alerts_after_two_runs_in_a_row_with_the_best_certifiable(gateway):
    ingest(gateway, 1, at=NOW - timedelta(days=1))
    task_type = TaskType.objects.get(name="t")
    record(task_type, "certified", NOW - timedelta(hours=36))
    record(task_type, "not_attainable", NOW - timedelta(hours=24), BEST)
    (before,) = [f for f in alerts.threshold_evidence(NOW) if f.rule == "not_attainable"]
    assert not before.firing

    record(task_type, "not_attainable", NOW - timedelta(hours=12), BEST)
    (finding,) = [f for f in alerts.threshold_evidence(NOW) if f.rule == "not_attainable"]
    assert finding.firing
    assert "At best, an error of 0.0310 could be certified, at threshold 9.7." in finding.message
    # Scores are capped at 10: pinning there still auto-approves what reaches the cap, so
    # the choice offered is the switch.
    assert "turning auto-approval off" in finding.message
    assert finding.value == 0.031
    states = {(s.task_type, s.which): s for s in selectors.threshold_states()}
    approve = states[("t", "approve")]
    assert approve.state == "not_attainable" and approve.runs_in_a_row == 2
    assert approve.guarantee == "suspended"
    # Where approvals require a guarantee, nothing is approved without it.
    TaskType.objects.filter(pk=task_type.pk).update(approve_requires="certified")
    states = {(s.task_type, s.which): s for s in selectors.threshold_states()}
    assert states[("t", "approve")].guarantee == (
        "none: what reaches it is delivered as a warning until it is certified"
    )
    TaskType.objects.filter(pk=task_type.pk).update(approve_requires="estimate")
    states = {(s.task_type, s.which): s for s in selectors.threshold_states()}
    assert states[("t", "approve")].guarantee == (
        "none: what reaches it is delivered as a warning until it is certified or estimated"
    )
    TaskType.objects.filter(pk=task_type.pk, approve_guarantee="none").update(
        approve_guarantee="estimated", estimated_approve_threshold=9.4
    )
    states = {(s.task_type, s.which): s for s in selectors.threshold_states()}
    assert states[("t", "approve")].guarantee.startswith("estimated: approves from 9.4,")
    # A kept threshold above the line: the gate approves from the threshold, and the
    # words say so.
    TaskType.objects.filter(pk=task_type.pk).update(approve_threshold=9.54)
    states = {(s.task_type, s.which): s for s in selectors.threshold_states()}
    assert states[("t", "approve")].guarantee.startswith("estimated: approves from 9.54,")
    TaskType.objects.filter(pk=task_type.pk).update(approve_threshold=task_type.approve_threshold)
    TaskType.objects.filter(pk=task_type.pk).update(
        approve_requires="nothing", approve_guarantee="none", estimated_approve_threshold=None
    )
    assert (approve.best_certifiable_error, approve.best_certifiable_threshold) == (0.031, 9.7)

    # The admin turns auto-approval off: the alert's choice is made, and the budget of
    # auto-approved outputs no longer applies to anything.
    TaskType.objects.filter(pk=task_type.pk).update(auto_approve=False)
    (answered,) = [f for f in alerts.threshold_evidence(NOW) if f.rule == "not_attainable"]
    assert not answered.firing
    states = {(s.task_type, s.which): s for s in selectors.threshold_states()}
    assert states[("t", "approve")].guarantee == "not needed: auto-approval is off"
    assert states[("t", "review")].guarantee == "not met: all held"


def test_threshold_states_api_and_pages(gateway, user_in, client):
    ingest(gateway, 1, at=NOW - timedelta(days=1))
    task_type = TaskType.objects.get(name="t")
    record(task_type, "underpowered", NOW - timedelta(hours=12))
    admin = user_in("admin")
    client.force_login(admin)

    answer = client.get("/api/v1/thresholds/states/").json()
    assert {(a["task_type"], a["which"], a["state"]) for a in answer} == {
        ("t", "review", "underpowered"),
        ("t", "approve", "underpowered"),
    }
    assert answer[0]["guarantee"] == "not shown: uncertified"

    for page in ("/dashboard/drift/", f"/dashboard/thresholds/?task_type={task_type.name}"):
        html = client.get(page).content.decode()
        assert "Threshold states" in html and "Underpowered" in html

    record(task_type, "not_attainable", NOW - timedelta(hours=6))
    assert "<td>Not attainable</td>" in client.get("/dashboard/drift/").content.decode()


def test_no_verdicts_at_all_leave_every_threshold_underpowered_not_broken(gateway):
    ingest(gateway, 5, at=NOW - timedelta(days=1))
    run = cycles.cycle_run("thresholds", NOW)
    states = set(ThresholdChange.objects.filter(cycle=run).values_list("state", flat=True))
    assert states == {"underpowered"}
    assert np.isfinite([c.new_value for c in ThresholdChange.objects.filter(cycle=run)]).all()


def test_not_attainable_without_a_best_certifiable_error_claims_none(gateway):
    ingest(gateway, 1, at=NOW - timedelta(days=1))
    task_type = TaskType.objects.get(name="t")
    nothing = {"best_edit": None, "best_bad": None}
    record(task_type, "not_attainable", NOW - timedelta(hours=24), nothing)
    record(task_type, "not_attainable", NOW - timedelta(hours=12), nothing)
    (finding,) = [f for f in alerts.threshold_evidence(NOW) if f.rule == "not_attainable"]
    assert finding.firing and finding.value is None
    # It used to say an error "can be certified" and that no threshold had data enough.
    assert "At best" not in finding.message and "data enough" not in finding.message
    assert "More audits would not change this" in finding.message


def test_a_held_output_stands_for_the_held_outputs_nobody_reviewed(gateway, user_in):
    # 10 held; 4 reviewed one by one, 2 decided in bulk by a lead, 4 still waiting. The
    # bulk decisions are left out of the evidence and of the reviewed share, as the closed
    # loop would never have reviewed them: each of the 4 verdicts stands for 10 / 4 = 2.5.
    reviewer, lead = user_in("reviewer"), user_in("lead")
    outputs = ingest(gateway, 10, at=NOW - timedelta(days=2))
    decide(outputs[:4], reviewer, "approve", NOW - timedelta(days=1))
    reviews.bulk_decide(
        lead=lead,
        items=ReviewItem.objects.filter(output__in=outputs[4:6]),
        action="reject",
        reason="a broken model",
        now=NOW - timedelta(days=1),
    )
    task_type = TaskType.objects.get(name="t")

    found = evidence.judged_evidence(since=NOW - timedelta(days=30), until=NOW)

    weight = dict(zip(found.output_ids.tolist(), found.weights.tolist(), strict=True))
    assert set(weight) == {o.pk for o in outputs[:4]}
    assert list(weight.values()) == pytest.approx([2.5] * 4)
    assert found.audits_achieved(task_type.pk) == {
        "pending_review": {"drawn": 10, "decided": 4, "share_decided": 0.4}
    }


def test_the_approve_threshold_shows_its_effective_outputs_against_the_need(
    gateway, user_in, client
):
    # As the guarded run records them: certification is heading for 9.44, and the outputs
    # scoring at least the tenth above it, 9.5, make 29 effective outputs of the 736 a
    # candidate needs to be tested. The candidate with the most data is not what is shown.
    ingest(gateway, 1, at=NOW - timedelta(days=1))
    task_type = TaskType.objects.get(name="t")
    evidence_ = {
        "needed_effective_n": 736.0,
        "most_data": {"threshold": 5.2, "edit": {"effective_n": 900.0}},
        "toward": {"threshold": 9.44},
        "effective_n_at": {"5.2": 900.0, "9.4": 31.0, "9.5": 29.4, "9.6": 20.0},
    }
    record(task_type, "underpowered", NOW - timedelta(hours=12), evidence_)

    states = {(s.task_type, s.which): s for s in selectors.threshold_states()}
    approve, review = states[("t", "approve")], states[("t", "review")]
    assert (approve.effective_n, approve.needed_effective_n) == (29.4, 736.0)
    assert approve.effective_n_from == 9.5
    assert (review.effective_n, review.needed_effective_n) == (None, None)

    client.force_login(user_in("lead"))
    html = client.get("/dashboard/drift/").content.decode()
    assert "<td>29 / 736 scoring ≥ 9.5</td>" in html
    # The API's answer leaves them out: a gateway sees nothing of another's volume.
    client.force_login(user_in("admin"))
    [first, *_] = client.get("/api/v1/thresholds/states/").json()
    assert "effective_n" not in first and "needed_effective_n" not in first


def test_the_need_shown_is_what_the_bound_needs_at_todays_estimates(gateway, user_in, client):
    # Runs record what the candidate certification heads for needs to pass at today's
    # estimates (certify.Certification.toward_needed_to_pass): shown in its place, and where
    # no amount of such data passes, said so.
    ingest(gateway, 1, at=NOW - timedelta(days=1))
    task_type = TaskType.objects.get(name="t")
    evidence_ = {
        "needed_effective_n": 298.07,
        "toward": {"threshold": 9.44, "needed_to_pass": 1009.5},
        "effective_n_at": {"9.4": 31.0, "9.5": 29.4},
    }
    record(task_type, "underpowered", NOW - timedelta(hours=12), evidence_)
    client.force_login(user_in("lead"))
    assert "<td>29 / 1,010 scoring ≥ 9.5</td>" in client.get("/dashboard/drift/").content.decode()
    evidence_["toward"]["needed_to_pass"] = None
    record(task_type, "underpowered", NOW - timedelta(hours=6), evidence_)
    html = client.get("/dashboard/drift/").content.decode()
    assert "<td>29 scoring ≥ 9.5; no amount passes at today&#x27;s estimates</td>" in html
    [approve] = [s for s in selectors.threshold_states() if s.which == "approve"]
    assert approve.forecast_words == "not until the estimates are within budget"


def runs_a_day_apart(task_type, latest_state, **latest_evidence):
    """Two thresholds runs a day apart: 140, then 200 effective outputs of the 736 needed
    scoring at least 9.5, the tenth above where the latest run's certification is heading.
    The earlier run headed elsewhere (8.0, with 500), which the pace does not read."""
    need = {"needed_effective_n": 736.0}
    record(
        task_type,
        "underpowered",
        NOW - timedelta(days=1),
        {**need, "toward": {"threshold": 8.0}, "effective_n_at": {"8.0": 500.0, "9.5": 140.0}},
    )
    record(
        task_type,
        latest_state,
        NOW,
        {
            **need,
            "toward": {"threshold": 9.42},
            "effective_n_at": {"8.0": 650.0, "9.5": 200.0},
            **latest_evidence,
        },
    )


def test_the_approve_threshold_forecasts_its_certification_and_reads_its_error(
    gateway, user_in, client
):
    # Two runs a day apart: 140 then 200 effective outputs of the 736 needed, so 60 a day
    # and (736 - 200) / 60 = 8.9 days to go. Over the last week 14 audits had their first
    # review (two a day): 4 audits a day would halve it. An audit reviewed 8 days ago and
    # one still waiting do not count.
    reviewer = user_in("reviewer")
    audited = audits_of_approved(gateway, 16, rate=0.25)
    decide(audited[:14], reviewer, "approve", NOW - timedelta(days=3))
    decide(audited[14:15], reviewer, "approve", NOW - timedelta(days=8))
    task_type = TaskType.objects.get(name="t")
    in_force = {
        "threshold": 7.0,
        "edit": {"n": 250, "effective_n": 200.0, "estimate": 0.1234, "bound": 0.1811},
        "bad": {"n": 250, "effective_n": 200.0, "estimate": 0.0042, "bound": 0.0265},
    }
    runs_a_day_apart(task_type, "underpowered", in_force=in_force)

    assert selectors.audits_reviewed(task_type.pk, until=NOW) == 14
    # All 16 were drawn two days ago, within the week.
    assert selectors.audits_drawn(task_type.pk, until=NOW) == 16
    approve = {(s.task_type, s.which): s for s in selectors.threshold_states()}[("t", "approve")]
    assert approve.forecast.days == pytest.approx(536 / 60)
    assert approve.forecast.audits_per_day_to_halve == pytest.approx(4.0)
    assert approve.approved_error == in_force
    assert approve.audits_drawn_per_day == pytest.approx(16 / 7)
    assert approve.audits_reviewed_per_day == pytest.approx(2.0)

    client.force_login(user_in("lead"))
    html = client.get("/dashboard/drift/").content.decode()
    # The words are a variable, escaped as every variable is.
    assert "about 9 days at today&#x27;s pace; 4 audits a day would halve it" in html
    assert "<td>2.3 / 2.0</td>" in html
    assert "P(edit or bad) 0.123, at most 0.181; P(bad) 0.0042, at most 0.0265" in html


def test_a_forecast_with_no_earlier_run_or_no_gain_says_so(gateway, user_in, client):
    ingest(gateway, 1, at=NOW - timedelta(days=1))
    task_type = TaskType.objects.get(name="t")
    need = {
        "needed_effective_n": 736.0,
        "toward": {"threshold": 9.5},
        "effective_n_at": {"9.5": 300.0},
    }
    record(task_type, "underpowered", NOW, need)
    client.force_login(user_in("lead"))
    assert "after a day of runs" in client.get("/dashboard/drift/").content.decode()
    # A day earlier, as many effective outputs: the window sheds what it gains.
    record(task_type, "underpowered", NOW - timedelta(days=1), need)
    assert "not at today&#x27;s pace" in client.get("/dashboard/drift/").content.decode()


def test_a_threshold_that_is_not_attainable_forecasts_no_certification(gateway, user_in, client):
    # Effective outputs grew by 60 in a day, a pace that would forecast about 9 days; but
    # the estimates are over budget already, and more audits would not change that.
    ingest(gateway, 1, at=NOW - timedelta(days=1))
    task_type = TaskType.objects.get(name="t")
    runs_a_day_apart(task_type, "not_attainable")
    client.force_login(user_in("lead"))
    html = client.get("/dashboard/drift/").content.decode()
    assert "none: more audits would not help at these budgets" in html
    assert "days at today&#x27;s pace" not in html
