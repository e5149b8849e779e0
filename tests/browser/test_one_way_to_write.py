"""One duration, written one way, in a real browser: the oldest item's wait reads the same
on the overview, the reviewers' queue page and the backlog alert."""

from datetime import timedelta

from django.db import transaction
from django.utils import timezone

from dashboard.rollups import queue_snapshot_take
from gating.models import ReviewItem
from gating.roles import Role
from learning import alerts
from tests.browser.helpers import log_in
from tests.factories import UserFactory
from tests.learning.test_alerts import ingest


def test_the_oldest_wait_reads_the_same_everywhere(page, problems):
    now = timezone.now()
    gateway = UserFactory(role=Role.GATEWAY, username="gateway-1")
    ingest(gateway, 3, at=now)
    waited_since = now - timedelta(days=13, hours=8)
    ReviewItem.objects.update(queued_at=waited_since, turn_at=waited_since)
    queue_snapshot_take(now)
    with transaction.atomic():
        alerts.alerts_evaluate(now)

    log_in(page, UserFactory(role=Role.LEAD, username="lena"))
    overview = page.locator("main").inner_text()
    assert "the oldest has waited 13 d 8 h" in overview
    # The backlog alert on the overview writes it alike, and its count with the rest.
    assert "3 items waiting; the oldest for 13 d 8 h" in overview
    page.goto("/queue/")
    assert page.locator("#queue-oldest-age").inner_text() == "13 d 8 h"
    page.goto("/dashboard/alerts/")
    assert "the oldest for 13 d 8 h" in page.locator("main").inner_text()
    assert problems == []
