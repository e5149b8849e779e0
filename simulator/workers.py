"""The worker processes' side of a shared simulation run.

A spawned worker starts as a bare interpreter and unpickles these functions before
anything else, so this module imports nothing of Django's until the worker has set
Django up with its parent's database. Setting up happens on the first chunk rather than
in the executor's initializer, so that an error there reaches the parent as that chunk's
own error rather than as a broken pool.
"""

from __future__ import annotations

import gc
from typing import Any

_state: dict[str, Any] = {}
# Young objects not yet freed before the collector makes a pass: several times what a worker's
# share of a fresh simulated day leaves (about 20,000 at 33,334 outputs a day), so that
# only a replay, which leaves every output it built, brings a pass before the day's end.
_YOUNG_OBJECTS_BEFORE_A_PASS = 100_000


def worker_start(database: dict, config: Any, gateway_pk: int) -> None:
    _state.update(database=database, config=config, gateway_pk=gateway_pk)


def worker_gate(job: tuple[int, int, tuple[int, int]]) -> int:
    """Gate one chunk of one hour of one day in this worker's own transaction; returns
    how many outputs it gated."""
    if "gateway" not in _state:
        import django
        from django.conf import settings

        # The parent's database, which under the test runner is not the one settings name.
        settings.DATABASES["default"] = _state["database"]
        django.setup()
        from django.contrib.auth import get_user_model

        _state["gateway"] = get_user_model().objects.get(pk=_state["gateway_pk"])
        # Gating makes many short-lived objects, and the collector's automatic passes over
        # them and everything Django loaded cost as much again as the validation: what is
        # loaded is set aside for good, and a pass waits until objects have piled up.
        gc.freeze()
        gc.set_threshold(_YOUNG_OBJECTS_BEFORE_A_PASS)

    from gating import services
    from simulator import chunks, world

    day, hour, chunk = job
    if _state.get("hour") != (day, hour):
        services.gate_caches_clear()
        _state["hour"] = (day, hour)
    traffic = _state.get("traffic")
    if traffic is None or traffic.day != day:
        _state["traffic"] = None
        gc.collect()
        traffic = _state["traffic"] = world.day_traffic(_state["config"], day)
    with chunks.replay_transaction(enabled=True):
        return chunks.gate_chunk(traffic, chunk, _state["gateway"])
