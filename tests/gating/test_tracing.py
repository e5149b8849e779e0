"""The gate's OpenTelemetry spans: their attributes, the gateway's traceparent as their
parent, the trace id stored, answered and shown, a malformed traceparent ignored, and
export off unless the OTEL_* variables ask for it."""

import re

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.sampling import ALWAYS_OFF
from opentelemetry.trace import SpanKind

from gating import tracing
from gating.models import Output
from gating.roles import Role
from tests.factories import SubmissionFactory, TaskTypeFactory, logged_in

pytestmark = pytest.mark.django_db

SINGLE = "/api/v1/outputs/"
BATCH = "/api/v1/outputs/batch/"
TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT_SPAN_ID = "00f067aa0ba902b7"
TRACEPARENT = f"00-{TRACE_ID}-{PARENT_SPAN_ID}-01"
HEX_32 = re.compile(r"[0-9a-f]{32}")


@pytest.fixture
def exported():
    """Spans exported as they end, into memory; export off again afterwards."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracing.tracer_provider_use(provider)
    yield exporter
    tracing.tracer_provider_use(None)


def post(client, url, body, traceparent=None):
    headers = {"HTTP_TRACEPARENT": traceparent} if traceparent is not None else {}
    return client.post(url, body, format="json", **headers)


def held(**fields):
    # A task type in cold start holds every output, so the decision is known in advance.
    return SubmissionFactory(task_type="held", **fields)


@pytest.fixture
def cold_start():
    return TaskTypeFactory(name="held", reviewed_count=0)


def test_a_single_output_is_one_span_with_the_gates_answer(gateway_api, exported, cold_start):
    body = held(model="model-q")

    answer = post(gateway_api, SINGLE, body).json()

    [span] = exported.get_finished_spans()
    assert span.name == "gatehouse.gate"
    assert span.kind is SpanKind.SERVER
    assert span.attributes["gen_ai.request.model"] == "model-q"
    assert span.attributes["gatehouse.task_type"] == "held"
    assert span.attributes["gatehouse.decision"] == "pending_review"
    assert span.attributes["gatehouse.score"] == pytest.approx(answer["score"], abs=1e-4)
    assert span.attributes["http.response.status_code"] == 201
    assert span.attributes["http.request.method"] == "POST"


def test_a_batch_is_one_span_with_counts_per_decision(gateway_api, exported, cold_start):
    bodies = [held(model="model-a"), held(model="model-b"), held(model="model-a")]

    response = post(gateway_api, BATCH, {"outputs": bodies})

    assert response.status_code == 201
    [span] = exported.get_finished_spans()
    assert span.name == "gatehouse.gate_batch"
    assert span.attributes["gatehouse.batch.size"] == 3
    assert span.attributes["gatehouse.decisions.pending_review"] == 3
    assert span.attributes["gatehouse.decisions.approved"] == 0
    assert span.attributes["gatehouse.decisions.warning"] == 0
    assert tuple(span.attributes["gen_ai.request.model"]) == ("model-a", "model-b")


def test_the_span_is_the_child_of_the_gateways_traceparent(gateway_api, exported, cold_start):
    post(gateway_api, SINGLE, held(), traceparent=TRACEPARENT)

    [span] = exported.get_finished_spans()
    assert format(span.context.trace_id, "032x") == TRACE_ID
    assert format(span.parent.span_id, "016x") == PARENT_SPAN_ID
    assert span.parent.is_remote


def test_the_trace_id_is_stored_and_answered(gateway_api, cold_start):
    # Export off: the gateway's trace id is kept all the same.
    single = post(gateway_api, SINGLE, held(), traceparent=TRACEPARENT).json()
    batch = post(gateway_api, BATCH, {"outputs": [held(), held()]}, traceparent=TRACEPARENT)

    assert single["trace_id"] == TRACE_ID
    assert [o["trace_id"] for o in batch.json()["outputs"]] == [TRACE_ID, TRACE_ID]
    assert set(Output.objects.values_list("trace_id", flat=True)) == {TRACE_ID}
    assert gateway_api.get(f"{SINGLE}{single['id']}/").json()["trace_id"] == TRACE_ID


def test_a_replay_answers_with_the_first_requests_trace(gateway_api, cold_start):
    body = held()
    post(gateway_api, SINGLE, body, traceparent=TRACEPARENT)

    other = f"00-{'ab' * 16}-{'cd' * 8}-01"
    replay = post(gateway_api, SINGLE, body, traceparent=other)

    assert replay.status_code == 200
    assert replay.json()["trace_id"] == TRACE_ID


@pytest.mark.parametrize(
    "traceparent",
    [
        "",
        "garbage",
        f"00-{TRACE_ID.upper()}-{PARENT_SPAN_ID}-01",  # hex must be lowercase
        f"00-{'0' * 32}-{PARENT_SPAN_ID}-01",  # all-zero trace id
        f"00-{TRACE_ID}-{'0' * 16}-01",  # all-zero parent id
        f"ff-{TRACE_ID}-{PARENT_SPAN_ID}-01",  # version ff is invalid
        f"00-{TRACE_ID}-{PARENT_SPAN_ID}-01-extra",  # version 00 has nothing after flags
        f"00-{TRACE_ID[:-1]}g-{PARENT_SPAN_ID}-01",
        "00-<script>alert(1)</script>-00f067aa0ba902b7-01",
    ],
)
def test_a_malformed_traceparent_is_ignored(gateway_api, cold_start, traceparent):
    response = post(gateway_api, SINGLE, held(), traceparent=traceparent)

    assert response.status_code == 201
    assert response.json()["trace_id"] is None
    assert Output.objects.get().trace_id == ""


def test_a_malformed_traceparent_starts_a_trace_of_its_own(gateway_api, exported, cold_start):
    answer = post(gateway_api, SINGLE, held(), traceparent="00-nonsense-01").json()

    [span] = exported.get_finished_spans()
    assert span.parent is None
    own = format(span.context.trace_id, "032x")
    assert answer["trace_id"] == own and HEX_32.fullmatch(own)


def test_a_trace_not_sampled_is_not_stored(gateway_api, cold_start):
    provider = TracerProvider(sampler=ALWAYS_OFF)
    tracing.tracer_provider_use(provider)
    try:
        answer = post(gateway_api, SINGLE, held()).json()
    finally:
        tracing.tracer_provider_use(None)
    assert answer["trace_id"] is None


def test_a_refused_request_ends_its_span_with_the_status(gateway_api, exported):
    response = post(gateway_api, SINGLE, {"external_id": "x"}, traceparent=TRACEPARENT)

    assert response.status_code == 400
    [span] = exported.get_finished_spans()
    assert span.attributes["http.response.status_code"] == 400
    assert span.status.is_unset  # the client's fault, not the server's
    assert format(span.context.trace_id, "032x") == TRACE_ID


def test_the_output_page_shows_the_trace_id(user_in, gateway_api, cold_start):
    answer = post(gateway_api, SINGLE, held(), traceparent=TRACEPARENT).json()

    page = logged_in(user_in(Role.LEAD)).get(f"/dashboard/outputs/{answer['id']}/")

    assert f'<code id="trace-id">{TRACE_ID}</code>' in page.content.decode()


@pytest.mark.parametrize(
    "environ",
    [
        {},
        {"OTEL_TRACES_EXPORTER": "none"},
        {"OTEL_TRACES_EXPORTER": "otlp", "OTEL_SDK_DISABLED": "true"},
        {"OTEL_TRACES_EXPORTER": "zipkin"},  # not installed: warned about, nothing built
    ],
)
def test_export_is_off_unless_asked_for(environ):
    try:
        assert tracing.tracing_configure(environ) is False
        assert not tracing.tracing_enabled()
    finally:
        tracing.tracer_provider_use(None)


def test_otlp_export_is_built_from_the_otel_variables():
    environ = {
        "OTEL_TRACES_EXPORTER": "otlp",
        "OTEL_SERVICE_NAME": "gate-eu",
        "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9",
    }
    try:
        assert tracing.tracing_configure(environ) is True
        assert tracing.tracing_enabled()
    finally:
        tracing.tracer_provider_use(None)


def test_the_default_process_exports_nothing():
    # The test settings set no OTEL_* variable: as on a bare install, no provider exists.
    assert not tracing.tracing_enabled()
