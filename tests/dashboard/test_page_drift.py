"""The drift page against the raw rows: threshold history from the thresholds cycle and an
admin's edit, scores per day, approval by score band, and the PSI of each day against the
seven before (learning.statistics.drift on the raw scores)."""

from collections import Counter, defaultdict
from datetime import timedelta

import numpy as np
import pytest
from django.test import Client
from django.utils import timezone

from dashboard.metrics import metric_rows
from dashboard.rollups import rollups_refresh
from gating import reviews, services
from gating.models import Output, ReviewItem, TaskType
from gating.roles import Role
from gating.submissions import OutputSubmission
from learning.alerts import PSI_LIMIT
from learning.cycles import cycle_run
from learning.models import CycleRun, ThresholdChange
from learning.statistics import drift
from tests.factories import TaskTypeFactory, UserFactory, valid_submission

pytestmark = pytest.mark.django_db

DAYS = 8
PER_DAY = 64  # 32 a day per model: the PSI per model needs 30 on each side


def _submission(day: int, n: int) -> OutputSubmission:
    # In the last two days the drifting model fails more validators: its scores shift
    # down, and the task type's with them.
    model = "drifting-model" if n % 4 < 2 else "steady-model"
    shifted = day < 2 and model == "drifting-model"
    validators = [
        {"name": "facts", "passed": n % (2 if shifted else 4) != 0},
        {"name": "schema", "passed": n % 3 != 0},
        {"name": "grammar", "passed": not shifted or n % 2 == 0},
    ]
    return valid_submission(task_type="drifting", model=model, validators=validators)


@pytest.fixture
def history(gateway):
    """64 outputs a day for 8 days (created now, then moved back, before the rollups first
    see them), the latest day's held outputs reviewed, a thresholds cycle and an admin's
    edit."""
    task_type = TaskTypeFactory(name="drifting", reviewed_count=0, double_review_rate=0.0)
    now = timezone.now()
    for day in range(DAYS):
        ids = [
            services.output_ingest(source=gateway, submission=_submission(day, n)).output.pk
            for n in range(PER_DAY)
        ]
        Output.objects.filter(pk__in=ids).update(created_at=now - timedelta(days=day, minutes=5))
    reviewer = UserFactory(role=Role.REVIEWER)
    latest = ReviewItem.objects.filter(output__created_at__gte=now - timedelta(hours=1))
    for n, item in enumerate(latest.order_by("id")[:20]):
        claimed = reviews.item_claim(reviewer=reviewer, items=ReviewItem.objects.filter(pk=item.pk))
        action = "approve" if n % 3 else "reject"
        reviews.item_decide(
            item_id=claimed.pk,
            reviewer=reviewer,
            decision=reviews.DecisionInput(
                action=action, reason="factual_error" if action == "reject" else ""
            ),
        )
    cycle_run("thresholds", now)
    admin = UserFactory(role=Role.ADMIN, username="ada")
    task_type.refresh_from_db()
    services.gate_settings_change(
        task_type=task_type,
        changes={"review_threshold": task_type.review_threshold - 0.5},
        actor=admin,
        reason="Too many good summaries held.",
        source=services.EditSource.ADMIN,
    )
    rollups_refresh()
    return now


def _get(user, query="?range=30d"):
    client = Client()
    client.force_login(user)
    return client.get("/dashboard/drift/" + query)


def test_the_threshold_history_is_the_cycle_s_and_the_admin_s(history):
    response = _get(UserFactory(role=Role.LEAD))
    assert response.status_code == 200
    rows = metric_rows("threshold-history", response.context["dashboard_filter"])
    cycle_rows = [r for r in rows if r["source"] in ("cycle", "pinned")]
    assert len(cycle_rows) == ThresholdChange.objects.count() == 2
    assert {(r["which"], r["value"]) for r in cycle_rows} == set(
        ThresholdChange.objects.values_list("which", "new_value")
    )
    (edit,) = [r for r in rows if r["source"] == "admin"]
    task_type = TaskType.objects.get(name="drifting")
    assert (edit["which"], edit["value"], edit["actor"], edit["reason"]) == (
        "review",
        task_type.review_threshold,
        "ada",
        "Too many good summaries held.",
    )
    hover = str(response.context["threshold_history"]["data"])
    assert "Too many good summaries held." in hover
    assert "Edited by an admin (ada)" in hover


def test_a_pinned_threshold_is_marked(history):
    # A cycle's call on a pinned threshold, as learning.statistics.thresholds.constrain words it.
    held = ThresholdChange.objects.first()
    ThresholdChange.objects.create(
        cycle=CycleRun.objects.get(kind="thresholds"),
        task_type=held.task_type,
        which="approve",
        policy=held.policy,
        old_value=8.0,
        new_value=8.0,
        reason="Held: pinned by an admin.",
        at=held.at,
    )
    rows = metric_rows(
        "threshold-history", _get(UserFactory(role=Role.LEAD)).context["dashboard_filter"]
    )
    assert [r["source"] for r in rows].count("pinned") == 1


