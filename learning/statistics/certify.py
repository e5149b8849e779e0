"""Certifying the approve threshold: an upper confidence bound on a weighted mean of bounded
losses, and a Learn-then-Test search over two error budgets.

Pure functions (numpy and scipy only). Each judged output i has a score, an importance
weight w_i = 1 / pi_i (pi_i its inclusion probability: 1 for a held output, the audit rate
for a delivered one) and two losses in [0, 1] from the label model: P(bad) and P(needs an
edit or bad). The losses are posterior probabilities, not 0/1 verdicts.

The bound (``weighted_loss_bound``)
-----------------------------------
Target: the traffic's mean loss L(t) among outputs scoring at least t.

Assumptions.

* A1, sampling. The outputs in the window are independent draws from the traffic the
  threshold will gate, and each was judged independently of the others with a recorded
  probability pi_i > 0 that may depend on the output (its score, the gate's decision, the
  audit rate then in force) but not on its loss beyond that. Then the judged outputs
  scoring at least t are, given how many there are, i.i.d. draws (w, l) from the judged
  distribution q, and L(t) = E_q[w l] / E_q[w] (importance weighting, self-normalised).
* A2, bounded weights. 1 <= w_i <= c, with c = ``max_weight``: the design's largest weight
  (1 / the smallest audit rate). Left out, c is the largest weight among the judged outputs
  given, which is right whenever at least one output of the most sparsely audited stratum
  was judged; in the search, each candidate then has its own c, the largest weight among
  the judged outputs scoring at least it (the outputs above a high threshold are all
  audited at one rate, and a sparser stratum lower down would otherwise widen their bound).
* A3, the loss. What is bounded is the traffic mean of the losses as the label model gives
  them; it is the traffic's error rate in so far as the label model is calibrated. Its
  estimation uncertainty is covered only by the bootstrap widening, and only as well as the
  bootstrap describes it (below).

Construction. X = w l / c and Y = (c - w) / (c - 1) are in [0, 1], so the Hoeffding-Bentkus
bound (Bates, Angelopoulos, Lei, Malik & Jordan 2021, "Distribution-free, risk-controlling
prediction sets"; used by Learn-then-Test, Angelopoulos, Bates, Candes, Jordan & Lei 2021)
gives a (1 - delta_num) upper bound U_X on E_q[X] and a
(1 - delta_den) upper bound U_Y on E_q[Y], that is a lower bound c - (c - 1) U_Y on E_q[w].
Then

    bound = min(1, c U_X / max(1, c - (c - 1) U_Y)),   P(L(t) > bound) <= delta_num + delta_den

by the union bound. With c = 1 every weight is 1, E_q[w] = 1 is known, and delta_num takes
the whole share. The Hoeffding-Bentkus bound for a mean m of n terms is the smallest
R >= m with min(exp(-n KL(m || R)), e P(Binomial(n, R) <= ceil(n m))) <= delta; with no
loss at all it is 1 - delta^(1/n), the exact binomial bound. It is at least the estimate
sum(w l) / sum(w) (U_X is at least the mean of X, and the lower bound on E_q[w] at most the
mean weight), and 1 when there is nothing to go on (no outputs), so it is never NaN.

Widening by the label model's uncertainty
-----------------------------------------
Given B bootstrap replicates of the loss vector (the label model refitted on resampled
reviews, the same items), delta is split in two halves:

* delta / 2 for sampling: the bound above is computed at delta / 2 on the point losses and
  on each replicate;
* delta / 2 for the label model: the widened bound is the k-th smallest replicate bound,
  k = ceil((1 - delta / 2) (B + 1)), and never less than the point bound. With the outputs
  and weights fixed the bound rises with the weighted loss sum, so that is the bound of the
  k-th smallest replicate sum: one bound to work out, not B.

If the loss vector that the label model's true parameters would give is exchangeable with
the replicates, the chance that its bound exceeds the k-th smallest replicate bound is at
most 1 - k / (B + 1) <= delta / 2, and the union bound gives delta in all. That
exchangeability is the bootstrap's approximation, not a finite-sample fact. k <= B needs
B >= 2 / delta - 1 replicates (39 at delta = 0.05); fewer are refused. Without replicates the
sampling bound gets the whole of delta.

Within the sampling share, the bound on E_q[X] gets 90 % and the bound on E_q[w] 10 %
(``DENOMINATOR_SHARE``): the weights' mean only rescales the bound, and it is pinned down by
far fewer outputs than a small error rate is (with every weight 20, its bound widens the
result by 9 % at 60 outputs and 2 % at 300).

The search (``certify_approve_threshold``)
------------------------------------------
Candidates run from 10.0 down to 0.0 in steps of 0.02 (``GRID_STEP``). A candidate passes
when both bounds are within their budgets: P(bad) <= ``alpha_bad`` (default 0.01) and
P(needs an edit or bad) <= ``alpha_edit`` (default 0.05). A candidate's null hypothesis is
"some budget is exceeded"; the larger of the two p-values is valid for it, so both are
tested at the full delta (Learn-then-Test with several risks). Candidates are tested in
that fixed order and the search stops at the first failure, so the chance of passing any
candidate whose true error exceeds a budget is at most delta (fixed-sequence testing), and
the lowest passing candidate is certified.

A candidate is testable when its effective sample (below) reaches
``minimum_effective_sample(min(alpha_bad, alpha_edit), delta_sampling)``, that is when a
clean record (every loss 0) with these weights would pass. That depends on the scores and
weights only, never on the losses. Strictly, choosing candidates by the weights fixes the
realised mix of strata: given that mix, the bound still covers the traffic mean with each
stratum weighted as sampled (Hoeffding's and Bentkus's inequalities hold for independent
terms with different means, the average mean taking the place of the common one), which
differs from the traffic mean only by the sampling noise of the strata's shares; the tests
check the whole search on simulated traffic with known truth.

Effective sample: the number of equally weighted outputs (weight 1) whose clean record
would get the same bound, ln(delta_s) / ln(1 - clean bound). For outputs all of weight 1 it
is their count; unequal weights, the denominator's share of delta and the weights' spread
make it smaller.

Three outcomes:

* certified: the lowest passing candidate, with its evidence;
* underpowered: no candidate is testable, or the first testable one failed although both
  estimates are within budget (more verdicts could pass it);
* not attainable: at the first testable candidate some estimate is at or above its budget;
  the bound always exceeds the estimate, so no amount of data like this would pass it. With
  no candidate testable against the tighter budget (a very small one needs thousands of
  outputs), the highest candidate with data enough for the looser budget is looked at the
  same way. Not where a higher candidate with data enough for the looser budget
  is within both budgets by its estimates: that one lacks only data, so the state is
  underpowered. "Data enough for the looser budget" is the effective sample a clean record
  needs to meet it at the whole of delta (``minimum_effective_sample(max budget, delta)``,
  299 for 0.01 at 0.05): these candidates are read by their estimates, which the label
  model's share of delta does not touch, so how much data it takes to read one does not
  depend on whether replicates widen the bounds. (At the sampling share it took 368, and a
  0.005 budget, below what the traffic allows, was first shown out of reach at the fourth
  run in 3 of 40 simulated task types, so the alert's two runs in a row came at the fifth.)

Every outcome also reports, per budget, the best certifiable error: the smallest value of
that budget, the other kept, at which the search on that budget alone would certify a
threshold, and the lowest threshold it would certify. The candidates tested are the
search's own at that value (data enough for the tighter of the two budgets, over the
headroom), so raising a budget above the other one brings in higher candidates with less
data, whose failure can end the sequence sooner: the certified threshold falls as a budget
rises only where the candidates it brings in pass. (Testing at the level alone, as if the
other budget were not there, brought in thin candidates at the very top and answered, for
a task type whose P(edit or bad) was 0.053 at 9.8 on 1,400 effective outputs, "0.25 at
threshold 0" rather than 0.08 at 9.8.)

``smoothed_move`` turns an outcome into the next threshold: tighten at once, loosen by at
most one step per run, hold on weak or bad evidence.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from enum import StrEnum
from statistics import NormalDist

import numpy as np
from scipy import sparse
from scipy.special import betainccinv, xlogy

GRID_TOP = 10.0
GRID_BOTTOM = 0.0
# Near the top of the scale the approved share changes fast (in the simulated world, a tenth
# of a point can hold back 8 to 10 % of the traffic), and a certified threshold has to stop
# on the grid, well inside the budget. In that world with reviewers who never err, on a grid
# of tenths 3 task types of 8 lost 13 to 25 % of the auto-approval the best threshold in
# hindsight allowed; on this one, 3 of 12 lost 10.6 to 13 %, the rest less than 10 %.
# Steps of 0.01 did no better (docs/performance.md).
GRID_STEP = 0.02
MAX_STEP = 0.1
DEFAULT_ALPHA_BAD = 0.01
DEFAULT_ALPHA_EDIT = 0.05
DEFAULT_DELTA = 0.05
# The share of delta spent on the label model's uncertainty when replicates are given.
LABEL_MODEL_SHARE = 0.5
# The share of the sampling delta spent on the lower bound of the weights' mean.
DENOMINATOR_SHARE = 0.1
# A sum or product within this above an integer is taken as that integer: floating-point
# rounding (30 x 0.1 is 3.0000000000000004) would otherwise push a ceiling up by one, in
# Bentkus's ceil(n m) and in the replicates' covering rank.
_INTEGER_TOLERANCE = 1e-9
# Solving for the Hoeffding root: Newton's steps converge quadratically, and stop once a step
# is below the tolerance (rounding in the divergence keeps the last digits from settling).
_NEWTON_STEPS = 50
_NEWTON_TOLERANCE = 1e-13


# --------------------------------------------------------------------------- bounds


def _hoeffding_root(mean: np.ndarray, needed: np.ndarray) -> np.ndarray:
    """The R >= mean with KL(mean || R) = needed, for means below 1.

    In u = -ln(1 - R), KL(mean || R) = mean ln(mean) + (1 - mean) ln(1 - mean)
    - mean ln(R) + (1 - mean) u is convex and increasing, with slope 1 - mean / R. Newton's
    method started to the right of the root (dropping -mean ln R >= 0 gives such a start)
    stays to its right and converges quadratically, in a few steps for any n."""
    floor = xlogy(mean, mean) + xlogy(1 - mean, 1 - mean)
    u = (needed - floor) / (1 - mean)
    for _ in range(_NEWTON_STEPS):
        r = -np.expm1(-u)
        excess = floor - xlogy(mean, r) + (1 - mean) * u - needed
        step = excess / (1 - mean / r)
        u = u - step
        if np.all(np.abs(step) <= _NEWTON_TOLERANCE * np.maximum(1.0, u)):
            break
    return -np.expm1(-u)


def _hoeffding_bentkus(total: np.ndarray, n: np.ndarray, delta: float) -> np.ndarray:
    """Upper (1 - delta) bounds on the means of [0, 1] terms, from their sums and counts
    (arrays of one shape); 1 where there are no terms."""
    total, n = np.broadcast_arrays(np.asarray(total, float), np.asarray(n, float))
    upper = np.ones(total.shape)
    informative = (n > 0) & (total < n)
    if not informative.any():
        return upper
    count = n[informative]
    mean = np.clip(total[informative] / count, 0.0, 1.0)

    hoeffding = _hoeffding_root(mean, math.log(1 / delta) / count)

    # Bentkus: e P(Bin(n, R) <= k) = delta, k = ceil(n mean); P(Bin(n, R) <= k) is the
    # upper tail of Beta(k + 1, n - k) at R.
    successes = np.ceil(total[informative] - _INTEGER_TOLERANCE * np.maximum(1.0, count))
    bentkus = np.ones_like(mean)
    room = successes < count
    bentkus[room] = betainccinv(successes[room] + 1, count[room] - successes[room], delta / math.e)

    upper[informative] = np.minimum(hoeffding, bentkus)
    return upper


def hoeffding_bentkus_upper(mean: float, n: int, delta: float) -> float:
    """The (1 - delta) Hoeffding-Bentkus upper bound on the mean of n independent terms in
    [0, 1] whose sample mean is ``mean`` (Bates et al. 2021, RCPS)."""
    _check_level("delta", delta)
    if n < 0:
        raise ValueError(f"n must be at least 0, not {n}")
    if not 0.0 <= mean <= 1.0:
        raise ValueError(f"mean must be in [0, 1], not {mean}")
    return float(_hoeffding_bentkus(np.array([mean * n]), np.array([n]), delta)[0])


def _ratio_bounds(
    n: np.ndarray,
    weight_sum: np.ndarray,
    weighted_loss_sum: np.ndarray,
    max_weight: float | np.ndarray,
    delta_sampling: float,
) -> np.ndarray:
    """The sampling bound of the module docstring for many samples at once (broadcast),
    each with its own largest weight c where ``max_weight`` is an array. The losses may
    carry more axes than the rest (one row per bootstrap replicate)."""
    # The bound on the weights' mean does not depend on the losses: worked out once per
    # sample, not once per replicate.
    n, weight_sum, c = np.broadcast_arrays(
        np.asarray(n, float), np.asarray(weight_sum, float), np.asarray(max_weight, float)
    )
    # With every weight 1, E[w] = 1 is known and the numerator takes all of delta.
    unit = c == 1.0
    share = (1 - DENOMINATOR_SHARE) * delta_sampling
    # sum(Y) = (c n - sum(w)) / (c - 1); clipped because c n - sum(w) can round below 0.
    weighted = ~unit
    top, count = c[weighted], n[weighted]
    y_sum = np.clip((top * count - weight_sum[weighted]) / (top - 1), 0.0, count)
    upper_y = _hoeffding_bentkus(y_sum, count, delta_sampling - share)
    # E[w] >= 1 always, since no inclusion probability exceeds 1; known to be 1 when c = 1.
    lower_mean_weight = np.ones(c.shape)
    lower_mean_weight[weighted] = np.maximum(1.0, top - (top - 1) * upper_y)

    x_sum, n, c, unit = np.broadcast_arrays(np.asarray(weighted_loss_sum, float) / c, n, c, unit)
    upper_x = np.empty(x_sum.shape)
    upper_x[unit] = _hoeffding_bentkus(x_sum[unit], n[unit], delta_sampling)
    upper_x[~unit] = _hoeffding_bentkus(x_sum[~unit], n[~unit], share)
    return np.minimum(1.0, c * upper_x / lower_mean_weight)


def _share(weighted_loss_sum: float, weight_sum: float) -> float:
    """sum(w l) / sum(w); rounding can put it a hair above 1 when every loss is 1."""
    return min(1.0, float(weighted_loss_sum / weight_sum))


def _effective_n(clean_bound: np.ndarray, delta_sampling: float) -> np.ndarray:
    """ln(delta) / ln(1 - b): how many weight-1 outputs with no loss get the bound b."""
    clean_bound = np.asarray(clean_bound, float)
    effective = np.zeros(clean_bound.shape)
    below_one = clean_bound < 1.0
    effective[below_one] = math.log(delta_sampling) / np.log1p(-clean_bound[below_one])
    return effective


def minimum_effective_sample(alpha: float, delta: float) -> float:
    """The effective sample at which a clean record's (1 - delta) bound reaches alpha:
    ln(delta) / ln(1 - alpha) (59 when rounded up, for alpha = delta = 0.05)."""
    _check_level("alpha", alpha)
    _check_level("delta", delta)
    return math.log(delta) / math.log1p(-alpha)


def _label_model_rank(replicate_count: int, delta_label: float) -> int:
    """The rank k of the replicate bound that covers the label model at delta_label."""
    rank = math.ceil((1 - delta_label) * (replicate_count + 1) - _INTEGER_TOLERANCE)
    if rank > replicate_count:
        needed = math.ceil(1 / delta_label - 1 - _INTEGER_TOLERANCE)
        raise ValueError(
            f"replicates: {replicate_count} bootstrap replicates cannot cover the label model "
            f"at {delta_label:g}; at least {needed} are needed"
        )
    return rank


def _covering_loss_sum(replicate_sums: np.ndarray, replicate_count: int, delta_label: float):
    """The k-th smallest of the replicates' weighted loss sums (axis 0), k the covering
    rank. The bound rises with the loss sum, all else fixed, so the k-th smallest replicate
    bound is the bound of this sum: one bound per sample instead of one per replicate."""
    rank = _label_model_rank(replicate_count, delta_label)
    return np.partition(replicate_sums, rank - 1, axis=0)[rank - 1]


def _split_delta(delta: float, with_replicates: bool) -> tuple[float, float]:
    """(delta for sampling, delta for the label model)."""
    if not with_replicates:
        return delta, 0.0
    return (1 - LABEL_MODEL_SHARE) * delta, LABEL_MODEL_SHARE * delta


def sampling_delta(delta: float, with_replicates: bool) -> float:
    """The share of delta a bound spends on sampling, the rest going to the label model."""
    return _split_delta(delta, with_replicates)[0]


@dataclass(frozen=True)
class LossBound:
    """A (1 - delta) upper bound on the traffic's mean loss, with what it rests on."""

    n: int  # judged outputs
    effective_n: float  # weight-1 outputs whose clean record would get the same bound
    estimate: float | None  # sum(w l) / sum(w); None with no outputs
    sampling_bound: float  # on the point losses alone, at the sampling share of delta
    bound: float  # sampling_bound widened by the replicates (the same without them)

    def as_dict(self) -> dict:
        return {
            "n": self.n,
            "effective_n": round(self.effective_n, 2),
            "estimate": None if self.estimate is None else round(self.estimate, 5),
            "sampling_bound": round(self.sampling_bound, 5),
            "bound": round(self.bound, 5),
        }


