import gc
from contextlib import contextmanager

from django.db import transaction
from django.shortcuts import get_object_or_404
from django.utils.http import parse_header_parameters
from drf_spectacular.utils import (
    OpenApiResponse,
    PolymorphicProxySerializer,
    extend_schema,
    extend_schema_view,
)
from pydantic import ValidationError as PydanticValidationError
from rest_framework import generics, status
from rest_framework.decorators import api_view, permission_classes, renderer_classes
from rest_framework.exceptions import UnsupportedMediaType, ValidationError
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response

from gating import selectors, services, tracing
from gating.api.filters import OutputFilter
from gating.api.pagination import OutputCursorPagination
from gating.api.permissions import require_perm
from gating.api.responses import (
    BATCH_RENDERERS,
    COMPACT_MEDIA_TYPE,
    RENDERERS,
    BatchConflict,
    BatchErrors,
    BatchResult,
    CompactBatchResult,
    CompactOutputResult,
    Detail,
    OutputResult,
    Ping,
)
from gating.api.serializers import GatewayTaskTypeSerializer, TaskTypeSerializer
from gating.models import Output, TaskType
from gating.submissions import (
    BatchSubmission,
    OutputSubmission,
    format_batch_errors,
    format_errors,
)

_CONFLICT = OpenApiResponse(
    Detail, description="external_id reused with a different body; nothing stored."
)


def _gate_span(name: str, request):
    return tracing.gate_span(
        name, method=request.method, route=request.path, headers=request.headers
    )


def _json_body(request) -> bytes:
    """The raw body of a JSON request, which pydantic parses itself; 415 for any other
    media type. JSON is UTF-8 (RFC 8259), so another charset is refused rather than misread."""
    media_type, params = parse_header_parameters(request.content_type or "")
    if media_type != "application/json" or params.get("charset", "utf-8").lower() != "utf-8":
        raise UnsupportedMediaType(request.content_type or "none")
    return request.body


@extend_schema_view(
    get=extend_schema(summary="List outputs", responses={200: OutputResult}),
    post=extend_schema(
        summary="Submit one output to the gate",
        description="The same external_id again answers 200 with the stored answer if the "
        "body is the same, and 409 if not.",
        request=OutputSubmission,
        responses={201: OutputResult, 200: OutputResult, 409: _CONFLICT},
    ),
)
class OutputCollection(generics.ListAPIView):
    filterset_class = OutputFilter
    pagination_class = OutputCursorPagination
    renderer_classes = RENDERERS
    # DRF's OPTIONS answer describes a write from its serializer, and the ingest has a
    # pydantic model instead (in the schema): OPTIONS is a 405 rather than a 500.
    metadata_class = None

    def get_permissions(self):
        needed = "gating.add_output" if self.request.method == "POST" else "gating.view_output"
        return [IsAuthenticated(), require_perm(needed)()]

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):
            return Output.objects.none()
        return selectors.outputs_visible_to(self.request.user)

    def list(self, request, *args, **kwargs):
        page = self.paginate_queryset(self.filter_queryset(self.get_queryset()))
        return self.get_paginated_response([OutputResult.of(output) for output in page])

    def post(self, request):
        with _gate_span("gatehouse.gate", request) as span:
            try:
                submission = OutputSubmission.model_validate_json(_json_body(request))
            except PydanticValidationError as exc:
                raise ValidationError(format_errors(exc.errors(include_url=False))) from exc
            result = services.output_ingest(
                source=request.user, submission=submission, trace_id=span.trace_id
            )
            output = result.output
            span.record_output(
                model=output.model,
                task_type=output.task_type.name,
                decision=output.decision,
                score=output.score,
            )
            answer = status.HTTP_201_CREATED if result.created else status.HTTP_200_OK
            span.record_status(answer)
            return Response(OutputResult.of(output), status=answer)


def _batch_answer(request) -> type[BatchResult] | type[CompactBatchResult]:
    if request.accepted_renderer.media_type == COMPACT_MEDIA_TYPE:
        return CompactBatchResult
    return BatchResult


