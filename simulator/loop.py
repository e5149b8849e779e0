"""The learning policy in a closed loop with the simulated world, without the database.

Each history replays ``days`` of the world's traffic in 6-hour blocks. In each block the
gate scores the block's outputs with the current validator weights and thresholds; held
outputs queue for review, delivered ones are drawn for audit at their rate; reviewers work
the queue up to their capacity, audits first up to the reserved share; a share of the
reviewed outputs is reviewed twice, as is every audit whose first verdict finds fault (as
``gating.reviews`` does), and a disagreement is adjudicated by the lead, whose call is one
more verdict. Then the cycles run as beat runs them: validators every block, thresholds
every other block, on the verdicts of the lookback window, through the same pure
functions as ``learning.cycles`` (the label model, the weight update, the guarded
threshold policy). The ground truth is kept beside every output, so that what the policy
claims can be checked against what was so.

What the loop leaves out of the real gate: cold start (every task type starts with its
thresholds in force), reviewers' working hours (capacity is spread over the day), and
leases (a review takes no time).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import date

import numpy as np

from gating import rounds, scoring
from gating.rounds import Round
from learning.statistics import certify, labels, sampling, thresholds, weights
from simulator import world

BLOCKS_PER_DAY = 4
THRESHOLD_EVERY = 2  # blocks: the thresholds cycle runs every 12 hours
VALIDATOR_NAMES = tuple(v.name for v in world.VALIDATORS)
IS_FACT_CHECK = np.array([name in world.FACT_CHECK_VALIDATORS for name in VALIDATOR_NAMES])
# WITHHELD: would be approved, but delivered as a warning because the approve threshold
# lacks the guarantee its task type requires (approve_requires). It is audited at the
# approved rate, as the approve threshold's evidence, in the approved stratum
# (gating.selectors.draw_stratum).
APPROVED, WARNING, HELD, WITHHELD = range(4)
DECISIONS = 4
LEAD = 0  # the reviewer who adjudicates: the accurate one
GOOD = world.TRUTHS.index(world.Truth.GOOD)
BAD = world.TRUTHS.index(world.Truth.BAD)
# Where each thresholds run records its estimates beside the truth (claim 2).
ESTIMATE_AT = (9.0, 9.5)


@dataclass(frozen=True)
class LoopSettings:
    budgets: thresholds.Budgets = field(default_factory=thresholds.Budgets)
    learn: bool = True
    reviewers: tuple[world.Reviewer, ...] = world.DEFAULT_REVIEWERS
    review: float = 4.0
    approve: float = 7.0
    audit_rate_approved: float = 0.02
    audit_rate_warning: float = 0.10
    audit_rate_budget: float = 0.25
    double_review_rate: float = 0.10
    # 4 reviewers x 12 an hour x 9 working hours.
    reviews_per_day: int = 432
    audit_share: float = 0.25
    # Past the audits' reserved share, held outputs before the other audits, as
    # gating.reviews.claimable_items orders them; False: everything in turn, the order
    # before 2026-12-06 (bench/team_scale.py --audits-in-turn measures it).
    held_first: bool = True
    # Reviewers who are not Dawid-Skene (world.ReviewerFlaws); None: one matrix each.
    flaws: world.ReviewerFlaws | None = None
    lookback_days: int = 30
    replicates: int = 79  # as LEARNING_LABEL_REPLICATES
    # The task type's setting (gating.scoring.GatePolicy), as it is for a new task type:
    # what reaches an approve threshold without this guarantee is delivered as a warning;
    # with ESTIMATE, until a run certifies, approvals come from the estimated approve line.
    approve_requires: scoring.ApproveRequires = scoring.ApproveRequires.ESTIMATE
    # The share of judged outputs that fits the validator weights; the rest certify
    # (sampling.fit_certify_split), as production's LEARNING_FIT_SHARE.
    fit_share: float = 0.0


@dataclass
class TaskState:
    review: float
    approve: float
    audit_rate_approved: float
    weights: dict[str, float]
    last_certified: float | None = None
    # What the latest thresholds run put behind the approve threshold in force, and the
    # estimated approve line it set (None: none).
    guarantee: scoring.Guarantee = scoring.Guarantee.NONE
    estimate: float | None = None
    not_attainable_runs: int = 0


@dataclass(frozen=True)
class ThresholdRun:
    """One thresholds cycle on one task type, with the truth beside the estimate."""

    block: int
    task_type: int
    review: float
    approve: float
    approve_state: str
    review_state: str
    audit_rate: float
    estimated_error: dict[float, float]  # threshold -> estimated P(edit or bad) above it
    true_error: dict[float, float]  # threshold -> the window traffic's true share above it
    estimated_bad: dict[float, float] = field(default_factory=dict)  # ... P(bad) above it
    true_bad: dict[float, float] = field(default_factory=dict)  # ... truly bad share above it
    # The run set an estimated approve line (certify.estimate_move): approvals came from it.
    estimated: bool = False
    evidence: dict = field(default_factory=dict, repr=False)  # the approve certification
    # What the search read, per candidate: for quality.floor_threshold.
    estimates: EstimateCurve | None = field(default=None, repr=False)


@dataclass(frozen=True, eq=False)
class EstimateCurve:
    """Per approve candidate (``certify.grid()``, from the top down), the judged outputs
    scoring at least it: Kish's effective size (sum w)^2 / sum w^2, and the weighted means
    of the label model's P(needs an edit or bad) and P(bad) (NaN with none)."""

    thresholds: np.ndarray
    effective_n: np.ndarray
    edit: np.ndarray
    bad: np.ndarray

    @classmethod
    def of(cls, window: thresholds.Window) -> EstimateCurve:
        candidates = certify.grid()
        order = np.argsort(-window.scores, kind="stable")
        ranked = window.scores[order]
        weight = window.weights[order]
        # How many judged outputs each candidate takes: those scoring at least it.
        taken = np.searchsorted(-ranked, -candidates, side="right")

        def upto(values: np.ndarray) -> np.ndarray:
            return np.concatenate([[0.0], np.cumsum(values)])[taken]

        weight_sum = upto(weight)
        with np.errstate(invalid="ignore", divide="ignore"):
            return cls(
                thresholds=candidates,
                effective_n=np.divide(
                    weight_sum**2, upto(weight**2), where=taken > 0, out=np.zeros(len(candidates))
                ),
                edit=upto(weight * window.loss_edit[order]) / weight_sum,
                bad=upto(weight * window.loss_bad[order]) / weight_sum,
            )


