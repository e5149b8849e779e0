"""What each judged output truly was, estimated from noisy reviewer verdicts.

A reviewer's "approved unchanged" is not the truth: some reviewers are harsh, some
lenient, some careless. This is the Dawid-Skene label model (Dawid and Skene, 1979,
"Maximum likelihood estimation of observer error-rates using the EM algorithm") with one
change: the prior on an output's latent class depends on its score, by score band.

* Latent classes (``CLASSES``): good, needs_edit, bad.
* Observed labels (``LABELS``): approve, modify, reject. A modify that the reviewer
  marked "style only" counts as an approve: the output was fine and the edit a matter of
  taste, so it is evidence of good, not of needs_edit.
* Each reviewer has one 3 x 3 confusion matrix, P(label | class), pooled over task
  types: a reviewer's habits go with the reviewer, and pooling gives each matrix all of
  that reviewer's verdicts.
* An output with a gold label (an adjudicated double review) has its posterior clamped
  to it; it still teaches the model about the reviewers who judged it.
* Optionally, items fall in strata (the cycles use task types): each stratum then has its
  own prior per score band, drawn toward the same band of all strata.

The fit is unweighted. The prior it learns is P(class | band) among judged outputs, the
right prior for their posteriors; judging depends on the score (and the task type), not
on the verdicts, so banding by score already absorbs most of that selection. Weights for
the traffic each output stands for belong in whatever averages the posteriors.

EM, with Dirichlet smoothing in each M-step, starts from each output's share of votes,
so the fit is deterministic. Pure numpy: no ORM, no Django.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np
from scipy import sparse

from learning.statistics.rows import unique_rows

CLASSES = ("good", "needs_edit", "bad")
LABELS = ("approve", "modify", "reject")
GOOD, NEEDS_EDIT, BAD = range(3)
APPROVE, MODIFY, REJECT = range(3)

# Why the prior follows the score: most outputs are reviewed once, so their posterior is
# mostly prior, and with one prior for all scores the many low-scoring needs_edit and
# bad outputs lend their error rate to the top of the range, where it is then several
# times too high.
# Why bands rather than a smooth function of the score (say, multinomial logistic): the
# ADR-0003 score is a step function of the validators plus a continuous term, so
# P(class | score) jumps where one more validator fails. A smooth function misfits
# exactly there, and that misfit is a bias that more data never removes; a band's prior
# is the mean posterior of its own outputs, whatever the shape inside it.
# Why a quarter point: on the simulated world, with 2,000 to 20,000 judged outputs,
# half-point bands left a bias of up to 0.02 in the error above 9.7 and 9.8 (the error
# still falls steeply inside a band), and tenth-point bands one of up to 0.02 at the top
# with 2,000 judged outputs (too few in each band). Quarter points had the lowest worst
# case above 9.5 to 9.8, a root-mean-square error of 0.019 against 0.024 and 0.027, and
# put edges on the approve thresholds that matter most (9.0, 9.5, 9.75). The last band is
# closed, so that 10.0 falls in it.
DEFAULT_BAND_EDGES = tuple(np.round(np.arange(0.0, 10.01, 0.25), 2))

# Jeffreys' pseudo-count per cell of a confusion matrix (and per class of the prior over
# all bands): a reviewer who has not yet rejected anything keeps a small, non-zero chance
# of doing so, so that a first reject is not an impossible event (log-likelihood minus
# infinity), and a reviewer's matrix is never exactly singular.
PSEUDOCOUNT = 0.5
# Each band's prior is pulled toward the prior over all bands by this many pseudo-outputs:
# a band with a handful of outputs is not left to them alone, and one with none takes
# the overall prior rather than an arbitrary one.
BAND_PSEUDOCOUNT = 1.0
# With strata (task types), each stratum's band is pulled toward the same score band of all
# strata by this many pseudo-outputs. Why 20: on windows of the closed-loop world (a month
# of 2,000 outputs a day), 5, 20, 60 and 150 were tried; from 20 down the share of task
# types whose error above 9.0 or 9.5 missed the truth by over 0.02 was lowest (0.21 to
# 0.27, against 0.38 to 0.44 with one prior for all task types).
STRATUM_PSEUDOCOUNT = 20.0
# EM stops when one step moves no probability in the confusion matrices or the band
# priors by this much; the mean posterior error of any set of outputs is then within
# about 1e-4 of the fixed point.
TOLERANCE = 1e-6
MAX_STEPS = 2000


def _read_only(array: np.ndarray) -> np.ndarray:
    array.setflags(write=False)
    return array


@dataclass(frozen=True, eq=False)
class LabelData:
    """Judged outputs ("items") and the verdicts on them, checked and coded as integers
    once, so that the fit and every bootstrap replicate share them.

    Item i is position i of ``scores``; ``gold[i]`` is its gold class's index in
    ``CLASSES``, or -1. Reviewer r is ``reviewers[r]``.

    Items with the same band, gold label and verdicts (the same reviewers giving the same
    labels) have the same posterior, and most items are reviewed once by one of a few
    reviewers, so a hundred thousand items make about a thousand such patterns. EM runs on
    the patterns, each counted as often as it occurs: the same likelihood for a fraction
    of the work. ``item_pattern[i]`` is item i's pattern; ``pattern_cells[p]`` lists the
    pattern's verdicts as ``reviewer * 3 + label``, in ascending order, padded with -1.
    """

    scores: np.ndarray
    band_edges: np.ndarray
    item_band: np.ndarray
    gold: np.ndarray
    reviewers: tuple[Hashable, ...]
    item_pattern: np.ndarray
    pattern_cells: np.ndarray
    pattern_band: np.ndarray
    pattern_gold: np.ndarray
    strata: int = 1

    @property
    def n_items(self) -> int:
        return len(self.scores)

    @cached_property
    def sums(self) -> tuple[sparse.csr_matrix, sparse.csr_matrix]:
        return _sums(self)

    @property
    def n_bands(self) -> int:
        """Score bands times strata: band b of stratum s is ``s * bands per stratum + b``."""
        return self.strata * (len(self.band_edges) - 1)

    @property
    def pattern_judged(self) -> np.ndarray:
        return (self.pattern_cells >= 0).any(axis=1) | (self.pattern_gold >= 0)

    @property
    def judged(self) -> np.ndarray:
        """Items with a verdict or a gold label: the only ones that say anything about
        the reviewers or the bands."""
        return self.pattern_judged[self.item_pattern]


def verdict_codes(
    verdict_label: Sequence[str] | np.ndarray, style_only: Sequence[bool] | np.ndarray | None = None
) -> np.ndarray:
    """Each verdict's label as its index in ``LABELS``, a modify marked style only counting
    as an approve. A label's index is also the class it names (``CLASSES``)."""
    label_column = np.asarray(verdict_label).reshape(-1).astype(str)
    label_names, label_inverse = np.unique(label_column, return_inverse=True)
    unknown = sorted(set(label_names.tolist()) - set(LABELS))
    if unknown:
        raise ValueError(f"unknown labels {unknown}; labels are {LABELS}")
    codes = np.array([LABELS.index(name) for name in label_names], dtype=np.int64)
    codes = codes[label_inverse.reshape(-1)]
    if style_only is not None:
        cosmetic = np.asarray(style_only, dtype=bool).reshape(-1)
        if len(cosmetic) != len(codes):
            raise ValueError("style_only must have one entry per verdict")
        codes = np.where(cosmetic & (codes == MODIFY), APPROVE, codes)
    return codes