@contextmanager
def _collector_paused():
    """Python's cycle collector off while a batch is parsed, scored and answered.

    A batch makes some 170,000 container objects, which set the collector off hundreds of
    times, full collections of the whole heap among them: measured, that tripled the
    parse. Almost all of them are freed by reference counting when the request ends, and
    the collector, on again, takes any cycle among them later.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


@extend_schema(
    summary="Submit up to 1,000 outputs: all are stored or none",
    description="201 when any output is new, 200 when every one is a replay.",
    request=BatchSubmission,
    responses={
        # Accept: application/json (or nothing) answers every output as GET does; the
        # compact media type each output's id, external_id, task type and decision only.
        (201, "application/json"): BatchResult,
        (201, COMPACT_MEDIA_TYPE): CompactBatchResult,
        (200, "application/json"): BatchResult,
        (200, COMPACT_MEDIA_TYPE): CompactBatchResult,
        400: OpenApiResponse(BatchErrors, description="Each bad item under its index."),
        409: OpenApiResponse(
            BatchConflict,
            description="Items reuse an external_id with a different body (their indexes), "
            "or another request stored some at the same time; nothing stored.",
        ),
    },
)
@api_view(["POST"])
@permission_classes([IsAuthenticated, require_perm("gating.add_output")])
@renderer_classes(BATCH_RENDERERS)
def output_batch_create(request):
    with _gate_span("gatehouse.gate_batch", request) as span, _collector_paused():
        # The batch's objects are gone by the time the collector is on again: only the
        # answer is left for it to look at.
        return _batch_ingest(request, span)


def _batch_ingest(request, span: tracing.GateSpan) -> Response:
    answer_model = _batch_answer(request)
    try:
        batch = BatchSubmission.model_validate_json(_json_body(request))
    except PydanticValidationError as exc:
        raise ValidationError(format_batch_errors(exc.errors(include_url=False))) from exc
    if repeated := batch.repeated_external_ids():
        raise ValidationError(repeated)
    results = services.output_ingest_batch(
        source=request.user, submissions=batch.outputs, trace_id=span.trace_id
    )
    span.record_batch((r.output.model, r.output.task_type.name, r.output.decision) for r in results)
    answer = status.HTTP_201_CREATED if any(r.created for r in results) else status.HTTP_200_OK
    span.record_status(answer)
    item = CompactOutputResult if answer_model is CompactBatchResult else OutputResult
    return Response(answer_model(outputs=[item.of(r.output) for r in results]), status=answer)


@extend_schema(summary="One output, with its final status", responses={200: OutputResult})
@api_view(["GET"])
@permission_classes([IsAuthenticated, require_perm("gating.view_output")])
@renderer_classes(RENDERERS)
def output_detail(request, pk: int):
    output = get_object_or_404(selectors.outputs_visible_to(request.user), pk=pk)
    return Response(OutputResult.of(output))


def _task_type_answer(many: bool) -> PolymorphicProxySerializer:
    return PolymorphicProxySerializer(
        component_name="TaskTypeAnswer",
        serializers=[TaskTypeSerializer, GatewayTaskTypeSerializer],
        resource_type_field_name=None,
        many=many,
    )


class _TaskTypeDoor:
    """The task types the user may see (selectors.task_types_visible_to), in the shape its
    role sees them: a gateway, GatewayTaskTypeSerializer's fields; staff roles, all."""

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):
            return TaskType.objects.none()
        return selectors.task_types_visible_to(self.request.user)

    def get_serializer_class(self):
        if self.request.method == "GET" and not selectors.sees_every_gateway(self.request.user):
            return GatewayTaskTypeSerializer
        return TaskTypeSerializer


@extend_schema_view(get=extend_schema(responses={200: _task_type_answer(many=True)}))
class TaskTypeList(_TaskTypeDoor, generics.ListAPIView):
    permission_classes = [IsAuthenticated, require_perm("gating.view_tasktype")]
    pagination_class = None


@extend_schema_view(get=extend_schema(responses={200: _task_type_answer(many=False)}))
class TaskTypeDetail(_TaskTypeDoor, generics.RetrieveUpdateAPIView):
    lookup_field = "name"
    http_method_names = ["get", "patch", "head", "options"]
    permission_classes = [
        IsAuthenticated,
        require_perm("gating.view_tasktype"),
        require_perm("gating.change_tasktype", unsafe_only=True),
    ]

    def perform_update(self, serializer):
        changes = dict(serializer.validated_data)
        reason = changes.pop("reason", "")
        shared = changes.pop("shared", None)
        with transaction.atomic():
            if shared is not None:
                services.task_type_share(
                    task_type=serializer.instance, shared=shared, actor=self.request.user
                )
            # The service answers with the row as stored, which the response shows.
            serializer.instance = services.gate_settings_change(
                task_type=serializer.instance,
                changes=changes,
                actor=self.request.user,
                reason=reason,
                source=services.EditSource.API,
            )


@extend_schema(
    summary="Authenticated no-op: the framework's ceiling for benchmarks",
    responses={200: Ping},
)
@api_view(["GET"])
@renderer_classes(RENDERERS)
def ping(request):
    return Response(Ping(ok=True))