def weighted_loss_bound(
    losses,
    weights,
    *,
    delta: float = DEFAULT_DELTA,
    replicates=None,
    max_weight: float | None = None,
) -> LossBound:
    """The (1 - delta) upper bound of the module docstring on the traffic's mean loss, from
    judged outputs' losses in [0, 1] and weights 1 / pi; widened by bootstrap replicates of
    the losses (shape (B, n)) when given."""
    _check_level("delta", delta)
    loss = _as_losses("losses", losses)
    weight = _as_weights(weights, len(loss))
    replicate = None if replicates is None else _as_replicates(replicates, len(loss))
    top_weight = _top_weight(weight, max_weight)
    delta_sampling, delta_label = _split_delta(delta, replicate is not None)

    n = len(loss)
    weight_sum = float(weight.sum())
    sampling = _ratio_bounds(n, weight_sum, float(weight @ loss), top_weight, delta_sampling)
    clean = _ratio_bounds(n, weight_sum, 0.0, top_weight, delta_sampling)
    bound = float(sampling)
    if replicate is not None:
        covering = _covering_loss_sum(replicate @ weight, len(replicate), delta_label)
        widened = _ratio_bounds(n, weight_sum, covering, top_weight, delta_sampling)
        bound = max(bound, float(widened))
    return LossBound(
        n=n,
        effective_n=float(_effective_n(clean, delta_sampling)),
        estimate=_share(float(weight @ loss), weight_sum) if n else None,
        sampling_bound=float(sampling),
        bound=bound,
    )


