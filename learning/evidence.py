"""What the learning cycles know about the outputs judged in a window.

``judged_evidence(since, until)`` reads the outputs reviewed in the window and every
independent review of them decided by its end, and turns them into what the pure
statistics take. An output whose later rounds are still open (a second review, an
adjudication) is judged on the verdicts it has: those rounds follow a first review that
found fault, so waiting for them would leave out, above all, the outputs at fault, and the
label model would read the rest as cleaner than the traffic is, and every reviewer's rejects
as surer than they are.

* each judged output rescored with today's validator weights (``gating.scoring.scores_many``):
  the threshold search must see the scores the gate would give now, not those it gave
  when the weights were older. An output another scorer decided (docs/scoring.md) keeps its
  stored score: that scorer reads evidence or provenance, not the weights;
* its weight, 1 / the inclusion probability it achieved: its draw rate (1 for a held
  output) times the share of its stratum's draws in the window with a first review by its
  end (``gating.selectors.draw_coverage``), an output still waiting being no evidence yet,
  as the closed loop weighs them.
  Audits drawn at a sparser rate than their stratum's current one are left out: a window
  that mixed them in would bound every candidate with their larger weight;
* the label model fitted to every review (``learning.statistics.labels``), with a prior per
  task type and score band (each task type is a stratum: an easy task type's error at a
  score is not a hard one's): adjudications are the adjudicating lead's verdict, and a
  modify marked style only counts as an approve. Its posterior P(bad) and P(needs an edit
  or bad) are each output's losses; the bootstrap replicates, when asked for, carry the
  label model's own uncertainty;
* the gold checks' verdicts (``ReviewItem.Kind.GOLD``), kept out of the label model's fit,
  so that what it predicts of them can be checked against what the leads said
  (``learning.statistics.gold``);
* which outputs fit the validator weights and which certify the thresholds
  (``learning.statistics.sampling.fit_certify_split``, a share LEARNING_FIT_SHARE by a hash
  of the output's id).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime

import numpy as np

from gating import scorers, scoring
from gating.models import Review, ReviewItem, TaskModelStats, TaskType, Validator
from gating.selectors import draw_coverage, draw_stratum
from learning import selectors
from learning.statistics import gold, labels, sampling, thresholds
from learning.statistics import weights as validator_weights

APPROVED = scoring.Decision.APPROVED.value
WARNING = scoring.Decision.WARNING.value


@dataclass(frozen=True, eq=False)
class TaskTypeEvidence:
    """One task type's judged outputs, rescored and weighted, in the window's order."""

    validator_names: tuple[str, ...]
    failed: np.ndarray  # (outputs, validators): True where the validator failed
    rows: np.ndarray  # positions in the window's columns
    dropped_sparser_audits: int


@dataclass(frozen=True, eq=False)
class JudgedEvidence:
    output_ids: np.ndarray
    task_type_ids: np.ndarray
    scores: np.ndarray
    weights: np.ndarray
    fit: labels.LabelFit | None
    bootstrap: labels.LabelBootstrap | None
    by_task_type: dict[int, TaskTypeEvidence]
    reviews: int
    # Per (task type id, stratum): audits drawn in the window and decided by its end.
    coverage: dict[tuple[int, str], tuple[int, int]]
    split: sampling.FitCertifySplit
    # The gold checks decided in the window: each one's output (its position), lead and label.
    gold_rows: np.ndarray
    gold_reviewers: tuple
    gold_labels: np.ndarray

    def audits_achieved(self, task_type_id: int) -> dict[str, dict]:
        """Each stratum's draws (held outputs and audits), decisions and the share decided:
        what the weights multiply the draw rates by, recorded with the run."""
        return {
            stratum: {
                "drawn": created,
                "decided": decided,
                "share_decided": round(decided / created, 4) if created else None,
            }
            for (task_type, stratum), (created, decided) in sorted(self.coverage.items())
            if task_type == task_type_id
        }

    def window(self, task_type_id: int) -> thresholds.Window:
        """The task type's judged outputs as the threshold policies read them; none (an
        empty window) for a task type without verdicts."""
        if task_type_id not in self.by_task_type:
            return thresholds.Window(*(np.zeros(0),) * 4)
        rows = self.by_task_type[task_type_id].rows
        rows = rows[self.split.certify[rows]]
        boot = self.bootstrap
        return thresholds.Window(
            scores=self.scores[rows],
            weights=self.weights[rows],
            loss_bad=self.fit.bad[rows],
            loss_edit=self.fit.error[rows],
            replicates_bad=None if boot is None else boot.bad[:, rows],
            replicates_edit=None if boot is None else boot.error[:, rows],
        )

    def gold_checks(self, task_type_id: int, *, confidence: float) -> dict[str, gold.GoldCheck]:
        """The label model's predictions of the leads' gold checks of the task type's
        outputs against what they said. A check by a lead with no other verdict in the
        window is left out: the model knows nothing of that lead's habits."""
        if self.fit is None:
            return {}
        known = {reviewer: r for r, reviewer in enumerate(self.fit.reviewers)}
        mine = [
            i
            for i, row in enumerate(self.gold_rows)
            if self.task_type_ids[row] == task_type_id and self.gold_reviewers[i] in known
        ]
        rows = self.gold_rows[mine]
        leads = [known[self.gold_reviewers[i]] for i in mine]
        predicted = gold.predicted_labels(self.fit.posterior[rows], self.fit.confusion[leads])
        return gold.gold_checks(predicted, self.gold_labels[mine], confidence=confidence)

    def error_evidence(self, task_type_id: int) -> validator_weights.ErrorEvidence:
        """The task type's outputs that fit the validator weights, grouped by which
        validators failed, with P(needs an edit or bad) and their weights."""
        own = self.by_task_type[task_type_id]
        fitting = self.split.fit[own.rows]
        rows = own.rows[fitting]
        return validator_weights.error_evidence(
            own.validator_names, own.failed[fitting], self.fit.error[rows], self.weights[rows]
        )


