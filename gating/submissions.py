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
import re
from datetime import datetime
from enum import StrEnum
from typing import Annotated, Any, Union

import orjson
from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    Strict,
    StringConstraints,
    TypeAdapter,
    WithJsonSchema,
    field_validator,
    model_validator,
)
from typing_extensions import TypeAliasType

NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.:\-]*$"
NAME_REFUSED = "must be letters, digits and _ . : - only, beginning with a letter or digit"
MAX_TEXT_CHARS = 200_000

# Identifiers (external_id, model, tier; the names above too, by their stricter pattern) are
# what the gate is asked about again: a replay, a filter, a dashboard. They are stored as
# sent or refused, never trimmed: a 400 naming the field tells the gateway what is wrong,
# where a trimmed name would answer with a value it did not send, and a name with white
# space at an edge could never be found by a filter that strips it. Control characters
# (C0, DEL and C1, NUL included) are refused anywhere; white space (Unicode's White_Space,
# which is what Python's strip() removes, less the control characters) at either end.
# Written with \x and \u escapes only, which Rust's regex (pydantic), Python's re and
# ECMA-262 (the schema's readers) all read the same.
_CONTROL = r"\x00-\x1f\x7f-\x9f"
_WHITE_SPACE = r"\x20\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"
_EDGE = f"[^{_CONTROL}{_WHITE_SPACE}]"
# Empty, or an edge character alone, or edge characters around any others but control ones.
IDENTIFIER_PATTERN = f"^(?:{_EDGE}(?:[^{_CONTROL}]*{_EDGE})?)?$"
_IDENTIFIER = re.compile(IDENTIFIER_PATTERN)
_CONTROL_CHARACTER = re.compile(f"[{_CONTROL}]")
CONTROL_REFUSED = "must not contain control characters (U+0000 to U+001F, U+007F to U+009F)"
EDGE_SPACE_REFUSED = "must not begin or end with white space"


def identifier_problem(value: str) -> str | None:
    """Why ``value`` cannot be an identifier, or None: the one rule of the ingest and the
    query filters."""
    if _IDENTIFIER.fullmatch(value):
        return None
    return CONTROL_REFUSED if _CONTROL_CHARACTER.search(value) else EDGE_SPACE_REFUSED


Identifier = Annotated[str, StringConstraints(pattern=IDENTIFIER_PATTERN)]

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


# What _plain_json accepts, for the published schema only (validation stays _plain_json's):
# no NUL in any text or key at any depth. Keys say it with "not", since pydantic turns a
# key pattern into patternProperties, which leaves other keys free. The depth limit JSON
# Schema cannot say short of nesting the schema 32 times.
_NUL_FREE_KEY = Annotated[str, WithJsonSchema({"type": "string", "not": {"pattern": "\\u0000"}})]
_NUL_FREE_TEXT = Annotated[str, WithJsonSchema({"type": "string", "pattern": "^[^\\u0000]*$"})]
PlainJSON = TypeAliasType(
    "PlainJSON",
    # Union: the alias names itself in quotes, which | cannot join.
    Union[  # noqa: UP007
        _NUL_FREE_TEXT, float, bool, list["PlainJSON"], dict[_NUL_FREE_KEY, "PlainJSON"], None
    ],
)


class _JsonSchemaOf:
    """Publishes ``kind``'s JSON Schema for a field that validates otherwise."""

    def __init__(self, kind: Any):
        self.kind = kind

    def __get_pydantic_json_schema__(self, core_schema, handler):
        return handler(TypeAdapter(self.kind).core_schema)


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


# --------------------------------------------------------------------------- evidence
# What an agent's tools collected on the way to its answer (seeds 000 and 001). Each entry
# is one tool call; the evidence scorers read the tool, what it was asked, what it was
# about and how well it matched. docs/scoring.md describes every field.


class Tool(StrEnum):
    FIND = "find"
    GREP = "grep"
    REFERENCES = "references"
    READ = "read"
    DISCOVERY = "discovery"
    CMAKE = "cmake"
    CTEST = "ctest"
    GIT = "git"
    GH = "gh"


