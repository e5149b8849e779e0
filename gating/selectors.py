"""Reads of the gate's data."""

from collections.abc import Sequence
from datetime import datetime

from django.contrib.auth.models import AbstractUser
from django.db.models import Count, Exists, OuterRef, Q, QuerySet

from gating.models import Output, Review, ReviewItem, TaskType, TaskTypeUse
from gating.scoring import Decision

Kind = ReviewItem.Kind


def sees_every_gateway(user: AbstractUser) -> bool:
    """Staff roles (reviewer, lead, admin) see what every gateway sent; a gateway sees its own."""
    return user.has_perm("gating.view_all_outputs")


def outputs_visible_to(user: AbstractUser) -> QuerySet[Output]:
    """Staff roles see every output; a gateway user sees only the outputs it submitted."""
    outputs = Output.objects.select_related("task_type")
    if sees_every_gateway(user):
        return outputs
    return outputs.filter(source=user)


def outputs_matching(
    outputs: QuerySet[Output],
    *,
    task_types: Sequence[str] = (),
    models: Sequence[str] = (),
    decision: str = "",
    status: str = "",
    created_after: datetime | None = None,
    created_before: datetime | None = None,
    external_id: str = "",
    external_id_prefix: bool = False,
    text: str = "",
    score_min: float | None = None,
    score_max: float | None = None,
    before_id: int | None = None,
) -> QuerySet[Output]:
    """The outputs query, for the outputs API (gating.api.filters.OutputFilter) and the
    outputs page (dashboard.pages.outputs) alike, so that a parameter means one thing in
    both. Empty names and strings and None mean any. Created in [created_after,
    created_before); scores from score_min (included) to below score_max, as the queue's
    filters; ``before_id`` is a keyset cursor (ids below it). Unordered: each caller
    orders for its own paging."""
    found = outputs
    if created_after is not None:
        found = found.filter(created_at__gte=created_after)
    if created_before is not None:
        found = found.filter(created_at__lt=created_before)
    if task_types:
        found = found.filter(task_type__name__in=task_types)
    if models:
        found = found.filter(model__in=models)
    if external_id:
        lookup = "external_id__startswith" if external_id_prefix else "external_id"
        found = found.filter(**{lookup: external_id})
    if text:
        found = found.filter(output_text__icontains=text)
    if decision:
        found = found.filter(decision=decision)
    if status:
        found = found.filter(status=status)
    if score_min is not None:
        found = found.filter(score__gte=score_min)
    if score_max is not None:
        found = found.filter(score__lt=score_max)
    if before_id is not None:
        found = found.filter(pk__lt=before_id)
    return found


def score_band_problem(score_min: float | None, score_max: float | None) -> str | None:
    """Why score_min and score_max cannot be taken together, or None. Every score filter
    (the queue's, the outputs page's) reads them as from score_min up to below score_max,
    so a score_max at or below score_min matches nothing: said, not answered empty."""
    if score_min is None or score_max is None or score_max > score_min:
        return None
    return (
        f"score_max ({score_max:g}) must be above score_min ({score_min:g}): scores are "
        "taken from score_min up to below score_max."
    )


def queue_models() -> list[str]:
    """The models of the open queue's items, for the queue pages' chooser."""
    names = queue_open_items().order_by("model").values_list("model", flat=True).distinct()
    return list(names)


def task_type_names() -> list[str]:
    """Every task type's name, for the queue pages' chooser (reviewers see them all)."""
    return list(TaskType.objects.order_by("name").values_list("name", flat=True))


def task_types_visible_to(user: AbstractUser) -> QuerySet[TaskType]:
    """Staff roles see every task type. A gateway sees those it has sent outputs of and
    those an admin shared: another gateway's task type, and even its name, is none of its
    business. Every door that lists or names task types for a user reads this."""
    task_types = TaskType.objects.all()
    if sees_every_gateway(user):
        return task_types
    used = TaskTypeUse.objects.filter(gateway=user, task_type=OuterRef("pk"))
    return task_types.filter(Q(shared=True) | Q(Exists(used)))


def queue_open_items() -> QuerySet[ReviewItem]:
    return ReviewItem.objects.filter(state=ReviewItem.State.OPEN)


def may_adjudicate(user: AbstractUser) -> bool:
    """Adjudications and gold checks (``ReviewItem.LEAD_KINDS``) are a lead's: nobody else
    may claim one."""
    return user.has_perm("gating.adjudicate_items")


