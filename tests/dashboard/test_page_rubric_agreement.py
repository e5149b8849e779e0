"""Agreement per rubric dimension and the rubric scores on the reviewers page, against
hand-built first and second reviews: kappa and interval alpha worked out by hand, pairs
across rubric versions left out, the filter applied, the charts and their CSV."""

import csv
import io
from collections import Counter
from dataclasses import replace
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from dashboard.metrics import metric_rows
from gating import reviews, rubrics, services
from gating.models import ReviewItem
from gating.roles import Role
from tests.factories import TaskTypeFactory, UserFactory, valid_submission

pytestmark = pytest.mark.django_db

DIMENSIONS = [
    {"name": "helpfulness", "label": "Helpfulness", "kind": "numeric", "required": True}
    | {"minimum": 1, "maximum": 5},
    {"name": "tone", "label": "Tone", "kind": "categorical", "required": False}
    | {"choices": ["neutral", "too casual", "too formal"]},
    {"name": "cites", "label": "Cites its sources", "kind": "boolean", "required": True},
]

# Twelve outputs, each reviewed by ann then bob against rubric version 1.
# cites, as a table (rows ann, columns bob; yes, no): [[5, 1], [1, 5]]. p_o = 10/12; both
# say yes half the time, so p_e = 1/2; kappa = (10/12 - 1/2) / (1/2) = 2/3.
CITES = [(True, True)] * 5 + [(True, False), (False, True)] + [(False, False)] * 5
# helpfulness: five pairs alike (1 to 5), then (1, 2) and (2, 1), then five more alike.
HELPFULNESS = [(v, v) for v in range(1, 6)] + [(1, 2), (2, 1)] + [(v, v) for v in range(1, 6)]
# tone, optional: both scored it on six outputs only, too few for a value.
TONE = [("neutral", "neutral")] * 4 + [("neutral", "too casual"), ("too formal", "too formal")]
TONE += [(None, "neutral"), ("neutral", None)] + [(None, None)] * 4
PAIRS = 12
# Two more outputs first reviewed against version 1, second reviewed against version 2:
# no pair, though their scores count among the scores given.
STALE = [((5, None, True), (1, None, False))] * 2


def interval_alpha_of_two(pairs) -> float:
    """Krippendorff's interval alpha for two raters without missing values, from its
    definition: D_o = (1/n) sum over units of 2 (a - b)^2, D_e = the sum of (v - w)^2 over
    ordered pairs of the n values / (n (n - 1)); alpha = 1 - D_o / D_e."""
    values = [v for pair in pairs for v in pair]
    n = len(values)
    observed = sum(2 * (a - b) ** 2 for a, b in pairs) / n
    expected = sum((v - w) ** 2 for v in values for w in values) / (n * (n - 1))
    return 1 - observed / expected


def _scores(helpfulness, tone, cites) -> dict:
    return {"helpfulness": helpfulness, "cites": cites} | ({"tone": tone} if tone else {})


def _decide(output, kind, user, scores, at, version, action="approve"):
    item = ReviewItem.objects.get(output=output, kind=kind)
    claimed = reviews.item_claim(reviewer=user, items=ReviewItem.objects.filter(pk=item.pk), now=at)
    reason = "factual_error" if action == "reject" else ""
    reviews.item_decide(
        item_id=claimed.pk,
        reviewer=user,
        decision=reviews.DecisionInput(
            action, reason=reason, scores=scores, rubric_version=version
        ),
        now=at + timedelta(seconds=30),
    )