@dataclass
class History:
    """What happened: every output with its truth and decision, and every cycle's call."""

    config: world.SimulationConfig
    settings: LoopSettings
    task_type: np.ndarray
    truth: np.ndarray
    block: np.ndarray
    decision: np.ndarray
    runs: list[ThresholdRun]
    weights: list[dict[int, dict[str, float]]]
    failed: np.ndarray  # (outputs, validators)
    final_scores: np.ndarray  # every output scored with the weights the history ended with
    # Per output, the blocks it was queued (held, or drawn for audit) and reviewed in; -1
    # if not. Empty where a history was built by hand.
    queued_at: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=int))
    reviewed_at: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=int))
    # Per output, the rate it was drawn at (1 if held, 0 if not drawn).
    inclusion: np.ndarray = field(default_factory=lambda: np.empty(0))
    # Every verdict: (output, reviewer, label index into labels.LABELS).
    verdicts: np.ndarray = field(default_factory=lambda: np.empty((0, 3), dtype=np.int64))
    # Per task type and model, the reviews and approvals unchanged that the accuracy bonus
    # read at the end; with the last validator weights, how the history ended up scoring.
    final_pairs: np.ndarray = field(default_factory=lambda: np.zeros((0, 0, 2)))

    def last_days(self, days: int) -> np.ndarray:
        return self.block >= self.block.max() + 1 - days * BLOCKS_PER_DAY


