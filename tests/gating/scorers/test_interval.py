"""The interval scorer (seed 004) step by step, against values worked out by hand."""

import json
from datetime import UTC, datetime, timedelta

import pytest
from pydantic import ValidationError

from gating.scorers import interval
from gating.scorers.base import ScorerInput
from gating.scorers.interval import (
    SCORER,
    WIDE_INTERVAL,
    adjust_for_relations,
    aggregate_lower,
    aggregate_upper,
    clamp_and_order,
    contradiction_penalty,
    is_wide,
    related_weight,
    scale_by_trust,
    source_diversity,
    staleness_factor,
    support_boost,
)
from gating.scoring import GatePolicy, PairHistory
from gating.submissions import ProvenanceIn, RelatedClaimIn, Tier

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def source(confidence, source_type="extraction"):
    return {"source_type": source_type, "confidence": confidence}


def claim(*sources, **fields):
    return {"sources": list(sources), **fields}


def ago(delta):
    return (NOW - delta).isoformat()


def scorer_input(provenance):
    return ScorerInput(
        validators=(),
        input_clarity=0.5,
        coherence=0.5,
        requires_fact_check=False,
        pair=PairHistory(),
        policy=GatePolicy(),
        now=NOW,
        provenance=None if provenance is None else ProvenanceIn.model_validate(provenance),
    )


def scored(provenance):
    return SCORER.score(scorer_input(provenance))


# Two sources of two types at 0.6, used by several tests:
#   upper = 1 - 0.4 * 0.4 = 0.84
#   diversity = 0.5 + 0.5 * 2/3 = 5/6; lower = 0.6 * 5/6 = 0.5
TWO_TYPES = [source(0.6, "extraction"), source(0.6, "user_input")]


# --------------------------------------------------------------------------- step 1


@pytest.mark.parametrize(
    ("confidences", "expected"),
    [
        ([0.9], 0.9),  # 1 - 0.1
        ([0.5, 0.5], 0.75),  # 1 - 0.5 * 0.5
        ([0.6, 0.5, 0.2], 0.84),  # 1 - 0.4 * 0.5 * 0.8 = 1 - 0.16
        ([0.0, 0.0], 0.0),  # 1 - 1 * 1
    ],
)
def test_aggregate_upper_is_the_chance_that_one_source_is_right(confidences, expected):
    assert aggregate_upper(confidences) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("types", "expected"),
    [
        (["extraction"], 2 / 3),  # 0.5 + 0.5 * 1/3: the formula's 0.667, not the seed's 0.5
        (["extraction"] * 10, 2 / 3),  # ten of one type still count as one
        (["extraction", "user_input", "extraction"], 5 / 6),  # 0.5 + 0.5 * 2/3
        (["extraction", "user_input", "agent_assertion"], 1.0),  # 0.5 + 0.5 * 3/3
        (["a", "b", "c", "d", "e"], 1.0),  # 5/3 is capped at 1
    ],
)
def test_source_diversity_counts_distinct_types_up_to_three(types, expected):
    assert source_diversity(types) == pytest.approx(expected)


def test_aggregate_lower_is_the_strongest_source_times_diversity():
    # max(0.3, 0.6) * 5/6 = 0.5
    assert aggregate_lower([0.3, 0.6], 5 / 6) == pytest.approx(0.5)


def test_one_source_gives_two_thirds_of_its_confidence_as_lower_bound():
    # lower = 0.9 * (0.5 + 0.5/3) = 0.9 * 2/3 = 0.6; upper = 0.9
    result = scored(claim(source(0.9)))
    assert result.inputs["diversity"] == pytest.approx(2 / 3)
    assert result.interval == pytest.approx((6.0, 9.0))


# --------------------------------------------------------------------------- step 2


@pytest.mark.parametrize(
    ("tier", "half_life"),
    [
        (Tier.EPHEMERAL, timedelta(hours=4)),
        (Tier.TASK, timedelta(days=3)),
        (Tier.PROJECT, timedelta(days=28)),  # 4 weeks
        (Tier.PERSISTENT, timedelta(days=182.5)),  # half of 365 days
    ],
)
def test_one_half_life_past_staleness_halves(tier, half_life):
    assert staleness_factor(NOW - half_life, tier, NOW) == pytest.approx(0.5)


