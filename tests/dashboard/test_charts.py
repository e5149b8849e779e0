"""The chart builders, with known rows: the numbers in the traces, the reference lines, the
axis titles and hover texts, and no figure for no rows."""

import json
from datetime import UTC, date, datetime, timedelta

import plotly.graph_objects as go
import pytest

from dashboard import charts
from dashboard.charts import (
    ActionBucket,
    AgeBucket,
    AlphaPoint,
    AurocRow,
    BandDay,
    DayScoreCount,
    ModelDayScore,
    PairKappa,
    PsiPoint,
    QueuePoint,
    ReliabilityBucket,
    ReviewerDay,
    ReviewerTime,
    RubricAgreementRow,
    RubricScoreRow,
    ScoreBucket,
    ThresholdPoint,
    ValidatorImportance,
    ValidatorPoint,
)
from dashboard.meanings import alpha_words, kappa_words

T0 = datetime(2025, 5, 1, tzinfo=UTC)
D1, D2, D3 = date(2025, 5, 1), date(2025, 5, 2), date(2025, 5, 3)


def hours(n: float) -> datetime:
    return T0 + timedelta(hours=n)


def trace(fig: go.Figure, name: str):
    (found,) = [t for t in fig.data if t.name == name]
    return found


def vertical_lines(fig: go.Figure) -> list[float]:
    return [shape.x0 for shape in fig.layout.shapes if shape.x0 == shape.x1]


def horizontal_lines(fig: go.Figure) -> list[float]:
    return [shape.y0 for shape in fig.layout.shapes if shape.y0 == shape.y1]


def plain(value) -> list:
    """A trace's nested tuples (or lists) as lists, to compare."""
    return json.loads(json.dumps(value))


def annotations(fig: go.Figure) -> list[str]:
    return [a.text for a in fig.layout.annotations]


# Rows for every builder, used by the checks that every figure shares.

