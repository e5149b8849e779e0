"""Which review round follows a verdict: the rule of an output's rounds, in one place and
pure, so that the queue (``gating.reviews``) and the closed loop that proves the learning
(``simulator.loop``) follow the same one (docs/review-queue.md).

* A first round (a held output's review, or an audit of a delivered one) is settled by its
  verdict, unless its slot was drawn for a second review or it is an audit whose verdict
  finds fault: then a second review follows. An audit's fault is checked because it is the
  only evidence that the gate let an error through, and on one review the label model
  cannot tell a reviewer's slip from a bad output among the top scores, where errors are
  rare (docs/learning.md).
* A second review that agrees with the first settles the output; one that disagrees goes
  to a lead's adjudication, which settles it.
* A gold check (a lead's second look at a settled audit) settles nothing: nothing follows
  it, whatever it finds.
"""

from __future__ import annotations

from enum import StrEnum


class Round(StrEnum):
    REVIEW = "review"  # the output is held until this is decided
    AUDIT = "audit"  # the output was delivered; a sample checks the gate
    SECOND = "second"  # independent of the first, by someone else
    ADJUDICATION = "adjudication"  # a lead settles two disagreeing reviews
    # A lead judges a settled audit again, unseen: a random share of audits that checks the
    # label model's calibration and stays out of its fit (docs/learning.md).
    GOLD = "gold"


FIRST_ROUNDS = (Round.REVIEW, Round.AUDIT)


def round_after(
    done: Round,
    *,
    needs_second_review: bool = False,
    finds_fault: bool = False,
    agrees_with_first: bool | None = None,
) -> Round | None:
    """The round that follows a verdict in round ``done``; None where the verdict settles
    the output (or, for a gold check, ends its check).

    ``needs_second_review``: the slot was drawn for double review. ``finds_fault``: the
    verdict is a reject, or a modify not marked style only. ``agrees_with_first``: for a
    second review, whether its action is the first review's."""
    if done in FIRST_ROUNDS:
        audit_finds_fault = done == Round.AUDIT and finds_fault
        return Round.SECOND if needs_second_review or audit_finds_fault else None
    if done == Round.SECOND:
        if agrees_with_first is None:
            raise ValueError("a second review agrees with the first or not")
        return None if agrees_with_first else Round.ADJUDICATION
    return None
