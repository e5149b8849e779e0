"""The audit share: audits are claimed first while they are under REVIEW_AUDIT_SHARE of a
reviewer's claims of the last hour, however long the backlog of held outputs before them.
Past the share, held outputs keep their turn: they go before every audit, however many
audits were drawn before them."""

import os
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

import pytest
from django.conf import settings as django_settings
from django.db import connection
from django.utils import timezone

from gating import reviews, services
from gating.models import AuditEvent, ReviewItem
from gating.reviews import DecisionInput
from gating.roles import Role
from tests.factories import TaskTypeFactory, UserFactory, valid_submission


@pytest.fixture
def audited_outputs(gateway):
    """Ingest outputs that the gate delivers, each sampled into an audit."""

    def _audited(count=1, *, task_type="audited"):
        TaskTypeFactory(name=task_type, audit_rate_approved=1.0, audit_rate_warning=1.0)
        submissions = [valid_submission(task_type=task_type) for _ in range(count)]
        results = services.output_ingest_batch(source=gateway, submissions=submissions)
        return [r.output for r in results]

    return _audited


@pytest.fixture
def backlog(held_outputs, audited_outputs):
    """A long backlog of held outputs, then a few audits, queued after all of them."""
    held_outputs(60)
    audited_outputs(8)


def claim_and_decide(reviewer, now=None) -> ReviewItem:
    item = reviews.item_claim(reviewer=reviewer, now=now)
    assert item is not None, f"{reviewer} found nothing to claim"
    reviews.item_decide(
        item_id=item.pk, reviewer=reviewer, decision=DecisionInput("approve"), now=now
    )
    return item


def kinds_claimed(reviewer, claims: int) -> str:
    """One letter per claim: a for an audit, h for a held output."""
    return "".join("a" if claim_and_decide(reviewer).is_audit else "h" for _ in range(claims))


# --------------------------------------------------------------------------- the rule


@pytest.mark.django_db
def test_a_quarter_of_the_claims_go_to_audits_behind_a_long_backlog(backlog, reviewer, settings):
    settings.REVIEW_AUDIT_SHARE = 0.25

    assert kinds_claimed(reviewer, 24) == "ahhh" * 6


@pytest.mark.django_db
@pytest.mark.parametrize(("share", "audits"), [(0.1, 2), (0.5, 8), (0.75, 8)])
def test_the_configured_share_of_claims_goes_to_audits_while_there_are_any(
    backlog, reviewer, settings, share, audits
):
    settings.REVIEW_AUDIT_SHARE = share

    claimed = kinds_claimed(reviewer, 16)

    assert claimed.count("a") == audits
    assert claimed[0] == "a"


@pytest.mark.django_db
def test_each_reviewer_keeps_their_own_share(backlog, user_in, settings):
    settings.REVIEW_AUDIT_SHARE = 0.25
    alice, bob = user_in(Role.REVIEWER), user_in(Role.REVIEWER)

    claimed = {alice.pk: "", bob.pk: ""}
    for _ in range(8):
        for who in (alice, bob):
            claimed[who.pk] += "a" if claim_and_decide(who).is_audit else "h"

    assert claimed == {alice.pk: "ahhhahhh", bob.pk: "ahhhahhh"}


@pytest.fixture
def audits_then_held(held_outputs, audited_outputs):
    """A backlog of audits, then held outputs queued after all of them."""
    audited_outputs(12)
    held_outputs(12)


@pytest.mark.django_db
def test_with_share_zero_held_outputs_then_audits_each_in_turn(
    audits_then_held, reviewer, settings
):
    settings.REVIEW_AUDIT_SHARE = 0.0
    in_turn = ReviewItem.objects.order_by("queued_at", "id")
    held = list(in_turn.filter(is_audit=False).values_list("pk", flat=True))
    audits = list(in_turn.filter(is_audit=True).values_list("pk", flat=True))

    claimed = [claim_and_decide(reviewer).pk for _ in range(24)]

    assert claimed == held + audits


@pytest.mark.django_db
def test_past_the_share_held_outputs_go_before_older_audits(audits_then_held, reviewer, settings):
    # In turn, the twelve older audits would take the first twelve claims; held first, the
    # audits get their share and the held outputs the rest, until the held are done.
    settings.REVIEW_AUDIT_SHARE = 0.25

    assert kinds_claimed(reviewer, 24) == "ahhh" * 4 + "a" * 8


