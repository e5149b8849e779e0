"""From the overview to the drifting model in two clicks, in a real browser: the score-shift
alert names the model, and its link opens the drift page filtered to it with the evidence
chart first, above any table."""

import re
from datetime import timedelta

from django.db import transaction
from django.utils import timezone

from dashboard.rollups import rollups_refresh
from gating.roles import Role
from learning import alerts
from tests.browser.helpers import charts_drawn, log_in
from tests.factories import UserFactory
from tests.learning.test_alerts import ingest


def test_the_lead_finds_the_drifting_model_from_the_overview(page, problems):
    # One task type, two models: gpt-x fails a validator in the last hours, steady does not.
    now = timezone.now()
    gateway = UserFactory(role=Role.GATEWAY, username="gateway-1")
    for model in ("steady", "gpt-x"):
        ingest(gateway, 50, at=now - timedelta(days=4), model=model)
        ingest(gateway, 40, at=now - timedelta(minutes=30), model=model, facts=model != "gpt-x")
    rollups_refresh(now)
    with transaction.atomic():
        alerts.alerts_evaluate(now)

    log_in(page, UserFactory(role=Role.LEAD, username="lena"))
    page.set_viewport_size({"width": 1280, "height": 900})
    # Click 1: the alert on the overview, which names the model.
    page.get_by_role("link", name="t gpt-x").click()
    page.wait_for_url(re.compile(r"/dashboard/drift/\?range=30d&task_type=t&model=gpt-x$"))
    charts_drawn(page)
    # The evidence first: the PSI chart is the first section, in the first screen, with
    # no table above it; its one line is the drifting model's.
    first = page.locator("main section").first
    assert first.get_attribute("id") == "psi"
    assert first.bounding_box()["y"] < 900
    assert page.evaluate(
        "[...document.querySelectorAll('main table')].every(t =>"
        " document.getElementById('psi').compareDocumentPosition(t)"
        " & Node.DOCUMENT_POSITION_FOLLOWING)"
    )
    names = page.evaluate("document.querySelector('#psi .chart').data.map(t => t.name)")
    assert names == ["t · gpt-x"]
    assert problems == []
