"""The queue and bulk pages take task types as the dashboard's filter bar does, in a real
browser: picked by keyboard in the searchable chip select (templates/_choose_many.html), sent
as task_type repeated, and only those listed or decided."""

import re
from urllib.parse import parse_qs, urlsplit

from playwright.sync_api import expect

from gating.models import Output
from gating.roles import Role
from tests.browser.helpers import accessibility_violations, log_in, resized
from tests.factories import TaskTypeFactory, UserFactory, ingested

TASK_TYPES = ("classify", "extract", "moderate", "summarize", "translate")
DESKTOP, PHONE = {"width": 1280, "height": 900}, {"width": 390, "height": 844}


def _seed(gateway) -> dict[str, Output]:
    # In cold start, so that the gate holds every output and the queue has them all.
    for name in TASK_TYPES:
        TaskTypeFactory(name=name, reviewed_count=0, double_review_rate=0.0)
    return {name: ingested(gateway, task_type=name) for name in TASK_TYPES}


def _pick_by_keyboard(page, *searches: tuple[str, str]) -> None:
    """Type each search into the Task types chooser and press Enter once its one match is
    the active option (Enter before that picks another, or none)."""
    chooser = page.get_by_role("combobox", name="Task types")
    chooser.focus()
    offered = page.locator("#" + chooser.get_attribute("aria-controls"))
    for typed, name in searches:
        page.keyboard.type(typed)
        expect(offered.get_by_role("option")).to_have_count(1)
        expect(offered.locator(".option.active")).to_have_text(name)
        page.keyboard.press("Enter")
    page.keyboard.press("Escape")


def _chips(page) -> list[str]:
    return (
        page.locator("#filter-task-type-ts-control")
        .locator("xpath=..")
        .locator(".item")
        .evaluate_all("items => items.map(i => i.dataset.value)")
    )


def _accessible_at_both_sizes(page) -> None:
    for size in (DESKTOP, PHONE):
        resized(page, size)
        assert accessibility_violations(page) == [], size
    resized(page, DESKTOP)


def test_the_queue_page_lists_the_task_types_picked_by_keyboard(page, problems, gateway):
    _seed(gateway)
    log_in(page, UserFactory(role=Role.REVIEWER, username="rita"))
    page.goto("/queue/")
    expect(page.locator("#queue-size")).to_have_text("5")
    _accessible_at_both_sizes(page)

    _pick_by_keyboard(page, ("trans", "translate"), ("summ", "summarize"))
    assert _chips(page) == ["translate", "summarize"]
    page.locator("form.filters button[type=submit]").click()

    page.wait_for_url(re.compile(r"task_type="))
    assert sorted(parse_qs(urlsplit(page.url).query)["task_type"]) == ["summarize", "translate"]
    expect(page.locator("#queue-size")).to_have_text("2")
    listed = page.locator("table.queue tbody tr td:nth-child(4)").all_inner_texts()
    assert sorted(listed) == ["summarize", "translate"]
    assert sorted(_chips(page)) == ["summarize", "translate"]
    _accessible_at_both_sizes(page)
    assert problems == []


def test_the_bulk_page_decides_the_task_types_picked_by_keyboard(page, problems, gateway):
    made = _seed(gateway)
    log_in(page, UserFactory(role=Role.LEAD, username="lena"))
    page.goto("/queue/bulk/")
    _accessible_at_both_sizes(page)

    _pick_by_keyboard(page, ("class", "classify"), ("mod", "moderate"))
    page.get_by_label("Action").select_option("reject")
    page.get_by_label("Reason").fill("the classifier broke")
    page.get_by_role("button", name="Preview").click()

    expect(page.locator("#bulk-count")).to_have_text("2")
    confirm = page.locator("#bulk-preview form")
    carried = confirm.locator("input[name=task_type]").evaluate_all("i => i.map(e => e.value)")
    assert sorted(carried) == ["classify", "moderate"]
    _accessible_at_both_sizes(page)

    page.get_by_role("button", name="Reject 2 outputs").click()
    expect(page.locator(".messages")).to_contain_text("Rejected 2 held outputs.")
    rejected = Output.objects.filter(status=Output.Status.REJECTED)
    assert sorted(rejected.values_list("task_type__name", flat=True)) == ["classify", "moderate"]
    assert made["translate"].pk not in set(rejected.values_list("pk", flat=True))
    assert problems == []