def label_data(
    scores: Sequence[float] | np.ndarray,
    verdict_item: Sequence[int] | np.ndarray,
    verdict_reviewer: Sequence[Hashable] | np.ndarray,
    verdict_label: Sequence[str] | np.ndarray,
    *,
    style_only: Sequence[bool] | np.ndarray | None = None,
    gold: Mapping[int, str] | None = None,
    band_edges: Sequence[float] = DEFAULT_BAND_EDGES,
    strata: Sequence[int] | np.ndarray | None = None,
) -> LabelData:
    """Check and code the label model's inputs.

    ``scores[i]`` is item i's score. The ``verdict_*`` columns have one entry per verdict:
    the item's index, the reviewer (any sortable ids, all of one type) and the label, one
    of ``LABELS``. ``style_only[v]`` marks a modify the reviewer called style only, which
    counts as an approve. ``gold`` maps an item's index to its adjudicated class, one of
    ``CLASSES``. ``band_edges`` increase and span every score; ``(0, 10)`` ties all bands
    into one global prior, as in plain Dawid-Skene. ``strata[i]`` (0, 1, ...) gives item i's
    stratum, say its task type: each stratum then has bands of its own, so that an easy
    task type's prior at a score is not its harder neighbours', while every reviewer's
    confusion matrix is still pooled over all of them.
    """
    scores = np.asarray(scores, dtype=float).reshape(-1)
    edges = np.asarray(band_edges, dtype=float)
    if edges.ndim != 1 or len(edges) < 2 or np.any(np.diff(edges) <= 0):
        raise ValueError("band_edges must be at least two increasing numbers")
    if not np.all(np.isfinite(scores)):
        raise ValueError("scores must be finite")
    if len(scores) and (scores.min() < edges[0] or scores.max() > edges[-1]):
        raise ValueError(f"scores must lie within the bands, [{edges[0]:g}, {edges[-1]:g}]")
    # side="right" puts a score that sits on an edge in the band above it; the clip closes
    # the last band, so that the top score belongs to it.
    item_band = np.clip(np.searchsorted(edges, scores, side="right") - 1, 0, len(edges) - 2)
    stratum_count = 1
    if strata is not None:
        stratum = np.asarray(strata).reshape(-1)
        if len(stratum) != len(scores) or (
            len(stratum) and (not np.issubdtype(stratum.dtype, np.integer) or stratum.min() < 0)
        ):
            raise ValueError("strata must give each score a stratum, 0 or more")
        stratum_count = int(stratum.max(initial=0)) + 1
        item_band = stratum.astype(np.int64) * (len(edges) - 1) + item_band

    items = np.asarray(verdict_item, dtype=np.int64).reshape(-1)
    reviewer_column = np.asarray(verdict_reviewer).reshape(-1)
    label_column = np.asarray(verdict_label).reshape(-1).astype(str)
    if not len(items) == len(reviewer_column) == len(label_column):
        raise ValueError("verdict_item, verdict_reviewer and verdict_label differ in length")
    if len(items) and (items.min() < 0 or items.max() >= len(scores)):
        raise ValueError("verdict_item must index scores")

    # np.unique codes a hundred thousand verdicts in C; sorting the reviewers also makes
    # the fit the same whatever order the verdicts come in.
    reviewer_ids, reviewer_codes = np.unique(reviewer_column, return_inverse=True)
    label_codes = verdict_codes(label_column, style_only)

    gold_codes = np.full(len(scores), -1, dtype=np.int64)
    for item, name in (gold or {}).items():
        if not 0 <= item < len(scores):
            raise ValueError(f"gold names item {item}, which has no score")
        if name not in CLASSES:
            raise ValueError(f"unknown gold class {name!r}; classes are {CLASSES}")
        gold_codes[item] = CLASSES.index(name)

    # Each item's verdicts as one row of cells in ascending order, so that the same
    # verdicts given in another order make the same row, padded with -1.
    cells = reviewer_codes.reshape(-1) * len(LABELS) + label_codes
    order = np.lexsort((cells, items))
    per_item = np.bincount(items, minlength=len(scores))
    first = np.cumsum(per_item) - per_item
    rank = np.arange(len(items)) - first[items[order]]
    item_cells = np.full((len(scores), per_item.max(initial=0)), -1, dtype=np.int64)
    item_cells[items[order], rank] = cells[order]
    patterns, item_pattern = unique_rows(np.column_stack([item_band, gold_codes, item_cells]))

    return LabelData(
        scores=_read_only(scores),
        band_edges=_read_only(edges),
        item_band=_read_only(item_band),
        gold=_read_only(gold_codes),
        reviewers=tuple(reviewer_ids.tolist()),
        item_pattern=_read_only(item_pattern),
        pattern_cells=_read_only(patterns[:, 2:]),
        pattern_band=_read_only(patterns[:, 0]),
        pattern_gold=_read_only(patterns[:, 1]),
        strata=stratum_count,
    )