# --------------------------------------------------------------------------- the search


class State(StrEnum):
    CERTIFIED = "certified"
    UNDERPOWERED = "underpowered"
    NOT_ATTAINABLE = "not_attainable"


@dataclass(frozen=True)
class ThresholdEvidence:
    """One candidate threshold: the judged outputs scoring at least it, and both bounds."""

    threshold: float
    bad: LossBound  # loss = P(bad)
    edit: LossBound  # loss = P(needs an edit or bad)
    alpha_bad: float
    alpha_edit: float
    testable: bool  # a clean record with these weights would pass both budgets

    @property
    def n(self) -> int:
        return self.bad.n

    @property
    def effective_n(self) -> float:
        return self.bad.effective_n

    @property
    def passed(self) -> bool:
        # Written as "<=" on both, so that a bound that is somehow NaN fails.
        return self.bad.bound <= self.alpha_bad and self.edit.bound <= self.alpha_edit

    @property
    def beyond_reach(self) -> bool:
        """Some estimate is at or above its budget: no bound from data like this passes."""
        return any(
            check.estimate is not None and check.estimate >= alpha
            for check, alpha in ((self.bad, self.alpha_bad), (self.edit, self.alpha_edit))
        )

    def as_dict(self) -> dict:
        return {
            "threshold": self.threshold,
            "testable": self.testable,
            "passed": self.passed,
            "bad": self.bad.as_dict(),
            "edit": self.edit.as_dict(),
        }


