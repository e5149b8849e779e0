"""What every scorer takes and gives.

A scorer turns one output, with whatever evidence and provenance came with it, into a
score on 0-10 and the reasons for it. Scorers are pure: no ORM, no Django, no clock of
their own (``ScorerInput.now`` is the moment of scoring), so that ingest, the simulator and
the tests run the very same arithmetic.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

from gating.scoring import Decision, GatePolicy, Impact, PairHistory, ValidatorOutcome

if TYPE_CHECKING:
    from gating.submissions import EvidenceIn, ProvenanceIn


@dataclass(frozen=True, slots=True)
class ScorerInput:
    """One output as the scorers see it."""

    validators: tuple[ValidatorOutcome, ...]
    input_clarity: float
    coherence: float
    requires_fact_check: bool
    pair: PairHistory
    policy: GatePolicy
    now: datetime
    evidence: EvidenceIn | None = None
    provenance: ProvenanceIn | None = None


@dataclass(frozen=True, slots=True)
class Scored:
    """A scorer's answer for one output.

    ``score`` is on 0-10. ``inputs`` are the values the score was computed from, as JSON.
    ``explanation`` lists the terms in a reviewer's words; ``summary`` says in one sentence
    why the score is what it is. ``interval`` is ``(lower, upper)`` on 0-10 for scorers
    that give one. A scorer that rates in named levels sets ``level`` and, where the level
    itself says what should happen, ``decision``; the gate then uses that decision rather
    than comparing the score with the thresholds.
    """

    score: float
    summary: str
    explanation: tuple[Impact, ...] = ()
    inputs: dict[str, Any] = field(default_factory=dict)
    interval: tuple[float, float] | None = None
    level: str | None = None
    decision: Decision | None = None


class Rating(NamedTuple):
    """A score without its reasons: what shadow scoring keeps of a scorer's answer."""

    score: float
    level: str | None = None
    interval: tuple[float, float] | None = None


class Scorer(Protocol):
    """A named, versioned scoring model."""

    name: str
    version: str
    # One line for the thresholds page and the API: what the model reads.
    description: str

    def applies(self, output: ScorerInput) -> bool:
        """Whether the output carries what this scorer reads. Shadow scoring skips the
        scorers that do not apply, so this must be cheap."""

    def score(self, output: ScorerInput) -> Scored:
        """Score one output; only called when ``applies`` is true."""

    def rate(self, output: ScorerInput) -> Rating:
        """``score``'s score, level and interval alone, without the words that explain
        them: shadow scoring runs on every output, and the words cost more than the
        arithmetic. Only called when ``applies`` is true."""
