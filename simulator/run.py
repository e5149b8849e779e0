"""Running the simulated world through the real gate and the real queue.

Outputs go through ``gating.services.output_ingest_batch`` (the gate's own scoring, in
bulk), and simulated reviewers work the queue through the same claims and decisions as
people, at simulated times: only on weekdays from 09:00 to 18:00 UTC, so the backlog ages
overnight and over weekends. The hidden truth is stored in ``SimulatedTruth``, where the
gate never looks.
"""

from __future__ import annotations

import itertools
import math
import multiprocessing
import random
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from datetime import UTC, datetime, time, timedelta

import numpy as np
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractUser
from django.db import connection, transaction

from gating import reviews, rubrics, services
from gating.models import Output, Review, ReviewItem, Rubric, TaskType
from gating.roles import Role
from learning.models import Alert, CycleRun, SimulatedTruth
from simulator import workers
from simulator.chunks import gate_chunk, replay_transaction
from simulator.rubric_scores import scores_draw
from simulator.world import (
    DEFAULT_REVIEWERS,
    WORKDAY_END,
    WORKDAY_START,
    Action,
    DayTraffic,
    Reviewer,
    SimulationConfig,
    Truth,
    day_traffic,
)

Kind = ReviewItem.Kind
SIM_GATEWAY = "sim-gateway"
# Each simulated reviewer decides at most this many items per working hour.
DEFAULT_REVIEWS_PER_HOUR = 12
# The last day is worked through live claims, so that the queue as it stands was made by
# claims and leases; the days before it are recorded in bulk (the same decisions, faster).
DEFAULT_LIVE_DAYS = 1
# How long a simulated reviewer takes to decide an item once claimed.
DECISION_TIME = timedelta(seconds=20)
_REJECT_REASON = {Truth.BAD: "factual_error", Truth.NEEDS_EDIT: "formatting", Truth.GOOD: "other"}


@dataclass(frozen=True)
class SimulationReport:
    outputs: int
    reviews: int
    open_items: int


def _user(username: str, role: Role) -> AbstractUser:
    existing = get_user_model().objects.filter(username=username).first()
    return existing or services.user_create(username=username, role=role)


def simulation_reset() -> int:
    """Delete what earlier simulations stored: their outputs with queue items, reviews and
    truths, and the task types (with their validators and counters) that no other output
    uses, so that the same seed replays the same history, and the learning history when
    nothing but simulated traffic was there. Returns how many outputs went. The audit log
    keeps its entries: it is append-only."""
    outputs = Output.objects.filter(source__username=SIM_GATEWAY)
    with transaction.atomic():
        # Set-based deletes, children first, through the fast path Django's own collector
        # uses: QuerySet.delete() would load every row of a million-output history.
        for model in (Review, ReviewItem, SimulatedTruth):
            model.objects.filter(output__in=outputs)._raw_delete(model.objects.db)
        deleted = outputs._raw_delete(outputs.db)
        TaskType.objects.exclude(pk__in=Output.objects.values("task_type")).delete()
        if not Output.objects.exists():
            # The learning history was computed from the simulated traffic alone: a replay
            # must find its windows not yet run, or it would skip them.
            CycleRun.objects.all().delete()
            Alert.objects.all().delete()
    transaction.on_commit(services.gate_caches_clear)
    return deleted


# Monday to Friday.
WEEKDAYS = frozenset(range(5))


def _is_working_hour(hour: datetime, working_days: frozenset[int] = WEEKDAYS) -> bool:
    return hour.weekday() in working_days and WORKDAY_START <= hour.time() < WORKDAY_END


@dataclass(frozen=True)
class _Draws:
    """The replay's two generators: ``verdicts`` for the reviewers' turns and verdicts,
    ``scores`` for their rubric scores only, so that a rubric added or changed leaves every
    verdict of a seeded history as it was."""

    verdicts: random.Random
    scores: random.Random
    # Names each output's own rubric values (simulator.rubric_scores), with its external id.
    seed: int