@pytest.mark.parametrize(
    ("tier", "elapsed"),
    [
        (Tier.EPHEMERAL, timedelta(hours=8)),
        (Tier.TASK, timedelta(days=6)),
        (Tier.PROJECT, timedelta(days=56)),
        (Tier.PERSISTENT, timedelta(days=365)),
    ],
)
def test_two_half_lives_past_staleness_quarter(tier, elapsed):
    assert staleness_factor(NOW - elapsed, tier, NOW) == pytest.approx(0.25)


def test_half_a_half_life_decays_smoothly():
    # project: 14 days of 28: 0.5 ** 0.5 = 0.70710678
    factor = staleness_factor(NOW - timedelta(days=14), Tier.PROJECT, NOW)
    assert factor == pytest.approx(0.70710678)


@pytest.mark.parametrize(
    "staleness_at",
    [None, NOW, NOW + timedelta(days=1), NOW + timedelta(days=400)],
)
def test_no_decay_until_staleness_at_has_passed(staleness_at):
    assert staleness_factor(staleness_at, Tier.EPHEMERAL, NOW) == 1.0


def test_staleness_decays_both_bounds():
    # One task half-life late: lower 0.5 * 0.5 = 0.25, upper 0.84 * 0.5 = 0.42
    result = scored(claim(*TWO_TYPES, tier="task", staleness_at=ago(timedelta(days=3))))
    assert result.inputs["staleness_factor"] == pytest.approx(0.5)
    assert result.interval == pytest.approx((2.5, 4.2))


def test_staleness_at_in_the_future_leaves_the_interval():
    result = scored(claim(*TWO_TYPES, tier="ephemeral", staleness_at=ago(-timedelta(hours=1))))
    assert result.interval == pytest.approx((5.0, 8.4))


# --------------------------------------------------------------------------- step 3


def related(*sources, strength, **fields):
    return RelatedClaimIn.model_validate(claim(*sources, strength=strength, **fields))


def test_related_claim_counts_with_its_own_stale_upper_times_strength():
    # Its upper: 1 - 0.5 * 0.5 = 0.75; one ephemeral half-life stale: 0.375;
    # strength 0.8: 0.375 * 0.8 = 0.3
    supporting = related(
        source(0.5),
        source(0.5),
        strength=0.8,
        tier="ephemeral",
        staleness_at=ago(timedelta(hours=4)),
    )
    assert related_weight([supporting], NOW) == pytest.approx(0.3)


def test_related_claim_counts_with_its_upper_not_its_lower():
    # One source of one type: upper 0.6, lower 0.6 * 2/3 = 0.4. Strength 1: weight 0.6.
    # Two claims add up: 0.6 + 0.5 * 0.5 = 0.85
    claims = [related(source(0.6), strength=1.0), related(source(0.5), strength=0.5)]
    assert related_weight(claims, NOW) == pytest.approx(0.85)


def test_related_claims_have_no_relationships_of_their_own():
    # This is how the circularity is avoided: a related claim cannot carry supporting or
    # contradicting claims, so its steps 1-2 value is all there is to read.
    with pytest.raises(ValidationError, match="supporting"):
        RelatedClaimIn.model_validate(
            claim(
                source(0.5),
                strength=1.0,
                supporting=[claim(source(0.9), strength=1.0)],
            )
        )


def test_support_boost_and_contradiction_penalty():
    assert support_boost(0.3) == pytest.approx(1.03)  # 1 + 0.3 * 0.1
    assert support_boost(0.0) == 1.0
    assert contradiction_penalty(0.4) == pytest.approx(0.92)  # 1 - 0.4 * 0.2
    assert contradiction_penalty(0.0) == 1.0


@pytest.mark.parametrize("weight", [5.0, 6.0, 50.0])
def test_contradiction_penalty_stops_at_zero(weight):
    # 1 - 5 * 0.2 = 0; 1 - 6 * 0.2 = -0.2 and 1 - 50 * 0.2 = -9 are clamped to 0
    assert contradiction_penalty(weight) == 0.0


def test_adjust_for_relations():
    # lower 0.5 * 0.9 = 0.45; upper 0.84 * 1.1 * 0.9 = 0.8316
    assert adjust_for_relations(0.5, 0.84, 1.1, 0.9) == pytest.approx((0.45, 0.8316))
    # upper 0.99 * 1.1 = 1.089, capped at 1
    assert adjust_for_relations(0.6, 0.99, 1.1, 1.0) == pytest.approx((0.6, 1.0))


