"""The score-banded Dawid-Skene label model against hand computations, a reference
implementation written out item by item (below), and the simulated world's ground truth.

The checks against ground truth run over 20 simulated histories of 20,000 outputs (or a
bootstrap's spread on 50,000): they are marked ``statistical``, and ``make mutants`` leaves
them out; the hand computations and the reference pin the same code exactly.

The synthetic histories use the world's own pieces: each output's truth, validator results,
clarity and coherence come from ``world.day_traffic`` (so truths are drawn per task type
and model as the world draws them), and its score is the gate's ADR-0003 base score of
those (``scoring.base_score``), less the hallucination penalty when a fact check that the
task type requires failed; there is no pair bonus, as for a pair with a short record. A
reviewer from ``DEFAULT_REVIEWERS``, picked uniformly, decides each output by their
confusion matrix (``Reviewer.decide``'s draw, vectorised), and about 10 % of outputs get a
second verdict from a different reviewer.
"""

import math
import time
from dataclasses import dataclass
from datetime import date
from decimal import Decimal

import numpy as np
import pytest

from gating import scoring
from learning.statistics import labels
from simulator import world

REVIEWER_NAMES = np.array([r.name for r in world.DEFAULT_REVIEWERS])
# TRUE_CONFUSION[r, truth, action] = P(action | truth) for DEFAULT_REVIEWERS[r]; the world's
# truths and actions are in the label model's order (good/needs_edit/bad, approve/...).
TRUE_CONFUSION = np.array(
    [
        [[r.matrix[t][a] for a in world.ACTIONS] for t in world.TRUTHS]
        for r in world.DEFAULT_REVIEWERS
    ]
)
HISTORIES = 20
HISTORY_OUTPUTS = 20_000
TOP_THRESHOLDS = (9.0, 9.5)
GLOBAL_PRIOR = (0.0, 10.0)


@dataclass(frozen=True)
class History:
    scores: np.ndarray
    truth: np.ndarray  # index into world.TRUTHS
    verdict_item: np.ndarray
    verdict_reviewer: np.ndarray  # names
    verdict_label: np.ndarray  # action names

    def label_data(self, **kwargs) -> labels.LabelData:
        return labels.label_data(
            self.scores, self.verdict_item, self.verdict_reviewer, self.verdict_label, **kwargs
        )

    def true_error_above(self, threshold: float) -> float:
        return float((self.truth[self.scores >= threshold] != 0).mean())


def synthetic_history(seed: int, outputs: int, twice: float = 0.10) -> History:
    config = world.SimulationConfig(
        seed=seed, days=1, outputs_per_day=outputs, start=date(2026, 3, 2)
    )
    day = world.day_traffic(config, 0)
    facts = [v.name for v in world.VALIDATORS].index("facts")
    requires_fact_check = np.array([t.requires_fact_check for t in config.task_types])
    hallucinated = requires_fact_check[day.task_type] & ~day.passed[:, facts]
    scores = scoring.base_score(day.passed.mean(axis=1), day.input_clarity, day.coherence)
    scores = np.clip(scores - scoring.HALLUCINATION_PENALTY * hallucinated, 0.0, 10.0)

    rng = np.random.default_rng([seed, 1])
    reviewed_twice = np.flatnonzero(rng.random(outputs) < twice)
    first = rng.integers(0, len(world.DEFAULT_REVIEWERS), outputs)
    second = (first[reviewed_twice] + rng.integers(1, 4, len(reviewed_twice))) % 4
    items = np.concatenate([np.arange(outputs), reviewed_twice])
    reviewers = np.concatenate([first, second])
    cumulative = np.cumsum(TRUE_CONFUSION, axis=2)[reviewers, day.truth[items]]
    actions = (rng.random(len(items))[:, None] >= cumulative[:, :-1]).sum(axis=1)
    return History(
        scores=scores,
        truth=day.truth,
        verdict_item=items,
        verdict_reviewer=REVIEWER_NAMES[reviewers],
        verdict_label=np.array(labels.LABELS)[actions],
    )


def estimated_error_above(fit: labels.LabelFit, scores: np.ndarray, threshold: float) -> float:
    return float(fit.error[scores >= threshold].mean())


def confusion_by_name(fit: labels.LabelFit) -> np.ndarray:
    return np.array([fit.confusion_of(name) for name in REVIEWER_NAMES])


# ------------------------------------------------------------------------ by hand


def test_the_world_and_the_label_model_list_classes_and_labels_in_one_order():
    # TRUE_CONFUSION and the truths index the model's arrays directly.
    assert [t.value for t in world.TRUTHS] == list(labels.CLASSES)
    assert [a.value for a in world.ACTIONS] == list(labels.LABELS)


def perfect_pair(classes: list[int]) -> tuple[list[int], list[str], list[str]]:
    """Two reviewers who both give every item the label that matches its class."""
    items, reviewers, verdicts = [], [], []
    for item, k in enumerate(classes):
        for reviewer in ("ann", "bob"):
            items.append(item)
            reviewers.append(reviewer)
            verdicts.append(labels.LABELS[k])
    return items, reviewers, verdicts


def test_with_every_item_gold_the_parameters_are_smoothed_counts():
    # 12 good, 6 needs_edit, 2 bad, all gold, in one band, so every posterior is exact.
    classes = [0] * 12 + [1] * 6 + [2] * 2
    items, reviewers, verdicts = perfect_pair(classes)
    gold = {i: labels.CLASSES[k] for i, k in enumerate(classes)}
    fit = labels.fit_label_model(
        labels.label_data([5.0] * 20, items, reviewers, verdicts, gold=gold, band_edges=(0, 10))
    )

    # Confusion row of class k: (count + 0.5) / (n_k + 1.5), count n_k on the diagonal.
    expected = np.array(
        [
            [12.5 / 13.5, 0.5 / 13.5, 0.5 / 13.5],
            [0.5 / 7.5, 6.5 / 7.5, 0.5 / 7.5],
            [0.5 / 3.5, 0.5 / 3.5, 2.5 / 3.5],
        ]
    )
    np.testing.assert_allclose(fit.confusion_of("ann"), expected)
    np.testing.assert_allclose(fit.confusion_of("bob"), expected)
    # Overall prior (n_k + 0.5) / 21.5; the one band's prior (n_k + 1 * overall) / 21.
    overall = np.array([12.5, 6.5, 2.5]) / 21.5
    np.testing.assert_allclose(fit.band_prior[0], (np.array([12, 6, 2]) + overall) / 21)
    np.testing.assert_array_equal(fit.posterior, np.eye(3)[classes])