@pytest.fixture
def scored(gateway):
    """The reviews above, five hours ago, and one output of a task type without a rubric. bob
    rejects the first output, which ann approved: a lead adjudicates it, scoring too, but an
    adjudication is no independent review and makes no pair."""
    rated = TaskTypeFactory(name="rated", reviewed_count=0, double_review_rate=1.0)
    TaskTypeFactory(name="plain", reviewed_count=0)
    admin = UserFactory(role=Role.ADMIN)
    rubrics.rubric_save(task_type=rated, instructions="", dimensions=DIMENSIONS, actor=admin)
    outputs = [
        services.output_ingest(source=gateway, submission=valid_submission(task_type="rated"))
        for _ in range(PAIRS + len(STALE))
    ]
    services.output_ingest(source=gateway, submission=valid_submission(task_type="plain"))
    ann, bob = (UserFactory(role=Role.REVIEWER, username=name) for name in ("ann", "bob"))
    firsts = [(h[0], t[0], c[0]) for h, t, c in zip(HELPFULNESS, TONE, CITES, strict=True)]
    seconds = [(h[1], t[1], c[1]) for h, t, c in zip(HELPFULNESS, TONE, CITES, strict=True)]
    firsts += [first for first, _ in STALE]
    at = timezone.now() - timedelta(hours=5)
    for output, first in zip(outputs, firsts, strict=True):
        _decide(output.output, "review", ann, _scores(*first), at, 1)
        at += timedelta(minutes=1)
    for n, (output, second) in enumerate(zip(outputs[:PAIRS], seconds, strict=True)):
        action = "reject" if n == 0 else "approve"
        _decide(output.output, "second", bob, _scores(*second), at, 1, action)
        at += timedelta(minutes=1)
    adjudicated = (3, "too formal", False)
    lead = UserFactory(role=Role.LEAD, username="lea")
    _decide(outputs[0].output, "adjudication", lead, _scores(*adjudicated), at, 1)
    rubrics.rubric_save(
        task_type=rated, instructions="Now with a word more.", dimensions=DIMENSIONS, actor=admin
    )
    for output, (_, second) in zip(outputs[PAIRS:], STALE, strict=True):
        _decide(output.output, "second", bob, _scores(*second), at, 2)
        at += timedelta(minutes=1)
    return {
        "first": firsts,
        "second": seconds + [second for _, second in STALE],
        "adjudication": [adjudicated],
    }


def _get(query="?range=24h"):
    client = Client()
    client.force_login(UserFactory(role=Role.LEAD))
    return client.get("/dashboard/reviewers/" + query)


def test_agreement_per_dimension_by_hand(scored):
    response = _get()
    assert response.status_code == 200
    rows = metric_rows("rubric-agreement", response.context["dashboard_filter"])
    by_dimension = {r["dimension"]: r for r in rows}
    assert [r["dimension"] for r in rows] == ["helpfulness", "tone", "cites"]
    assert {r["task_type"] for r in rows} == {"rated"}

    cites = by_dimension["cites"]
    assert (cites["statistic"], cites["n"]) == ("cohen_kappa", PAIRS)
    assert cites["value"] == pytest.approx(2 / 3, abs=1e-12)

    helpfulness = by_dimension["helpfulness"]
    assert (helpfulness["statistic"], helpfulness["n"]) == ("krippendorff_alpha_interval", PAIRS)
    assert helpfulness["value"] == pytest.approx(interval_alpha_of_two(HELPFULNESS), abs=1e-12)
    # Two near misses of 24 values from 1 to 5: high, though not full, agreement.
    assert 0.9 < helpfulness["value"] < 1

    tone = by_dimension["tone"]
    assert (tone["statistic"], tone["value"], tone["n"]) == ("cohen_kappa", None, 6)


