"""The reviewers page against the reviews it summarises: Cohen's kappa per pair
(scikit-learn), Krippendorff's alpha (the krippendorff package), and per reviewer the
decision mix, agreement with the gate and median decision time."""

from collections import defaultdict
from datetime import timedelta

import krippendorff
import numpy as np
import pytest
from django.test import Client
from django.utils import timezone
from sklearn.metrics import cohen_kappa_score

from dashboard.metrics import metric_rows
from dashboard.rollups import rollups_refresh
from gating import reviews, services
from gating.models import Review, ReviewItem
from gating.roles import Role
from learning.cycles import cycle_run
from learning.models import ReviewerReliability
from tests.factories import TaskTypeFactory, UserFactory, valid_submission

pytestmark = pytest.mark.django_db

NAMES = ("ann", "bob", "cy")
OUTPUTS = 24
TOOK = timedelta(seconds=45)


def _action(name: str, n: int) -> str:
    # Each reviewer approves on their own pattern, so that the pairs agree to different
    # degrees.
    every = {"ann": 2, "bob": 3, "cy": 4}[name]
    return "reject" if n % every == 0 else "approve"


@pytest.fixture
def judged(gateway):
    """24 held outputs, each judged by two of three reviewers in turn, seven hours ago (so
    that the agreement cycle's window holds them), then the agreement cycle."""
    TaskTypeFactory(name="paired", reviewed_count=0, double_review_rate=1.0)
    outputs = [
        services.output_ingest(
            source=gateway,
            submission=valid_submission(task_type="paired"),
        ).output
        for _ in range(OUTPUTS)
    ]
    people = {name: UserFactory(role=Role.REVIEWER, username=name) for name in NAMES}
    at = timezone.now() - timedelta(hours=7)
    for turn, kind in enumerate(("review", "second")):
        for n, output in enumerate(outputs):
            name = NAMES[(n + turn) % 3]
            item = ReviewItem.objects.get(output=output, kind=kind)
            claimed = reviews.item_claim(
                reviewer=people[name], items=ReviewItem.objects.filter(pk=item.pk), now=at
            )
            action = _action(name, n)
            reviews.item_decide(
                item_id=claimed.pk,
                reviewer=people[name],
                decision=reviews.DecisionInput(
                    action=action, reason="factual_error" if action == "reject" else ""
                ),
                now=at + TOOK,
            )
            at += timedelta(minutes=1)
    cycle_run("agreement", timezone.now())
    rollups_refresh()


def _get(user, query=""):
    client = Client()
    client.force_login(user)
    return client.get("/dashboard/reviewers/" + query)


def _judged_by() -> dict[int, dict[str, str]]:
    judged: dict = defaultdict(dict)
    for output_id, name, action in Review.objects.values_list(
        "output_id", "reviewer__username", "action"
    ):
        judged[output_id][name] = action
    return judged


def test_the_kappa_matrix_is_scikit_learn_s(judged):
    response = _get(UserFactory(role=Role.LEAD), "?range=24h")
    assert response.status_code == 200
    rows = metric_rows("reviewer-kappa", response.context["dashboard_filter"])
    judged_by = _judged_by()
    expected = {}
    for a, b in (("ann", "bob"), ("ann", "cy"), ("bob", "cy")):
        both = [j for j in judged_by.values() if a in j and b in j]
        expected[frozenset((a, b))] = (
            cohen_kappa_score([j[a] for j in both], [j[b] for j in both]),
            len(both),
        )
    assert {frozenset((r["first"], r["second"])): (r["kappa"], r["n"]) for r in rows} == {
        pair: (pytest.approx(kappa), n) for pair, (kappa, n) in expected.items()
    }
    heatmap = response.context["kappa"]["data"][0]
    assert heatmap["type"] == "heatmap"
    assert "n 8" in str(heatmap["text"])  # each pair judged 8 outputs together


def test_alpha_is_krippendorff_s(judged):
    response = _get(UserFactory(role=Role.LEAD), "?range=24h")
    judged_by = _judged_by()
    code = {"approve": 0, "reject": 1}
    data = np.full((3, len(judged_by)), np.nan)
    for column, judged in enumerate(judged_by.values()):
        for name, action in judged.items():
            data[NAMES.index(name), column] = code[action]
    expected = krippendorff.alpha(reliability_data=data, level_of_measurement="nominal")
    (point,) = metric_rows("reviewer-alpha", response.context["dashboard_filter"])
    assert point["alpha"] == pytest.approx(expected)
    assert point["n"] == OUTPUTS
    assert response.context["alpha"]["data"][0]["y"] == [pytest.approx(expected)]


def test_the_table_per_reviewer(judged):
    rows = {
        r["reviewer"]: r
        for r in _get(UserFactory(role=Role.LEAD), "?range=24h").context["reviewers"]
    }
    assert set(rows) == set(NAMES)
    for name in NAMES:
        mine = Review.objects.filter(reviewer__username=name)
        row = rows[name]
        assert row["decisions"] == mine.count() == 16
        assert row["approve"] == mine.filter(action="approve").count()
        assert row["reject"] == mine.filter(action="reject").count()
        assert row["approve_share"] == pytest.approx(row["approve"] / 16)
        # Every output was held: the gate "said no", so agreeing with it is not approving.
        assert row["agreement_with_gate"] == pytest.approx(row["reject"] / 16)
        assert row["reliability"] == pytest.approx(
            ReviewerReliability.objects.get(reviewer__username=name).reliability
        )
        # Every decision took 45 s: the median from the time buckets is exact here.
        assert row["median_seconds"] == pytest.approx(TOOK.total_seconds())


@pytest.mark.parametrize(
    ("role", "status"),
    [(Role.GATEWAY, 403), (Role.REVIEWER, 403), (Role.LEAD, 200), (Role.ADMIN, 200)],
)
def test_the_roles(judged, role, status):
    assert _get(UserFactory(role=role)).status_code == status


def test_a_bad_filter_is_a_400_that_names_it(judged):
    response = _get(UserFactory(role=Role.LEAD), "?range=custom&since=2026-02-02&until=2026-02-01")
    assert response.status_code == 400
    assert 'data-field="until"' in response.content.decode()


def test_an_empty_range_says_so(judged):
    response = _get(UserFactory(role=Role.LEAD), "?range=custom&since=2020-01-01&until=2020-01-02")
    assert response.status_code == 200
    assert response.context["kappa"] is None
    assert "No data in this range." in response.content.decode()
