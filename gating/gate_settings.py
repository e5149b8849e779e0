"""The gate's settings of a task type, declared once: each one's name, the words people read
it by, what it means, its type and its range.

Everything else is derived from this: the settings service checks each value with
``GateSetting.problem`` (gating.services.gate_settings_problems adds the rule between
settings); the API's serializer, the admin's form and the thresholds page's form take their
labels, help lines, ranges and choices from it; and messages that name a setting are put in
the page's words by ``in_words``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum

from gating import scorers
from gating.scoring import ApproveRequires


class Kind(StrEnum):
    NUMBER = "number"
    WHOLE = "whole"
    SWITCH = "switch"
    CHOICE = "choice"


@dataclass(frozen=True)
class GateSetting:
    """One setting. ``low`` and ``high`` bound a number, both included; ``choices`` gives a
    choice's (value, words) pairs when asked, since some are registered at start (scorers)."""

    name: str
    label: str
    meaning: str
    kind: Kind
    low: float | None = None
    high: float | None = None
    choices: Callable[[], Sequence[tuple[str, str]]] | None = None
    # The thresholds page edits all but these (backlog relief stays with the admin site).
    on_page: bool = True

    @property
    def is_number(self) -> bool:
        return self.kind in (Kind.NUMBER, Kind.WHOLE)

    @property
    def values(self) -> list[str]:
        return [value for value, _ in self.choices()] if self.choices else []

    @property
    def range_words(self) -> str:
        return f"Must be between {self.low:g} and {self.high:g}."

    def problem(self, value: object) -> str | None:
        """What is wrong with ``value`` for this setting, in words; None when nothing is.
        JSON's types are held strictly: true is not 1, and 20.0 is not a whole number."""
        if self.kind is Kind.SWITCH:
            return None if isinstance(value, bool) else "Must be true or false."
        if self.kind is Kind.CHOICE:
            return None if value in self.values else f"Must be one of: {', '.join(self.values)}."
        if self.kind is Kind.WHOLE and not (_is_number(value) and isinstance(value, int)):
            return "Must be a whole number."
        if not _is_number(value) or not math.isfinite(value):
            return "Must be a finite number."
        return None if self.low <= value <= self.high else self.range_words


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _threshold_policies() -> list[tuple[str, str]]:
    # The choices are the model's own; imported when asked, since the model imports this.
    from gating.models import TaskType

    return TaskType.ThresholdPolicy.choices


def _scorers() -> list[tuple[str, str]]:
    return [(scorer.name, scorer.name) for scorer in scorers.REGISTRY.values()]


APPROVE_REQUIRES_WORDS = {
    ApproveRequires.ESTIMATE: "A certified threshold, or until then the estimated approve line",
    ApproveRequires.CERTIFIED: "A certified threshold",
    ApproveRequires.NOTHING: "Nothing: approve at the threshold in force",
}

_RATE = {"kind": Kind.NUMBER, "low": 0.0, "high": 1.0}
# An error level of 0 can never be certified, and a loose one certifies anything.
_LEVEL = {"kind": Kind.NUMBER, "low": 0.001, "high": 0.5}