class Match(StrEnum):
    """How a search call matched its query (seed 001, Part IV)."""

    EXACT = "exact"  # the exact phrase, or the exact file name
    IDENTIFIER = "identifier"  # the query as a code symbol
    SUBSTRING = "substring"  # a case-sensitive substring, or part of a file name
    TOKEN = "token"  # words of the query matched one by one
    NONE = "none"  # no match


class Outcome(StrEnum):
    """What a non-search call found; each tool has its own (``OUTCOMES``)."""

    FIRST_LISTED = "first_listed"  # read: the first file of a result list
    RANKED = "ranked"  # read: a ranked candidate
    TOP_RANKED = "top_ranked"  # read: the highest-ranked candidate
    FAILED = "failed"  # cmake: the build failed; ctest: tests failed
    NO_OP = "no_op"  # cmake: nothing to build
    BUILT_OTHER = "built_other"  # cmake: built, but not the target asked about
    BUILT_TARGET = "built_target"  # cmake: built the target asked about
    NONE_RUN = "none_run"  # ctest: 0 tests ran
    SOME_PASSED = "some_passed"  # ctest: some of the relevant tests ran and passed
    ALL_PASSED = "all_passed"  # ctest: all relevant tests passed
    STATUS = "status"  # git: status only
    LOG = "log"  # git: log without the query's terms
    LOG_MATCHING = "log_matching"  # git: log with matching commits
    EMPTY = "empty"  # gh: an empty response ("[]")
    RUN_LIST = "run_list"  # gh: a list of runs
    MATCHING_WORKFLOW = "matching_workflow"  # gh: runs of the workflow asked about
    RUN_LOG = "run_log"  # gh: a run's log, confirming failure or success


SEARCH_TOOLS = frozenset({Tool.FIND, Tool.GREP, Tool.REFERENCES})
OUTCOMES: dict[Tool, frozenset[Outcome]] = {
    Tool.READ: frozenset({Outcome.FIRST_LISTED, Outcome.RANKED, Outcome.TOP_RANKED}),
    Tool.CMAKE: frozenset(
        {Outcome.FAILED, Outcome.NO_OP, Outcome.BUILT_OTHER, Outcome.BUILT_TARGET}
    ),
    Tool.CTEST: frozenset(
        {Outcome.FAILED, Outcome.NONE_RUN, Outcome.SOME_PASSED, Outcome.ALL_PASSED}
    ),
    Tool.GIT: frozenset({Outcome.STATUS, Outcome.LOG, Outcome.LOG_MATCHING}),
    Tool.GH: frozenset(
        {Outcome.EMPTY, Outcome.RUN_LIST, Outcome.MATCHING_WORKFLOW, Outcome.RUN_LOG}
    ),
}


class DiscoveryFactor(StrEnum):
    """The four things a discovery scan can establish about a project (seed 000)."""

    PROJECT_TYPE = "project_type"
    SOURCE_COUNT = "source_count"
    TEST_PRESENCE = "test_presence"
    BUILD_SYSTEM = "build_system"


class Intent(StrEnum):
    """What the agent was asked to do (seed 001's requirement table)."""

    LOCATE = "locate"
    NAVIGATE = "navigate"
    EXPLAIN = "explain"
    REVIEW = "review"
    DIAGNOSE = "diagnose"
    COMPARE = "compare"
    STATUS = "status"
    EXECUTE = "execute"
    MODIFY = "modify"
    CHAT = "chat"


ShortText = Annotated[SafeText, StringConstraints(max_length=500)]

# Strict validation in Python mode wants enum members, not their values; the simulator and
# the tests build submissions from plain dicts as JSON would give them. A value that is no
# member's is still refused.
ByValue = Strict(False)


def _tool_rules() -> list[dict]:
    """_fits_its_tool's rules between fields, in JSON Schema, for the published schema:
    which tools take a match, an outcome (and which ones) and factors. That the exact
    matches are no more than the matches, JSON Schema cannot say."""

    def when_tool(tools, then: dict) -> dict:
        tool = {"enum": sorted(tools)} if len(tools) > 1 else {"const": next(iter(tools))}
        return {"if": {"properties": {"tool": {"not": tool}}}, "then": {"properties": then}}

    rules = [
        when_tool(SEARCH_TOOLS, {"match": {"type": "null"}}),
        when_tool({Tool.DISCOVERY}, {"factors": {"maxItems": 0}}),
    ]
    for tool in Tool:
        outcomes = sorted(OUTCOMES.get(tool, ()))
        rules.append(
            {
                "if": {"properties": {"tool": {"const": tool.value}}},
                "then": {"properties": {"outcome": {"enum": [*outcomes, None]}}},
            }
        )
    return rules


