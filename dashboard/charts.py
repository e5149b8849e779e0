"""The dashboard's charts: pure functions from plain rows to plotly figures.

Each builder takes rows (the dataclasses below, or mappings with their fields, as selectors
return them) and gives a ``plotly.graph_objects.Figure``, or None when there is nothing to
draw, so that the page says there is no data in this range. No builder reads the database.
Views hand ``figure_data(figure)`` to templates/dashboard/_chart.html.

What every figure keeps to:

* axis titles with their units, and a hover text that says what a point is, with numbers
  formatted by gating.formatting (plotly.js cannot write "3 h 12 min");
* the Okabe-Ito palette (Okabe and Ito, "Color Universal Design", 2008), readable with
  every common colour-vision deficiency, and never colour alone: series of bars differ by
  fill pattern too, series of lines by marker symbol and dash, threshold and reference lines
  carry a text label, and heatmaps use scales whose lightness alone orders the values;
* names that come from people or gateways (reviewers, task types, models, validators,
  reasons) are HTML-escaped, because plotly.js reads tags in its texts; and they reach
  hover texts through ``customdata`` or the trace name, never through the template itself.
"""

import html
import json
import textwrap
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any, TypeVar

import plotly.graph_objects as go
import plotly.io as pio
from plotly.subplots import make_subplots

from dashboard.meanings import ALPHA_RELIABLE, ALPHA_TENTATIVE, alpha_words, kappa_words
from gating.formatting import count, duration, duration_unit, number, numbers_alike, percent
from learning.statistics.agreement import Statistic

# Okabe-Ito, by name.
BLACK = "#000000"
ORANGE = "#E69F00"
SKY_BLUE = "#56B4E9"
BLUISH_GREEN = "#009E73"
YELLOW = "#F0E442"
BLUE = "#0072B2"
VERMILLION = "#D55E00"
REDDISH_PURPLE = "#CC79A7"
# The order series take them in; yellow last, as it is faint on white.
SERIES_COLOURS = (BLUE, ORANGE, BLUISH_GREEN, VERMILLION, REDDISH_PURPLE, SKY_BLUE, BLACK, YELLOW)
SYMBOLS = ("circle", "square", "diamond", "triangle-up", "x", "cross", "triangle-down", "star")
DASHES = ("solid", "dash", "dot", "dashdot", "longdash", "longdashdot")
PATTERNS = ("", "/", "x", ".", "\\", "+", "-", "|")

# The gate's decisions, from the lowest scores to the highest: label, colour, fill pattern.
DECISIONS = {
    "pending_review": ("Pending review", VERMILLION, "x"),
    "warning": ("Warning", ORANGE, "/"),
    "approved": ("Approved", BLUISH_GREEN, ""),
}
# A reviewer's actions, the same way.
ACTIONS = {
    "reject": ("Rejected", VERMILLION, "x"),
    "modify": ("Modified", ORANGE, "/"),
    "approve": ("Approved unchanged", BLUISH_GREEN, ""),
}
THRESHOLDS = {"review": ("Review threshold", "dash"), "approve": ("Approve threshold", "solid")}
# Where a threshold point came from: legend name and marker symbol.
THRESHOLD_SOURCES = {
    "cycle": ("Set by a learning cycle", "circle"),
    "pinned": ("Held: pinned by an admin", "square"),
    "admin": ("Edited by an admin", "star"),
}
# Krippendorff (Content Analysis, 2004): alpha from 0.8 is reliable, from 0.667
# good enough for tentative conclusions.
ALPHA_LEVELS = (
    (ALPHA_RELIABLE, f"Reliable ({ALPHA_RELIABLE:g})"),
    (ALPHA_TENTATIVE, f"Tentative ({ALPHA_TENTATIVE:g})"),
)

# A thin white edge between stacked or neighbouring bars.
_BAR_EDGE = {"color": "white", "width": 0.5}
_TIME = "%{x|%Y-%m-%d %H:%M} UTC"
_DAY = "%{x|%Y-%m-%d}"
_HOVER_WIDTH = 60

_AXIS = {
    "gridcolor": "#e5e5e5",
    "linecolor": "#555",
    "ticks": "outside",
    "zeroline": False,
    "automargin": True,
}
_TEMPLATE = go.layout.Template(
    layout={
        "font": {"family": "system-ui, -apple-system, 'Segoe UI', sans-serif", "size": 13},
        "colorway": SERIES_COLOURS,
        "paper_bgcolor": "white",
        "plot_bgcolor": "white",
        "margin": {"l": 72, "r": 24, "t": 48, "b": 64},
        "legend": {"orientation": "h", "yanchor": "bottom", "y": 1.02, "x": 0},
        "hoverlabel": {"align": "left"},
        "xaxis": _AXIS,
        "yaxis": _AXIS,
    }
)

Row = TypeVar("Row")


# Input rows.


@dataclass(frozen=True, slots=True)
class ScoreBucket:
    """Outputs the gate scored in [lower, upper) and gave ``decision``."""

    lower: float
    upper: float
    decision: str
    count: int


@dataclass(frozen=True, slots=True)
class QueuePoint:
    """How many review items were open at ``at``."""

    at: datetime
    open_items: int


@dataclass(frozen=True, slots=True)
class AgeBucket:
    """Pending items that have waited [lower_seconds, upper_seconds); no upper: or longer."""

    lower_seconds: float
    upper_seconds: float | None
    count: int


@dataclass(frozen=True, slots=True)
class ReviewerDay:
    """The decisions one reviewer made on one day (UTC)."""

    day: date
    reviewer: str
    decisions: int


@dataclass(frozen=True, slots=True)
class ReviewerTime:
    """A reviewer's median time from claim to decision, over ``decisions`` decisions."""

    reviewer: str
    median_seconds: float
    decisions: int


