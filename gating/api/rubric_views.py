"""A task type's rubric: the version in force, every version, and a new version (admins).

Reviewers, leads and admins read it; a gateway's token is refused (it has no permission).
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

from gating import rubrics
from gating.api.permissions import require_perm
from gating.api.responses import RENDERERS, RubricAnswer, RubricVersions
from gating.api.serializers import RubricInput
from gating.exceptions import NotFound
from gating.models import Rubric, TaskType

_CAN_READ = [IsAuthenticated, require_perm("gating.view_rubric")]
_CAN_EDIT = [*_CAN_READ, require_perm("gating.add_rubric", unsafe_only=True)]


@extend_schema(
    methods=["GET"],
    summary="A task type's rubric in force",
    description="404 while the task type has none.",
    responses={200: RubricAnswer},
)
@extend_schema(
    methods=["PUT"],
    summary="Save a task type's rubric as its next version (admins)",
    description="Audited. Reviews keep the version they were scored against. A body equal to "
    "the version in force stores nothing and answers 200 with it; a new version answers 201.",
    request=RubricInput,
    responses={200: RubricAnswer, 201: RubricAnswer},
)
@api_view(["GET", "PUT"])
@permission_classes(_CAN_EDIT)
@parser_classes([JSONParser])
@renderer_classes(RENDERERS)
def task_type_rubric(request, name: str):
    task_type = get_object_or_404(TaskType, name=name)
    if request.method == "GET":
        rubric = rubrics.rubric_in_force(task_type.pk)
        if rubric is None:
            raise NotFound(f"Task type {name} has no rubric yet.")
        return Response(RubricAnswer.of(rubric))
    body = RubricInput(data=request.data)
    body.is_valid(raise_exception=True)
    rubric, created = rubrics.rubric_save(
        task_type=task_type,
        instructions=body.validated_data["instructions"],
        dimensions=body.validated_data["dimensions"],
        actor=request.user,
    )
    return Response(
        RubricAnswer.of(rubric), status=status.HTTP_201_CREATED if created else status.HTTP_200_OK
    )


@extend_schema(
    summary="Every version of a task type's rubric, newest first", responses={200: RubricVersions}
)
@api_view(["GET"])
@permission_classes(_CAN_READ)
@renderer_classes(RENDERERS)
def task_type_rubric_versions(request, name: str):
    task_type = get_object_or_404(TaskType, name=name)
    versions = (
        Rubric.objects.filter(task_type=task_type)
        .select_related("task_type", "created_by")
        .order_by("-version")
    )
    return Response(RubricVersions([RubricAnswer.of(r) for r in versions]))