@dataclass(frozen=True)
class BestCertifiable:
    """The smallest budget at which one budget's search alone would certify a threshold,
    and the lowest threshold it would then certify."""

    error: float
    threshold: float


@dataclass(frozen=True)
class Certification:
    """The search's outcome. ``candidates`` holds every grid point, from the top down."""

    state: State
    threshold: float | None  # the lowest passing candidate; None unless certified
    alpha_bad: float
    alpha_edit: float
    delta: float
    needed_effective_n: float  # the effective sample a candidate needs to be tested
    certified: ThresholdEvidence | None  # the evidence at ``threshold``
    # The first tested candidate that failed; with none testable, the highest one with data
    # enough for the looser budget, where that shows the budgets out of reach.
    stopped_at: ThresholdEvidence | None
    best_bad: BestCertifiable | None
    best_edit: BestCertifiable | None
    candidates: tuple[ThresholdEvidence, ...]
    # The lowest an approve threshold could be: nothing at or below it is read as the
    # budgets' being out of reach.
    floor: float = GRID_BOTTOM
    # The effective sample at which ``toward``'s sampling bounds would both pass at today's
    # estimates and mix of weights (``_Tails.effective_n_to_pass``), at least
    # ``needed_effective_n``; infinite where an estimate is at or above its budget.
    toward_needed_to_pass: float = math.inf

    @property
    def most_data(self) -> ThresholdEvidence:
        """The candidate with the largest effective sample."""
        return max(self.candidates, key=lambda c: c.effective_n)

    @property
    def toward(self) -> ThresholdEvidence:
        """The candidate that certification is heading for: where the estimates pass with
        their margin (``estimated_threshold``), or, before any does, the one with the most
        data. Its effective sample against the need is what the forecast extends."""
        return estimated_threshold(self) or self.most_data

    def effective_n_at_tenths(self) -> dict[str, float]:
        """The effective sample of each candidate at a tenth of a point ("9.5": ...), so
        that a later run can read the pace at its own ``toward``."""
        return {
            f"{c.threshold:.1f}": round(c.effective_n, 2)
            for c in self.candidates
            if abs(c.threshold * 10 - round(c.threshold * 10)) < _INTEGER_TOLERANCE
        }

    def as_dict(self) -> dict:
        """What a cycle run keeps: the outcome and the evidence behind it, not every
        candidate."""
        return {
            "state": str(self.state),
            "threshold": self.threshold,
            "alpha_bad": self.alpha_bad,
            "alpha_edit": self.alpha_edit,
            "delta": self.delta,
            "needed_effective_n": round(self.needed_effective_n, 2),
            "certified": self.certified.as_dict() if self.certified else None,
            "stopped_at": self.stopped_at.as_dict() if self.stopped_at else None,
            "most_data": self.most_data.as_dict(),
            "toward": {
                **self.toward.as_dict(),
                # JSON has no infinity: None is "no amount of data like today's passes".
                "needed_to_pass": (
                    round(self.toward_needed_to_pass, 2)
                    if math.isfinite(self.toward_needed_to_pass)
                    else None
                ),
            },
            "effective_n_at": self.effective_n_at_tenths(),
            "best_bad": vars(self.best_bad) if self.best_bad else None,
            "best_edit": vars(self.best_edit) if self.best_edit else None,
        }


