"""One access log line per request, and the request's id on every line logged meanwhile.

The id is the caller's X-Request-ID when it is well-formed (so that a gateway's id follows
its output through Gatehouse's logs), a new one otherwise; the response carries it back.
The access line names the method, path, status, time taken, user and, for ingest, the
task types and decisions answered. Never a body or a query string: they carry the LLM's
text and the gateway's data, which logs must not keep.

Production writes JSON lines (LOG_FORMAT=json, python-json-logger); the default mode
readable text with the same fields as key=value.
"""

from __future__ import annotations

import logging
import re
import time
import uuid
from collections import Counter
from contextvars import ContextVar

from django.utils.encoding import escape_uri_path

from gating.ingest_answers import answered_decisions, ingest_route

access_logger = logging.getLogger("gatehouse.access")

# Letters, digits and . _ : - only, as a header value and a log field can hold without
# escaping; long enough for a UUID, a trace id or a gateway's own scheme.
REQUEST_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,127}")
_current_request_id: ContextVar[str] = ContextVar("request_id", default="-")

# The access line's fields beyond the message, in the order the text format shows them.
ACCESS_FIELDS = (
    "method",
    "path",
    "status",
    "duration_ms",
    "user",
    "client",
    "task_type",
    "decision",
    "outputs",
    "decisions",
)


def request_id_from(header: str | None) -> str:
    if header and REQUEST_ID.fullmatch(header):
        return header
    return uuid.uuid4().hex


class RequestLogMiddleware:
    """First in MIDDLEWARE: the id is set before anything logs, and the time taken is all
    of Django's."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        request_id = request_id_from(request.headers.get("X-Request-ID"))
        request.request_id = request_id
        token = _current_request_id.set(request_id)
        started = time.perf_counter()
        try:
            response = self.get_response(request)
            response["X-Request-ID"] = request_id
            fields = access_fields(request, response, time.perf_counter() - started)
            access_logger.info(
                "%s %s %s", fields["method"], fields["path"], fields["status"], extra=fields
            )
            return response
        finally:
            _current_request_id.reset(token)


def access_fields(request, response, seconds: float) -> dict:
    user = getattr(request, "user", None)
    fields = {
        "method": request.method,
        # As it came, percent-encoded: a decoded %0A would start a forged line in the text log.
        "path": escape_uri_path(request.path),
        "status": response.status_code,
        "duration_ms": round(seconds * 1000, 2),
        "user": user.get_username() if user is not None and user.is_authenticated else None,
        "client": request.META.get("REMOTE_ADDR"),
    }
    route = ingest_route(request)
    if route is not None:
        decisions = answered_decisions(response)
        task_types = sorted({task_type for task_type, _ in decisions})
        if route == "single" and decisions:
            fields["task_type"], fields["decision"] = decisions[0]
        elif decisions:
            fields["task_type"] = ",".join(task_types)
            fields["outputs"] = len(decisions)
            fields["decisions"] = dict(sorted(Counter(d for _, d in decisions).items()))
    return fields


class RequestIdFilter(logging.Filter):
    """Puts the current request's id on every record ("-" outside a request)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if not hasattr(record, "request_id"):
            record.request_id = _current_request_id.get()
        return True


class TextFormatter(logging.Formatter):
    """The default mode's readable lines: the format, then the access fields as key=value."""

    def format(self, record: logging.LogRecord) -> str:
        line = super().format(record)
        extras = [
            f"{name}={_text(getattr(record, name))}"
            for name in ACCESS_FIELDS[3:]
            if getattr(record, name, None) is not None
        ]
        return " ".join([line, *extras])


def _text(value) -> str:
    if isinstance(value, dict):
        return ",".join(f"{k}:{v}" for k, v in value.items())
    return str(value)