@dataclass(frozen=True, eq=False)
class LabelFit:
    """A fitted label model.

    ``posterior[i, k]`` is P(item i's class is ``CLASSES[k]`` | all the verdicts);
    ``confusion[r, k, l]`` is P(reviewer r says ``LABELS[l]`` | class ``CLASSES[k]``);
    ``band_prior[b, k]`` is P(class k | a judged item's score is in band b), band b being
    ``band_edges[b]`` up to ``band_edges[b + 1]``.
    """

    posterior: np.ndarray
    confusion: np.ndarray
    band_prior: np.ndarray
    band_edges: np.ndarray
    band_items: np.ndarray  # judged items per band
    reviewers: tuple[Hashable, ...]
    log_likelihood: float
    steps: int  # EM steps taken
    converged: bool

    @property
    def error(self) -> np.ndarray:
        """The "error" loss per item, P(needs_edit or bad): the chance that a careful
        reviewer would not approve it unchanged."""
        return self.posterior[:, NEEDS_EDIT] + self.posterior[:, BAD]

    @property
    def bad(self) -> np.ndarray:
        """The "bad" loss per item, P(bad)."""
        return self.posterior[:, BAD]

    def confusion_of(self, reviewer: Hashable) -> np.ndarray:
        """One reviewer's confusion matrix: rows ``CLASSES``, columns ``LABELS``."""
        return self.confusion[self.reviewers.index(reviewer)]


