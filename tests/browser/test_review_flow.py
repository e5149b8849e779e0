"""A reviewer works through the queue with the keyboard, in a real browser.

The first output carries script payloads in its input, output, metadata, evidence, model
and a validator's detail; on every page the test checks that none of them ran.
"""

import re

import pytest
from playwright.sync_api import expect

from gating import services
from gating.models import Output, Review, ReviewItem
from gating.roles import Role
from tests.browser.helpers import log_in
from tests.factories import TaskTypeFactory, UserFactory, valid_submission

SCRIPT = "<script>window.__xss=1</script>"
IMG = '</script><img src=x onerror="window.__xss=1">'
REVIEW_URL = re.compile(r"/review/(\d+)/$")


@pytest.fixture
def hold():
    """Ingest outputs into a task type in cold start, so that the gate holds each one."""
    gateway = UserFactory(role=Role.GATEWAY)
    TaskTypeFactory(name="t1", reviewed_count=0, double_review_rate=0.0)

    def _hold(**fields) -> Output:
        submission = valid_submission(task_type="t1", **fields)
        return services.output_ingest(source=gateway, submission=submission).output

    return _hold


@pytest.fixture
def reviewer():
    return UserFactory(role=Role.REVIEWER, username="rita")


def _nothing_ran(page, problems) -> None:
    assert page.evaluate("window.__xss") is None, f"an injected script ran on {page.url}"
    assert problems == []


def _open_next_item(page, pressed: str, after: str) -> str:
    page.keyboard.press(pressed)
    page.wait_for_url(lambda url: REVIEW_URL.search(url) is not None and url != after)
    return page.url


