"""Leases: expiry, heartbeat and release, on a controllable clock."""

from datetime import UTC, datetime, timedelta

import pytest
import time_machine

from gating import reviews
from gating.exceptions import ReviewConflict
from gating.models import ReviewItem
from gating.reviews import DecisionInput
from gating.roles import Role

pytestmark = pytest.mark.django_db

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


@pytest.fixture
def alice(user_in):
    return user_in(Role.REVIEWER, username="alice")


@pytest.fixture
def bob(user_in):
    return user_in(Role.REVIEWER, username="bob")


@pytest.fixture
def clock():
    with time_machine.travel(T0, tick=False) as traveller:
        yield traveller


@pytest.fixture
def one_item(held_outputs, clock):
    held_outputs(1)
    return ReviewItem.objects.get()


def test_a_lease_lasts_the_configured_time(one_item, alice, bob, clock, settings):
    assert settings.REVIEW_LEASE_SECONDS == 600
    item = reviews.item_claim(reviewer=alice)
    assert item.lease_expires_at == T0 + timedelta(minutes=10)

    clock.shift(timedelta(minutes=9, seconds=59))
    assert reviews.item_claim(reviewer=bob) is None


def test_an_expired_lease_returns_the_item_on_the_next_claim(one_item, alice, bob, clock):
    reviews.item_claim(reviewer=alice)
    clock.shift(timedelta(minutes=10))

    taken = reviews.item_claim(reviewer=bob)

    assert taken.pk == one_item.pk and taken.claimed_by == bob
    # Alice lost it: her decision is refused, Bob's counts.
    with pytest.raises(ReviewConflict):
        reviews.item_decide(item_id=one_item.pk, reviewer=alice, decision=DecisionInput("approve"))
    reviews.item_decide(item_id=one_item.pk, reviewer=bob, decision=DecisionInput("approve"))
    assert ReviewItem.objects.get().state == "decided"


def test_a_lapsed_lease_that_nobody_took_still_lets_its_holder_decide(one_item, alice, clock):
    reviews.item_claim(reviewer=alice)
    clock.shift(timedelta(minutes=30))
    reviews.item_decide(item_id=one_item.pk, reviewer=alice, decision=DecisionInput("approve"))
    assert ReviewItem.objects.get().state == "decided"


def test_a_heartbeat_extends_the_lease(one_item, alice, bob, clock):
    reviews.item_claim(reviewer=alice)
    clock.shift(timedelta(minutes=8))
    reviews.item_heartbeat(item_id=one_item.pk, reviewer=alice)
    assert ReviewItem.objects.get().lease_expires_at == T0 + timedelta(minutes=18)

    clock.shift(timedelta(minutes=9))  # 17 minutes in: past the first lease, not the renewed
    assert reviews.item_claim(reviewer=bob) is None
    clock.shift(timedelta(minutes=1))  # 18 minutes
    assert reviews.item_claim(reviewer=bob).pk == one_item.pk


def test_only_the_holder_can_heartbeat_or_release(one_item, alice, bob, client_for):
    reviews.item_claim(reviewer=alice)
    api = client_for(bob)
    assert api.post(f"/api/v1/queue/{one_item.pk}/heartbeat/").status_code == 409
    assert api.post(f"/api/v1/queue/{one_item.pk}/release/").status_code == 409
    assert ReviewItem.objects.get().claimed_by == alice


def test_release_returns_the_item_at_once_but_not_to_who_skipped_it(
    one_item, alice, bob, clock, client_for, settings
):
    reviews.item_claim(reviewer=alice)
    assert client_for(alice).post(f"/api/v1/queue/{one_item.pk}/release/").status_code == 204

    assert reviews.item_claim(reviewer=alice) is None  # skipped: not offered straight back
    taken = reviews.item_claim(reviewer=bob)
    assert taken.pk == one_item.pk
    reviews.item_release(item_id=one_item.pk, reviewer=bob)

    clock.shift(timedelta(seconds=settings.REVIEW_SKIP_COOLDOWN_SECONDS + 1))
    assert reviews.item_claim(reviewer=alice).pk == one_item.pk


def test_a_skip_moves_the_reviewer_on_to_the_next_item(held_outputs, alice, clock):
    first, second = held_outputs(2)
    item = reviews.item_claim(reviewer=alice)
    assert item.output_id == first.pk
    reviews.item_release(item_id=item.pk, reviewer=alice)
    assert reviews.item_claim(reviewer=alice).output_id == second.pk


def test_claim_and_release_are_audit_logged(one_item, alice):
    from gating.models import AuditEvent

    reviews.item_claim(reviewer=alice)
    reviews.item_release(item_id=one_item.pk, reviewer=alice)
    events = AuditEvent.objects.exclude(action=AuditEvent.Action.ACCESS_CHANGE)
    assert list(events.order_by("id").values_list("action", flat=True)) == [
        "claim",
        "release",
    ]
