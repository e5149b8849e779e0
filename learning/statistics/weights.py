"""Validator weights from how much a failure says about an error: log-likelihood ratios.

Pure functions: the input is judged outputs as arrays (which validators failed, the
probability that the output is an error, how many outputs it stands for).

Why not Shapley importance (``importance.py``, kept as the explanation): importance
credits a validator by how much it lowers the log loss over all outputs, so it scales
with how OFTEN the validator fails. A validator that fails on one output in two hundred
but is nearly always right when it does (security, schema) lowers the average loss
little, gets a small share, and the cycle walks its weight to the floor, although a
failure of it is strong evidence of a bad output.

Here the weight follows how MUCH a failure says. A regularised logistic regression of
"error" (the output needs an edit or is bad) on the validators' failure indicators is
fitted with soft labels: each output's probability of being an error (a posterior from
a label model) and its weight (1 / inclusion probability). Each output enters twice, as
an error with weight w·p and as a non-error with weight w·(1 - p), which is the
maximum-likelihood fit to the expected labels (the M step of EM). A validator's
coefficient β is then the log odds ratio of an error when it fails, holding the others
fixed: for validators independent given the truth it is log[P(fail | error) /
P(fail | fine)] - log[P(pass | error) / P(pass | fine)], the log-likelihood ratio its
result carries.

The gate (``gating.scoring``) scores validators as a weighted pass ratio: a failure of
validator i costs ``VALIDATOR_POINTS * w_i / Σ_j w_j`` points, whatever else failed. For
that cost to be proportional to the evidence, w_i ∝ β_i:

    target_i = Σ_j w_j * max(β_i, 0) / Σ_j max(β_j, 0)

so the gate spends its 8 validator points at 8 / Σ β⁺ points per nat. This is the target
``importance.next_weights`` computes from any non-negative score per validator, so the
coefficients go through it, which also keeps the cycle's bounds: each weight moves at
most ``max_step`` a cycle toward its target, never below ``floor`` (the defaults mirror
``LEARNING_MAX_WEIGHT_STEP`` and ``LEARNING_WEIGHT_FLOOR`` in the settings). A validator
whose failure points toward a good output (β < 0) gets the floor: a weighted pass ratio
cannot reward a failure.

Clarity and coherence, the scorer's other inputs, are left out of the regression: they
enter the score with fixed points, and only the validators' proportions are learnt. In
the simulated world, adding them lowers every validator's coefficient by about a fifth
(they explain part of the error) but moves no validator's share by more than 0.03, so
they would not change the weights, and leaving them out keeps the input to what the
verdicts carry. The hallucination penalty is ADR-0003's, fixed, and not learnt either.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from learning.statistics import importance
from learning.statistics.rows import unique_rows

# Mirror the settings LEARNING_MIN_VERDICTS, LEARNING_MAX_WEIGHT_STEP and
# LEARNING_WEIGHT_FLOOR (dashboard/settings/base.py), which a pure module cannot read;
# the cycle passes the settings' values.
MIN_VERDICTS = 50
MAX_STEP = 0.1
FLOOR = 0.05
# L2 strength (sklearn's C, the prior variance of a coefficient, on weights scaled to the
# effective sample size): a normal prior with sd ~3 nats keeps the coefficient of a
# validator that failed only on errors finite, yet shrinks one that failed a dozen times
# by a few per cent; importance.py's C = 1 (sd 1 nat) shrank security's coefficient by a
# fifth in simulated windows of 3000 outputs.
REGULARISATION_C = 10.0


@dataclass(frozen=True)
class ErrorEvidence:
    """Judged outputs grouped by which validators failed, with soft labels.

    ``failed[g][j]`` is whether validator ``names[j]`` failed in group g; ``error[g]`` and
    ``no_error[g]`` are the group's weight split by the outputs' probability of being an
    error (Σ w·p and Σ w·(1 - p)), and ``outputs[g]`` how many outputs it holds. Weights
    are scaled to sum to Kish's effective sample size, so the regulariser means the same
    whatever the audit rates.
    """

    names: tuple[str, ...]
    failed: tuple[tuple[bool, ...], ...]
    error: tuple[float, ...]
    no_error: tuple[float, ...]
    outputs: tuple[int, ...]

    @property
    def verdicts(self) -> int:
        return sum(self.outputs)

    def failures(self) -> dict[str, int]:
        """How many judged outputs each validator failed on."""
        return {
            name: sum(n for pattern, n in zip(self.failed, self.outputs, strict=True) if pattern[j])
            for j, name in enumerate(self.names)
        }

    def as_pattern_counts(self) -> importance.PatternCounts:
        """The same evidence for the Shapley explanation: "approved" is the weight of
        outputs that are not errors, as a soft count."""
        return importance.PatternCounts(
            names=self.names,
            patterns=tuple(tuple(not f for f in pattern) for pattern in self.failed),
            approved=self.no_error,
            not_approved=self.error,
        )


def error_evidence(
    names: Sequence[str],
    failed: np.ndarray,
    error_probability: np.ndarray,
    weight: np.ndarray | None = None,
) -> ErrorEvidence:
    """Group judged outputs by failure pattern.

    ``failed`` is (outputs, validators) booleans, True where ``names[j]`` failed (a
    validator an output did not report counts as passed); ``error_probability`` is each
    output's probability of needing an edit or being bad; ``weight`` how many outputs each
    stands for, 1 / its inclusion probability (1 for all by default).
    """
    failed = np.asarray(failed, dtype=bool)
    error_probability = np.asarray(error_probability, dtype=float)
    n = len(error_probability)
    weight = np.ones(n) if weight is None else np.asarray(weight, dtype=float)
    if failed.shape != (n, len(names)):
        raise ValueError(f"failed: expected shape ({n}, {len(names)}), got {failed.shape}")
    if len(set(names)) != len(names):
        raise ValueError("names: each validator once")
    if not np.all((error_probability >= 0) & (error_probability <= 1)):
        raise ValueError("error_probability: every value must be in [0, 1]")
    if weight.shape != (n,) or not np.all(np.isfinite(weight) & (weight > 0)):
        raise ValueError("weight: one finite, positive weight per output")
    if n == 0:
        return ErrorEvidence(tuple(names), (), (), (), ())
    kish_size = weight.sum() ** 2 / np.square(weight).sum()
    scaled = weight * kish_size / weight.sum()
    patterns, group = unique_rows(failed)
    groups = len(patterns)
    return ErrorEvidence(
        names=tuple(names),
        failed=tuple(tuple(p) for p in patterns.tolist()),
        error=tuple(np.bincount(group, scaled * error_probability, groups).tolist()),
        no_error=tuple(np.bincount(group, scaled * (1 - error_probability), groups).tolist()),
        outputs=tuple(np.bincount(group, minlength=groups).tolist()),
    )


@dataclass(frozen=True)
class ErrorModel:
    """The fitted logistic model: log odds of error = intercept + Σ β_i * failed_i."""

    intercept: float
    coefficients: dict[str, float]


def fit_error_model(
    evidence: ErrorEvidence,
    names: Sequence[str] | None = None,
    *,
    regularisation_c: float = REGULARISATION_C,
) -> ErrorModel:
    """Fit the error model on ``names`` (all of the evidence's validators by default).

    Validators that always fail together are collinear; the L2 penalty then splits their
    joint coefficient evenly (the smallest-norm split), so together they cost what one of
    them would, not double.
    """
    # Imported here, as in importance.py: scikit-learn takes seconds to import, and only
    # the validator cycle needs it.
    from sklearn.linear_model import LogisticRegression

    names = tuple(evidence.names if names is None else names)
    columns = [evidence.names.index(name) for name in names]
    x = np.array(evidence.failed, dtype=float).reshape(-1, len(evidence.names))[:, columns]
    rows = np.vstack([x, x])
    is_error = np.repeat([1, 0], len(x))
    row_weight = np.array([*evidence.error, *evidence.no_error], dtype=float)
    keep = row_weight > 0
    if len(set(is_error[keep].tolist())) < 2:
        raise ValueError("the evidence needs weight on both errors and non-errors")
    model = LogisticRegression(C=regularisation_c, solver="newton-cholesky")
    model.fit(rows[keep], is_error[keep], sample_weight=row_weight[keep])
    return ErrorModel(
        intercept=float(model.intercept_[0]),
        coefficients=dict(zip(names, model.coef_[0].tolist(), strict=True)),
    )


@dataclass(frozen=True)
class WeightUpdate:
    """A cycle's new weights, the coefficients behind them, and why any weight held."""

    weights: dict[str, float]
    coefficients: dict[str, float] = field(default_factory=dict)
    held: dict[str, str] = field(default_factory=dict)


def weight_update(
    current: Mapping[str, float],
    evidence: ErrorEvidence,
    *,
    min_verdicts: int = MIN_VERDICTS,
    max_step: float = MAX_STEP,
    floor: float = FLOOR,
    regularisation_c: float = REGULARISATION_C,
) -> WeightUpdate:
    """Move each validator's gate weight toward its share of the log-likelihood ratios.

    Only the validators in ``current`` enter the model. Weights hold, with the reason in
    ``held``:

    * all of them, with fewer than ``min_verdicts`` verdicts, or when every verdict is
      certainly an error or certainly not (nothing to contrast);
    * a validator that never failed in the window (or failed on every output, or was not
      reported): its failure's cost cannot be measured, and with no failures the L2
      penalty would fit β = 0 and walk a perhaps decisive validator to the floor for
      having been quiet. The others share the rest of the total weight, so its share of
      the score stays as it was.
    """
    current = dict(current)
    n = evidence.verdicts
    if n < min_verdicts:
        reason = f"{n} verdicts; reweighting needs {min_verdicts}."
        return WeightUpdate(weights=current, held=dict.fromkeys(current, reason))
    if not sum(evidence.error) or not sum(evidence.no_error):
        reason = "every verdict is certainly an error, or every one certainly not."
        return WeightUpdate(weights=current, held=dict.fromkeys(current, reason))

    failures = evidence.failures()
    held = {}
    for name in current:
        if name not in failures:
            held[name] = "not reported in the window."
        elif failures[name] == 0:
            held[name] = f"never failed in {n} verdicts: a failure's cost cannot be measured."
        elif failures[name] == n:
            held[name] = f"failed on all {n} verdicts: a failure's cost cannot be measured."
    fitted = [name for name in current if name not in held]
    if not fitted:
        return WeightUpdate(weights=current, held=held)

    model = fit_error_model(evidence, fitted, regularisation_c=regularisation_c)
    moved = importance.next_weights(
        {name: current[name] for name in fitted},
        model.coefficients,
        max_step=max_step,
        floor=floor,
    )
    return WeightUpdate(
        weights={name: moved.get(name, weight) for name, weight in current.items()},
        coefficients=model.coefficients,
        held=held,
    )