@dataclass(frozen=True, slots=True)
class ThresholdPoint:
    """A task type's threshold (``which``: review or approve) from ``at`` on, and why.

    ``source``: "cycle" (a learning cycle set it), "pinned" (a cycle held it because an admin
    pinned it) or "admin" (an admin edited it). ``actor``: who; empty for a cycle.
    """

    at: datetime
    task_type: str
    which: str
    value: float
    source: str
    reason: str
    actor: str = ""
    before: float | None = None  # the value it replaced; None where not recorded


@dataclass(frozen=True, slots=True)
class DayScoreCount:
    """Outputs created on ``day`` (UTC) that scored in [lower, upper)."""

    day: date
    lower: float
    upper: float
    count: int


@dataclass(frozen=True, slots=True)
class BandDay:
    """Of the outputs in a score band reviewed on ``day``, how many reviewers approved
    unchanged."""

    day: date
    band: str
    approved: int
    reviewed: int


@dataclass(frozen=True, slots=True)
class ModelDayScore:
    """A model's mean score over the ``outputs`` it produced on ``day`` (UTC)."""

    day: date
    model: str
    mean_score: float
    outputs: int


@dataclass(frozen=True, slots=True)
class PsiPoint:
    """A (task type, model)'s population stability index at ``at`` (its recent scores
    against a baseline)."""

    at: datetime
    task_type: str
    model: str
    psi: float


@dataclass(frozen=True, slots=True)
class ValidatorImportance:
    """A validator's latest importance (Shapley value, in nats of log loss) and its weight."""

    validator: str
    importance: float
    weight: float


@dataclass(frozen=True, slots=True)
class ValidatorPoint:
    """One validator's accuracy (a share) or weight, as a cycle measured or set it at ``at``."""

    at: datetime
    validator: str
    value: float


@dataclass(frozen=True, slots=True)
class PairKappa:
    """Two reviewers' Cohen's kappa over the ``n`` outputs both judged (None: undefined)."""

    first: str
    second: str
    kappa: float | None
    n: int


@dataclass(frozen=True, slots=True)
class AlphaPoint:
    """Krippendorff's alpha of all reviewers at ``at``, over ``n`` outputs."""

    at: datetime
    alpha: float
    n: int


@dataclass(frozen=True, slots=True)
class ReliabilityBucket:
    """Of the outputs scored in [lower, upper) that reviewers judged, how many they approved
    unchanged, with an interval [low, high] for that share (computed by the caller)."""

    lower: float
    upper: float
    approved: int
    reviewed: int
    low: float
    high: float


@dataclass(frozen=True, slots=True)
class ActionBucket:
    """Reviewed outputs scored in [lower, upper) on which reviewers took ``action``
    (approve, modify or reject)."""

    lower: float
    upper: float
    action: str
    count: int


@dataclass(frozen=True, slots=True)
class AurocRow:
    """How well the score ranks approved above not approved outputs, for one task type and
    model, with an interval [low, high], over ``n`` reviewed outputs."""

    task_type: str
    model: str
    auroc: float
    low: float
    high: float
    n: int


@dataclass(frozen=True)
class ScorerAurocRow:
    """How well one scorer's score ranks good above bad outputs of one task type, against
    the reviewers or the truth, with an interval [low, high], over ``n`` reviewed outputs;
    and the share of outputs it tied at 10 (None when unknown), which the chart leaves to
    the table."""

    task_type: str
    scorer: str
    against: str
    auroc: float
    low: float
    high: float
    n: int
    tied_at_10: float | None = None


@dataclass(frozen=True, slots=True)
class RubricAgreementRow:
    """Two independent reviewers' agreement on one dimension of a task type's rubric:
    ``statistic`` cohen_kappa or krippendorff_alpha_interval, ``value`` None below the
    minimum of pairs, over ``n`` pairs."""

    task_type: str
    dimension: str
    label: str
    kind: str
    statistic: str
    value: float | None
    n: int


@dataclass(frozen=True, slots=True)
class RubricScoreRow:
    """How many reviews of a task type gave ``value`` on one dimension of its rubric."""

    task_type: str
    dimension: str
    label: str
    kind: str
    value: Any
    reviews: int


# For templates.


def figure_data(figure: go.Figure | None) -> dict | None:
    """A figure as plain JSON data, for json_script in templates/dashboard/_chart.html."""
    if figure is None:
        return None
    return json.loads(pio.to_json(figure, validate=False))


# 1. Scores by decision.


def score_histogram(
    rows: Iterable[ScoreBucket | Mapping],
    *,
    review_threshold: float | None,
    approve_threshold: float | None,
) -> go.Figure | None:
    """Outputs per score bucket, stacked by the gate's decision, with the thresholds in force
    drawn as labelled vertical lines (None: not drawn, e.g. when the rows mix task types)."""
    buckets = _rows(ScoreBucket, rows)
    if not any(bucket.count for bucket in buckets):
        return None
    _check_names(buckets, "decision", DECISIONS)
    edges = sorted({_edges(bucket) for bucket in buckets})
    fig = _figure(x_title="Score (0 to 10)", y_title="Outputs (count)", barmode="stack")
    for decision, (label, colour, pattern) in DECISIONS.items():
        counts = _sum_by([b for b in buckets if b.decision == decision], _edges)
        fig.add_bar(
            name=label,
            x=[(lower + upper) / 2 for lower, upper in edges],
            y=[counts.get(edge, 0) for edge in edges],
            width=[upper - lower for lower, upper in edges],
            marker={"color": colour, "pattern": {"shape": pattern}, "line": _BAR_EDGE},
            customdata=[[_score_range(*edge)] for edge in edges],
            hovertemplate=f"Scores %{{customdata[0]}}: %{{y:,}} outputs {label.lower()}"
            "<extra></extra>",
        )
    fig.update_xaxes(range=[edges[0][0], edges[-1][1]])
    _threshold_lines(fig, review_threshold, approve_threshold)
    return fig


