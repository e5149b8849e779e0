"""The filter bar in a real browser, over days of simulated traffic: on every page with
charts, changing a filter moves the URL and redraws the charts from other numbers, and
the back button brings the first view back; and no chart offers its data to Plotly's
cloud."""

import re

import pytest
from django.utils import timezone

from dashboard.demo import demo_config, demo_rollups_build, demo_traffic_seed
from gating.roles import Role
from tests.browser.helpers import charts_drawn, log_in, ways_to_plotly
from tests.factories import UserFactory

# Each page and the filter that changes its charts: the last day rather than the last week;
# on the validators page, whose cycles run once a day, another task type; on the
# calibration page, the last 30 days: its labels are reviews, and whether the last 24 hours
# hold any depends on the hour the test runs.
LAST_DAY = ("range", "24h")
LAST_MONTH = ("range", "30d")
LAST_TASK_TYPE = ("task_type", None)
PAGES = {
    "overview": ("/", LAST_DAY),
    "queue": ("/dashboard/queue/", LAST_DAY),
    "drift": ("/dashboard/drift/", LAST_DAY),
    "validators": ("/dashboard/validators/", LAST_TASK_TYPE),
    "reviewers": ("/dashboard/reviewers/", LAST_DAY),
    "calibration": ("/dashboard/calibration/", LAST_MONTH),
}


@pytest.fixture
def lead():
    """Nine days of simulated traffic up to now (its learning cycles run at each midnight),
    its rollups and queue snapshots, and a lead to look at them."""
    now = timezone.now()
    demo_traffic_seed(demo_config(days=9, outputs_per_day=300, until=now), until=now)
    demo_rollups_build(until=now)
    return UserFactory(role=Role.LEAD, username="lena")


def _figures(page) -> str:
    return page.evaluate(
        "[...document.querySelectorAll('.chart')]"
        ".map(c => document.getElementById(c.dataset.figureId).textContent).join('\\n')"
    )


def test_the_filter_bar_moves_the_url_and_the_charts_on_every_page(page, problems, lead):
    log_in(page, lead)
    failures = {}
    for name, (url, (parameter, value)) in PAGES.items():
        page.goto(url)
        charts_drawn(page)
        before = _figures(page)
        # No chart offers its data to Plotly's cloud (plotly.js 4 offers it by default).
        if leaks := ways_to_plotly(page):
            failures[f"{name}: to Plotly"] = leaks

        choice = page.locator(f"form.filter-bar select[name={parameter}]")
        value = value or choice.locator("option").last.get_attribute("value")
        if parameter == "task_type":
            # A searchable multi-select (Tom Select): typed and picked as a person does.
            page.get_by_role("combobox", name="Task types").focus()
            page.keyboard.type(value)
            # Enter picks the option the search made active; wait for that to be this one.
            page.locator(f"#filter-task-type-ts-dropdown .active[data-value='{value}']").wait_for()
            page.keyboard.press("Enter")
            page.keyboard.press("Escape")
        else:
            choice.select_option(value)
        page.click("form.filter-bar button[type=submit]")
        page.wait_for_url(re.compile(rf"[?&]{parameter}={re.escape(value)}(&|$)"))
        after = charts_drawn(page)
        if not after or not all(chart["points"] > 0 for chart in after):
            failures[name] = f"charts without data after filtering: {after}"
        elif _figures(page) == before:
            failures[name] = f"{parameter}={value} left the charts as they were"

        page.go_back()
        page.wait_for_url(re.compile(re.escape(url) + "$"))
        charts_drawn(page)
        if _figures(page) != before:
            failures.setdefault(name, "the back button did not bring the first view back")
    assert failures == {}
    assert problems == []