class _Traffic:
    """A history's outputs as columns, generated day by day."""

    def __init__(self, config: world.SimulationConfig):
        days = [world.day_traffic(config, d) for d in range(config.days)]
        self.task_type = np.concatenate([d.task_type for d in days])
        self.model = np.concatenate([d.model for d in days])
        self.truth = np.concatenate([d.truth for d in days])
        self.failed = ~np.concatenate([d.passed for d in days])
        self.clarity = np.concatenate([d.input_clarity for d in days])
        self.coherence = np.concatenate([d.coherence for d in days])
        hours = np.concatenate(
            [
                (d.created_at - d.created_at.astype("datetime64[D]"))
                .astype("timedelta64[h]")
                .astype(int)
                for d in days
            ]
        )
        day = np.repeat(np.arange(config.days), config.outputs_per_day)
        self.block = day * BLOCKS_PER_DAY + hours // (24 // BLOCKS_PER_DAY)
        requires = np.array([t.requires_fact_check for t in config.task_types])
        self.requires_fact_check = requires[self.task_type]
        # Per output, for world.ReviewerFlaws: its difficulty, and whether it is a blind spot
        # (drawn whether or not the reviewers have flaws, on a stream of their own, so that
        # the traffic and the other draws stay the same).
        flaws = np.random.default_rng([config.seed, 11])
        self.difficulty = flaws.random(len(self.truth))
        self.blind_draw = flaws.random(len(self.truth))
        self.blind = np.zeros(len(self.truth), dtype=bool)


@dataclass
class _Run:
    """One history's state as it unfolds: the gate's settings per task type, the pairs'
    review counts, and per output its decision, the rate it was drawn at (0 if not), and
    the blocks it was queued and reviewed in (-1 if not)."""

    config: world.SimulationConfig
    settings: LoopSettings
    traffic: _Traffic
    rng: np.random.Generator
    state: dict[int, TaskState]
    pairs: np.ndarray  # (task type, model, [reviewed, approved unchanged])
    decision: np.ndarray
    inclusion: np.ndarray
    queued_at: np.ndarray
    reviewed_at: np.ndarray
    verdicts: list[tuple[int, int, int]] = field(default_factory=list)  # output, reviewer, label
    runs: list[ThresholdRun] = field(default_factory=list)
    weight_log: list[dict[int, dict[str, float]]] = field(default_factory=list)

    @classmethod
    def start(cls, config: world.SimulationConfig, settings: LoopSettings) -> _Run:
        traffic = _Traffic(config)
        if settings.flaws is not None:
            traffic.blind = traffic.blind_draw < settings.flaws.blind_share
        n = len(traffic.truth)
        return cls(
            config=config,
            settings=settings,
            traffic=traffic,
            rng=np.random.default_rng([config.seed, 7]),
            state={
                t: TaskState(
                    review=settings.review,
                    approve=settings.approve,
                    audit_rate_approved=settings.audit_rate_approved,
                    weights=dict.fromkeys(VALIDATOR_NAMES, 1.0),
                )
                for t in range(len(config.task_types))
            },
            pairs=np.zeros((len(config.task_types), len(config.models), 2)),
            decision=np.full(n, -1),
            inclusion=np.zeros(n),
            queued_at=np.full(n, -1),
            reviewed_at=np.full(n, -1),
        )

    @property
    def task_type(self) -> np.ndarray:
        return self.traffic.task_type

    @property
    def block(self) -> np.ndarray:
        return self.traffic.block

    def scores(self, rows: np.ndarray) -> np.ndarray:
        return _scores(self.traffic, rows, self.state, self.pairs)