SCORE_BUCKETS = [
    ScoreBucket(3.0, 3.5, "pending_review", 4),
    ScoreBucket(3.5, 4.0, "pending_review", 6),
    ScoreBucket(4.0, 4.5, "warning", 10),
    ScoreBucket(4.0, 4.5, "pending_review", 1),
    ScoreBucket(7.0, 7.5, "approved", 20),
    ScoreBucket(7.0, 7.5, "warning", 2),
]
THRESHOLD_POINTS = [
    ThresholdPoint(
        hours(0), "summary", "review", 4.0, "cycle", "Held: 12 verdicts, fewer than 50."
    ),
    ThresholdPoint(hours(12), "summary", "review", 4.1, "cycle", "Raised: the bound 0.31 > 0.25."),
    ThresholdPoint(hours(24), "summary", "approve", 7.5, "admin", "Too many complaints.", "alice"),
    ThresholdPoint(hours(36), "summary", "approve", 7.5, "pinned", "Pinned: held at 7.5."),
    ThresholdPoint(hours(6), "qa", "approve", 7.0, "cycle", "Held."),
]
RUBRIC_AGREEMENT = [
    RubricAgreementRow(
        "summary", "helpful", "Helpful", "numeric", "krippendorff_alpha_interval", 0.72, 40
    ),
    RubricAgreementRow("summary", "tone", "Tone", "categorical", "cohen_kappa", None, 6),
    RubricAgreementRow(
        "qa", "helpful", "Helpful", "numeric", "krippendorff_alpha_interval", -0.1, 25
    ),
]
RUBRIC_SCORES = [
    RubricScoreRow("summary", "helpful", "Helpful", "numeric", 1, 2),
    RubricScoreRow("summary", "helpful", "Helpful", "numeric", 5, 6),
    RubricScoreRow("qa", "helpful", "Helpful", "numeric", 5, 3),
    RubricScoreRow("summary", "cites", "Cites", "boolean", True, 3),
    RubricScoreRow("summary", "cites", "Cites", "boolean", False, 1),
]
BUILT = {
    "score_histogram": lambda: charts.score_histogram(
        SCORE_BUCKETS, review_threshold=4.0, approve_threshold=7.0
    ),
    "queue_size_chart": lambda: charts.queue_size_chart(
        [QueuePoint(hours(0), 3), QueuePoint(hours(1), 5)]
    ),
    "queue_age_chart": lambda: charts.queue_age_chart(
        [AgeBucket(0, 3600, 5), AgeBucket(3600, 14400, 2), AgeBucket(14400, None, 1)]
    ),
    "reviewer_decisions_chart": lambda: charts.reviewer_decisions_chart(
        [ReviewerDay(D1, "ann", 3), ReviewerDay(D1, "bob", 5), ReviewerDay(D2, "bob", 4)]
    ),
    "reviewer_time_chart": lambda: charts.reviewer_time_chart(
        [ReviewerTime("ann", 95, 40), ReviewerTime("bob", 400, 12)]
    ),
    "threshold_history_chart": lambda: charts.threshold_history_chart(THRESHOLD_POINTS),
    "score_heatmap": lambda: charts.score_heatmap(
        [DayScoreCount(D1, 0, 5, 1), DayScoreCount(D1, 5, 10, 3), DayScoreCount(D2, 5, 10, 2)]
    ),
    "approval_by_band_chart": lambda: charts.approval_by_band_chart(
        [BandDay(D1, "warning", 3, 4), BandDay(D2, "warning", 1, 4), BandDay(D1, "approved", 9, 10)]
    ),
    "model_score_chart": lambda: charts.model_score_chart(
        [ModelDayScore(D1, "small", 7.2, 40), ModelDayScore(D2, "small", 5.1, 38),
         ModelDayScore(D1, "large", 7.0, 90)]
    ),
    "psi_chart": lambda: charts.psi_chart(
        [PsiPoint(hours(0), "summary", "gpt-x", 0.05), PsiPoint(hours(5), "summary", "gpt-x", 0.3)],
        alert_level=0.25,
    ),
    "validator_importance_chart": lambda: charts.validator_importance_chart(
        [ValidatorImportance("length", 0.001, 0.3), ValidatorImportance("facts", 0.2, 1.4)]
    ),
    "validator_accuracy_chart": lambda: charts.validator_accuracy_chart(
        [ValidatorPoint(hours(0), "facts", 0.8), ValidatorPoint(hours(6), "facts", 0.85)]
    ),
    "validator_weight_chart": lambda: charts.validator_weight_chart(
        [ValidatorPoint(hours(0), "facts", 1.0), ValidatorPoint(hours(6), "facts", 1.1)]
    ),
    "kappa_matrix_chart": lambda: charts.kappa_matrix_chart(
        [PairKappa("ann", "bob", 0.6, 40), PairKappa("bob", "cy", None, 3)]
    ),
    "alpha_chart": lambda: charts.alpha_chart(
        [AlphaPoint(hours(0), 0.7, 100), AlphaPoint(hours(24), 0.82, 120)]
    ),
    "reliability_chart": lambda: charts.reliability_chart(
        [ReliabilityBucket(2, 4, 6, 20, 0.15, 0.5), ReliabilityBucket(6, 8, 45, 50, 0.8, 0.96)]
    ),
    "action_histogram": lambda: charts.action_histogram(
        [ActionBucket(2, 4, "reject", 5), ActionBucket(2, 4, "approve", 1),
         ActionBucket(6, 8, "approve", 9)]
    ),
    "auroc_chart": lambda: charts.auroc_chart(
        [AurocRow("summary", "small", 0.8, 0.7, 0.88, 200),
         AurocRow("qa", "large", 0.9, 0.85, 0.94, 300)]
    ),
    "rubric_agreement_chart": lambda: charts.rubric_agreement_chart(RUBRIC_AGREEMENT),
    "rubric_scores_chart": lambda: charts.rubric_scores_chart(RUBRIC_SCORES),
}  # fmt: skip
EMPTY = {
    "score_histogram": lambda rows: charts.score_histogram(
        rows, review_threshold=4.0, approve_threshold=7.0
    ),
    "psi_chart": lambda rows: charts.psi_chart(rows, alert_level=0.25),
}


# What every figure keeps to.


