"""The scoring path is total: no input, weight or history the gate accepts gives a score
that is not a number on 0-10, and whatever a scorer does wrong holds the output for review.

The property tests drive every scorer with extreme but valid inputs (weights anywhere in
the writer's range, histories of any length, evidence and provenance at their limits); the
examples pin the defect that made an admin's weights of 1e308 approve an output.
"""

import math
import os
import warnings
from datetime import UTC, datetime

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from gating import scorers, scoring
from gating.models.outputs import WEIGHT_RANGE
from gating.scorers.base import ScorerInput
from gating.scoring import Decision, GatePolicy, PairHistory, ValidatorOutcome
from gating.submissions import (
    OUTCOMES,
    DiscoveryFactor,
    EvidenceIn,
    Intent,
    Match,
    ProvenanceIn,
    Tier,
    Tool,
)

NOW = datetime(2026, 11, 28, 12, tzinfo=UTC)
PAST_COLD_START = GatePolicy(task_type_reviewed=10**9)
# A pair whose record earns the full bonus: a NaN clamped to 10 would be approved.
TRUSTED_PAIR = PairHistory(reviewed=1000, approved_unchanged=1000)


@pytest.fixture(autouse=True)
def _fresh_scoring_caches():
    scoring._validator_terms.cache_clear()


def scorer_input(validators, **fields) -> ScorerInput:
    values = {
        "input_clarity": 1.0,
        "coherence": 1.0,
        "requires_fact_check": False,
        "pair": TRUSTED_PAIR,
        "policy": PAST_COLD_START,
        "now": NOW,
    }
    return ScorerInput(validators=tuple(validators), **(values | fields))


# ------------------------------------------------------------------ the 1e308 weights


def test_weights_whose_sum_overflows_are_held_not_approved():
    # The defect: 1e308 + 1e308 is inf, inf / inf is NaN, and max(0, min(10, nan)) is 10.
    huge = [ValidatorOutcome("a", True, 1e308), ValidatorOutcome("b", True, 1e308)]

    scoring_ = scorers.score_and_gate(scorers.REGISTRY["validators"], scorer_input(huge))

    result = scoring_.result
    assert result.decision is Decision.PENDING_REVIEW
    assert result.score == scoring.SCORE_MIN
    assert result.fault == "validators: pass_fraction is nan, not a share from 0 to 1"
    assert result.reasons[0].startswith(
        "Scoring fault (validators: pass_fraction is nan, not a share from 0 to 1)"
    )
    assert [i.factor for i in result.impacts] == [scoring.FAULT_FACTOR]


def test_score_output_refuses_a_non_finite_term_rather_than_clamp_it():
    huge = [ValidatorOutcome("a", True, 1e308), ValidatorOutcome("b", True, 1e308)]
    with pytest.raises(scoring.ScoringFault, match="pass_fraction is nan"):
        scoring.score_output(
            validators=huge,
            input_clarity=1.0,
            coherence=1.0,
            requires_fact_check=False,
            pair=TRUSTED_PAIR,
            policy=PAST_COLD_START,
        )


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_clamp_refuses_what_is_not_a_number_on_the_line(value):
    # max(0, min(10, nan)) is 10: the fail-open the clamp used to be.
    with pytest.raises(scoring.ScoringFault):
        scoring.clamp(value)


@pytest.mark.parametrize("score", [math.nan, math.inf, -0.5, 10.5])
def test_the_gate_refuses_a_score_off_the_scale_from_any_scorer(score):
    with pytest.raises(scoring.ScoringFault):
        scoring.gate(score, PAST_COLD_START, TRUSTED_PAIR)


def test_rescoring_many_holds_what_overflows_and_warns_of_nothing():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        scores = scoring.scores_many(
            reported=np.array([[True, True], [True, True]]),
            passed=np.array([[True, True], [True, True]]),
            weights=np.array([1e308, 1e308]),
            is_fact_check=np.array([False, False]),
            input_clarity=np.array([1.0, 1.0]),
            coherence=np.array([1.0, 1.0]),
            requires_fact_check=np.array([False, False]),
            bonus=np.array([0.5, 0.5]),
        )
    assert scores.tolist() == [scoring.SCORE_MIN, scoring.SCORE_MIN]


