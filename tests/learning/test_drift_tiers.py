"""The score drift index and the model tiers (learning/statistics/drift.py, tiers.py), against
values worked out by hand in the comments."""

import math
from decimal import Decimal

import numpy as np
import pytest

from learning.statistics import drift, tiers

# --------------------------------------------------------------------------- drift

# An empty bin counts as this share, so that one output in an otherwise empty bin gives a
# large but finite index: the module's EPSILON, written out.
EMPTY = 1e-4
# One sample entirely in one bin, the other entirely in another: each side's empty bin is
# floored at 1e-4 (and not renormalised), so the index is (1e-4 - 1) ln(1e-4 / 1) +
# (1 - 1e-4) ln(1 / 1e-4) = 2 (1 - 1e-4) ln(1e4) = 18.42.
DISJOINT = 2 * (1 - EMPTY) * math.log(1 / EMPTY)


def test_psi_from_counts_by_hand():
    # Shares 0.5 0.3 0.2 against 0.3 0.3 0.4: (0.3 - 0.5) ln(0.3 / 0.5) + 0 + (0.4 - 0.2) ln 2.
    by_hand = -0.2 * math.log(0.6) + 0.2 * math.log(2)
    assert drift.psi_from_counts([50, 30, 20], [30, 30, 40]) == pytest.approx(by_hand, rel=1e-12)
    # Only the shares count, not the sizes.
    assert drift.psi_from_counts([5, 3, 2], [300, 300, 400]) == pytest.approx(by_hand, rel=1e-12)


def test_an_empty_bin_counts_as_a_small_share_not_as_zero():
    assert drift.psi_from_counts([1, 0], [0, 1]) == pytest.approx(DISJOINT, rel=1e-12)
    assert drift.psi_from_counts([7, 0, 0], [0, 0, 3]) == pytest.approx(DISJOINT, rel=1e-12)


@pytest.mark.parametrize(
    ("expected", "actual"), [([0, 0], [3, 1]), ([3, 1], [0, 0]), ([0, 0], [0, 0]), ([], [])]
)
def test_psi_from_counts_is_none_when_a_side_is_empty(expected, actual):
    assert drift.psi_from_counts(expected, actual) is None


def test_counts_may_be_decimals():
    # PostgreSQL's SUM of integers is a numeric, which psycopg returns as Decimal.
    expected = [Decimal(50), Decimal(30), Decimal(20)]
    actual = [Decimal(30), Decimal(30), Decimal(40)]
    by_hand = -0.2 * math.log(0.6) + 0.2 * math.log(2)
    assert drift.psi_from_counts(expected, [30, 30, 40]) == pytest.approx(by_hand, rel=1e-12)
    assert drift.psi_from_counts([50, 30, 20], actual) == pytest.approx(by_hand, rel=1e-12)


def test_psi_bins_scores_one_point_wide():
    assert drift.psi([0.5], [1.5]) == pytest.approx(DISJOINT, rel=1e-12)
    # A bin takes its lower edge and leaves its upper one to the next bin.
    assert drift.psi([1.0], [1.99]) == 0.0
    assert drift.psi([0.99], [1.0]) == pytest.approx(DISJOINT, rel=1e-12)
    # Half of the sample moves from the 2-3 bin to the 7-8 bin: the 2-3 bin gives
    # (0.5 - 1) ln(0.5 / 1), the 7-8 bin (0.5 - 1e-4) ln(0.5 / 1e-4), the others nothing.
    by_hand = -0.5 * math.log(0.5) + (0.5 - EMPTY) * math.log(0.5 / EMPTY)
    assert drift.psi([2.5] * 4, [2.1, 2.9, 7.2, 7.9]) == pytest.approx(by_hand, rel=1e-12)


def test_the_top_score_and_scores_off_the_scale_go_in_the_end_bins():
    # 10.0 is in the 9-10 bin; anything above 10 or below 0 joins the nearest end bin.
    assert drift.psi([9.5], [10.0]) == 0.0
    assert drift.psi([9.5], [12.0]) == 0.0
    assert drift.psi([0.5], [-1.0]) == 0.0
    assert drift.psi([9.5, 0.5], [12.0, -1.0]) == 0.0
    assert drift.psi([8.5], [12.0]) == pytest.approx(DISJOINT, rel=1e-12)
    assert drift.psi([1.5], [-1.0]) == pytest.approx(DISJOINT, rel=1e-12)
    # The same on the expected side.
    assert drift.psi([12.0, -1.0], [9.5, 0.5]) == 0.0
    assert drift.psi([12.0], [8.5]) == pytest.approx(DISJOINT, rel=1e-12)
    assert drift.psi([-1.0], [1.5]) == pytest.approx(DISJOINT, rel=1e-12)


def test_psi_takes_other_bins():
    bins = [0.0, 5.0, 10.0]
    assert drift.psi([1.0], [4.0], bins=bins) == 0.0
    assert drift.psi([4.0], [6.0], bins=bins) == pytest.approx(DISJOINT, rel=1e-12)


