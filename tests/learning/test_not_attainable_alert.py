"""The "not attainable" alert says what was tested, and what would change it, without
claiming a certifiable error it does not have."""

from datetime import UTC, datetime, timedelta

import pytest

from learning import alerts
from learning.models import Alert
from learning.statistics import certify
from tests.factories import TaskTypeFactory, threshold_record

pytestmark = pytest.mark.django_db

NOW = datetime(2026, 11, 28, 12, tzinfo=UTC)


def _record(task_type, evidence, at):
    threshold_record(task_type, at=at, state="not_attainable", evidence=evidence)


def test_the_alert_names_the_threshold_tested_and_its_estimates():
    task_type = TaskTypeFactory(name="draft_reply", threshold_policy="guarded")
    # 100 outputs at 9.0, 10 needing an edit and 2 bad: read against the looser budget.
    found = certify.certify_approve_threshold(
        [9.0] * 100, [1.0] * 100, [1.0] * 2 + [0.0] * 98, [1.0] * 10 + [0.0] * 90, floor=4.0
    )
    assert found.state is certify.State.NOT_ATTAINABLE
    for runs in range(2):
        _record(task_type, found.as_dict(), NOW - timedelta(hours=runs))

    [finding] = [f for f in alerts.threshold_evidence(NOW) if f.rule == Alert.Rule.NOT_ATTAINABLE]

    assert finding.firing
    assert (
        "at threshold 9, the highest that could be the approve threshold with data enough "
        "to read (100 effective outputs), P(edit or bad) is estimated at 10.0% and P(bad) "
        "at 2.0%." in finding.message
    )
    assert "More audits would not change this" in finding.message
    assert ("At best" in finding.message) == ((found.best_edit or found.best_bad) is not None)
    assert "no threshold has data enough" not in finding.message