@dataclass(frozen=True, eq=False)
class _Parameters:
    """Parameters of one fit or of several at once (the bootstrap's replicates), with a
    leading replicate axis: confusion (B, reviewer, class, label), band_prior (B, band,
    class)."""

    confusion: np.ndarray
    band_prior: np.ndarray


def _sums(data: LabelData) -> tuple[sparse.csr_matrix, sparse.csr_matrix]:
    """Sparse matrices that sum pattern weights into the M-step's counts: verdict cells by
    patterns (how many of a pattern's verdicts fall in each (reviewer, label) cell), and
    bands by patterns. One product then serves every class of every replicate."""
    n_patterns = len(data.pattern_cells)
    slot, cell = np.nonzero(data.pattern_cells >= 0)
    cells = sparse.csr_matrix(
        (np.ones(len(slot)), (data.pattern_cells[slot, cell], slot)),
        shape=(len(data.reviewers) * len(LABELS), n_patterns),
    )
    bands = sparse.csr_matrix(
        (np.ones(n_patterns), (data.pattern_band, np.arange(n_patterns))),
        shape=(data.n_bands, n_patterns),
    )
    return cells, bands


def _m_step(data: LabelData, posterior: np.ndarray, weight: np.ndarray) -> _Parameters:
    """Smoothed parameters given pattern posteriors (pattern, B, class), pattern p counted
    ``weight[b, p]`` times in replicate b."""
    cells, bands = data.sums
    replicates, n_patterns = weight.shape
    flat = (posterior * weight.T[:, :, None]).reshape(n_patterns, replicates * len(CLASSES))
    counts = (cells @ flat).reshape(len(data.reviewers), len(LABELS), replicates, len(CLASSES))
    counts = counts.transpose(2, 0, 3, 1) + PSEUDOCOUNT  # (B, reviewer, class, label)
    confusion = counts / counts.sum(axis=3, keepdims=True)

    band_counts = (bands @ flat).reshape(data.n_bands, replicates, len(CLASSES))
    band_counts = band_counts.transpose(1, 0, 2)
    overall = band_counts.sum(axis=1) + PSEUDOCOUNT
    overall = overall / overall.sum(axis=1, keepdims=True)
    # Each score band pooled over the strata, pulled toward the overall prior; each
    # stratum's band pulled toward its score band's pooled prior.
    per_stratum = band_counts.reshape(replicates, data.strata, -1, len(CLASSES))
    pooled = per_stratum.sum(axis=1) + BAND_PSEUDOCOUNT * overall[:, None, :]
    pooled = pooled / pooled.sum(axis=2, keepdims=True)
    if data.strata == 1:
        band_prior = pooled
    else:
        band_prior = per_stratum + STRATUM_PSEUDOCOUNT * pooled[:, None]
        band_prior = band_prior / band_prior.sum(axis=3, keepdims=True)
        band_prior = band_prior.reshape(replicates, -1, len(CLASSES))
    return _Parameters(confusion, band_prior)