# 2. The queue.


def queue_size_chart(rows: Iterable[QueuePoint | Mapping]) -> go.Figure | None:
    """Open review items over time."""
    points = sorted(_rows(QueuePoint, rows), key=lambda p: p.at)
    if not points:
        return None
    fig = _figure(x_title="Time (UTC)", y_title="Open review items (count)", showlegend=False)
    fig.add_scatter(
        name="Open review items",
        x=[p.at for p in points],
        y=[p.open_items for p in points],
        mode="lines+markers",
        line={"color": BLUE},
        marker={"symbol": "circle", "size": 5},
        hovertemplate=f"{_TIME}: %{{y:,}} open review items<extra></extra>",
    )
    fig.update_yaxes(rangemode="tozero")
    return fig


def queue_age_chart(rows: Iterable[AgeBucket | Mapping]) -> go.Figure | None:
    """Pending items by how long they have waited, in buckets labelled with durations."""
    buckets = sorted(_rows(AgeBucket, rows), key=lambda b: b.lower_seconds)
    if not any(bucket.count for bucket in buckets):
        return None
    fig = _figure(x_title="Time waiting in the queue", y_title="Pending items (count)")
    fig.add_bar(
        name="Pending items",
        x=[_age_range(b.lower_seconds, b.upper_seconds) for b in buckets],
        y=[b.count for b in buckets],
        marker={"color": BLUE},
        text=[count(b.count) for b in buckets],
        textposition="outside",
        cliponaxis=False,
        hovertemplate="Waiting %{x}: %{y:,} pending items<extra></extra>",
    )
    fig.update_xaxes(type="category")
    fig.update_yaxes(range=_with_room([b.count for b in buckets]))
    return fig


# 3. Reviewers.


def reviewer_decisions_chart(rows: Iterable[ReviewerDay | Mapping]) -> go.Figure | None:
    """Decisions per day, stacked by reviewer, the busiest reviewer at the bottom."""
    days = _rows(ReviewerDay, rows)
    if not any(d.decisions for d in days):
        return None
    dates = sorted({d.day for d in days})
    totals = _sum_by(days, lambda d: d.reviewer, value=_decisions)
    reviewers = sorted(totals, key=lambda name: (-totals[name], name))
    fig = _figure(x_title="Day (UTC)", y_title="Decisions (count)", barmode="stack")
    for i, reviewer in enumerate(reviewers):
        made = _sum_by([d for d in days if d.reviewer == reviewer], _day, value=_decisions)
        fig.add_bar(
            name=_escape(reviewer),
            x=dates,
            y=[made.get(day, 0) for day in dates],
            marker={"color": _colour(i), "pattern": {"shape": _pattern(i)}, "line": _BAR_EDGE},
            hovertemplate=f"{_DAY}: %{{fullData.name}} made %{{y:,}} decisions<extra></extra>",
        )
    fig.update_xaxes(type="date", tickformat="%Y-%m-%d")
    return fig


def reviewer_time_chart(rows: Iterable[ReviewerTime | Mapping]) -> go.Figure | None:
    """Each reviewer's median time from claim to decision, the quickest at the top."""
    times = sorted(_rows(ReviewerTime, rows), key=lambda t: (t.median_seconds, t.reviewer))
    if not times:
        return None
    size, unit = duration_unit(max(t.median_seconds for t in times))
    fig = _figure(
        x_title=f"Median time from claim to decision ({unit})", y_title="Reviewer", showlegend=False
    )
    fig.add_bar(
        name="Median decision time",
        orientation="h",
        x=[t.median_seconds / size for t in times],
        y=[_escape(t.reviewer) for t in times],
        marker={"color": BLUE},
        text=[duration(t.median_seconds) for t in times],
        textposition="outside",
        cliponaxis=False,
        customdata=[[duration(t.median_seconds), count(t.decisions)] for t in times],
        hovertemplate="%{y}: a median of %{customdata[0]} per decision, "
        "over %{customdata[1]} decisions<extra></extra>",
    )
    fig.update_xaxes(range=_with_room([t.median_seconds / size for t in times]))
    fig.update_yaxes(type="category", autorange="reversed")
    return fig


# 4. Thresholds.


def threshold_history_chart(
    rows: Iterable[ThresholdPoint | Mapping], *, until: datetime | None = None
) -> go.Figure | None:
    """Each task type's review and approve thresholds as step lines (one colour per task
    type, dashed for review), held until ``until`` if given, with a marker at each change
    whose shape says where it came from and whose hover gives its reason and actor."""
    points = sorted(_rows(ThresholdPoint, rows), key=lambda p: p.at)
    if not points:
        return None
    _check_names(points, "which", THRESHOLDS)
    _check_names(points, "source", THRESHOLD_SOURCES)
    task_types = sorted({p.task_type for p in points})
    colour_of = {name: _colour(i) for i, name in enumerate(task_types)}
    fig = _figure(x_title="Time (UTC)", y_title="Threshold (score, 0 to 10)")
    for task_type in task_types:
        for which, (label, dash) in THRESHOLDS.items():
            series = [p for p in points if p.task_type == task_type and p.which == which]
            if not series:
                continue
            x, y = [p.at for p in series], [p.value for p in series]
            if until is not None and until > x[-1]:
                x, y = [*x, until], [*y, y[-1]]
            fig.add_scatter(
                name=f"{_escape(task_type)}: {label.lower()}",
                x=x,
                y=y,
                mode="lines",
                line={"shape": "hv", "color": colour_of[task_type], "dash": dash, "width": 2},
                hoverinfo="skip",
            )
    for source, (label, symbol) in THRESHOLD_SOURCES.items():
        marked = [p for p in points if p.source == source]
        if not marked:
            continue
        fig.add_scatter(
            name=label,
            x=[p.at for p in marked],
            y=[p.value for p in marked],
            mode="markers",
            # White with a black edge: the line says the task type, the shape the source.
            marker={
                "symbol": symbol,
                "size": 11,
                "color": "white",
                "line": {"color": BLACK, "width": 1.5},
            },
            customdata=[
                [
                    _escape(p.task_type),
                    p.which,
                    number(p.value),
                    _wrap(p.reason),
                    f"{label} ({_escape(p.actor)})" if p.actor else label,
                ]
                for p in marked
            ],
            hovertemplate="%{customdata[0]}, %{customdata[1]} threshold: %{customdata[2]}<br>"
            f"{_TIME}: %{{customdata[4]}}<br>"
            "%{customdata[3]}<extra></extra>",
        )
    fig.update_yaxes(range=[0, 10])
    return fig


