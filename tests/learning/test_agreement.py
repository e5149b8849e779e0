"""Agreement between reviewers and each reviewer's reliability
(learning/statistics/agreement.py), against values worked out by hand in the comments."""

import math

import pytest

from learning.statistics import agreement

# --------------------------------------------------------------------------- kappa

# Rows: the first rater's label, columns: the second's. 30 units, 23 on the diagonal:
# p_o = 23/30. Row sums 12, 10, 8 and column sums 11, 13, 6: p_e = (12*11 + 10*13 + 8*6) / 900
# = 310/900. kappa = (690 - 310) / (900 - 310) = 38/59 = 0.644.
TABLE = [[10, 2, 0], [1, 8, 1], [0, 3, 5]]
TABLE_KAPPA = 38 / 59


def table_as_labels(table, names=("approve", "modify", "reject")):
    first, second = [], []
    for i, row in enumerate(table):
        for j, count in enumerate(row):
            first += [names[i]] * count
            second += [names[j]] * count
    return first, second


def test_cohen_kappa_by_hand():
    first, second = table_as_labels(TABLE)
    assert agreement.cohen_kappa(first, second) == pytest.approx(TABLE_KAPPA, rel=1e-12)
    assert agreement.kappa_from_table(TABLE) == pytest.approx(TABLE_KAPPA, rel=1e-12)


def test_raters_who_never_agree_on_two_labels_have_a_kappa_of_zero():
    # p_o = 0 and p_e = 1 x 0 + 0 x 1 = 0: kappa = 0, not undefined.
    assert agreement.cohen_kappa(["approve"] * 4, ["reject"] * 4) == 0.0


def test_kappa_is_undefined_with_one_label_or_no_units():
    assert agreement.cohen_kappa(["approve"] * 3, ["approve"] * 3) is None
    assert agreement.cohen_kappa([], []) is None
    assert agreement.kappa_from_table([[4, 0], [0, 0]]) is None


def test_kappa_needs_the_same_units():
    with pytest.raises(ValueError, match=r"^both raters must judge the same units$"):
        agreement.cohen_kappa(["approve", "reject"], ["approve"])


# --------------------------------------------------------------------------- raw agreement


def test_raw_agreement_by_hand():
    first, second = table_as_labels(TABLE)
    assert agreement.raw_agreement(first, second) == pytest.approx(23 / 30, rel=1e-12)
    assert agreement.raw_agreement(["approve"], ["approve"]) == 1.0
    assert agreement.raw_agreement(["approve", "modify", "reject"], ["approve"] * 3) == 1 / 3


def test_raw_agreement_is_none_without_units_and_needs_the_same_units():
    assert agreement.raw_agreement([], []) is None
    with pytest.raises(ValueError):
        agreement.raw_agreement(["approve"], ["approve", "reject"])


# --------------------------------------------------------------------------- alpha

# Nominal alpha by the coincidence matrix (Krippendorff 2011). Units 1-3 have two values each,
# unit 4 three; unit 5, judged once, is left out. Coincidences (each ordered pair of values in
# a unit counts 1 / (values in the unit - 1)): o_xx = 2 + 1 = 3, o_yy = 2, o_xy = o_yx = 1 + 1.
# n = 9 values, n_x = 5, n_y = 4. D_o = (o_xy + o_yx) / n = 4/9; D_e = 2 n_x n_y / (n (n - 1))
# = 40/72 = 5/9. alpha = 1 - D_o / D_e = 1 - 4/5 = 0.2.
UNITS = {
    1: {"ann": "x", "bob": "x"},
    2: {"ann": "y", "bob": "y"},
    3: {"ann": "x", "bob": "y"},
    4: {"ann": "x", "bob": "x", "cat": "y"},
    5: {"ann": "y"},
}


def test_krippendorff_alpha_by_hand():
    assert agreement.krippendorff_alpha(UNITS) == pytest.approx(0.2, abs=1e-12)
    # Without unit 4, as by hand: n = 6, n_x = n_y = 3, D_o = 2/6, D_e = 18/30, alpha = 4/9.
    three = {u: UNITS[u] for u in (1, 2, 3, 5)}
    assert agreement.krippendorff_alpha(three) == pytest.approx(4 / 9, abs=1e-12)


def test_krippendorff_alpha_treats_labels_as_categories():
    # Three labels, two values per unit: o_xx = o_yy = o_zz = 2, o_xy = o_yx = o_yz = o_zy = 1.
    # n = 10, n_x = 3, n_y = 4, n_z = 3. D_o = 4/10; D_e = (2*3*4 + 2*4*3 + 2*3*3) / 90 = 66/90.
    # Nominal alpha = 1 - (4/10) / (66/90) = 5/11. (Read as numbers 0, 1, 2 on an interval
    # scale, x-z would count four times x-y, and alpha would be 0.7.)
    units = {
        1: {"ann": "x", "bob": "x"},
        2: {"ann": "y", "bob": "y"},
        3: {"ann": "z", "bob": "z"},
        4: {"ann": "x", "bob": "y"},
        5: {"ann": "y", "bob": "z"},
    }
    assert agreement.krippendorff_alpha(units) == pytest.approx(5 / 11, abs=1e-12)


