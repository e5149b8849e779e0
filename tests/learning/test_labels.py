"""The score-banded Dawid-Skene label model against hand computations and the simulated
world's ground truth.

The synthetic histories use the world's own pieces: each output's truth, validator results,
clarity and coherence come from ``world.day_traffic`` (so truths are drawn per task type
and model as the world draws them), and its score is the gate's ADR-0003 base score of
those (``scoring.base_score``), less the hallucination penalty when a fact check that the
task type requires failed; there is no pair bonus, as for a pair with a short record. A
reviewer from ``DEFAULT_REVIEWERS``, picked uniformly, decides each output by their
confusion matrix (``Reviewer.decide``'s draw, vectorised), and about 10 % of outputs get a
second verdict from a different reviewer.
"""

import time
from dataclasses import dataclass
from datetime import date

import numpy as np
import pytest

from gating import scoring
from learning.simulation import world
from learning.statistics import labels

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


@pytest.mark.parametrize("threshold", TOP_THRESHOLDS)
def test_the_error_rate_at_the_top_is_within_two_points_of_the_truth(simulated, threshold):
    # The true rates are about 0.13 above 9.0 and 0.03 above 9.5, on 11,000 and 8,000
    # outputs of 20,000.
    within = np.abs(gaps(simulated, threshold, "banded")) <= 0.02
    assert within.sum() >= 0.9 * HISTORIES


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