# 5. Scores over time.


def score_heatmap(rows: Iterable[DayScoreCount | Mapping]) -> go.Figure | None:
    """Each day's scores as a column of buckets, shaded by the bucket's share of that day's
    outputs, so that the distribution's shape compares across busy and quiet days."""
    cells = _rows(DayScoreCount, rows)
    if not any(cell.count for cell in cells):
        return None
    days = sorted({c.day for c in cells})
    edges = sorted({_edges(c) for c in cells})
    counts = _sum_by(cells, lambda c: (c.day, c.lower, c.upper))
    per_day = _sum_by(cells, _day)
    z, customdata = [], []
    for lower, upper in edges:
        shares, details = [], []
        for day in days:
            n = counts.get((day, lower, upper), 0)
            share = n / per_day[day] if per_day[day] else None
            shares.append(share)
            details.append(
                [_score_range(lower, upper), count(n), "–" if share is None else percent(share)]
            )
        z.append(shares)
        customdata.append(details)
    fig = _figure(x_title="Day (UTC)", y_title="Score (0 to 10)")
    fig.add_heatmap(
        name="Share of the day's outputs",
        x=days,
        y=[(lower + upper) / 2 for lower, upper in edges],
        z=z,
        zmin=0,
        # Cividis: blue to yellow, its lightness rising with the value, for every colour vision.
        colorscale="Cividis",
        colorbar={"title": {"text": "Share of<br>the day's<br>outputs"}, "tickformat": ".0%"},
        xgap=1,
        ygap=1,
        customdata=customdata,
        hovertemplate=f"{_DAY}, scores %{{customdata[0]}}: %{{customdata[1]}} outputs, "
        "%{customdata[2]} of the day's<extra></extra>",
    )
    fig.update_xaxes(type="date", tickformat="%Y-%m-%d", showgrid=False)
    fig.update_yaxes(showgrid=False)
    return fig


# 6. Human approval by score band.


def approval_by_band_chart(rows: Iterable[BandDay | Mapping]) -> go.Figure | None:
    """Per score band, the share of its reviewed outputs that reviewers approved unchanged,
    day by day (a day with no reviews in a band is a gap)."""
    days = _rows(BandDay, rows)
    if not any(d.reviewed for d in days):
        return None
    bands = list(dict.fromkeys(d.band for d in days))
    fig = _figure(x_title="Day (UTC)", y_title="Approved unchanged by reviewers (%)")
    for i, band in enumerate(bands):
        series = sorted((d for d in days if d.band == band), key=lambda d: d.day)
        fig.add_scatter(
            name=_escape(band),
            x=[d.day for d in series],
            y=[d.approved / d.reviewed if d.reviewed else None for d in series],
            mode="lines+markers",
            **_line_style(i),
            customdata=[
                [
                    percent(d.approved / d.reviewed) if d.reviewed else "–",
                    count(d.approved),
                    count(d.reviewed),
                ]
                for d in series
            ],
            hovertemplate=f"{_DAY}, score band %{{fullData.name}}: %{{customdata[0]}} approved "
            "unchanged (%{customdata[1]} of %{customdata[2]} reviews)<extra></extra>",
        )
    fig.update_xaxes(type="date", tickformat="%Y-%m-%d")
    fig.update_yaxes(range=[0, 1.05], tickformat=".0%")
    return fig


# 7. Drift.


def model_score_chart(rows: Iterable[ModelDayScore | Mapping]) -> go.Figure | None:
    """Each model's mean score per day: a model that drifts parts from the others here,
    where the task type's histogram and PSI mix it with every other model."""
    points = sorted(_rows(ModelDayScore, rows), key=lambda p: p.day)
    if not points:
        return None
    fig = _figure(x_title="Day (UTC)", y_title="Mean score (0 to 10)")
    _line_per(
        fig,
        points,
        group=lambda p: p.model,
        x=lambda p: p.day,
        y=lambda p: p.mean_score,
        customdata=lambda p: [number(p.mean_score), count(p.outputs)],
        hovertemplate=(
            "%{fullData.name}, %{x|%Y-%m-%d}: mean score %{customdata[0]} "
            "over %{customdata[1]} outputs<extra></extra>"
        ),
    )
    fig.update_yaxes(range=[0, 10])
    return fig


def psi_chart(rows: Iterable[PsiPoint | Mapping], *, alert_level: float) -> go.Figure | None:
    """Each (task type, model)'s PSI over time, a line named "task type · model", with the
    level above which the score-shift alert fires as a labelled horizontal line."""
    points = sorted(_rows(PsiPoint, rows), key=lambda p: p.at)
    if not points:
        return None
    fig = _figure(x_title="Time (UTC)", y_title="PSI (unitless; higher is a larger shift)")
    _line_per(
        fig,
        points,
        group=lambda p: f"{p.task_type} · {p.model}",
        x=lambda p: p.at,
        y=lambda p: p.psi,
        customdata=lambda p: [number(p.psi)],
        hovertemplate=f"%{{fullData.name}}, {_TIME}: PSI %{{customdata[0]}}<extra></extra>",
    )
    _reference_line(fig, alert_level, f"Alert above PSI {number(alert_level)}")
    top = max(max(p.psi for p in points), alert_level)
    fig.update_yaxes(range=[0, top * 1.15])
    return fig


