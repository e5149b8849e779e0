"""Model tiers: which model to trust for a task type, from the humans' verdicts.

The confidence weighting follows ADR-017: confidence = min(1, n / 20) and adjusted score
= accuracy x confidence, so a model with three perfect reviews does not outrank one with
two hundred good ones.
"""

from __future__ import annotations

from dataclasses import dataclass

FULL_CONFIDENCE_REVIEWS = 20
# ADR-0003: a fast-tier model whose mean score over the last day is below this is
# recommended for the medium tier.
FAST_TIER_FLOOR = 4.5


@dataclass(frozen=True)
class ModelRecord:
    model: str
    tier: str
    reviews: int
    approved_unchanged: int
    mean_score: float | None  # over all its outputs in the window

    @property
    def accuracy(self) -> float | None:
        return self.approved_unchanged / self.reviews if self.reviews else None

    @property
    def confidence(self) -> float:
        return min(1.0, self.reviews / FULL_CONFIDENCE_REVIEWS)

    @property
    def adjusted_score(self) -> float:
        return (self.accuracy or 0.0) * self.confidence


def ranked(records: list[ModelRecord]) -> list[ModelRecord]:
    """Best adjusted score first; ties go to the model with more reviews, then by name."""
    return sorted(records, key=lambda r: (-r.adjusted_score, -r.reviews, r.model))


def recommended_tier(fast_mean_last_day: float | None, current: str = "") -> tuple[str, str]:
    """The tier a task type should default to, by ADR-0003's rule, with the reason:
    ``fast_mean_last_day`` is the mean score of its fast-tier outputs over the last day.
    Without fast-tier traffic (as after a move to medium) the current advice stands."""
    if fast_mean_last_day is None:
        return current or "fast", "No fast-tier outputs in the last day: nothing to change."
    if fast_mean_last_day < FAST_TIER_FLOOR:
        return "medium", (
            f"Fast-tier outputs averaged {fast_mean_last_day:.2f} over the last day, "
            f"below {FAST_TIER_FLOOR}: move the default to medium."
        )
    return "fast", (
        f"Fast-tier outputs averaged {fast_mean_last_day:.2f} over the last day "
        f"(floor {FAST_TIER_FLOOR}): fast stays."
    )