@pytest.mark.parametrize("name", BUILT)
def test_every_axis_has_a_title(name):
    fig = BUILT[name]()
    axes = [fig.layout[key] for key in fig.layout if key.startswith(("xaxis", "yaxis"))]
    assert len(axes) >= 2
    for axis in axes:
        # A subplot's shared axis shows no labels of its own and needs no title.
        if axis.showticklabels is not False:
            assert axis.title.text, f"{name}: {axis.plotly_name} has no title"


# What each builder's hover text calls its points.
POINTS_ARE = {
    "score_histogram": "outputs",
    "queue_size_chart": "open review items",
    "queue_age_chart": "pending items",
    "reviewer_decisions_chart": "decisions",
    "reviewer_time_chart": "per decision",
    "threshold_history_chart": "threshold",
    "score_heatmap": "outputs",
    "approval_by_band_chart": "approved unchanged",
    "model_score_chart": "mean score",
    "psi_chart": "PSI",
    "validator_importance_chart": "Validator",
    "validator_accuracy_chart": "accuracy",
    "validator_weight_chart": "weight",
    "kappa_matrix_chart": "kappa",
    "alpha_chart": "alpha",
    "reliability_chart": "approved unchanged",
    "action_histogram": "by reviewers",
    "auroc_chart": "AUROC",
    "rubric_agreement_chart": "pairs of reviews",
    "rubric_scores_chart": "of its reviews",
}


@pytest.mark.parametrize("name", BUILT)
def test_every_hovered_trace_says_what_its_points_are(name):
    hovered = [t for t in BUILT[name]().data if t.hoverinfo != "skip"]
    assert hovered
    for t in hovered:
        assert POINTS_ARE[name] in t.hovertemplate, f"{name}: {t.hovertemplate}"
        # The name box plotly adds would repeat the trace's name in its colour alone.
        assert t.hovertemplate.endswith("<extra></extra>")


@pytest.mark.parametrize("name", BUILT)
def test_every_colour_is_from_the_palette(name):
    palette = set(charts.SERIES_COLOURS) | {"white", "rgba(255,255,255,0.8)"}
    fig = BUILT[name]()
    for t in fig.data:
        for colour in (
            getattr(t, "marker", None) and t.marker.color,
            getattr(t, "line", None) and t.line.color,
        ):
            if isinstance(colour, str):
                assert colour in palette, f"{name}: {t.name} is {colour}"
    for shape in fig.layout.shapes:
        assert shape.line.color in palette


@pytest.mark.parametrize("name", BUILT)
def test_no_rows_give_no_figure(name):
    build = EMPTY.get(name, getattr(charts, name))
    assert build([]) is None


@pytest.mark.parametrize("name", BUILT)
def test_figure_data_is_plain_json(name):
    data = charts.figure_data(BUILT[name]())
    assert json.loads(json.dumps(data)) == data
    assert {"data", "layout"} <= set(data)


def test_figure_data_of_no_figure_is_none():
    assert charts.figure_data(None) is None


def test_names_from_people_are_escaped_and_kept_out_of_templates():
    fig = charts.reviewer_decisions_chart([ReviewerDay(D1, "<img src=x onerror=alert(1)>", 2)])
    assert fig.data[0].name == "&lt;img src=x onerror=alert(1)&gt;"
    assert "img" not in fig.data[0].hovertemplate


def test_rows_may_be_mappings_with_the_fields():
    as_dicts = [{"at": hours(0), "open_items": 3}, {"at": hours(1), "open_items": 5}]
    assert charts.queue_size_chart(as_dicts) == BUILT["queue_size_chart"]()


# 1. Scores by decision.


def test_score_histogram_stacks_decisions_on_shared_buckets():
    fig = BUILT["score_histogram"]()
    assert fig.layout.barmode == "stack"
    assert [t.name for t in fig.data] == ["Pending review", "Warning", "Approved"]
    for t in fig.data:
        assert t.x == (3.25, 3.75, 4.25, 7.25)
        assert t.width == (0.5, 0.5, 0.5, 0.5)
    assert trace(fig, "Pending review").y == (4, 6, 1, 0)
    assert trace(fig, "Warning").y == (0, 0, 10, 2)
    assert trace(fig, "Approved").y == (0, 0, 0, 20)
    assert plain(trace(fig, "Warning").customdata[2]) == ["4.00 to 4.50"]
    assert "outputs warning" in trace(fig, "Warning").hovertemplate