# 8. Validators.


def validator_importance_chart(
    rows: Iterable[ValidatorImportance | Mapping],
) -> go.Figure | None:
    """Each validator's importance beside its current weight, the most important on top."""
    validators = sorted(
        _rows(ValidatorImportance, rows), key=lambda v: (-v.importance, v.validator)
    )
    if not validators:
        return None
    names = [_escape(v.validator) for v in validators]
    importances = numbers_alike([v.importance for v in validators])
    fig = make_subplots(
        rows=1,
        cols=2,
        shared_yaxes=True,
        horizontal_spacing=0.06,
        subplot_titles=("Importance", "Current weight"),
    )
    fig.update_layout(template=_TEMPLATE, showlegend=False)
    fig.add_bar(
        name="Importance",
        orientation="h",
        x=[v.importance for v in validators],
        y=names,
        marker={"color": BLUE},
        text=importances,
        textposition="outside",
        cliponaxis=False,
        customdata=[[shown] for shown in importances],
        hovertemplate="Validator %{y}: importance %{customdata[0]} (drop in log loss)"
        "<extra></extra>",
        row=1,
        col=1,
    )
    fig.add_bar(
        name="Current weight",
        orientation="h",
        x=[v.weight for v in validators],
        y=names,
        marker={"color": ORANGE, "pattern": {"shape": "/"}},
        text=[number(v.weight) for v in validators],
        textposition="outside",
        cliponaxis=False,
        customdata=[[number(v.weight)] for v in validators],
        hovertemplate="Validator %{y}: current weight %{customdata[0]}<extra></extra>",
        row=1,
        col=2,
    )
    fig.update_xaxes(
        title_text="Importance: how much worse the score predicts reviewers without it",
        range=_with_room([v.importance for v in validators]),
        row=1,
        col=1,
    )
    fig.update_xaxes(
        title_text="Weight (only proportions count)",
        range=_with_room([v.weight for v in validators]),
        row=1,
        col=2,
    )
    fig.update_yaxes(title_text="Validator", type="category", autorange="reversed", row=1, col=1)
    return fig


def validator_accuracy_chart(rows: Iterable[ValidatorPoint | Mapping]) -> go.Figure | None:
    """Each validator's accuracy (the share of verdicts its pass or fail matched) over time."""
    fig = _validator_series(
        rows,
        y_title="Accuracy (% of verdicts matched)",
        hover="accuracy %{customdata[0]}",
        show=percent,
        shape="linear",
    )
    if fig is not None:
        fig.update_yaxes(range=[0, 1.05], tickformat=".0%")
    return fig


def validator_weight_chart(rows: Iterable[ValidatorPoint | Mapping]) -> go.Figure | None:
    """Each validator's weight over time, as steps: a weight holds until a cycle changes it."""
    fig = _validator_series(
        rows,
        y_title="Weight (only proportions count)",
        hover="weight %{customdata[0]}",
        show=number,
        shape="hv",
    )
    if fig is not None:
        fig.update_yaxes(rangemode="tozero")
    return fig


def _validator_series(
    rows: Iterable[ValidatorPoint | Mapping],
    *,
    y_title: str,
    hover: str,
    show: Callable[[float], str],
    shape: str,
) -> go.Figure | None:
    points = sorted(_rows(ValidatorPoint, rows), key=lambda p: p.at)
    if not points:
        return None
    fig = _figure(x_title="Time (UTC)", y_title=y_title)
    _line_per(
        fig,
        points,
        group=lambda p: p.validator,
        x=lambda p: p.at,
        y=lambda p: p.value,
        customdata=lambda p: [show(p.value)],
        hovertemplate=f"%{{fullData.name}}, {_TIME}: {hover}<extra></extra>",
        shape=shape,
    )
    return fig


# 9. Agreement.


def kappa_matrix_chart(rows: Iterable[PairKappa | Mapping]) -> go.Figure | None:
    """Cohen's kappa of every pair of reviewers, as a symmetric matrix whose cells also
    write the kappa and n; a pair with no kappa is blank."""
    pairs = _rows(PairKappa, rows)
    if not pairs:
        return None
    reviewers = sorted({p.first for p in pairs} | {p.second for p in pairs})
    at = {name: i for i, name in enumerate(reviewers)}
    size = len(reviewers)
    z: list[list[float | None]] = [[None] * size for _ in range(size)]
    text = [[""] * size for _ in range(size)]
    customdata: list[list[Any]] = [[["–", "0", "none"]] * size for _ in range(size)]
    for pair in pairs:
        shown = "–" if pair.kappa is None else number(pair.kappa)
        band = "none" if pair.kappa is None else kappa_words(pair.kappa)
        for i, j in ((at[pair.first], at[pair.second]), (at[pair.second], at[pair.first])):
            z[i][j] = pair.kappa
            text[i][j] = f"κ {shown}<br>n {count(pair.n)}"
            customdata[i][j] = [shown, count(pair.n), band]
    names = [_escape(name) for name in reviewers]
    fig = _figure(x_title="Reviewer", y_title="Reviewer")
    fig.add_heatmap(
        name="Cohen's kappa",
        x=names,
        y=names,
        z=z,
        zmin=-1,
        zmax=1,
        zmid=0,
        # Purple to orange through white (ColorBrewer PuOr): safe for colour-blind readers,
        # and each cell writes its value as well.
        colorscale="PuOr",
        colorbar={"title": {"text": "Cohen's<br>kappa"}},
        text=text,
        texttemplate="%{text}",
        xgap=2,
        ygap=2,
        customdata=customdata,
        hoverongaps=False,
        hovertemplate="%{y} and %{x}: kappa %{customdata[0]} (agreement: %{customdata[2]}) "
        "over %{customdata[1]} outputs both judged<extra></extra>",
    )
    fig.update_xaxes(type="category", showgrid=False)
    fig.update_yaxes(type="category", showgrid=False, autorange="reversed")
    return fig


