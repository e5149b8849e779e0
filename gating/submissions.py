"""The shape of an output as the gateway submits it, validated strictly.

pydantic validates in compiled code, which keeps the batch endpoint fast, and
drf-spectacular publishes these models in the OpenAPI schema, so the documented
shape and the enforced one cannot drift apart. The answers' models are in
gating.api.responses.
"""

from __future__ import annotations

import hashlib
import json
import math
from typing import Annotated, Any

import orjson
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    field_validator,
)

NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.:\-]*$"
MAX_TEXT_CHARS = 200_000

TaskTypeName = Annotated[str, StringConstraints(min_length=1, max_length=100, pattern=NAME_PATTERN)]


MAX_JSON_DEPTH = 32


_NUL_REFUSED = "must not contain NUL (\\u0000) characters"


def _no_nul(value: str) -> str:
    # PostgreSQL text and jsonb cannot hold NUL, so it is refused here, with the field named.
    if "\x00" in value:
        raise ValueError(_NUL_REFUSED)
    return value


def _plain_json(value: Any, depth: int = 0) -> Any:
    """Accept only JSON that every backend stores as sent: finite numbers, no NUL, bounded depth."""
    if depth > MAX_JSON_DEPTH:
        raise ValueError(f"is nested deeper than {MAX_JSON_DEPTH} levels")
    if isinstance(value, str):
        _no_nul(value)
    elif isinstance(value, float) and not math.isfinite(value):
        raise ValueError("must contain only finite numbers")
    elif isinstance(value, dict):
        for key, item in value.items():
            _no_nul(key)
            _plain_json(item, depth + 1)
    elif isinstance(value, list):
        for item in value:
            _plain_json(item, depth + 1)
    return value


# Text fields refuse NUL with a pattern rather than with _no_nul: pydantic checks a pattern
# in compiled code, and a batch holds thousands of text fields. _message words its error.
_NO_NUL_PATTERN = r"^[^\x00]*$"
SafeText = Annotated[str, StringConstraints(pattern=_NO_NUL_PATTERN)]


class _Strict(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid", allow_inf_nan=False, frozen=True)


class ValidatorResultIn(_Strict):
    name: Annotated[str, StringConstraints(min_length=1, max_length=100, pattern=NAME_PATTERN)]
    passed: bool
    detail: Annotated[SafeText, StringConstraints(max_length=2000)] = ""


class OutputSubmission(_Strict):
    external_id: Annotated[SafeText, StringConstraints(min_length=1, max_length=200)]
    task_type: TaskTypeName
    model: Annotated[SafeText, StringConstraints(min_length=1, max_length=200)]
    tier: Annotated[SafeText, StringConstraints(max_length=50)] = ""
    input: Annotated[SafeText, StringConstraints(max_length=MAX_TEXT_CHARS)]
    output: Annotated[SafeText, StringConstraints(max_length=MAX_TEXT_CHARS)]
    validators: Annotated[list[ValidatorResultIn], Field(max_length=100)]
    input_clarity: Annotated[float, Field(ge=0.0, le=1.0)]
    coherence: Annotated[float, Field(ge=0.0, le=1.0)]
    requires_fact_check: bool = False
    evidence: Annotated[Any, AfterValidator(_plain_json)] = None
    metadata: Annotated[dict[str, Any], AfterValidator(_plain_json)] = Field(default_factory=dict)

    @field_validator("external_id")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be blank")
        return value

    @field_validator("validators")
    @classmethod
    def _unique_names(cls, value: list[ValidatorResultIn]) -> list[ValidatorResultIn]:
        seen: set[str] = set()
        duplicates = sorted({v.name for v in value if v.name in seen or seen.add(v.name)})
        if duplicates:
            raise ValueError(f"duplicate validator names: {', '.join(duplicates)}")
        return value

    def fingerprint(self) -> str:
        """sha256 of the canonical submission: key order and whitespace do not matter."""
        return fingerprint(self.model_dump(mode="json"))

    def is_replay_of(self, request_hash: str) -> bool:
        """Whether a stored output with ``request_hash`` was submitted with this body."""
        dumped = self.model_dump(mode="json")
        # Outputs stored before the fingerprint moved to orjson carry the json module's
        # hash, which differs for non-ASCII text and some floats.
        return request_hash in (fingerprint(dumped), _json_module_fingerprint(dumped))


def fingerprint(dumped: dict[str, Any]) -> str:
    """An ``OutputSubmission.fingerprint`` from its ``model_dump(mode="json")``, for callers
    that need the dump anyway: sha256 of its JSON with sorted keys and no whitespace."""
    try:
        canonical = orjson.dumps(dumped, option=orjson.OPT_SORT_KEYS)
    except orjson.JSONEncodeError:
        # orjson refuses integers beyond 64 bits, which JSON (and evidence) may hold.
        canonical = _CANONICAL_JSON.encode(dumped).encode()
    return hashlib.sha256(canonical).hexdigest()


def _json_module_fingerprint(dumped: dict[str, Any]) -> str:
    return hashlib.sha256(_CANONICAL_JSON.encode(dumped).encode()).hexdigest()


_CANONICAL_JSON = json.JSONEncoder(sort_keys=True, separators=(",", ":"))


MAX_BATCH_OUTPUTS = 1000


class BatchSubmission(_Strict):
    outputs: Annotated[list[OutputSubmission], Field(min_length=1, max_length=MAX_BATCH_OUTPUTS)]

    def repeated_external_ids(self) -> dict[str, Any]:
        """Items that repeat an earlier item's external_id, in the batch error format."""
        first_index: dict[str, int] = {}
        items: dict[str, dict[str, list[str]]] = {}
        for index, item in enumerate(self.outputs):
            if item.external_id in first_index:
                items[str(index)] = {
                    "external_id": [f"Repeats item {first_index[item.external_id]} of this batch."]
                }
            first_index.setdefault(item.external_id, index)
        return {"outputs": items} if items else {}


def _message(error: dict) -> str:
    if error["type"] == "string_pattern_mismatch" and (
        error.get("ctx", {}).get("pattern") == _NO_NUL_PATTERN
    ):
        return _NUL_REFUSED
    if error["type"] == "extra_forbidden":
        return "Unknown field."
    if error["type"] == "json_invalid":
        return f"Malformed JSON: {error.get('ctx', {}).get('error', 'cannot parse')}."
    return error["msg"].removeprefix("Value error, ")


def _field_path(loc: tuple) -> str:
    return ".".join(str(part) for part in loc) or "non_field_errors"


def format_errors(errors: list[dict]) -> dict[str, list[str]]:
    """pydantic errors as DRF-style ``{"field.path": ["message"]}``."""
    by_field: dict[str, list[str]] = {}
    for error in errors:
        by_field.setdefault(_field_path(error["loc"]), []).append(_message(error))
    return by_field


def format_batch_errors(errors: list[dict]) -> dict[str, Any]:
    """Batch errors, each bad item under its index: ``{"outputs": {"3": {"coherence": [...]}}}``."""
    items: dict[str, dict[str, list[str]]] = {}
    other: dict[str, list[str]] = {}
    for error in errors:
        loc = error["loc"]
        if len(loc) >= 2 and loc[0] == "outputs" and isinstance(loc[1], int):
            fields = items.setdefault(str(loc[1]), {})
            fields.setdefault(_field_path(loc[2:]), []).append(_message(error))
        else:
            other.setdefault(_field_path(loc), []).append(_message(error))
    if items:
        other["outputs"] = items
    return other
