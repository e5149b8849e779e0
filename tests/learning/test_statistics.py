"""The learning statistics against known answers: published examples, hand computations,
and the simulated world's configured truth."""

import math
import random
from collections import Counter
from datetime import date

import pytest

from learning.statistics import agreement, drift, importance, thresholds, tiers
from simulator import world

# --------------------------------------------------------------------------- agreement


def test_kappa_on_the_textbook_table():
    # p_o = 35/50 = 0.7; p_e = (25*30 + 25*20) / 50^2 = 0.5; kappa = 0.2 / 0.5 = 0.4.
    assert agreement.kappa_from_table([[20, 5], [10, 15]]) == pytest.approx(0.40)


def test_kappa_is_none_when_only_one_label_is_used():
    assert agreement.cohen_kappa(["approve"] * 5, ["approve"] * 5) is None


def test_krippendorffs_published_example():
    # Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", the 4 observers x
    # 12 units example: nominal alpha = 0.743.
    rows = {
        "A": [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
        "B": [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
        "C": [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
        "D": [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
    }
    units = {}
    for rater, values in rows.items():
        for unit, value in enumerate(values):
            if value is not None:
                units.setdefault(unit, {})[rater] = value
    assert agreement.krippendorff_alpha(units) == pytest.approx(0.743, abs=5e-4)


def _true_accuracy(reviewer: world.Reviewer, prior: dict) -> float:
    right = {
        world.Truth.GOOD: world.Action.APPROVE,
        world.Truth.NEEDS_EDIT: world.Action.MODIFY,
        world.Truth.BAD: world.Action.REJECT,
    }
    return sum(prior[t] * reviewer.matrix[t][right[t]] for t in world.TRUTHS)


def test_dawid_skene_ranks_the_simulated_reviewers_in_their_true_order():
    rng = random.Random(7)
    prior = {world.Truth.GOOD: 0.6, world.Truth.NEEDS_EDIT: 0.25, world.Truth.BAD: 0.15}
    judgments = []
    for unit in range(1500):
        truth = rng.choices(world.TRUTHS, weights=[prior[t] for t in world.TRUTHS])[0]
        for reviewer in rng.sample(world.DEFAULT_REVIEWERS, 3):
            judgments.append((unit, reviewer.name, reviewer.decide(truth, rng).value))

    found = agreement.reviewer_reliability(judgments)

    expected_order = sorted(
        world.DEFAULT_REVIEWERS, key=lambda r: _true_accuracy(r, prior), reverse=True
    )
    assert [r.name for r in expected_order] == ["accurate", "lenient", "harsh", "noisy"]
    found_order = sorted(found, key=lambda name: found[name].raw, reverse=True)
    assert found_order == [r.name for r in expected_order]
    for r in world.DEFAULT_REVIEWERS:
        assert found[r.name].raw == pytest.approx(_true_accuracy(r, prior), abs=0.05)


def test_reliability_shrinks_toward_the_prior_with_few_judgments():
    judgments = [(u, "few", "approve") for u in range(3)] + [
        (u, "many", "approve") for u in range(200)
    ]
    judgments += [(u, "other", "approve") for u in range(200)]
    found = agreement.reviewer_reliability(judgments, prior=0.5, prior_strength=20)
    # Everyone agrees, so the raw reliability is 1 for all; shrinkage is by hand:
    # few: (3 * 1 + 20 * 0.5) / 23; many: (200 + 10) / 220.
    assert found["few"].shrunk == pytest.approx(13 / 23, abs=1e-3)
    assert found["many"].shrunk == pytest.approx(210 / 220, abs=1e-3)


# --------------------------------------------------------------------------- importance


def test_shapley_on_the_glove_game():
    # One left glove, two right gloves; a pair is worth 1.
    def value(coalition):
        return 1.0 if "L" in coalition and coalition & {"R1", "R2"} else 0.0

    values = importance.shapley_values(["L", "R1", "R2"], value)
    assert values == pytest.approx({"L": 2 / 3, "R1": 1 / 6, "R2": 1 / 6})


def test_shapley_values_add_up_to_the_grand_coalition():
    def value(coalition):
        return len(coalition) ** 2

    values = importance.shapley_values(list("abcd"), value)
    assert sum(values.values()) == pytest.approx(16.0)
    assert values == pytest.approx(dict.fromkeys("abcd", 4.0))


def simulated_pattern_counts(n_outputs=20000, seed=3) -> importance.PatternCounts:
    """Pass/fail patterns of simulated outputs, approved when the truth is good."""
    config = world.SimulationConfig(
        seed=seed, days=1, outputs_per_day=n_outputs, start=date(2026, 3, 2)
    )
    groups: dict[tuple, Counter] = {}
    names = None
    for output in world.simulate(config):
        names = tuple(v.name for v in output.validators)
        pattern = tuple(v.passed for v in output.validators)
        groups.setdefault(pattern, Counter())[output.truth == world.Truth.GOOD] += 1
    patterns = tuple(groups)
    return importance.PatternCounts(
        names=names,
        patterns=patterns,
        approved=tuple(groups[p][True] for p in patterns),
        not_approved=tuple(groups[p][False] for p in patterns),
    )


def test_facts_ranks_first_and_the_noise_validator_last_near_zero():
    counts = simulated_pattern_counts()
    found = importance.validator_importance(counts)

    ranking = sorted(found, key=found.get, reverse=True)
    assert ranking[0] == "facts"
    assert ranking[-1] == "length"
    assert abs(found["length"]) < 0.02 * found["facts"]
    # Shapley is efficient: the parts add up to the full model's loss reduction.
    full = importance.loss_reduction(counts)(frozenset(counts.names))
    assert sum(found.values()) == pytest.approx(full, rel=1e-6)


def test_validator_accuracy_by_hand():
    counts = importance.PatternCounts(
        names=("a", "b"),
        patterns=((True, True), (True, False), (False, False)),
        approved=(6, 2, 0),
        not_approved=(1, 1, 10),
    )
    # a agrees on: passed & approved (6 + 2) and failed & not approved (10) -> 18 / 20.
    # b agrees on: passed & approved (6) and failed & not approved (1 + 10) -> 17 / 20.
    assert importance.validator_accuracy(counts) == {"a": 0.9, "b": 0.85}


def test_next_weights_move_at_most_a_step_and_never_below_the_floor():
    current = {"facts": 1.0, "length": 1.0, "tone": 1.0}
    weights = importance.next_weights(current, {"facts": 0.3, "length": 0.0, "tone": 0.0})
    # Targets keep the sum 3: facts 3.0, others 0.0; each moves at most 0.1.
    assert weights == {"facts": 1.1, "length": 0.9, "tone": 0.9}
    low = importance.next_weights({"facts": 1.0, "length": 0.1}, {"facts": 1.0, "length": 0.0})
    assert low["length"] == 0.05


# --------------------------------------------------------------------------- thresholds


def test_constrain_never_pushes_a_threshold_off_the_scale():
    review = thresholds.Proposal("review", 9.9, 10.0, "up", {})
    approve = thresholds.Proposal("approve", 10.0, 10.0, "held", {})
    final = thresholds.constrain([review, approve], pins={"review": False, "approve": False})
    assert final["approve"].new == 10.0
    assert final["review"].new == pytest.approx(9.9)


def test_constrain_respects_pins_and_the_order_of_thresholds():
    review = thresholds.Proposal("review", 6.9, 7.0, "up", {})
    approve = thresholds.Proposal("approve", 7.0, 6.9, "down", {})
    free = thresholds.constrain([review, approve], pins={"review": False, "approve": False})
    assert free["approve"].new == pytest.approx(7.1)
    assert free["review"].new < free["approve"].new
    pinned = thresholds.constrain([review, approve], pins={"review": False, "approve": True})
    assert pinned["approve"].new == 7.0
    assert pinned["review"].new == pytest.approx(6.9)


def test_adr0003_rule_as_written():
    approved_above = [thresholds.Judged(5.0, True)] * 95
    other = [thresholds.Judged(3.0, False)] * 5
    (review, approve) = thresholds.adr0003(approved_above + other, review=4.0, approve=7.0)
    assert review.new == pytest.approx(4.1)
    assert approve.new == 7.0
    (review, _) = thresholds.adr0003(approved_above[:85] + other * 3, review=4.0, approve=7.0)
    assert review.new == 4.0


# --------------------------------------------------------------------------- drift, tiers


def test_psi_by_hand_and_its_extremes():
    same = [1.5, 2.5, 3.5, 4.5] * 25
    assert drift.psi(same, same) == pytest.approx(0.0)
    # Half the mass moves from bin 1 to bin 2: (0.25 - 0.5) ln(0.25/0.5) + (0.5-0.25) ln 2.
    expected = [1.5] * 50 + [2.5] * 50
    actual = [1.5] * 25 + [2.5] * 75
    by_hand = (0.25 - 0.5) * math.log(0.25 / 0.5) + (0.75 - 0.5) * math.log(0.75 / 0.5)
    assert drift.psi(expected, actual) == pytest.approx(by_hand)
    assert drift.psi([], actual) is None


def test_tier_confidence_adjusted_score_and_ranking():
    few = tiers.ModelRecord("few", "fast", reviews=5, approved_unchanged=5, mean_score=8.0)
    many = tiers.ModelRecord("many", "medium", reviews=40, approved_unchanged=30, mean_score=7)
    assert few.confidence == 0.25 and few.adjusted_score == 0.25
    assert many.confidence == 1.0 and many.adjusted_score == 0.75
    assert [r.model for r in tiers.ranked([few, many])] == ["many", "few"]
    assert tiers.recommended_tier(4.4)[0] == "medium"
    assert tiers.recommended_tier(4.5)[0] == "fast"
    assert tiers.recommended_tier(None)[0] == "fast"
    # After a move to medium, fast-tier traffic stops: the advice must not flip back.
    assert tiers.recommended_tier(None, "medium")[0] == "medium"