def _decision(
    reviewer: Reviewer,
    truth: Truth,
    output: tuple[int, str],
    draws: _Draws,
    rubric: Rubric | None,
) -> reviews.DecisionInput:
    """``output`` is the output's (external id, text): the external id, which a seed
    replays the same whatever ids the database gives, names the output's rubric values."""
    external_id, output_text = output
    action = reviewer.decide(truth, draws.verdicts)
    scored = {}
    if rubric is not None:
        key = f"{draws.seed}-{external_id}"
        scored = {
            "scores": scores_draw(rubric.dimensions, truth, reviewer, draws.scores, key),
            "rubric_version": rubric.version,
        }
    if action == Action.MODIFY:
        return reviews.DecisionInput("modify", edited_output=f"{output_text} (edited)", **scored)
    if action == Action.REJECT:
        return reviews.DecisionInput("reject", reason=_REJECT_REASON[truth], **scored)
    return reviews.DecisionInput("approve", **scored)


def _turns(hour: datetime, people: list, per_hour: int, rng) -> list[tuple]:
    """The reviewers take turns through the hour: (turn time, user, profile) in order."""
    return [
        (hour + timedelta(seconds=(turn + rng.random()) * 3600 / per_hour), user, profile)
        for turn in range(per_hour)
        for user, profile in people
    ]


def _truths_of(output_ids) -> dict[int, Truth]:
    """The hidden truths of the outputs that the simulated reviewers are about to judge."""
    rows = SimulatedTruth.objects.filter(output_id__in=output_ids).values_list("output_id", "truth")
    return {pk: Truth(truth) for pk, truth in rows}


def _work_hour(hour, people, queue, per_hour, draws: _Draws) -> int:
    """Live: at each turn the reviewer claims and decides one item that has arrived by then,
    until their capacity or the queue runs out."""
    decided = 0
    idle = set()
    hour_end = hour + timedelta(hours=1)
    for at, user, profile in _turns(hour, people, per_hour, draws.verdicts):
        if user.pk in idle:
            continue
        # The hour's outputs are all gated before its turns are taken: a turn may only see
        # what had arrived by its time.
        item = reviews.item_claim(reviewer=user, items=queue.filter(queued_at__lte=at), now=at)
        if item is None:
            # Nothing yet is not nothing this hour: more may arrive before it ends.
            arriving = queue.filter(
                state=ReviewItem.State.OPEN, queued_at__gt=at, queued_at__lt=hour_end
            )
            if not arriving.exists():
                idle.add(user.pk)
                if len(idle) == len(people):
                    break
            continue
        truth = _truths_of([item.output_id])[item.output_id]
        rubric = rubrics.rubric_in_force(item.task_type_id)
        reviews.item_decide(
            item_id=item.pk,
            reviewer=user,
            decision=_decision(
                profile, truth, (item.output.external_id, item.output.output_text), draws, rubric
            ),
            now=at + DECISION_TIME,
        )
        decided += 1
    return decided