def run_history(config: world.SimulationConfig, settings: LoopSettings) -> History:
    run = _Run.start(config, settings)
    traffic = run.traffic
    capacity = settings.reviews_per_day / BLOCKS_PER_DAY
    for block in range(config.days * BLOCKS_PER_DAY):
        _gate(run, np.flatnonzero(traffic.block == block), block)
        # The queue, as gating.reviews.item_claim takes it: audits first up to the reserved
        # share, then the held outputs oldest first and only then the other audits (with
        # ``held_first`` off, everything past the share oldest first).
        waiting = np.flatnonzero((run.queued_at >= 0) & (run.reviewed_at < 0))
        is_audit = run.decision[waiting] != HELD
        budget = int(capacity + run.rng.random())
        audits = waiting[is_audit][: int(budget * settings.audit_share)]
        rest = np.setdiff1d(waiting, audits, assume_unique=True)
        if settings.held_first:
            rest = rest[np.argsort(run.decision[rest] != HELD, kind="stable")]
        rest = rest[: budget - len(audits)]
        for output in np.concatenate([audits, rest]):
            _review(run, int(output))
            run.reviewed_at[output] = block
        if not settings.learn:
            continue
        window = np.flatnonzero(
            (run.reviewed_at >= 0)
            & (traffic.block > block - settings.lookback_days * BLOCKS_PER_DAY)
        )
        if len(window) < 50:
            continue
        _cycles(run, block, window, thresholds_due=(block + 1) % THRESHOLD_EVERY == 0)
        run.weight_log.append({t: dict(s.weights) for t, s in run.state.items()})

    return History(
        config=config,
        settings=settings,
        task_type=traffic.task_type,
        truth=traffic.truth,
        block=traffic.block,
        decision=run.decision,
        runs=run.runs,
        weights=run.weight_log,
        failed=traffic.failed,
        final_scores=run.scores(np.arange(len(traffic.truth))),
        queued_at=run.queued_at,
        reviewed_at=run.reviewed_at,
        inclusion=run.inclusion,
        verdicts=np.array(run.verdicts, dtype=np.int64).reshape(-1, 3),
        final_pairs=run.pairs.copy(),
    )


def _gate(run: _Run, now: np.ndarray, block: int) -> None:
    """Decide the block's outputs with each task type's thresholds; queue the held ones and
    the audits drawn among the delivered."""
    scores = run.scores(now)
    for t, st in run.state.items():
        mine = run.traffic.task_type[now] == t
        idx, s = now[mine], scores[mine]
        policy = scoring.GatePolicy(
            review_threshold=st.review,
            approve_threshold=st.approve,
            # The loop leaves cold start out: every task type starts with its thresholds.
            cold_start_reviews=0,
            approve_requires=run.settings.approve_requires,
            approve_guarantee=st.guarantee,
            estimated_approve=st.estimate,
        )
        decided = scoring.decide_many(s, policy)
        d = np.select(
            [decided.held, decided.approved, decided.withheld], [HELD, APPROVED, WITHHELD], WARNING
        )
        run.decision[idx] = d
        rate = np.select(
            [(d == APPROVED) | (d == WITHHELD), d == WARNING],
            [st.audit_rate_approved, run.settings.audit_rate_warning],
            1.0,
        )
        drawn = (d == HELD) | (run.rng.random(len(idx)) < rate)
        run.inclusion[idx[drawn]] = rate[drawn]
        run.queued_at[idx[drawn]] = block


def _bonus(traffic: _Traffic, rows: np.ndarray, pairs: np.ndarray) -> np.ndarray:
    """Each output's task accuracy bonus from its pair's reviews so far, worked out once
    per pair."""
    per_pair = np.array(
        [
            [scoring.task_accuracy_bonus(scoring.PairHistory(int(r), int(a))) for r, a in row]
            for row in pairs
        ]
    )
    return per_pair[traffic.task_type[rows], traffic.model[rows]]