# In the order the thresholds page shows them.
SETTINGS: tuple[GateSetting, ...] = (
    GateSetting(
        "review_threshold",
        "Review below",
        "Outputs scoring below this are held for a person to decide.",
        Kind.NUMBER,
        0.0,
        10.0,
    ),
    GateSetting(
        "approve_threshold",
        "Approve from",
        "Outputs scoring this or more are delivered as approved; between the two thresholds "
        "they are delivered flagged as warnings.",
        Kind.NUMBER,
        0.0,
        10.0,
    ),
    GateSetting(
        "alpha_approve",
        "Most approved outputs that may need an edit",
        "The largest share of auto-approved outputs that may truly need an edit or be bad "
        "(α). The cycles certify the approve threshold only when its "
        "bound is within this.",
        **_LEVEL,
    ),
    GateSetting(
        "alpha_bad",
        "Most approved outputs that may be bad",
        "The largest share of auto-approved outputs that may truly be bad, the kind a "
        "reviewer rejects.",
        **_LEVEL,
    ),
    GateSetting(
        "alpha_warning",
        "Most warnings that may be bad",
        "The largest share of warnings (delivered, flagged) that may truly be bad.",
        kind=Kind.NUMBER,
        low=0.001,
        high=0.9,
    ),
    GateSetting(
        "delta",
        "Chance a certified bound is wrong",
        "How often a certified threshold's bound may be wrong (δ): 0.05 certifies with 95 % "
        "confidence. Smaller asks for more audits before certifying.",
        **_LEVEL,
    ),
    GateSetting(
        "audit_rate_approved",
        "Audit rate of auto-approved outputs",
        "The share of auto-approved outputs a person reviews after delivery, which measures "
        "the gate's error above the approve threshold.",
        **_RATE,
    ),
    GateSetting(
        "audit_rate_budget",
        "Audit budget",
        "The highest audit rate of auto-approved outputs the cycles may set while the approve "
        "threshold has too few audits to be certified.",
        **_RATE,
    ),
    GateSetting(
        "audit_rate_warning",
        "Audit rate of warnings",
        "The share of warnings a person reviews after delivery.",
        **_RATE,
    ),
    GateSetting(
        "double_review_rate",
        "Second-review rate",
        "The share of reviews given to a second reviewer as well, which measures reviewers "
        "against each other.",
        **_RATE,
    ),
    GateSetting(
        "cold_start_reviews",
        "Cold start: reviews before the gate decides",
        "Until this many of the task type's outputs have been reviewed, the gate holds every "
        "output for review.",
        Kind.WHOLE,
        0,
        100_000,
    ),
    GateSetting(
        "cold_start_margin",
        "Cold start margin, in points",
        "Raises both thresholds for a model's first 20 reviews, by this much at first and "
        "by less with each review.",
        Kind.NUMBER,
        0.0,
        10.0,
    ),
    GateSetting(
        "review_threshold_pinned",
        "Pin the review threshold",
        "The learning cycles leave a pinned threshold where it is.",
        Kind.SWITCH,
    ),
    GateSetting(
        "approve_threshold_pinned",
        "Pin the approve threshold",
        "The learning cycles leave a pinned threshold where it is.",
        Kind.SWITCH,
    ),
    GateSetting(
        "auto_approve",
        "Auto-approve",
        "Off: nothing is approved; what would be is delivered as a warning.",
        Kind.SWITCH,
    ),
    GateSetting(
        "approve_requires",
        "Approve only with",
        "What must stand behind the approve threshold for what reaches it to be approved; "
        "short of it, it is delivered as a warning.",
        Kind.CHOICE,
        choices=lambda: [(value.value, words) for value, words in APPROVE_REQUIRES_WORDS.items()],
    ),
    GateSetting(
        "threshold_policy",
        "Threshold policy of the learning cycles",
        "Guarded moves a threshold only where its error bound stays within the budgets above; "
        "ADR-0003 moves it by the rule as written.",
        Kind.CHOICE,
        choices=_threshold_policies,
    ),
    GateSetting(
        "scorer",
        "Scorer",
        "What scores this task type's outputs; the others score them in shadow, for comparison.",
        Kind.CHOICE,
        choices=_scorers,
    ),
    GateSetting(
        "backlog_relief",
        "Backlog relief",
        "After a backlog alert has been open 7 days, release queued items within 1.0 below "
        "the review threshold as warnings (audit-sampled).",
        Kind.SWITCH,
        on_page=False,
    ),
)
BY_NAME: dict[str, GateSetting] = {setting.name: setting for setting in SETTINGS}

# A setting's name in a message, as the API writes it ("review_threshold").
_NAME = re.compile(r"\b(" + "|".join(sorted(BY_NAME, key=len, reverse=True)) + r")\b")


def in_words(message: str) -> str:
    """A message about the settings with each setting's name as people read it:
    'Must be above review_threshold (4).' reads 'Must be above “Review below” (4).'"""
    return _NAME.sub(lambda m: f"“{BY_NAME[m.group(1)].label}”", message)