def _record_hour(hour, people, queue, per_hour, draws: _Draws) -> int:
    """History: the same turns, given the oldest open items in queue order (each to the
    first free turn at or after its arrival that its reviewer may take), recorded at once
    with ``reviews.decisions_record`` instead of a claim and a decision each."""
    turns = _turns(hour, people, per_hour, draws.verdicts)
    leads = {user.pk for user, _ in people if user.has_perm("gating.adjudicate_items")}
    # The items alone, without their outputs: ordering the whole backlog joined to its
    # outputs costs a hundred times more than finding the oldest items first.
    waiting = queue.filter(
        state=ReviewItem.State.OPEN,
        lease_expires_at__isnull=True,
        queued_at__lt=hour + timedelta(hours=1),
    ).order_by("turn_at", "id")
    # As claims would: the oldest audits take the reserved share of the turns (claims give
    # REVIEW_AUDIT_SHARE of each reviewer's claims to audits while any are open), the
    # held outputs' rounds in turn the rest, and then the other audits
    # (gating.reviews.claimable_items); only leads take adjudications and gold checks, so
    # a pile of those cannot crowd everything else out of the hour.
    lead_turns = sum(1 for _, user, _ in turns if user.pk in leads)
    firsts = waiting.exclude(kind__in=ReviewItem.LEAD_KINDS)
    audits = list(
        firsts.filter(is_audit=True)[: math.ceil(settings.REVIEW_AUDIT_SHARE * len(turns))]
    )
    rest = firsts.exclude(pk__in=[a.pk for a in audits]).order_by("is_audit", "turn_at", "id")
    rest = rest[: len(turns) - len(audits)]
    items = sorted(
        [*audits, *rest, *waiting.filter(kind__in=ReviewItem.LEAD_KINDS)[:lead_turns]],
        key=lambda item: (item.turn_at, item.pk),
    )
    output_ids = [i.output_id for i in items]
    texts = {
        pk: (external_id, text)
        for pk, external_id, text in Output.objects.filter(pk__in=output_ids).values_list(
            "pk", "external_id", "output_text"
        )
    }
    truths = _truths_of(output_ids)
    rubric_of = rubrics.rubrics_in_force(i.task_type_id for i in items)
    follow_ups = [i.output_id for i in items if i.kind in ReviewItem.FOLLOW_UP_KINDS]
    judged = set(
        Review.objects.filter(output_id__in=follow_ups).values_list("output_id", "reviewer_id")
    )
    decisions = []
    for item in items:
        for n, (at, user, profile) in enumerate(turns):
            if (
                at >= item.queued_at
                and (item.output_id, user.pk) not in judged
                and (item.kind not in ReviewItem.LEAD_KINDS or user.pk in leads)
            ):
                del turns[n]
                decision = _decision(
                    profile,
                    truths[item.output_id],
                    texts[item.output_id],
                    draws,
                    rubric_of.get(item.task_type_id),
                )
                at += DECISION_TIME
                decisions.append(reviews.RecordedDecision(item, user, decision, at))
                break
    reviews.decisions_record(decisions)
    return len(decisions)