@pytest.mark.parametrize(
    ("validators", "terms", "fault"),
    [
        # Clarity and coherence arrive checked on 0-1 at ingest; should one that is not
        # reach the formula, it is named rather than capped to 10.
        ([], {"input_clarity": math.inf}, "input_clarity is inf"),
        ([], {"input_clarity": 1.0 + 1e-9}, "input_clarity is 1.000000001"),
        ([], {"input_clarity": -1e-9}, "input_clarity is -1e-09"),
        ([], {"coherence": 1.5}, "coherence is 1.5"),
        ([], {"coherence": math.nan}, "coherence is nan"),
        # Weights the writer refuses, should they be stored: 3 passed of 3 - 1.
        (
            [ValidatorOutcome("a", True, 3.0), ValidatorOutcome("b", False, -1.0)],
            {},
            "pass_fraction is 1.5",
        ),
    ],
)
def test_score_output_refuses_a_term_that_is_not_a_share(validators, terms, fault):
    with pytest.raises(scoring.ScoringFault) as refused:
        scoring.score_output(
            validators=validators,
            **({"input_clarity": 1.0, "coherence": 1.0} | terms),
            requires_fact_check=False,
            pair=TRUSTED_PAIR,
            policy=PAST_COLD_START,
        )
    assert str(refused.value) == f"{fault}, not a share from 0 to 1"


def test_score_output_scores_the_ends_of_every_share():
    # All of 0-1 is allowed: a passed validator with clarity 0 and coherence 1 is
    # 8 + 0 + 1.5; none passed with clarity 1 and coherence 0 is 0 + 0.5 + 0. No bonus
    # (no reviews), so these are the scores.
    def scored(passed, clarity, coherence):
        return scoring.score_output(
            validators=[ValidatorOutcome("a", passed, 1.0)],
            input_clarity=clarity,
            coherence=coherence,
            requires_fact_check=False,
            pair=PairHistory(),
            policy=PAST_COLD_START,
        ).score

    assert scored(True, 0.0, 1.0) == pytest.approx(9.5)
    assert scored(False, 1.0, 0.0) == pytest.approx(0.5)
    assert scored(True, 1.0, 1.0) == 10.0


def test_a_level_that_would_be_approved_with_auto_approval_off_says_so():
    ruling = scoring.gate(
        9.5,
        GatePolicy(auto_approve=False, task_type_reviewed=10**6),
        TRUSTED_PAIR,
        level="strong",
        level_decision=Decision.APPROVED,
    )
    assert ruling.decision is Decision.WARNING
    assert ruling.reasons == [
        "Level strong would be approved, but auto-approval is off for this task type: "
        "delivered as a warning."
    ]


def test_a_fault_is_held_at_the_lowest_score_with_every_term_at_zero():
    # Written out by hand: a held output whose terms said "all passed" or "bonus earned"
    # would tell its reviewer the opposite of what happened. The pair has half the cold
    # start's reviews, so the thresholds shown are raised by half the margin of 1.
    result = scoring.fault_result("x: boom", GatePolicy(), PairHistory(reviewed=10), scorer="x-v1")

    assert result == scoring.GateResult(
        score=0.0,
        base_score=0.0,
        decision=Decision.PENDING_REVIEW,
        review_threshold=4.5,
        approve_threshold=7.5,
        pass_fraction=0.0,
        task_accuracy_bonus=0.0,
        hallucination_penalty=0.0,
        impacts=[scoring.Impact(scoring.FAULT_FACTOR, 0.0, "x: boom")],
        reasons=["Scoring fault (x: boom): held for review, whatever the thresholds say."],
        scorer="x-v1",
        fault="x: boom",
    )


def _one_validator_each(**fields):
    # Two outputs, one validator of weight 2 (an integer, as a caller may pass one): the
    # first passed it, the second did not report it at all.
    values = {
        "reported": np.array([[True], [False]]),
        "passed": np.array([[True], [False]]),
        "weights": [2],
        "is_fact_check": np.array([False]),
        "input_clarity": np.array([1.0, 1.0]),
        "coherence": np.array([1.0, 1.0]),
        "requires_fact_check": np.array([False, False]),
    }
    return scoring.scores_many(**(values | fields))


def test_rescoring_many_reads_integer_weights_and_no_bonus_by_default():
    scores = _one_validator_each()

    # By hand (docs/gate.md): all passed, with full clarity and coherence, is 8 + 0.5 + 1.5;
    # no validator reported leaves the validator term at 0. No bonus: nothing is added.
    assert scores.tolist() == pytest.approx([10.0, 2.0])