def _e_step(
    data: LabelData, parameters: _Parameters, *, likelihood: bool = False
) -> tuple[np.ndarray, np.ndarray | None]:
    """Pattern posteriors (pattern, B, class) under ``parameters``, and with ``likelihood``
    each pattern's log-likelihood (pattern, B).

    Why patterns first: the sparse product below gives one row per pattern, and the M-step
    sums over patterns with the same product; in this layout neither step copies an array
    to transpose it, which was a third of the step's time."""
    # The verdicts' log P(label | class), summed per pattern by the sparse product of the
    # patterns' cell counts with one column per (replicate, class): every replicate at once.
    replicates = len(parameters.confusion)
    cells, _ = data.sums
    # (reviewer, label, B, class): rows as the cells matrix has them.
    log_confusion = np.log(parameters.confusion).transpose(1, 3, 0, 2)
    log_joint = cells.T @ log_confusion.reshape(cells.shape[0], replicates * len(CLASSES))
    log_joint = log_joint.reshape(-1, replicates, len(CLASSES))
    log_prior = np.ascontiguousarray(np.log(parameters.band_prior).transpose(1, 0, 2))
    log_joint += log_prior[data.pattern_band]
    has_gold = data.pattern_gold >= 0
    if has_gold.any():
        # The gold class is known, so the other classes are impossible: such an item's
        # likelihood is the joint probability at its gold class alone.
        impossible = np.arange(len(CLASSES))[None, :] != data.pattern_gold[has_gold, None]
        log_joint[has_gold] = np.where(impossible[:, None, :], -np.inf, log_joint[has_gold])
    top = _over_classes(np.maximum, log_joint)
    log_joint -= top[:, :, None]
    joint = np.exp(log_joint, out=log_joint)
    total = _over_classes(np.add, joint)
    joint /= total[:, :, None]
    return joint, (top + np.log(total) if likelihood else None)


def _over_classes(combine: np.ufunc, values: np.ndarray) -> np.ndarray:
    """``combine`` folded over the last axis, the classes, as the left fold that numpy's own
    reduction makes of three terms; three whole-array operations run several times faster
    than a reduction along an axis so short."""
    out = values[..., 0].copy()
    for k in range(1, values.shape[-1]):
        combine(out, values[..., k], out=out)
    return out


def _initial_posterior(data: LabelData) -> np.ndarray:
    """Each pattern's share of votes, label l read as class l, gold clamped. Taking the
    reviewers at their word to start with fixes which latent class is which."""
    labels = np.where(data.pattern_cells >= 0, data.pattern_cells % len(LABELS), -1)
    votes = np.stack([(labels == k).sum(axis=1) for k in range(len(LABELS))], axis=1)
    totals = votes.sum(axis=1, keepdims=True)
    posterior = np.divide(
        votes, totals, out=np.full(votes.shape, 1 / len(CLASSES)), where=totals > 0
    )
    has_gold = data.pattern_gold >= 0
    posterior[has_gold] = np.eye(len(CLASSES))[data.pattern_gold[has_gold]]
    return posterior


def _pack(parameters: _Parameters) -> np.ndarray:
    replicates = len(parameters.confusion)
    return np.concatenate(
        [
            parameters.confusion.reshape(replicates, -1),
            parameters.band_prior.reshape(replicates, -1),
        ],
        axis=1,
    )


def _unpack(data: LabelData, packed: np.ndarray) -> _Parameters:
    split = len(data.reviewers) * len(CLASSES) * len(LABELS)
    replicates = len(packed)
    return _Parameters(
        packed[:, :split].reshape(replicates, len(data.reviewers), len(CLASSES), len(LABELS)),
        packed[:, split:].reshape(replicates, data.n_bands, len(CLASSES)),
    )


def _em_step(data: LabelData, packed: np.ndarray, weight: np.ndarray) -> np.ndarray:
    posterior, _ = _e_step(data, _unpack(data, packed))
    return _pack(_m_step(data, posterior, weight))


@dataclass(frozen=True, eq=False)
class _Solution:
    parameters: _Parameters
    posterior: np.ndarray  # (B, pattern, class)
    log_likelihood: np.ndarray  # (B, pattern)
    steps: np.ndarray  # per replicate
    converged: np.ndarray  # per replicate