def test_support_raises_only_the_upper_bound():
    # weight 1.0 * 1.0 = 1 -> boost 1.1: upper 0.84 * 1.1 = 0.924; lower stays 0.5
    result = scored(claim(*TWO_TYPES, supporting=[claim(source(1.0), strength=1.0)]))
    assert result.inputs["support_boost"] == pytest.approx(1.1)
    assert result.interval == pytest.approx((5.0, 9.24))


def test_contradiction_lowers_both_bounds():
    # weight 0.5 * 1.0 = 0.5 -> penalty 1 - 0.1 = 0.9: lower 0.45, upper 0.756
    result = scored(claim(*TWO_TYPES, contradicting=[claim(source(0.5), strength=1.0)]))
    assert result.inputs["contradiction_penalty"] == pytest.approx(0.9)
    assert result.interval == pytest.approx((4.5, 7.56))


def test_overwhelming_contradiction_zeroes_the_interval():
    # six claims at 1.0, strength 1: weight 6, penalty 1 - 1.2 -> 0
    contradicting = [claim(source(1.0), strength=1.0)] * 6
    result = scored(claim(*TWO_TYPES, contradicting=contradicting))
    assert result.inputs["contradiction_penalty"] == 0.0
    assert result.interval == (0.0, 0.0)
    assert result.score == 0.0


def test_a_stale_related_claim_counts_for_less():
    # The contradicting claim is two task half-lives stale: 0.5 * 0.25 = 0.125, strength 1;
    # penalty 1 - 0.125 * 0.2 = 0.975: lower 0.5 * 0.975 = 0.4875
    contradicting = claim(
        source(0.5), strength=1.0, tier="task", staleness_at=ago(timedelta(days=6))
    )
    result = scored(claim(*TWO_TYPES, contradicting=[contradicting]))
    assert result.inputs["contradiction_weight"] == pytest.approx(0.125)
    assert result.score == pytest.approx(4.875)


# --------------------------------------------------------------------------- steps 4 and 5


def test_instance_trust_scales_both_bounds():
    assert scale_by_trust(0.5, 0.84, 0.5) == pytest.approx((0.25, 0.42))
    result = scored(claim(*TWO_TYPES, instance_trust=0.5))
    assert result.interval == pytest.approx((2.5, 4.2))


def test_instance_trust_defaults_to_one():
    result = scored(claim(*TWO_TYPES))
    assert result.inputs["instance_trust"] == 1.0
    assert result.interval == pytest.approx((5.0, 8.4))


def test_boosted_upper_is_capped_at_one_before_trust():
    # upper 1 - 0.1 * 0.1 = 0.99, boost 1.1 -> 1.089, capped to 1, then trust 0.5 -> 0.5
    # (not 1.089 * 0.5 = 0.5445). lower 0.9 * 2/3 = 0.6 -> 0.3
    result = scored(
        claim(
            source(0.9),
            source(0.9),
            supporting=[claim(source(1.0), strength=1.0)],
            instance_trust=0.5,
        )
    )
    assert result.interval == pytest.approx((3.0, 5.0))


@pytest.mark.parametrize(
    ("bounds", "expected"),
    [
        ((0.3, 0.7), (0.3, 0.7)),
        ((1.2, 1.5), (1.0, 1.0)),
        ((-0.1, 0.5), (0.0, 0.5)),
        ((-0.3, -0.1), (0.0, 0.0)),
        ((0.9, 0.8), (0.8, 0.8)),
    ],
)
def test_clamp_and_order(bounds, expected):
    assert clamp_and_order(*bounds) == expected


def test_lower_never_exceeds_upper_at_float_rounding():
    # lower 0.1 * 1.0 (three types) = 0.1; upper 1 - 0.9 * 1 * 1 = 0.1 exactly, but
    # 1 - 0.9 is 0.09999999999999998 in floats: the order guard makes them equal.
    result = scored(claim(source(0.1, "a"), source(0.0, "b"), source(0.0, "c")))
    lower, upper = result.interval
    assert lower <= upper
    assert lower == pytest.approx(1.0)


