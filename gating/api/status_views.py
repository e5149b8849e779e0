"""An output's status, for gateways that wait for a reviewer's decision.

A waiting client asks again and again, so each ask must cost the server little: one
indexed query (the primary key) reading five columns, a body of a few dozen bytes, no
serializer, no broker. The answer carries an ETag, and a client that sends it back in
If-None-Match while nothing has changed gets a 304 with no body. ``Cache-Control:
private, no-cache`` lets the client (or a private cache) keep the answer but makes it
ask again each time: the decision can arrive at any moment.
"""

from __future__ import annotations

import hashlib
from datetime import datetime

import pydantic_core
from django.db.models import Case, F, When
from django.http import Http404
from django.utils.http import parse_etags
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from pydantic import Field
from rest_framework import status
from rest_framework.decorators import api_view, permission_classes, renderer_classes
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response

from gating import selectors
from gating.api.permissions import require_perm
from gating.api.responses import RENDERERS, ResponseModel
from gating.models import Output
from gating.scoring import Decision

CACHE_CONTROL = "private, no-cache"


class OutputStatus(ResponseModel):
    """Where an output stands: the gate's decision, and the final status once decided."""

    id: int
    decision: Decision = Field(description="The gate's decision when the output came in.")
    status: Output.Status = Field(description="`pending` until a reviewer decides; then final.")
    modified_output: str | None = Field(
        description="The reviewer's text when the status is `modified`; null otherwise "
        "(an approved output is delivered as it was sent)."
    )
    decided_at: datetime | None = Field(description="When the status became final.")


def output_status_of(*, user, output_id: int) -> OutputStatus | None:
    """The status of one output the user may see; None when there is none such."""
    row = (
        selectors.outputs_visible_to(user)
        .filter(pk=output_id)
        .annotate(
            # Only a modified output's text: an approved one's is the text the gateway sent,
            # which it has, and need not travel again on every poll.
            modified_output=Case(
                When(status=Output.Status.MODIFIED, then=F("final_output_text")), default=None
            )
        )
        .values("id", "decision", "status", "modified_output", "decided_at")
        .first()
    )
    return None if row is None else OutputStatus(**row)


def etag_of(answer: OutputStatus) -> str:
    """A strong ETag: the digest of the body, so that it changes exactly when the body does."""
    digest = hashlib.sha256(pydantic_core.to_json(answer)).hexdigest()[:32]
    return f'"{digest}"'


def matches(if_none_match: str, etag: str) -> bool:
    """RFC 9110's If-None-Match: ``*``, or any listed tag equal by weak comparison."""
    if not if_none_match:
        return False
    tags = parse_etags(if_none_match)
    return "*" in tags or any(tag.removeprefix("W/") == etag for tag in tags)


@extend_schema(
    summary="An output's decision and status, cheaply, for polling while a reviewer decides",
    description="Send the ETag of the last answer in If-None-Match: 304 with no body while "
    "nothing has changed.",
    parameters=[
        OpenApiParameter(
            "If-None-Match",
            OpenApiTypes.STR,
            location=OpenApiParameter.HEADER,
            required=False,
            description="The ETag of an earlier answer.",
        )
    ],
    responses={
        200: OutputStatus,
        304: OpenApiResponse(description="Unchanged since the answer whose ETag was sent."),
    },
)
@api_view(["GET"])
@permission_classes([IsAuthenticated, require_perm("gating.view_output")])
@renderer_classes(RENDERERS)
def output_status(request, pk: int):
    answer = output_status_of(user=request.user, output_id=pk)
    if answer is None:
        raise Http404
    etag = etag_of(answer)
    headers = {"ETag": etag, "Cache-Control": CACHE_CONTROL}
    if matches(request.headers.get("If-None-Match", ""), etag):
        return Response(status=status.HTTP_304_NOT_MODIFIED, headers=headers)
    return Response(answer, headers=headers)
