"""The calibration page against the reviews it summarises: the reliability diagram with
Wilson intervals (statsmodels), scores by the reviewer's decision, and the AUROC
(scikit-learn) with Hanley and McNeil's interval."""

import math
from collections import Counter
from datetime import UTC, datetime, timedelta

import pytest
from django.test import Client
from sklearn.metrics import roc_auc_score
from statsmodels.stats.proportion import proportion_confint

from dashboard.metrics import metric_rows
from dashboard.rollups import rollups_refresh
from gating import reviews, services
from gating.models import Review, ReviewItem
from gating.roles import Role
from gating.submissions import OutputSubmission
from tests.factories import TaskTypeFactory, UserFactory, threshold_record, valid_submission

pytestmark = pytest.mark.django_db


def _submission(n: int) -> OutputSubmission:
    validators = [
        {"name": "facts", "passed": n % 3 != 0},
        {"name": "schema", "passed": n % 2 == 0},
        {"name": "grammar", "passed": n % 5 != 0},
    ]
    return valid_submission(
        task_type="calibrated", model=f"model-{'ab'[n % 2]}", validators=validators
    )


@pytest.fixture
def judged(gateway):
    """40 outputs, each held or audited (every delivered output audited), all judged once:
    rejected when two validators fail, modified on every seventh, approved otherwise."""
    TaskTypeFactory(
        name="calibrated",
        review_threshold=4.0,
        approve_threshold=7.5,
        reviewed_count=1000,
        audit_rate_approved=1.0,
        audit_rate_warning=1.0,
        double_review_rate=0.0,
    )
    for n in range(40):
        services.output_ingest(source=gateway, submission=_submission(n))
    reviewer = UserFactory(role=Role.REVIEWER)
    for item in ReviewItem.objects.select_related("output").order_by("id"):
        n = int(item.output.external_id.rsplit("-", 1)[-1])
        failed = sum(not v["passed"] for v in item.output.validator_results)
        claimed = reviews.item_claim(reviewer=reviewer, items=ReviewItem.objects.filter(pk=item.pk))
        if failed >= 2:
            decision = reviews.DecisionInput(action="reject", reason="factual_error")
        elif n % 7 == 0:
            decision = reviews.DecisionInput(action="modify", edited_output="Edited.")
        else:
            decision = reviews.DecisionInput(action="approve")
        reviews.item_decide(item_id=claimed.pk, reviewer=reviewer, decision=decision)
    rollups_refresh()


def _get(user, query=""):
    client = Client()
    client.force_login(user)
    return client.get("/dashboard/calibration/" + query)


def _bucket(score: float, width: float) -> float:
    return math.floor(round(score / width, 6)) * width


def test_the_reliability_diagram_is_the_reviews(judged):
    response = _get(UserFactory(role=Role.LEAD), "?range=24h")
    assert response.status_code == 200
    rows = metric_rows("calibration", response.context["dashboard_filter"])
    approved, reviewed = Counter(), Counter()
    for review in Review.objects.select_related("output"):
        lower = _bucket(review.output.score, 0.5)
        reviewed[lower] += 1
        approved[lower] += review.action == "approve"
    assert {r["lower"]: (r["approved"], r["reviewed"]) for r in rows} == {
        lower: (approved[lower], n) for lower, n in reviewed.items()
    }
    for row in rows:
        assert (row["low"], row["high"]) == pytest.approx(
            proportion_confint(row["approved"], row["reviewed"], alpha=0.05, method="wilson")
        )
    drawn = [t for t in response.context["reliability"]["data"] if t["name"] == "Reviewed outputs"]
    assert len(drawn[0]["x"]) == len(rows)


def test_the_score_histograms_split_by_decision(judged):
    response = _get(UserFactory(role=Role.LEAD), "?range=24h")
    drawn = {t["name"]: sum(t["y"]) for t in response.context["score_by_action"]["data"]}
    actions = Counter(Review.objects.values_list("action", flat=True))
    assert sorted(drawn.values()) == sorted(actions.values())
    assert sum(drawn.values()) == Review.objects.count() == 40