def test_a_reviewer_approves_modifies_and_rejects_with_the_keyboard(
    page, live_server, problems, reviewer, hold, screenshot_dir
):
    hostile = hold(
        model=f"model {IMG}",
        input=f"Question {SCRIPT} {IMG}",
        output=f"Answer {SCRIPT} {IMG}",
        validators=[{"name": "facts", "passed": False, "detail": IMG}],
        evidence={"entries": [{"tool": "grep", "query": SCRIPT, "target": IMG}]},
        metadata={"note": SCRIPT, "html": IMG},
    )
    edited = hold(output="Revenue grew 4% on the quarter.\nCosts fell.")
    rejected = hold(output="The capital of France is Lyon.")

    log_in(page, reviewer)
    _nothing_ran(page, problems)  # the overview lists the hostile output too

    page.goto("/queue/")
    expect(page.locator("#queue-size")).to_have_text("3")
    expect(page.locator("table.queue")).to_contain_text(f"model {IMG}")
    _nothing_ran(page, problems)
    page.screenshot(path=screenshot_dir / "queue.png", full_page=True)

    # n: the oldest item, which is the hostile one, shown as text.
    first = _open_next_item(page, "n", after=page.url)
    expect(page.locator("#output-text")).to_have_text(f"Answer {SCRIPT} {IMG}")
    expect(page.locator("#input-text")).to_have_text(f"Question {SCRIPT} {IMG}")
    expect(page.locator("#metadata")).to_contain_text("window.__xss=1")
    expect(page.locator("kbd", has_text=re.compile("^[amrns]$"))).to_have_count(10)
    _nothing_ran(page, problems)
    page.screenshot(path=screenshot_dir / "review.png", full_page=True)

    # Each item opens at its heading.
    assert page.evaluate("document.activeElement.id") == "item-title"
    # a: approve, held back for the undo window; a again sends it now, and the next item
    # loads by itself, its heading focused.
    page.keyboard.press("a")
    expect(page.locator("#decision-status")).to_have_text(
        "Approving in 4 s: u to undo, a to send now."
    )
    second = _open_next_item(page, "a", after=first)
    assert page.evaluate("document.activeElement.id") == "item-title"
    _nothing_ran(page, problems)

    # m: the edit box takes the focus, not the letter; typing shows the diff.
    page.keyboard.press("m")
    assert page.evaluate("document.activeElement.id") == "modify-output"
    expect(page.locator("#modify-output")).to_have_value(edited.output_text)
    page.keyboard.press("Control+End")
    page.keyboard.type(" Checked by a human.")
    expect(page.locator("#diff-preview ins")).to_have_text(" Checked by a human.")
    page.screenshot(path=screenshot_dir / "review-modify.png", full_page=True)
    third = _open_next_item(page, "Control+Enter", after=second)
    _nothing_ran(page, problems)

    # r: the reason list takes the focus, its reasons in words; the arrow picks the first,
    # and Enter sends it. Rejecting the last item empties the queue.
    page.fill("#reject-form input[name=note]", "Paris.")
    page.keyboard.press("Escape")  # out of the note, so that r is a shortcut again
    page.keyboard.press("r")
    assert page.evaluate("document.activeElement.id") == "reject-reason"
    expect(page.locator("#reject-reason option[value=factual_error]")).to_have_text("Factual error")
    page.keyboard.press("ArrowDown")
    expect(page.locator("#reject-reason")).to_have_value("factual_error")
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(r"/queue/$"))
    expect(page.locator(".messages")).to_contain_text("Nothing left to review")
    expect(page.locator("#queue-size")).to_have_text("0")
    _nothing_ran(page, problems)

    by_output = {r.output_id: r for r in Review.objects.all()}
    assert len(by_output) == 3
    assert {r.reviewer_id for r in by_output.values()} == {reviewer.pk}
    assert not any(r.is_bulk for r in by_output.values())
    assert [REVIEW_URL.search(url).group(1) for url in (first, second, third)] == [
        str(ReviewItem.objects.get(output=o).pk) for o in (hostile, edited, rejected)
    ]

    hostile.refresh_from_db()
    assert by_output[hostile.pk].action == Review.Action.APPROVE
    assert hostile.status == Output.Status.APPROVED
    assert hostile.final_output_text == f"Answer {SCRIPT} {IMG}"

    edited.refresh_from_db()
    # Line breaks arrive as typed, not as the CRLF of a classic form post.
    edit = "Revenue grew 4% on the quarter.\nCosts fell. Checked by a human."
    modification = by_output[edited.pk]
    assert (modification.action, modification.edited_output) == (Review.Action.MODIFY, edit)
    assert modification.style_only is False
    assert edited.status == Output.Status.MODIFIED
    assert edited.final_output_text == edit

    rejected.refresh_from_db()
    rejection = by_output[rejected.pk]
    assert (rejection.action, rejection.reason, rejection.note) == (
        Review.Action.REJECT,
        "factual_error",
        "Paris.",
    )
    assert rejected.status == Output.Status.REJECTED
    assert rejected.final_output_text is None


def test_a_modification_is_marked_style_only_from_the_keyboard(page, problems, reviewer, hold):
    hold(output="Revenue grew 4% on the quarter.")
    style_only = page.get_by_label("Style only: the output was fine")

    log_in(page, reviewer)
    page.goto("/queue/")
    _open_next_item(page, "n", after=page.url)

    # m, edit, Tab to the box, Space ticks it, Ctrl+Enter saves from there.
    page.keyboard.press("m")
    page.keyboard.press("Control+End")
    page.keyboard.type(" Nicely put.")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.id") == "modify-style-only"
    expect(style_only).not_to_be_checked()
    page.keyboard.press("Space")
    expect(style_only).to_be_checked()
    page.keyboard.press("Control+Enter")
    page.wait_for_url(re.compile(r"/queue/$"))

    review = Review.objects.get()
    assert (review.action, review.edited_output, review.style_only) == (
        Review.Action.MODIFY,
        "Revenue grew 4% on the quarter. Nicely put.",
        True,
    )
    _nothing_ran(page, problems)