def grid(top: float = GRID_TOP, bottom: float = GRID_BOTTOM, step: float = GRID_STEP) -> np.ndarray:
    """Candidate thresholds from ``top`` down to ``bottom`` in steps of ``step``."""
    # Whole steps only (a quotient within _INTEGER_TOLERANCE below a whole number counts as
    # it), so that no candidate falls below the bottom; rounded to clear the noise of the
    # steps (10 - 3 x 0.1 is 9.700000000000001), not to the step, so that a top between
    # steps (the approve threshold less a gap) is the first candidate, not the one above it.
    if not step > 0:
        raise ValueError(f"step must be positive, not {step}")
    steps = math.floor((top - bottom) / step + _INTEGER_TOLERANCE)
    return np.round(top - step * np.arange(steps + 1), 10)


class _Tails:
    """Sums over the judged outputs scoring at least each candidate, so that the evidence
    for every candidate comes from one pass over up to a hundred thousand outputs."""

    def __init__(self, thresholds, score, weight, top_weight, delta_sampling, delta_label):
        self.size = len(thresholds)
        # bins[i]: the first candidate (from the top) that output i counts for, the first
        # with score >= threshold; an output below the bottom counts for none.
        self.bins = np.searchsorted(-thresholds, -score, side="left")
        self.weight = weight
        if top_weight is None:
            # Each candidate's own largest weight, among the outputs scoring at least it.
            per_bin = np.ones(self.size + 1)
            np.maximum.at(per_bin, self.bins, weight)
            top_weight = np.maximum.accumulate(per_bin[: self.size])
        self.top_weight = top_weight
        self.delta_sampling = delta_sampling
        self.delta_label = delta_label
        # Output i as a one in row bins[i]: the sums of many rows of values (the bootstrap's
        # replicates) in one sparse product.
        self.by_bin = sparse.csr_matrix(
            (np.ones(len(score)), (self.bins, np.arange(len(score)))),
            shape=(self.size + 1, len(score)),
        )
        self.counts = self.sums(np.ones(len(score)))
        self.weight_sums = self.sums(weight)
        # A clean record's bound at each candidate: what its effective sample is read from.
        self.clean = _ratio_bounds(self.counts, self.weight_sums, 0.0, top_weight, delta_sampling)
        self.effective_n = _effective_n(self.clean, delta_sampling)

    def sums(self, values: np.ndarray) -> np.ndarray:
        """Per candidate, the sum of ``values`` (one per output, or rows of them) over the
        outputs scoring at least it."""
        per_bin = (self.by_bin @ np.asarray(values).T).T
        return np.cumsum(per_bin[..., : self.size], axis=-1)

    def bounds(self, loss: np.ndarray, covering: np.ndarray | None) -> list[LossBound]:
        """One budget's LossBound at every candidate, widened to the replicates' covering
        sums (``covering_sums``) where given."""
        loss_sums = self.sums(self.weight * loss)
        sampling = _ratio_bounds(
            self.counts, self.weight_sums, loss_sums, self.top_weight, self.delta_sampling
        )
        widened = sampling
        if covering is not None:
            widened = np.maximum(
                sampling,
                _ratio_bounds(
                    self.counts, self.weight_sums, covering, self.top_weight, self.delta_sampling
                ),
            )
        return [
            LossBound(
                n=int(self.counts[k]),
                effective_n=float(self.effective_n[k]),
                estimate=_share(loss_sums[k], self.weight_sums[k]) if self.counts[k] else None,
                sampling_bound=float(sampling[k]),
                bound=float(widened[k]),
            )
            for k in range(self.size)
        ]

    def covering_sums(self, replicates: np.ndarray) -> np.ndarray:
        """Per candidate, the replicates' weighted loss sum that covers the label model."""
        replicate_sums = self.sums(replicates * self.weight)
        return _covering_loss_sum(replicate_sums, len(replicates), self.delta_label)

    def effective_n_to_pass(self, k: int, loss_sum: float, alpha: float) -> float:
        """The effective sample at which candidate k's sampling bound would be within
        ``alpha`` were the judged outputs scoring at least it scaled up or down, the same mix
        of weights and the same weighted loss share (``loss_sum``): the data certification
        needs at today's estimates. Infinite where that share is at or above
        ``alpha`` (no amount of such data passes), where nothing scores that high, or where
        it would take more than _SCALE_RANGE times today's sample.

        The bound falls as the sample grows at a fixed share; the factor is found by
        bisection on its logarithm."""
        count, weight_sum = self.counts[k], self.weight_sums[k]
        top_weight = np.broadcast_to(self.top_weight, (self.size,))[k]

        def bound(scale: float, loss: float) -> float:
            return float(
                _ratio_bounds(
                    scale * count, scale * weight_sum, scale * loss, top_weight, self.delta_sampling
                )
            )

        if not (count > 0 and loss_sum / weight_sum < alpha):
            return math.inf
        low, high = 1 / _SCALE_RANGE, _SCALE_RANGE
        if not bound(high, loss_sum) <= alpha:
            return math.inf
        for _ in range(_SCALE_BISECTIONS):
            middle = math.sqrt(low * high)
            if bound(middle, loss_sum) <= alpha:
                high = middle
            else:
                low = middle
        return float(_effective_n(bound(high, 0.0), self.delta_sampling))