def _scores(traffic: _Traffic, rows: np.ndarray, state: dict, pairs: np.ndarray) -> np.ndarray:
    weights_of = np.array([[state[t].weights[v] for v in VALIDATOR_NAMES] for t in state])
    out = np.empty(len(rows))
    for t in state:
        mine = traffic.task_type[rows] == t
        r = rows[mine]
        out[mine] = scoring.scores_many(
            reported=np.ones((len(r), len(VALIDATOR_NAMES)), dtype=bool),
            passed=~traffic.failed[r],
            weights=weights_of[t],
            is_fact_check=IS_FACT_CHECK,
            input_clarity=traffic.clarity[r],
            coherence=traffic.coherence[r],
            requires_fact_check=traffic.requires_fact_check[r],
            bonus=_bonus(traffic, r, pairs),
        )
    return out


def _review(run: _Run, output: int) -> None:
    """One reviewer's verdict, a second one's for the double-review share and for an audit
    found at fault, and the lead's where those two disagree (the adjudication, one more
    verdict)."""
    truth = world.TRUTHS[run.traffic.truth[output]]
    people, rng = run.settings.reviewers, run.rng

    def decide(reviewer: int) -> int:
        return _decide(people[reviewer], truth, rng, run.settings.flaws, run.traffic, output)

    first = int(rng.integers(len(people)))
    said = [(first, decide(first))]
    # The rounds follow the queue's rule (gating.rounds); the loop's labels have no style
    # only, so any label but approve finds fault.
    following = rounds.round_after(
        Round.AUDIT if run.decision[output] != HELD else Round.REVIEW,
        needs_second_review=rng.random() < run.settings.double_review_rate,
        finds_fault=said[0][1] != labels.APPROVE,
    )
    if following == Round.SECOND:
        second = (first + int(rng.integers(1, len(people)))) % len(people)
        said.append((second, decide(second)))
        if rounds.round_after(Round.SECOND, agrees_with_first=said[0][1] == said[1][1]):
            said.append((LEAD, decide(LEAD)))
    run.verdicts += [(output, reviewer, label) for reviewer, label in said]
    tt, model = run.traffic.task_type[output], run.traffic.model[output]
    run.pairs[tt, model, 0] += 1
    run.pairs[tt, model, 1] += said[-1][1] == labels.APPROVE


def _decide(
    reviewer: world.Reviewer,
    truth: world.Truth,
    rng,
    flaws: world.ReviewerFlaws | None = None,
    traffic: _Traffic | None = None,
    output: int = 0,
) -> int:
    if flaws is None:
        row = reviewer.matrix[truth]
    else:
        row = flaws.row(
            reviewer,
            truth,
            difficulty=float(traffic.difficulty[output]),
            blind=bool(traffic.blind[output]),
        )
    return int(rng.choice(3, p=[row[a] for a in world.ACTIONS]))