# --------------------------------------------------------------------------- the score


def test_score_is_the_lower_bound_and_projections_are_given():
    # lower 0.5, upper 0.84: midpoint 0.67, width 0.34
    result = scored(claim(*TWO_TYPES))
    assert result.score == pytest.approx(5.0)
    assert result.interval == pytest.approx((5.0, 8.4))
    inputs = result.inputs
    assert (inputs["lower"], inputs["upper"]) == pytest.approx((0.5, 0.84))
    assert inputs["midpoint"] == pytest.approx(0.67)
    assert inputs["width"] == pytest.approx(0.34)
    assert inputs["conservative_score"] == pytest.approx(5.0)
    assert inputs["midpoint_score"] == pytest.approx(6.7)
    assert inputs["optimistic_score"] == pytest.approx(8.4)
    assert inputs["width_points"] == pytest.approx(3.4)


def test_explanation_gives_each_step_on_the_lower_bound():
    # strongest 0.6 -> 6.0 points; diversity 5/6: 0.5 - 0.6 -> -1.0;
    # one task half-life stale: 0.25 - 0.5 -> -2.5; support: 0;
    # contradiction 0.5 * 1.0 -> penalty 0.9: 0.225 - 0.25 -> -0.25;
    # trust 0.8: 0.18 - 0.225 -> -0.45. Total 6 - 1 - 2.5 - 0.25 - 0.45 = 1.8
    result = scored(
        claim(
            *TWO_TYPES,
            tier="task",
            staleness_at=ago(timedelta(days=3)),
            contradicting=[claim(source(0.5), strength=1.0)],
            instance_trust=0.8,
        )
    )
    points = {impact.factor: impact.points for impact in result.explanation}
    assert points == pytest.approx(
        {
            "strongest_source": 6.0,
            "source_diversity": -1.0,
            "staleness": -2.5,
            "support": 0.0,
            "contradiction": -0.25,
            "instance_trust": -0.45,
        }
    )
    assert result.score == pytest.approx(1.8)
    # upper 0.84 * 0.5 * 0.9 * 0.8 = 0.3024
    assert result.interval == pytest.approx((1.8, 3.024))
    assert [impact.detail for impact in result.explanation] == [
        "strongest source 0.60 × 10",
        "2 source types of 3 for full credit: × 0.833",
        "× 0.500 after staleness",
        "weight 0.000 × 0.1: × 1.000, on the upper bound only",
        "weight 0.500 × 0.2: × 0.900",
        "× 0.800",
    ]
    assert result.summary == (
        "Interval 0.18–0.30 from 2 sources of 2 types, 1 contradiction, decayed to 50% by "
        "staleness, instance trust 0.80; scored at its lower bound, 1.80."
    )


def test_one_fresh_source_is_explained_in_the_singular_and_not_stale():
    # 0.9 alone, one type: lower 0.9 * 2/3 = 0.6, upper 0.9.
    result = scored(claim(source(0.9)))
    assert [impact.detail for impact in result.explanation][1:3] == [
        "1 source type of 3 for full credit: × 0.667",
        "not stale: × 1",
    ]
    assert result.summary == (
        "Interval 0.60–0.90 from 1 source of 1 type; scored at its lower bound, 6.00."
    )


def test_the_inputs_name_every_step_and_projection():
    result = scored(claim(*TWO_TYPES, supporting=[claim(source(0.5), strength=0.5)]))
    assert set(result.inputs) == {
        "aggregate_lower",
        "aggregate_upper",
        "diversity",
        "staleness_factor",
        "support_weight",
        "support_boost",
        "contradiction_weight",
        "contradiction_penalty",
        "instance_trust",
        "lower",
        "upper",
        "midpoint",
        "width",
        "conservative_score",
        "midpoint_score",
        "optimistic_score",
        "width_points",
        "wide",
        "sources",
        "source_types",
        "supporting",
        "contradicting",
    }
    # Two sources of two types, one supporting claim of 0.5 at strength 0.5.
    assert (result.inputs["aggregate_lower"], result.inputs["aggregate_upper"]) == (
        pytest.approx(0.5),
        pytest.approx(0.84),
    )
    assert result.inputs["support_weight"] == pytest.approx(0.25)
    assert [
        result.inputs[k] for k in ("sources", "source_types", "supporting", "contradicting")
    ] == [
        2,
        2,
        1,
        0,
    ]


