"""The approve threshold's guarantee and what a task type's approvals require (docs/gate.md):
every decision says what stood behind the approve threshold, only the thresholds cycle
certifies or estimates, a person who moves what it certified takes the guarantee back, and
nothing is approved without the guarantee its task type requires."""

import math
from datetime import timedelta

import pytest
from django.utils import timezone

from gating import scoring, selectors, services, webhooks
from gating.exceptions import TaskTypeInvalid
from gating.models import AuditEvent, Output, ReviewItem, TaskType
from gating.scoring import ApproveRequires, Decision, GatePolicy, Guarantee, PairHistory
from gating.submissions import OutputSubmission
from learning import cycles
from learning.statistics import thresholds
from tests.factories import SubmissionFactory, TaskTypeFactory, valid_submission

PAST_COLD_START = {"task_type_reviewed": 10**6, "cold_start_margin": 0.0}
TRUSTED = PairHistory(reviewed=100, approved_unchanged=100)


# --------------------------------------------------------------------------- the gate


CERTIFIED_ONLY = ApproveRequires.CERTIFIED


@pytest.mark.parametrize(
    ("requires", "guarantee", "decision"),
    [
        (ApproveRequires.NOTHING, Guarantee.NONE, Decision.APPROVED),
        (ApproveRequires.NOTHING, Guarantee.ESTIMATED, Decision.APPROVED),
        (ApproveRequires.NOTHING, Guarantee.CERTIFIED, Decision.APPROVED),
        (ApproveRequires.ESTIMATE, Guarantee.NONE, Decision.WARNING),
        (ApproveRequires.ESTIMATE, Guarantee.ESTIMATED, Decision.APPROVED),
        (ApproveRequires.ESTIMATE, Guarantee.CERTIFIED, Decision.APPROVED),
        (ApproveRequires.CERTIFIED, Guarantee.NONE, Decision.WARNING),
        (ApproveRequires.CERTIFIED, Guarantee.ESTIMATED, Decision.WARNING),
        (ApproveRequires.CERTIFIED, Guarantee.CERTIFIED, Decision.APPROVED),
    ],
)
def test_an_approval_needs_the_guarantee_its_task_type_requires(requires, guarantee, decision):
    policy = GatePolicy(
        approve_requires=requires,
        approve_guarantee=guarantee,
        estimated_approve=8.0,
        **PAST_COLD_START,
    )
    assert scoring.gate(9.0, policy, TRUSTED).decision is decision


def _estimated(line):
    return GatePolicy(
        approve_requires=ApproveRequires.ESTIMATE,
        approve_guarantee=Guarantee.ESTIMATED,
        estimated_approve=line,
        **PAST_COLD_START,
    )


def test_an_estimate_approves_from_its_line():
    # Above the approve threshold 7.0 but below the line: withheld, and said so.
    below = scoring.gate(9.0, _estimated(9.5), TRUSTED)
    assert (below.decision, below.withheld) == (Decision.WARNING, True)
    assert below.reasons == [
        "Score 9.00 reaches the approve threshold 7.00, but not the estimated approve line "
        "9.50, the uncertified one in force: delivered as a warning."
    ]
    assert scoring.gate(9.5, _estimated(9.5), TRUSTED).decision is Decision.APPROVED
    # A line below the approve threshold approves nothing the threshold does not.
    assert scoring.gate(6.5, _estimated(6.0), TRUSTED).decision is Decision.WARNING
    assert not scoring.gate(6.5, _estimated(6.0), TRUSTED).withheld
    assert scoring.gate(7.0, _estimated(6.0), TRUSTED).decision is Decision.APPROVED
    # An estimated guarantee without a line approves nothing.
    assert scoring.gate(10.0, _estimated(None), TRUSTED).decision is Decision.WARNING
    # A level's approval is held to the line by its score.
    level = scoring.gate(
        9.0, _estimated(9.5), TRUSTED, level="high", level_decision=Decision.APPROVED
    )
    assert level.reasons[0] == (
        "Level high would be approved, but its score 9.00 is below the estimated approve "
        "line 9.50: delivered as a warning."
    )


