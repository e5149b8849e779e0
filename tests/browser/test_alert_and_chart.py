"""An alert and the chart it links to say the same, in a real browser: the accuracy alert's
two percentages are the validators chart's points at the two cycles it names."""

import re
from datetime import timedelta

from django.db import transaction
from django.utils import timezone

from gating.roles import Role
from learning import alerts, cycles
from learning.models import Alert, CycleRun
from tests.browser.helpers import charts_drawn, log_in
from tests.factories import UserFactory
from tests.learning.test_alerts import decide, ingest


def test_the_accuracy_alert_and_its_chart_agree(page, problems):
    # As in tests/learning/test_alerts.py: facts right on 80 verdicts three weeks ago,
    # passing 120 rejected outputs three days ago; a validators cycle a week ago and now.
    now = timezone.now().replace(minute=0, second=0, microsecond=0)
    gateway = UserFactory(role=Role.GATEWAY, username="gateway-1")
    reviewer = UserFactory(role=Role.REVIEWER, username="rita")
    weeks_ago, days_ago = now - timedelta(days=20), now - timedelta(days=3)
    decide(ingest(gateway, 40, at=weeks_ago), reviewer, "approve", weeks_ago)
    decide(ingest(gateway, 40, at=weeks_ago, facts=False), reviewer, "reject", weeks_ago)
    cycles.cycle_run(CycleRun.Kind.VALIDATORS, now - timedelta(days=7))
    decide(ingest(gateway, 120, at=days_ago), reviewer, "reject", days_ago)
    cycles.cycle_run(CycleRun.Kind.VALIDATORS, now)
    with transaction.atomic():
        alerts.alerts_evaluate(now)
    assert Alert.objects.get(subject="t facts").state == Alert.State.OPEN

    log_in(page, UserFactory(role=Role.LEAD, username="lena"))
    page.goto("/dashboard/alerts/")
    row = page.locator("tr", has=page.get_by_role("link", name="t facts"))
    said = re.findall(r"(\d+)% in the (?:validators )?cycle to (\S+ \S+) UTC", row.inner_text())
    assert len(said) == 2
    row.get_by_role("link", name="t facts").click()
    page.wait_for_url(re.compile(r"/dashboard/validators/\?range=30d&task_type=t$"))
    charts_drawn(page)
    # The facts line of the accuracy chart: its points as the chart holds them.
    points = page.evaluate(
        """() => {
            const chart = document.querySelector('#validator-accuracy .chart');
            const facts = chart.data.find(t => t.name === 'facts');
            return facts.x.map((x, i) => [String(x), facts.y[i]]);
        }"""
    )
    shown = {x[:16].replace("T", " "): round(100 * y) for x, y in points}
    assert {at: int(percent) for percent, at in said} == {at: shown[at] for _, at in said}
    assert problems == []