def test_score_histogram_draws_the_thresholds_where_they_are_with_labels():
    fig = BUILT["score_histogram"]()
    assert vertical_lines(fig) == [4.0, 7.0]
    assert annotations(fig) == ["Review threshold 4.00", "Approve threshold 7.00"]
    assert [a.x for a in fig.layout.annotations] == [4.0, 7.0]


def test_score_histogram_without_a_threshold_draws_none():
    fig = charts.score_histogram(SCORE_BUCKETS, review_threshold=None, approve_threshold=6.5)
    assert vertical_lines(fig) == [6.5]


def test_score_histogram_of_only_zero_counts_is_no_figure():
    rows = [ScoreBucket(0, 1, "approved", 0)]
    assert charts.score_histogram(rows, review_threshold=4, approve_threshold=7) is None


def test_score_histogram_refuses_an_unknown_decision():
    with pytest.raises(ValueError, match="decision 'maybe'"):
        charts.score_histogram(
            [ScoreBucket(0, 1, "maybe", 3)], review_threshold=4, approve_threshold=7
        )


# 2. The queue.


def test_queue_size_over_time():
    fig = charts.queue_size_chart([QueuePoint(hours(1), 5), QueuePoint(hours(0), 3)])
    (line,) = fig.data
    assert line.x == (hours(0), hours(1))
    assert line.y == (3, 5)
    assert "open review items" in line.hovertemplate


def test_queue_age_buckets_are_labelled_with_durations():
    fig = BUILT["queue_age_chart"]()
    (bars,) = fig.data
    assert bars.x == ("under 1 h", "1 h to 4 h", "4 h or more")
    assert bars.y == (5, 2, 1)
    assert "pending items" in bars.hovertemplate


# 3. Reviewers.


def test_decisions_per_reviewer_per_day_stack_the_busiest_first():
    fig = BUILT["reviewer_decisions_chart"]()
    assert fig.layout.barmode == "stack"
    assert [t.name for t in fig.data] == ["bob", "ann"]
    assert trace(fig, "bob").x == (D1, D2)
    assert trace(fig, "bob").y == (5, 4)
    assert trace(fig, "ann").y == (3, 0)
    # Told apart by pattern as well as colour.
    assert trace(fig, "bob").marker.pattern.shape != trace(fig, "ann").marker.pattern.shape
    assert "decisions" in trace(fig, "ann").hovertemplate


def test_median_decision_time_in_minutes_with_durations_written():
    fig = BUILT["reviewer_time_chart"]()
    (bars,) = fig.data
    assert bars.y == ("ann", "bob")
    assert bars.x == pytest.approx((95 / 60, 400 / 60))
    assert bars.text == ("1 min 35 s", "6 min 40 s")
    assert plain(bars.customdata[1]) == ["6 min 40 s", "12"]
    assert fig.layout.xaxis.title.text == "Median time from claim to decision (min)"


# 4. Thresholds.


def test_threshold_history_is_step_lines_per_task_type_and_threshold():
    fig = charts.threshold_history_chart(THRESHOLD_POINTS, until=hours(48))
    review = trace(fig, "summary: review threshold")
    assert review.line.shape == "hv"
    assert review.x == (hours(0), hours(12), hours(48))
    assert review.y == (4.0, 4.1, 4.1)
    approve = trace(fig, "summary: approve threshold")
    assert approve.y == (7.5, 7.5, 7.5)
    assert approve.line.dash != review.line.dash
    assert trace(fig, "qa: approve threshold").line.color != approve.line.color