@pytest.mark.parametrize(
    ("requires", "guarantee", "line", "expected"),
    [
        (ApproveRequires.NOTHING, Guarantee.NONE, None, 7.0),
        (ApproveRequires.NOTHING, Guarantee.ESTIMATED, 9.0, 7.0),
        (ApproveRequires.CERTIFIED, Guarantee.CERTIFIED, None, 7.0),
        (ApproveRequires.CERTIFIED, Guarantee.ESTIMATED, 9.0, math.inf),
        (ApproveRequires.CERTIFIED, Guarantee.NONE, None, math.inf),
        (ApproveRequires.ESTIMATE, Guarantee.CERTIFIED, 9.0, 7.0),
        (ApproveRequires.ESTIMATE, Guarantee.ESTIMATED, 9.0, 9.0),
        (ApproveRequires.ESTIMATE, Guarantee.ESTIMATED, 6.0, 7.0),
        (ApproveRequires.ESTIMATE, Guarantee.ESTIMATED, None, math.inf),
        (ApproveRequires.ESTIMATE, Guarantee.NONE, 9.0, math.inf),
    ],
)
def test_the_approval_line(requires, guarantee, line, expected):
    policy = GatePolicy(
        approve_requires=requires, approve_guarantee=guarantee, estimated_approve=line
    )
    assert scoring.approval_line(policy, 7.0) == expected


def test_a_withheld_approval_says_why():
    policy = GatePolicy(approve_requires=CERTIFIED_ONLY, **PAST_COLD_START)
    ruling = scoring.gate(9.0, policy, TRUSTED)
    assert ruling.reasons == [
        "Score 9.00 reaches the approve threshold 7.00, but the approve threshold's guarantee "
        "is none, and this task type approves only with a certified one: delivered as a "
        "warning."
    ]
    estimated = GatePolicy(
        approve_requires=CERTIFIED_ONLY, approve_guarantee=Guarantee.ESTIMATED, **PAST_COLD_START
    )
    assert "guarantee is estimated" in scoring.gate(9.0, estimated, TRUSTED).reasons[0]
    either = GatePolicy(approve_requires=ApproveRequires.ESTIMATE, **PAST_COLD_START)
    assert "only with a certified or estimated one" in scoring.gate(9.0, either, TRUSTED).reasons[0]
    levelled = scoring.gate(9.0, policy, TRUSTED, level="high", level_decision=Decision.APPROVED)
    assert levelled.decision is Decision.WARNING
    assert levelled.reasons[0].startswith("Level high would be approved, but the approve")


def test_the_switch_touches_nothing_but_approvals():
    policy = GatePolicy(approve_requires=CERTIFIED_ONLY, **PAST_COLD_START)
    # Between the thresholds, and below the review threshold, as without the switch.
    assert scoring.gate(5.0, policy, TRUSTED).decision is Decision.WARNING
    assert scoring.gate(5.0, policy, TRUSTED).reasons == [
        "Score 5.00 is between the review 4.00 and approve 7.00 thresholds."
    ]
    assert scoring.gate(3.0, policy, TRUSTED).decision is Decision.PENDING_REVIEW
    # Cold start still holds everything.
    cold = GatePolicy(approve_requires=CERTIFIED_ONLY, task_type_reviewed=0, cold_start_margin=0.0)
    assert scoring.gate(9.0, cold, TRUSTED).decision is Decision.PENDING_REVIEW


def test_auto_approval_off_is_named_before_the_guarantee():
    policy = GatePolicy(auto_approve=False, approve_requires=CERTIFIED_ONLY, **PAST_COLD_START)
    [reason] = scoring.gate(9.0, policy, TRUSTED).reasons
    assert reason.endswith("but auto-approval is off for this task type: delivered as a warning.")


# --------------------------------------------------------------------------- ingest


def _submit(gateway_api, task_type) -> dict:
    # One validator passed, clarity and coherence 1: a score of 10.
    body = SubmissionFactory(
        task_type=task_type.name,
        validators=[{"name": "facts", "passed": True}],
        input_clarity=1.0,
        coherence=1.0,
    )
    response = gateway_api.post("/api/v1/outputs/", body, format="json")
    assert response.status_code == 201, response.content
    return response.json()


