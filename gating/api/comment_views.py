"""An output's comments: its thread, oldest first, and a new comment on it.

For reviewers, leads and admins; a gateway's token is refused (it has neither permission).
"""

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.decorators import (
    api_view,
    parser_classes,
    permission_classes,
    renderer_classes,
)
from rest_framework.parsers import JSONParser
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response

from gating import comments, selectors
from gating.api.permissions import require_perm
from gating.api.responses import RENDERERS, CommentAnswer, CommentThread
from gating.api.serializers import CommentInput

# Reading the thread takes gating.view_comment; adding to it, gating.add_comment as well.
_CAN_COMMENT = [
    IsAuthenticated,
    require_perm("gating.view_comment"),
    require_perm("gating.add_comment", unsafe_only=True),
]


@extend_schema(
    methods=["GET"],
    summary="An output's comments, oldest first",
    responses={200: CommentThread},
)
@extend_schema(
    methods=["POST"],
    summary="Comment on an output",
    description="Plain text, stripped of surrounding white space; shown escaped, never as "
    "HTML or Markdown.",
    request=CommentInput,
    responses={201: CommentAnswer},
)
@api_view(["GET", "POST"])
@permission_classes(_CAN_COMMENT)
@parser_classes([JSONParser])
@renderer_classes(RENDERERS)
def output_comments(request, pk: int):
    output = get_object_or_404(selectors.outputs_visible_to(request.user), pk=pk)
    if request.method == "GET":
        thread = comments.comments_of(output)
        return Response(CommentThread([CommentAnswer.of(c) for c in thread]))
    body = CommentInput(data=request.data)
    body.is_valid(raise_exception=True)
    comment = comments.comment_add(
        output=output, author=request.user, text=body.validated_data["text"]
    )
    return Response(CommentAnswer.of(comment), status=status.HTTP_201_CREATED)
