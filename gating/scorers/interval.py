"""Confidence intervals from provenance (seed ``004_a2220e3f3b917399.txt``, as the issue fixes it).

A claim's sources, their types, its staleness and the claims that support or contradict it
give an interval ``[lower, upper]`` on 0-1 rather than one number: one credible source and
ten agreeing mediocre ones can share a midpoint, but not a width. The gate scores at the
conservative end, ``10 * lower``. docs/scoring.md ("interval") gives the formulas and a worked
example.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from gating.scorers.base import Rating, Scored, ScorerInput
from gating.scoring import Impact
from gating.submissions import ClaimIn, ProvenanceIn, RelatedClaimIn, Tier

# Seed 004's tunable defaults: contradiction weighs twice as much as support, since
# confidence is easier to undermine than to build.
BOOST_FACTOR = 0.1
PENALTY_FACTOR = 0.2
# Distinct source types for full diversity credit.
FULL_DIVERSITY_TYPES = 3

# Seed 004's default half-lives. Calendar months and years vary in length, so "4 weeks" is
# exactly 28 days and "6 months" exactly half of a 365-day year, 182.5 days: a claim then
# decays the same whichever month it went stale in.
HALF_LIFE: dict[Tier, timedelta] = {
    Tier.EPHEMERAL: timedelta(hours=4),
    Tier.TASK: timedelta(days=3),
    Tier.PROJECT: timedelta(weeks=4),
    Tier.PERSISTENT: timedelta(days=182, hours=12),
}

# Interval width on 0-10 at or above which the review queue flags an output as uncertain,
# worth investigating (seed 004: "claims where the interval is wide"). 3.0 is the width of
# the default warning band (review 4.0 to approve 7.0), so an interval this wide can reach
# from a held output to an approved one: the choice of projection alone could decide the
# output. It is also where a lone source of confidence 0.9 or more lands (one type: width
# c / 3), the seed's thin-evidence Claim A; with three or more source types the width is at
# most 1 - max(c_i), below 3.0 once the best source is above 0.7.
WIDE_INTERVAL = 3.0


# --------------------------------------------------------------------------- step 1


def aggregate_upper(confidences: Iterable[float]) -> float:
    """``1 - prod(1 - c_i)``: the chance that at least one independent source is right."""
    return 1.0 - math.prod(1.0 - c for c in confidences)


def source_diversity(source_types: Iterable[str]) -> float:
    """``0.5 + 0.5 * min(distinct types / 3, 1)``; one type gives 2/3, not the seed's 0.5."""
    distinct = len(set(source_types))
    return 0.5 + 0.5 * min(distinct / FULL_DIVERSITY_TYPES, 1.0)


def aggregate_lower(confidences: Iterable[float], diversity: float) -> float:
    """``max(c_i) * diversity``: anchored to the strongest source, credited for variety."""
    return max(confidences) * diversity


# --------------------------------------------------------------------------- step 2


def staleness_factor(staleness_at: datetime | None, tier: Tier, now: datetime) -> float:
    """``0.5 ^ (time since staleness_at / half-life)``, once ``now`` is past staleness_at.

    No staleness_at, or a staleness_at still ahead, leaves the claim undecayed.
    """
    if staleness_at is None or now <= staleness_at:
        return 1.0
    return 0.5 ** ((now - staleness_at) / HALF_LIFE[tier])


@dataclass(frozen=True, slots=True)
class ClaimBounds:
    """Steps 1 and 2 for one claim: its provenance-aggregated confidence."""

    strongest_source: float
    source_types: int
    aggregate_lower: float
    aggregate_upper: float
    diversity: float
    staleness_factor: float

    @property
    def stale_lower(self) -> float:
        return self.aggregate_lower * self.staleness_factor

    @property
    def stale_upper(self) -> float:
        return self.aggregate_upper * self.staleness_factor


def claim_bounds(claim: ClaimIn, now: datetime) -> ClaimBounds:
    """Steps 1-2 from a claim's own sources, tier and staleness_at, and nothing else."""
    confidences = [s.confidence for s in claim.sources]
    source_types = {s.source_type for s in claim.sources}
    diversity = source_diversity(source_types)
    return ClaimBounds(
        strongest_source=max(confidences),
        source_types=len(source_types),
        aggregate_lower=aggregate_lower(confidences, diversity),
        aggregate_upper=aggregate_upper(confidences),
        diversity=diversity,
        staleness_factor=staleness_factor(claim.staleness_at, claim.tier, now),
    )


# --------------------------------------------------------------------------- step 3


