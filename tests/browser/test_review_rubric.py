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
