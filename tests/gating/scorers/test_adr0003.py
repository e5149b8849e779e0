"""ADR-0003's formula as a scorer (``adr0003_formula``): ``clamp(base * (1 + bonus -
penalty), 0, 10)`` with the validators scorer's terms, every value worked by hand from the
ADR; registered, so that it scores every output in shadow and a task type can choose it."""

import math
from datetime import UTC, datetime

import pytest

from gating import scorers, scoring, services
from gating.models import Output
from gating.scorers import adr0003_formula
from gating.scorers.base import ScorerInput
from gating.scoring import Decision, GatePolicy, PairHistory, ValidatorOutcome
from gating.submissions import OutputSubmission
from tests.factories import SubmissionFactory, TaskModelStatsFactory, TaskTypeFactory

SCORER = adr0003_formula.SCORER
NOW = datetime(2026, 11, 28, 12, tzinfo=UTC)
PAST_COLD_START = GatePolicy(task_type_reviewed=100)
# 38 of 40 approved unchanged: accuracy 95 %, full confidence, bonus 0.5.
TRUSTED = PairHistory(reviewed=40, approved_unchanged=38)
FACTS = ValidatorOutcome("facts", True, is_fact_check=True)
FACTS_FAILED = ValidatorOutcome("facts", False, is_fact_check=True)
OTHERS = (ValidatorOutcome("schema", True), ValidatorOutcome("grammar", True))


def output(validators, *, clarity=1.0, coherence=1.0, fact_check=True, pair=TRUSTED, policy=None):
    return ScorerInput(
        validators=tuple(validators),
        input_clarity=clarity,
        coherence=coherence,
        requires_fact_check=fact_check,
        pair=pair,
        policy=policy or PAST_COLD_START,
        now=NOW,
    )


# ----------------------------------------------------------------- the formula


def test_the_bonus_and_the_penalty_cancel_in_one_multiplier():
    # 8 x (1 + 0.5 - 0.5) = 8.0, where the validators scorer (v2) gives 5.0.
    assert scoring.adr0003_score(8.0, 0.5, 0.5) == 8.0
    assert scoring.final_score(8.0, 0.5, 0.5) == pytest.approx(5.0)


def test_the_bonus_multiplies_the_score_past_the_cap():
    # 8 x 1.5 = 12, which the ADR clamps to 10.
    assert scoring.adr0003_score(8.0, 0.5, 0.0) == 12.0
    assert scoring.clamp(scoring.adr0003_score(8.0, 0.5, 0.0)) == 10.0


def test_the_penalty_alone_halves_the_score():
    assert scoring.adr0003_score(8.0, 0.0, 0.5) == 4.0


# ---------------------------------------------------------------- the scorer


def test_a_failed_fact_check_and_a_trusted_pair_score_the_base():
    # 3 of 4 validators (8 x 0.75 = 6) + 0.5 + 1.5: base 8; x (1 + 0.5 - 0.5) = 8.0.
    scored = SCORER.score(output([FACTS_FAILED, *OTHERS, ValidatorOutcome("length", True)]))

    assert scored.score == pytest.approx(8.0)
    assert scored.inputs == {
        "pass_fraction": 0.75,
        "base_score": 8.0,
        "task_accuracy_bonus": 0.5,
        "hallucination_penalty": 0.5,
    }
    points = {i.factor: i.points for i in scored.explanation}
    assert points["hallucination_penalty"] == pytest.approx(-4.0)
    assert points["task_accuracy_bonus"] == pytest.approx(4.0)
    assert "clamp" not in points
    assert sum(points.values()) == pytest.approx(scored.score)


def test_a_trusted_pair_ties_at_the_cap():
    # The docs' worked example: base 0.75 x 8 + 0.4 + 0.9 = 7.3; 7.3 x 1.5 = 10.95 -> 10.
    validators = [FACTS, *OTHERS, ValidatorOutcome("length", False)]
    scored = SCORER.score(output(validators, clarity=0.8, coherence=0.6))

    assert scored.score == 10.0
    points = {i.factor: i.points for i in scored.explanation}
    assert points["clamp"] == pytest.approx(-0.95)
    assert sum(points.values()) == pytest.approx(10.0)


