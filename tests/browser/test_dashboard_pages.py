"""The lead's monitoring pages in a real browser, over days of simulated traffic: every
chart is drawn with data, nothing errs in the console, and the filter bar's range moves
the URL and the charts. A screenshot of each page is kept under var/screenshots/."""

import re

import pytest
from django.utils import timezone

from dashboard.demo import demo_config, demo_rollups_build, demo_traffic_seed
from gating.roles import Role
from tests.factories import UserFactory

PASSWORD = "pw-for-tests"  # UserFactory's
# Each page, how many charts it draws from the seeded traffic, and the filter that changes
# them: the last day rather than the last week; on the validators page, whose cycles run
# once a day, another task type.
LAST_DAY = ("range", "24h")
LAST_TASK_TYPE = ("task_type", None)
PAGES = {
    "queue": ("/dashboard/queue/", 4, LAST_DAY),
    "drift": ("/dashboard/drift/", 4, LAST_DAY),
    "validators": ("/dashboard/validators/", 3, LAST_TASK_TYPE),
    "reviewers": ("/dashboard/reviewers/", 2, LAST_DAY),
    "calibration": ("/dashboard/calibration/", 3, LAST_DAY),
}


@pytest.fixture
def lead():
    """Nine days of simulated traffic up to now (its learning cycles run at each midnight),
    its rollups and queue snapshots, and a lead to look at them."""
    now = timezone.now()
    demo_traffic_seed(demo_config(days=9, outputs_per_day=300, until=now), until=now)
    demo_rollups_build(until=now)
    return UserFactory(role=Role.LEAD, username="lena")


def _log_in(page, user) -> None:
    page.goto("/login/")
    page.fill("#id_username", user.username)
    page.fill("#id_password", PASSWORD)
    page.click("form[action='/login/'] button[type=submit]")
    page.wait_for_url(re.compile(r"/$"))


def _drawn(page) -> list[dict]:
    """Each chart on the page once plotly.js has drawn it: its id and how many points its
    traces hold."""
    page.wait_for_function(
        "[...document.querySelectorAll('.chart')].every(c => c.querySelector('.main-svg'))"
    )
    return page.evaluate(
        """[...document.querySelectorAll('.chart')].map(c => ({
            id: c.closest('section').id,
            points: (c.data || []).reduce(
                (n, t) => n + ((t.z || t.y || t.x || []).flat().filter(v => v !== null).length),
                0),
        }))"""
    )


def _figures(page) -> str:
    return page.evaluate(
        "[...document.querySelectorAll('.chart')]"
        ".map(c => document.getElementById(c.dataset.figureId).textContent).join('\\n')"
    )


@pytest.mark.parametrize("name", list(PAGES))
def test_a_lead_sees_every_chart_and_filters_it(page, problems, lead, screenshot_dir, name):
    url, charts, (parameter, value) = PAGES[name]
    _log_in(page, lead)

    page.goto(url)
    drawn = _drawn(page)
    assert len(drawn) == charts, drawn
    assert all(chart["points"] > 0 for chart in drawn), drawn
    page.screenshot(path=str(screenshot_dir / f"{name}.png"), full_page=True)
    before = _figures(page)

    choice = page.locator(f"form.filter-bar select[name={parameter}]")
    value = value or choice.locator("option").last.get_attribute("value")
    choice.select_option(value)
    page.click("form.filter-bar button[type=submit]")
    page.wait_for_url(re.compile(rf"[?&]{parameter}={re.escape(value)}(&|$)"))
    after = _drawn(page)
    assert after, "no chart left after filtering"
    assert _figures(page) != before
    assert problems == []
