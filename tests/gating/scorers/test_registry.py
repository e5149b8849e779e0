"""The registry's promises: the validators scorer's label is the one the gate records, and
a task type naming a scorer this version does not have still gets its outputs scored."""

from dataclasses import replace
from datetime import UTC, datetime

import pytest

from gating import scorers, scoring
from gating.models import Output
from gating.scorers.base import ScorerInput
from gating.submissions import ProvenanceIn
from tests.factories import SubmissionFactory, TaskTypeFactory


def test_the_validators_label_is_the_gates():
    assert scorers.label(scorers.REGISTRY[scorers.DEFAULT]) == scoring.SCORER_NAME


@pytest.mark.django_db
def test_a_scorer_that_is_gone_gives_way_to_validators(gateway_api):
    TaskTypeFactory(name="old", scorer="retired_scorer")
    response = gateway_api.post(
        "/api/v1/outputs/", SubmissionFactory(task_type="old"), format="json"
    )
    assert response.status_code == 201
    data = response.json()
    assert data["scorer"] == scoring.SCORER_NAME
    assert data["reasons"][0].startswith("This task type's scorer is not in this version")
    assert Output.objects.count() == 1


def test_an_unknown_scorer_is_named_in_the_error():
    with pytest.raises(scorers.UnknownScorer) as caught:
        scorers.get("retired_scorer")
    assert caught.value.args == ("retired_scorer",)


_INPUT = ScorerInput(
    validators=(),
    input_clarity=1.0,
    coherence=1.0,
    requires_fact_check=False,
    pair=scoring.PairHistory(),
    policy=scoring.GatePolicy(),
    now=datetime(2026, 11, 28, tzinfo=UTC),
)


class _Raising:
    name, version, description = "raising", "2", ""

    def __init__(self, error):
        self.error = error

    def applies(self, output):
        return True

    def score(self, output):
        raise self.error

    def rate(self, output):
        raise self.error


def test_a_scorer_that_breaks_is_logged_by_name_with_its_traceback(caplog):
    output = _INPUT
    scorers.score_and_gate(_Raising(ZeroDivisionError("x")), output, shadow=False)

    [record] = caplog.records
    assert record.getMessage() == "Scorer raising failed; the output is held for review."
    assert record.exc_info[0] is ZeroDivisionError


def test_a_fault_the_scorer_named_itself_is_held_without_a_traceback(caplog):
    # A ScoringFault is a finding (a non-finite term, a score off the scale), said in the
    # output's reasons and alerted on; only an unexpected exception is a bug worth a log.
    output = _INPUT
    result = scorers.score_and_gate(
        _Raising(scoring.ScoringFault("term is nan")), output, shadow=False
    ).result

    assert result.fault == "raising: term is nan"
    assert caplog.records == []


_LEVEL_IMPACT = scoring.Impact("level", 9.5, "thin evidence")


class _Levelled:
    """A scorer that rates in levels, as the evidence scorers do, and gives an interval,
    as the interval scorer does: a level whose own decision is to hold."""

    name, version, description = "levelled", "3", ""

    def applies(self, output):
        return True

    def score(self, output):
        return scorers.Scored(
            score=9.5,
            summary="level: thin",
            explanation=(_LEVEL_IMPACT,),
            interval=(9.0, 9.8),
            level="thin",
            decision=scoring.Decision.PENDING_REVIEW,
        )

    def rate(self, output):
        return scorers.Rating(9.5, "thin", (9.0, 9.8))


# Past the cold start, with no raise for a new pair: only the level or the score decides.
_PAST_COLD_START = replace(
    _INPUT, policy=scoring.GatePolicy(task_type_reviewed=10**6, cold_start_margin=0.0)
)


def test_a_levels_own_decision_takes_the_thresholds_place():
    # 9.5 is above the approve threshold 7, but the level says hold. Half the validators'
    # weight passed; a scorer other than validators has no bonus or penalty terms.
    given = replace(
        _PAST_COLD_START,
        validators=(scoring.ValidatorOutcome("a", True), scoring.ValidatorOutcome("b", False)),
    )
    result = scorers.score_and_gate(_Levelled(), given, shadow=False).result

    assert result.decision is scoring.Decision.PENDING_REVIEW
    assert result.reasons == ["level: thin", "Level thin: held for review."]
    assert result.scorer == "levelled-v3"
    assert (result.pass_fraction, result.task_accuracy_bonus, result.hallucination_penalty) == (
        0.5,
        0.0,
        0.0,
    )
    assert result.impacts == [_LEVEL_IMPACT]