def test_rescoring_many_gives_an_output_with_no_validators_a_validator_term_of_zero():
    # 0 / 0 would be NaN, and a NaN fraction is a fault: such an output would fall to 0.
    assert _one_validator_each().tolist()[1] == pytest.approx(2.0)
    scores = scoring.scores_many(
        reported=np.zeros((3, 1), dtype=bool),
        passed=np.zeros((3, 1), dtype=bool),
        weights=np.array([1.0]),
        is_fact_check=np.array([False]),
        input_clarity=np.ones(3),
        coherence=np.ones(3),
        requires_fact_check=np.zeros(3, dtype=bool),
    )
    assert scores.tolist() == [pytest.approx(2.0)] * 3


def test_rescoring_many_divides_by_any_total_weight_above_zero():
    # Weights of 0.25 and 0.5: the first passed, so the fraction is a third, however small
    # the total: 8 / 3 + 2.
    scores = scoring.scores_many(
        reported=np.array([[True, True]]),
        passed=np.array([[True, False]]),
        weights=np.array([0.25, 0.5]),
        is_fact_check=np.array([False, False]),
        input_clarity=np.ones(1),
        coherence=np.ones(1),
        requires_fact_check=np.zeros(1, dtype=bool),
    )
    assert scores.tolist() == [pytest.approx(8 / 3 + 2)]


@pytest.mark.parametrize(
    "terms",
    [
        {"input_clarity": np.array([math.nan, 1.0])},
        {"coherence": np.array([math.inf, 1.0])},
        {"bonus": np.array([math.nan, 0.0])},
        {"bonus": np.array([math.inf, 0.0])},
        # A bonus task_accuracy_bonus cannot give: below 0, or above 0.5, which could lift a
        # low score to nearly 10.
        {"bonus": np.array([-0.1, 0.0])},
        {"bonus": np.array([0.5 + 1e-9, 0.0])},
    ],
    ids=["clarity nan", "coherence inf", "bonus nan", "bonus inf", "bonus < 0", "bonus > 0.5"],
)
def test_rescoring_many_holds_an_output_with_any_term_not_a_number(terms):
    # Only the first output's term is broken: it alone falls to the lowest score.
    assert _one_validator_each(**terms).tolist() == pytest.approx([0.0, 2.0])


@pytest.mark.parametrize(
    ("terms", "expected"),
    [
        # A share at either end of 0-1 is scored: the first output passed its validator,
        # 8 + 0.5 x clarity + 1.5 x coherence; the second reported none, 0 + the same.
        ({"input_clarity": np.array([0.0, 0.0])}, [9.5, 1.5]),
        ({"coherence": np.array([0.0, 0.0])}, [8.5, 0.5]),
        # The largest bonus is scored too: 10 stays 10, and 2's odds of 0.25 x 1.5 give
        # 3 / 1.1.
        ({"bonus": np.array([0.5, 0.5])}, [10.0, 3 / 1.1]),
        # Just outside, or far outside, the output is held at the lowest score: a clarity
        # of 100 used to be capped to 10 and approved.
        ({"input_clarity": np.array([1.0 + 1e-9, 1.0])}, [0.0, 2.0]),
        ({"input_clarity": np.array([100.0, -1e-9])}, [0.0, 0.0]),
        ({"coherence": np.array([1.5, -100.0])}, [0.0, 0.0]),
        # Weights the writer refuses, should they be stored: 3 passed of 3 - 1, a fraction
        # of 1.5.
        (
            {
                "weights": [3.0, -1.0],
                "reported": np.array([[True, True], [False, False]]),
                "passed": np.array([[True, False], [False, False]]),
                "is_fact_check": np.array([False, False]),
            },
            [0.0, 2.0],
        ),
    ],
    ids=[
        "clarity 0",
        "coherence 0",
        "bonus 0.5",
        "clarity above 1",
        "clarity far out",
        "coherence out",
        "fraction above 1",
    ],
)
def test_rescoring_many_holds_an_output_with_a_term_that_is_not_a_share(terms, expected):
    assert _one_validator_each(**terms).tolist() == pytest.approx(expected)


# ----------------------------------------------------------- a scorer that breaks


class _Broken:
    name = "broken"
    version = "1"
    description = ""

    def __init__(self, error=None, score=None):
        self.error, self.value = error, score

    def applies(self, output):
        return True

    def score(self, output):
        if self.error:
            raise self.error
        return scorers.Scored(score=self.value, summary="")

    def rate(self, output):
        return scorers.Rating(self.score(output).score)