# The need at today's estimates is looked for between today's sample divided and multiplied
# by this (a need beyond it is read as out of reach: at today's pace that is years), by
# bisections of its logarithm: 2^-16 of the log range, a factor within 1.0003 of the true one.
_SCALE_RANGE = 1e4
_SCALE_BISECTIONS = 16


# A level where a candidate becomes testable is tried this far above it, so that rounding
# in inverting the minimum effective sample cannot leave the candidate untested there.
_TESTABLE_NUDGE = 1e-9


def _best_certifiable(
    thresholds: np.ndarray,
    bounds: np.ndarray,
    tails: _Tails,
    *,
    other_alpha: float,
    headroom: float,
) -> BestCertifiable | None:
    """The smallest level a < 1 at which the fixed-sequence search would certify something
    on this budget, were it set to a and the other budget kept: the candidates tested are
    the search's own, those with data enough for min(a, other budget) / headroom.

    Which candidate is tested first changes only where a reaches a candidate's testable
    level, headroom x its clean record's bound; between two such levels the search
    certifies once a reaches the first tested candidate's bound. So the smallest level is
    one of the bounds or one of the testable levels (to within _TESTABLE_NUDGE). Every one
    is tried at once, levels as rows and candidates as columns."""
    testable_at = headroom * tails.clean
    levels = np.unique(np.concatenate([bounds, testable_at * (1 + _TESTABLE_NUDGE)]))
    levels = levels[(levels > 0.0) & (levels < 1.0)]
    if not len(levels):
        return None
    needed = np.array(
        [
            minimum_effective_sample(min(a, other_alpha) / headroom, tails.delta_sampling)
            for a in levels
        ]
    )
    tested = tails.effective_n[np.newaxis, :] >= needed[:, np.newaxis]
    # Written as "not <=", so that a NaN bound fails, as in the search.
    failed = tested & ~(bounds[np.newaxis, :] <= levels[:, np.newaxis])
    # Each level's sequence stops at its first failure; the candidates tested before it pass.
    passing = tested & (np.cumsum(failed, axis=1) == 0)
    certifies = passing.any(axis=1)
    if not certifies.any():
        return None
    smallest = int(np.argmax(certifies))
    lowest = thresholds[np.flatnonzero(passing[smallest])[-1]]
    return BestCertifiable(error=float(levels[smallest]), threshold=float(lowest))


def certify_approve_threshold(
    scores,
    weights,
    loss_bad,
    loss_edit,
    *,
    alpha_bad: float = DEFAULT_ALPHA_BAD,
    alpha_edit: float = DEFAULT_ALPHA_EDIT,
    delta: float = DEFAULT_DELTA,
    replicates_bad=None,
    replicates_edit=None,
    max_weight: float | None = None,
    top: float = GRID_TOP,
    bottom: float = GRID_BOTTOM,
    step: float = GRID_STEP,
    headroom: float = 1.0,
    floor: float = GRID_BOTTOM,
) -> Certification:
    """Learn-then-Test in fixed sequence (Angelopoulos, Bates et al. 2021) over the grid from
    ``top`` down, against both budgets; see the module docstring for the guarantee.

    ``floor`` is the lowest an approve threshold could be (the review threshold: approve
    must lie above it). "Not attainable" is decided only from a candidate above it: that
    outputs scoring 4.5 are often wrong says nothing of whether those scoring 9 are."""
    _check_level("alpha_bad", alpha_bad)
    _check_level("alpha_edit", alpha_edit)
    _check_level("delta", delta)
    score = np.asarray(scores, dtype=float)
    if score.ndim != 1 or not np.isfinite(score).all():
        raise ValueError("scores must be a one-dimensional array of finite numbers")
    bad = _as_losses("loss_bad", loss_bad, len(score))
    edit = _as_losses("loss_edit", loss_edit, len(score))
    weight = _as_weights(weights, len(score))
    if (replicates_bad is None) != (replicates_edit is None):
        raise ValueError("replicates_bad and replicates_edit must be given together")
    with_replicates = replicates_bad is not None
    rep_bad = _as_replicates(replicates_bad, len(score)) if with_replicates else None
    rep_edit = _as_replicates(replicates_edit, len(score)) if with_replicates else None
    top_weight = None if max_weight is None else _top_weight(weight, max_weight)
    delta_sampling, delta_label = _split_delta(delta, with_replicates)

    thresholds = grid(top, bottom, step)
    tails = _Tails(thresholds, score, weight, top_weight, delta_sampling, delta_label)
    needed = minimum_effective_sample(min(alpha_bad, alpha_edit) / headroom, delta_sampling)
    covering_bad = tails.covering_sums(rep_bad) if with_replicates else None
    covering_edit = tails.covering_sums(rep_edit) if with_replicates else None
    candidates = tuple(
        ThresholdEvidence(
            threshold=float(t),
            bad=b,
            edit=e,
            alpha_bad=alpha_bad,
            alpha_edit=alpha_edit,
            testable=b.effective_n >= needed,
        )
        for t, b, e in zip(
            thresholds,
            tails.bounds(bad, covering_bad),
            tails.bounds(edit, covering_edit),
            strict=True,
        )
    )

    certified = stopped_at = None
    for candidate in candidates:
        if not candidate.testable:
            # Too few outputs score this high for even a clean record to pass: testing here
            # would only end the sequence. Which candidates are skipped depends on the scores
            # and weights alone, never on the losses, so the guarantee still holds.
            continue
        if not candidate.passed:
            stopped_at = candidate
            break
        certified = candidate

    # What it takes to read a candidate's estimates against the budgets (module docstring).
    looser = minimum_effective_sample(max(alpha_bad, alpha_edit), delta)
    if certified is None and stopped_at is None:
        # Nothing testable against the tighter budget: the highest candidate with enough
        # data for the looser one can still show that the budgets are out of reach.
        probe = next(
            (c for c in candidates if c.threshold > floor and c.effective_n >= looser), None
        )
        if probe is not None and probe.beyond_reach:
            stopped_at = probe
    if certified is not None:
        state = State.CERTIFIED
    elif stopped_at is not None and stopped_at.beyond_reach and stopped_at.threshold > floor:
        # Out of reach where tested; but a higher threshold within budget by its estimates,
        # on data enough for the looser budget, only lacks the data to be tested.
        hopeful = any(
            c.threshold > stopped_at.threshold and c.effective_n >= looser and not c.beyond_reach
            for c in candidates
        )
        state = State.UNDERPOWERED if hopeful else State.NOT_ATTAINABLE
    else:
        state = State.UNDERPOWERED

    found = Certification(
        state=state,
        threshold=None if certified is None else certified.threshold,
        alpha_bad=alpha_bad,
        alpha_edit=alpha_edit,
        delta=delta,
        needed_effective_n=needed,
        certified=certified,
        stopped_at=stopped_at,
        best_bad=_best_certifiable(
            thresholds,
            np.array([c.bad.bound for c in candidates]),
            tails,
            other_alpha=alpha_edit,
            headroom=headroom,
        ),
        best_edit=_best_certifiable(
            thresholds,
            np.array([c.edit.bound for c in candidates]),
            tails,
            other_alpha=alpha_bad,
            headroom=headroom,
        ),
        candidates=candidates,
        floor=floor,
    )
    # The data the candidate certification heads for needs to pass at today's estimates:
    # one candidate's, as the forecast reads no other (every candidate's tripled the search).
    # The point estimates, not the replicates' covering sums: the label model's widening
    # shrinks as reviews come in. At a team's scale, forecast on day 14 from the point
    # estimates, 2 of the 4 task types certified within the month were dated within it, and
    # none that was not; from the widened ones, 1 of 4 (docs/learning.md).
    k = candidates.index(found.toward)
    to_pass = max(
        needed,
        tails.effective_n_to_pass(k, float(tails.sums(weight * bad)[k]), alpha_bad),
        tails.effective_n_to_pass(k, float(tails.sums(weight * edit)[k]), alpha_edit),
    )
    return replace(found, toward_needed_to_pass=to_pass)