def test_a_scorer_that_does_not_apply_gives_way_and_says_why():
    # The evidence scorer reads evidence, which this output lacks.
    result = scorers.score_and_gate(
        scorers.get("evidence_quality"), _PAST_COLD_START, shadow=False
    ).result
    assert result.scorer == scoring.SCORER_NAME
    assert result.reasons[0] == (
        "The payload lacks what evidence_quality reads, so the validators scorer scored it."
    )

    gone = scorers.score_and_gate(scorers.MISSING, _PAST_COLD_START, shadow=False).result
    assert gone.reasons[0] == (
        "This task type's scorer is not in this version of Gatehouse, so the validators "
        "scorer scored it."
    )


def test_a_shadow_keeps_its_score_level_and_interval(monkeypatch):
    monkeypatch.setattr(scorers, "_SCORERS", (*scorers._SCORERS, _Levelled()))

    # Shadow scoring is on unless asked off: every output is scored by every scorer.
    scoring_ = scorers.score_and_gate(scorers.REGISTRY[scorers.DEFAULT], _PAST_COLD_START)

    assert scoring_.shadow["levelled"] == {
        "version": "3",
        "score": 9.5,
        "level": "thin",
        "interval": [9.0, 9.8],
    }
    # The validators scorer gives no interval: the shadow's is the output's.
    assert scoring_.interval == (9.0, 9.8)


def test_an_output_no_scorer_gives_an_interval_has_none():
    # None, not merely something false: the type says a pair of bounds or None. With the
    # shadows and without them (then no shadow's rating replaces what the decider left).
    validators_scorer = scorers.REGISTRY[scorers.DEFAULT]
    assert scorers.score_and_gate(validators_scorer, _PAST_COLD_START).interval is None
    assert (
        scorers.score_and_gate(validators_scorer, _PAST_COLD_START, shadow=False).interval is None
    )


def test_a_failing_shadow_is_logged_by_name_and_the_next_one_still_scores(monkeypatch, caplog):
    validators_scorer = scorers.REGISTRY[scorers.DEFAULT]
    monkeypatch.setattr(
        scorers, "_SCORERS", (validators_scorer, _Raising(ValueError("x")), _Levelled())
    )

    shadows = scorers.score_and_gate(validators_scorer, _PAST_COLD_START).shadow

    assert list(shadows) == ["levelled"]
    [record] = caplog.records
    assert record.getMessage() == "Shadow scorer raising failed; its score is left out."
    assert record.exc_info[0] is ValueError


def test_the_deciding_scorers_interval_is_the_outputs_and_a_fault_has_none():
    assert scorers.score_and_gate(_Levelled(), _PAST_COLD_START, shadow=False).interval == (
        9.0,
        9.8,
    )
    faulted = scorers.score_and_gate(_Raising(ValueError("x")), _PAST_COLD_START, shadow=False)
    assert faulted.interval is None


def test_a_shadow_applies_to_the_output_it_is_given():
    # One source of 0.9, one type: the interval scorer's bounds are 6.0 and 9.0.
    given = replace(
        _PAST_COLD_START,
        provenance=ProvenanceIn.model_validate(
            {"sources": [{"source_type": "extraction", "confidence": 0.9}]}
        ),
    )
    shadows = scorers.score_and_gate(scorers.REGISTRY[scorers.DEFAULT], given).shadow
    assert shadows["interval"]["interval"] == [pytest.approx(6.0), pytest.approx(9.0)]


class _Approving(_Levelled):
    """A level whose own decision is to approve."""

    def score(self, output):
        return replace(super().score(output), level="strong", decision=scoring.Decision.APPROVED)


def test_a_levels_approval_is_withheld_as_the_thresholds_would_be():
    # The task type approves only when certified, and nothing is: the level's approval is delivered
    # as a warning and marked withheld, to be audited at the approved rate.
    uncertified = replace(
        _PAST_COLD_START,
        policy=replace(_PAST_COLD_START.policy, approve_requires=scoring.ApproveRequires.CERTIFIED),
    )
    result = scorers.score_and_gate(_Approving(), uncertified, shadow=False).result
    assert (result.decision, result.withheld) == (scoring.Decision.WARNING, True)
    assert result.reasons[-1].startswith("Level strong would be approved, but the approve")

    approved = scorers.score_and_gate(_Approving(), _PAST_COLD_START, shadow=False).result
    assert (approved.decision, approved.withheld) == (scoring.Decision.APPROVED, False)