# Outputs the validators scorer decided: the label it records, and the one it recorded
# before scorers had names.
_VALIDATORS_LABELS = (f"{scorers.DEFAULT}-v", "adr0003-v")


def _scored_by_validators(verdict: selectors.Verdict) -> bool:
    """Whether the output's score is the validators formula's, which today's weights change;
    another scorer's reads evidence or provenance, and its stored score stands."""
    return verdict.scorer.startswith(_VALIDATORS_LABELS) or not verdict.scorer


def judged_evidence(
    *, since: datetime, until: datetime, replicates: int = 0, seed: int = 0, fit_share: float = 0.0
) -> JudgedEvidence:
    verdicts = selectors.verdicts(since=since, until=until, with_validators=True, settled=False)
    task_types = {
        t.pk: t for t in TaskType.objects.filter(pk__in={v.task_type_id for v in verdicts})
    }
    kept, dropped = _current_design(verdicts, task_types)
    coverage = draw_coverage(since=since, until=until)
    validators = _validators(task_types)
    bonus = _pair_bonus(task_types)

    scores = np.empty(len(kept))
    by_task_type: dict[int, TaskTypeEvidence] = {}
    rows_of: dict[int, list[int]] = defaultdict(list)
    for i, v in enumerate(kept):
        rows_of[v.task_type_id].append(i)
    weights = 1.0 / _achieved(kept, coverage)
    for task_type_id, rows in rows_of.items():
        names = tuple(sorted(validators[task_type_id]))
        mine = [kept[i] for i in rows]
        reported, passed = _results(mine, names)
        own = validators[task_type_id]
        scores[rows] = scoring.scores_many(
            reported=reported,
            passed=passed,
            weights=np.array([own[n].weight for n in names]),
            is_fact_check=np.array([own[n].is_fact_check for n in names], dtype=bool),
            input_clarity=np.array([v.input_clarity for v in mine]),
            coherence=np.array([v.coherence for v in mine]),
            requires_fact_check=np.array([v.requires_fact_check for v in mine], dtype=bool),
            bonus=np.array([bonus.get((task_type_id, v.model), 0.0) for v in mine]),
        )
        for i, v in zip(rows, mine, strict=True):
            if not _scored_by_validators(v):
                scores[i] = v.score
        by_task_type[task_type_id] = TaskTypeEvidence(
            validator_names=names,
            failed=reported & ~passed,
            rows=np.array(rows, dtype=np.int64),
            dropped_sparser_audits=dropped.get(task_type_id, 0),
        )

    fit = boot = None
    position = {v.output_id: i for i, v in enumerate(kept)}
    reviews, checks = _reviews(since, until)
    reviews = [r for r in reviews if r[0] in position]
    checks = [r for r in checks if r[0] in position]
    if kept:
        stratum_of = {pk: i for i, pk in enumerate(sorted(by_task_type))}
        data = labels.label_data(
            scores,
            [position[r[0]] for r in reviews],
            [r[1] for r in reviews],
            [r[2] for r in reviews],
            style_only=[r[3] for r in reviews],
            strata=np.array([stratum_of[v.task_type_id] for v in kept], dtype=np.int64),
        )
        fit = labels.fit_label_model(data)
        if replicates:
            boot = labels.bootstrap_label_model(data, fit, replicates=replicates, seed=seed)
    output_ids = np.array([v.output_id for v in kept], dtype=np.int64)
    return JudgedEvidence(
        output_ids=output_ids,
        task_type_ids=np.array([v.task_type_id for v in kept], dtype=np.int64),
        scores=scores,
        weights=weights,
        fit=fit,
        bootstrap=boot,
        by_task_type=by_task_type,
        reviews=len(reviews),
        coverage=coverage,
        split=sampling.fit_certify_split(output_ids, fit_share),
        gold_rows=np.array([position[r[0]] for r in checks], dtype=np.int64),
        gold_reviewers=tuple(r[1] for r in checks),
        gold_labels=labels.verdict_codes([r[2] for r in checks], [r[3] for r in checks]),
    )