def related_weight(claims: Sequence[RelatedClaimIn], now: datetime) -> float:
    """``sum(stale_upper * strength)`` over related claims.

    Each related claim counts with its steps 1-2 value only, never its own relationships:
    that breaks the cycle of A supporting B supporting A. The schema gives related claims
    no relationships to read, so the cycle cannot even be written down.
    """
    return sum(claim_bounds(c, now).stale_upper * c.strength for c in claims)


def support_boost(support_weight: float) -> float:
    """``1 + sum(stale_upper * strength) * BOOST_FACTOR``."""
    return 1.0 + support_weight * BOOST_FACTOR


def contradiction_penalty(contradiction_weight: float) -> float:
    """``1 - sum(stale_upper * strength) * PENALTY_FACTOR``, never below 0.

    Five full-strength, fully credible contradictions already take it to 0; more cannot
    make a claim less than worthless, and a negative factor would flip the interval.
    """
    return max(0.0, 1.0 - contradiction_weight * PENALTY_FACTOR)


def adjust_for_relations(
    stale_lower: float, stale_upper: float, boost: float, penalty: float
) -> tuple[float, float]:
    """Contradiction lowers both bounds; support only raises the upper, at most to 1.

    The cap comes here, before instance trust, as in the seed's step 3: an upper bound above
    1 is no probability, and trust should scale a real interval. (The seed's one-line
    "complete formula" clamps only at the end, which lets a boost past 1 leak through a
    trust below 1.)
    """
    return stale_lower * penalty, min(stale_upper * boost * penalty, 1.0)


# --------------------------------------------------------------------------- steps 4 and 5


def scale_by_trust(lower: float, upper: float, instance_trust: float) -> tuple[float, float]:
    """Seed 004's federated instance trust scales both bounds (1.0 when not federated)."""
    return lower * instance_trust, upper * instance_trust


def clamp_and_order(lower: float, upper: float) -> tuple[float, float]:
    """Both bounds into [0, 1], and lower no higher than upper.

    With valid inputs the formula keeps ``lower ≤ upper`` (``max(c_i) ≤ 1 - prod(1 - c_i)``, and
    every later factor applies to both bounds or raises only the upper); this guards the
    last bit of float rounding, e.g. one source at 0.7 and two at 0 of other types.
    """
    upper = min(max(upper, 0.0), 1.0)
    lower = min(max(lower, 0.0), upper)
    return lower, upper


# A width of exactly WIDE_INTERVAL in exact arithmetic counts as "at or above" even where
# float rounding leaves it a hair below. The queue's filter compares in SQL with the same
# tolerance, so the page, the API and the filter agree.
WIDE_TOLERANCE = 1e-9


def is_wide(width_points: float) -> bool:
    """Whether an interval this wide on 0-10 is flagged as uncertain (``WIDE_INTERVAL``)."""
    return width_points >= WIDE_INTERVAL - WIDE_TOLERANCE


# --------------------------------------------------------------------------- all steps


@dataclass(frozen=True, slots=True)
class IntervalTerms:
    """Every intermediate value of one provenance's interval, on 0-1."""

    own: ClaimBounds
    support_weight: float
    boost: float
    contradiction_weight: float
    penalty: float
    adjusted_lower: float
    adjusted_upper: float
    instance_trust: float
    trusted_lower: float
    trusted_upper: float
    lower: float
    upper: float

    @property
    def midpoint(self) -> float:
        return (self.lower + self.upper) / 2

    @property
    def width(self) -> float:
        return self.upper - self.lower


def confidence_interval(provenance: ProvenanceIn, now: datetime) -> IntervalTerms:
    """Seed 004's fast path: steps 1-5, from a provenance payload to ``[lower, upper]``."""
    own = claim_bounds(provenance, now)
    support_weight = related_weight(provenance.supporting, now)
    contradiction_weight = related_weight(provenance.contradicting, now)
    boost = support_boost(support_weight)
    penalty = contradiction_penalty(contradiction_weight)
    adjusted_lower, adjusted_upper = adjust_for_relations(
        own.stale_lower, own.stale_upper, boost, penalty
    )
    trusted_lower, trusted_upper = scale_by_trust(
        adjusted_lower, adjusted_upper, provenance.instance_trust
    )
    lower, upper = clamp_and_order(trusted_lower, trusted_upper)
    return IntervalTerms(
        own=own,
        support_weight=support_weight,
        boost=boost,
        contradiction_weight=contradiction_weight,
        penalty=penalty,
        adjusted_lower=adjusted_lower,
        adjusted_upper=adjusted_upper,
        instance_trust=provenance.instance_trust,
        trusted_lower=trusted_lower,
        trusted_upper=trusted_upper,
        lower=lower,
        upper=upper,
    )