def alpha_chart(rows: Iterable[AlphaPoint | Mapping]) -> go.Figure | None:
    """Krippendorff's alpha of all reviewers over time, with Krippendorff's levels for
    reliable and tentative conclusions as labelled lines."""
    points = sorted(_rows(AlphaPoint, rows), key=lambda p: p.at)
    if not points:
        return None
    fig = _figure(
        x_title="Time (UTC)", y_title="Krippendorff's alpha (1 is full agreement)", showlegend=False
    )
    fig.add_scatter(
        name="Krippendorff's alpha",
        x=[p.at for p in points],
        y=[p.alpha for p in points],
        mode="lines+markers",
        **_line_style(0),
        customdata=[[number(p.alpha), count(p.n)] for p in points],
        hovertemplate=f"{_TIME}: alpha %{{customdata[0]}} over %{{customdata[1]}} outputs"
        "<extra></extra>",
    )
    for level, label in ALPHA_LEVELS:
        _reference_line(fig, level, label)
    fig.update_yaxes(range=[min(0.0, *(p.alpha for p in points)) - 0.05, 1.05])
    return fig


# Each statistic's symbol, as a rubric dimension's axis label and hover text write it.
STATISTIC_SYMBOLS = {Statistic.COHEN_KAPPA: "κ", Statistic.KRIPPENDORFF_ALPHA_INTERVAL: "α"}


def _agreement_words(row: RubricAgreementRow) -> str:
    if row.value is None:
        return "not enough pairs"
    if row.statistic == Statistic.COHEN_KAPPA:
        return f"{kappa_words(row.value)} (Landis and Koch)"
    return alpha_words(row.value)


def rubric_agreement_chart(rows: Iterable[RubricAgreementRow | Mapping]) -> go.Figure | None:
    """Per rubric dimension, two reviewers' agreement, a bar per task type: Cohen's kappa for
    a choice or a yes/no, interval Krippendorff's alpha for a number. A dimension with too
    few pairs has a bar of no height that says so."""
    results = _rows(RubricAgreementRow, rows)
    if not results:
        return None
    _check_names(results, "statistic", STATISTIC_SYMBOLS)

    def axis_label(row: RubricAgreementRow) -> str:
        return f"{_escape(row.label)} ({STATISTIC_SYMBOLS[row.statistic]})"

    labels = list(dict.fromkeys(axis_label(r) for r in results))
    fig = _figure(
        x_title="Rubric dimension (κ: Cohen's kappa, α: Krippendorff's alpha)",
        y_title="Agreement (1 is full, 0 is chance)",
        barmode="group",
    )
    for i, task_type in enumerate(sorted({r.task_type for r in results})):
        of_task_type = {axis_label(r): r for r in results if r.task_type == task_type}
        series = [of_task_type.get(label) for label in labels]
        fig.add_bar(
            name=_escape(task_type),
            x=labels,
            # Too few pairs stands at 0 with its words above it, so that it is not missed.
            y=[None if r is None else (r.value if r.value is not None else 0.0) for r in series],
            marker={"color": _colour(i), "pattern": {"shape": _pattern(i)}, "line": _BAR_EDGE},
            text=[
                "" if r is None else ("not enough pairs" if r.value is None else number(r.value))
                for r in series
            ],
            textposition="outside",
            cliponaxis=False,
            customdata=[
                [
                    "–" if r.value is None else number(r.value),
                    _agreement_words(r),
                    count(r.n),
                ]
                if r
                else [None] * 3
                for r in series
            ],
            hovertemplate="%{x}, task type %{fullData.name}: %{customdata[0]} "
            "(%{customdata[1]}) over %{customdata[2]} pairs of reviews<extra></extra>",
        )
    for level, label in ALPHA_LEVELS:
        _reference_line(fig, level, label)
    values = [r.value for r in results if r.value is not None]
    fig.update_xaxes(type="category")
    fig.update_yaxes(range=[min([0.0, *values]) - 0.05, 1.15])
    return fig


def _score_label(kind: str, value) -> str:
    if kind == "boolean":
        return "yes" if value else "no"
    if kind == "numeric":
        return f"{value:g}"
    return _escape(value)


# A rubric's scores: the height of each dimension's panel.
_PANEL_HEIGHT = 240


