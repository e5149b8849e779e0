"""Datasets of reviewed outputs: list, create, add and remove outputs by hand, snapshot a
version, export one (docs/datasets.md). For leads and admins; reviewers and gateways are
refused (403), as a dataset is every gateway's texts in bulk. The rules are
learning.datasets'; these views read the request and answer."""

from django.conf import settings
from django.http import StreamingHttpResponse
from django.shortcuts import get_object_or_404
from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    extend_schema_field,
)
from rest_framework import serializers, status
from rest_framework.decorators import api_view, permission_classes, renderer_classes
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response

from gating.api.permissions import require_perm
from gating.api.responses import RENDERERS
from gating.api.strict import NoFields, StrictSerializer
from learning import dataset_formats, datasets
from learning.api.responses import (
    DatasetAnswer,
    Datasets,
    DatasetVersionAnswer,
    DatasetVersions,
    OutputsAdded,
)
from learning.models import Dataset, DatasetVersion

_CAN_VIEW = [IsAuthenticated, require_perm("learning.view_dataset")]
_CAN_CREATE = [*_CAN_VIEW, require_perm("learning.add_dataset", unsafe_only=True)]
_CAN_CHANGE = [*_CAN_VIEW, require_perm("learning.change_dataset", unsafe_only=True)]
MAX_ID = 2**63 - 1

_TIMESTAMP = {"type": "string", "format": "date-time"}
_SCORE_BOUND = {"type": "number", "minimum": -1_000_000, "maximum": 1_000_000}


NO_NUL = "^[^\u0000]*$"


def _names(values, max_length: int) -> dict:
    items = {"type": "string", "minLength": 1, "maxLength": max_length, "pattern": NO_NUL}
    if values is not None:
        items = {"type": "string", "enum": list(values)}
    return {"type": "array", "items": items, "minItems": 1, "maxItems": datasets.MAX_LIST}


FILTER_SCHEMA = {
    "type": ["object", "null"],
    "additionalProperties": False,
    "description": "Which settled outputs the dataset takes, every key optional (AND "
    "between keys, OR within a list); {} takes every settled output, null only the "
    "hand-added ones. task_types by name; labels: the final status; reject_reasons: the "
    "deciding review's; agreement: single (one review), agreed (a second review agreed), "
    "adjudicated; scores: conditions on the deciding review's rubric scores; "
    "decided_after (included) and decided_before (excluded) on the output's decision time.",
    "properties": {
        "task_types": _names(None, 100),
        "labels": _names(datasets.SETTLED, 0),
        "reject_reasons": _names(settings.REVIEW_REJECT_REASONS, 0),
        "agreement": _names(datasets.AGREEMENT, 0),
        "scores": {
            "type": "array",
            "minItems": 1,
            "maxItems": datasets.MAX_SCORE_CONDITIONS,
            "items": {
                "oneOf": [
                    {
                        "type": "object",
                        "additionalProperties": False,
                        "required": ["dimension", "equals"],
                        "properties": {
                            "dimension": {"type": "string", "pattern": "^[a-z][a-z0-9_]{0,39}$"},
                            "equals": {
                                "oneOf": [
                                    {
                                        "type": "string",
                                        "minLength": 1,
                                        "maxLength": 40,
                                        "pattern": NO_NUL,
                                    },
                                    {"type": "boolean"},
                                    _SCORE_BOUND,
                                ]
                            },
                        },
                    },
                    {
                        "type": "object",
                        "additionalProperties": False,
                        "required": ["dimension"],
                        "minProperties": 2,
                        "properties": {
                            "dimension": {"type": "string", "pattern": "^[a-z][a-z0-9_]{0,39}$"},
                            "min": _SCORE_BOUND,
                            "max": _SCORE_BOUND,
                        },
                    },
                ]
            },
        },
        "decided_after": _TIMESTAMP,
        "decided_before": _TIMESTAMP,
    },
}


@extend_schema_field(FILTER_SCHEMA)
class FilterField(serializers.JSONField):
    """Checked by learning.datasets.filter_clean, which names the key at fault."""

    json_type = ((dict, type(None)), "Must be a JSON object or null.")


@extend_schema_field(
    {
        "type": "array",
        "items": {"type": "string", "enum": list(dataset_formats.FIELDS)},
        "minItems": 1,
        "uniqueItems": True,
    }
)
class FieldsField(serializers.JSONField):
    json_type = ((list,), "Must be a JSON list of field names.")


