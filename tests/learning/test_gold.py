"""The gold check of the label model: its arithmetic by hand, and the gold verdicts kept out
of everything the cycles fit, while the thresholds run checks the model against them."""

from datetime import UTC, datetime, timedelta

import numpy as np
import pytest
from scipy.stats import beta

from gating.models import ReviewItem, TaskType
from gating.roles import Role
from learning import cycles, evidence, selectors
from learning.models import ThresholdChange
from learning.statistics import gold
from learning.statistics.labels import APPROVE, MODIFY, REJECT
from tests.learning.test_alerts import decide, ingest

NOW = datetime(2026, 3, 20, 12, 0, tzinfo=UTC)


def clopper_pearson(found: int, n: int, confidence: float) -> tuple[float, float]:
    """The exact interval from its definition in beta quantiles (Clopper and Pearson, 1934)."""
    tail = (1 - confidence) / 2
    low = 0.0 if found == 0 else beta.ppf(tail, found, n - found + 1)
    high = 1.0 if found == n else beta.ppf(1 - tail, found + 1, n - found)
    return low, high


def test_the_prediction_of_a_leads_verdict_by_hand():
    posterior = np.array([[0.9, 0.08, 0.02], [0.2, 0.5, 0.3]])
    # A lead who approves good outputs 80 % of the time, and so on, row by row.
    lead = np.array([[0.8, 0.15, 0.05], [0.1, 0.7, 0.2], [0.0, 0.1, 0.9]])
    predicted = gold.predicted_labels(posterior, np.stack([lead, lead]))
    # P(reject) for the first: 0.9 * 0.05 + 0.08 * 0.2 + 0.02 * 0.9.
    assert predicted[0, REJECT] == pytest.approx(0.045 + 0.016 + 0.018)
    assert predicted[1, APPROVE] == pytest.approx(0.2 * 0.8 + 0.5 * 0.1 + 0.3 * 0.0)
    assert predicted.sum(axis=1) == pytest.approx([1.0, 1.0])
    with pytest.raises(ValueError, match=r"^posterior and confusion differ in length$"):
        gold.predicted_labels(posterior, np.stack([lead]))


def test_the_check_by_hand():
    predicted = np.array([[0.9, 0.08, 0.02], [0.7, 0.2, 0.1], [0.2, 0.5, 0.3], [0.95, 0.04, 0.01]])
    said = np.array([APPROVE, MODIFY, REJECT, APPROVE])

    checks = gold.gold_checks(predicted, said, confidence=0.9)

    fault = checks["finds_fault"]
    # Mean of P(modify) + P(reject): (0.10 + 0.30 + 0.80 + 0.05) / 4.
    assert fault.predicted == pytest.approx(1.25 / 4)
    assert (fault.n, fault.observed) == (4, 0.5)
    assert (fault.low, fault.high) == pytest.approx(clopper_pearson(2, 4, 0.9))
    assert fault.consistent
    rejects = checks["rejects"]
    assert rejects.predicted == pytest.approx((0.02 + 0.1 + 0.3 + 0.01) / 4)
    assert rejects.observed == 0.25
    assert (rejects.low, rejects.high) == pytest.approx(clopper_pearson(1, 4, 0.9))
    assert (fault.measure, rejects.measure) == ("finds_fault", "rejects")
    # Recorded to four places, as the thresholds run keeps it.
    assert gold.GoldCheck("rejects", 7, 0.123456, 3 / 7, 0.012344, 0.987656).as_record() == {
        "n": 7,
        "predicted": 0.1235,
        "observed": 0.4286,
        "low": 0.0123,
        "high": 0.9877,
        "consistent": True,
    }


def test_a_model_that_misses_what_the_leads_say_is_not_consistent():
    # The model predicts nearly all approves; the leads find fault in 30 of 40.
    predicted = np.tile([0.98, 0.015, 0.005], (40, 1))
    said = np.array([MODIFY] * 30 + [APPROVE] * 10)
    check = gold.gold_checks(predicted, said, confidence=0.95)["finds_fault"]
    assert check.high > check.low > check.predicted
    assert not check.consistent


@pytest.mark.parametrize(
    ("predicted", "said", "confidence", "message"),
    [
        (np.ones((2, 3)) / 3, np.array([0]), 0.9, "^predicted and said differ in length$"),
        (np.ones((1, 3)) / 3, np.array([3]), 0.9, "must index"),
        (np.ones((1, 3)) / 3, np.array([-1]), 0.9, "must index"),
        (np.ones((1, 3)) / 3, np.array([0]), 1.0, "strictly between"),
        (np.ones((1, 3)) / 3, np.array([0]), 0.0, "strictly between"),
    ],
)
def test_bad_inputs_are_refused(predicted, said, confidence, message):
    with pytest.raises(ValueError, match=message):
        gold.gold_checks(predicted, said, confidence=confidence)


