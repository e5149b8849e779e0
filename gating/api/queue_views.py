"""The reviewers' API: list, claim, heartbeat, release, decide; bulk decisions for leads.

The review pages call these same endpoints (with the session and a CSRF token)."""

from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import generics, status
from rest_framework.decorators import (
    api_view,
    parser_classes,
    permission_classes,
    renderer_classes,
)
from rest_framework.exceptions import ValidationError
from rest_framework.parsers import FormParser, JSONParser
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response

from gating import reviews, selectors
from gating.api.filters import (
    NAMES_SCHEMA,
    SCORE_SCHEMA,
    ReviewItemFilter,
    queue_filter_data,
    queue_filterset,
)
from gating.api.pagination import QueueCursorPagination
from gating.api.permissions import require_perm
from gating.api.responses import (
    RENDERERS,
    BulkDecisionResult,
    ClaimedItem,
    Detail,
    Lease,
    QueueEntry,
    QueueSummary,
    ReviewResult,
)
from gating.api.serializers import BulkDecisionSerializer, DecisionSerializer, QueueFilters
from gating.api.strict import NoFields
from gating.models import ReviewItem
from gating.scorers.interval import WIDE_INTERVAL

_CAN_REVIEW = [IsAuthenticated, require_perm("gating.review_items")]
_FILTER_PARAMS = [
    OpenApiParameter(
        "task_type",
        NAMES_SCHEMA,
        explode=True,
        description="Task type names, repeated: any of them",
    ),
    OpenApiParameter(
        "model", NAMES_SCHEMA, explode=True, description="Models, repeated: any of them"
    ),
    OpenApiParameter("score_min", SCORE_SCHEMA, description="Score at least this"),
    OpenApiParameter("score_max", SCORE_SCHEMA, description="Score below this"),
    OpenApiParameter("kind", str, enum=ReviewItem.Kind.values),
    OpenApiParameter(
        "uncertain",
        str,
        enum=["true", "false"],
        description="true: only outputs whose confidence interval (the interval scorer's) is "
        f"at least {WIDE_INTERVAL:g} points wide, uncertain and worth investigating; false: "
        "only the others.",
    ),
]
# JSON for API clients; form-encoded for the pages' htmx forms.
_PARSERS = [JSONParser, FormParser]
_CONFLICT = OpenApiResponse(
    Detail, description="Decided already, or you do not hold the item's claim; nothing changed."
)


def _filtered_items(data, items: QuerySet[ReviewItem] | None = None) -> QuerySet[ReviewItem]:
    """The open queue (or ``items``) narrowed by the filters in ``data``; 400 naming each
    bad filter."""
    filterset = queue_filterset(data) if items is None else ReviewItemFilter(data, items)
    if not filterset.is_valid():
        raise ValidationError(filterset.errors)
    return filterset.qs


def _items_filtered_by(request, body) -> QuerySet[ReviewItem]:
    """The open queue under the filters of the query string and of the (already validated)
    body, where the pages' forms post them. Both apply: a filter given in each narrows to
    what meets both, and neither is overridden unchecked."""
    items = _filtered_items(request.query_params)
    sent = queue_filter_data(body.initial_data)
    return _filtered_items(sent, items) if sent else items


def _valid_body(serializer_class, request):
    body = serializer_class(data=request.data)
    body.is_valid(raise_exception=True)
    return body


@extend_schema(
    summary="The open queue, oldest first",
    parameters=_FILTER_PARAMS,
    responses={200: QueueEntry},
)
class QueueList(generics.ListAPIView):
    permission_classes = _CAN_REVIEW
    pagination_class = QueueCursorPagination
    renderer_classes = RENDERERS
    filter_backends = []

    def get_queryset(self):
        return _filtered_items(self.request.query_params).select_related("task_type", "claimed_by")

    def list(self, request, *args, **kwargs):
        page = self.paginate_queryset(self.get_queryset())
        now = timezone.now()
        return self.get_paginated_response([QueueEntry.of(item, now=now) for item in page])


@extend_schema(
    summary="Queue size and the age of its oldest item",
    parameters=_FILTER_PARAMS,
    responses={200: QueueSummary},
)
@api_view(["GET"])
@permission_classes(_CAN_REVIEW)
@renderer_classes(RENDERERS)
def queue_summary(request):
    items = _filtered_items(request.query_params)
    return Response(QueueSummary(**selectors.queue_summary(items, now=timezone.now())))