def test_threshold_changes_are_marked_by_where_they_came_from_with_reason_and_actor():
    fig = BUILT["threshold_history_chart"]()
    cycle = trace(fig, "Set by a learning cycle")
    admin = trace(fig, "Edited by an admin")
    pinned = trace(fig, "Held: pinned by an admin")
    assert len({cycle.marker.symbol, admin.marker.symbol, pinned.marker.symbol}) == 3
    assert cycle.y == (4.0, 7.0, 4.1)
    assert admin.x == (hours(24),)
    assert plain(admin.customdata[0]) == [
        "summary",
        "approve",
        "7.50",
        "Too many complaints.",
        "Edited by an admin (alice)",
    ]
    assert cycle.customdata[2][3] == "Raised: the bound 0.31 &gt; 0.25."
    assert cycle.customdata[2][4] == "Set by a learning cycle"
    assert "%{customdata[3]}" in cycle.hovertemplate and "%{customdata[4]}" in cycle.hovertemplate


def test_long_reasons_are_wrapped_for_the_hover():
    point = ThresholdPoint(hours(0), "qa", "review", 4.0, "cycle", "word " * 40)
    (reason,) = {row[3] for row in charts.threshold_history_chart([point]).data[-1].customdata}
    assert reason.count("<br>") >= 2


# 5. Scores over time.


def test_score_heatmap_is_days_by_buckets_shaded_by_share_of_the_day():
    fig = BUILT["score_heatmap"]()
    (heat,) = fig.data
    assert heat.x == (D1, D2)
    assert heat.y == (2.5, 7.5)
    assert plain(heat.z) == [[0.25, 0.0], [0.75, 1.0]]
    assert plain(heat.customdata[1][0]) == ["5.00 to 10.00", "3", "75%"]
    assert heat.colorscale is not None and heat.colorbar.title.text


# 6. Human approval by score band.


def test_approval_rate_per_band_per_day():
    fig = BUILT["approval_by_band_chart"]()
    assert [t.name for t in fig.data] == ["warning", "approved"]
    warning = trace(fig, "warning")
    assert warning.x == (D1, D2)
    assert warning.y == (0.75, 0.25)
    assert plain(warning.customdata[0]) == ["75%", "3", "4"]
    assert trace(fig, "approved").marker.symbol != warning.marker.symbol
    assert fig.layout.yaxis.tickformat == ".0%"


def test_a_day_without_reviews_in_a_band_is_a_gap():
    fig = charts.approval_by_band_chart(
        [BandDay(D1, "warning", 1, 2), BandDay(D2, "warning", 0, 0)]
    )
    assert fig.data[0].y == (0.5, None)


def test_approval_by_band_with_no_reviews_is_no_figure():
    assert charts.approval_by_band_chart([BandDay(D1, "warning", 0, 0)]) is None


# 7. Drift.


def test_one_line_per_model_of_its_mean_score_by_day():
    fig = BUILT["model_score_chart"]()
    assert [t.name for t in fig.data] == ["large", "small"]
    large, small = fig.data
    assert small.y == (7.2, 5.1)
    assert plain(small.customdata) == [["7.20", "40"], ["5.10", "38"]]
    assert large.line.dash != small.line.dash  # told apart without colour
    assert tuple(fig.layout.yaxis.range) == (0, 10)
    assert charts.model_score_chart([]) is None


def test_psi_series_with_the_alert_level_as_a_labelled_line():
    fig = BUILT["psi_chart"]()
    (series,) = fig.data
    assert series.y == (0.05, 0.3)
    assert plain(series.customdata) == [["0.050"], ["0.30"]]
    assert horizontal_lines(fig) == [0.25]
    assert annotations(fig) == ["Alert above PSI 0.25"]
    assert "PSI" in series.hovertemplate


# 8. Validators.


def test_validator_importance_beside_current_weight_most_important_first():
    fig = BUILT["validator_importance_chart"]()
    importance, weight = trace(fig, "Importance"), trace(fig, "Current weight")
    assert importance.y == weight.y == ("facts", "length")
    assert importance.x == (0.2, 0.001)
    assert weight.x == (1.4, 0.3)
    assert weight.text == ("1.40", "0.30")
    assert importance.xaxis != weight.xaxis
    # Written to the places the largest needs: 0.001 beside 0.2 tells nothing.
    assert importance.text == ("0.20", "0.00")
    assert fig.layout.xaxis.title.text.startswith("Importance: how much worse")


def test_validator_accuracy_over_time():
    fig = BUILT["validator_accuracy_chart"]()
    (series,) = fig.data
    assert series.name == "facts"
    assert series.y == (0.8, 0.85)
    assert plain(series.customdata) == [["80%"], ["85%"]]
    assert "accuracy" in series.hovertemplate


