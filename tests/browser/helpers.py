"""What the browser tests do on many pages: log in, wait for the charts."""

import re

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