@extend_schema(
    summary="Claim the next item (or get the one you hold)",
    description="Takes the oldest open item matching the filters (in the query string, or "
    "in the body as the pages' forms send them) under a lease of REVIEW_LEASE_SECONDS; the "
    "oldest audit instead while audits are under REVIEW_AUDIT_SHARE of your claims of the "
    "last hour. While you hold a live lease, claiming again returns that item.",
    parameters=_FILTER_PARAMS,
    request=QueueFilters,
    responses={200: ClaimedItem, 204: OpenApiResponse(description="Nothing left to claim.")},
)
@api_view(["POST"])
@permission_classes(_CAN_REVIEW)
@parser_classes(_PARSERS)
@renderer_classes(RENDERERS)
def queue_claim(request):
    items = _items_filtered_by(request, _valid_body(QueueFilters, request))
    # The answer is built in the claim's transaction: one that cannot be built undoes the
    # claim, rather than leave the item under a lease its reviewer never saw.
    with transaction.atomic():
        item = reviews.item_claim(reviewer=request.user, items=items)
        if item is None:
            return Response(status=status.HTTP_204_NO_CONTENT)
        prior_reviews = selectors.item_prior_reviews(item)
        answer = ClaimedItem.of(item, now=timezone.now(), prior_reviews=prior_reviews)
    return Response(answer)


@extend_schema(
    summary="Renew your lease on an item",
    request=NoFields,
    responses={200: Lease, 409: _CONFLICT},
)
@api_view(["POST"])
@permission_classes(_CAN_REVIEW)
@parser_classes(_PARSERS)
@renderer_classes(RENDERERS)
def queue_heartbeat(request, item_id: int):
    _valid_body(NoFields, request)
    item = reviews.item_heartbeat(item_id=item_id, reviewer=request.user)
    return Response(Lease(id=item.pk, lease_expires_at=item.lease_expires_at))


@extend_schema(
    summary="Give an item back to the queue (skip)",
    request=NoFields,
    responses={204: None, 409: _CONFLICT},
)
@api_view(["POST"])
@permission_classes(_CAN_REVIEW)
@parser_classes(_PARSERS)
def queue_release(request, item_id: int):
    _valid_body(NoFields, request)
    reviews.item_release(item_id=item_id, reviewer=request.user)
    return Response(status=status.HTTP_204_NO_CONTENT)


@extend_schema(
    summary="Decide the item you hold: approve, modify or reject",
    request=DecisionSerializer,
    responses={201: ReviewResult, 409: _CONFLICT},
)
@api_view(["POST"])
@permission_classes(_CAN_REVIEW)
@parser_classes(_PARSERS)
@renderer_classes(RENDERERS)
def queue_decision(request, item_id: int):
    data = _valid_body(DecisionSerializer, request).validated_data
    review = reviews.item_decide(
        item_id=item_id,
        reviewer=request.user,
        decision=reviews.DecisionInput(
            action=data["action"],
            edited_output=data.get("output"),
            reason=data["reason"],
            note=data["note"],
            style_only=data["style_only"],
            scores=data["scores"],
            rubric_version=data.get("rubric_version"),
        ),
    )
    return Response(ReviewResult.of(review), status=status.HTTP_201_CREATED)


@extend_schema(
    summary="Decide every held output matching the filters (leads)",
    description="Approve or reject at once, with a required reason. Each decision is marked "
    "as bulk and audit-logged; the learning cycles leave bulk decisions out. "
    "With dry_run, only counts. The filters come in the query string or the body.",
    parameters=_FILTER_PARAMS,
    request=BulkDecisionSerializer,
    responses={200: BulkDecisionResult},
)
@api_view(["POST"])
@permission_classes([IsAuthenticated, require_perm("gating.bulk_decide")])
@parser_classes(_PARSERS)
@renderer_classes(RENDERERS)
def queue_bulk_decision(request):
    body = _valid_body(BulkDecisionSerializer, request)
    data = body.validated_data
    items = _items_filtered_by(request, body)
    if data["dry_run"]:
        matched = selectors.bulk_decision_count(items)
        return Response(BulkDecisionResult(outputs=matched, dry_run=True))
    decided = reviews.bulk_decide(
        lead=request.user, items=items, action=data["action"], reason=data["reason"]
    )
    return Response(BulkDecisionResult(outputs=decided, dry_run=False))
