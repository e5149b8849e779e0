"""What the browser tests do on many pages: log in, wait for the charts, ask axe-core."""

import re

from axe_playwright_python.sync_playwright import Axe

PASSWORD = "pw-for-tests"  # UserFactory's


def log_in(page, user) -> None:
    page.goto("/login/")
    page.fill("#id_username", user.username)
    page.fill("#id_password", PASSWORD)
    page.click("form[action='/login/'] button[type=submit]")
    page.wait_for_url(re.compile(r"/$"))


def charts_drawn(page) -> list[dict]:
    """Each chart on the page once plotly.js has drawn it: its section's id and how many
    non-empty values its traces hold."""
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


# Buttons and links that would hand a chart's data to Plotly's cloud.
TO_PLOTLY = (
    "[...document.querySelectorAll('.chart')].flatMap(c => ["
    "  c._context.showSendToCloud && 'showSendToCloud',"
    "  c._context.showEditInChartStudio && 'showEditInChartStudio',"
    "  c._context.showLink && 'showLink',"
    "  c._context.plotlyServerURL && `plotlyServerURL ${c._context.plotlyServerURL}`,"
    "  ...[...c.querySelectorAll('.modebar-btn')].map(b => b.dataset.title)"
    "      .filter(t => /cloud|chart studio/i.test(t)),"
    "]).concat([...document.querySelectorAll('a[href]')].map(a => a.href)"
    "  .filter(h => /plotly\\.com|plot\\.ly/.test(h))).filter(Boolean)"
)


def ways_to_plotly(page) -> list[str]:
    """What on the page (drawn charts' settings, modebar buttons, links) could send a chart's
    data to Plotly's servers; empty when nothing can."""
    return page.evaluate(TO_PLOTLY)


WCAG_21_AA = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]
BLOCKING_IMPACTS = {"serious", "critical"}


def accessibility_violations(page) -> list[str]:
    """axe-core's serious and critical WCAG 2.1 A/AA violations: one line per rule, with how
    many elements break it, the first few and why."""
    results = Axe().run(
        page,
        options={"runOnly": {"type": "tag", "values": WCAG_21_AA}, "resultTypes": ["violations"]},
    )
    return [
        f"{v['id']} ({v['impact']}) on {len(v['nodes'])} elements, such as "
        f"{[node['target'] for node in v['nodes'][:3]]}: {v['nodes'][0].get('failureSummary')}"
        for v in results.response["violations"]
        if v["impact"] in BLOCKING_IMPACTS
    ]


def resized(page, size: dict) -> None:
    """Set the viewport, and wait two frames for what redraws on resize (the charts, the
    scrolling regions) to settle."""
    page.set_viewport_size(size)
    page.evaluate("new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)))")