def _current_design(verdicts, task_types) -> tuple[list, dict[int, int]]:
    """The verdicts, less the audits drawn at a sparser rate than their stratum's current
    one; and how many were left out per task type."""
    kept, dropped = [], defaultdict(int)
    for v in verdicts:
        task_type = task_types[v.task_type_id]
        rate = {
            APPROVED: task_type.audit_rate_approved,
            WARNING: task_type.audit_rate_warning,
        }.get(draw_stratum(v.is_audit, v.decision, v.withheld))
        if v.is_audit and rate is not None and v.inclusion_probability < rate:
            dropped[v.task_type_id] += 1
            continue
        kept.append(v)
    return kept, dropped


def _achieved(verdicts: list[selectors.Verdict], coverage: dict) -> np.ndarray:
    """Each verdict's achieved inclusion probability (``sampling.achieved_inclusion``)."""
    counts = np.array(
        [
            coverage.get((v.task_type_id, draw_stratum(v.is_audit, v.decision, v.withheld)), (0, 0))
            for v in verdicts
        ],
        dtype=float,
    ).reshape(-1, 2)
    return sampling.achieved_inclusion(
        [v.inclusion_probability for v in verdicts], counts[:, 0], counts[:, 1]
    )


def _validators(task_types) -> dict[int, dict[str, Validator]]:
    found: dict[int, dict[str, Validator]] = defaultdict(dict)
    for v in Validator.objects.filter(task_type__in=task_types):
        found[v.task_type_id][v.name] = v
    return found


def _pair_bonus(task_types) -> dict[tuple[int, str], float]:
    return {
        (row.task_type_id, row.model): scoring.task_accuracy_bonus(
            scoring.PairHistory(row.reviewed_count, row.approved_unchanged_count)
        )
        for row in TaskModelStats.objects.filter(task_type__in=task_types)
    }


def _results(verdicts, names: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray]:
    """(reported, passed) per output and validator, from the results the gateway sent; a
    validator the task type does not know is not in the score, as at the gate."""
    column = {name: j for j, name in enumerate(names)}
    reported = np.zeros((len(verdicts), len(names)), dtype=bool)
    passed = np.zeros((len(verdicts), len(names)), dtype=bool)
    for i, v in enumerate(verdicts):
        for result in v.validator_results:
            j = column.get(result.get("name"))
            if j is not None:
                reported[i, j] = True
                passed[i, j] = bool(result.get("passed", True))
    return reported, passed


def _reviews(since: datetime, until: datetime) -> tuple[list[tuple], list[tuple]]:
    """Every independent (output, reviewer, action, style only) decided in [since, until),
    in one read: those of the gold checks apart from all the others."""
    fitted, checks = [], []
    for *review, kind in (
        Review.objects.filter(is_bulk=False, decided_at__gte=since, decided_at__lt=until)
        .order_by("id")
        .values_list("output_id", "reviewer_id", "action", "style_only", "item__kind")
    ):
        (checks if kind == ReviewItem.Kind.GOLD else fitted).append(tuple(review))
    return fitted, checks