def test_raters_and_labels_need_only_be_hashable():
    # A user id next to a name, and labels of two kinds, that Python cannot order together.
    renamed = {"ann": 7, "bob": "gate", "cat": 9}
    relabelled = {"x": True, "y": "reject"}
    units = {
        unit: {renamed[rater]: relabelled[label] for rater, label in judged.items()}
        for unit, judged in UNITS.items()
    }
    assert agreement.krippendorff_alpha(units) == pytest.approx(0.2, abs=1e-12)


def test_alpha_is_undefined_without_a_shared_unit_or_a_second_label():
    assert agreement.krippendorff_alpha({}) is None
    assert agreement.krippendorff_alpha({1: {"ann": "x"}, 2: {"bob": "y"}}) is None
    assert agreement.krippendorff_alpha({1: {"ann": "x", "bob": "x"}, 2: {"bob": "y"}}) is None


# --------------------------------------------------------------------------- interval alpha

# Krippendorff's own worked example ("Computing Krippendorff's Alpha-Reliability", 2011, the
# case of four observers, missing values and values 1-5): he reports alpha 0.743 nominal and
# 0.849 interval. Unit 12 is judged once and carries no information.
KRIPPENDORFF_2011 = {
    "A": [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
    "B": [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
    "C": [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
    "D": [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
}


def _units_of(observers: dict) -> dict:
    units: dict = {}
    for observer, values in observers.items():
        for unit, value in enumerate(values):
            if value is not None:
                units.setdefault(unit, {})[observer] = value
    return units


def test_interval_alpha_reproduces_krippendorffs_worked_example():
    units = _units_of(KRIPPENDORFF_2011)
    assert agreement.krippendorff_alpha_interval(units) == pytest.approx(0.849, abs=5e-4)
    # The same data read as categories: his nominal figure, by the nominal function.
    assert agreement.krippendorff_alpha(units) == pytest.approx(0.743, abs=5e-4)


def test_interval_alpha_by_hand_counts_a_near_miss_for_less():
    # The nominal test's units read as 0, 1, 2 (see above): n = 10 values, three 0s, four 1s,
    # three 2s. D_o = (1/n) sum over units of 2 (a - b)^2 = (2 + 2) / 10 = 0.4. D_e = the sum
    # of (v_i - v_j)^2 over ordered pairs of values / (n (n - 1)) = (2*3*4*1 + 2*4*3*1 +
    # 2*3*3*4) / 90 = 120/90. alpha = 1 - 0.4 / (4/3) = 0.7.
    units = {1: {0: 0, 1: 0}, 2: {0: 1, 1: 1}, 3: {0: 2, 1: 2}, 4: {0: 0, 1: 1}, 5: {0: 1, 1: 2}}
    assert agreement.krippendorff_alpha_interval(units) == pytest.approx(0.7, abs=1e-12)
    # A far miss instead of a near one (0 against 2) lowers it: D_o = (2 + 8) / 10 = 1; the
    # values are now three 0s, three 1s, four 2s: D_e = (2*3*3*1 + 2*3*4*1 + 2*3*4*4) / 90
    # = 138/90. alpha = 1 - 90/138 = 8/23.
    units[4] = {0: 0, 1: 2}
    assert agreement.krippendorff_alpha_interval(units) == pytest.approx(8 / 23, abs=1e-12)


def test_interval_alpha_is_undefined_without_a_shared_unit_or_a_second_value():
    assert agreement.krippendorff_alpha_interval({}) is None
    assert agreement.krippendorff_alpha_interval({1: {0: 3}, 2: {1: 4}}) is None
    assert agreement.krippendorff_alpha_interval({1: {0: 3, 1: 3.0}, 2: {0: 3, 1: 3}}) is None


def test_paired_agreement_takes_kappa_for_labels_and_interval_alpha_for_numbers():
    labels = [(a, b) for a, b in zip(*table_as_labels(TABLE), strict=True)]
    kappa = agreement.paired_agreement(labels, interval=False)
    assert kappa == agreement.PairedAgreement(
        agreement.Statistic.COHEN_KAPPA, pytest.approx(TABLE_KAPPA, rel=1e-12), len(labels)
    )
    numbers = [(0, 0), (1, 1), (2, 2), (0, 1), (1, 2)] * 2
    alpha = agreement.paired_agreement(numbers, interval=True)
    assert alpha.statistic is agreement.Statistic.KRIPPENDORFF_ALPHA_INTERVAL
    # Doubling every unit keeps D_o at 0.4 and makes D_e = 480 / (20 * 19): 1 - 0.4 * 380/480.
    assert alpha.value == pytest.approx(1 - 0.4 * 380 / 480, abs=1e-12)
    assert alpha.n == 10


def test_paired_agreement_has_no_value_below_the_minimum_of_pairs():
    numbers = [(0, 0), (1, 1), (2, 2), (0, 1), (1, 2)]
    below = agreement.paired_agreement(numbers, interval=True, min_pairs=6)
    assert (below.value, below.n) == (None, 5)
    at = agreement.paired_agreement(numbers, interval=True, min_pairs=5)
    assert at.value == pytest.approx(0.7, abs=1e-12)
    booleans = [(True, True), (False, False), (True, False)] * 4
    assert agreement.paired_agreement(booleans, interval=False, min_pairs=13).value is None
    # Every pair alike on one label: kappa is undefined, however many pairs.
    same = agreement.paired_agreement([("neutral", "neutral")] * 40, interval=False)
    assert (same.value, same.n) == (None, 40)


# --------------------------------------------------------------------------- reliability


def hand_case():
    """110 units that ann and bob both judge, always alike: 60 approve, 40 reject and 10
    modify. cat judges 30 of the approve units (27 approved) and 30 of the reject ones (15
    rejected), none of the modify ones. dan judges only units that nobody else judged, and
    ann one more such unit.

    Two reviewers who always agree settle every unit's true label: the posteriors are 0 or 1
    (to 1e-10, crowd-kit's floor), so Dawid-Skene's estimates are the counts. The label prior
    is 60/110, 40/110, 10/110; cat's accuracy on approve units is 27/30 = 0.9, on reject units
    15/30 = 0.5, and 0 on modify units (never said): 60/110 x 0.9 + 40/110 x 0.5 = 74/110,
    where cat's own share of agreement is 42/60 = 0.7."""
    judgments = []
    for unit in range(110):
        truth = "approve" if unit < 60 else "reject" if unit < 100 else "modify"
        judgments += [(unit, "ann", truth), (unit, "bob", truth)]
    judgments += [(unit, "cat", "approve" if unit < 27 else "reject") for unit in range(30)]
    judgments += [(unit, "cat", "reject" if unit < 75 else "approve") for unit in range(60, 90)]
    judgments += [(200, "ann", "approve")] + [(300 + i, "dan", "reject") for i in range(5)]
    return judgments


def test_reliability_is_the_expected_accuracy_under_the_label_prior():
    found = agreement.reviewer_reliability(hand_case(), prior=0.5, prior_strength=10)

    assert set(found) == {"ann", "bob", "cat"}
    cat = found["cat"]
    assert (cat.reviewer, cat.n) == ("cat", 60)
    assert cat.raw == pytest.approx(74 / 110, abs=1e-9)
    # Shrunk by hand: (n raw + m prior) / (n + m) = (60 x 74/110 + 10 x 0.5) / 70.
    assert cat.shrunk == pytest.approx((60 * 74 / 110 + 5) / 70, abs=1e-9)
    ann = found["ann"]
    assert (ann.reviewer, ann.n) == ("ann", 110)
    assert ann.raw == pytest.approx(1.0, abs=1e-9)
    assert ann.shrunk == pytest.approx((110 + 5) / 120, abs=1e-9)


def test_reliability_uses_the_default_prior():
    # DEFAULT_PRIOR_RELIABILITY 0.7 with the strength of 20 judgments, written out.
    cat = agreement.reviewer_reliability(hand_case())["cat"]
    assert cat.shrunk == pytest.approx((60 * 74 / 110 + 20 * 0.7) / 80, abs=1e-9)


def test_no_shared_unit_means_no_reliability():
    assert agreement.reviewer_reliability([]) == {}
    assert agreement.reviewer_reliability([(1, "ann", "approve"), (2, "bob", "reject")]) == {}


def test_dawid_skene_runs_with_the_documented_stopping_rule(monkeypatch):
    """At most 50 EM steps, stopping once a step gains less than 1e-4 (the module's
    DS_MAX_ITERATIONS and DS_TOLERANCE; crowd-kit's own defaults are 100 and 1e-5)."""
    made = []
    real = agreement.DawidSkene

    def recording(**options):
        made.append(options)
        return real(**options)

    monkeypatch.setattr(agreement, "DawidSkene", recording)
    agreement.reviewer_reliability(hand_case())
    assert made == [{"n_iter": 50, "tol": 1e-4}]


# --------------------------------------------------------------------------- storage


@pytest.mark.parametrize("value", [None, math.nan, math.inf, -math.inf])
def test_undefined_statistics_are_stored_as_null(value):
    assert agreement.finite_or_none(value) is None


@pytest.mark.parametrize("value", [0.0, -0.25, 0.644])
def test_finite_statistics_are_kept(value):
    assert agreement.finite_or_none(value) == value