def test_two_perfect_reviewers_who_agree_are_believed():
    classes = [0] * 10 + [1] * 10 + [2] * 10
    items, reviewers, verdicts = perfect_pair(classes)
    fit = labels.fit_label_model(labels.label_data([5.0] * 30, items, reviewers, verdicts))

    assert fit.converged
    assert (fit.posterior.argmax(axis=1) == classes).all()
    assert fit.posterior[np.arange(30), classes].min() > 0.99
    # Were the posteriors exactly one-hot, each diagonal cell would be (10 + 0.5) / 11.5;
    # the residual 1 % of doubt moves it a little below that.
    np.testing.assert_allclose(np.diagonal(fit.confusion_of("ann")), 10.5 / 11.5, atol=0.01)
    assert fit.error[:10].max() < 0.01
    assert fit.bad[20:].min() > 0.99


def test_a_gold_item_is_clamped_to_its_gold_class():
    classes = [0] * 10 + [1] * 10 + [2] * 10
    items, reviewers, verdicts = perfect_pair(classes)
    # Item 0 was approved by both, but adjudication found it bad.
    fit = labels.fit_label_model(
        labels.label_data([5.0] * 30, items, reviewers, verdicts, gold={0: "bad"})
    )

    np.testing.assert_array_equal(fit.posterior[0], [0.0, 0.0, 1.0])
    assert fit.error[0] == 1.0
    assert fit.bad[0] == 1.0
    # Item 1 has the same verdicts and no gold: still good.
    assert fit.posterior[1].argmax() == labels.GOOD


def test_a_reviewer_who_labels_at_random_gets_a_flat_matrix():
    rng = np.random.default_rng(11)
    n = 6000
    classes = rng.choice(3, size=n, p=[0.5, 0.3, 0.2])
    items, reviewers, verdicts = perfect_pair(classes.tolist())
    items += list(range(n))
    reviewers += ["coin"] * n
    verdicts += np.array(labels.LABELS)[rng.integers(0, 3, n)].tolist()
    fit = labels.fit_label_model(
        labels.label_data(rng.uniform(0, 10, n), items, reviewers, verdicts)
    )

    # Every row is P(label | class) = 1/3 for a reviewer who ignores the class; each cell
    # rests on at least 1,200 verdicts, a standard error of at most 0.014.
    np.testing.assert_allclose(fit.confusion_of("coin"), np.full((3, 3), 1 / 3), atol=0.04)
    np.testing.assert_allclose(np.diagonal(fit.confusion_of("ann")), 1.0, atol=0.01)


def test_a_style_only_modify_counts_as_an_approve():
    items, reviewers, verdicts = perfect_pair([0] * 5 + [1] * 5 + [2] * 5)
    scores = [8.0] * 15
    as_modify = list(verdicts)
    as_modify[0] = "modify"  # item 0, by ann, marked style only
    style_only = [False] * len(verdicts)
    style_only[0] = True

    marked = labels.fit_label_model(
        labels.label_data(scores, items, reviewers, as_modify, style_only=style_only)
    )
    approved = labels.fit_label_model(labels.label_data(scores, items, reviewers, verdicts))
    unmarked = labels.fit_label_model(labels.label_data(scores, items, reviewers, as_modify))

    np.testing.assert_array_equal(marked.posterior, approved.posterior)
    assert unmarked.error[0] > approved.error[0] + 0.1


def test_the_fit_does_not_depend_on_the_order_of_the_verdicts():
    history = synthetic_history(seed=5, outputs=3000)
    order = np.random.default_rng(0).permutation(len(history.verdict_item))
    shuffled = labels.label_data(
        history.scores,
        history.verdict_item[order],
        history.verdict_reviewer[order],
        history.verdict_label[order],
    )
    first = labels.fit_label_model(history.label_data())
    again = labels.fit_label_model(history.label_data())

    np.testing.assert_array_equal(first.posterior, again.posterior)
    np.testing.assert_array_equal(first.posterior, labels.fit_label_model(shuffled).posterior)


# ------------------------------------------------------------------ ground truth


@dataclass(frozen=True)
class SimulatedFit:
    history: History
    banded: labels.LabelFit
    global_prior: labels.LabelFit


@pytest.fixture(scope="module")
def simulated() -> list[SimulatedFit]:
    fits = []
    for seed in range(HISTORIES):
        history = synthetic_history(seed, HISTORY_OUTPUTS)
        fits.append(
            SimulatedFit(
                history,
                labels.fit_label_model(history.label_data()),
                labels.fit_label_model(history.label_data(band_edges=GLOBAL_PRIOR)),
            )
        )
    assert all(r.banded.converged and r.global_prior.converged for r in fits)
    return fits


def gaps(simulated: list[SimulatedFit], threshold: float, which: str) -> np.ndarray:
    """Estimated minus true error rate among outputs scoring at least ``threshold``."""
    return np.array(
        [
            estimated_error_above(getattr(r, which), r.history.scores, threshold)
            - r.history.true_error_above(threshold)
            for r in simulated
        ]
    )


@pytest.mark.statistical
@pytest.mark.parametrize("threshold", TOP_THRESHOLDS)
def test_the_error_rate_at_the_top_is_within_two_points_of_the_truth(simulated, threshold):
    # The true rates are about 0.13 above 9.0 and 0.03 above 9.5, on 11,000 and 8,000
    # outputs of 20,000.
    within = np.abs(gaps(simulated, threshold, "banded")) <= 0.02
    assert within.sum() >= 0.9 * HISTORIES


@pytest.mark.statistical
@pytest.mark.parametrize("threshold", TOP_THRESHOLDS)
def test_a_global_prior_overstates_the_error_at_the_top(simulated, threshold):
    banded = np.abs(gaps(simulated, threshold, "banded"))
    global_prior = gaps(simulated, threshold, "global_prior")

    # With one prior for all scores, the outputs reviewed once borrow the error rate of
    # the whole range: every history overstates the top's error by over 5 points.
    assert (global_prior > 0.05).all()
    assert np.abs(global_prior).mean() > 5 * banded.mean()
    true_rates = np.array([r.history.true_error_above(threshold) for r in simulated])
    estimated = true_rates + global_prior
    assert (estimated / true_rates).mean() > 1.5


@pytest.mark.statistical
def test_the_confusion_matrices_are_recovered(simulated):
    found = np.array([confusion_by_name(r.banded) for r in simulated])
    errors = np.abs(found - TRUE_CONFUSION)

    # Each reviewer's good row rests on about 4,000 verdicts a history, the needs_edit and
    # bad rows on 1,000 and 500: every history within 0.03 on the good row and 0.10 on the
    # others...
    assert errors[:, :, labels.GOOD].max() <= 0.03
    assert errors[:, :, labels.NEEDS_EDIT :].max() <= 0.10
    # ...and no cell biased: the mean over the histories is within 0.025 of the truth.
    assert np.abs(found.mean(axis=0) - TRUE_CONFUSION).max() <= 0.025