@pytest.mark.django_db
def test_with_share_one_every_audit_comes_first(backlog, reviewer, settings):
    settings.REVIEW_AUDIT_SHARE = 1.0

    assert kinds_claimed(reviewer, 12) == "a" * 8 + "h" * 4


@pytest.mark.django_db
def test_with_no_audit_open_the_held_outputs_are_served_oldest_first(
    held_outputs, reviewer, settings
):
    settings.REVIEW_AUDIT_SHARE = 0.25
    held = held_outputs(5)

    claimed = [claim_and_decide(reviewer).output_id for _ in range(5)]

    assert claimed == [output.pk for output in held]
    assert reviews.item_claim(reviewer=reviewer) is None


@pytest.mark.django_db
@pytest.mark.parametrize(("share", "kind"), [(1.0, "review"), (0.0, "audit")])
def test_the_kind_filter_still_decides(backlog, reviewer, client_for, settings, share, kind):
    settings.REVIEW_AUDIT_SHARE = share

    claimed = client_for(reviewer).post(f"/api/v1/queue/claim/?kind={kind}").json()

    assert claimed["kind"] == kind


@pytest.mark.django_db
def test_a_skipped_audit_does_not_count_as_one_taken(backlog, reviewer, settings):
    settings.REVIEW_AUDIT_SHARE = 0.25
    skipped = reviews.item_claim(reviewer=reviewer)
    reviews.item_release(item_id=skipped.pk, reviewer=reviewer)

    taken = reviews.item_claim(reviewer=reviewer)

    assert skipped.is_audit and taken.is_audit
    assert taken.pk != skipped.pk


@pytest.mark.django_db
@pytest.mark.parametrize(("minutes_ago", "audit_next"), [(59, False), (61, True)])
def test_only_the_claims_of_the_last_hour_count(
    backlog, reviewer, settings, minutes_ago, audit_next
):
    now = timezone.now()
    settings.REVIEW_AUDIT_SHARE = 1.0
    for _ in range(3):
        claim_and_decide(reviewer, now=now - timedelta(minutes=minutes_ago))
    settings.REVIEW_AUDIT_SHARE = 0.25

    # Three audits in three claims is over the share, for as long as they are in the hour.
    assert claim_and_decide(reviewer, now=now).is_audit is audit_next


# --------------------------------------------------------------------------- many reviewers

REVIEWERS = 8


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_eight_reviewers_take_the_audits_early_and_no_item_twice(
    requires_postgres, held_outputs, audited_outputs, settings
):
    settings.REVIEW_AUDIT_SHARE = 0.25
    held_outputs(400)
    audited_outputs(40)
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

    claimed = [pk for claimed in per_reviewer for pk in claimed]
    assert len(claimed) == len(set(claimed)) == 440, "an item was claimed twice or never"
    # In the order the claims committed: oldest first would have left the audits, queued
    # last, to the last 40 claims; a quarter of each reviewer's claims puts them in about
    # the first 160.
    audits = set(ReviewItem.objects.filter(is_audit=True).values_list("pk", flat=True))
    order = [
        int(pk)
        for pk in AuditEvent.objects.filter(action="claim")
        .order_by("id")
        .values_list("object_id", flat=True)
    ]
    last_audit = max(position for position, pk in enumerate(order) if pk in audits)
    assert last_audit < 200


# --------------------------------------------------------------------------- the setting


@pytest.mark.parametrize("share", ["1.5", "-0.1", "nan", "a quarter"])
def test_a_share_outside_zero_to_one_stops_the_start(share):
    env = {**os.environ, "REVIEW_AUDIT_SHARE": share}
    result = subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=django_settings.BASE_DIR, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip

    assert result.returncode != 0
    assert "ImproperlyConfigured" in result.stderr and "REVIEW_AUDIT_SHARE" in result.stderr


def test_the_share_defaults_to_a_quarter():
    env = {k: v for k, v in os.environ.items() if k != "REVIEW_AUDIT_SHARE"}
    result = subprocess.run(
        [sys.executable, "manage.py", "shell", "-c",
         "from django.conf import settings; print(settings.REVIEW_AUDIT_SHARE)"],
        cwd=django_settings.BASE_DIR, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip

    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "0.25"