@pytest.mark.parametrize(
    ("broken", "cause"),
    [
        (_Broken(error=ZeroDivisionError("division by zero")), "broken: ZeroDivisionError"),
        (_Broken(error=KeyError("intent")), "broken: KeyError"),
        (_Broken(score=math.nan), "broken: score is nan"),
        (_Broken(score=math.inf), "broken: score is inf"),
        (_Broken(score=11.0), "broken: score 11 is outside 0-10"),
    ],
)
def test_a_deciding_scorer_that_breaks_holds_the_output(broken, cause):
    result = scorers.score_and_gate(broken, scorer_input([]), shadow=False).result

    assert result.decision is Decision.PENDING_REVIEW
    assert result.fault == cause
    assert result.scorer == "broken-v1"


def test_a_shadow_scorer_that_breaks_is_left_out_and_decides_nothing(monkeypatch):
    monkeypatch.setattr(scorers, "_SCORERS", (*scorers._SCORERS, _Broken(score=math.nan)))
    passing = [ValidatorOutcome("a", True)]

    scoring_ = scorers.score_and_gate(scorers.REGISTRY["validators"], scorer_input(passing))

    assert "broken" not in scoring_.shadow
    assert scoring_.result.fault is None
    assert scoring_.result.decision is Decision.APPROVED


# ------------------------------------------------------------------- properties

weights = st.floats(min_value=WEIGHT_RANGE[0], max_value=WEIGHT_RANGE[1], allow_subnormal=True)
units = st.floats(min_value=0.0, max_value=1.0, allow_subnormal=True)
validator_specs = st.lists(st.tuples(st.booleans(), weights, st.booleans()), max_size=40)
histories = st.integers(min_value=0, max_value=10**12).flatmap(
    lambda n: st.builds(PairHistory, reviewed=st.just(n), approved_unchanged=st.integers(0, n))
)
policies = st.builds(
    GatePolicy,
    review_threshold=st.floats(0.0, 4.99),
    approve_threshold=st.floats(5.0, 10.0),
    cold_start_reviews=st.integers(0, 100_000),
    cold_start_margin=st.floats(0.0, 10.0),
    task_type_reviewed=st.integers(0, 10**12),
    auto_approve=st.booleans(),
)
moments = st.datetimes(
    min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30), timezones=st.just(UTC)
)
counts = st.integers(0, 2**63 - 1)
short_text = st.sampled_from(["", "MemoryManager", "src/a.py", "x" * 500])


@st.composite
def evidence_entries(draw):
    tool = draw(st.sampled_from(list(Tool)))
    match_count = draw(counts)
    entry = {
        "tool": tool.value,
        "query": draw(short_text),
        "target": draw(short_text),
        "match_count": match_count,
        "exact_match_count": draw(st.integers(0, match_count)),
        "recovery": draw(st.booleans()),
        "error": draw(st.booleans()),
        "sources": draw(st.lists(short_text, max_size=3)),
    }
    if tool is Tool.DISCOVERY:
        entry["factors"] = [f.value for f in draw(st.sets(st.sampled_from(list(DiscoveryFactor))))]
    if tool.value in {"find", "grep", "references"}:
        entry["match"] = draw(st.none() | st.sampled_from([m.value for m in Match]))
    if allowed := sorted(OUTCOMES.get(tool, ())):
        entry["outcome"] = draw(st.none() | st.sampled_from(allowed))
    return entry


def evidence(*, complete: bool = False):
    """Evidence as a gateway sends it; ``complete``, with what every evidence scorer reads
    (an intent other than chat, one entry at least)."""
    intents = [i.value for i in Intent if not complete or i is not Intent.CHAT]
    return st.builds(
        lambda intent, entries: {"intent": intent, "entries": entries},
        st.sampled_from(intents) if complete else st.none() | st.sampled_from(intents),
        st.lists(evidence_entries(), min_size=int(complete), max_size=12),
    )


sources = st.lists(
    st.fixed_dictionaries(
        {
            "source_type": st.sampled_from(["extraction", "user_input", "a", "z" * 50]),
            "confidence": units,
        }
    ),
    min_size=1,
    max_size=20,
)


def _claim(draw, **extra):
    return {
        "sources": draw(sources),
        "tier": draw(st.sampled_from([t.value for t in Tier])),
        "staleness_at": draw(st.none() | moments.map(lambda m: m.isoformat())),
        **extra,
    }