@pytest.mark.statistical
def test_the_bad_loss_follows_the_truth(simulated):
    below = [r.history.scores < 7.0 for r in simulated]
    gaps_below = np.array(
        [
            float(r.banded.bad[held].mean()) - float((r.history.truth[held] == 2).mean())
            for r, held in zip(simulated, below, strict=True)
        ]
    )
    # Among the outputs below 7 (about 1,900 a history, half of them bad), bad is harder to
    # tell from needs_edit than either is from good: no bias, and every history within
    # 0.04 (the gaps' spread is about 0.011).
    assert abs(gaps_below.mean()) <= 0.01
    assert np.abs(gaps_below).max() <= 0.04


def test_a_hundred_thousand_verdicts_are_fitted_in_under_two_seconds():
    history = synthetic_history(seed=99, outputs=91_000)
    assert len(history.verdict_item) >= 100_000

    # CPU time, coding the verdicts included: on a shared machine the wall clock also
    # counts the other processes' turns.
    started = time.process_time()
    fit = labels.fit_label_model(history.label_data())
    elapsed = time.process_time() - started

    assert fit.converged
    assert elapsed < 2.0


# -------------------------------------------------------------------- bootstrap


def spread_above(bootstrap: labels.LabelBootstrap, scores: np.ndarray, threshold: float) -> float:
    return float(bootstrap.error[:, scores >= threshold].mean(axis=1).std())


def test_bootstrap_replicates_are_reproducible_from_the_seed():
    history = synthetic_history(seed=3, outputs=2000)
    data = history.label_data()
    fit = labels.fit_label_model(data)

    first = labels.bootstrap_label_model(data, fit, replicates=5, seed=42)
    again = labels.bootstrap_label_model(data, fit, replicates=5, seed=42)
    other = labels.bootstrap_label_model(data, fit, replicates=5, seed=43)

    np.testing.assert_array_equal(first.posterior, again.posterior)
    np.testing.assert_array_equal(first.confusion, again.confusion)
    np.testing.assert_array_equal(first.band_prior, again.band_prior)
    assert not np.array_equal(first.posterior, other.posterior)
    assert first.posterior.shape == (5, 2000, 3)
    assert first.converged.all()


@pytest.mark.statistical
def test_bootstrap_spread_shrinks_as_the_data_grows():
    spreads = {}
    for outputs in (2000, 50_000):
        history = synthetic_history(seed=8, outputs=outputs)
        data = history.label_data()
        bootstrap = labels.bootstrap_label_model(
            data, labels.fit_label_model(data), replicates=30, seed=1
        )
        spreads[outputs] = (
            spread_above(bootstrap, history.scores, 9.0),
            float(bootstrap.confusion.std(axis=0).mean()),
        )

    # 25 times the data: standard errors about sqrt(25) = 5 times smaller. Thirty
    # replicates estimate a spread to within about 13 %, and one history's spread varies
    # around its expectation too, hence the wide margins.
    error_small, confusion_small = spreads[2000]
    error_large, confusion_large = spreads[50_000]
    assert 2.5 < error_small / error_large < 10
    assert 3.0 < confusion_small / confusion_large < 8


@pytest.mark.statistical
def test_bootstrap_spread_matches_the_spread_between_histories(simulated):
    # The estimate above 9.0 varies from one history to the next by its standard error;
    # the bootstrap of a single history should find about as much.
    between = np.std(
        [estimated_error_above(r.banded, r.history.scores, 9.0) for r in simulated], ddof=1
    )
    history = simulated[0].history
    data = history.label_data()
    bootstrap = labels.bootstrap_label_model(data, simulated[0].banded, replicates=40, seed=7)

    assert 0.6 < spread_above(bootstrap, history.scores, 9.0) / between < 1.6


# ------------------------------------------------------------------- edge cases


def test_no_verdicts_at_all():
    data = labels.label_data([], [], [], [])
    fit = labels.fit_label_model(data)

    assert fit.converged
    assert fit.posterior.shape == (0, 3)
    assert fit.confusion.shape == (0, 3, 3)
    assert fit.reviewers == ()
    # With nothing to learn from, every band's prior is the Jeffreys prior: a third each.
    np.testing.assert_allclose(fit.band_prior, 1 / 3)
    bootstrap = labels.bootstrap_label_model(data, fit, replicates=2, seed=0)
    assert bootstrap.posterior.shape == (2, 0, 3)


def test_items_without_verdicts_get_their_bands_prior():
    items, reviewers, verdicts = perfect_pair([0] * 8 + [2] * 2)
    scores = [9.8] * 10 + [9.8, 2.0]  # two more items, never reviewed
    fit = labels.fit_label_model(labels.label_data(scores, items, reviewers, verdicts))

    top_band = np.searchsorted(fit.band_edges, 9.8, side="right") - 1
    np.testing.assert_allclose(fit.posterior[10], fit.band_prior[top_band])
    # The band at 2.0 has no judged item, so it takes the prior over all bands, by hand
    # (sum of the judged posteriors + 0.5) / (10 judged items + 1.5).
    overall = (fit.posterior[:10].sum(axis=0) + 0.5) / 11.5
    np.testing.assert_allclose(fit.posterior[11], overall)
    assert fit.band_items[top_band] == 10
    assert fit.band_items.sum() == 10


def test_a_single_reviewer_is_taken_at_their_word():
    rng = np.random.default_rng(4)
    n = 300
    said = rng.choice(3, size=n, p=[0.6, 0.3, 0.1])
    fit = labels.fit_label_model(
        labels.label_data(
            rng.uniform(0, 10, n), np.arange(n), ["solo"] * n, np.array(labels.LABELS)[said]
        )
    )

    # Alone, a reviewer's mistakes cannot be told from the truth: nothing disagrees.
    assert fit.converged
    assert fit.reviewers == ("solo",)
    assert (fit.posterior.argmax(axis=1) == said).all()
    matrix = fit.confusion_of("solo")
    assert (np.diagonal(matrix) > 0.8).all()