@pytest.mark.django_db
def test_every_decision_says_what_stood_behind_the_approve_threshold(gateway, gateway_api):
    plain = TaskTypeFactory(name="plain", cold_start_margin=0.0)
    answer = _submit(gateway_api, plain)
    assert (answer["decision"], answer["approve_guarantee"]) == ("approved", "none")

    certified = TaskTypeFactory(
        name="certified",
        cold_start_margin=0.0,
        approve_requires="certified",
        approve_guarantee="certified",
    )
    answer = _submit(gateway_api, certified)
    assert (answer["decision"], answer["approve_guarantee"]) == ("approved", "certified")

    withheld = TaskTypeFactory(name="withheld", cold_start_margin=0.0, approve_requires="certified")
    answer = _submit(gateway_api, withheld)
    assert (answer["decision"], answer["status"]) == ("warning", "approved")
    assert answer["approve_guarantee"] == "none"
    assert "only with a certified one" in answer["reasons"][-1]
    # Stored as answered: a later read says the same.
    stored = gateway_api.get(f"/api/v1/outputs/{answer['id']}/").json()
    assert stored["approve_guarantee"] == "none"


@pytest.mark.django_db
def test_the_webhook_carries_the_guarantee(gateway):
    TaskTypeFactory(
        name="withheld",
        cold_start_margin=0.0,
        approve_requires="certified",
        approve_guarantee="none",
    )
    output = services.output_ingest(
        source=gateway,
        submission=valid_submission(task_type="withheld"),
    ).output
    payload = webhooks.event_payload(output=output, event_type="output.decided")
    assert payload["output"]["approve_guarantee"] == "none"
    output.approve_guarantee = "certified"
    payload = webhooks.event_payload(output=output, event_type="output.decided")
    assert payload["output"]["approve_guarantee"] == "certified"


# --------------------------------------------------------------------------- the writer


@pytest.fixture
def certified(db):
    return TaskTypeFactory(name="certified", approve_guarantee=Guarantee.CERTIFIED)


def _edit(task_type, source, **changes):
    return services.gate_settings_change_many(
        edits=[services.GateSettingsEdit(task_type, changes=changes, reason="because")],
        actor=None,
        source=source,
    )[0]


@pytest.mark.parametrize("source", [services.EditSource.API, services.EditSource.PAGE])
def test_only_the_cycle_certifies(certified, source):
    plain = TaskTypeFactory(name="plain")
    with pytest.raises(TaskTypeInvalid) as refused:
        _edit(plain, source, approve_guarantee="certified")
    assert (refused.value.field, str(refused.value)) == (
        "approve_guarantee",
        "Only the thresholds cycle certifies.",
    )
    plain.refresh_from_db()
    assert plain.approve_guarantee == "none"
    stored = _edit(plain, services.EditSource.CYCLE, approve_guarantee="certified")
    assert stored.approve_guarantee == "certified"


@pytest.mark.parametrize(
    ("changes", "kept"),
    [
        ({"approve_threshold": 8.0}, False),
        ({"alpha_approve": 0.1}, False),
        ({"alpha_bad": 0.02}, False),
        ({"delta": 0.1}, False),
        ({"threshold_policy": "adr0003"}, False),
        ({"scorer": "adr0003_formula"}, False),
        # Equal to what is stored: no change, nothing taken back.
        ({"approve_threshold": 7.0}, True),
        # Not what the threshold was certified on.
        ({"audit_rate_warning": 0.2}, True),
        ({"review_threshold": 3.0}, True),
        ({"approve_requires": "certified"}, True),
    ],
)
def test_a_person_who_moves_what_was_certified_takes_the_guarantee_back(certified, changes, kept):
    stored = _edit(certified, services.EditSource.API, **changes)
    assert stored.approve_guarantee == ("certified" if kept else "none")
    event = AuditEvent.objects.filter(action=AuditEvent.Action.THRESHOLD_EDIT).last()
    if kept:
        assert event is None or "approve_guarantee" not in event.before
    else:
        assert event.before["approve_guarantee"] == "certified"
        assert event.after["approve_guarantee"] == "none"


