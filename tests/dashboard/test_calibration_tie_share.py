"""The calibration page's share of outputs each scorer ties at 10, per task type: from the
scorer rollup, weighted by 1 / inclusion probability so that audited outputs stand for the
delivered ones they were drawn from; checked against a count made here from the raw rows."""

import random

import pytest
from django.test import Client

from dashboard.metrics import metric_rows
from dashboard.models import TOP_SCORE_BUCKET, ScorerRollup
from dashboard.rollups import rollups_refresh
from gating import reviews, services
from gating.formatting import percent
from gating.models import Output, Review, ReviewItem
from gating.roles import Role
from gating.submissions import OutputSubmission
from tests.factories import (
    SubmissionFactory,
    TaskModelStatsFactory,
    TaskTypeFactory,
    UserFactory,
)

pytestmark = pytest.mark.django_db

VALIDATORS = ("facts", "schema", "grammar", "length")


def _submission(rng: random.Random) -> OutputSubmission:
    failing = rng.sample(VALIDATORS, k=rng.choice([0, 0, 1, 2]))
    body = SubmissionFactory(
        task_type="summarize",
        validators=[{"name": n, "passed": n not in failing} for n in VALIDATORS],
        input_clarity=round(rng.uniform(0.4, 1.0), 3),
        coherence=round(rng.uniform(0.4, 1.0), 3),
    )
    return OutputSubmission.model_validate(body)


@pytest.fixture
def judged(gateway):
    """80 outputs of a pair with the full bonus: what ADR-0003's formula ties at 10 the
    validators scorer approves, and half of the approved are audited; every held output and
    every audit judged once, approved or rejected at random."""
    TaskTypeFactory(
        name="summarize", cold_start_margin=0.0, audit_rate_approved=0.5, audit_rate_warning=0.5
    )
    TaskModelStatsFactory(task_type__name="summarize", model="model-a", approved_unchanged_count=38)
    rng = random.Random(3)
    services.output_ingest_batch(
        source=gateway, submissions=[_submission(rng) for _ in range(80)], rng=rng
    )
    reviewer = UserFactory(role=Role.REVIEWER)
    for item in ReviewItem.objects.order_by("id"):
        claimed = reviews.item_claim(reviewer=reviewer, items=ReviewItem.objects.filter(pk=item.pk))
        decision = (
            reviews.DecisionInput(action="approve")
            if rng.random() < 0.6
            else reviews.DecisionInput(action="reject", reason="factual_error")
        )
        reviews.item_decide(item_id=claimed.pk, reviewer=reviewer, decision=decision)
    rollups_refresh()


def _score(output: Output, scorer: str) -> float:
    if output.scorer.startswith(f"{scorer}-v"):
        return output.score
    return output.shadow_scores[scorer]["score"]


def _expected_share(scorer: str) -> float:
    """Each first review's output, weighted by 1 / its chance of review, at 10 or not."""
    tied = total = 0.0
    first = Review.objects.filter(item__kind__in=["review", "audit"], is_bulk=False)
    for review in first.select_related("item", "output"):
        weight = 1 / review.item.inclusion_probability
        total += weight
        if _score(review.output, scorer) >= 9.9995:
            tied += weight
    return tied / total


def test_the_page_shows_each_scorers_share_tied_at_10(judged):
    audits = ReviewItem.objects.filter(kind="audit")
    assert audits.exists() and ReviewItem.objects.filter(kind="review").exists()
    assert {i.inclusion_probability for i in audits} == {0.5}

    client = Client()
    client.force_login(UserFactory(role=Role.LEAD))
    response = client.get("/dashboard/calibration/?range=24h")
    assert response.status_code == 200

    rows = {
        r["scorer"]: r
        for r in metric_rows("scorer-auroc", response.context["dashboard_filter"])
        if r["against"] == "reviewers"
    }
    expected = _expected_share("adr0003_formula")
    # The full bonus ties most of the outputs ADR-0003's formula scores; v2 none of them.
    assert 0.3 < expected < 1
    assert rows["adr0003_formula"]["tied_at_10"] == pytest.approx(expected)
    assert rows["validators"]["tied_at_10"] == 0.0
    # Weighting matters here: counted without weights, the audits' outputs would count half.
    unweighted = ScorerRollup.objects.filter(scorer="adr0003_formula")
    at_top = sum(r.reviews for r in unweighted if r.score_bucket == TOP_SCORE_BUCKET)
    assert at_top / sum(r.reviews for r in unweighted) != pytest.approx(expected)

    page = response.content.decode()
    assert f'<td class="num">{percent(expected)}</td></tr>' in page
    assert "Tied at 10: the share of outputs tied at the top score" in page


def test_rows_rolled_up_before_weights_stay_out_of_the_share(judged):
    ScorerRollup.objects.update(weight_sum=0.0)
    lead = UserFactory(role=Role.LEAD)
    client = Client()
    client.force_login(lead)
    response = client.get("/dashboard/calibration/?range=24h")

    rows = metric_rows("scorer-auroc", response.context["dashboard_filter"])
    assert rows and all(r["tied_at_10"] is None for r in rows)
    assert all(r["auroc"] is not None for r in rows)