def lower_bound_impacts(terms: IntervalTerms) -> tuple[Impact, ...]:
    """Each step's effect on the lower bound in score points; they add up to the score."""
    own = terms.own
    strongest = own.strongest_source
    impacts = [
        Impact("strongest_source", 10 * strongest, f"strongest source {strongest:.2f} × 10"),
        Impact(
            "source_diversity",
            10 * (own.aggregate_lower - strongest),
            f"{own.source_types} source type{_s(own.source_types)} of "
            f"{FULL_DIVERSITY_TYPES} for full credit: × {own.diversity:.3f}",
        ),
        Impact(
            "staleness",
            10 * (own.stale_lower - own.aggregate_lower),
            f"× {own.staleness_factor:.3f} after staleness"
            if own.staleness_factor < 1
            else "not stale: × 1",
        ),
        Impact(
            "support",
            0.0,
            f"weight {terms.support_weight:.3f} × {BOOST_FACTOR}: × {terms.boost:.3f}, "
            "on the upper bound only",
        ),
        Impact(
            "contradiction",
            10 * (terms.adjusted_lower - own.stale_lower),
            f"weight {terms.contradiction_weight:.3f} × {PENALTY_FACTOR}: × {terms.penalty:.3f}",
        ),
        Impact(
            "instance_trust",
            10 * (terms.trusted_lower - terms.adjusted_lower),
            f"× {terms.instance_trust:.3f}",
        ),
    ]
    if terms.lower != terms.trusted_lower:
        impacts.append(
            Impact(
                "clamp",
                10 * (terms.lower - terms.trusted_lower),
                "lower bound kept within [0, 1] and no higher than the upper",
            )
        )
    return tuple(impacts)


def _s(count: int) -> str:
    return "" if count == 1 else "s"


def _summary(terms: IntervalTerms, provenance: ProvenanceIn) -> str:
    sources = len(provenance.sources)
    source_types = terms.own.source_types
    parts = [
        f"Interval {terms.lower:.2f}–{terms.upper:.2f} from {sources} "
        f"source{_s(sources)} of {source_types} type{_s(source_types)}"
    ]
    supporting = len(provenance.supporting)
    if supporting:
        parts.append(f"{supporting} supporting claim{_s(supporting)}")
    contradicting = len(provenance.contradicting)
    if contradicting:
        parts.append(f"{contradicting} contradiction{_s(contradicting)}")
    if terms.own.staleness_factor < 1:
        parts.append(f"decayed to {terms.own.staleness_factor:.0%} by staleness")
    if terms.instance_trust < 1:
        parts.append(f"instance trust {terms.instance_trust:.2f}")
    return ", ".join(parts) + f"; scored at its lower bound, {10 * terms.lower:.2f}."


class IntervalScorer:
    name = "interval"
    version = "1"
    description = (
        "Seed 004: a confidence interval from the provenance's sources, source types, "
        "staleness, supporting and contradicting claims and instance trust; scored at its "
        "lower bound."
    )

    def applies(self, output: ScorerInput) -> bool:
        return output.provenance is not None

    def rate(self, output: ScorerInput) -> Rating:
        terms = confidence_interval(output.provenance, output.now)
        return Rating(10 * terms.lower, None, (10 * terms.lower, 10 * terms.upper))

    def score(self, output: ScorerInput) -> Scored:
        provenance = output.provenance
        if provenance is None:
            raise ValueError("the interval scorer reads provenance, and this output has none")
        terms = confidence_interval(provenance, output.now)
        width_points = 10 * terms.width
        return Scored(
            score=10 * terms.lower,
            summary=_summary(terms, provenance),
            explanation=lower_bound_impacts(terms),
            inputs={
                # On 0-1, the seed's scale.
                "aggregate_lower": terms.own.aggregate_lower,
                "aggregate_upper": terms.own.aggregate_upper,
                "diversity": terms.own.diversity,
                "staleness_factor": terms.own.staleness_factor,
                "support_weight": terms.support_weight,
                "support_boost": terms.boost,
                "contradiction_weight": terms.contradiction_weight,
                "contradiction_penalty": terms.penalty,
                "instance_trust": terms.instance_trust,
                "lower": terms.lower,
                "upper": terms.upper,
                "midpoint": terms.midpoint,
                "width": terms.width,
                # On 0-10, the score's scale: the projections a consumer may choose from.
                "conservative_score": 10 * terms.lower,
                "midpoint_score": 10 * terms.midpoint,
                "optimistic_score": 10 * terms.upper,
                "width_points": width_points,
                "wide": is_wide(width_points),
                "sources": len(provenance.sources),
                "source_types": terms.own.source_types,
                "supporting": len(provenance.supporting),
                "contradicting": len(provenance.contradicting),
            },
            interval=(10 * terms.lower, 10 * terms.upper),
        )


SCORER = IntervalScorer()