def test_validator_weight_history_is_steps():
    fig = BUILT["validator_weight_chart"]()
    (series,) = fig.data
    assert series.line.shape == "hv"
    assert series.y == (1.0, 1.1)
    assert "weight" in series.hovertemplate


# 9. Agreement.


def test_kappa_matrix_is_symmetric_with_kappa_and_n_written_in_each_cell():
    fig = BUILT["kappa_matrix_chart"]()
    (heat,) = fig.data
    assert heat.x == heat.y == ("ann", "bob", "cy")
    assert plain(heat.z) == [[None, 0.6, None], [0.6, None, None], [None, None, None]]
    assert heat.text[0][1] == heat.text[1][0] == "κ 0.60<br>n 40"
    assert heat.text[1][2] == "κ –<br>n 3"
    assert heat.text[0][0] == ""
    assert heat.texttemplate == "%{text}"
    assert (heat.zmin, heat.zmax) == (-1, 1)
    assert "kappa" in heat.hovertemplate and "both judged" in heat.hovertemplate
    # 0.6 is the top of Landis and Koch's "moderate" (0.41-0.60).
    assert plain(heat.customdata)[0][1] == ["0.60", "40", "moderate"]


def test_alpha_over_time_with_krippendorffs_levels():
    fig = BUILT["alpha_chart"]()
    (series,) = fig.data
    assert series.y == (0.7, 0.82)
    assert plain(series.customdata[1]) == ["0.82", "120"]
    assert horizontal_lines(fig) == [0.8, 0.667]


# 10. Calibration and ranking.


def test_reliability_diagram_has_rates_intervals_counts_and_the_ideal():
    fig = BUILT["reliability_chart"]()
    ideal = trace(fig, "Ideal: approval share = score ÷ 10")
    assert (ideal.x, ideal.y) == ((0, 10), (0, 1))
    points = trace(fig, "Reviewed outputs")
    assert points.x == (3.0, 7.0)
    assert points.y == (0.3, 0.9)
    assert points.error_y.array == pytest.approx((0.2, 0.06))
    assert points.error_y.arrayminus == pytest.approx((0.15, 0.1))
    assert points.text == ("n 20", "n 50")
    assert plain(points.customdata[0]) == ["2.00 to 4.00", "30%", "6", "20", "15%", "50%"]


def test_reliability_diagram_leaves_out_buckets_nobody_reviewed():
    rows = [ReliabilityBucket(0, 2, 0, 0, 0, 1), ReliabilityBucket(2, 4, 1, 2, 0.1, 0.9)]
    assert trace(charts.reliability_chart(rows), "Reviewed outputs").x == (3.0,)


def test_score_histograms_by_human_decision_side_by_side():
    fig = BUILT["action_histogram"]()
    assert fig.layout.barmode == "group"
    assert [t.name for t in fig.data] == ["Rejected", "Modified", "Approved unchanged"]
    assert trace(fig, "Rejected").y == (5, 0)
    assert trace(fig, "Approved unchanged").y == (1, 9)
    assert trace(fig, "Rejected").x == (3.0, 7.0)


def test_auroc_per_task_type_and_model_with_intervals_and_chance():
    fig = BUILT["auroc_chart"]()
    assert [t.name for t in fig.data] == ["large", "small"]
    small = trace(fig, "small")
    assert small.x == ("qa", "summary")
    assert small.y == (None, 0.8)
    assert small.error_y.array[1] == pytest.approx(0.08)
    assert small.error_y.arrayminus[1] == pytest.approx(0.1)
    assert plain(small.customdata[1]) == ["0.80", "0.70", "0.88", "200"]
    assert horizontal_lines(fig) == [0.5]
    assert "AUROC" in small.hovertemplate


