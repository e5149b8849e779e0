"""The OpenAPI schema's additions: the bearer scheme, the error statuses every
operation can answer, added by rule from what the operation is, that bodies and answers
hold their declared fields only, and that no query parameter is given empty
(gating.api.strict).

Each view documents its own answers (2xx, and a 409 where a domain conflict can happen);
``error_responses`` adds the statuses that follow from the framework and the middleware,
so that no operation can forget one:

- 400 everywhere: a bad body or query parameter is named; and any request with a
  Content-Length that is not a number is refused (gating.middleware);
- 401 where credentials are required;
- 403 where a role's permission is checked, and for every write (a session request
  without its CSRF token);
- 404 where the path names something;
- 413 everywhere: the body limit is checked on every request, before anything else;
- 415 for every write: a body that is not JSON (or, for the queue, a form).
"""

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.settings import spectacular_settings
from pydantic import BaseModel
from rest_framework.authentication import SessionAuthentication
from rest_framework.permissions import SAFE_METHODS, AllowAny, IsAuthenticated

from gating.api.responses import BadRequest, Detail, json_schema


class BearerTokenScheme(OpenApiAuthenticationExtension):
    target_class = "gating.authentication.BearerTokenAuthentication"
    name = "bearerAuth"

    def get_security_definition(self, auto_schema):
        return {
            "type": "http",
            "scheme": "bearer",
            "description": "From `manage.py create_api_token`.",
        }


def error_responses(result, generator, request, public):
    """A drf-spectacular postprocessing hook: see the module's docstring."""
    schemas = result.setdefault("components", {}).setdefault("schemas", {})
    detail, bad_request = _component(schemas, Detail), _component(schemas, BadRequest)
    for route, _, method, callback in generator.endpoints:
        view = generator.create_view(callback, method)
        # The schema names a path's "pk" as "id", as the generator does.
        path = generator.coerce_path(route, method, view)
        operation = result["paths"].get(path, {}).get(method.lower())
        if operation is None:
            continue
        view.request = spectacular_settings.GET_MOCK_REQUEST(method, path, view, request)
        responses = operation.setdefault("responses", {})
        for code, description in _statuses(operation, view, method):
            responses.setdefault(
                str(code),
                {
                    "description": description,
                    "content": {
                        "application/json": {"schema": bad_request if code == 400 else detail}
                    },
                },
            )
        _refuse_unknown_fields(operation, schemas)
        _form_objects_as_json_text(operation, schemas)
        _answers_exact(operation, schemas)
        _no_empty_query_values(operation)
    return result


def _statuses(operation: dict, view, method: str) -> list[tuple[int, str]]:
    writes = method not in SAFE_METHODS
    parameters = operation.get("parameters", [])
    in_path = [p["name"] for p in parameters if p["in"] == "path"]
    in_query = [p["name"] for p in parameters if p["in"] == "query"]
    if writes:
        bad = "The body names each bad field (or is not valid JSON); nothing is stored."
    elif in_query:
        bad = f"A bad query parameter ({', '.join(in_query)}), named."
    else:
        bad = "A malformed request: a Content-Length that is not a number."
    statuses = [(400, bad)]
    if {} not in operation.get("security", [{}]):
        statuses.append((401, "Missing, unknown or revoked credentials."))
    checks_role = any(type(p) not in (IsAuthenticated, AllowAny) for p in view.get_permissions())
    session = any(isinstance(a, SessionAuthentication) for a in view.get_authenticators())
    if checks_role or (writes and session):
        statuses.append(
            (403, "Your role lacks the permission (or a session write lacks its CSRF token).")
        )
    if in_path:
        statuses.append((404, f"No such {', '.join(in_path)}, or not one you may see."))
    statuses.append((413, "The request body is over the size limit (2 MiB by default)."))
    if writes:
        statuses.append((415, "The body's media type is not one the operation reads."))
    return statuses


def _refuse_unknown_fields(operation: dict, schemas: dict) -> None:
    """Request bodies refuse unknown fields (gating.api.strict, and pydantic's extra="forbid"
    for the ingest models): say so in their schemas."""
    for media in operation.get("requestBody", {}).get("content", {}).values():
        ref = media.get("schema", {}).get("$ref", "")
        component = schemas.get(ref.rsplit("/", 1)[-1])
        if component is not None and component.get("type") == "object":
            component.setdefault("additionalProperties", False)


def _form_objects_as_json_text(operation: dict, schemas: dict) -> None:
    """A form body cannot nest: a field that takes a JSON object (a decision's rubric scores)
    comes in a form as the object's JSON text, which DRF's JSONField parses. The form's
    schema is its own component, "<name>Form", that says so."""
    content = operation.get("requestBody", {}).get("content", {})
    form = content.get("application/x-www-form-urlencoded")
    if form is None:
        return
    name = form.get("schema", {}).get("$ref", "").rsplit("/", 1)[-1]
    component = schemas.get(name)
    if component is None:
        return
    objects = [
        field
        for field, schema in component.get("properties", {}).items()
        if schema.get("type") == "object"
    ]
    if not objects:
        return
    as_text = {
        "type": "string",
        "contentMediaType": "application/json",
        "description": "The JSON text of an object, as the application/json body takes it.",
    }
    schemas[f"{name}Form"] = {
        **component,
        "properties": {
            field: as_text if field in objects else schema
            for field, schema in component["properties"].items()
        },
    }
    form["schema"] = {"$ref": f"#/components/schemas/{name}Form"}


def _no_empty_query_values(operation: dict) -> None:
    """A query parameter given empty is refused (gating.api.strict): a text parameter's
    value, or each of a list's, is at least one character long. A choice's enum and a
    number leave the empty value out already."""
    for parameter in operation.get("parameters", []):
        if parameter["in"] != "query":
            continue
        schema = parameter["schema"]
        if schema.get("type") == "array":
            schema = schema.get("items", {})
        if schema.get("type") == "string" and "enum" not in schema:
            schema.setdefault("minLength", 1)


def _answers_exact(operation: dict, schemas: dict) -> None:
    """An answer carries its fields and no others: pydantic's models say so already
    (extra="forbid"), and a DRF serializer writes exactly its fields. Saying so for the
    serializers too lets an answer that differs by role be one of two shapes, exactly one
    of which it fits (the task types: a gateway's fields are a subset of staff's)."""
    for code, response in operation.get("responses", {}).items():
        if not code.startswith("2"):
            continue
        for media in response.get("content", {}).values():
            _exact(media.get("schema", {}), schemas, seen=set())


def _exact(schema: dict, schemas: dict, seen: set[str]) -> None:
    name = schema.get("$ref", "").rsplit("/", 1)[-1]
    if name:
        if name in seen or name not in schemas:
            return
        seen.add(name)
        schema = schemas[name]
    for member in [*schema.get("oneOf", []), *schema.get("anyOf", [])]:
        _exact(member, schemas, seen)
    if schema.get("type") == "array":
        _exact(schema.get("items", {}), schemas, seen)
    elif schema.get("type") == "object" and "properties" in schema:
        schema.setdefault("additionalProperties", False)


def _component(schemas: dict, model: type[BaseModel]) -> dict:
    """Publish ``model`` (and the models it uses) as components; a reference to it."""
    schema = json_schema(model)
    for name, definition in schema.pop("$defs", {}).items():
        schemas.setdefault(name, definition)
    schemas.setdefault(model.__name__, schema)
    return {"$ref": f"#/components/schemas/{model.__name__}"}
