"""A reviewer comments on the item under review, in a real browser: the letters typed in
the comment box do not fire the page's keys, the comment shows in the thread as text, and
the page is not reloaded (an edit under way is kept); a refused comment keeps its text."""

import pytest
from playwright.sync_api import expect

from gating import reviews, services
from gating.models import Comment, Review, ReviewItem
from gating.roles import Role
from tests.browser.helpers import log_in
from tests.factories import TaskTypeFactory, UserFactory, valid_submission

# Every letter the review page takes as a key (a, m, r, s, n, u), and a script payload.
TYPED = "a minor issue: rust, not ruby <script>window.__xss=1</script>"


@pytest.fixture
def held_item():
    gateway = UserFactory(role=Role.GATEWAY)
    reviewer = UserFactory(role=Role.REVIEWER, username="rita")
    TaskTypeFactory(name="t1", reviewed_count=0, double_review_rate=0.0)
    services.output_ingest(source=gateway, submission=valid_submission(task_type="t1"))
    return reviews.item_claim(reviewer=reviewer)


def test_a_reviewer_comments_on_the_review_page_and_sees_the_comment(
    page, live_server, problems, held_item
):
    log_in(page, held_item.claimed_by)
    review_url = f"/review/{held_item.pk}/"
    page.goto(review_url)
    expect(page.locator("#comment-thread")).to_contain_text("No comment yet.")
    # An edit under way, which a reload would lose.
    page.fill("#modify-output", "An edit under way.")

    # Only spaces: refused, said, and the box keeps them with the focus.
    page.fill("#comment-text", "   ")
    page.locator("#comment-form button[type=submit]").click()
    expect(page.locator("#comment-error")).to_contain_text("The comment was not added")
    expect(page.locator("#comment-text")).to_be_focused()
    expect(page.locator("#comment-text")).to_have_value("   ")
    assert not Comment.objects.exists()
    page.fill("#comment-text", "")

    box = page.locator("#comment-text")
    box.click()
    page.keyboard.type(TYPED)
    expect(box).to_have_value(TYPED)
    # No key fired: no decision sent, nothing focused elsewhere, the item still held.
    expect(box).to_be_focused()
    assert not Review.objects.exists()

    page.locator("#comment-form button[type=submit]").click()

    expect(page.locator("#comment-thread .comment-text")).to_have_text(TYPED)
    expect(page.locator("#comment-text")).to_have_value("")
    expect(page.locator("#comment-error")).to_have_count(0)
    assert page.url.endswith(review_url)
    expect(page.locator("#modify-output")).to_have_value("An edit under way.")
    expect(page.locator("#comment-thread .comment-author")).to_have_text("rita")
    assert page.evaluate("window.__xss") is None
    assert problems == []
    assert Comment.objects.get().text == TYPED
    held_item.refresh_from_db()
    assert held_item.state == ReviewItem.State.OPEN
