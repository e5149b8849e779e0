"""Many reviewers at once, on PostgreSQL: no item twice, no decision twice."""

import threading
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import connection
from rest_framework.test import APIClient

from gating import reviews
from gating.models import AuditEvent, Output, Review, ReviewItem
from gating.reviews import DecisionInput
from gating.roles import Role
from tests.factories import UserFactory, token_for

# Slow (reviewers in threads on PostgreSQL): `make check` leaves it out.
pytestmark = [
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("requires_postgres"),
]

REVIEWERS = 16
ITEMS = 2_000


def test_sixteen_reviewers_drain_the_queue_each_item_claimed_and_decided_once(held_outputs):
    held_outputs(1_000)
    held_outputs(1_000)
    reviewers = [UserFactory(role=Role.REVIEWER) for _ in range(REVIEWERS)]
    start = threading.Barrier(REVIEWERS)

    def drain(reviewer) -> list[int]:
        claimed = []
        start.wait()
        try:
            while (item := reviews.item_claim(reviewer=reviewer)) is not None:
                claimed.append(item.pk)
                reviews.item_decide(
                    item_id=item.pk, reviewer=reviewer, decision=DecisionInput("approve")
                )
        finally:
            connection.close()
        return claimed

    with ThreadPoolExecutor(REVIEWERS) as pool:
        per_reviewer = list(pool.map(drain, reviewers))

    claims = Counter(pk for claimed in per_reviewer for pk in claimed)
    assert len(claims) == ITEMS
    assert max(claims.values()) == 1, "an item was claimed twice"
    assert sum(1 for claimed in per_reviewer if claimed) > 1, "the claimers never overlapped"
    assert Review.objects.count() == ITEMS
    assert Review.objects.values("item").distinct().count() == ITEMS
    assert not ReviewItem.objects.filter(state="open").exists()
    assert Output.objects.filter(status="approved").count() == ITEMS
    assert AuditEvent.objects.filter(action="claim").count() == ITEMS


def test_sixteen_simultaneous_decisions_on_one_item_store_exactly_one(held_outputs):
    held_outputs(1)
    holder = UserFactory(role=Role.REVIEWER)
    item = reviews.item_claim(reviewer=holder)
    token = token_for(holder)
    start = threading.Barrier(REVIEWERS)

    def decide(action: str) -> int:
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
        body = {"action": action}
        if action == "reject":
            body["reason"] = "other"
        start.wait()
        try:
            return client.post(
                f"/api/v1/queue/{item.pk}/decision/", body, format="json"
            ).status_code
        finally:
            connection.close()

    actions = ["approve", "reject"] * (REVIEWERS // 2)
    with ThreadPoolExecutor(REVIEWERS) as pool:
        codes = Counter(pool.map(decide, actions))

    assert codes == {201: 1, 409: REVIEWERS - 1}
    review = Review.objects.get()
    output = Output.objects.get()
    assert output.status == {"approve": "approved", "reject": "rejected"}[review.action]
    assert AuditEvent.objects.filter(action="decision").count() == 1