def test_the_penalty_and_the_bonus_are_explained_term_by_term():
    # What a reviewer reads, worked by hand: each validator earns 8 / 4 = 2 points when it
    # passes; base 6 + 0.5 + 1.5 = 8; the penalty takes 0.5 x 8 and the bonus adds 0.5 x 8.
    scored = SCORER.score(output([FACTS_FAILED, *OTHERS, ValidatorOutcome("length", True)]))

    assert scored.summary == "75% of the validators' weight passed; base 8.00 × 1.000 (ADR-0003)."
    assert [tuple(impact) for impact in scored.explanation] == [
        ("validator:facts", 0.0, "failed, 2.00 points not earned"),
        ("validator:schema", 2.0, "passed (weight 1)"),
        ("validator:grammar", 2.0, "passed (weight 1)"),
        ("validator:length", 2.0, "passed (weight 1)"),
        ("input_clarity", 0.5, "1 × 0.5"),
        ("coherence", 1.5, "1 × 1.5"),
        (
            "hallucination_penalty",
            -4.0,
            "fact check required and facts failed: penalty 0.5 × base 8.00",
        ),
        ("task_accuracy_bonus", 4.0, "accuracy 95% over 40 reviews: bonus 0.500 × base 8.00"),
    ]


def test_the_clamp_is_explained_with_the_score_it_cut():
    # Base 6 + 0.4 + 0.9 = 7.3; x 1.5 = 10.95, cut by 0.95 to 10.
    validators = [FACTS, *OTHERS, ValidatorOutcome("length", False)]
    scored = SCORER.score(output(validators, clarity=0.8, coherence=0.6))

    assert scored.summary == "75% of the validators' weight passed; base 7.30 × 1.500 (ADR-0003)."
    assert [(i.factor, i.detail) for i in scored.explanation][-4:] == [
        ("input_clarity", "0.8 × 0.5"),
        ("coherence", "0.6 × 1.5"),
        ("task_accuracy_bonus", "accuracy 95% over 40 reviews: bonus 0.500 × base 7.30"),
        ("clamp", "clamped to [0, 10] from 10.95"),
    ]
    assert [i.points for i in scored.explanation][-4:] == pytest.approx([0.4, 0.9, 3.65, -0.95])


def test_a_term_that_is_not_a_number_is_named_in_the_fault():
    # A weight the writer refuses (1e308 twice overflows their sum), should one be stored:
    # the fault names the first term that left the finite numbers.
    huge = [ValidatorOutcome("a", True, 1e308), ValidatorOutcome("b", True, 1e308)]
    with pytest.raises(scoring.ScoringFault, match=r"^pass_fraction is nan, not a share"):
        SCORER.score(output(huge))
    # Clarity arrives checked on 0-1; should one outside it reach the scorer, it is named,
    # in a shadow's rating as in a deciding score, rather than clamped to 10.
    with pytest.raises(scoring.ScoringFault, match=r"^coherence is 1.5, not a share"):
        SCORER.score(output(OTHERS, coherence=1.5))
    for clarity in (math.inf, 2.0):
        with pytest.raises(scoring.ScoringFault, match=rf"^input_clarity is {clarity}, not"):
            SCORER.score(output(OTHERS, clarity=clarity))
        with pytest.raises(scoring.ScoringFault, match=rf"^input_clarity is {clarity}, not"):
            SCORER.rate(output(OTHERS, clarity=clarity))


def test_the_bonus_is_weighted_by_the_pairs_reviews():
    # 10 reviews, all approved: 0.5 x min(1, 10/20) = 0.25; 7.3 x 1.25 = 9.125.
    validators = [FACTS, *OTHERS, ValidatorOutcome("length", False)]
    few = PairHistory(reviewed=10, approved_unchanged=10)
    assert SCORER.rate(output(validators, clarity=0.8, coherence=0.6, pair=few)).score == (
        pytest.approx(9.125)
    )
    # 80 % over 40: bonus 0.2; 7.3 x 1.2 = 8.76.
    good = PairHistory(reviewed=40, approved_unchanged=32)
    assert SCORER.rate(output(validators, clarity=0.8, coherence=0.6, pair=good)).score == (
        pytest.approx(8.76)
    )


def test_the_penalty_needs_a_task_that_requires_the_fact_check():
    validators = [FACTS_FAILED, *OTHERS, ValidatorOutcome("length", True)]
    # Base 8, bonus 0.5, no penalty: 12, clamped.
    assert SCORER.rate(output(validators, fact_check=False)).score == 10.0


def test_no_validators_scores_the_validator_term_zero():
    # 0 + 0.5 x 0.5 + 1.5 x 0.5 = 1.0; no history, no bonus.
    scored = SCORER.score(output([], clarity=0.5, coherence=0.5, pair=PairHistory()))
    assert scored.score == pytest.approx(1.0)