def simulation_run(
    config: SimulationConfig,
    *,
    reviewers: tuple[Reviewer, ...] = DEFAULT_REVIEWERS,
    reviews_per_hour: int = DEFAULT_REVIEWS_PER_HOUR,
    live_days: int = DEFAULT_LIVE_DAYS,
    leads: int = 1,
    processes: int = 1,
    on_progress: Callable[[int], None] = lambda done: None,
    on_hour_end: Callable[[datetime], None] | None = None,
    until: datetime | None = None,
    working_days: frozenset[int] = WEEKDAYS,
) -> SimulationReport:
    """Replay ``config``'s traffic hour by hour, with reviewers working the queue.

    In the last ``live_days`` days every review is a live claim and decision; before
    them, each hour's decisions are recorded in bulk (the same decisions by the same
    rules, without a claim each, which would take hours at a million outputs).

    With ``processes`` above 1 on PostgreSQL (outside a transaction), that many worker
    processes gate each hour's chunks side by side; the stored history is the same as
    with one process, because each chunk's draws are seeded on their own.

    ``on_hour_end``, if given, is called with each simulated hour's end, after that hour is
    stored: the place for scheduled work (the learning cycles) to run at its simulated
    time. Without it, the hours between reviews are gated without waiting for each other.

    ``until``, if given, ends the replay with the last hour that is over by then, its
    decisions included: the demo replays up to the present, and nothing it stores may lie
    in the future.

    ``working_days`` are the weekdays (Monday 0) on which the reviewers work, 09:00-18:00.
    """
    gateway = _user(SIM_GATEWAY, Role.GATEWAY)
    # The first ``leads`` reviewers are leads, so that disagreements get adjudicated; a
    # lead never adjudicates an output they reviewed, so with one lead, every disagreement
    # they took part in waits for good.
    people = [
        (_user(f"sim-{r.name}", Role.LEAD if i < leads else Role.REVIEWER), r)
        for i, r in enumerate(reviewers)
    ]
    queue = ReviewItem.objects.all()
    if Output.objects.exclude(source=gateway).exists():
        # Real traffic too: simulated reviewers must only judge what has a known truth.
        queue = queue.filter(output__source=gateway)
    draws = _Draws(
        verdicts=random.Random(f"{config.seed}-reviews"),
        scores=random.Random(f"{config.seed}-rubric-scores"),
        seed=config.seed,
    )
    outputs = decided = 0
    shared = processes > 1 and connection.vendor == "postgresql"
    shared = shared and not connection.in_atomic_block

    with _Gatekeepers(config, gateway, processes if shared else 0) as gatekeepers:
        for day in range(config.days):
            midnight = _midnight(config, day)
            hours = _hours_over(midnight, until)
            if hours == 0:
                break
            traffic = day_traffic(config, day)
            chunks = _hourly_chunks(traffic)
            # One transaction a day when working alone: each claim and decision inside it
            # is a savepoint rather than a commit, which makes the replay several times
            # faster. Workers commit their own chunks, so then the reviews of each hour
            # are a transaction of their own, which the next hour's workers must see.
            with replay_transaction(enabled=not gatekeepers.shared):
                for stretch in _stretches(
                    midnight,
                    hours,
                    acts_at_hour_end=on_hour_end is not None,
                    working_days=working_days,
                ):
                    jobs = [(h, chunk) for h in stretch for chunk in chunks[h]]
                    for gated in gatekeepers.gate(traffic, jobs):
                        outputs += gated
                        on_progress(gated)
                    hour = midnight + timedelta(hours=stretch[-1])
                    if _is_working_hour(hour, working_days):
                        work = _work_hour if day >= config.days - live_days else _record_hour
                        with replay_transaction(enabled=gatekeepers.shared):
                            decided += work(hour, people, queue, reviews_per_hour, draws)
                    if on_hour_end is not None:
                        on_hour_end(hour + timedelta(hours=1))
            if (day + 1) & day == 0:
                # After the 1st, 2nd, 4th, 8th… day: whenever the queue may have doubled.
                _queue_statistics_refresh()

    return SimulationReport(
        outputs=outputs,
        reviews=decided,
        open_items=queue.filter(state=ReviewItem.State.OPEN).count(),
    )


def _midnight(config: SimulationConfig, day: int) -> datetime:
    return datetime.combine(config.start + timedelta(days=day), time(0), UTC)