def test_the_scores_per_day_are_the_outputs(history):
    response = _get(UserFactory(role=Role.LEAD))
    rows = metric_rows("score-heatmap", response.context["dashboard_filter"])
    per_day = Counter()
    for row in rows:
        per_day[row["day"]] += row["count"]
    assert per_day == Counter(o.created_at.date() for o in Output.objects.all())
    assert response.context["score_heatmap"]["data"][0]["type"] == "heatmap"


def test_the_approval_by_band_is_the_reviews(history):
    response = _get(UserFactory(role=Role.LEAD))
    rows = metric_rows("approval-by-band", response.context["dashboard_filter"])
    expected = defaultdict(lambda: [0, 0])
    for item in ReviewItem.objects.filter(state="decided").select_related("output", "review"):
        lower = int(item.output.score // 2) * 2
        expected[f"{lower:g} to {min(lower + 2, 10):g}"][0] += item.review.action == "approve"
        expected[f"{lower:g} to {min(lower + 2, 10):g}"][1] += 1
    assert {r["band"]: [r["approved"], r["reviewed"]] for r in rows} == dict(expected)


def test_the_psi_is_each_day_against_the_seven_before(history):
    response = _get(UserFactory(role=Role.LEAD))
    rows = metric_rows("psi", response.context["dashboard_filter"])
    # From the raw scores, per model: each day against the 7 before, where both sides hold
    # at least 30 outputs.
    scores = defaultdict(list)
    for output in Output.objects.all():
        scores[output.model, output.created_at.date()].append(output.score)
    expected = {}
    for model, day in scores:
        baseline = [
            s
            for (m, d), values in scores.items()
            if m == model and day - timedelta(days=7) <= d < day
            for s in values
        ]
        if min(len(baseline), len(scores[model, day])) >= 30:
            bins = drift.SCORE_BINS
            expected[model, day] = drift.corrected_psi(
                np.histogram(np.clip(baseline, 0, 10), bins=bins)[0],
                np.histogram(np.clip(scores[model, day], 0, 10), bins=bins)[0],
            )
    assert {(r["model"], r["at"]): r["psi"] for r in rows} == {
        key: pytest.approx(value) for key, value in expected.items()
    }
    # The shift shows on the drifting model's line, not on the steady one's.
    drifting = [v for (m, _), v in expected.items() if m == "drifting-model"]
    steady = [v for (m, _), v in expected.items() if m == "steady-model"]
    assert max(drifting) > 0.1 > max(steady)
    psi_chart = response.context["psi"]
    assert str(PSI_LIMIT) in str(psi_chart["layout"]["annotations"])
    assert {trace["name"] for trace in psi_chart["data"]} >= {
        f"{name} · drifting-model" for name in {r["task_type"] for r in rows}
    }


def test_each_models_mean_score_per_day_is_exact_and_the_drifting_one_parts(history):
    response = _get(UserFactory(role=Role.LEAD))
    rows = metric_rows("model-scores", response.context["dashboard_filter"])
    scores = defaultdict(list)
    for output in Output.objects.all():
        scores[output.created_at.date(), output.model].append(output.score)
    assert {(r["day"], r["model"]): (r["mean_score"], r["outputs"]) for r in rows} == {
        key: (pytest.approx(sum(values) / len(values)), len(values))
        for key, values in scores.items()
    }
    latest = max(day for day, _ in scores)
    mean = {model: r["mean_score"] for r in rows if r["day"] == latest for model in [r["model"]]}
    assert mean["drifting-model"] < mean["steady-model"] - 1
    chart = response.context["model_scores"]
    assert sorted(trace["name"] for trace in chart["data"]) == ["drifting-model", "steady-model"]


@pytest.mark.parametrize(
    ("role", "status"),
    [(Role.GATEWAY, 403), (Role.REVIEWER, 403), (Role.LEAD, 200), (Role.ADMIN, 200)],
)
def test_the_roles(db, role, status):
    assert _get(UserFactory(role=role)).status_code == status


def test_a_bad_filter_is_a_400_that_names_it(db):
    response = _get(UserFactory(role=Role.LEAD), "?range=forever")
    assert response.status_code == 400
    assert 'data-field="range"' in response.content.decode()


def test_an_empty_range_says_so(history):
    response = _get(UserFactory(role=Role.LEAD), "?range=custom&since=2020-01-01&until=2020-01-02")
    assert response.status_code == 200
    assert response.context["psi"] is None
    assert "No data in this range." in response.content.decode()