def test_an_output_without_provenance_is_refused_by_name():
    with pytest.raises(
        ValueError, match=r"^the interval scorer reads provenance, and this output has none$"
    ):
        SCORER.score(scorer_input(None))


def test_every_intermediate_value_is_kept_for_the_record():
    # The step example above: upper 0.84, halved by staleness to 0.42; contradiction x 0.9:
    # 0.378; instance trust x 0.8: 0.3024. The lower: 0.25 x 0.9 = 0.225; x 0.8 = 0.18.
    terms = interval.confidence_interval(
        ProvenanceIn.model_validate(
            claim(
                *TWO_TYPES,
                tier="task",
                staleness_at=ago(timedelta(days=3)),
                contradicting=[claim(source(0.5), strength=1.0)],
                instance_trust=0.8,
            )
        ),
        NOW,
    )
    assert (terms.adjusted_lower, terms.adjusted_upper) == (
        pytest.approx(0.225),
        pytest.approx(0.378),
    )
    assert (terms.trusted_lower, terms.trusted_upper) == (
        pytest.approx(0.18),
        pytest.approx(0.3024),
    )


def test_explanation_shows_the_order_guard():
    # lower 0.1 before the guard, 0.09999999999999998 after: a clamp term of about -2e-16
    result = scored(claim(source(0.1, "a"), source(0.0, "b"), source(0.0, "c")))
    factors = [impact.factor for impact in result.explanation]
    assert factors[-1] == "clamp"
    assert sum(impact.points for impact in result.explanation) == pytest.approx(result.score)
    clamp = result.explanation[-1]
    assert clamp.detail == "lower bound kept within [0, 1] and no higher than the upper"
    # In points: 10 x (the upper, 1 - 0.9 in floats, less the lower before the guard).
    # (A ratio: approx's absolute tolerance of 1e-12 would take any term this small.)
    assert clamp.points / (10 * ((1 - 0.9) - 0.1)) == pytest.approx(1.0)


def test_inputs_are_json():
    result = scored(claim(*TWO_TYPES, supporting=[claim(source(0.5), strength=0.5)]))
    assert json.loads(json.dumps(result.inputs)) == result.inputs


def test_applies_only_with_provenance():
    assert SCORER.applies(scorer_input(claim(source(0.5))))
    assert not SCORER.applies(scorer_input(None))


def test_scorer_identity():
    assert (SCORER.name, SCORER.version) == ("interval", "1")
    assert isinstance(SCORER, interval.IntervalScorer)


# --------------------------------------------------------------------------- wide intervals


def test_wide_interval_flag():
    assert WIDE_INTERVAL == 3.0
    assert is_wide(3.0)
    assert is_wide(2.9999999999999996)  # 3 in exact arithmetic
    assert is_wide(WIDE_INTERVAL - interval.WIDE_TOLERANCE)  # the SQL filter's edge
    assert not is_wide(2.99)


def test_a_lone_source_at_point_nine_is_flagged_wide():
    # width 0.9 - 0.6 = 0.3 -> 3.0 points, at the flag
    result = scored(claim(source(0.9)))
    assert result.inputs["width_points"] == pytest.approx(3.0)
    assert result.inputs["wide"] is True
    # 0.8 alone: width 0.8 / 3 = 0.2667 -> 2.67 points, not flagged
    assert scored(claim(source(0.8))).inputs["wide"] is False


# --------------------------------------------------------------------------- seed 004's claims

# Claim A: one highly credible source, no corroboration, no contradictions.
#   upper 0.95; lower 0.95 * 2/3 = 0.633333 (the formula's 0.667 diversity, where the
#   seed's illustration has 0.5 and [0.50, 0.95]); width 0.316667; midpoint 0.791667
CLAIM_A = claim(source(0.95, "document"))