def _run_em(
    data: LabelData, start: _Parameters, weight: np.ndarray, *, tolerance: float, max_steps: int
) -> _Solution:
    """EM from ``start`` until one step moves no probability by ``tolerance``,
    accelerated by SQUAREM (Varadhan and Roland, 2008, "Simple and globally convergent
    methods for accelerating the convergence of any EM algorithm", scheme S3), for B
    fits at once (``weight`` is (B, pattern)): each fit steps on its own, and stops on
    its own once converged.

    Why accelerate: most items are reviewed once, so much of the information about the
    latent classes is missing, and plain EM crawls: hundreds of steps with score bands,
    over a thousand with one global prior. SQUAREM takes two EM steps, extrapolates along
    them, and takes one more EM step from there, which lands back inside the model. The
    extrapolation is an affine combination of parameter vectors whose rows each sum to 1,
    so its rows still sum to 1; should it push a probability to 0 or below, the step is
    halved back toward the plain EM step.

    Why all at once: a fit's EM step costs a few dozen small array operations, whatever
    the number of patterns; B fits stepped together cost about as many, larger ones.
    """
    current = _pack(start)
    replicates = len(current)
    steps = np.zeros(replicates, dtype=np.int64)
    converged = np.zeros(replicates, dtype=bool)
    active = np.arange(replicates)
    while len(active):
        here, w = current[active], weight[active]
        first = _em_step(data, here, w)
        steps[active] += 1
        done = np.abs(first - here).max(axis=1, initial=0.0) < tolerance
        current[active[done]] = first[done]
        converged[active[done]] = True
        keep = ~done & (steps[active] < max_steps)
        current[active[~done & ~keep]] = first[~done & ~keep]
        active, here, first, w = active[keep], here[keep], first[keep], w[keep]
        if not len(active):
            break
        second = _em_step(data, first, w)
        steps[active] += 1
        r = first - here
        v = second - first - r
        v_norm = np.sqrt((v * v).sum(axis=1))
        r_norm = np.sqrt((r * r).sum(axis=1))
        step_length = np.where(
            v_norm > 0, np.minimum(-r_norm / np.where(v_norm > 0, v_norm, 1.0), -1.0), -1.0
        )
        extrapolated = second.copy()
        pending = step_length < -1.0
        while pending.any():
            a = step_length[pending][:, None]
            trial = here[pending] - 2 * a * r[pending] + a**2 * v[pending]
            inside = trial.min(axis=1, initial=1.0) > 0
            rows = np.flatnonzero(pending)
            extrapolated[rows[inside]] = trial[inside]
            # Halving the distance to -1 reaches the plain step (second) in a few tries.
            outside = rows[~inside]
            step_length[outside] = np.where(
                step_length[outside] < -1.01, (step_length[outside] - 1.0) / 2, -1.0
            )
            pending = np.zeros(len(active), dtype=bool)
            pending[outside] = step_length[outside] < -1.0
        current[active] = _em_step(data, extrapolated, w)
        steps[active] += 1
        active = active[steps[active] < max_steps]
    parameters = _unpack(data, current)
    posterior, log_likelihood = _e_step(data, parameters, likelihood=True)
    return _Solution(
        parameters,
        np.ascontiguousarray(posterior.transpose(1, 0, 2)),
        log_likelihood.T,
        steps,
        converged,
    )


def _pattern_counts(data: LabelData, items: np.ndarray) -> np.ndarray:
    return np.bincount(data.item_pattern[items], minlength=len(data.pattern_cells)).astype(float)