class EvidenceEntryIn(_Strict):
    model_config = ConfigDict(json_schema_extra={"allOf": _tool_rules()})

    tool: Annotated[Tool, ByValue]
    query: ShortText = ""
    # What the call was about: a symbol, a phrase or a file. Entries about the same target
    # corroborate each other.
    target: ShortText = ""
    match: Annotated[Match, ByValue] | None = None
    match_count: Annotated[int, Field(ge=0)] = 0
    exact_match_count: Annotated[int, Field(ge=0)] = 0
    outcome: Annotated[Outcome, ByValue] | None = None
    factors: Annotated[
        list[Annotated[DiscoveryFactor, ByValue]],
        Field(max_length=4, json_schema_extra={"uniqueItems": True}),
    ] = Field(default_factory=list)
    recovery: bool = False
    error: bool = False
    sources: Annotated[list[ShortText], Field(max_length=100)] = Field(default_factory=list)

    @model_validator(mode="after")
    def _fits_its_tool(self) -> EvidenceEntryIn:
        if self.exact_match_count > self.match_count:
            raise ValueError("exact_match_count must not exceed match_count")
        if len(set(self.factors)) != len(self.factors):
            raise ValueError("factors must not repeat")
        if self.factors and self.tool is not Tool.DISCOVERY:
            raise ValueError(f"factors are for discovery, not {self.tool}")
        if self.match is not None and self.tool not in SEARCH_TOOLS:
            raise ValueError(f"match is for find, grep and references, not {self.tool}")
        allowed = OUTCOMES.get(self.tool, frozenset())
        if self.outcome is not None and self.outcome not in allowed:
            names = ", ".join(sorted(allowed)) or "none"
            raise ValueError(f"outcome {self.outcome} is not one of {self.tool}'s ({names})")
        return self


EVIDENCE_EXAMPLE = {
    "intent": "locate",
    "entries": [
        {"tool": "find", "query": "MemoryManager", "target": "MemoryManager", "match": "exact",
         "match_count": 1, "sources": ["src/memory/MemoryManager.h"]},
        {"tool": "grep", "query": "MemoryManager", "target": "MemoryManager",
         "match": "identifier", "match_count": 14, "exact_match_count": 14},
        {"tool": "read", "target": "MemoryManager", "outcome": "top_ranked",
         "sources": ["src/memory/MemoryManager.h"]},
    ],
}  # fmt: skip


class EvidenceIn(_Strict):
    """What the agent's tools found, call by call (docs/scoring.md: evidence_categories and
    evidence_quality read it)."""

    model_config = ConfigDict(json_schema_extra={"examples": [EVIDENCE_EXAMPLE]})

    intent: Annotated[Intent, ByValue] | None = Field(
        default=None, description="What was asked; evidence_quality needs it."
    )
    entries: Annotated[list[EvidenceEntryIn], Field(max_length=200)]


# --------------------------------------------------------------------------- provenance
# Where a claim came from (seed 004): each source's own confidence, its type, and when the
# claim goes stale; related claims support or contradict it.


class Tier(StrEnum):
    """How long a claim stays fresh; each tier has its own half-life after staleness."""

    EPHEMERAL = "ephemeral"
    TASK = "task"
    PROJECT = "project"
    PERSISTENT = "persistent"


Unit = Annotated[float, Field(ge=0.0, le=1.0)]


# RFC 3339: what JSON APIs mean by a date and time. fromisoformat alone also takes week
# dates, the basic format and offsets with seconds, which would be stored as other values.
_RFC3339 = re.compile(r"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d{1,6})?([Zz]|[+-]\d{2}:\d{2})?")
_DATETIME_EXAMPLE = "e.g. 2026-01-31T12:00:00Z"


