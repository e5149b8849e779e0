"""The what-if projects each band's outputs a day with the range a day's volume falls in,
in a real browser, against counts taken from the outputs themselves (not the rollups the
page reads): the range's outputs a day per band, and a prediction interval from the spread
of its whole UTC days, mean ± t(n - 1) · sd · √(1 + 1/n)."""

import math
import statistics
from datetime import UTC, datetime, time, timedelta

import pytest
from django.db.models import Count
from django.utils import timezone
from scipy.stats import t as student_t

from dashboard.demo import demo_config, demo_rollups_build, demo_traffic_seed
from gating.models import Output, TaskType
from gating.roles import Role
from tests.browser.helpers import accessibility_violations, log_in
from tests.factories import UserFactory

REVIEW, APPROVE = 4.0, 7.0  # on the rollups' half-point bucket edges: counts are exact


@pytest.fixture
def traffic():
    now = timezone.now()
    demo_traffic_seed(demo_config(days=6, outputs_per_day=300, until=now), until=now)
    demo_rollups_build(until=now)
    task_type = TaskType.objects.annotate(traffic=Count("outputs")).order_by("-traffic").first()
    TaskType.objects.filter(pk=task_type.pk).update(
        review_threshold=REVIEW,
        approve_threshold=APPROVE,
        auto_approve=True,
        approve_requires="nothing",
    )
    return task_type


def _band(score: float) -> int:
    return 0 if score < REVIEW else 1 if score < APPROVE else 2


def _expected(task_type, since: datetime, until: datetime) -> list[tuple[float, float, float]]:
    scores = list(
        Output.objects.filter(
            task_type=task_type, created_at__gte=since, created_at__lt=until
        ).values_list("created_at", "score")
    )
    days = (until - since).total_seconds() / 86400
    first = since.date() if since.time() == time(0) else since.date() + timedelta(days=1)
    whole = [first + timedelta(days=k) for k in range((until.date() - first).days)]
    per_day = {day: [0, 0, 0] for day in whole}
    totals = [0, 0, 0]
    for created, score in scores:
        totals[_band(score)] += 1
        if (day := created.astimezone(UTC).date()) in per_day:
            per_day[day][_band(score)] += 1
    n = len(whole)
    expected = []
    for i in range(3):
        mean = totals[i] / days
        spread = statistics.stdev(counts[i] for counts in per_day.values())
        half = student_t.ppf(0.975, n - 1) * spread * math.sqrt(1 + 1 / n)
        expected.append((mean, max(0.0, mean - half), mean + half))
    return expected


def test_the_what_if_projects_each_bands_volume_with_its_range(page, problems, traffic):
    log_in(page, UserFactory(role=Role.LEAD))
    page.goto(f"/dashboard/thresholds/?task_type={traffic.name}&range=7d")
    # The range the page used: its heading says "Last 7 days", ending at the request.
    until = timezone.now()
    rows = page.locator("#band-volumes tbody tr")
    assert rows.count() == 3
    shown = [rows.nth(i).locator("td").all_inner_texts() for i in range(3)]
    assert [row[0] for row in shown] == ["Held for review", "Delivered as warnings", "Approved"]
    # Read from the task type's first output in the range on (its hour, as the rollups
    # know it), not from days before it had traffic.
    since = until - timedelta(days=7)
    first = Output.objects.filter(task_type=traffic, created_at__gte=since).earliest("created_at")
    since = max(since, first.created_at.replace(minute=0, second=0, microsecond=0))
    expected = _expected(traffic, since, until)
    for row, (mean, low, high) in zip(shown, expected, strict=True):
        # Rounded to whole outputs; a second's difference in "now" moves no whole day.
        assert abs(float(row[2].replace(",", "")) - mean) <= 1, (row, mean)
        low_shown, high_shown = (float(x.replace(",", "")) for x in row[3].split(" to "))
        assert abs(low_shown - low) <= 1 and abs(high_shown - high) <= 1, (row, low, high)
    assert page.locator("#approvals-wait").count() == 0
    assert accessibility_violations(page) == []
    assert problems == []
