"""What the gate answered to an ingest request, read from the response on its way out.

The access log and the Prometheus counters both want each answered output's task type and
decision. They read them here, from the answer the gateway gets, so that neither depends on
how the ingest view builds it.
"""

from __future__ import annotations

import json
from functools import cache

from django.urls import reverse
from pydantic import BaseModel, RootModel

# The routes of gating.api.urls that ingest, with the label each gets in metrics and logs.
INGEST_ROUTES = {"api-outputs": "single", "api-outputs-batch": "batch"}


@cache
def _ingest_paths() -> dict[str, str]:
    return {reverse(name): label for name, label in INGEST_ROUTES.items()}


def ingest_route(request) -> str | None:
    """ "single" or "batch" for a POST to an ingest URL; None for any other request."""
    if request.method != "POST":
        return None
    return _ingest_paths().get(request.path_info)


def answered_decisions(response) -> list[tuple[str, str]]:
    """(task type, decision) of every output in a successful ingest answer, in its order.

    Kept on the response, so that the log and the metrics read the answer once. An answer
    that is not a success, or not of the expected shape, has none.
    """
    cached = getattr(response, "_gate_decisions", None)
    if cached is None:
        cached = _read_decisions(response) if 200 <= response.status_code < 300 else []
        response._gate_decisions = cached
    return cached


def _read_decisions(response) -> list[tuple[str, str]]:
    data = getattr(response, "data", None)
    while isinstance(data, RootModel):  # an answer of one of several shapes
        data = data.root
    if isinstance(data, BaseModel):
        wanted = {"task_type", "decision"}
        if "outputs" in type(data).model_fields:
            wanted = {"outputs": {"__all__": wanted}}
        data = data.model_dump(mode="json", include=wanted)
    elif data is None:
        try:
            data = json.loads(response.content)
        except (ValueError, AttributeError):
            return []
    if not isinstance(data, dict):
        return []
    outputs = data.get("outputs") if "outputs" in data else [data]
    if not isinstance(outputs, list):
        return []
    return [
        (item["task_type"], item["decision"])
        for item in outputs
        if isinstance(item, dict)
        and isinstance(item.get("task_type"), str)
        and isinstance(item.get("decision"), str)
    ]