def test_a_cycle_that_moves_the_threshold_keeps_what_it_says(certified):
    stored = _edit(certified, services.EditSource.CYCLE, approve_threshold=8.0)
    assert stored.approve_guarantee == "certified"


@pytest.mark.django_db
def test_the_api_shows_the_guarantee_and_takes_what_approvals_require(admin_api, certified):
    url = f"/api/v1/task-types/{certified.name}/"
    shown = admin_api.get(url).json()
    assert (shown["approve_guarantee"], shown["approve_requires"]) == ("certified", "nothing")
    taken = admin_api.patch(url, {"approve_requires": "certified"}, format="json")
    assert taken.status_code == 200, taken.content
    for wrong in ("sometimes", True, None, ["certified"]):
        refused = admin_api.patch(url, {"approve_requires": wrong}, format="json")
        assert refused.status_code == 400, (wrong, refused.content)
        assert "approve_requires" in refused.json()
    refused = admin_api.patch(url, {"approve_guarantee": "none"}, format="json")
    assert refused.status_code == 400, refused.content
    assert "approve_guarantee" in refused.json()
    certified.refresh_from_db()
    assert (certified.approve_requires, certified.approve_guarantee) == ("certified", "certified")


def test_a_new_task_type_approves_on_an_estimate():
    # The default measured in docs/gate.md.
    field = TaskType._meta.get_field("approve_requires")
    assert field.get_default() == ApproveRequires.ESTIMATE


# --------------------------------------------------------------------------- the cycle


def _proposal(new, state=thresholds.State.CERTIFIED, old=7.0, estimate=None):
    return thresholds.Proposal("approve", old, new, "why", {}, state, estimate=estimate)


_ESTIMATED = {"state": thresholds.State.UNDERPOWERED, "estimate": 9.2}


@pytest.mark.parametrize(
    ("proposed", "final", "expected"),
    [
        # Certified where it goes.
        (_proposal(8.0), _proposal(8.0), Guarantee.CERTIFIED),
        # Pinned at 9.0, above the certified 8.0: every candidate above passed too.
        (_proposal(8.0), _proposal(9.0, old=9.0), Guarantee.CERTIFIED),
        # Pinned at 7.5, below it: not tested, not certified.
        (_proposal(8.0), _proposal(7.5, old=7.5), Guarantee.NONE),
        # Underpowered, back at the last certified value: this run confirmed nothing.
        (
            _proposal(8.0, thresholds.State.UNDERPOWERED),
            _proposal(8.0, thresholds.State.UNDERPOWERED),
            Guarantee.NONE,
        ),
        (
            _proposal(7.0, thresholds.State.NOT_ATTAINABLE),
            _proposal(7.0, thresholds.State.NOT_ATTAINABLE),
            Guarantee.NONE,
        ),
        # An estimated line, whatever the threshold (the gate approves from the higher).
        (_proposal(7.0, **_ESTIMATED), _proposal(7.0, **_ESTIMATED), Guarantee.ESTIMATED),
        (_proposal(7.0, **_ESTIMATED), _proposal(9.5, old=9.5, **_ESTIMATED), Guarantee.ESTIMATED),
        # A certified run sets no line.
        (_proposal(8.0, estimate=None), _proposal(8.0, estimate=None), Guarantee.CERTIFIED),
        # ADR-0003's rule has no state.
        (_proposal(7.5, ""), _proposal(7.5, ""), Guarantee.NONE),
    ],
)
def test_the_cycle_certifies_or_estimates_only_the_value_it_tested(proposed, final, expected):
    review = thresholds.Proposal("review", 4.0, 4.0, "why", {}, thresholds.State.CERTIFIED)
    assert cycles._approve_guarantee([review, proposed], final) is expected


@pytest.mark.django_db
def test_a_gateway_sees_no_guarantee_in_the_task_type_list(gateway_api):
    # What a gateway needs of the learning state is in each decision it gets; its list of
    # task types stays as it was.
    TaskTypeFactory(name="shared", shared=True, approve_guarantee="certified")
    listed = gateway_api.get("/api/v1/task-types/").json()
    rows = listed["results"] if isinstance(listed, dict) else listed
    [row] = rows
    assert row["name"] == "shared"
    assert "approve_guarantee" not in row and "approve_requires" not in row