def test_an_empty_band_changes_nothing_and_takes_the_overall_prior():
    history = synthetic_history(seed=2, outputs=3000)
    history = History(
        scores=np.where(history.scores < 8.0, history.scores / 2, history.scores),
        truth=history.truth,
        verdict_item=history.verdict_item,
        verdict_reviewer=history.verdict_reviewer,
        verdict_label=history.verdict_label,
    )
    # No score lies in [4, 8): the middle band is empty.
    # Tight tolerances, so that the two fits, whose EM paths differ, meet at one point.
    with_gap = labels.fit_label_model(
        history.label_data(band_edges=(0, 4, 8, 10)), tolerance=1e-11, max_steps=20_000
    )
    without = labels.fit_label_model(
        history.label_data(band_edges=(0, 8, 10)), tolerance=1e-11, max_steps=20_000
    )

    assert with_gap.band_items.tolist()[1] == 0
    np.testing.assert_allclose(with_gap.posterior, without.posterior, atol=1e-7)
    np.testing.assert_allclose(with_gap.band_prior[[0, 2]], without.band_prior, atol=1e-7)
    # Its prior is the overall one: (sum of posteriors + 0.5) / (items + 1.5), by hand.
    overall = (with_gap.posterior.sum(axis=0) + 0.5) / (len(history.scores) + 1.5)
    np.testing.assert_allclose(with_gap.band_prior[1], overall)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"verdict_label": ["accept"]}, "unknown labels"),
        ({"scores": [10.5]}, "within the bands"),
        ({"verdict_item": [3]}, "must index scores"),
        ({"gold": {0: "great"}}, "unknown gold class"),
        ({"band_edges": (0, 5, 5, 10)}, "increasing"),
    ],
)
def test_bad_inputs_are_refused(kwargs, message):
    arguments = {
        "scores": [5.0],
        "verdict_item": [0],
        "verdict_reviewer": ["ann"],
        "verdict_label": ["approve"],
    }
    with pytest.raises(ValueError, match=message):
        labels.label_data(**{**arguments, **kwargs})


# ------------------------------------------------------------- against a reference
#
# The model written out again, item by item with loops (no patterns, no sparse sums, no
# batches), from the module's description: Dawid and Skene's EM with Jeffreys' 0.5 per
# confusion cell and per class of the prior over all bands, each band's prior pulled toward
# that one by 1 pseudo-output (and, with strata, each stratum's band toward the score band
# of all strata by 20), starting from each item's share of votes with gold clamped; sped up
# by SQUAREM's scheme S3 as Varadhan and Roland (2008) give it: from x, r = F(x) - x and
# v = F(F(x)) - F(x) - r, the step length a = min(-1, -|r| / |v|), the point
# x - 2 a r + a^2 v (the plain two steps F(F(x)) at a = -1), then one more EM step. A point
# with a probability at or below 0 halves a's distance to -1 until it is inside, or a is
# within 0.01 of -1, where the plain step is taken. It stops when one EM step moves no
# probability by the tolerance, or after the most steps allowed.


@dataclass
class Reference:
    band: list  # item -> band (stratum x bands + score band)
    votes: list  # item -> [(reviewer index, label index)]
    gold: list  # item -> class index or None
    reviewers: list
    bands: int
    strata: int

    @classmethod
    def of(cls, scores, items, reviewers, given, *, gold=None, edges=(0, 5, 10), strata=None):
        names = sorted(set(reviewers))
        per_stratum = len(edges) - 1
        band = []
        for i, s in enumerate(scores):
            b = max(k for k in range(per_stratum) if edges[k] <= s)
            band.append((0 if strata is None else strata[i]) * per_stratum + b)
        votes = [[] for _ in scores]
        for item, reviewer, label in zip(items, reviewers, given, strict=True):
            votes[item].append((names.index(reviewer), labels.LABELS.index(label)))
        gold_class = [None] * len(scores)
        for item, name in (gold or {}).items():
            gold_class[item] = labels.CLASSES.index(name)
        count = 1 if strata is None else max(strata) + 1
        return cls(band, votes, gold_class, names, count * per_stratum, count)

    def judged(self, i):
        return bool(self.votes[i]) or self.gold[i] is not None

    def m_step(self, posterior, weight):
        confusion = np.full((len(self.reviewers), 3, 3), 0.5)
        counts = np.zeros((self.bands, 3))
        for i, votes in enumerate(self.votes):
            for r, label in votes:
                confusion[r, :, label] += weight[i] * posterior[i]
            if self.judged(i):
                counts[self.band[i]] += weight[i] * posterior[i]
        confusion /= confusion.sum(axis=2, keepdims=True)
        overall = counts.sum(axis=0) + 0.5
        overall /= overall.sum()
        per = self.bands // self.strata
        pooled = np.array([counts[b::per].sum(axis=0) + overall for b in range(per)])
        pooled /= pooled.sum(axis=1, keepdims=True)
        if self.strata == 1:
            return confusion, pooled
        prior = np.array([counts[b] + 20 * pooled[b % per] for b in range(self.bands)])
        return confusion, prior / prior.sum(axis=1, keepdims=True)

    def e_step(self, confusion, prior):
        posterior, log_likelihood = [], []
        for i, votes in enumerate(self.votes):
            joint = prior[self.band[i]].copy()
            for r, label in votes:
                joint = joint * confusion[r, :, label]
            if self.gold[i] is not None:
                joint = np.where(np.arange(3) == self.gold[i], joint, 0.0)
            posterior.append(joint / joint.sum())
            log_likelihood.append(math.log(joint.sum()))
        return np.array(posterior), np.array(log_likelihood)

    def initial(self):
        posterior = []
        for i, votes in enumerate(self.votes):
            if self.gold[i] is not None:
                posterior.append(np.eye(3)[self.gold[i]])
            elif votes:
                posterior.append(
                    np.bincount([label for _, label in votes], minlength=3) / len(votes)
                )
            else:
                posterior.append(np.full(3, 1 / 3))
        return np.array(posterior)

    def pack(self, parameters):
        return np.concatenate([parameters[0].ravel(), parameters[1].ravel()])

    def unpack(self, x):
        split = len(self.reviewers) * 9
        return x[:split].reshape(-1, 3, 3), x[split:].reshape(-1, 3)

    def fit(self, *, weight=None, start=None, tolerance=labels.TOLERANCE, max_steps=2000):
        """(confusion, band prior, posterior, log-likelihood, steps, converged)."""
        if weight is None:
            weight = [1.0 if self.judged(i) else 0.0 for i in range(len(self.votes))]

        def em(x):
            return self.pack(self.m_step(self.e_step(*self.unpack(x))[0], weight))

        x = self.pack(start or self.m_step(self.initial(), weight))
        steps, converged = 0, False
        while True:
            first = em(x)
            steps += 1
            if np.abs(first - x).max() < tolerance:
                x, converged = first, True
                break
            if steps >= max_steps:
                x = first
                break
            second = em(first)
            steps += 1
            r = first - x
            v = second - first - r
            a = min(-np.linalg.norm(r) / np.linalg.norm(v), -1.0) if np.any(v) else -1.0
            point = second
            while a < -1.0:
                trial = x - 2 * a * r + a**2 * v
                if trial.min() > 0:
                    point = trial
                    break
                a = (a - 1.0) / 2 if a < -1.01 else -1.0
            x = em(point)
            steps += 1
            if steps >= max_steps:
                break
        confusion, prior = self.unpack(x)
        posterior, log_likelihood = self.e_step(confusion, prior)
        return confusion, prior, posterior, float(log_likelihood @ weight), steps, converged