def _hours_over(midnight: datetime, until: datetime | None) -> int:
    """How many of the day's hours, with the decisions made in them, are over by ``until``."""
    if until is None:
        return 24
    return max(0, min(24, (until - DECISION_TIME - midnight) // timedelta(hours=1)))


def outputs_before(config: SimulationConfig, until: datetime | None) -> int:
    """How many outputs a replay of ``config`` that ends at ``until`` gates (for a progress
    bar): every output of each whole day, and those of the hours over on the last."""
    total = 0
    for day in range(config.days):
        hours = _hours_over(_midnight(config, day), until)
        if hours < 24:
            total += int(np.count_nonzero(_hour_of_rows(day_traffic(config, day)) < hours))
            break
        total += config.outputs_per_day
    return total


# Each hour's outputs are gated in an even number of equal chunks of at most this many (a
# quiet hour, of at most half as many, in one), each with draws seeded by its place in the
# day: the history is the same however many processes share the chunks, and two processes
# finish a busy hour together.
CHUNK_OUTPUTS = 400


def _hour_of_rows(traffic: DayTraffic) -> np.ndarray:
    """Each row's hour of the day (0-23)."""
    since_midnight = traffic.created_at - traffic.created_at.astype("datetime64[D]")
    return since_midnight.astype("timedelta64[h]").astype(int)


def _hourly_chunks(traffic: DayTraffic) -> list[list[tuple[int, int]]]:
    """For each hour of the day, its rows as (start, stop) chunks."""
    bounds = np.searchsorted(_hour_of_rows(traffic), np.arange(25)).tolist()
    chunks = []
    for first, end in itertools.pairwise(bounds):
        size = end - first
        # A quiet hour is one chunk: splitting it would balance little and cost a batch.
        count = 1 if size <= CHUNK_OUTPUTS // 2 else 2 * math.ceil(size / (2 * CHUNK_OUTPUTS))
        cuts = [first + (end - first) * i // count for i in range(count + 1)]
        chunks.append([(a, b) for a, b in itertools.pairwise(cuts) if a < b])
    return chunks


def _stretches(
    midnight: datetime, hours: int, *, acts_at_hour_end: bool, working_days: frozenset[int]
) -> list[list[int]]:
    """The day's first ``hours`` hours in runs that can be gated without waiting for each
    other: a run ends with an hour after which something changes what the gate knows
    (reviews, or scheduled work when there is any), so the next run is scored with what
    that left."""
    stretches: list[list[int]] = [[]]
    for h in range(hours):
        stretches[-1].append(h)
        if acts_at_hour_end or _is_working_hour(midnight + timedelta(hours=h), working_days):
            stretches.append([])
    return [s for s in stretches if s]


def _queue_statistics_refresh() -> None:
    """Have PostgreSQL count the queue again.

    A replay adds a day's traffic in seconds, faster than autovacuum (when it runs at all)
    re-analyzes: on statistics from when the queue was nearly empty, the planner reads
    every open item to find the oldest few, and each simulated hour's reviews slow down
    as the backlog grows. An analysis costs a quarter of a second at a million outputs, so
    it runs when the queue may have doubled rather than every day.
    """
    if connection.vendor != "postgresql":
        return
    with connection.cursor() as cursor:
        for model in (ReviewItem, Review):
            cursor.execute(f"ANALYZE {connection.ops.quote_name(model._meta.db_table)}")


class _Gatekeepers:
    """Gates chunks in this process, or in a pool of worker processes with their own
    database connections when ``processes`` is above 0."""

    def __init__(self, config: SimulationConfig, gateway: AbstractUser, processes: int):
        self.config, self.gateway, self.processes = config, gateway, processes
        self.shared = processes > 0
        self.pool = None

    def __enter__(self) -> _Gatekeepers:
        if self.shared:
            # Spawned, not forked: a fork would copy this process's open connection and
            # threads (the progress bar's) into every worker. An executor rather than a
            # Pool: a worker that dies fails the run instead of leaving it waiting forever.
            self.pool = ProcessPoolExecutor(
                self.processes,
                mp_context=multiprocessing.get_context("spawn"),
                initializer=workers.worker_start,
                initargs=(dict(connection.settings_dict), self.config, self.gateway.pk),
            )
        return self

    def __exit__(self, *exc) -> None:
        if self.pool is not None:
            # After a failure, the chunks still queued are dropped.
            self.pool.shutdown(wait=True, cancel_futures=exc[0] is not None)

    def gate(self, traffic: DayTraffic, jobs: list[tuple[int, tuple[int, int]]]) -> Iterator[int]:
        """Gate (hour, chunk) jobs of one day, in hour order; how many outputs each gated."""
        if not self.shared:
            hour = None
            for h, chunk in jobs:
                if h != hour:
                    services.gate_caches_clear()
                    hour = h
                yield gate_chunk(traffic, chunk, self.gateway)
            return
        futures = [self.pool.submit(workers.worker_gate, (traffic.day, h, c)) for h, c in jobs]
        for done in as_completed(futures):
            yield done.result()