def fit_label_model(
    data: LabelData, *, tolerance: float = TOLERANCE, max_steps: int = MAX_STEPS
) -> LabelFit:
    """Dawid-Skene with a score-banded class prior, fitted by EM.

    Items with neither a verdict nor a gold label get their band's prior as posterior
    and take no part in the fit: they say nothing about the reviewers, and counting them
    would only slow EM down on its way to the same answer.
    """
    judged = np.flatnonzero(data.judged)
    weight = _pattern_counts(data, judged)
    weights = weight[None, :]
    solution = _run_em(
        data,
        _m_step(data, _initial_posterior(data)[:, None], weights),
        weights,
        tolerance=tolerance,
        max_steps=max_steps,
    )
    return LabelFit(
        posterior=_read_only(solution.posterior[0][data.item_pattern]),
        confusion=_read_only(solution.parameters.confusion[0]),
        band_prior=_read_only(solution.parameters.band_prior[0]),
        band_edges=data.band_edges,
        band_items=_read_only(np.bincount(data.item_band[judged], minlength=data.n_bands)),
        reviewers=data.reviewers,
        log_likelihood=float(solution.log_likelihood[0] @ weight),
        steps=int(solution.steps[0]),
        converged=bool(solution.converged[0]),
    )


@dataclass(frozen=True, eq=False)
class LabelBootstrap:
    """Bootstrap replicates of a label model fit: replicate b is the model refitted to
    the judged items resampled with replacement. Any statistic of the posteriors (say,
    the mean error above a threshold) can be recomputed per replicate, and its spread
    added to a confidence bound as the label model's own estimation error.

    Every item has a posterior in every replicate, under that replicate's parameters,
    even if the resample left it out. They are kept per pattern (see ``LabelData``) and
    spread to items on demand: ``posterior`` takes replicates x items x 24 bytes, 240 MB
    for 100 replicates of 100,000 items; ``error`` and ``bad`` a third of that each.
    """

    seed: int
    confusion: np.ndarray  # (replicate, reviewer, class, label)
    band_prior: np.ndarray  # (replicate, band, class)
    steps: np.ndarray  # EM steps per replicate
    converged: np.ndarray  # per replicate
    pattern_posterior: np.ndarray  # (replicate, pattern, class)
    item_pattern: np.ndarray

    @property
    def replicates(self) -> int:
        return len(self.confusion)

    @property
    def posterior(self) -> np.ndarray:
        """P(class | the verdicts) per replicate, item and class."""
        return self.pattern_posterior[:, self.item_pattern]

    @property
    def error(self) -> np.ndarray:
        """P(needs_edit or bad) per replicate and item."""
        per_pattern = self.pattern_posterior[:, :, NEEDS_EDIT] + self.pattern_posterior[:, :, BAD]
        return per_pattern[:, self.item_pattern]

    @property
    def bad(self) -> np.ndarray:
        """P(bad) per replicate and item."""
        return self.pattern_posterior[:, self.item_pattern, BAD]


def bootstrap_label_model(
    data: LabelData,
    fit: LabelFit,
    *,
    replicates: int,
    seed: int,
    tolerance: float = TOLERANCE,
    max_steps: int = MAX_STEPS,
) -> LabelBootstrap:
    """Refit ``replicates`` times to the judged items resampled with replacement, drawn
    by ``np.random.default_rng(seed)``: Efron's nonparametric bootstrap, over items
    rather than verdicts because two verdicts on one item are not independent.

    A resample is carried as a count per pattern (how many of its items were drawn),
    which is the same likelihood as copying the items. Each refit starts from ``fit``'s
    parameters, nearer the replicate's optimum than the votes are: on the simulated
    world, about a fifth fewer EM steps than a fit from scratch.
    """
    if replicates < 1:
        raise ValueError("replicates must be at least 1")
    rng = np.random.default_rng(seed)
    judged = np.flatnonzero(data.judged)
    counts = np.stack(
        [
            _pattern_counts(data, judged[rng.integers(0, len(judged), size=len(judged))])
            for _ in range(replicates)
        ]
    )
    start = _Parameters(
        np.repeat(np.asarray(fit.confusion)[None], replicates, axis=0),
        np.repeat(np.asarray(fit.band_prior)[None], replicates, axis=0),
    )
    solution = _run_em(data, start, counts, tolerance=tolerance, max_steps=max_steps)
    confusion = solution.parameters.confusion
    band_prior = solution.parameters.band_prior
    pattern_posterior = solution.posterior
    steps, converged = solution.steps, solution.converged
    return LabelBootstrap(
        seed=seed,
        confusion=_read_only(confusion),
        band_prior=_read_only(band_prior),
        steps=_read_only(steps),
        converged=_read_only(converged),
        pattern_posterior=_read_only(pattern_posterior),
        item_pattern=data.item_pattern,
    )