def test_the_page_shows_the_numbers_and_both_charts(scored):
    response = _get()
    context = response.context
    assert context["rubric_agreement"] is not None
    assert context["rubric_scores"] is not None
    table = {r["dimension"]: r for r in context["rubric_agreement_rows"]}
    assert table["cites"]["band"] == "substantial"  # 0.667 is in Landis and Koch's 0.6-0.8
    assert table["helpfulness"]["band"] == "reliable"
    assert table["tone"]["band"] is None
    assert table["cites"]["shown"] == "0.67"
    html = response.content.decode()
    for chart_id in ("rubric-agreement", "rubric-scores"):
        assert f'id="{chart_id}-figure"' in html
    assert "not enough pairs" in html
    assert 'href="/api/v1/metrics/rubric-agreement/?format=csv' in html

    figure = context["rubric_agreement"]
    bars = {trace["name"]: trace for trace in figure["data"] if trace["type"] == "bar"}
    assert list(bars) == ["rated"]
    assert bars["rated"]["x"] == ["Helpfulness (α)", "Tone (κ)", "Cites its sources (κ)"]
    assert bars["rated"]["text"][1] == "not enough pairs"


def test_the_scores_count_every_review_given(scored):
    rows = metric_rows("rubric-scores", _get().context["dashboard_filter"])
    given = scored["first"] + scored["second"] + scored["adjudication"]
    expected = Counter()
    for helpfulness, tone, cites in given:
        expected["helpfulness", helpfulness] += 1
        expected["cites", cites] += 1
        if tone is not None:
            expected["tone", tone] += 1
    assert {(r["dimension"], r["value"]): r["reviews"] for r in rows} == dict(expected)
    # In reading order: the scale upward, the choices as listed, yes before no.
    assert [r["value"] for r in rows if r["dimension"] == "helpfulness"] == [1, 2, 3, 4, 5]
    assert [r["value"] for r in rows if r["dimension"] == "tone"] == [
        "neutral",
        "too casual",
        "too formal",
    ]
    assert [r["value"] for r in rows if r["dimension"] == "cites"] == [True, False]

    figure = _get().context["rubric_scores"]
    panels = [t for t in figure["data"] if t["type"] == "bar"]
    assert [p["x"] for p in panels] == [
        ["1", "2", "3", "4", "5"],
        list(DIMENSIONS[1]["choices"]),
        ["yes", "no"],
    ]
    helpfulness = {x: y for x, y in zip(panels[0]["x"], panels[0]["y"], strict=True)}
    total = len(given)
    assert helpfulness["2"] == pytest.approx(expected["helpfulness", 2] / total)


def test_the_filter_applies(scored):
    plain = _get("?range=24h&task_type=plain").context["dashboard_filter"]
    assert metric_rows("rubric-agreement", plain) == []
    assert metric_rows("rubric-scores", plain) == []
    rated = _get("?range=24h&task_type=rated").context["dashboard_filter"]
    assert len(metric_rows("rubric-agreement", rated)) == 3
    # Every output here is model-a's.
    assert len(metric_rows("rubric-scores", replace(rated, models=("model-a",)))) == 10
    assert metric_rows("rubric-agreement", replace(rated, models=("model-b",))) == []
    assert metric_rows("rubric-scores", replace(rated, models=("model-b",))) == []
    # A range that ended before the reviews.
    since = (timezone.now() - timedelta(days=3)).isoformat()
    until = (timezone.now() - timedelta(days=2)).isoformat()
    response = _get(f"?range=custom&since={since}&until={until}".replace("+", "%2B"))
    assert response.status_code == 200
    assert response.context["rubric_agreement"] is None
    assert response.context["rubric_scores"] is None
    assert "No data in this range." in response.content.decode()


def test_the_csv_carries_the_agreement_rows(scored, user_in, client_for):
    api = client_for(user_in(Role.LEAD))
    response = api.get("/api/v1/metrics/rubric-agreement/", {"range": "24h", "format": "csv"})
    assert response.status_code == 200
    header, *lines = list(csv.reader(io.StringIO(response.content.decode())))
    assert header == ["task_type", "dimension", "label", "kind", "statistic", "value", "n"]
    cells = {line[1]: dict(zip(header, line, strict=True)) for line in lines}
    assert float(cells["cites"]["value"]) == pytest.approx(2 / 3)
    assert (cells["tone"]["value"], cells["tone"]["n"]) == ("", "6")