@extend_schema_field(
    {
        "type": "array",
        "items": {"type": "integer", "minimum": 1, "maximum": MAX_ID},
        "minItems": 1,
        "maxItems": datasets.MAX_OUTPUTS_PER_CALL,
    }
)
class OutputIdsField(serializers.JSONField):
    json_type = ((list,), "Must be a JSON list of output ids.")

    def to_internal_value(self, data):
        value = super().to_internal_value(data)
        if not 1 <= len(value) <= datasets.MAX_OUTPUTS_PER_CALL:
            raise serializers.ValidationError(
                f"From 1 to {datasets.MAX_OUTPUTS_PER_CALL} output ids."
            )
        for pk in value:
            if not isinstance(pk, int) or isinstance(pk, bool):
                # gating.api.strict's words: 4.0 is a number, not an integer, in JSON here.
                raise serializers.ValidationError("Must be a JSON integer.")
            if not 1 <= pk <= MAX_ID:
                raise serializers.ValidationError(f"Each an integer from 1 to {MAX_ID}.")
        return value


@extend_schema_field(
    {
        "type": "string",
        "minLength": 1,
        "maxLength": datasets.NAME_MAX,
        "pattern": r"^[^\s\u0000](?:[^\u0000]*[^\s\u0000])?$",
        "description": "Unique; no spaces at either end.",
    }
)
class DatasetNameField(serializers.CharField):
    pass


@extend_schema_field({"type": "string", "maxLength": datasets.DESCRIPTION_MAX, "pattern": NO_NUL})
class DescriptionField(serializers.CharField):
    pass


class DatasetInput(StrictSerializer):
    """A new dataset: its name, its filter, and the fields its rows carry."""

    name = DatasetNameField(max_length=datasets.NAME_MAX, trim_whitespace=False)
    description = DescriptionField(
        max_length=datasets.DESCRIPTION_MAX,
        allow_blank=True,
        trim_whitespace=False,
        required=False,
        default="",
    )
    filter = FilterField(allow_null=True)
    fields = FieldsField(
        required=False,
        default=list(dataset_formats.FIELDS),
        help_text="The row fields, any of them (default: all).",
    )


class OutputIdsInput(StrictSerializer):
    """Outputs to add by hand: each must have its label settled by a person's review."""

    output_ids = OutputIdsField()


def _dataset(pk: int) -> Dataset:
    return get_object_or_404(datasets.datasets_listed(), pk=pk)


def _version_answer(request, version: DatasetVersion) -> DatasetVersionAnswer:
    exports = {
        name: request.build_absolute_uri(
            reverse(
                "api-dataset-export",
                kwargs={"pk": version.dataset_id, "number": version.number, "export_format": name},
            )
        )
        for name in dataset_formats.FORMATS
        if dataset_formats.format_problem(name, version.fields) is None
    }
    return DatasetVersionAnswer(
        number=version.number,
        row_count=version.row_count,
        filter=version.filter,
        fields=version.fields,
        created_by=version.created_by.username if version.created_by else None,
        created_at=version.created_at,
        exports=exports,
    )


@extend_schema(
    methods=["GET"],
    operation_id="datasets_list",
    summary="Every dataset",
    responses={200: Datasets},
)
@extend_schema(
    methods=["POST"],
    operation_id="datasets_create",
    summary="Create a dataset",
    description="Audited. The filter is saved, not applied: a version (POST "
    "/api/v1/datasets/{id}/versions/) takes the outputs it matches then.",
    request=DatasetInput,
    responses={201: DatasetAnswer},
)
@api_view(["GET", "POST"])
@permission_classes(_CAN_CREATE)
@renderer_classes(RENDERERS)
def dataset_collection(request):
    if request.method == "GET":
        return Response(Datasets([DatasetAnswer.of(d) for d in datasets.datasets_listed()]))
    body = DatasetInput(data=request.data)
    body.is_valid(raise_exception=True)
    created = datasets.dataset_create(**body.validated_data, actor=request.user)
    return Response(DatasetAnswer.of(_dataset(created.pk)), status=status.HTTP_201_CREATED)


@extend_schema(
    operation_id="datasets_retrieve", summary="A dataset", responses={200: DatasetAnswer}
)
@api_view(["GET"])
@permission_classes(_CAN_VIEW)
@renderer_classes(RENDERERS)
def dataset_detail(request, pk: int):
    return Response(DatasetAnswer.of(_dataset(pk)))


