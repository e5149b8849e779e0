"""The gate's settings are declared once: the thresholds page, the Django admin and the API's
schema say the same of each one, its name in words, its meaning and its range, because all
three are derived from one declaration. Read off what a person and a client see, not off the
declaration."""

import re

from gating.roles import Role
from tests.browser.helpers import accessibility_violations, log_in
from tests.factories import TaskTypeFactory, UserFactory

_RANGE = re.compile(r"^(?P<label>.+) \((?P<low>[0-9.]+) to (?P<high>[0-9.]+)\)$")


def _plain(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())


def _page_settings(page) -> dict[str, dict]:
    """Each setting of the thresholds page's form: its label, range and help line."""
    return page.evaluate(
        """() => Object.fromEntries([...document.querySelectorAll(
            '.settings-form input[name]:not([name^="weight:"]), .settings-form select')]
            .filter((el) => el.name !== 'csrfmiddlewaretoken')
            .map((el) => {
              const label = el.labels[0].innerText.trim();
              const help = document.getElementById('help-' + el.name);
              return [el.name, {label, help: help ? help.innerText.trim() : null}];
            }))"""
    )


def _admin_settings(page, names) -> dict[str, dict]:
    """The admin's change form: each setting's label and help text."""
    return page.evaluate(
        """(names) => Object.fromEntries(names.map((name) => {
            const row = document.querySelector('.field-' + name);
            if (!row) return [name, null];
            const label = row.querySelector('label').innerText.replace(/:$/, '').trim();
            const help = row.querySelector('.help');
            return [name, {label, help: help ? help.innerText.trim() : null}];
          }))""",
        names,
    )


def test_the_page_the_admin_and_the_api_say_the_same_of_each_setting(
    page, problems, screenshot_dir
):
    task_type = TaskTypeFactory(name="summarize")
    log_in(page, UserFactory(role=Role.ADMIN, username="ada"))

    page.goto("/dashboard/thresholds/?task_type=summarize")
    on_page = _page_settings(page)
    assert len(on_page) >= 15
    assert all(setting["help"] for setting in on_page.values()), on_page
    assert accessibility_violations(page) == []
    page.locator(".settings").screenshot(path=screenshot_dir / "thresholds-settings.png")

    ranges = {}
    for name, setting in on_page.items():
        if match := _RANGE.match(setting["label"]):
            setting["label"] = match["label"]
            ranges[name] = (float(match["low"]), float(match["high"]))
    assert {"review_threshold", "delta", "cold_start_reviews"} <= ranges.keys()

    page.goto(f"/admin/gating/tasktype/{task_type.pk}/change/")
    in_admin = _admin_settings(page, list(on_page))
    assert in_admin == on_page

    schema = page.request.get("/api/schema/?format=json").json()
    task_type_schema = schema["components"]["schemas"]["PatchedTaskTypeRequest"]["properties"]
    for name, setting in on_page.items():
        published = task_type_schema[name]
        # drf-spectacular leaves the title out where it is the name itself ("Auto-approve").
        title = published.get("title", name)
        assert _plain(title) == _plain(setting["label"]), (name, published)
        # A choice's description goes on with its choices, as drf-spectacular lists them.
        assert published["description"].split("\n\n")[0] == setting["help"], name
        if name in ranges:
            assert (published["minimum"], published["maximum"]) == ranges[name], name
    assert problems == []