def test_no_outputs_no_checks():
    assert gold.gold_checks(np.zeros((0, 3)), np.zeros(0), confidence=0.9) == {}


def gold_checked(gateway, user_in, settings, *, gold_action):
    """A lead who approves 20 held outputs; 20 audits of approved outputs, approved by a
    reviewer; each audit then judged again by the lead in a gold check, with
    ``gold_action``. Returns the lead and the audited outputs."""
    settings.REVIEW_GOLD_SHARE = 1.0
    reviewer, lead = user_in(Role.REVIEWER), user_in(Role.LEAD)
    decide(
        ingest(gateway, 20, at=NOW - timedelta(days=2)), lead, "approve", NOW - timedelta(days=1)
    )
    audited = ingest(gateway, 20, at=NOW - timedelta(days=2))
    ReviewItem.objects.filter(output__in=audited).update(kind="audit", is_audit=True)
    decide(audited, reviewer, "approve", NOW - timedelta(days=1, hours=2))
    assert ReviewItem.objects.filter(kind="gold", state="open").count() == 20
    decide(audited, lead, gold_action, NOW - timedelta(days=1))
    return lead, audited


@pytest.mark.django_db
def test_gold_verdicts_stay_out_of_the_fit_and_the_final_verdicts(gateway, user_in, settings):
    lead, audited = gold_checked(gateway, user_in, settings, gold_action="reject")
    since = NOW - timedelta(days=30)

    found = evidence.judged_evidence(since=since, until=NOW)

    # Approves are all the label model saw: nothing in it says error. Had the lead's rejects
    # been fitted, the audited outputs would carry them.
    assert found.reviews == 40
    assert found.fit.error.max() < 0.2
    # The verdicts the other cycles read are the audits' approves, settled.
    settled = selectors.verdicts(since=since, until=NOW)
    assert {v.action for v in settled} == {"approve"} and len(settled) == 40
    # The check predicts the lead's verdicts from the posteriors and the lead's habits (all
    # approves so far), and finds the model out: the lead rejected every one.
    task_type = TaskType.objects.get(name="t")
    check = found.gold_checks(task_type.pk, confidence=0.9)["rejects"]
    position = {pk: i for i, pk in enumerate(found.output_ids.tolist())}
    rows = [position[o.pk] for o in audited]
    expected = (found.fit.posterior[rows] @ found.fit.confusion_of(lead.pk))[:, REJECT].mean()
    assert check.predicted == pytest.approx(expected) and check.predicted < 0.2
    assert (check.n, check.observed) == (20, 1.0)
    assert not check.consistent


@pytest.mark.django_db
def test_a_check_by_a_lead_the_model_does_not_know_is_left_out(gateway, user_in, settings):
    settings.REVIEW_GOLD_SHARE = 1.0
    audited = ingest(gateway, 20, at=NOW - timedelta(days=2))
    ReviewItem.objects.filter(output__in=audited).update(kind="audit", is_audit=True)
    decide(audited, user_in(Role.REVIEWER), "approve", NOW - timedelta(days=1, hours=2))
    decide(audited, user_in(Role.LEAD), "reject", NOW - timedelta(days=1))

    found = evidence.judged_evidence(since=NOW - timedelta(days=30), until=NOW)

    assert len(found.gold_rows) == 20
    assert found.gold_checks(TaskType.objects.get(name="t").pk, confidence=0.9) == {}


@pytest.mark.django_db
def test_the_thresholds_run_records_the_check_with_the_approve_threshold(
    gateway, user_in, settings
):
    gold_checked(gateway, user_in, settings, gold_action="approve")

    run = cycles.cycle_run("thresholds", NOW)

    recorded = ThresholdChange.objects.get(cycle=run, which="approve").evidence["gold"]
    assert recorded["finds_fault"]["n"] == recorded["rejects"]["n"] == 20
    assert recorded["finds_fault"]["observed"] == 0.0
    low, high = clopper_pearson(0, 20, 1 - TaskType.objects.get(name="t").delta)
    assert (recorded["rejects"]["low"], recorded["rejects"]["high"]) == pytest.approx(
        (low, high), abs=1e-4
    )
    (row,) = selectors.gold_check_rows()
    assert (row.task_type, row.checks) == ("t", recorded)