def _iso_datetime(value: Any) -> Any:
    # A string, from JSON or from a dict built like JSON; a number is refused (lax
    # datetimes would read it as a Unix time).
    if isinstance(value, str):
        if not _RFC3339.fullmatch(value):
            raise ValueError(f"must be an RFC 3339 date and time, {_DATETIME_EXAMPLE}")
        try:
            return datetime.fromisoformat(value)
        except ValueError:
            raise ValueError(f"is not a date and time that exists, {_DATETIME_EXAMPLE}") from None
    return value


class SourceIn(_Strict):
    source_type: Annotated[
        str, StringConstraints(min_length=1, max_length=50, pattern=NAME_PATTERN)
    ]
    confidence: Unit
    source: ShortText = ""


class ClaimIn(_Strict):
    sources: Annotated[list[SourceIn], Field(min_length=1, max_length=100)]
    tier: Annotated[Tier, ByValue] = Tier.TASK
    staleness_at: Annotated[datetime, BeforeValidator(_iso_datetime)] | None = None

    @field_validator("staleness_at")
    @classmethod
    def _aware(cls, value: datetime | None) -> datetime | None:
        if value is not None and value.utcoffset() is None:
            raise ValueError(f"must carry a time zone, {_DATETIME_EXAMPLE}")
        return value


class RelatedClaimIn(ClaimIn):
    strength: Unit


PROVENANCE_EXAMPLE = {
    "sources": [
        {"source_type": "extraction", "confidence": 0.8, "source": "handbook.pdf p. 12"},
        {"source_type": "user_input", "confidence": 0.6},
    ],
    "tier": "project",
    "staleness_at": "2026-01-31T12:00:00Z",
    "contradicting": [
        {"strength": 0.5, "sources": [{"source_type": "agent_assertion", "confidence": 0.4}]}
    ],
}


class ProvenanceIn(ClaimIn):
    """Where the output's claim came from (docs/scoring.md: the interval scorer reads it)."""

    model_config = ConfigDict(json_schema_extra={"examples": [PROVENANCE_EXAMPLE]})

    supporting: Annotated[list[RelatedClaimIn], Field(max_length=50)] = Field(default_factory=list)
    contradicting: Annotated[list[RelatedClaimIn], Field(max_length=50)] = Field(
        default_factory=list
    )
    instance_trust: Unit = 1.0


class OutputSubmission(_Strict):
    external_id: Annotated[Identifier, StringConstraints(min_length=1, max_length=200)]
    task_type: TaskTypeName
    model: Annotated[Identifier, StringConstraints(min_length=1, max_length=200)]
    tier: Annotated[Identifier, StringConstraints(max_length=50)] = ""
    input: Annotated[SafeText, StringConstraints(max_length=MAX_TEXT_CHARS)]
    output: Annotated[SafeText, StringConstraints(max_length=MAX_TEXT_CHARS)]
    validators: Annotated[list[ValidatorResultIn], Field(max_length=100)]
    input_clarity: Annotated[float, Field(ge=0.0, le=1.0)]
    coherence: Annotated[float, Field(ge=0.0, le=1.0)]
    requires_fact_check: bool = False
    evidence: EvidenceIn | None = None
    provenance: ProvenanceIn | None = None
    metadata: Annotated[
        dict[str, Any], AfterValidator(_plain_json), _JsonSchemaOf(dict[_NUL_FREE_KEY, PlainJSON])
    ] = Field(default_factory=dict)

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
        # hash, which differs for non-ASCII text and some floats; those stored before the
        # provenance field existed were hashed without it.
        candidates = [dumped]
        if dumped["provenance"] is None:
            candidates.append({k: v for k, v in dumped.items() if k != "provenance"})
        return any(
            request_hash in (fingerprint(d), _json_module_fingerprint(d)) for d in candidates
        )


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
    if error["type"] == "string_pattern_mismatch":
        pattern = error.get("ctx", {}).get("pattern")
        if pattern == _NO_NUL_PATTERN:
            return _NUL_REFUSED
        if pattern == IDENTIFIER_PATTERN:
            return identifier_problem(error["input"]) or error["msg"]
        if pattern == NAME_PATTERN:
            return NAME_REFUSED
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