@st.composite
def provenance(draw):
    related = st.builds(dict).map(lambda _: _claim(draw, strength=draw(units)))
    return _claim(
        draw,
        supporting=draw(st.lists(related, max_size=5)),
        contradicting=draw(st.lists(related, max_size=5)),
        instance_trust=draw(units),
    )


@st.composite
def scorer_inputs(draw, *, complete: bool = False):
    """An output as the scorers see it; ``complete``, with the inputs of every scorer, so
    that a test of one scorer does not filter out most of what is drawn."""
    validators = [
        ValidatorOutcome(f"v{i}", passed, weight, fact_check)
        for i, (passed, weight, fact_check) in enumerate(draw(validator_specs))
    ]
    sent_evidence = evidence(complete=complete).map(EvidenceIn.model_validate)
    sent_provenance = provenance().map(ProvenanceIn.model_validate)
    if not complete:
        sent_evidence, sent_provenance = st.none() | sent_evidence, st.none() | sent_provenance
    try:
        sent_evidence, sent_provenance = draw(sent_evidence), draw(sent_provenance)
    except ValidationError:
        assume(False)
    return ScorerInput(
        validators=tuple(validators),
        input_clarity=draw(units),
        coherence=draw(units),
        requires_fact_check=draw(st.booleans()),
        pair=draw(histories),
        policy=draw(policies),
        now=draw(moments),
        evidence=sent_evidence,
        provenance=sent_provenance,
    )


