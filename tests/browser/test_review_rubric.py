"""A reviewer scores a task type's rubric from the keyboard, in a real browser: the
instructions are shown sanitised, a missing required score is refused by its label with
the focus on it and nothing stored, and the scores go with the decision, with the rubric's
version."""

import re

import pytest
from playwright.sync_api import expect

from gating import rubrics, services
from gating.models import Review
from gating.roles import Role
from tests.browser.helpers import accessibility_violations, log_in
from tests.factories import TaskTypeFactory, UserFactory, valid_submission

REVIEW_URL = re.compile(r"/review/(\d+)/$")
DESKTOP = {"width": 1280, "height": 720}
PHONE = {"width": 390, "height": 844}
DIMENSIONS = [
    {
        "name": "helpful",
        "label": "Helpfulness",
        "kind": "numeric",
        "minimum": 1,
        "maximum": 5,
        "required": True,
    },
    {
        "name": "tone",
        "label": "Tone",
        "kind": "categorical",
        "choices": ["neutral", "too casual", "too formal"],
    },
    {"name": "cites", "label": "Cites its sources", "kind": "boolean", "required": True},
]


@pytest.fixture
def held_with_rubric():
    gateway = UserFactory(role=Role.GATEWAY)
    task_type = TaskTypeFactory(name="t1", reviewed_count=0, double_review_rate=0.0)
    rubrics.rubric_save(
        task_type=task_type,
        instructions="**Check** every figure.\n\n<script>window.__xss=1</script>",
        dimensions=DIMENSIONS,
        actor=UserFactory(role=Role.ADMIN),
    )
    for text in ("Revenue grew 4%.", "Costs fell."):
        services.output_ingest(
            source=gateway, submission=valid_submission(task_type="t1", output=text)
        )


def test_a_reviewer_scores_the_rubric_with_the_keyboard(page, problems, held_with_rubric):
    reviewer = UserFactory(role=Role.REVIEWER, username="rita")
    log_in(page, reviewer)
    page.goto("/queue/")
    page.keyboard.press("n")
    page.wait_for_url(REVIEW_URL)
    first = page.url

    rubric = page.locator("#rubric")
    expect(rubric.locator("strong")).to_have_text("Check")
    expect(rubric).to_contain_text("version 1")
    assert page.evaluate("window.__xss") is None
    assert accessibility_violations(page) == []

    # g: the first dimension takes the focus, not the letter; a digit scores it, and Tab
    # goes on to the next dimension, where the arrows pick a choice.
    page.keyboard.press("g")
    assert page.evaluate("document.activeElement.id") == "score-helpful"
    expect(page.locator("#score-helpful")).to_have_value("")
    page.keyboard.type("4")
    page.keyboard.press("Tab")
    page.keyboard.press("ArrowDown")  # from nothing picked, the group's next: too casual
    expect(page.locator("input[name=tone][value='too casual']")).to_be_checked()

    # Approving without the required "cites" is refused by its label, with the focus on it.
    page.keyboard.press("Escape")
    page.keyboard.press("a")
    page.keyboard.press("a")  # send now, without the undo window
    expect(page.locator("#decision-error")).to_have_text(re.compile("^Cites its sources: Required"))
    assert page.evaluate("document.activeElement.name") == "cites"
    assert Review.objects.count() == 0

    # The focus is in the group: the arrow picks Yes; Esc, and a sends it all.
    page.keyboard.press("ArrowRight")
    expect(page.locator("input[name=cites][value=false]")).to_be_checked()
    page.keyboard.press("ArrowLeft")
    expect(page.locator("input[name=cites][value=true]")).to_be_checked()
    page.keyboard.press("Escape")
    page.keyboard.press("a")
    page.keyboard.press("a")
    page.wait_for_url(lambda url: REVIEW_URL.search(url) is not None and url != first)

    review = Review.objects.get()
    assert review.action == Review.Action.APPROVE
    assert review.rubric.version == 1
    assert review.scores == {"helpful": 4, "tone": "too casual", "cites": True}
    # The refused decision's 400, which the browser logs, is the only error.
    assert [p for p in problems if "status of 400" not in p and "Code 400" not in p] == []


def test_an_admin_edits_the_rubric_on_its_page(page, problems, held_with_rubric):
    log_in(page, UserFactory(role=Role.ADMIN, username="ada"))
    page.goto("/rubrics/")
    page.get_by_role("link", name="t1").click()
    expect(page.locator("#dimensions")).to_contain_text("Helpfulness")
    assert accessibility_violations(page) == []
    page.set_viewport_size(PHONE)
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    assert accessibility_violations(page) == []
    page.set_viewport_size(DESKTOP)

    # A refused edit names the key at fault, keeps the text, and focuses the field.
    page.fill("#rubric-dimensions", '[{"name": "x", "label": "X", "kind": "stars"}]')
    page.get_by_role("button", name="Save as the next version").click()
    expect(page.locator("#rubric-error")).to_contain_text("dimensions[0].kind")
    assert page.evaluate("document.activeElement.id") == "rubric-dimensions"
    expect(page.locator("#rubric-dimensions")).to_have_value(re.compile('"stars"'))

    page.fill("#rubric-dimensions", '[{"name": "x", "label": "X", "kind": "boolean"}]')
    page.get_by_role("button", name="Save as the next version").click()
    expect(page.locator(".messages")).to_contain_text("Saved as version 2.")
    expect(page.locator("#rubric-history tbody tr")).to_have_count(2)
    assert [p for p in problems if "status of 400" not in p] == []