# --------------------------------------------------------------------------- withheld


@pytest.mark.parametrize(
    ("policy", "score", "withheld"),
    [
        (GatePolicy(approve_requires=CERTIFIED_ONLY, **PAST_COLD_START), 9.0, True),
        (GatePolicy(auto_approve=False, **PAST_COLD_START), 9.0, True),
        (GatePolicy(**PAST_COLD_START), 9.0, False),  # approved
        (GatePolicy(approve_requires=CERTIFIED_ONLY, **PAST_COLD_START), 5.0, False),  # a warning
        # Held by the cold start: not delivered at all.
        (GatePolicy(approve_requires=CERTIFIED_ONLY, cold_start_margin=0.0), 9.0, False),
    ],
)
def test_a_withheld_approval_is_marked_as_such(policy, score, withheld):
    assert scoring.gate(score, policy, TRUSTED).withheld is withheld


@pytest.mark.django_db
def test_a_withheld_output_is_stored_and_audited_at_the_approved_rate(gateway_api):
    # Approved outputs audited always, warnings never: the withheld one is drawn, at 1.0.
    task_type = TaskTypeFactory(
        name="withheld",
        cold_start_margin=0.0,
        approve_requires="certified",
        audit_rate_approved=1.0,
        audit_rate_warning=0.0,
    )
    answer = _submit(gateway_api, task_type)
    output = Output.objects.get(pk=answer["id"])
    assert (output.decision, output.withheld) == ("warning", True)
    [item] = ReviewItem.objects.filter(output=output)
    assert (item.kind, item.is_audit, item.inclusion_probability) == ("audit", True, 1.0)
    # A plain warning of the same task type is drawn at the warning rate, never: one of
    # two validators passed, 8 x 0.5 + 0.5 + 1.5 = 6.0, between 4 and 7.
    body = SubmissionFactory(
        task_type=task_type.name,
        validators=[{"name": "facts", "passed": True}, {"name": "length", "passed": False}],
        input_clarity=1.0,
        coherence=1.0,
    )
    plain = gateway_api.post("/api/v1/outputs/", body, format="json").json()
    assert (plain["score"], plain["decision"]) == (6.0, "warning")
    assert not Output.objects.get(pk=plain["id"]).withheld
    assert not ReviewItem.objects.filter(output_id=plain["id"]).exists()


def test_the_stratum_of_a_draw():
    assert selectors.draw_stratum(True, "approved", False) == "approved"
    assert selectors.draw_stratum(True, "warning", False) == "warning"
    # A withheld approval was drawn at the approved rate, in the same turn.
    assert selectors.draw_stratum(True, "warning", True) == "approved"
    # A held output, even one backlog relief has since delivered as a warning.
    assert selectors.draw_stratum(False, "pending_review", False) == "pending_review"
    assert selectors.draw_stratum(False, "warning", False) == "pending_review"


@pytest.mark.django_db
def test_withheld_audits_count_with_the_approved_ones(gateway):
    task_type = TaskTypeFactory(
        name="mixed", cold_start_margin=0.0, audit_rate_approved=1.0, audit_rate_warning=1.0
    )
    since = timezone.now() - timedelta(hours=1)

    def ingest(withheld: bool, score_high: bool) -> None:
        requires = "certified" if withheld else "nothing"
        TaskType.objects.filter(pk=task_type.pk).update(approve_requires=requires)
        services.gate_caches_clear()
        body = SubmissionFactory(
            task_type="mixed",
            validators=[{"name": "facts", "passed": score_high}],
            input_clarity=1.0,
            coherence=1.0,
        )
        services.output_ingest(source=gateway, submission=OutputSubmission(**body))

    ingest(withheld=True, score_high=True)  # 10: withheld
    ingest(withheld=True, score_high=True)  # 10: withheld
    ingest(withheld=False, score_high=True)  # 10: approved
    ingest(withheld=False, score_high=False)  # 2: held (below the review threshold 4)
    coverage = selectors.draw_coverage(since=since, until=timezone.now() + timedelta(hours=1))
    assert coverage == {
        (task_type.pk, "approved"): (3, 0),
        (task_type.pk, "pending_review"): (1, 0),
    }
