"""Every chart says what it means in a line under its title, and links to the help page the
app serves, where the same words stand beside every setting and term. No page sends a reader
to a file in the repository they cannot open."""

import re

from gating.roles import Role
from tests.browser.helpers import accessibility_violations, log_in, resized
from tests.factories import TaskTypeFactory, UserFactory

CHART_PAGES = (
    "/",
    "/dashboard/queue/",
    "/dashboard/drift/",
    "/dashboard/validators/",
    "/dashboard/reviewers/",
    "/dashboard/calibration/",
)


def _cards(page) -> list[dict]:
    return page.evaluate(
        """() => [...document.querySelectorAll('.chart-card')].map((card) => {
            const help = card.querySelector('h2 + p.help');
            const link = help && help.querySelector('a');
            return {
              id: card.id,
              title: card.querySelector('h2').innerText.trim(),
              meaning: help ? help.innerText.replace(/\\s*More$/, '').trim() : null,
              href: link ? link.getAttribute('href') : null,
            };
          })"""
    )


def test_every_chart_says_what_it_means_and_the_help_page_says_the_same(page, problems):
    TaskTypeFactory(name="summarize")
    log_in(page, UserFactory(role=Role.LEAD))
    cards = []
    for url in CHART_PAGES:
        page.goto(url)
        found = _cards(page)
        assert found, url
        cards += found
        text = page.locator("main").inner_text()
        assert not re.search(r"docs/\w+\.md", text), url
    assert len(cards) >= 18
    for card in cards:
        assert card["meaning"] and len(card["meaning"]) > 30, card
        assert card["href"] == f"/dashboard/help/#chart-{card['id']}", card

    page.get_by_role("link", name="Help").click()
    assert page.url.endswith("/dashboard/help/")
    for card in cards:
        entry = page.locator(f"#chart-{card['id']}")
        assert entry.inner_text() == card["title"]
        assert entry.locator("xpath=following-sibling::dd[1]").inner_text() == card["meaning"]
    # The settings and the words the pages use are there too.
    assert page.locator("#setting-delta + dd").inner_text().startswith("How often")
    assert page.locator("#term-reliability").count() == 1
    assert accessibility_violations(page) == []
    resized(page, {"width": 390, "height": 844})
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    assert accessibility_violations(page) == []

    # A reviewer, who sees none of the charts, is not offered their help.
    page.context.clear_cookies()
    log_in(page, UserFactory(role=Role.REVIEWER))
    assert page.get_by_role("link", name="Help").count() == 0
    assert page.goto("/dashboard/help/").status == 403
    assert [p for p in problems if "403" not in p] == []