def queue_listing(items: QuerySet[ReviewItem], *, viewer: AbstractUser) -> tuple[QuerySet, int]:
    """The items a viewer's queue page lists, and how many open rounds for leads
    (adjudications, gold checks) it leaves out because the viewer may not take them.
    Follow-up rounds keep their output's turn, so with one lead behind, they would fill the
    head of every reviewer's list."""
    if may_adjudicate(viewer):
        return items, 0
    for_leads = Q(kind__in=ReviewItem.LEAD_KINDS)
    left_out = items.filter(for_leads, state=ReviewItem.State.OPEN).count()
    return items.exclude(for_leads), left_out


def queue_summary(items: QuerySet[ReviewItem], *, now) -> dict:
    """Size and longest wait of a (filtered) queue: what the queue page and alerts show. The
    wait is the first item in line's, counted from its turn (``ReviewItem.turn_at``): a
    second review or an adjudication has waited as long as its output has."""
    open_items = items.filter(state=ReviewItem.State.OPEN)
    oldest = open_items.order_by("turn_at", "id").values_list("turn_at", flat=True).first()
    return {
        "size": open_items.count(),
        "oldest_queued_at": oldest,
        "oldest_age_seconds": (now - oldest).total_seconds() if oldest else None,
    }


def item_prior_reviews(item: ReviewItem) -> list[Review]:
    """What an adjudicator sees: the disagreeing decisions. Nobody else sees earlier ones,
    so that a second review stays independent."""
    if item.kind != ReviewItem.Kind.ADJUDICATION:
        return []
    return list(
        Review.objects.filter(output_id=item.output_id, item__is_audit=item.is_audit)
        .exclude(item=item)
        .select_related("reviewer", "item", "rubric")
        .order_by("decided_at", "id")
    )


def bulk_decision_count(items: QuerySet[ReviewItem]) -> int:
    """How many held outputs a bulk decision over these items would decide (audits never)."""
    return items.filter(is_audit=False).values("output_id").distinct().count()


HELD = Decision.PENDING_REVIEW.value


def draw_stratum(is_audit: bool, decision: str, withheld: bool) -> str:
    """The stratum an output under review was drawn from, each with its own inclusion
    probability: ``pending_review`` for a held output (always drawn, though backlog relief
    may since have delivered it), and for an audit the gate's decision (``approved`` or
    ``warning``). A would-be approval delivered as a warning (``withheld``) is an approved
    audit: drawn at the approved rate (gating.reviews.review_items_for) and reviewed in the
    same turn. A stratum of its own would split the outputs above the approve threshold
    into two weights wherever an estimated line approves part of them, and cost the bound
    its effective sample: at a team's scale, certification by day 30 fell from 21 to 11 of
    40 task types (bench.team_scale, seeds 3000-3009, 2026-12-01)."""
    if not is_audit:
        return HELD
    return Decision.APPROVED.value if withheld else decision


def draw_coverage(*, since: datetime, until: datetime) -> dict[tuple[int, str], tuple[int, int]]:
    """The outputs drawn for review in [since, until), held ones and audits, and how many of
    them had their first review before ``until``, as (drawn, decided), per (task type id,
    ``draw_stratum``).

    For the learning cycles: the inclusion probability an output achieved is its draw rate
    (1 for a held one) times the share of its stratum reviewed, since an output still
    waiting is no evidence yet (learning.statistics.sampling, the rule the learning cycles
    and the closed loop share). The first review is what counts, not the
    last round: whether an output gets a second review or an adjudication depends on what
    its first reviewer found, so waiting for the last round would leave out above all the
    outputs found at fault. A bulk decision is one lead's call on many outputs, which the
    cycles leave out: its outputs count as drawn and not reviewed.
    """
    first_review = Review.objects.filter(item=OuterRef("pk"), is_bulk=False, decided_at__lt=until)
    rows = (
        ReviewItem.objects.filter(queued_at__gte=since, queued_at__lt=until)
        .filter(Q(kind=Kind.AUDIT, is_audit=True) | Q(kind=Kind.REVIEW))
        .values("task_type_id", "is_audit", "output__decision", "output__withheld")
        .annotate(created=Count("id"), decided=Count("id", filter=Q(Exists(first_review))))
    )
    coverage: dict[tuple[int, str], tuple[int, int]] = {}
    for row in rows:
        stratum = draw_stratum(row["is_audit"], row["output__decision"], row["output__withheld"])
        key = (row["task_type_id"], stratum)
        # Held outputs since delivered by backlog relief differ in decision, not stratum.
        drawn, decided = coverage.get(key, (0, 0))
        coverage[key] = (drawn + row["created"], decided + row["decided"])
    return coverage