def test_rate_gives_the_score_of_score():
    validators = [FACTS_FAILED, *OTHERS]
    for pair in (PairHistory(), TRUSTED, PairHistory(reviewed=40, approved_unchanged=32)):
        given = output(validators, clarity=0.7, coherence=0.55, pair=pair)
        assert SCORER.rate(given).score == SCORER.score(given).score


# ------------------------------------------------------------ deciding with it


def test_the_cold_start_holds_even_a_score_of_ten():
    in_cold_start = GatePolicy(task_type_reviewed=5, cold_start_reviews=20)
    given = output([FACTS, *OTHERS], policy=in_cold_start)

    result = scorers.score_and_gate(SCORER, given, shadow=False).result

    assert result.score == 10.0
    assert result.decision is Decision.PENDING_REVIEW
    assert result.scorer == "adr0003_formula-v1"
    assert any(r.startswith("Cold start") for r in result.reasons)


def test_past_the_cold_start_the_thresholds_decide():
    # Base 8, penalty 0.5, no history: 4.0, below the review threshold 4.0 raised by 1.0
    # for a pair with no reviews.
    validators = [FACTS_FAILED, *OTHERS, ValidatorOutcome("length", True)]
    new_pair = scorers.score_and_gate(
        SCORER, output(validators, pair=PairHistory()), shadow=False
    ).result
    assert (new_pair.score, new_pair.decision) == (4.0, Decision.PENDING_REVIEW)

    trusted = scorers.score_and_gate(SCORER, output(validators), shadow=False).result
    assert (trusted.score, trusted.decision) == (8.0, Decision.APPROVED)


# ------------------------------------------------------------ in the registry


def test_it_is_registered_and_applies_to_every_output():
    assert scorers.get("adr0003_formula") is SCORER
    assert ("adr0003_formula", "adr0003_formula") in scorers.choices()
    assert SCORER.applies(output([]))


def test_its_label_is_not_read_as_the_validators_scorers():
    # The learning cycles rescore with the validators formula the outputs whose label
    # starts with "validators-v", or "adr0003-v" as outputs said before scorers had names.
    label = scorers.label(SCORER)
    assert label == "adr0003_formula-v1"
    assert not label.startswith((f"{scorers.DEFAULT}-v", "adr0003-v"))


@pytest.mark.django_db
def test_every_output_is_scored_by_it_in_shadow(gateway):
    TaskTypeFactory(name="summarize", cold_start_margin=0.0)
    TaskModelStatsFactory(task_type__name="summarize", model="model-a", approved_unchanged_count=38)
    body = SubmissionFactory(task_type="summarize")

    stored = services.output_ingest(
        source=gateway, submission=OutputSubmission.model_validate(body)
    ).output

    # 3 of 4 validators, clarity 0.8, coherence 0.9: base 6 + 0.4 + 1.35 = 7.75.
    # ADR-0003: 7.75 x 1.5 = 11.625, clamped to 10. v2: 11.625 / 1.3875 = 8.378.
    assert stored.scorer == "validators-v2"
    assert stored.score == pytest.approx(11.625 / 1.3875)
    assert stored.shadow_scores["adr0003_formula"] == {"version": "1", "score": 10.0}
    assert Output.objects.get(pk=stored.pk).shadow_scores["adr0003_formula"]["score"] == 10.0


@pytest.mark.django_db
def test_a_task_type_can_choose_it_to_decide(gateway, admin_api):
    TaskTypeFactory(name="summarize", cold_start_margin=0.0)
    response = admin_api.patch(
        "/api/v1/task-types/summarize/",
        {"scorer": "adr0003_formula", "reason": "compare with ADR-0003 as written"},
        format="json",
    )
    assert response.status_code == 200, response.content
    services.gate_caches_clear()
    body = SubmissionFactory(
        task_type="summarize",
        validators=[
            {"name": "facts", "passed": False},
            {"name": "schema", "passed": True},
            {"name": "grammar", "passed": True},
            {"name": "length", "passed": True},
        ],
    )

    stored = services.output_ingest(
        source=gateway, submission=OutputSubmission.model_validate(body)
    ).output

    # Base 7.75, no history, penalty 0.5: 7.75 x 0.5 = 3.875, held. v2 gives the same
    # without a bonus: 7.75 x 0.5.
    assert stored.scorer == "adr0003_formula-v1"
    assert stored.score == pytest.approx(3.875)
    assert stored.decision == Decision.PENDING_REVIEW
    assert stored.shadow_scores["validators"]["score"] == pytest.approx(3.875)
    assert "adr0003_formula" not in stored.shadow_scores