def test_skip_gives_the_item_back_and_opens_the_next(page, problems, reviewer, hold):
    skipped, taken = hold(), hold()

    log_in(page, reviewer)
    page.goto("/queue/")
    first = _open_next_item(page, "n", after=page.url)
    second = _open_next_item(page, "s", after=first)

    assert first.endswith(f"/review/{ReviewItem.objects.get(output=skipped).pk}/")
    assert second.endswith(f"/review/{ReviewItem.objects.get(output=taken).pk}/")
    released = ReviewItem.objects.get(output=skipped)
    assert released.claimed_by is None
    assert released.released_by == reviewer
    assert Review.objects.count() == 0
    _nothing_ran(page, problems)


def test_a_refused_decision_is_shown_in_place_as_text(page, problems, reviewer, hold):
    output = hold(output="Unchanged.")

    log_in(page, reviewer)
    page.goto("/queue/")
    _open_next_item(page, "n", after=page.url)

    # Modify without changing anything: the API refuses and names the field.
    page.keyboard.press("m")
    page.keyboard.press("Control+Enter")
    expect(page.locator("#decision-error")).to_have_text(
        "output: Must differ from the original output to modify it."
    )
    # An error that echoes what was sent is still only text.
    page.keyboard.press("Escape")
    page.eval_on_selector(
        "#approve-form input[name=action]", "(input, value) => { input.value = value; }", IMG
    )
    page.keyboard.press("a")
    page.keyboard.press("a")  # sent now, not after the undo window
    expect(page.locator("#decision-error")).to_contain_text(IMG)
    expect(page.locator("#decision-error img")).to_have_count(0)

    assert REVIEW_URL.search(page.url)
    assert Review.objects.count() == 0
    output.refresh_from_db()
    assert output.status == Output.Status.PENDING
    # The browser and htmx log each refusal to the console: those two were asked for.
    refusals = [p for p in problems if "400" in p and "/decision/" in p]
    assert refusals
    problems[:] = [p for p in problems if p not in refusals]
    _nothing_ran(page, problems)


def test_the_heartbeat_renews_the_lease(page, problems, reviewer, hold):
    output = hold()
    log_in(page, reviewer)
    page.goto("/queue/")
    _open_next_item(page, "n", after=page.url)
    item = ReviewItem.objects.get(output=output)
    ReviewItem.objects.filter(pk=item.pk).update(lease_expires_at=item.claimed_at)

    # What the page's every-60-seconds trigger does, without waiting a minute.
    page.evaluate(
        "url => htmx.ajax('POST', url, {source: '[data-heartbeat]', swap: 'none'})",
        f"/api/v1/queue/{item.pk}/heartbeat/",
    )

    expect(page.locator("#decision-error")).to_have_text("")
    item.refresh_from_db()
    assert item.lease_expires_at > item.claimed_at
    _nothing_ran(page, problems)


def test_an_approval_can_be_undone_within_its_window_and_nothing_is_sent(
    page, problems, reviewer, hold, settings
):
    settings.REVIEW_UNDO_SECONDS = 2
    output = hold()
    log_in(page, reviewer)
    # The skip link comes first, and takes the keyboard past the navigation.
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.className") == "skip-link"
    page.keyboard.press("Enter")
    assert page.evaluate("document.activeElement.id") == "content"

    page.goto("/queue/")
    opened = _open_next_item(page, "n", after=page.url)
    page.keyboard.press("a")
    expect(page.locator("#undo-approve")).to_be_visible()
    page.keyboard.press("u")
    expect(page.locator("#decision-status")).to_have_text("Approval undone: nothing was sent.")
    expect(page.locator("#undo-approve")).to_be_hidden()
    # Past the window: nothing was recorded, and the item is still this reviewer's.
    page.wait_for_timeout(2500)
    assert page.url == opened
    assert Review.objects.count() == 0
    output.refresh_from_db()
    assert output.status == Output.Status.PENDING

    # Left alone, an approval is sent when its window closes.
    page.keyboard.press("a")
    page.wait_for_url(re.compile(r"/queue/$"))
    assert Review.objects.get().action == Review.Action.APPROVE
    _nothing_ran(page, problems)