# --------------------------------------------------------------------------- smoothing


@dataclass(frozen=True)
class Move:
    """Where the approve threshold goes after one run, and why."""

    old: float
    new: float
    reason: str


def estimated_threshold(certification: Certification) -> ThresholdEvidence | None:
    """The lowest candidate whose estimates, each plus z_(1 - delta) standard errors of a
    share among the candidate's effective sample, are within both budgets: in fixed
    sequence from the top down, skipping the candidates where even a clean record would not
    pass (an effective n below z / the tighter budget, 165 for 1 % at delta 0.05) and
    stopping at the first failure. None if none passes.

    This is the search with a bound as narrow as the sampling noise: the normal
    approximation, with none of delta for the label model's uncertainty or the weights'
    mean. It is an estimate with a stated margin, not a guarantee: where the label model is
    biased, so is it. The share's variance is read at no less than 1 / effective n, so
    that a tail the label model calls clean still gets a margin of z / effective n."""
    z = NormalDist().inv_cdf(1 - certification.delta)
    # A clean record's margin is z / effective n: below this, even one would not pass.
    readable = z / min(certification.alpha_bad, certification.alpha_edit)
    estimated = None
    for candidate in certification.candidates:
        if candidate.threshold <= certification.floor:
            break  # it could not be the approve threshold
        n = candidate.effective_n
        if n < readable:
            continue
        within = all(
            check.estimate is not None
            and check.estimate
            + z * math.sqrt(max(check.estimate, 1 / n) * (1 - check.estimate) / n)
            <= alpha
            for check, alpha in (
                (candidate.bad, certification.alpha_bad),
                (candidate.edit, certification.alpha_edit),
            )
        )
        if not within:
            break
        estimated = candidate
    return estimated