# `make mutants` runs each surviving mutant's tests in full, these among them: it asks for
# fewer examples (MUTANTS_FUZZ_EXAMPLES in the Makefile), where the suite draws 150.
FUZZ = settings(
    max_examples=int(os.environ.get("GATEHOUSE_FUZZ_EXAMPLES", "150")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)


@pytest.mark.parametrize("name", scorers.names())
@FUZZ
@given(output=scorer_inputs(complete=True))
def test_every_scorer_gives_a_number_on_the_scale_for_any_valid_input(name, output):
    scorer = scorers.REGISTRY[name]
    assume(scorer.applies(output))

    scored = scorer.score(output)

    assert math.isfinite(scored.score)
    assert scoring.SCORE_MIN <= scored.score <= scoring.SCORE_MAX
    assert scorer.rate(output).score == scored.score


@pytest.mark.parametrize("name", scorers.names())
@FUZZ
@given(output=scorer_inputs())
def test_the_gate_never_faults_on_valid_input_nor_approves_off_the_scale(name, output):
    result = scorers.score_and_gate(scorers.REGISTRY[name], output).result

    assert result.fault is None
    assert math.isfinite(result.score)
    assert scoring.SCORE_MIN <= result.score <= scoring.SCORE_MAX
    if result.decision is Decision.APPROVED:
        assert result.score >= result.approve_threshold


finite_bases = st.floats(min_value=0.0, max_value=10.0)
bonuses = st.sampled_from([0.0, scoring.GOOD_ACCURACY_BONUS, scoring.HIGH_ACCURACY_BONUS]).flatmap(
    lambda top: st.floats(0.0, top) if top else st.just(0.0)
)
penalties = st.sampled_from([0.0, scoring.HALLUCINATION_PENALTY])


@given(finite_bases, finite_bases, bonuses, penalties)
def test_the_final_score_is_on_the_scale_and_rises_with_the_base(low, high, bonus, penalty):
    low, high = sorted((low, high))
    lower = scoring.final_score(low, bonus, penalty)
    higher = scoring.final_score(high, bonus, penalty)

    assert 0.0 <= lower <= higher <= 10.0
    # docs/gate.md: the bonus never ties two bases at the cap.
    if high - low > 1e-9:
        assert higher > lower


@FUZZ
@given(validator_specs, st.lists(units, min_size=2, max_size=2), st.booleans(), histories)
def test_rescoring_many_gives_the_gates_score_for_any_weights(spec, clarity, fact_check, pair):
    validators = [ValidatorOutcome(f"v{i}", p, w, fc) for i, (p, w, fc) in enumerate(spec)]
    one = scoring.score_output(
        validators=validators,
        input_clarity=clarity[0],
        coherence=clarity[1],
        requires_fact_check=fact_check,
        pair=pair,
        policy=PAST_COLD_START,
    ).score
    width = max(len(spec), 1)
    many = scoring.scores_many(
        reported=np.array([[i < len(spec) for i in range(width)]]),
        passed=np.array([[p for p, _, _ in spec] or [False]]),
        weights=np.array([w for _, w, _ in spec] or [1.0]),
        is_fact_check=np.array([fc for _, _, fc in spec] or [False]),
        input_clarity=np.array([clarity[0]]),
        coherence=np.array([clarity[1]]),
        requires_fact_check=np.array([fact_check]),
        bonus=np.array([scoring.task_accuracy_bonus(pair)]),
    )
    assert many[0] == pytest.approx(one, abs=1e-9)


# ------------------------------------------------------------- the stored rows


@pytest.mark.django_db
def test_a_scorer_fault_at_ingest_is_held_answered_and_audited(gateway_api, monkeypatch):
    from gating.models import AuditEvent, Output
    from gating.scorers import validators
    from tests.factories import SubmissionFactory, TaskTypeFactory

    TaskTypeFactory(name="summarize", reviewed_count=1000, cold_start_reviews=0)

    def broken(output):
        raise OverflowError("math range error")

    monkeypatch.setattr(validators, "gate_result", broken)
    body = SubmissionFactory(task_type="summarize")

    response = gateway_api.post("/api/v1/outputs/", body, format="json")

    assert response.status_code == 201, response.content
    answer = response.json()
    assert answer["decision"] == "pending_review"
    assert answer["score"] == 0.0
    assert answer["impacts"] == [
        {"factor": "scoring_fault", "points": 0.0, "detail": "validators: OverflowError"}
    ]
    output = Output.objects.get(pk=answer["id"])
    [event] = AuditEvent.objects.filter(action=AuditEvent.Action.SCORING_FAULT)
    assert (event.object_id, event.actor) == (str(output.pk), None)
    assert event.after == {"cause": "validators: OverflowError", "task_type": "summarize"}
    assert output.review_items.filter(state="open").exists()


@pytest.mark.django_db
@pytest.mark.parametrize("weight", [1e308, 100.5, -1.0, math.nan])
def test_the_database_refuses_a_weight_off_the_range(requires_postgres, weight):
    from django.db import IntegrityError

    from gating.models import Validator
    from tests.factories import TaskTypeFactory

    task_type = TaskTypeFactory(name="t")
    with pytest.raises(IntegrityError):
        Validator.objects.create(task_type=task_type, name="v", weight=weight)


@pytest.mark.django_db
def test_the_migration_mends_rows_stored_with_a_nan_score(requires_postgres, held_outputs):
    from importlib import import_module

    from django.apps import apps
    from django.db import connection

    from gating.models import Output, ReviewItem, Validator

    # As an earlier version stored them: the checks (rolled back with the test) not yet there.
    with connection.cursor() as cursor:
        cursor.execute("ALTER TABLE gating_output DROP CONSTRAINT output_scores_on_scale")
        cursor.execute("ALTER TABLE gating_validator DROP CONSTRAINT validator_weight_in_range")
    [output] = held_outputs(1, task_type="t")
    validator = Validator.objects.create(task_type=output.task_type, name="v")
    Validator.objects.filter(pk=validator.pk).update(weight=1e308)
    Output.objects.filter(pk=output.pk).update(
        score=math.nan,
        impacts=[{"factor": "validator:v", "points": None, "detail": "passed"}],
    )
    ReviewItem.objects.filter(output=output).update(score=math.nan)

    import_module("gating.migrations.0020_scores_and_weights_on_scale").mend(apps, None)

    output.refresh_from_db()
    assert (output.score, output.base_score) == (0.0, 0.0)
    assert output.impacts == [
        {"factor": "validator:v", "points": 0.0, "detail": "passed (not a number)"}
    ]
    assert output.reasons[-1].startswith("Stored before scores were checked")
    assert ReviewItem.objects.get(output=output).score == 0.0
    assert Validator.objects.get(pk=validator.pk).weight == 100.0


@pytest.mark.django_db
def test_a_claim_whose_answer_cannot_be_built_is_undone(
    held_outputs, user_in, client_for, monkeypatch
):
    from gating.api import queue_views
    from gating.models import ReviewItem
    from gating.roles import Role

    held_outputs(1, task_type="t")
    reviewer_api = client_for(user_in(Role.REVIEWER))

    def unbuildable(*args, **kwargs):
        raise ValueError("a stored row the answer's model refuses")

    monkeypatch.setattr(queue_views.ClaimedItem, "of", unbuildable)
    with pytest.raises(ValueError, match="refuses"):
        reviewer_api.post("/api/v1/queue/claim/")

    [item] = ReviewItem.objects.all()
    assert (item.state, item.claimed_by_id, item.lease_expires_at) == ("open", None, None)