# Claim B: ten mediocre sources of three types, all agreeing; two weak contradictions.
#   prod(1 - c) = 0.2 * 0.3 * 0.3 * 0.4^3 * 0.5^4 = 0.018 * 0.064 * 0.0625 = 0.000072
#   upper 1 - 0.000072 = 0.999928; lower 0.8 * 1.0 = 0.8
#   contradictions: 2 * (0.4 * 0.5) = 0.4 -> penalty 1 - 0.4 * 0.2 = 0.92
#   lower 0.8 * 0.92 = 0.736; upper 0.999928 * 0.92 = 0.91993376
#   width 0.18393376; midpoint (0.736 + 0.91993376) / 2 = 0.82796688
CLAIM_B = claim(
    source(0.8, "extraction"),
    source(0.7, "extraction"),
    source(0.7, "agent_assertion"),
    source(0.6, "agent_assertion"),
    source(0.6, "user_input"),
    source(0.6, "extraction"),
    source(0.5, "agent_assertion"),
    source(0.5, "user_input"),
    source(0.5, "extraction"),
    source(0.5, "user_input"),
    contradicting=[
        claim(source(0.4, "agent_assertion"), strength=0.5),
        claim(source(0.4, "agent_assertion"), strength=0.5),
    ],
)


def test_claim_a_and_claim_b_by_hand():
    a, b = scored(CLAIM_A).inputs, scored(CLAIM_B).inputs
    assert (a["lower"], a["upper"]) == pytest.approx((0.633333, 0.95), abs=1e-6)
    assert (b["lower"], b["upper"]) == pytest.approx((0.736, 0.91993376))
    assert a["midpoint"] == pytest.approx(0.791667, abs=1e-6)
    assert b["midpoint"] == pytest.approx(0.82796688)


def test_claim_a_is_much_wider_than_claim_b_with_a_lower_floor():
    a, b = scored(CLAIM_A), scored(CLAIM_B)
    # A similar single-score feel: midpoints 0.79 and 0.83
    assert abs(a.inputs["midpoint"] - b.inputs["midpoint"]) < 0.05
    # A's interval is 0.3167 / 0.1839 = 1.7 times as wide as B's
    assert a.inputs["width"] > 1.5 * b.inputs["width"]
    # B's lower bound, and so its score, is higher: 7.36 against 6.33
    assert b.score > a.score
    # Only A is thin enough to be flagged for investigation: 3.17 and 1.84 points
    assert (a.inputs["wide"], b.inputs["wide"]) == (True, False)


# --------------------------------------------------------------------------- docs' example

DOCS_EXAMPLE = {
    "sources": [
        {"source_type": "extraction", "confidence": 0.7, "source": "changelog"},
        {"source_type": "extraction", "confidence": 0.5, "source": "release notes"},
        {"source_type": "user_input", "confidence": 0.6},
    ],
    "tier": "project",
    "staleness_at": "2026-04-01T00:00:00Z",
    "supporting": [
        {"sources": [{"source_type": "agent_assertion", "confidence": 0.8}], "strength": 0.5}
    ],
    "contradicting": [
        {"sources": [{"source_type": "agent_assertion", "confidence": 0.5}], "strength": 0.5}
    ],
}


def test_docs_worked_example():
    # upper 1 - 0.3 * 0.5 * 0.4 = 0.94; lower 0.7 * 5/6 = 0.583333; not yet stale
    # support 0.8 * 0.5 = 0.4 -> boost 1.04; contradiction 0.5 * 0.5 = 0.25 -> 0.95
    # lower 0.583333 * 0.95 = 0.554167; upper 0.94 * 1.04 * 0.95 = 0.92872
    # width 9.2872 - 5.541667 = 3.745533 points
    result = scored(DOCS_EXAMPLE)
    assert result.interval == pytest.approx((5.541667, 9.2872), abs=1e-6)
    assert result.score == pytest.approx(5.541667, abs=1e-6)
    assert result.inputs["width_points"] == pytest.approx(3.745533, abs=1e-6)
    assert result.inputs["wide"] is True
    assert result.summary == (
        "Interval 0.55–0.93 from 3 sources of 2 types, 1 supporting claim, 1 contradiction; "
        "scored at its lower bound, 5.54."
    )


def test_docs_worked_example_one_half_life_stale():
    # project half-life 28 days: both bounds halve, 0.277083 and 0.46436
    stale = {**DOCS_EXAMPLE, "staleness_at": ago(timedelta(days=28))}
    result = scored(stale)
    assert result.interval == pytest.approx((2.770833, 4.6436), abs=1e-6)
    assert "decayed to 50% by staleness" in result.summary