@extend_schema(
    operation_id="datasets_outputs_add",
    summary="Add outputs to a dataset by hand",
    description="Audited. Each output must have its label settled by a person's review "
    "(docs/datasets.md); otherwise 400 names them and nothing is added. Outputs in "
    "already are left as they are.",
    request=OutputIdsInput,
    responses={200: OutputsAdded},
)
@api_view(["POST"])
@permission_classes(_CAN_CHANGE)
@renderer_classes(RENDERERS)
def dataset_outputs_add(request, pk: int):
    dataset = _dataset(pk)
    body = OutputIdsInput(data=request.data)
    body.is_valid(raise_exception=True)
    added = datasets.outputs_add(
        dataset=dataset, output_ids=body.validated_data["output_ids"], actor=request.user
    )
    return Response(OutputsAdded(added=added))


@extend_schema(
    operation_id="datasets_output_remove",
    summary="Take a hand-added output out of a dataset",
    description="Audited. 404 if the output was not added by hand (one the filter matches "
    "stays: change the filter). Versions taken already keep it.",
    request=None,
    responses={204: None},
)
@api_view(["DELETE"])
@permission_classes(_CAN_CHANGE)
@renderer_classes(RENDERERS)
def dataset_output_remove(request, pk: int, output_id: int):
    datasets.output_remove(dataset=_dataset(pk), output_id=output_id, actor=request.user)
    return Response(status=status.HTTP_204_NO_CONTENT)


@extend_schema(
    methods=["GET"],
    operation_id="datasets_versions_list",
    summary="A dataset's versions",
    responses={200: DatasetVersions},
)
@extend_schema(
    methods=["POST"],
    operation_id="datasets_versions_create",
    summary="Snapshot a dataset as its next version",
    description="Audited. Copies the rows of the outputs the dataset matches now; they do "
    "not change after, whatever happens to the reviews. Takes no body: a field sent is "
    "refused by name (the fields a version holds are the dataset's).",
    request=NoFields,
    responses={201: DatasetVersionAnswer},
)
@api_view(["GET", "POST"])
@permission_classes(_CAN_CHANGE)
@renderer_classes(RENDERERS)
def dataset_versions(request, pk: int):
    dataset = _dataset(pk)
    if request.method == "POST":
        NoFields(data=request.data).is_valid(raise_exception=True)
        version = datasets.version_create(dataset=dataset, actor=request.user)
        return Response(_version_answer(request, version), status=status.HTTP_201_CREATED)
    versions = dataset.versions.select_related("created_by").order_by("-number")
    return Response(DatasetVersions([_version_answer(request, v) for v in versions]))


_DOWNLOAD = OpenApiResponse(
    OpenApiTypes.BINARY,
    description="The version's rows, streamed: chat and eval as JSON Lines, csv (cells "
    "that would start a formula start with a '), parquet (a row group per 10,000 rows). "
    "The chat format leaves out rejected outputs, which have no assistant text.",
)


@extend_schema(
    operation_id="datasets_version_export",
    summary="Export a dataset version",
    description="Audited. Streamed in constant memory. 400 for the chat format where the "
    "version's fields lack input or corrected.",
    parameters=[
        OpenApiParameter(
            "export_format",
            str,
            OpenApiParameter.PATH,
            enum=list(dataset_formats.FORMATS),
            description="chat (JSONL messages), eval (JSONL), csv or parquet.",
        )
    ],
    responses={
        (200, "application/x-ndjson"): _DOWNLOAD,
        (200, "text/csv"): _DOWNLOAD,
        (200, "application/vnd.apache.parquet"): _DOWNLOAD,
    },
)
@api_view(["GET"])
@permission_classes(_CAN_VIEW)
@renderer_classes(RENDERERS)
def dataset_export(request, pk: int, number: int, export_format: str):
    version = get_object_or_404(
        DatasetVersion.objects.select_related("dataset"), dataset_id=pk, number=number
    )
    chunks = datasets.export_started(
        version=version, export_format=export_format, actor=request.user
    )
    response = StreamingHttpResponse(
        chunks, content_type=dataset_formats.CONTENT_TYPES[export_format]
    )
    filename = (
        f"{version.dataset.name}-v{version.number}.{dataset_formats.EXTENSIONS[export_format]}"
    )
    response["Content-Disposition"] = f'attachment; filename="{_safe(filename)}"'
    return response


def _safe(filename: str) -> str:
    # The name is a lead's text: only what cannot break the header.
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in filename)
