"""From the what-if to a save, in a real browser: the projected thresholds go into the
settings with one button, a refused save puts the focus on the field at fault and names it
as the page does, and the change shows in the page's history: who, when, why, before and
after."""

import re

from gating.models import TaskType
from gating.roles import Role
from tests.browser.helpers import accessibility_violations, log_in
from tests.factories import TaskTypeFactory, UserFactory


def test_the_what_if_leads_to_a_save_and_its_history(page, problems):
    TaskTypeFactory(name="summarize", review_threshold=4.0, approve_threshold=7.0)
    log_in(page, UserFactory(role=Role.ADMIN, username="ada"))
    page.goto("/dashboard/thresholds/?task_type=summarize")
    # The page's own bar sends a preset without times, as every filter bar does.
    page.get_by_role("button", name="Show").click()
    page.wait_for_url(re.compile(r"[?&]range=7d(&|$)"))
    assert page.locator("#filter-error").count() == 0
    assert "since=" not in page.url

    # Project approve = 3 (below review 4), take it into the settings, save: refused, and
    # the focus is on the field at fault, named as the page labels it.
    page.locator("#whatif input[name=approve]").fill("3")
    page.get_by_role("button", name="Use these values in the settings").click()
    assert page.input_value("#id_approve_threshold") == "3"
    assert page.evaluate("document.activeElement.id") == "id_reason"
    page.fill("#id_reason", "Trying the what-if.")
    page.get_by_role("button", name="Save").click()
    page.wait_for_load_state()
    assert page.evaluate("document.activeElement.id") == "id_approve_threshold"
    said = page.locator("[data-field=approve_threshold]").inner_text()
    assert said == "Must be above “Review below” (4)."
    assert accessibility_violations(page) == []

    # Project approve = 8, use it, save: saved, and the history says who, why, 7 → 8.
    page.locator("#whatif input[name=approve]").fill("8")
    page.get_by_role("button", name="Use these values in the settings").click()
    page.fill("#id_reason", "Fewer edits above 8 in the audits.")
    page.get_by_role("button", name="Save").click()
    page.wait_for_load_state()
    assert TaskType.objects.get(name="summarize").approve_threshold == 8.0
    row = page.locator("#threshold-changes tbody tr").first.inner_text()
    for part in ("approve", "7.00", "8.00", "ada", "Fewer edits above 8 in the audits."):
        assert part in row
    assert [p for p in problems if "400" not in p] == []