def rubric_scores_chart(rows: Iterable[RubricScoreRow | Mapping]) -> go.Figure | None:
    """A panel per rubric dimension: the share of a task type's reviews that gave each
    value, a bar per task type, so that task types of different volumes compare."""
    scores = [r for r in _rows(RubricScoreRow, rows) if r.reviews]
    if not scores:
        return None
    dimensions = list(dict.fromkeys((r.dimension, r.kind) for r in scores))
    titles = [next(r.label for r in scores if (r.dimension, r.kind) == d) for d in dimensions]
    fig = make_subplots(
        rows=len(dimensions),
        cols=1,
        subplot_titles=[_escape(t) for t in titles],
        vertical_spacing=min(0.3, 0.5 / len(dimensions)) if len(dimensions) > 1 else 0.0,
    )
    fig.update_layout(
        template=_TEMPLATE, barmode="group", height=160 + _PANEL_HEIGHT * len(dimensions)
    )
    task_types = sorted({r.task_type for r in scores})
    in_legend: set[str] = set()
    for panel, (name, kind) in enumerate(dimensions, start=1):
        of_dimension = [r for r in scores if (r.dimension, r.kind) == (name, kind)]
        values = list(dict.fromkeys(_score_label(kind, r.value) for r in of_dimension))
        for i, task_type in enumerate(task_types):
            given = {
                _score_label(kind, r.value): r.reviews
                for r in of_dimension
                if r.task_type == task_type
            }
            total = sum(given.values())
            if not total:
                continue
            fig.add_bar(
                name=_escape(task_type),
                legendgroup=task_type,
                # One legend entry per task type, though it has bars in every panel.
                showlegend=task_type not in in_legend,
                x=values,
                y=[given.get(v, 0) / total for v in values],
                marker={"color": _colour(i), "pattern": {"shape": _pattern(i)}, "line": _BAR_EDGE},
                customdata=[
                    [
                        _escape(titles[panel - 1]),
                        percent(given.get(v, 0) / total),
                        count(given.get(v, 0)),
                        count(total),
                    ]
                    for v in values
                ],
                hovertemplate="%{customdata[0]} %{x}, task type %{fullData.name}: "
                "%{customdata[1]} of its reviews (%{customdata[2]} of %{customdata[3]})"
                "<extra></extra>",
                row=panel,
                col=1,
            )
            in_legend.add(task_type)
        fig.update_xaxes(type="category", title_text="Score", row=panel, col=1)
        fig.update_yaxes(
            title_text="Share of reviews (%)", tickformat=".0%", range=[0, 1.05], row=panel, col=1
        )
    return fig


# 10. Calibration and ranking.


def reliability_chart(rows: Iterable[ReliabilityBucket | Mapping]) -> go.Figure | None:
    """A reliability diagram: per score bucket, the share reviewers approved unchanged, with
    its interval as error bars and n written above, against the ideal where that share is
    score ÷ 10."""
    buckets = [b for b in _rows(ReliabilityBucket, rows) if b.reviewed]
    if not buckets:
        return None
    buckets.sort(key=lambda b: b.lower)
    rates = [b.approved / b.reviewed for b in buckets]
    fig = _figure(x_title="Score (0 to 10)", y_title="Approved unchanged by reviewers (%)")
    fig.add_scatter(
        name="Ideal: approval share = score ÷ 10",
        x=[0, 10],
        y=[0, 1],
        mode="lines",
        line={"color": BLACK, "dash": "dash", "width": 1},
        hoverinfo="skip",
    )
    fig.add_scatter(
        name="Reviewed outputs",
        x=[(b.lower + b.upper) / 2 for b in buckets],
        y=rates,
        mode="markers+text",
        marker={"color": BLUE, "symbol": "circle", "size": 9},
        error_y={
            "type": "data",
            "symmetric": False,
            "array": [b.high - rate for b, rate in zip(buckets, rates, strict=True)],
            "arrayminus": [rate - b.low for b, rate in zip(buckets, rates, strict=True)],
            "color": BLUE,
        },
        text=[f"n {count(b.reviewed)}" for b in buckets],
        textposition="top right",
        customdata=[
            [
                _score_range(b.lower, b.upper),
                percent(rate),
                count(b.approved),
                count(b.reviewed),
                percent(b.low),
                percent(b.high),
            ]
            for b, rate in zip(buckets, rates, strict=True)
        ],
        hovertemplate="Scores %{customdata[0]}: %{customdata[1]} approved unchanged "
        "(%{customdata[2]} of %{customdata[3]} reviewed), interval %{customdata[4]} to "
        "%{customdata[5]}<extra></extra>",
    )
    fig.update_xaxes(range=[0, 10])
    fig.update_yaxes(range=[0, 1.05], tickformat=".0%")
    return fig


def action_histogram(rows: Iterable[ActionBucket | Mapping]) -> go.Figure | None:
    """Reviewed outputs per score bucket, side by side by what the reviewer did."""
    buckets = _rows(ActionBucket, rows)
    if not any(bucket.count for bucket in buckets):
        return None
    _check_names(buckets, "action", ACTIONS)
    edges = sorted({_edges(bucket) for bucket in buckets})
    fig = _figure(x_title="Score (0 to 10)", y_title="Reviewed outputs (count)", barmode="group")
    for action, (label, colour, pattern) in ACTIONS.items():
        counts = _sum_by([b for b in buckets if b.action == action], _edges)
        fig.add_bar(
            name=label,
            x=[(lower + upper) / 2 for lower, upper in edges],
            y=[counts.get(edge, 0) for edge in edges],
            marker={"color": colour, "pattern": {"shape": pattern}, "line": _BAR_EDGE},
            customdata=[[_score_range(*edge)] for edge in edges],
            hovertemplate=f"Scores %{{customdata[0]}}: %{{y:,}} outputs {label.lower()} by "
            "reviewers<extra></extra>",
        )
    fig.update_xaxes(range=[edges[0][0], edges[-1][1]])
    return fig


def auroc_chart(rows: Iterable[AurocRow | Mapping]) -> go.Figure | None:
    """AUROC of the score per task type, a bar per model, with its interval as error bars
    and chance (0.5) as a labelled line."""
    results = _rows(AurocRow, rows)
    return _auroc_bars(results, series_of=lambda r: r.model, series_word="model")


def scorer_auroc_chart(rows: Iterable[ScorerAurocRow | Mapping], against: str) -> go.Figure | None:
    """The scorers side by side: AUROC per task type, a bar per scorer, against the
    reviewers or the truth, with intervals as error bars and chance as a labelled line."""
    results = [r for r in _rows(ScorerAurocRow, rows) if r.against == against]
    return _auroc_bars(results, series_of=lambda r: r.scorer, series_word="scorer")


