"""The thresholds page's what-if in a real browser, at thresholds the learning cycles set:
they move in steps of 0.02 (learning/statistics/certify.py), and a number input whose step
they do not fit is invalid, so the browser would refuse to send the projection."""

import re

import pytest
from django.db.models import Count
from django.utils import timezone

from dashboard.demo import demo_config, demo_rollups_build, demo_traffic_seed
from gating.models import TaskType
from gating.roles import Role
from tests.browser.helpers import log_in
from tests.factories import UserFactory


@pytest.fixture
def learned():
    """Two days of simulated traffic, and its busiest task type, whose thresholds a cycle
    set."""
    now = timezone.now()
    demo_traffic_seed(demo_config(days=2, outputs_per_day=300, until=now), until=now)
    demo_rollups_build(until=now)
    task_type = TaskType.objects.annotate(traffic=Count("outputs")).order_by("-traffic").first()
    task_type.review_threshold, task_type.approve_threshold = 3.98, 9.46
    task_type.save(update_fields=["review_threshold", "approve_threshold"])
    return task_type


def test_the_what_if_projects_from_thresholds_between_tenths(page, problems, learned):
    log_in(page, UserFactory(role=Role.LEAD, username="lena"))
    page.goto(f"/dashboard/thresholds/?task_type={learned.name}")
    review = page.locator("#whatif input[name=review]")
    approve = page.locator("#whatif input[name=approve]")
    assert (review.input_value(), approve.input_value()) == ("3.98", "9.46")
    assert approve.evaluate("input => input.checkValidity()")
    held_before = page.locator("#held-per-day").inner_text()

    review.fill("8.98")
    page.wait_for_url(re.compile(r"[?&]review=8\.98(&|$)"))
    page.wait_for_function(
        "before => document.querySelector('#held-per-day').textContent.trim() !== before",
        arg=held_before.strip(),
    )
    assert float(page.locator("#held-per-day").inner_text()) > float(held_before)
    assert page.locator("#whatif input[name=approve]").input_value() == "9.46"
    assert problems == []