def test_psi_is_none_when_a_sample_is_empty():
    assert drift.psi([], [5.0]) is None
    assert drift.psi([5.0], []) is None


# --------------------------------------------------------------------------- tiers


def record(model: str, reviews: int, approved: int, tier: str = "fast") -> tiers.ModelRecord:
    return tiers.ModelRecord(model, tier, reviews, approved, mean_score=None)


def test_confidence_grows_to_one_at_twenty_reviews():
    assert record("m", 0, 0).accuracy is None
    assert record("m", 0, 0).adjusted_score == 0.0
    # 10 reviews, 8 approved: accuracy 0.8, confidence 10 / 20, adjusted 0.4.
    assert (record("m", 10, 8).confidence, record("m", 10, 8).adjusted_score) == (0.5, 0.4)
    assert record("m", 20, 15).confidence == 1.0
    assert record("m", 200, 150).adjusted_score == 0.75


def test_ranked_by_adjusted_score_then_reviews_then_name():
    best = record("z-best", 20, 20)  # 1.0
    many = record("many", 200, 150)  # 0.75 with 200 reviews
    few = record("few", 40, 30)  # 0.75 with 40 reviews
    b_same = record("b", 40, 30)
    a_same = record("a", 40, 30)
    unsure = record("unsure", 3, 3)  # 1.0 x 3/20 = 0.15
    order = tiers.ranked([unsure, few, b_same, many, best, a_same])
    assert [r.model for r in order] == ["z-best", "many", "a", "b", "few", "unsure"]


def test_no_fast_traffic_keeps_the_current_advice():
    reason = "No fast-tier outputs in the last day: nothing to change."
    assert tiers.recommended_tier(None) == ("fast", reason)
    assert tiers.recommended_tier(None, "") == ("fast", reason)
    assert tiers.recommended_tier(None, "medium") == ("medium", reason)
    assert tiers.recommended_tier(None, "fast") == ("fast", reason)


def test_a_fast_tier_mean_below_the_floor_moves_to_medium():
    assert tiers.recommended_tier(4.49, "fast") == (
        "medium",
        "Fast-tier outputs averaged 4.49 over the last day, below 4.5: move the default to medium.",
    )


def test_a_fast_tier_mean_at_the_floor_stays_fast():
    assert tiers.recommended_tier(4.5, "medium") == (
        "fast",
        "Fast-tier outputs averaged 4.50 over the last day (floor 4.5): fast stays.",
    )
    assert tiers.recommended_tier(9.0)[0] == "fast"


def test_corrected_psi_by_hand():
    # Half a count added to each bin: shares 50.5, 30.5, 20.5 and 30.5, 30.5, 40.5 over
    # 101.5; less (3 - 1) * (1/100 + 1/100) = 0.04.
    e = [50.5 / 101.5, 30.5 / 101.5, 20.5 / 101.5]
    a = [30.5 / 101.5, 30.5 / 101.5, 40.5 / 101.5]
    by_hand = sum((x - y) * math.log(x / y) for x, y in zip(a, e, strict=True)) - 0.04
    assert drift.corrected_psi([50, 30, 20], [30, 30, 40]) == pytest.approx(by_hand, rel=1e-12)
    # A bin neither side has outputs in counts for nothing: the same as without it.
    assert drift.corrected_psi([50, 0, 30, 20], [30, 0, 30, 40]) == pytest.approx(by_hand)
    assert drift.corrected_psi([1, 1], [1, 1]) == 0.0  # less than chance: 0, not below
    assert drift.corrected_psi([], [1]) is None


def test_the_correction_is_what_two_samples_of_one_distribution_show():
    # 4,000 pairs of days drawn from one distribution, 50 outputs against 350, ten bins:
    # the PSI averages about (k - 1) * (1/50 + 1/350) = 0.206 for k = 10 (first order), so
    # the corrected PSI sits near 0 where nothing moved, where the PSI as written sits near
    # the 0.25 alert limit.
    rng = np.random.default_rng(7)
    shares = rng.dirichlet(np.ones(10) * 20)  # no bin so small that both sides miss it
    smoothed, chance, as_written = [], [], []
    for _ in range(4000):
        day, week = rng.multinomial(50, shares), rng.multinomial(350, shares)
        smoothed.append(drift.smoothed_psi(week, day))
        chance.append(drift.sampling_psi(week, day))
        as_written.append(drift.psi_from_counts(week, day))
    # The half counts pull the shares together a little, so the correction takes out up
    # to a sixth more than chance shows: it errs toward silence by about 0.02 here.
    assert 0.85 * np.mean(chance) < np.mean(smoothed) <= np.mean(chance)
    assert np.mean(chance) == pytest.approx(9 * (1 / 50 + 1 / 350), rel=0.05)
    assert np.mean(as_written) > 0.15