def test_the_auroc_is_scikit_learn_s_with_hanley_mcneil_s_interval(judged):
    response = _get(UserFactory(role=Role.LEAD), "?range=24h")
    rows = {r["model"]: r for r in response.context["auroc_rows"]}
    assert set(rows) == {"model-a", "model-b"}
    for model, row in rows.items():
        reviewed = Review.objects.filter(output__model=model).select_related("output")
        labels = [r.action == "approve" for r in reviewed]
        # The rollups keep scores to 0.1: the same resolution here, ties counting half.
        scores = [_bucket(r.output.score, 0.1) for r in reviewed]
        area = roc_auc_score(labels, scores)
        assert row["auroc"] == pytest.approx(area)
        assert row["n"] == len(labels)
        positives, negatives = sum(labels), len(labels) - sum(labels)
        q1, q2 = area / (2 - area), 2 * area**2 / (1 + area)
        se = math.sqrt(
            (
                area * (1 - area)
                + (positives - 1) * (q1 - area**2)
                + (negatives - 1) * (q2 - area**2)
            )
            / (positives * negatives)
        )
        assert row["low"] == pytest.approx(max(0.0, area - 1.959964 * se), abs=1e-5)
        assert row["high"] == pytest.approx(min(1.0, area + 1.959964 * se), abs=1e-5)
    assert len(response.context["auroc"]["data"]) == 2  # a bar per model


@pytest.mark.parametrize(
    ("role", "status"),
    [(Role.GATEWAY, 403), (Role.REVIEWER, 403), (Role.LEAD, 200), (Role.ADMIN, 200)],
)
def test_the_roles(judged, role, status):
    assert _get(UserFactory(role=role)).status_code == status


def test_a_bad_filter_is_a_400_that_names_it(judged):
    response = _get(UserFactory(role=Role.LEAD), "?model=nobody")
    assert response.status_code == 400
    assert 'data-field="model"' in response.content.decode()


def test_an_empty_range_says_so(judged):
    response = _get(UserFactory(role=Role.LEAD), "?range=custom&since=2020-01-01&until=2020-01-02")
    assert response.status_code == 200
    assert response.context["reliability"] is None
    assert "No data in this range." in response.content.decode()


def _gold_record(task_type, at, gold):
    threshold_record(task_type, at=at, evidence={"gold": gold})


def _check(n, predicted, observed, low, high):
    return {
        "n": n,
        "predicted": predicted,
        "observed": observed,
        "low": low,
        "high": high,
        "consistent": low <= predicted <= high,
    }


def test_the_gold_checks_show_per_task_type_from_the_latest_run():
    at = datetime(2026, 3, 20, 12, 0, tzinfo=UTC)
    agrees = TaskTypeFactory(name="agrees")
    misses = TaskTypeFactory(name="<b>misses</b>")
    quiet = TaskTypeFactory(name="quiet")
    TaskTypeFactory(name="never-run")
    # An older run of "agrees" that missed: the latest one stands.
    _gold_record(agrees, at - timedelta(hours=12), {"rejects": _check(9, 0.5, 0.0, 0.0, 0.3)})
    _gold_record(
        agrees,
        at,
        {
            "finds_fault": _check(40, 0.051, 0.05, 0.006, 0.169),
            "rejects": _check(40, 0.004, 0.0, 0.0, 0.072),
        },
    )
    _gold_record(
        misses,
        at,
        {
            "finds_fault": _check(40, 0.02, 0.75, 0.588, 0.873),
            "rejects": _check(40, 0.004, 0.0, 0.0, 0.072),
        },
    )
    _gold_record(quiet, at, {})

    response = _get(UserFactory(role=Role.LEAD))

    shown = {r.task_type: r.checks for r in response.context["gold_rows"]}
    assert sorted(shown) == ["<b>misses</b>", "agrees", "quiet"]
    assert shown["agrees"]["finds_fault"]["n"] == 40  # the latest run's
    section = response.content.decode().split('id="gold-checks"')[1].split("</section>")[0]
    rows = {
        name: row
        for row in section.split("<tr>")[2:]
        for name in ("agrees", "misses", "quiet", "never-run")
        if name in row
    }
    assert "&lt;b&gt;misses&lt;/b&gt;" in rows["misses"] and "<b>misses" not in section
    assert "yes" in rows["agrees"] and "5.1%" in rows["agrees"]
    assert "<strong>no</strong>: finds fault outside what the leads said" in rows["misses"]
    assert "No gold check in the window by a lead the model knows." in rows["quiet"]
    assert "never-run" not in rows
