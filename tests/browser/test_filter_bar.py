"""One filter bar everywhere, in a real browser: task types and models picked by keyboard in a
searchable select that shows them as chips, a preset that never travels with times, UTC
times in 24-hour form whatever the browser's locale, and score_max meaning "below" on the
outputs page as in the queue API."""

import re
from urllib.parse import parse_qs, urlsplit

from playwright.sync_api import expect

from dashboard.rollups import rollups_refresh
from gating.models import Output, ReviewItem
from gating.roles import Role
from tests.browser.helpers import accessibility_violations, log_in, resized
from tests.factories import TaskTypeFactory, UserFactory, ingested

# Eight task types, as the lead who filed issue 33 had: a native select showed four.
TASK_TYPES = (
    "classify", "extract", "moderate", "route", "rewrite", "summarize", "translate", "qa",
)  # fmt: skip
DESKTOP, PHONE = {"width": 1280, "height": 900}, {"width": 390, "height": 844}


def _seed(gateway) -> list[Output]:
    # In cold start, so that the gate holds every output and the queue has them all.
    for name in TASK_TYPES:
        TaskTypeFactory(name=name, reviewed_count=0)
    made = [
        ingested(gateway, task_type=name, model="model-a" if n % 2 else "model-b")
        for n, name in enumerate(TASK_TYPES)
    ]
    rollups_refresh()  # the filter bar offers the models the rollups have seen
    return made


def _chips(page, select_id: str) -> list[str]:
    # Tom Select's chips, by the value each stands for.
    return (
        page.locator(f"#{select_id}-ts-control")
        .locator("xpath=..")
        .locator(".item")
        .evaluate_all("items => items.map(i => i.dataset.value)")
    )


def _query(url: str) -> dict[str, list[str]]:
    return parse_qs(urlsplit(url).query)


def test_task_types_are_searched_and_picked_by_keyboard_and_travel_in_the_url(
    page, problems, gateway
):
    _seed(gateway)
    log_in(page, UserFactory(role=Role.LEAD, username="lena"))
    page.goto("/dashboard/queue/")

    page.locator("form.filter-bar select[name=range]").select_option("30d")
    expect(page.locator("form.filter-bar input[name=since]")).to_be_disabled()
    expect(page.locator("form.filter-bar input[name=until]")).to_be_disabled()

    task_types = page.get_by_role("combobox", name="Task types")
    task_types.focus()
    page.keyboard.type("trans")
    # The list the combobox controls (the native select beneath is a listbox of that name too).
    offered = page.locator("#" + task_types.get_attribute("aria-controls"))
    expect(offered.get_by_role("option", name="translate")).to_be_visible()
    expect(offered.get_by_role("option", name="classify")).to_have_count(0)
    page.keyboard.press("Enter")
    page.keyboard.type("summ")
    expect(offered.get_by_role("option")).to_have_count(1)
    page.keyboard.press("Enter")
    page.keyboard.press("Escape")
    assert _chips(page, "filter-task-type") == ["translate", "summarize"]

    page.locator("form.filter-bar button[type=submit]").click()
    page.wait_for_url(re.compile(r"task_type="))
    query = _query(page.url)
    assert sorted(query["task_type"]) == ["summarize", "translate"]
    assert query["range"] == ["30d"]
    assert "since" not in query and "until" not in query

    # The URL shared: the chips come back, the times stay off beside the preset.
    page.goto(page.url)
    assert sorted(_chips(page, "filter-task-type")) == ["summarize", "translate"]
    expect(page.locator("form.filter-bar input[name=since]")).to_be_disabled()

    # Backspace removes the last chip.
    page.get_by_role("combobox", name="Task types").focus()
    page.keyboard.press("Backspace")
    assert len(_chips(page, "filter-task-type")) == 1

    for size in (DESKTOP, PHONE):
        resized(page, size)
        assert accessibility_violations(page) == [], size
        # Nothing wider than the screen: the bar wraps.
        assert page.evaluate("document.documentElement.scrollWidth") <= size["width"]
    assert problems == []


def test_a_preset_beside_times_is_refused_in_words(page, problems):
    log_in(page, UserFactory(role=Role.LEAD, username="lena"))
    response = page.goto("/dashboard/queue/?range=30d&since=2025-05-01+09:00")
    assert response.status == 400
    assert "cannot be given with since" in page.locator("#filter-error").inner_text()
    # The console reports the 400 itself; nothing else.
    assert [p for p in problems if "400" not in p] == []


def test_custom_times_are_24_hour_utc_in_an_en_us_browser(browser, live_server, transactional_db):
    context = browser.new_context(
        base_url=live_server.url, locale="en-US", timezone_id="America/New_York"
    )
    page = context.new_page()
    page.set_default_timeout(10_000)
    try:
        log_in(page, UserFactory(role=Role.LEAD, username="lena"))
        page.goto("/dashboard/queue/?range=24h")
        page.locator("form.filter-bar select[name=range]").select_option("custom")
        since = page.locator("form.filter-bar input[name=since]")
        expect(since).to_be_enabled()
        # Filled with the range shown, as the bar shows every time: 24-hour, no AM or PM.
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}", since.input_value())
        since.fill("2025-05-01 21:30")
        page.locator("form.filter-bar input[name=until]").fill("2025-05-02 13:05")
        page.locator("form.filter-bar button[type=submit]").click()
        page.wait_for_url(re.compile(r"range=custom"))
        query = _query(page.url)
        assert (query["since"], query["until"]) == (["2025-05-01 21:30"], ["2025-05-02 13:05"])
        assert since.input_value() == "2025-05-01 21:30"
        assert page.locator("form.filter-bar input[name=until]").input_value() == (
            "2025-05-02 13:05"
        )
        assert "2025-05-01 21:30 to 2025-05-02 13:05 UTC" in page.locator("main").inner_text()
        assert "PM" not in page.locator("form.filter-bar").inner_text()
    finally:
        context.close()


def test_the_outputs_page_and_the_queue_api_agree_that_score_max_is_below(page, problems, gateway):
    made = _seed(gateway)[:3]
    for output, score in zip(made, (4.0, 5.0, 6.0), strict=True):
        Output.objects.filter(pk=output.pk).update(score=score)
        ReviewItem.objects.filter(output=output).update(score=score)
    log_in(page, UserFactory(role=Role.LEAD, username="lena"))

    page.goto("/dashboard/outputs/?range=24h&score_min=4&score_max=5")
    expect(page.get_by_label("Score below")).to_have_value(re.compile(r"^5(\.0)?$"))
    on_page = page.locator("tbody td:first-child a").evaluate_all(
        "links => links.map(a => Number(a.pathname.split('/').filter(Boolean).pop()))"
    )
    api = page.request.get("/api/v1/queue/?score_min=4&score_max=5").json()
    in_api = [entry["output_id"] for entry in api["results"]]
    assert on_page == in_api == [made[0].pk]
    assert problems == []
