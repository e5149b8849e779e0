"""A lead creates a dataset on its page in a real browser, snapshots a version, sees its row
count and downloads it; the pages pass axe-core's WCAG 2.1 A/AA checks."""

import re

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from gating import reviews, services
from gating.models import ReviewItem
from gating.reviews import DecisionInput, RecordedDecision
from gating.roles import Role
from learning.models import Dataset
from tests.browser.helpers import accessibility_violations, log_in, resized
from tests.browser.test_pages_by_role import DESKTOP, PHONE, controls_missed_by_keyboard
from tests.factories import TaskTypeFactory, UserFactory, valid_submission


@pytest.fixture
def lead():
    gateway = UserFactory(role=Role.GATEWAY)
    TaskTypeFactory(name="summarize", reviewed_count=0, double_review_rate=0.0)
    submissions = [valid_submission(task_type="summarize") for _ in range(3)]
    services.output_ingest_batch(source=gateway, submissions=submissions)
    reviewer = UserFactory(role=Role.REVIEWER)
    # Two settled (one approved, one rejected), one still pending.
    first, second = ReviewItem.objects.order_by("id")[:2]
    now = timezone.now()
    reviews.decisions_record(
        [
            RecordedDecision(first, reviewer, DecisionInput("approve"), now),
            RecordedDecision(second, reviewer, DecisionInput("reject", reason="other"), now),
        ]
    )
    return UserFactory(role=Role.LEAD)


def test_a_lead_creates_a_dataset_and_downloads_its_version(page, live_server, problems, lead):
    log_in(page, lead)
    page.goto("/dashboard/datasets/")
    expect(page.locator("#dataset-list")).to_contain_text("No dataset yet.")
    assert accessibility_violations(page) == []

    page.fill("input[name=name]", "approved <i>summaries</i>")
    page.check("input[name=labels][value=approved]")
    page.click("#dataset-create button[type=submit]")
    dataset = Dataset.objects.get()
    page.wait_for_url(re.compile(rf"/dashboard/datasets/{dataset.pk}/$"))
    expect(page.locator("h1")).to_have_text("Dataset approved <i>summaries</i>")

    page.click("text=Snapshot a new version")
    expect(page.locator("#version-1")).to_contain_text("v1")
    expect(page.locator("#version-1 td").nth(1)).to_have_text("1")  # the approved output
    assert accessibility_violations(page) == []

    assert controls_missed_by_keyboard(page) == []
    # At a phone's width nothing scrolls sideways, and axe finds nothing serious there.
    for path in ("/dashboard/datasets/", f"/dashboard/datasets/{dataset.pk}/"):
        page.goto(path)
        resized(page, PHONE)
        assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"], path
        assert accessibility_violations(page) == [], path
        resized(page, DESKTOP)

    with page.expect_download() as download:
        page.click("#version-1 a:text-is('csv')")
    with open(download.value.path(), encoding="utf-8") as fh:
        lines = fh.read().splitlines()
    assert lines[0] == "output_id,input,original,corrected,label,scores"
    assert len(lines) == 2 and lines[1].endswith(",approved,{}")
    assert problems == []
