"""Traces of the gate, in OpenTelemetry: a span for each ingest request, the child of the
gateway's span when its request carries a W3C ``traceparent``.

Export is off unless the standard OTEL_* variables turn it on (docs/integrations.md):
``OTEL_TRACES_EXPORTER=otlp`` (or ``console``) builds the SDK's provider once per process,
which reads the rest itself (OTEL_SERVICE_NAME, OTEL_EXPORTER_OTLP_ENDPOINT,
OTEL_TRACES_SAMPLER, OTEL_BSP_*...). Unset or ``none``, and whenever OTEL_SDK_DISABLED is
true, no provider exists, no span is made and nothing leaves the machine. The SDK's own
default exporter is otlp; ours is none, so that a bare install sends nothing anywhere.

Off, a request costs one dictionary lookup, and the parsing of its traceparent when it
has one: the gateway's trace id is stored with its outputs either way, so that a trace in
the gateway's tool finds the output and the output's page names the trace.
"""

from __future__ import annotations

import logging
import os
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.trace import Span, SpanKind, Status, StatusCode, Tracer
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

logger = logging.getLogger(__name__)

TRACER_NAME = "gatehouse"
# Exporters this module can build from OTEL_TRACES_EXPORTER; the OTLP one speaks
# protobuf over HTTP, the only OTLP transport installed.
EXPORTERS = ("otlp", "console", "none")

_propagator = TraceContextTextMapPropagator()
# None while export is off: the ingest path then makes no span at all.
_tracer: Tracer | None = None


def _exporter(name: str):
    if name == "otlp":
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        return OTLPSpanExporter()
    from opentelemetry.sdk.trace.export import ConsoleSpanExporter

    return ConsoleSpanExporter()


def tracing_configure(environ: Mapping[str, str] = os.environ) -> bool:
    """Build the tracer provider the OTEL_* variables ask for, once per process (from
    GatingConfig.ready). Returns whether spans are exported."""
    global _tracer
    if environ.get("OTEL_SDK_DISABLED", "false").strip().lower() == "true":
        _tracer = None
        return False
    wanted = [
        name.strip().lower()
        for name in environ.get("OTEL_TRACES_EXPORTER", "none").split(",")
        if name.strip()
    ]
    unknown = [name for name in wanted if name not in EXPORTERS]
    if unknown:
        logger.warning(
            "OTEL_TRACES_EXPORTER names %s, which this build cannot export to; known: %s",
            ", ".join(unknown),
            ", ".join(EXPORTERS),
        )
    exporters = [name for name in dict.fromkeys(wanted) if name in EXPORTERS and name != "none"]
    if not exporters:
        _tracer = None
        return False

    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    # Resource.create reads OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES; the provider
    # reads OTEL_TRACES_SAMPLER; the exporter its endpoint, headers and timeout.
    resource = Resource.create({"service.name": environ.get("OTEL_SERVICE_NAME", "gatehouse")})
    provider = TracerProvider(resource=resource)
    for name in exporters:
        # Batched, off the request's thread: exporting never delays an answer.
        provider.add_span_processor(BatchSpanProcessor(_exporter(name)))
    tracer_provider_use(provider)
    return True


def tracer_provider_use(provider: trace.TracerProvider | None) -> None:
    """Make the gate's spans with ``provider`` (None: none at all). The tests install one
    with an in-memory exporter here, as tracing_configure does with the real ones."""
    global _tracer
    _tracer = None if provider is None else provider.get_tracer(TRACER_NAME)


def tracing_enabled() -> bool:
    return _tracer is not None


def _parent(headers: Mapping[str, str]) -> tuple[Context | None, str]:
    """The context of the caller's span and its trace id (32 lowercase hex digits), from a
    W3C traceparent; (None, "") without one. A malformed traceparent is ignored, as the
    W3C recommends: the request starts a trace of its own rather than failing."""
    traceparent = headers.get("traceparent")
    if not traceparent:
        return None, ""
    # The propagator checks the header's form (and refuses all-zero ids and version ff);
    # the trace id is then formatted from an integer, so it can only be hex digits.
    context = _propagator.extract({"traceparent": traceparent})
    caller = trace.get_current_span(context).get_span_context()
    if not caller.is_valid:
        return None, ""
    return context, format(caller.trace_id, "032x")


@dataclass
class GateSpan:
    """One ingest request's span, or a stand-in when export is off: ``trace_id`` is what
    the request's outputs store (empty when there is no trace), and the record_* methods
    do nothing without a span."""

    span: Span | None
    trace_id: str

    def record_output(self, *, model: str, task_type: str, decision: str, score: float) -> None:
        if self.span is None:
            return
        # GenAI semantic conventions name the model that produced the output; the gate's
        # own words are under gatehouse.*.
        self.span.set_attributes(
            {
                "gen_ai.request.model": model,
                "gatehouse.task_type": task_type,
                "gatehouse.decision": decision,
                "gatehouse.score": score,
            }
        )

    def record_batch(self, outputs: Iterable[tuple[str, str, str]]) -> None:
        """A batch's outputs as (model, task type, decision): counts per decision, and the
        models and task types it held, on the one span (not a span per output)."""
        if self.span is None:
            return
        models: set[str] = set()
        task_types: set[str] = set()
        decisions: Counter[str] = Counter()
        for model, task_type, decision in outputs:
            models.add(model)
            task_types.add(task_type)
            decisions[decision] += 1
        self.span.set_attributes(
            {
                "gatehouse.batch.size": sum(decisions.values()),
                **{f"gatehouse.decisions.{d}": decisions[d] for d in DECISIONS},
                "gen_ai.request.model": sorted(models),
                "gatehouse.task_type": sorted(task_types),
            }
        )

    def record_status(self, status_code: int) -> None:
        if self.span is not None:
            self.span.set_attribute("http.response.status_code", status_code)


# Every decision gets its count on a batch's span, zero included, so that a query for one
# never has to tell "none" from "not recorded".
DECISIONS = ("approved", "warning", "pending_review")


@contextmanager
def gate_span(
    name: str, *, method: str, route: str, headers: Mapping[str, str]
) -> Iterator[GateSpan]:
    """The span of one ingest request, as the current span while the body runs.

    An exception from the body ends the span as an error unless it carries a status code
    below 500 (a refused request is the client's, not the server's, per the HTTP
    semantic conventions); it propagates either way.
    """
    parent, trace_id = _parent(headers)
    tracer = _tracer
    if tracer is None:
        yield GateSpan(None, trace_id)
        return
    with tracer.start_as_current_span(
        name,
        context=parent,
        kind=SpanKind.SERVER,
        attributes={"http.request.method": method, "http.route": route},
        record_exception=False,
        set_status_on_exception=False,
    ) as span:
        own = span.get_span_context()
        # A trace of our own is named only when it is sampled: an id that was never
        # exported would lead nowhere.
        if not trace_id and span.is_recording():
            trace_id = format(own.trace_id, "032x")
        gate = GateSpan(span, trace_id)
        try:
            yield gate
        except Exception as exc:
            status_code = getattr(exc, "status_code", 500)
            gate.record_status(status_code)
            if status_code >= 500:
                span.record_exception(exc)
                span.set_status(Status(StatusCode.ERROR, type(exc).__name__))
            raise
