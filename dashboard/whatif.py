"""The thresholds page's what-if: for candidate thresholds, how many reviews a day the gate
would ask for, and how often a reviewer would not approve an output in each band, from the
history of a range. Pure arithmetic on rollup rows.

Reviews a day. The outputs of the range are counted per score bucket (the outputs rollup,
half a point wide); within a bucket the scores are taken as spread evenly, so a threshold
inside a bucket takes the share of it that lies below. Over ``days`` days:

  held     = outputs below the review threshold / days        (each is reviewed)
  audits   = warning-band outputs / days * audit_rate_warning
           + approve-band outputs / days * audit_rate_approved
  seconds  = held * double_review_rate
           + each band's audits * (double_review_rate + (1 - double_review_rate) * r)
  reviews  = held + audits + seconds

where r is the band's non-approval rate below: an audit that finds fault is always reviewed
a second time (docs/review-queue.md). r counts style-only modifies too, which need no second
review, so this errs high; a band with no review yet adds none. Adjudications, which follow
disagreeing second reviews, are left out. This is the gate out of cold start; in cold start
it holds everything.

Outputs a day by band. Each band's outputs a day are the range's (as above: the outputs
below, between and above the candidate thresholds, over ``days``). Around each, the range a
day's volume falls in on 95 % of days: a normal prediction interval from the spread of the
range's whole UTC days, mean ± t(n - 1) · sd · √(1 + 1/n) over n days, clipped at 0; none
with fewer than MIN_DAYS whole days. It is for planning: a day's volume, not the mean's.

Non-approval by band. Each first review (the slot an output was held or audited in; bulk
decisions left out) says whether a human approved the output unchanged, and stands for
1 / its inclusion probability outputs: 1 for held outputs, 1 / the audit rate for audits.
A band's rate is the Hajek ratio, weighted not approved / weight, over the review buckets
(a tenth of a point) whose middle lies in the band; its interval is Wilson's at Kish's
effective sample size, (sum of weights)² / (sum of squared weights), as in
dashboard.estimates. Candidate thresholds on the tenth-of-a-point grid split the buckets
exactly; others split the bucket they fall in by its middle.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from scipy.stats import t as student_t

from dashboard.estimates import wilson_interval

SCORE_MAX = 10.0
BANDS = ("below review", "warning", "auto-approve")
# Fewer whole days than this give a spread too unsure to plan by.
MIN_DAYS = 3


# What happens to a band's outputs, in words.
DELIVERY = {
    "below review": "Held for review",
    "warning": "Delivered as warnings",
    "auto-approve": "Approved",
}


@dataclass(frozen=True)
class BandVolume:
    band: str
    lower: float
    upper: float
    per_day: float
    low: float | None  # None: fewer than MIN_DAYS whole days
    high: float | None
    days: int

    @property
    def delivery(self) -> str:
        return DELIVERY[self.band]


@dataclass(frozen=True)
class BandRate:
    band: str
    lower: float
    upper: float
    reviews: int
    rate: float | None  # None: no review in the band
    low: float | None
    high: float | None
    effective_n: float


@dataclass(frozen=True)
class WhatIf:
    review_threshold: float
    approve_threshold: float
    days: float
    outputs_per_day: float
    held_per_day: float
    audits_per_day: float
    second_reviews_per_day: float
    reviews_per_day: float
    bands: tuple[BandRate, ...]
    volumes: tuple[BandVolume, ...] = ()
    since: datetime | None = None  # where the history read begins


def outputs_below(histogram: Iterable[Mapping], score: float) -> float:
    """How many outputs of ``histogram`` ({lower, upper, count} buckets) score below
    ``score``, counting the bucket it falls in by the share of its width below it."""
    total = 0.0
    for bucket in histogram:
        lower, upper, count = bucket["lower"], bucket["upper"], bucket["count"]
        if score >= upper:
            total += count
        elif score > lower:
            total += count * (score - lower) / (upper - lower)
    return total


def _band_counts(histogram: Iterable[Mapping], review: float, approve: float) -> tuple:
    """Outputs below review, between the thresholds, and from approve up."""
    histogram = list(histogram)
    total = sum(bucket["count"] for bucket in histogram)
    below_review = outputs_below(histogram, review)
    below_approve = outputs_below(histogram, approve)
    return below_review, below_approve - below_review, total - below_approve


def band_volumes(
    *,
    histogram: Iterable[Mapping],
    daily_histograms: Sequence[Iterable[Mapping]],
    review_threshold: float,
    approve_threshold: float,
    days: float,
    confidence: float = 0.95,
) -> tuple[BandVolume, ...]:
    """Each band's outputs a day from the range's ``histogram`` over ``days``, with the
    prediction interval of one day's volume from ``daily_histograms`` (one per whole day;
    see the module's docstring). ``approve_threshold`` is where approvals start: the
    approval line in force (infinite where nothing is approved: every band up to 10 is
    then delivered as a warning)."""
    approve_threshold = min(approve_threshold, SCORE_MAX)
    means = [n / days for n in _band_counts(histogram, review_threshold, approve_threshold)]
    per_day = [_band_counts(h, review_threshold, approve_threshold) for h in daily_histograms]
    n = len(per_day)
    edges = (0.0, review_threshold, approve_threshold, SCORE_MAX)
    volumes = []
    for i, band in enumerate(BANDS):
        low = high = None
        if n >= MIN_DAYS:
            spread = statistics.stdev(day[i] for day in per_day)
            half = student_t.ppf(0.5 + confidence / 2, n - 1) * spread * math.sqrt(1 + 1 / n)
            low, high = max(0.0, means[i] - half), means[i] + half
        volumes.append(BandVolume(band, edges[i], edges[i + 1], means[i], low, high, n))
    return tuple(volumes)


def band_rate(
    cells: Iterable[Mapping], band: str, lower: float, upper: float, confidence: float = 0.95
) -> BandRate:
    """The weighted non-approval rate of the review cells ({lower, upper, reviews, weight,
    squared, not_approved}; ``squared`` the sum of each review's squared weight) whose
    middle lies in [lower, upper) (the top band includes 10)."""
    reviews, weight, squared, failed = 0, 0.0, 0.0, 0.0
    for cell in cells:
        middle = (cell["lower"] + cell["upper"]) / 2
        inside = lower <= middle < upper or (upper == SCORE_MAX and middle == SCORE_MAX)
        if not inside or not cell["reviews"]:
            continue
        reviews += cell["reviews"]
        weight += cell["weight"]
        squared += cell["squared"]
        failed += cell["weight"] if cell["not_approved"] else 0.0
    if not reviews or weight <= 0:
        return BandRate(band, lower, upper, reviews, None, None, None, 0.0)
    rate = failed / weight
    effective_n = weight * weight / squared
    low, high = wilson_interval(rate, effective_n, confidence)
    return BandRate(band, lower, upper, reviews, rate, low, high, effective_n)


def what_if(
    *,
    review_threshold: float,
    approve_threshold: float,
    histogram: list[Mapping],
    review_cells: list[Mapping],
    days: float,
    daily_histograms: Sequence[list[Mapping]] = (),
    approvals_from: float | None = None,
    since: datetime | None = None,
    audit_rate_approved: float,
    audit_rate_warning: float,
    double_review_rate: float,
) -> WhatIf:
    """Reviews a day and the non-approval rate of each band under candidate thresholds
    (review < approve), from a range of ``days`` days: the outputs per score bucket
    (``histogram``) and the first reviews per score bucket (``review_cells``)."""
    total = sum(bucket["count"] for bucket in histogram)
    below_review = outputs_below(histogram, review_threshold)
    below_approve = outputs_below(histogram, approve_threshold)
    held = below_review / days
    warning_audits = (below_approve - below_review) * audit_rate_warning / days
    approved_audits = (total - below_approve) * audit_rate_approved / days
    audits = warning_audits + approved_audits
    edges = (0.0, review_threshold, approve_threshold, SCORE_MAX)
    bands = tuple(
        band_rate(review_cells, name, edges[i], edges[i + 1]) for i, name in enumerate(BANDS)
    )
    _, warning, approve = bands
    seconds = held * double_review_rate + sum(
        band_audits * (double_review_rate + (1 - double_review_rate) * (band.rate or 0.0))
        for band_audits, band in ((warning_audits, warning), (approved_audits, approve))
    )
    return WhatIf(
        review_threshold=review_threshold,
        approve_threshold=approve_threshold,
        days=days,
        outputs_per_day=total / days,
        held_per_day=held,
        audits_per_day=audits,
        second_reviews_per_day=seconds,
        reviews_per_day=held + audits + seconds,
        bands=bands,
        volumes=band_volumes(
            histogram=histogram,
            daily_histograms=daily_histograms,
            review_threshold=review_threshold,
            approve_threshold=approve_threshold if approvals_from is None else approvals_from,
            days=days,
        ),
        since=since,
    )