def _cycles(run: _Run, block: int, window: np.ndarray, *, thresholds_due: bool) -> None:
    traffic, state, settings = run.traffic, run.state, run.settings
    decision, inclusion = run.decision, run.inclusion
    # Audits drawn at a sparser rate than their stratum's current one are left out: the
    # bound's weight range would be theirs (see thresholds.audit_rate).
    current = np.array([state[t].audit_rate_approved for t in state])
    sparser = np.isin(decision[window], (APPROVED, WITHHELD)) & (
        inclusion[window] < current[traffic.task_type[window]]
    )
    window = window[~sparser]
    scores = run.scores(window)
    position = {int(o): i for i, o in enumerate(window)}
    verdict_rows = np.array(run.verdicts, dtype=np.int64).reshape(-1, 3)
    rows = verdict_rows[np.isin(verdict_rows[:, 0], window)]
    items = np.array([position[int(o)] for o in rows[:, 0]], dtype=np.int64)
    data = labels.label_data(
        scores,
        items,
        rows[:, 1],
        np.array(labels.LABELS)[rows[:, 2]],
        strata=traffic.task_type[window],
    )
    fit = labels.fit_label_model(data)
    weight = achieved_weights(run, window, block)
    split = sampling.fit_certify_split(window, settings.fit_share)
    for t in state:
        fitting = (traffic.task_type[window] == t) & split.fit
        update = weights.weight_update(
            state[t].weights,
            weights.error_evidence(
                VALIDATOR_NAMES,
                traffic.failed[window[fitting]],
                fit.error[fitting],
                weight[fitting],
            ),
        )
        state[t].weights = update.weights
    if not thresholds_due:
        return
    boot = labels.bootstrap_label_model(
        data, fit, replicates=settings.replicates, seed=run.config.seed * 10_000 + block
    )
    rep_bad, rep_edit = boot.bad, boot.error
    scores = run.scores(window)  # with this block's new weights
    # The truth of the whole window's traffic, rescored the same way, for the record.
    traffic_rows = np.flatnonzero(
        (traffic.block <= block) & (traffic.block > block - settings.lookback_days * BLOCKS_PER_DAY)
    )
    traffic_scores = run.scores(traffic_rows)
    for t, st in state.items():
        mine = traffic.task_type[window] == t
        certifying = mine & split.certify
        w = thresholds.Window(
            scores=scores[certifying],
            weights=weight[certifying],
            loss_bad=fit.bad[certifying],
            loss_edit=fit.error[certifying],
            replicates_bad=rep_bad[:, certifying],
            replicates_edit=rep_edit[:, certifying],
            max_weight=None,
        )
        proposals = thresholds.guarded(
            w,
            review=st.review,
            approve=st.approve,
            budgets=settings.budgets,
            last_certified=st.last_certified,
            estimate=settings.approve_requires is scoring.ApproveRequires.ESTIMATE,
            estimate_line=st.estimate,
        )
        final = thresholds.constrain(proposals, pins={"review": False, "approve": False})
        approve = final["approve"]
        st.review, st.approve = final["review"].new, approve.new
        st.estimate = approve.estimate
        if approve.state == thresholds.State.CERTIFIED:
            st.guarantee = scoring.Guarantee.CERTIFIED
            st.last_certified = approve.new
        else:
            st.guarantee = (
                scoring.Guarantee.NONE if st.estimate is None else scoring.Guarantee.ESTIMATED
            )
        st.not_attainable_runs = (
            st.not_attainable_runs + 1 if approve.state == thresholds.State.NOT_ATTAINABLE else 0
        )
        st.audit_rate_approved = thresholds.audit_rate(
            approve.state, st.audit_rate_approved, budget=settings.audit_rate_budget
        )
        mine_traffic = traffic.task_type[traffic_rows] == t
        truth_scores = traffic_scores[mine_traffic]
        truth = traffic.truth[traffic_rows[mine_traffic]]
        wrong, bad = truth != GOOD, truth == BAD
        run.runs.append(
            ThresholdRun(
                block=block,
                task_type=t,
                review=st.review,
                approve=st.approve,
                approve_state=str(approve.state),
                review_state=str(final["review"].state),
                estimated=st.guarantee is scoring.Guarantee.ESTIMATED,
                audit_rate=st.audit_rate_approved,
                estimated_error={
                    c: _weighted_mean(fit.error[mine], weight[mine], scores[mine] >= c)
                    for c in ESTIMATE_AT
                },
                true_error={c: _share(wrong, truth_scores >= c) for c in ESTIMATE_AT},
                estimated_bad={
                    c: _weighted_mean(fit.bad[mine], weight[mine], scores[mine] >= c)
                    for c in ESTIMATE_AT
                },
                true_bad={c: _share(bad, truth_scores >= c) for c in ESTIMATE_AT},
                evidence=approve.evidence,
                estimates=EstimateCurve.of(w),
            )
        )


def _share(flags: np.ndarray, mask: np.ndarray) -> float:
    return float(flags[mask].mean()) if mask.any() else float("nan")


