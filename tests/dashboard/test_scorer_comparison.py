"""The calibration page's comparison of the scorers: each scorer's AUROC on the reviewed
outputs it scored (deciding or in shadow), against the reviewers and against the
simulator's truth, checked against scikit-learn on the raw scores."""

import math
import random

import pytest
from django.test import Client
from sklearn.metrics import roc_auc_score

from dashboard.metrics import metric_rows
from dashboard.models import ScorerRollup
from dashboard.rollups import rollups_refresh
from gating import reviews, scorers, services
from gating.models import Output, Review, ReviewItem
from gating.roles import Role
from gating.submissions import OutputSubmission
from learning.models import SimulatedTruth
from tests.factories import SubmissionFactory, TaskTypeFactory, UserFactory

pytestmark = pytest.mark.django_db

TRUTHS = ("good", "needs_edit", "bad")


def _payload(rng: random.Random) -> dict:
    """Evidence and provenance of random strength, so that the scorers disagree."""
    match = rng.choice(["exact", "identifier", "substring", "token"])
    read = rng.choice(["first_listed", "ranked", "top_ranked"])
    evidence = {
        "intent": "locate",
        "entries": [
            {"tool": "grep", "target": "Cache", "query": "Cache", "match": match,
             "match_count": rng.randint(1, 60)},
            {"tool": "read", "target": "Cache", "outcome": read},
        ],
    }  # fmt: skip
    provenance = {
        "sources": [
            {"source_type": rng.choice(["extraction", "user_input", "agent_assertion"]),
             "confidence": round(rng.uniform(0.2, 0.99), 3)}
            for _ in range(rng.randint(1, 4))
        ]
    }  # fmt: skip
    return {"evidence": evidence, "provenance": provenance}


@pytest.fixture
def judged(gateway):
    """60 held outputs of a task type scored by evidence_quality, each with a truth, each
    judged once: approved when good, else modified or rejected; a few reviewer mistakes."""
    TaskTypeFactory(name="code_locate", scorer="evidence_quality", reviewed_count=0)
    rng = random.Random(7)
    reviewer = UserFactory(role=Role.REVIEWER)
    for _ in range(60):
        body = SubmissionFactory(task_type="code_locate", **_payload(rng))
        output = services.output_ingest(
            source=gateway, submission=OutputSubmission.model_validate(body)
        ).output
        SimulatedTruth.objects.create(output=output, truth=rng.choice(TRUTHS), seed=7)
    truths = dict(SimulatedTruth.objects.values_list("output_id", "truth"))
    for item in ReviewItem.objects.order_by("id"):
        good = truths[item.output_id] == "good"
        if rng.random() < 0.1:
            good = not good
        claimed = reviews.item_claim(reviewer=reviewer, items=ReviewItem.objects.filter(pk=item.pk))
        decision = (
            reviews.DecisionInput(action="approve")
            if good
            else reviews.DecisionInput(action="reject", reason="factual_error")
        )
        reviews.item_decide(item_id=claimed.pk, reviewer=reviewer, decision=decision)
    rollups_refresh()


def _bucket(score: float) -> int:
    # The rollup's 0.1-wide bucket, or the top one past them; a tie within a bucket counts
    # half, as in roc_auc_score.
    if score >= 9.9995:
        return 100
    return min(math.floor(round(score * 10, 6)), 99)


def _expected(scorer: str, against: str) -> float:
    scores, labels = [], []
    for output in Output.objects.all():
        if output.scorer.startswith(f"{scorer}-v"):
            score = output.score
        elif scorer in output.shadow_scores:
            score = output.shadow_scores[scorer]["score"]
        else:
            continue
        review = Review.objects.get(output=output)
        truth = SimulatedTruth.objects.get(output=output).truth
        scores.append(_bucket(score))
        labels.append(review.action == "approve" if against == "reviewers" else truth == "good")
    return roc_auc_score(labels, scores)


def test_each_scorers_auroc_is_that_of_its_scores_on_the_same_outputs(judged):
    client = Client()
    client.force_login(UserFactory(role=Role.LEAD))
    response = client.get("/dashboard/calibration/?range=24h")
    assert response.status_code == 200

    rows = metric_rows("scorer-auroc", response.context["dashboard_filter"])
    found = {(r["scorer"], r["against"]): r for r in rows}
    assert set(found) == {
        (scorer, against) for scorer in scorers.names() for against in ("reviewers", "truth")
    }
    for (scorer, against), row in found.items():
        assert row["task_type"] == "code_locate"
        assert row["n"] == 60
        assert row["auroc"] == pytest.approx(_expected(scorer, against)), (scorer, against)
        assert row["low"] <= row["auroc"] <= row["high"]
    drawn = response.context["scorers_vs_truth"]["data"]
    assert {trace["name"] for trace in drawn} == {s for s, _ in found}
    assert 'id="scorer-auroc-table"' in response.content.decode()


def test_the_comparison_is_served_as_json_and_csv(judged, user_in, client_for):
    lead = client_for(user_in(Role.LEAD))
    rows = lead.get("/api/v1/metrics/scorer-auroc/?range=24h").json()
    assert {row["against"] for row in rows["rows"]} == {"reviewers", "truth"}
    csv = lead.get("/api/v1/metrics/scorer-auroc/?range=24h&format=csv")
    assert csv.status_code == 200
    assert csv.content.decode().splitlines()[0].startswith("task_type,scorer,against,auroc")


def test_a_scorer_deciding_some_outputs_and_shadowing_others_is_counted_once_each(gateway):
    """In an evidence_quality task type, an output sent without evidence is decided by the
    validators scorer, which also shadows the others: both land in validators' rows of
    the same hour, and the refresh must add them up, not collide."""
    TaskTypeFactory(name="code_locate", scorer="evidence_quality", reviewed_count=0)
    reviewer = UserFactory(role=Role.REVIEWER)
    bodies = [
        SubmissionFactory(task_type="code_locate", **_payload(random.Random(1))),
        SubmissionFactory(task_type="code_locate"),
    ]
    for body in bodies:
        services.output_ingest(source=gateway, submission=OutputSubmission.model_validate(body))
    assert {o.scorer for o in Output.objects.all()} == {"evidence_quality-v1", "validators-v2"}
    # The same score bucket for both, so that their rows share a key.
    Output.objects.update(score=5.0)
    Output.objects.filter(scorer="evidence_quality-v1").update(
        shadow_scores={"validators": {"version": "1", "score": 5.0}}
    )
    for item in ReviewItem.objects.order_by("id"):
        claimed = reviews.item_claim(reviewer=reviewer, items=ReviewItem.objects.filter(pk=item.pk))
        reviews.item_decide(
            item_id=claimed.pk, reviewer=reviewer, decision=reviews.DecisionInput(action="approve")
        )

    rollups_refresh()

    rows = ScorerRollup.objects.filter(scorer="validators")
    assert [(r.score_bucket, r.reviews) for r in rows] == [(50, 2)]
