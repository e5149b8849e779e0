"""The 403, 404 and 500 pages in a real browser: styled as the site, with its navigation,
saying why and what to do; axe-core finds nothing serious, also at 390 px."""

import pytest

from gating.roles import Role
from tests.browser.helpers import accessibility_violations, log_in
from tests.factories import UserFactory

WIDTHS = (1280, 390)


def page_width(page) -> int:
    return page.evaluate("document.documentElement.scrollWidth")


@pytest.mark.parametrize("width", WIDTHS)
def test_a_page_a_role_may_not_open_says_who_may(page, problems, width):
    page.set_viewport_size({"width": width, "height": 800})
    log_in(page, UserFactory(role=Role.REVIEWER, username="rita"))
    response = page.goto("/dashboard/drift/")
    assert response.status == 403
    assert page.locator("h1").inner_text() == "Not for your role"
    said = page.locator("main").inner_text()
    assert "This is for leads and admins." in said and "signed in as a reviewer" in said
    # The site's navigation, with the reviewer's own pages and none of the lead's.
    nav = page.locator("header nav")
    assert nav.get_by_role("link", name="Queue", exact=True).count() == 1
    assert nav.get_by_role("link", name="Drift").count() == 0
    assert accessibility_violations(page) == []
    assert page_width(page) <= width
    # A 403 is expected, not a fault: the browser console stays clean apart from the
    # status line of the refused page itself.
    assert all("403" in p for p in problems)


@pytest.mark.parametrize("width", WIDTHS)
def test_an_address_with_no_page_says_so(page, problems, width):
    page.set_viewport_size({"width": width, "height": 800})
    log_in(page, UserFactory(role=Role.LEAD, username="lena"))
    assert page.goto("/dashboard/no-such-page/").status == 404
    assert page.locator("h1").inner_text() == "Not found"
    assert page.locator("header nav").get_by_role("link", name="Drift").count() == 1
    assert accessibility_violations(page) == []
    assert page_width(page) <= width
    assert all("404" in p for p in problems)


@pytest.mark.urls("tests.browser.urls_with_fault")
def test_a_fault_shows_the_sites_500_page(page, problems):
    log_in(page, UserFactory(role=Role.LEAD, username="lena"))
    assert page.goto("/fails/").status == 500
    assert page.locator("h1").inner_text() == "Something went wrong on our side"
    assert page.locator("main a[href='/']").count() == 1
    assert "RuntimeError" not in page.content()  # nothing of the fault is shown
    assert accessibility_violations(page) == []
    assert all("500" in p for p in problems)
