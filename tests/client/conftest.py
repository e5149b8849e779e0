"""A live Gatehouse for the client's tests: the app served on a port (pytest-django's
live_server, on the test database), a gateway with a token, a reviewer who decides through
the API, and task types whose outputs the gate approves, warns about or holds."""

from __future__ import annotations

import threading
from dataclasses import dataclass

import httpx
import pytest

from gating.roles import Role
from tests.factories import SubmissionFactory, TaskTypeFactory, UserFactory, token_for

# Every validator passes: the score is 8 + 0.8 x 0.5 + 0.9 x 1.5 = 9.75, above the factory's
# approve threshold (8.0).
ALL_PASS = [{"name": n, "passed": True} for n in ("facts", "schema", "grammar", "length")]
# Two of four pass: 8 x 0.5 + 0.4 + 1.35 = 5.75, between review (5.0) and approve (8.0).
HALF_PASS = [{**v, "passed": i < 2} for i, v in enumerate(ALL_PASS)]


@dataclass
class Gatehouse:
    base_url: str
    gateway_token: str
    reviewer_token: str

    def body(self, kind: str, **fields) -> dict:
        """An ingest body the gate will approve, warn about, or hold ("approve", "warn",
        "hold")."""
        task_type, validators = {
            "approve": ("client-approve", ALL_PASS),
            "warn": ("client-warn", HALF_PASS),
            "hold": ("client-hold", ALL_PASS),
        }[kind]
        return SubmissionFactory(
            task_type=task_type, validators=validators, requires_fact_check=False, **fields
        )

    def review(self, action: str, **fields) -> dict:
        """The reviewer claims the first held item and decides it, through the API."""
        headers = {"Authorization": f"Bearer {self.reviewer_token}"}
        with httpx.Client(base_url=self.base_url, headers=headers, timeout=10) as api:
            claimed = api.post("/api/v1/queue/claim/", json={})
            assert claimed.status_code == 200, claimed.text
            item = claimed.json()
            decided = api.post(
                f"/api/v1/queue/{item['id']}/decision/", json={"action": action, **fields}
            )
            assert decided.status_code == 201, decided.text
            return item

    def review_later(self, delay: float, action: str, **fields) -> threading.Thread:
        """Decide the first held item in ``delay`` seconds, in another thread."""
        timer = threading.Timer(delay, self.review, args=(action,), kwargs=fields)
        timer.start()
        return timer


@pytest.fixture
def gatehouse(live_server) -> Gatehouse:
    # Past the cold start, so the gate approves and warns by score; the held task type is
    # in its cold start, where every output is held.
    TaskTypeFactory(name="client-approve")
    TaskTypeFactory(name="client-warn")
    TaskTypeFactory(name="client-hold", reviewed_count=0, double_review_rate=0.0)
    return Gatehouse(
        base_url=live_server.url,
        gateway_token=token_for(UserFactory(role=Role.GATEWAY)),
        reviewer_token=token_for(UserFactory(role=Role.REVIEWER)),
    )