def _weighted_mean(values, weight, mask) -> float:
    if not mask.any():
        return float("nan")
    return float(np.average(values[mask], weights=weight[mask]))


def achieved_weights(outputs: History | _Run, window: np.ndarray, block: int) -> np.ndarray:
    """1 / each judged output's achieved inclusion probability (``sampling``): its draw rate
    times the share of its stratum's draws (task type, decision) in the lookback window
    before the end of ``block`` reviewed by then. ``window`` holds the judged outputs."""
    start = block - outputs.settings.lookback_days * BLOCKS_PER_DAY
    drawn = np.flatnonzero(
        (outputs.queued_at >= 0) & (outputs.block > start) & (outputs.block <= block)
    )
    # Withheld audits are drawn at the approved rate and reviewed in the same turn as the
    # approved ones: one stratum.
    pooled = np.where(outputs.decision == WITHHELD, APPROVED, outputs.decision)
    stratum = outputs.task_type * DECISIONS + pooled
    size = len(outputs.config.task_types) * DECISIONS
    reviewed = drawn[(outputs.reviewed_at[drawn] >= 0) & (outputs.reviewed_at[drawn] <= block)]
    draws = np.bincount(stratum[drawn], minlength=size)
    done = np.bincount(stratum[reviewed], minlength=size)
    return 1.0 / sampling.achieved_inclusion(
        outputs.inclusion[window], draws[stratum[window]], done[stratum[window]]
    )


def fresh_sample(
    history: History, *, days: int, seed_offset: int = 1_000_000
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``days`` of new traffic from the history's world (another seed), scored as the
    history ended (its last validator weights and pair records): per output its task type,
    truth and score. What a threshold would do from then on, measured on outputs it never
    saw."""
    config = replace(history.config, seed=history.config.seed + seed_offset, days=days)
    traffic = _Traffic(config)
    last = history.weights[-1] if history.weights else {}
    state = {
        t: TaskState(
            review=0.0,
            approve=0.0,
            audit_rate_approved=0.0,
            weights=dict(last.get(t) or dict.fromkeys(VALIDATOR_NAMES, 1.0)),
        )
        for t in range(len(config.task_types))
    }
    pairs = history.final_pairs
    if not pairs.size:
        pairs = np.zeros((len(config.task_types), len(config.models), 2))
    rows = np.arange(len(traffic.truth))
    return traffic.task_type, traffic.truth, _scores(traffic, rows, state, pairs)


def history_config(
    seed: int, *, days: int = 30, outputs_per_day: int = 2000, drift: world.Drift | None = None
) -> world.SimulationConfig:
    return world.SimulationConfig(
        seed=seed,
        days=days,
        outputs_per_day=outputs_per_day,
        start=date(2026, 3, 2),
        drift=drift,
    )


def accurate_reviewers(settings: LoopSettings) -> LoopSettings:
    """Every reviewer as careful as the accurate one."""
    accurate = world.DEFAULT_REVIEWERS[0]
    return replace(
        settings,
        reviewers=tuple(world.Reviewer(r.name, accurate.matrix) for r in world.DEFAULT_REVIEWERS),
    )


def flawed_reviewers(settings: LoopSettings) -> LoopSettings:
    """The default reviewers with the flaws that Dawid-Skene does not describe."""
    return replace(settings, flaws=world.ReviewerFlaws())


def perfect_reviewers(settings: LoopSettings) -> LoopSettings:
    """Reviewers who never err: approve what is good, modify what needs an edit, reject what
    is bad (the world without reviewer noise)."""
    honest = {
        truth: {action: float(action == verdict) for action in world.Action}
        for truth, verdict in world.RIGHT_ACTION.items()
    }
    return replace(
        settings,
        reviewers=tuple(world.Reviewer(r.name, honest) for r in world.DEFAULT_REVIEWERS),
    )
