"""Simulated reviewers score rubrics (simulator/rubric_scores.py): from the hidden truth,
with each reviewer's noise and lean, every draw a score the rubric accepts; and a replay
with a rubric keeps every verdict of the same seed's replay without one."""

import random
import statistics
from datetime import date

import pytest

from dashboard.demo import DEMO_RUBRIC_DIMENSIONS
from gating import rubrics
from gating.models import Review, TaskType
from learning.statistics.agreement import cohen_kappa
from simulator import run, world
from simulator.rubric_scores import (
    OPTIONAL_SKIPPED,
    reviewer_lean,
    reviewer_noise,
    scores_draw,
)
from simulator.world import DEFAULT_REVIEWERS, Truth

REVIEWERS = {r.name: r for r in DEFAULT_REVIEWERS}
DRAWS = 4000


def draws_of(reviewer_name: str, truth: Truth, dimensions=DEMO_RUBRIC_DIMENSIONS, seed=3):
    """One reviewer's scores of DRAWS outputs of this truth."""
    rng = random.Random(seed)
    reviewer = REVIEWERS[reviewer_name]
    return [scores_draw(dimensions, truth, reviewer, rng, f"o{i}") for i in range(DRAWS)]


def test_noise_and_lean_read_the_confusion_matrix():
    accurate, harsh = REVIEWERS["accurate"], REVIEWERS["harsh"]
    # Wrong verdicts: 1 - 0.92, 1 - 0.88, 1 - 0.93 (world.DEFAULT_REVIEWERS).
    assert reviewer_noise(accurate) == pytest.approx((0.08 + 0.12 + 0.07) / 3)
    # Approve minus reject, less the right verdict's (1, 0, -1): good 0.70 - 0.12 - 1, needs
    # edit 0.02 - 0.30, bad 0.00 - 0.97 + 1.
    assert reviewer_lean(harsh) == pytest.approx((-0.42 - 0.28 + 0.03) / 3)
    assert reviewer_lean(REVIEWERS["lenient"]) > 0 > reviewer_lean(harsh)


@pytest.mark.parametrize("truth", list(Truth))
@pytest.mark.parametrize("name", list(REVIEWERS))
def test_every_draw_is_a_score_the_rubric_accepts(name, truth):
    dimensions = rubrics.dimensions_clean(DEMO_RUBRIC_DIMENSIONS)
    for scores in draws_of(name, truth)[:500]:
        assert rubrics.scores_clean(dimensions, scores) == scores


def test_scores_follow_the_truth():
    for name in REVIEWERS:
        helpfulness = {
            t: statistics.fmean(s["helpfulness"] for s in draws_of(name, t)) for t in Truth
        }
        assert helpfulness[Truth.GOOD] > helpfulness[Truth.NEEDS_EDIT] > helpfulness[Truth.BAD]
        cites = {t: statistics.fmean(s["cites_sources"] for s in draws_of(name, t)) for t in Truth}
        assert cites[Truth.GOOD] > cites[Truth.NEEDS_EDIT] > cites[Truth.BAD]
        neutral = {
            t: statistics.fmean(s["tone"] == "neutral" for s in draws_of(name, t) if "tone" in s)
            for t in Truth
        }
        assert neutral[Truth.GOOD] > neutral[Truth.BAD]


def test_a_harsh_reviewer_scores_lower_and_a_noisy_one_spreads_wider():
    def helpfulness(name):
        return [s["helpfulness"] for s in draws_of(name, Truth.NEEDS_EDIT)]

    means = {name: statistics.fmean(helpfulness(name)) for name in REVIEWERS}
    assert means["harsh"] < means["accurate"] < means["lenient"]
    assert statistics.stdev(helpfulness("noisy")) > statistics.stdev(helpfulness("accurate"))


def test_optional_dimensions_are_sometimes_left_unscored():
    draws = draws_of("accurate", Truth.GOOD)
    skipped = sum("tone" not in s for s in draws) / DRAWS
    # A binomial share of 4,000: four standard errors either side.
    se = (OPTIONAL_SKIPPED * (1 - OPTIONAL_SKIPPED) / DRAWS) ** 0.5
    assert abs(skipped - OPTIONAL_SKIPPED) < 4 * se
    assert all("helpfulness" in s and "cites_sources" in s for s in draws)


def test_a_scale_with_fractional_ends_is_not_rounded():
    scale = [
        {"name": "x", "label": "X", "kind": "numeric", "required": True, "help": ""}
        | {"minimum": 0, "maximum": 0.5}
    ]
    values = [s["x"] for s in draws_of("noisy", Truth.GOOD, scale)]
    assert all(0 <= v <= 0.5 for v in values)
    assert len(set(values)) > 100


def test_two_reviewers_of_one_output_agree_beyond_chance():
    """Both read the output's own values: on the same outputs their yes-or-no answers agree
    far more than on different outputs of the same truth (where only the truth is shared)."""
    truths = [Truth.GOOD, Truth.NEEDS_EDIT, Truth.BAD] * 400
    rng = random.Random(5)

    def answers(name, keys):
        return [
            scores_draw(DEMO_RUBRIC_DIMENSIONS, t, REVIEWERS[name], rng, k)["cites_sources"]
            for t, k in zip(truths, keys, strict=True)
        ]

    same = [f"o{i}" for i in range(len(truths))]
    other = [f"p{i}" for i in range(len(truths))]
    kappa_same = cohen_kappa(answers("accurate", same), answers("lenient", same))
    kappa_apart = cohen_kappa(answers("accurate", same), answers("lenient", other))
    assert kappa_same > 0.6
    assert kappa_same > kappa_apart + 0.3


def test_the_same_generator_state_draws_the_same_scores():
    assert draws_of("noisy", Truth.BAD, seed=8) == draws_of("noisy", Truth.BAD, seed=8)
    assert draws_of("noisy", Truth.BAD, seed=8) != draws_of("noisy", Truth.BAD, seed=9)


def _verdicts() -> list[tuple]:
    return list(
        Review.objects.order_by("output__external_id", "item__kind").values_list(
            "output__external_id", "item__kind", "reviewer__username", "action", "decided_at"
        )
    )


@pytest.mark.slow
@pytest.mark.django_db
def test_a_rubric_adds_scores_to_a_replay_and_changes_no_verdict():
    config = world.SimulationConfig(seed=7, days=2, outputs_per_day=300, start=date(2026, 3, 2))
    # The first day recorded in bulk, the second worked through live claims.
    run.simulation_run(config, reviews_per_hour=30, live_days=1)
    without = _verdicts()
    assert not Review.objects.exclude(scores={}).exists()

    run.simulation_reset()
    rubric, _ = rubrics.rubric_save(
        task_type=TaskType.objects.get_or_create(name="summarize")[0],
        instructions="",
        dimensions=DEMO_RUBRIC_DIMENSIONS,
        actor=None,
    )
    run.simulation_run(config, reviews_per_hour=30, live_days=1)
    assert _verdicts() == without

    scored = Review.objects.filter(output__task_type__name="summarize")
    assert scored.exists() and not scored.filter(rubric=None).exists()
    for scores in scored.values_list("scores", flat=True):
        assert rubrics.scores_clean(rubric.dimensions, scores) == scores
    assert not Review.objects.exclude(output__task_type__name="summarize").exclude(scores={})