@pytest.mark.parametrize(
    ("kappa", "words"),
    # Landis and Koch (1977), Table: <0 poor, 0-0.20 slight, 0.21-0.40 fair, 0.41-0.60
    # moderate, 0.61-0.80 substantial, 0.81-1 almost perfect.
    [
        (-0.1, "poor"),
        (0.1, "slight"),
        (0.2, "slight"),
        (0.35, "fair"),
        (0.6, "moderate"),
        (0.63, "substantial"),
        (0.95, "almost perfect"),
        (1.0, "almost perfect"),
    ],
)
def test_a_kappa_in_landis_and_kochs_words(kappa, words):
    assert kappa_words(kappa) == words


# Rubrics.


def test_rubric_agreement_is_a_bar_per_task_type_and_dimension_with_too_few_pairs_said():
    fig = BUILT["rubric_agreement_chart"]()
    summary, qa = trace(fig, "summary"), trace(fig, "qa")
    assert list(summary.x) == ["Helpful (α)", "Tone (κ)"]
    assert list(summary.y) == [0.72, 0.0]
    assert list(summary.text) == ["0.72", "not enough pairs"]
    assert plain(summary.customdata) == [
        ["0.72", "tentative", "40"],
        ["–", "not enough pairs", "6"],
    ]
    # qa has no tone dimension: no bar there.
    assert plain(qa.y) == [-0.1, None]
    assert plain(qa.customdata)[0][1] == "not reliable"
    assert horizontal_lines(fig) == [0.8, 0.667]
    assert fig.layout.yaxis.range[0] == pytest.approx(-0.15)


def test_rubric_agreement_reads_a_kappa_in_landis_and_kochs_words():
    row = RubricAgreementRow("qa", "cites", "Cites", "boolean", "cohen_kappa", 0.5, 30)
    fig = charts.rubric_agreement_chart([row])
    assert plain(fig.data[0].customdata) == [["0.50", "moderate (Landis and Koch)", "30"]]


def test_rubric_agreement_with_no_value_at_all_is_still_drawn():
    row = RubricAgreementRow("qa", "cites", "Cites", "boolean", "cohen_kappa", None, 3)
    fig = charts.rubric_agreement_chart([row])
    assert list(fig.data[0].text) == ["not enough pairs"]
    assert fig.layout.yaxis.range[0] == pytest.approx(-0.05)


def test_rubric_agreement_refuses_an_unknown_statistic():
    row = RubricAgreementRow("qa", "cites", "Cites", "boolean", "fleiss_kappa", 0.4, 30)
    with pytest.raises(ValueError, match="fleiss_kappa"):
        charts.rubric_agreement_chart([row])


def test_rubric_scores_are_a_panel_per_dimension_in_shares_of_each_task_type():
    fig = BUILT["rubric_scores_chart"]()
    assert annotations(fig) == ["Helpful", "Cites"]
    bars = [(t.name, t.xaxis, list(t.x), list(t.y)) for t in fig.data]
    assert bars == [
        ("qa", "x", ["1", "5"], [0.0, 1.0]),
        ("summary", "x", ["1", "5"], [0.25, 0.75]),
        ("summary", "x2", ["yes", "no"], [0.75, 0.25]),
    ]
    # One legend entry per task type.
    assert [t.showlegend for t in fig.data] == [True, True, False]
    assert plain(fig.data[1].customdata)[1] == ["Helpful", "75%", "6", "8"]


def test_rubric_scores_keep_names_out_of_the_hover_template():
    row = RubricScoreRow("<b>t</b>", "tone", "<i>Tone</i>", "categorical", "<s>x</s>", 2)
    fig = charts.rubric_scores_chart([row])
    (bar,) = fig.data
    assert bar.name == "&lt;b&gt;t&lt;/b&gt;"
    assert list(bar.x) == ["&lt;s&gt;x&lt;/s&gt;"]
    assert plain(bar.customdata)[0][0] == "&lt;i&gt;Tone&lt;/i&gt;"
    assert "Tone" not in bar.hovertemplate and "<s>" not in bar.hovertemplate


@pytest.mark.parametrize(
    ("alpha", "words"),
    [(0.95, "reliable"), (0.8, "reliable"), (0.79, "tentative"), (0.667, "tentative"),
     (0.5, "not reliable"), (-0.2, "not reliable")],
)  # fmt: skip
def test_an_alpha_in_krippendorffs_words(alpha, words):
    assert alpha_words(alpha) == words