def small_history(seed=0, n=40):
    """Three reviewers of unequal care, two score bands, a quarter of the items reviewed
    twice, two gold items (one good against its verdict), one item never judged and one
    judged by gold alone."""
    rng = np.random.default_rng(seed)
    truth = rng.choice(3, size=n, p=[0.6, 0.25, 0.15])
    scores = np.where(truth == 0, rng.uniform(5, 10, n), rng.uniform(0, 7, n))
    care = {"ann": 0.9, "bob": 0.7, "cy": 0.5}
    items, reviewers, given = [], [], []
    for i in range(n - 2):
        for name in rng.choice(list(care), size=1 + (rng.random() < 0.25), replace=False):
            said = truth[i] if rng.random() < care[name] else rng.integers(0, 3)
            items.append(i)
            reviewers.append(str(name))
            given.append(labels.LABELS[said])
    gold = {0: "good", 3: "bad", n - 1: "needs_edit"}
    given[items.index(0)] = "reject"
    return scores, items, reviewers, given, gold


def assert_fit_is(fit, expected):
    confusion, prior, posterior, log_likelihood, steps, converged = expected
    np.testing.assert_allclose(fit.confusion, confusion, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(fit.band_prior, prior, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(fit.posterior, posterior, rtol=1e-9, atol=1e-12)
    assert fit.log_likelihood == pytest.approx(log_likelihood, rel=1e-12)
    assert (fit.steps, fit.converged) == (steps, converged)


@pytest.mark.parametrize("max_steps", [1, 2, 3, 4, 7, 2000])
def test_the_fit_is_the_reference_step_by_step(max_steps):
    scores, items, reviewers, given, gold = small_history()
    reference = Reference.of(scores, items, reviewers, given, gold=gold)
    data = labels.label_data(scores, items, reviewers, given, gold=gold, band_edges=(0, 5, 10))
    fit = labels.fit_label_model(data, max_steps=max_steps)
    assert_fit_is(fit, reference.fit(max_steps=max_steps))
    assert fit.reviewers == ("ann", "bob", "cy")
    np.testing.assert_array_equal(fit.band_edges, [0, 5, 10])
    np.testing.assert_array_equal(fit.error, fit.posterior[:, 1] + fit.posterior[:, 2])
    np.testing.assert_array_equal(fit.bad, fit.posterior[:, 2])


def test_the_fit_is_the_reference_with_strata():
    scores, items, reviewers, given, gold = small_history(seed=1, n=60)
    strata = [i % 3 for i in range(60)]
    reference = Reference.of(scores, items, reviewers, given, gold=gold, strata=strata)
    data = labels.label_data(
        scores, items, reviewers, given, gold=gold, band_edges=(0, 5, 10), strata=strata
    )
    for max_steps in (1, 5, 2000):
        assert_fit_is(
            labels.fit_label_model(data, max_steps=max_steps), reference.fit(max_steps=max_steps)
        )


def test_the_fit_is_the_reference_to_any_tolerance():
    scores, items, reviewers, given, gold = small_history(seed=2)
    reference = Reference.of(scores, items, reviewers, given, gold=gold)
    data = labels.label_data(scores, items, reviewers, given, gold=gold, band_edges=(0, 5, 10))
    for tolerance in (1e-2, 1e-4, 1e-10):
        assert_fit_is(
            labels.fit_label_model(data, tolerance=tolerance),
            reference.fit(tolerance=tolerance),
        )


def reference_bootstrap(reference, fit, *, replicates, seed, **kwargs):
    """Each replicate as Efron's bootstrap draws it from ``np.random.default_rng(seed)``:
    as many judged items as there are, uniformly with replacement, one replicate after
    another; refitted from ``fit``'s parameters with each item counted as often as drawn."""
    rng = np.random.default_rng(seed)
    judged = [i for i in range(len(reference.votes)) if reference.judged(i)]
    fits = []
    for _ in range(replicates):
        drawn = np.array(judged)[rng.integers(0, len(judged), size=len(judged))]
        weight = np.bincount(drawn, minlength=len(reference.votes)).astype(float)
        start = (np.asarray(fit.confusion), np.asarray(fit.band_prior))
        fits.append(reference.fit(weight=weight, start=start, **kwargs))
    return fits


@pytest.mark.parametrize("max_steps", [1, 4, 2000])
def test_the_bootstrap_is_the_reference_replicate_by_replicate(max_steps):
    scores, items, reviewers, given, gold = small_history(seed=3)
    reference = Reference.of(scores, items, reviewers, given, gold=gold)
    data = labels.label_data(scores, items, reviewers, given, gold=gold, band_edges=(0, 5, 10))
    fit = labels.fit_label_model(data)
    bootstrap = labels.bootstrap_label_model(data, fit, replicates=4, seed=9, max_steps=max_steps)
    expected = reference_bootstrap(reference, fit, replicates=4, seed=9, max_steps=max_steps)

    assert bootstrap.seed == 9 and bootstrap.replicates == 4
    for b, (confusion, prior, posterior, _, steps, converged) in enumerate(expected):
        np.testing.assert_allclose(bootstrap.confusion[b], confusion, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(bootstrap.band_prior[b], prior, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(bootstrap.posterior[b], posterior, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(bootstrap.bad[b], posterior[:, 2], rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(
            bootstrap.error[b], posterior[:, 1] + posterior[:, 2], rtol=1e-9, atol=1e-12
        )
        assert (bootstrap.steps[b], bootstrap.converged[b]) == (steps, converged)
    # The replicates stop at different steps: each on its own.
    if max_steps == 2000:
        assert len({steps for *_, steps, _ in expected}) > 1


def test_the_bootstrap_to_any_tolerance():
    scores, items, reviewers, given, gold = small_history(seed=4)
    reference = Reference.of(scores, items, reviewers, given, gold=gold)
    data = labels.label_data(scores, items, reviewers, given, gold=gold, band_edges=(0, 5, 10))
    fit = labels.fit_label_model(data)
    bootstrap = labels.bootstrap_label_model(data, fit, replicates=2, seed=1, tolerance=1e-9)
    expected = reference_bootstrap(reference, fit, replicates=2, seed=1, tolerance=1e-9)
    for b, (confusion, *_, steps, converged) in enumerate(expected):
        np.testing.assert_allclose(bootstrap.confusion[b], confusion, rtol=1e-9, atol=1e-12)
        assert (bootstrap.steps[b], bootstrap.converged[b]) == (steps, converged)


def test_one_replicate_of_one_judged_item():
    data = labels.label_data([5.0, 6.0], [1], ["ann"], ["reject"])
    fit = labels.fit_label_model(data)
    bootstrap = labels.bootstrap_label_model(data, fit, replicates=1, seed=0)
    assert bootstrap.replicates == 1
    # The one judged item drawn once: the same data, refitted from its own fit.
    np.testing.assert_allclose(bootstrap.confusion[0], fit.confusion, atol=1e-6)
    np.testing.assert_allclose(bootstrap.posterior[0], fit.posterior, atol=1e-6)


@pytest.mark.parametrize("replicates", [0, -1])
def test_no_replicates_are_refused(replicates):
    data = labels.label_data([5.0], [0], ["ann"], ["approve"])
    with pytest.raises(ValueError, match=r"^replicates must be at least 1$"):
        labels.bootstrap_label_model(
            data, labels.fit_label_model(data), replicates=replicates, seed=0
        )


def test_fits_and_replicates_are_read_only():
    scores, items, reviewers, given, gold = small_history()
    data = labels.label_data(scores, items, reviewers, given, gold=gold)
    fit = labels.fit_label_model(data)
    bootstrap = labels.bootstrap_label_model(data, fit, replicates=1, seed=0)
    arrays = [getattr(data, name) for name in ("scores", "band_edges", "item_band", "gold")]
    arrays += [data.item_pattern, data.pattern_cells, data.pattern_band, data.pattern_gold]
    arrays += [fit.posterior, fit.confusion, fit.band_prior, fit.band_items]
    arrays += [bootstrap.confusion, bootstrap.band_prior, bootstrap.steps]
    arrays += [bootstrap.converged, bootstrap.pattern_posterior]
    for array in arrays:
        assert not array.flags.writeable
        with pytest.raises(ValueError, match="read-only"):
            array[(0,) * array.ndim] = 0


# ------------------------------------------------------------------- coding the inputs


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"band_edges": (0, 5, 5, 10)}, "band_edges must be at least two increasing numbers"),
        ({"band_edges": (10, 5, 0)}, "band_edges must be at least two increasing numbers"),
        ({"band_edges": (10,)}, "band_edges must be at least two increasing numbers"),
        ({"band_edges": [[0, 10]]}, "band_edges must be at least two increasing numbers"),
        ({"scores": [float("nan")]}, "scores must be finite"),
        ({"scores": [float("inf")]}, "scores must be finite"),
        ({"scores": [10.5]}, "scores must lie within the bands, [0, 10]"),
        ({"scores": [-0.5]}, "scores must lie within the bands, [0, 10]"),
        (
            {"scores": [2.0], "band_edges": (2.5, 7.5)},
            "scores must lie within the bands, [2.5, 7.5]",
        ),
        ({"strata": [0, 0]}, "strata must give each score a stratum, 0 or more"),
        ({"strata": [-1]}, "strata must give each score a stratum, 0 or more"),
        ({"strata": [0.0]}, "strata must give each score a stratum, 0 or more"),
        (
            {"verdict_reviewer": ["ann", "bob"]},
            "verdict_item, verdict_reviewer and verdict_label differ in length",
        ),
        (
            {"verdict_label": ["approve", "reject"]},
            "verdict_item, verdict_reviewer and verdict_label differ in length",
        ),
        ({"verdict_item": [1]}, "verdict_item must index scores"),
        ({"verdict_item": [-1]}, "verdict_item must index scores"),
        (
            {"verdict_label": ["zap"]},
            "unknown labels ['zap']; labels are ('approve', 'modify', 'reject')",
        ),
        ({"style_only": [True, False]}, "style_only must have one entry per verdict"),
        ({"gold": {1: "good"}}, "gold names item 1, which has no score"),
        ({"gold": {-1: "good"}}, "gold names item -1, which has no score"),
        (
            {"gold": {0: "fine"}},
            "unknown gold class 'fine'; classes are ('good', 'needs_edit', 'bad')",
        ),
    ],
)
def test_each_refusal_says_what_is_wrong(kwargs, message):
    arguments = {
        "scores": [5.0],
        "verdict_item": [0],
        "verdict_reviewer": ["ann"],
        "verdict_label": ["approve"],
    }
    with pytest.raises(ValueError) as refused:
        labels.label_data(**{**arguments, **kwargs})
    assert str(refused.value) == message


def test_unknown_labels_are_listed_in_order():
    with pytest.raises(ValueError) as refused:
        labels.label_data([5.0] * 3, [0, 0, 0], ["a", "b", "c"], ["zap", "approve", "accept"])
    assert str(refused.value).startswith("unknown labels ['accept', 'zap']; ")


def test_scores_on_an_edge_go_to_the_band_above_and_the_top_to_the_last():
    scores = [0.0, 2.5, 4.999, 5.0, 9.999, 10.0]
    data = labels.label_data(scores, [], [], [], band_edges=(0, 5, 10))
    np.testing.assert_array_equal(data.item_band, [0, 0, 0, 1, 1, 1])
    assert data.n_items == 6 and data.n_bands == 2 and data.strata == 1
    np.testing.assert_array_equal(data.scores, scores)
    np.testing.assert_array_equal(data.band_edges, [0, 5, 10])
    # With strata, stratum s's band b is s x 2 + b; three strata from the largest, 2.
    data = labels.label_data(scores, [], [], [], band_edges=(0, 5, 10), strata=[2, 0, 0, 2, 1, 0])
    np.testing.assert_array_equal(data.item_band, [4, 0, 0, 5, 3, 1])
    assert data.strata == 3 and data.n_bands == 6
    # No scores, no strata: one stratum.
    data = labels.label_data([], [], [], [], strata=np.zeros(0, dtype=int))
    assert data.strata == 1 and data.n_items == 0


def test_the_verdicts_are_coded_as_patterns():
    # Item 0: ann approves, bob rejects (given in the other order); item 1: the same
    # verdicts; item 2: bob's style-only modify, an approve; item 3: bob's modify and a
    # style-only reject, which stays a reject; item 4: gold, no verdict; item 5: nothing.
    scores = [9.0, 9.0, 9.0, 2.0, 2.0, 9.0]
    items = [0, 0, 1, 1, 2, 3, 3]
    reviewers = ["bob", "ann", "ann", "bob", "bob", "bob", "bob"]
    given = ["reject", "approve", "approve", "reject", "modify", "modify", "reject"]
    style_only = [False, False, False, False, True, False, True]
    data = labels.label_data(
        scores,
        items,
        reviewers,
        given,
        style_only=style_only,
        gold={4: "bad"},
        band_edges=(0, 5, 10),
    )
    assert data.reviewers == ("ann", "bob")
    np.testing.assert_array_equal(data.gold, [-1, -1, -1, -1, 2, -1])
    # Cells are reviewer x 3 + label: ann approve 0, bob approve 3, bob modify 4, bob
    # reject 5. Rows (band, gold, cells...), padded with -1, distinct and in ascending order:
    rows = {
        0: (1, -1, 0, 5),
        1: (1, -1, 0, 5),
        2: (1, -1, 3, -1),
        3: (0, -1, 4, 5),
        4: (0, 2, -1, -1),
        5: (1, -1, -1, -1),
    }
    distinct = sorted(set(rows.values()))
    np.testing.assert_array_equal(data.pattern_band, [r[0] for r in distinct])
    np.testing.assert_array_equal(data.pattern_gold, [r[1] for r in distinct])
    np.testing.assert_array_equal(data.pattern_cells, [r[2:] for r in distinct])
    np.testing.assert_array_equal(data.item_pattern, [distinct.index(rows[i]) for i in range(6)])
    np.testing.assert_array_equal(data.judged, [True, True, True, True, True, False])
    np.testing.assert_array_equal(data.pattern_judged, [row != (1, -1, -1, -1) for row in distinct])
    # The sums of the M-step: verdict cells by pattern, bands by pattern.
    cells, bands = data.sums
    assert cells.shape == (6, 5) and bands.shape == (2, 5)
    expected_cells = np.zeros((6, 5))
    for p, row in enumerate(distinct):
        for cell in row[2:]:
            if cell >= 0:
                expected_cells[cell, p] += 1
    np.testing.assert_array_equal(cells.toarray(), expected_cells)
    np.testing.assert_array_equal(bands.toarray(), np.eye(2)[[r[0] for r in distinct]].T)


def test_reviewers_of_any_sortable_kind():
    # Reviewers 7 and 3, coded 1 and 0 in sorted order: item 0's approve by 7 is cell 3,
    # item 1's modify by 3 and reject by 7 cells 1 and 5.
    data = labels.label_data([5.0, 5.0], [0, 1, 1], [7, 3, 7], ["approve", "modify", "reject"])
    assert data.reviewers == (3, 7)
    np.testing.assert_array_equal(data.pattern_cells, [[1, 5], [3, -1]])


def test_inputs_of_other_types_are_read_as_the_plain_ones():
    # Scores and edges as Decimal (PostgreSQL's numeric), items as whole floats, labels as
    # bytes, strata as 32-bit integers: the same data as floats, integers and text.
    scores, items, reviewers, given, gold = small_history(seed=5, n=12)
    strata = [i % 2 for i in range(12)]
    plain = labels.label_data(
        scores, items, reviewers, given, gold=gold, band_edges=(0, 5, 10), strata=strata
    )
    other = labels.label_data(
        [Decimal(str(s)) for s in scores],
        [float(i) for i in items],
        reviewers,
        np.array([g.encode() for g in given]),
        gold=gold,
        band_edges=(Decimal(0), Decimal(5), Decimal(10)),
        strata=np.array(strata, dtype=np.int32),
    )
    for name in ("scores", "band_edges", "item_band", "gold", "item_pattern", "pattern_cells"):
        np.testing.assert_array_equal(getattr(other, name), getattr(plain, name))
    assert other.scores.dtype == other.band_edges.dtype == np.float64
    assert other.reviewers == plain.reviewers and other.strata == plain.strata == 2
    fit = labels.fit_label_model(other)
    np.testing.assert_array_equal(fit.posterior, labels.fit_label_model(plain).posterior)
    assert fit.band_edges.dtype == np.float64
    np.testing.assert_array_equal(fit.band_items, labels.fit_label_model(plain).band_items)


def test_counts_and_flags_are_integers_and_booleans():
    scores, items, reviewers, given, gold = small_history(seed=6, n=12)
    data = labels.label_data(scores, items, reviewers, given, gold=gold, band_edges=(0, 5, 10))
    fit = labels.fit_label_model(data, max_steps=3)
    assert isinstance(fit.steps, int) and isinstance(fit.converged, bool)
    assert isinstance(fit.log_likelihood, float)
    assert fit.band_items.dtype.kind == "i"
    bootstrap = labels.bootstrap_label_model(data, fit, replicates=2, seed=0, max_steps=3)
    assert bootstrap.steps.dtype.kind == "i" and bootstrap.converged.dtype == bool
    assert data.item_band.dtype.kind == data.item_pattern.dtype.kind == "i"


def test_every_band_counts_its_judged_items_even_the_empty_ones_at_the_top():
    # Judged items at 1.0, 1.0 and 3.0 (and one never judged at 9.9), with the default
    # quarter-point bands: bands 4 and 12 hold them; the 36 others, up to the top, none.
    data = labels.label_data([1.0, 1.0, 3.0, 9.9], [0, 1, 2], ["a", "a", "b"], ["approve"] * 3)
    fit = labels.fit_label_model(data)
    expected = np.zeros(40, dtype=int)
    expected[4], expected[12] = 2, 1
    np.testing.assert_array_equal(fit.band_items, expected)


def test_with_no_tolerance_a_fit_at_its_fixed_point_runs_to_the_most_steps():
    # Every item gold: the first EM step lands on the fixed point, where both steps of
    # SQUAREM move nothing (r = v = 0): the plain step, again and again, never converged at
    # a tolerance of 0, up to the most steps.
    classes = [0] * 6 + [1] * 3 + [2] * 3
    items, reviewers, verdicts = perfect_pair(classes)
    gold = {i: labels.CLASSES[k] for i, k in enumerate(classes)}
    data = labels.label_data([5.0] * 12, items, reviewers, verdicts, gold=gold)
    fit = labels.fit_label_model(data, tolerance=0.0, max_steps=7)
    assert (fit.steps, fit.converged) == (7, False)
    np.testing.assert_array_equal(fit.posterior, np.eye(3)[classes])


def test_a_step_that_moves_exactly_the_tolerance_has_not_converged():
    # "EM stops when one step moves no probability by this much": a first step whose
    # largest move is exactly the tolerance goes on; a hair more tolerance stops it there.
    scores, items, reviewers, given, gold = small_history(seed=7, n=20)
    data = labels.label_data(scores, items, reviewers, given, gold=gold, band_edges=(0, 5, 10))
    weight = np.bincount(data.item_pattern[data.judged], minlength=len(data.pattern_cells))
    weight = weight[None, :].astype(float)
    start = labels._pack(labels._m_step(data, labels._initial_posterior(data)[:, None], weight))
    moved = float(np.abs(labels._em_step(data, start, weight) - start).max())
    assert labels.fit_label_model(data, tolerance=moved).steps > 1
    stopped = labels.fit_label_model(data, tolerance=np.nextafter(moved, 1.0))
    assert (stopped.steps, stopped.converged) == (1, True)


@pytest.mark.parametrize("max_steps", [8, 2000])
def test_the_fit_is_the_reference_where_an_extrapolation_is_halved_several_times(max_steps):
    # In this history, by the reference, the SQUAREM step of steps 6 to 8 lands outside from
    # a = -4.05, and again from -2.52 and -1.76, before it is inside at -1.38; a later one
    # from -5.13 and -3.06, inside at -2.03.
    scores, items, reviewers, given, gold = small_history(seed=52, n=20)
    reference = Reference.of(scores, items, reviewers, given, gold=gold)
    data = labels.label_data(scores, items, reviewers, given, gold=gold, band_edges=(0, 5, 10))
    fit = labels.fit_label_model(data, max_steps=max_steps)
    assert_fit_is(fit, reference.fit(max_steps=max_steps))


def test_columns_of_any_shape_are_read_flat():
    scores, items, reviewers, given, gold = small_history(seed=8, n=12)
    style_only = [label == "modify" and k % 2 == 0 for k, label in enumerate(given)]
    strata = [i % 2 for i in range(12)]
    flat = labels.label_data(
        scores, items, reviewers, given, style_only=style_only, gold=gold, strata=strata
    )

    def column(values):
        return np.asarray(values).reshape(-1, 1)

    shaped = labels.label_data(
        column(scores),
        column(items),
        column(reviewers),
        column(given),
        style_only=column(style_only),
        gold=gold,
        strata=column(strata),
    )
    for name in ("scores", "item_band", "gold", "item_pattern", "pattern_cells"):
        np.testing.assert_array_equal(getattr(shaped, name), getattr(flat, name))
    assert shaped.reviewers == flat.reviewers


def test_with_no_verdicts_the_patterns_have_no_cells():
    data = labels.label_data([1.0, 9.0, 9.0], [], [], [], gold={0: "bad"})
    assert data.pattern_cells.shape == (2, 0)
    np.testing.assert_array_equal(data.item_pattern, [0, 1, 1])


# ------------------------------------------------------------- SQUAREM's safeguards
#
# Cases the fits above do not meet, on an EM map written as a table: the test sets each
# step's result, so that which point SQUAREM steps from is seen in where it ends. One
# reviewer and one band: twelve parameters. Values are multiples of powers of two where the
# arithmetic must be exact.

FIXED = np.full(12, 0.25)  # where the planned path ends
ELSEWHERE = np.full(12, 0.75)  # where any step off the planned path ends


def planned_em(monkeypatch, path):
    """Replace the EM step by the map ``path`` (each point's next), FIXED and ELSEWHERE
    being fixed points and every other point going to ELSEWHERE."""
    table = {np.asarray(a, float).tobytes(): np.asarray(b, float) for a, b in path}
    table[FIXED.tobytes()] = FIXED

    def em_step(data, packed, weight):
        return np.array([table.get(row.tobytes(), ELSEWHERE) for row in packed])

    monkeypatch.setattr(labels, "_em_step", em_step)


def run_planned(x):
    data = labels.label_data([5.0], [0], ["ann"], ["approve"], band_edges=(0, 10))
    start = labels._unpack(data, np.asarray(x, float)[None])
    solution = labels._run_em(data, start, np.ones((1, 1)), tolerance=1e-6, max_steps=50)
    return labels._pack(solution.parameters)[0], int(solution.steps[0]), bool(solution.converged[0])


def rest(*values):
    return np.r_[values, np.full(12 - len(values), 0.5)]


def test_an_extrapolation_that_halving_cannot_bring_inside_takes_the_plain_step(monkeypatch):
    # The first parameter falls from 0.501 to 0.005 in the second step: from a = -1.47 the
    # point is outside (its first parameter at or below 0), and still after each halving of
    # a's distance to -1, down to -1.0074; within 0.01 of -1 the plain step, F(F(x)), is
    # taken, and goes on to FIXED. Steps: two, then the one after the extrapolation, then
    # one at FIXED, which moves nothing.
    x, first, second = rest(0.908, 0.755), rest(0.501, 0.845), rest(0.005, 0.666)
    planned_em(monkeypatch, [(x, first), (first, second), (second, FIXED)])
    end, steps, converged = run_planned(x)
    np.testing.assert_array_equal(end, FIXED)
    assert (steps, converged) == (4, True)


def test_two_steps_by_the_same_vector_take_the_plain_step(monkeypatch):
    # v = F(F(x)) - 2 F(x) + x = 0: nothing to extrapolate along, a = -1 (here |r| is
    # 0.3125 x sqrt(12) = 1.08, over 1).
    x, first, second = np.full(12, 0.0625), np.full(12, 0.375), np.full(12, 0.6875)
    planned_em(monkeypatch, [(x, first), (first, second), (second, FIXED)])
    end, steps, converged = run_planned(x)
    np.testing.assert_array_equal(end, FIXED)
    assert (steps, converged) == (4, True)


def test_a_probability_of_exactly_zero_is_outside(monkeypatch):
    # One parameter: 0.5, then 0.25, then 0.125 (r = -0.25, v = 0.125, a = -|r| / |v| = -2):
    # the extrapolation x - 2 a r + a^2 v puts it at exactly 0, which is outside; halved to
    # a = -1.5 it is 0.5 - 0.75 + 0.28125 = 0.03125, inside, and that point goes to FIXED.
    x, first, second = rest(0.5), rest(0.25), rest(0.125)
    halved = rest(0.03125)
    planned_em(monkeypatch, [(x, first), (first, second), (halved, FIXED)])
    end, steps, converged = run_planned(x)
    np.testing.assert_array_equal(end, FIXED)
    assert (steps, converged) == (4, True)
