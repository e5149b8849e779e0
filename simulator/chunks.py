"""Gating one chunk of a simulated day, in a replay's transaction: the work that the
replay (``run``) and its worker processes (``workers``) both do, kept here so that each
of them imports it and neither imports the other.
"""

from __future__ import annotations

import random
from contextlib import contextmanager

from django.contrib.auth.models import AbstractUser
from django.db import connection, transaction

from gating import bulk, services
from gating.submissions import OutputSubmission
from learning.models import SimulatedTruth
from simulator.world import DayTraffic, Truth


@contextmanager
def replay_transaction(*, enabled: bool):
    """A transaction of the replay's own, when ``enabled``; otherwise the caller's."""
    if not enabled:
        yield
        return
    with transaction.atomic():
        if connection.vendor == "postgresql":
            # A replay can be run again: it need not wait for each commit to reach the
            # disk, and the commits are many.
            with connection.cursor() as cursor:
                cursor.execute("SET LOCAL synchronous_commit TO OFF")
        yield


def gate_chunk(traffic: DayTraffic, chunk: tuple[int, int], gateway: AbstractUser) -> int:
    """Gate one chunk of the day through the batch ingest and store its truths apart;
    returns how many outputs it gated.

    The caller clears the gate's caches at each new simulated hour: they expire by
    wall-clock time, and a replay must score every output with the counters of its own
    simulated hour, which change only between hours (with the reviews and the cycles).
    """
    batch = traffic.submissions(*chunk)
    results = services.output_ingest_batch(
        source=gateway,
        submissions=[OutputSubmission.model_validate(sent) for sent, _, _ in batch],
        created_at=[at for _, at, _ in batch],
        # The gate's own draws (audits, second reviews), seeded per chunk.
        rng=random.Random(f"{traffic.config.seed}-gate-{traffic.day}-{chunk[0]}"),
    )
    # A run repeated without --reset replays what is stored: those truths are there already.
    created = [
        (r.output.pk, truth) for r, (_, _, truth) in zip(results, batch, strict=True) if r.created
    ]
    _truths_store(created, traffic.config.seed)
    return len(batch)


def _truths_store(fresh: list[tuple[int, Truth]], seed: int) -> None:
    bulk.insert_rows(
        [
            bulk.unsaved(SimulatedTruth, {"output_id": pk, "truth": truth.value, "seed": seed})
            for pk, truth in fresh
        ]
    )
