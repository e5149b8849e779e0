"""The overview's audit-weighted estimates against independent computations."""

import math

import pytest
from statsmodels.stats.proportion import proportion_confint

from dashboard.estimates import weighted_rate, wilson_interval


@pytest.mark.parametrize(("failures", "n"), [(3, 40), (0, 25), (25, 25), (17, 230)])
def test_wilson_matches_statsmodels_for_whole_samples(failures, n):
    low, high = wilson_interval(failures / n, n)
    expected = proportion_confint(failures, n, alpha=0.05, method="wilson")
    assert low == pytest.approx(expected[0], abs=1e-12)
    assert high == pytest.approx(expected[1], abs=1e-12)


def test_equal_weights_give_the_plain_rate_and_interval():
    # 40 audits at p = 0.05 (weight 20 each): 6 not approved.
    cells = [
        {"audits": 34, "weight": 34 * 20.0, "not_approved": False},
        {"audits": 6, "weight": 6 * 20.0, "not_approved": True},
    ]
    estimate = weighted_rate(cells)
    assert estimate.rate == pytest.approx(6 / 40)
    assert estimate.effective_n == pytest.approx(40)
    assert (estimate.low, estimate.high) == pytest.approx(
        proportion_confint(6, 40, alpha=0.05, method="wilson")
    )


def test_unequal_weights_shrink_the_effective_sample():
    # 10 audits at p = 0.5 (weight 2), none failed; 10 at p = 0.1 (weight 10), 5 failed.
    cells = [
        {"audits": 10, "weight": 20.0, "not_approved": False},
        {"audits": 5, "weight": 50.0, "not_approved": False},
        {"audits": 5, "weight": 50.0, "not_approved": True},
    ]
    estimate = weighted_rate(cells)
    # By hand: rate = 50 / 120; n_eff = 120² / (10·2² + 10·10²) = 14400 / 1040.
    assert estimate.rate == pytest.approx(50 / 120)
    assert estimate.effective_n == pytest.approx(14400 / 1040)
    assert estimate.audits == 20
    assert estimate.low < 50 / 120 < estimate.high
    assert math.isclose(
        estimate.high - estimate.low,
        wilson_interval(50 / 120, 14400 / 1040)[1] - wilson_interval(50 / 120, 14400 / 1040)[0],
    )


def test_no_audit_is_no_estimate():
    estimate = weighted_rate([{"audits": 0, "weight": 0.0, "not_approved": True}])
    assert (estimate.rate, estimate.low, estimate.high, estimate.audits) == (None, None, None, 0)