def _auroc_bars(results: list, *, series_of: Callable, series_word: str) -> go.Figure | None:
    """AUROC bars grouped by task type, one series per ``series_of(row)``."""
    if not results:
        return None
    task_types = sorted({r.task_type for r in results})
    fig = _figure(
        x_title="Task type", y_title="AUROC (0.5 is chance, 1 is perfect)", barmode="group"
    )
    for i, name in enumerate(sorted({series_of(r) for r in results})):
        of_series = {r.task_type: r for r in results if series_of(r) == name}
        series = [of_series.get(task_type) for task_type in task_types]
        fig.add_bar(
            name=_escape(name),
            x=[_escape(task_type) for task_type in task_types],
            y=[r.auroc if r else None for r in series],
            marker={"color": _colour(i), "pattern": {"shape": _pattern(i)}, "line": _BAR_EDGE},
            error_y={
                "type": "data",
                "symmetric": False,
                "array": [r.high - r.auroc if r else None for r in series],
                "arrayminus": [r.auroc - r.low if r else None for r in series],
                "color": BLACK,
            },
            customdata=[
                [number(r.auroc), number(r.low), number(r.high), count(r.n)] if r else [None] * 4
                for r in series
            ],
            hovertemplate=f"%{{x}}, {series_word} %{{fullData.name}}: AUROC %{{customdata[0]}} "
            "(interval %{customdata[1]} to %{customdata[2]}) over %{customdata[3]} reviewed "
            "outputs<extra></extra>",
        )
    _reference_line(fig, 0.5, "Chance (0.5)")
    fig.update_xaxes(type="category")
    fig.update_yaxes(range=[0, 1.05])
    return fig


# Shared pieces.


def _rows(kind: type[Row], rows: Iterable[Row | Mapping]) -> list[Row]:
    return [row if isinstance(row, kind) else kind(**row) for row in rows]


def _check_names(rows: list, field: str, known: Mapping) -> None:
    for row in rows:
        if getattr(row, field) not in known:
            raise ValueError(f"Unknown {field} {getattr(row, field)!r}: one of {', '.join(known)}.")


def _sum_by(rows: Iterable, key: Callable, *, value: Callable = lambda row: row.count) -> dict:
    totals: dict = {}
    for row in rows:
        totals[key(row)] = totals.get(key(row), 0) + value(row)
    return totals


def _edges(row) -> tuple[float, float]:
    return row.lower, row.upper


def _day(row) -> date:
    return row.day


def _decisions(row) -> int:
    return row.decisions


def _figure(*, x_title: str, y_title: str, **layout) -> go.Figure:
    fig = go.Figure()
    fig.update_layout(template=_TEMPLATE, **layout)
    fig.update_xaxes(title_text=x_title)
    fig.update_yaxes(title_text=y_title)
    return fig


def _colour(i: int) -> str:
    return SERIES_COLOURS[i % len(SERIES_COLOURS)]


def _pattern(i: int) -> str:
    return PATTERNS[i % len(PATTERNS)]


def _line_style(i: int) -> dict:
    return {
        "line": {"color": _colour(i), "dash": DASHES[i % len(DASHES)], "width": 2},
        "marker": {"symbol": SYMBOLS[i % len(SYMBOLS)], "size": 7, "color": _colour(i)},
    }


def _line_per(
    fig: go.Figure,
    points: list,
    *,
    group: Callable,
    x: Callable,
    y: Callable,
    customdata: Callable,
    hovertemplate: str,
    shape: str = "linear",
) -> None:
    """One line with markers per value of ``group`` (in name order), each in its own
    colour, dash and marker, from points already in time order."""
    for i, name in enumerate(sorted({group(p) for p in points})):
        series = [p for p in points if group(p) == name]
        style = _line_style(i)
        style["line"]["shape"] = shape
        fig.add_scatter(
            name=_escape(name),
            x=[x(p) for p in series],
            y=[y(p) for p in series],
            mode="lines+markers",
            **style,
            customdata=[customdata(p) for p in series],
            hovertemplate=hovertemplate,
        )


def _threshold_lines(fig: go.Figure, review: float | None, approve: float | None) -> None:
    # The labels lean away from each other: review's to the left of its line, approve's right.
    for which, value, side in (("review", review, "right"), ("approve", approve, "left")):
        if value is None:
            continue
        label, dash = THRESHOLDS[which]
        fig.add_vline(x=value, line={"color": BLACK, "dash": dash, "width": 2})
        fig.add_annotation(
            x=value,
            y=1,
            xref="x",
            yref="paper",
            yanchor="top",
            xanchor=side,
            text=f"{label} {number(value)}",
            showarrow=False,
            bgcolor="rgba(255,255,255,0.8)",
        )


def _reference_line(fig: go.Figure, y: float, label: str) -> None:
    fig.add_hline(y=y, line={"color": BLACK, "dash": "dash", "width": 1})
    fig.add_annotation(
        x=1,
        y=y,
        xref="paper",
        yref="y",
        xanchor="right",
        yanchor="bottom",
        text=label,
        showarrow=False,
        bgcolor="rgba(255,255,255,0.8)",
    )


def _with_room(values: list[float]) -> list[float]:
    # An axis range from 0 with room for the labels written past the bars' ends.
    low, high = min(0.0, *values), max(0.0, *values)
    if low == high:
        return [0.0, 1.0]
    return [low * 1.25, high * 1.25]


def _escape(text: str) -> str:
    return html.escape(str(text), quote=False)


def _wrap(text: str) -> str:
    # Hover labels do not wrap by themselves.
    return "<br>".join(textwrap.wrap(_escape(text), _HOVER_WIDTH)) or "–"


def _score_range(lower: float, upper: float) -> str:
    return f"{number(lower)} to {number(upper)}"


def _age_range(lower: float, upper: float | None) -> str:
    if upper is None:
        return f"{duration(lower)} or more"
    if lower == 0:
        return f"under {duration(upper)}"
    return f"{duration(lower)} to {duration(upper)}"