def smoothed_move(
    current: float,
    certification: Certification,
    *,
    last_certified: float | None,
    max_step: float = MAX_STEP,
) -> Move:
    """The next approve threshold. Certified: raise to the certified threshold at once
    (approving less is the safe side), lower toward it by at most ``max_step`` per run.
    Underpowered: go to ``last_certified``, the value the last certified run set (the same
    rule, so it is never lowered by more than a step), or hold when there is none. Not
    attainable: hold, and say so; climbing to the top quietly would hide the problem."""
    c = certification
    budgets = (
        f"P(bad) <= {c.alpha_bad:g} and P(edit or bad) <= {c.alpha_edit:g} "
        f"with {1 - c.delta:.0%} confidence"
    )
    if c.state is State.CERTIFIED:
        e = c.certified
        why = (
            f"Certified: {c.threshold:g} is the lowest threshold with {budgets} "
            f"(n={e.n}, effective n={e.effective_n:.0f}, P(bad) {e.bad.estimate:.4f} "
            f"bounded by {e.bad.bound:.4f}, P(edit or bad) {e.edit.estimate:.4f} "
            f"bounded by {e.edit.bound:.4f})."
        )
        return _toward(current, c.threshold, max_step, why)

    if c.state is State.UNDERPOWERED:
        most = c.most_data
        if c.stopped_at is None:
            why = (
                f"Underpowered: no threshold has enough judged outputs for even a clean record "
                f"to show {budgets} ({most.effective_n:.0f} effective at {most.threshold:g} "
                f"at best; {math.ceil(c.needed_effective_n)} needed)."
            )
        elif c.stopped_at.beyond_reach and c.stopped_at.threshold <= c.floor:
            s = c.stopped_at
            why = (
                f"Underpowered: the estimates are over budget at {s.threshold:g}, which is not "
                f"above the review threshold {c.floor:g} and so could not be the approve "
                f"threshold; no threshold above it has enough judged outputs to test "
                f"({most.effective_n:.0f} effective at {most.threshold:g} at best; "
                f"{math.ceil(c.needed_effective_n)} needed)."
            )
        elif c.stopped_at.beyond_reach:
            s = c.stopped_at
            why = (
                f"Underpowered: at {s.threshold:g}, the first threshold with enough data to "
                f"test, the estimates (P(bad) {s.bad.estimate:.4f}, P(edit or bad) "
                f"{s.edit.estimate:.4f}) are over budget, but higher thresholds are within it "
                "by their estimates, on too few verdicts to test; more audits may pass one."
            )
        else:
            s = c.stopped_at
            why = (
                f"Underpowered: at {s.threshold:g}, the first threshold with enough data to "
                f"test, the estimates are within budget (P(bad) {s.bad.estimate:.4f}, "
                f"P(edit or bad) {s.edit.estimate:.4f}) but their bounds "
                f"({s.bad.bound:.4f}, {s.edit.bound:.4f}) are not; more verdicts may pass it."
            )
        if last_certified is None:
            return Move(current, current, why + " Held: no threshold was ever certified.")
        return _toward(current, last_certified, max_step, why + " Back to the last certified.")

    s = c.stopped_at
    best = "; ".join(
        f"{name} can be certified at {b.error:.4f} (threshold {b.threshold:g})"
        for name, b in (("P(bad)", c.best_bad), ("P(edit or bad)", c.best_edit))
        if b is not None
    )
    why = (
        f"Not attainable: at {s.threshold:g}, the highest threshold with enough data to test, "
        f"the estimates (P(bad) {s.bad.estimate:.4f}, P(edit or bad) {s.edit.estimate:.4f}) "
        f"already reach the budgets, so no threshold can be certified with {budgets}. "
        + (f"At best, {best}. " if best else "")
        + "More audits would not change that; outputs that are wrong less often, or budgets "
        f"above these estimates, would. Held at {current:g}: this needs a person, "
        "not a quiet climb."
    )
    return Move(current, current, why)


def estimate_move(
    line: float | None, approve: float, certification: Certification, *, max_step: float = MAX_STEP
) -> Move | None:
    """Where the estimated approve line goes after a run that certified nothing: toward
    ``estimated_threshold`` by the approve threshold's own rule (up at once, down by at
    most ``max_step``), from where it was, or from the approve threshold ``approve`` when
    there was none. None when the run certified, or when no candidate passes: no line."""
    if certification.state is State.CERTIFIED:
        return None
    estimate = estimated_threshold(certification)
    if estimate is None:
        return None
    why = (
        f"Estimated approve line: {estimate.threshold:g} is the lowest threshold whose "
        "estimates are within "
        f"P(bad) <= {certification.alpha_bad:g} and P(edit or bad) <= "
        f"{certification.alpha_edit:g} by the normal approximation at "
        f"{1 - certification.delta:.0%} (P(bad) {estimate.bad.estimate:.4f}, P(edit or bad) "
        f"{estimate.edit.estimate:.4f}, effective n={estimate.effective_n:.0f}); not certified."
    )
    return _toward(approve if line is None else line, estimate.threshold, max_step, why)


def _toward(current: float, target: float, max_step: float, why: str) -> Move:
    if target > current:
        return Move(current, round(target, 4), why + f" Raised from {current:g} at once.")
    if target < current:
        new = round(max(target, current - max_step), 4)
        return Move(current, new, why + f" Lowered from {current:g} by at most {max_step:g}.")
    return Move(current, current, why + " Already there.")


# --------------------------------------------------------------------------- input checks


def _check_level(name: str, value: float) -> None:
    if not 0.0 < value < 1.0:
        raise ValueError(f"{name} must be strictly between 0 and 1, not {value}")


def _as_losses(name: str, values, length: int | None = None) -> np.ndarray:
    loss = np.asarray(values, dtype=float)
    if loss.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, not of shape {loss.shape}")
    if length is not None and len(loss) != length:
        raise ValueError(f"{name} has {len(loss)} values for {length} outputs")
    if not ((loss >= 0.0) & (loss <= 1.0)).all():
        raise ValueError(f"{name} must all be in [0, 1] (and not NaN)")
    return loss


def _as_weights(values, length: int) -> np.ndarray:
    weight = np.asarray(values, dtype=float)
    if weight.shape != (length,):
        raise ValueError(f"weights has shape {weight.shape} for {length} outputs")
    invalid = ~(np.isfinite(weight) & (weight >= 1.0))
    if invalid.any():
        raise ValueError(
            f"weights are 1 / inclusion probabilities, so finite and at least 1; "
            f"{int(invalid.sum())} of {length} are not (e.g. {weight[invalid][0]:g})"
        )
    return weight


def _as_replicates(values, length: int) -> np.ndarray:
    replicate = np.asarray(values, dtype=float)
    if replicate.ndim != 2 or replicate.shape[1] != length:
        raise ValueError(
            f"replicates must have shape (B, {length}), one loss vector per row, "
            f"not {replicate.shape}"
        )
    if not ((replicate >= 0.0) & (replicate <= 1.0)).all():
        raise ValueError("replicates must all be in [0, 1] (and not NaN)")
    return replicate


def _top_weight(weight: np.ndarray, max_weight: float | None) -> float:
    observed = float(weight.max()) if len(weight) else 1.0
    if max_weight is None:
        return observed
    if not (math.isfinite(max_weight) and max_weight >= observed):
        raise ValueError(
            f"max_weight must be finite and at least every weight ({observed:g}), not {max_weight}"
        )
    return float(max_weight)
