"""The access log: one line per request with its id, user, and the gate's answer; JSON lines
in production, text in the default mode; never a body."""

import io
import json
import logging
import os
import subprocess
import sys

import pytest
from django.conf import settings
from django.test import Client
from pythonjsonlogger.json import JsonFormatter

from dashboard.settings.base import BASE_DIR
from gating.models import Output
from gating.request_log import RequestIdFilter, TextFormatter
from tests.factories import SubmissionFactory, TaskTypeFactory

pytestmark = pytest.mark.django_db

LLM_TEXT = "The patient's card number is 4111-1111-1111-1111"
PROMPT = "Summarise the private notes of case 77"


def formatter_from_settings(name: str) -> logging.Formatter:
    """The formatter LOGGING declares under ``name``, built as dictConfig builds it."""
    declared = dict(settings.LOGGING["formatters"][name])
    factory = {"gating.request_log.TextFormatter": TextFormatter}.get(declared.pop("()"))
    return (factory or JsonFormatter)(**declared)


@pytest.fixture
def log_lines():
    """What every logger writes meanwhile, formatted as LOGGING declares ``format``."""
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.addFilter(RequestIdFilter())
    root = logging.getLogger()
    root.addHandler(handler)
    level, root.level = root.level, logging.INFO

    def formatted(format: str) -> io.StringIO:
        handler.setFormatter(formatter_from_settings(format))
        return stream

    yield formatted
    root.removeHandler(handler)
    root.level = level


def access_lines(stream) -> list[dict]:
    parsed = [json.loads(line) for line in stream.getvalue().splitlines()]
    return [line for line in parsed if line["logger"] == "gatehouse.access"]


def test_a_well_formed_request_id_is_kept_and_returned():
    response = Client().get("/healthz", HTTP_X_REQUEST_ID="gw-7f3a:b.c_d-1")
    assert response["X-Request-ID"] == "gw-7f3a:b.c_d-1"


@pytest.mark.parametrize(
    "incoming", [None, "", "has space", "x" * 129, "-leading-dash", "new\nline", "ü"]
)
def test_otherwise_one_is_made(incoming):
    headers = {"HTTP_X_REQUEST_ID": incoming} if incoming is not None else {}
    made = Client().get("/healthz", **headers)["X-Request-ID"]
    assert made != incoming
    assert len(made) == 32 and int(made, 16) >= 0
    assert Client().get("/healthz", **headers)["X-Request-ID"] != made


def test_an_ingest_line_in_json_carries_id_user_task_type_and_decision(
    gateway, gateway_api, log_lines
):
    stream = log_lines("json")
    TaskTypeFactory(name="logged")
    body = SubmissionFactory(task_type="logged", input=PROMPT, output=LLM_TEXT)
    response = gateway_api.post(
        "/api/v1/outputs/", body, format="json", HTTP_X_REQUEST_ID="req-123"
    )
    assert response.status_code == 201

    [line] = access_lines(stream)
    stored = Output.objects.get()
    assert line["request_id"] == "req-123"
    assert line["user"] == gateway.username
    assert line["task_type"] == "logged"
    assert line["decision"] == stored.decision
    assert line["method"] == "POST" and line["path"] == "/api/v1/outputs/"
    assert line["status"] == 201 and line["duration_ms"] > 0
    assert line["level"] == "INFO" and line["time"].endswith("+00:00")
    assert LLM_TEXT not in stream.getvalue() and PROMPT not in stream.getvalue()


def test_a_batch_line_counts_its_decisions(gateway_api, log_lines):
    stream = log_lines("json")
    TaskTypeFactory(name="batch-a")
    TaskTypeFactory(name="batch-b", reviewed_count=0, double_review_rate=0.0)
    outputs = [SubmissionFactory(task_type="batch-a", output=LLM_TEXT) for _ in range(2)]
    outputs += [SubmissionFactory(task_type="batch-b", output=LLM_TEXT) for _ in range(3)]
    response = gateway_api.post("/api/v1/outputs/batch/", {"outputs": outputs}, format="json")
    assert response.status_code == 201

    [line] = access_lines(stream)
    expected = {}
    for decision in Output.objects.values_list("decision", flat=True):
        expected[decision] = expected.get(decision, 0) + 1
    assert line["outputs"] == 5
    assert line["decisions"] == expected
    assert line["task_type"] == "batch-a,batch-b"
    assert LLM_TEXT not in stream.getvalue()


def test_a_refused_body_is_logged_without_it(gateway_api, log_lines):
    stream = log_lines("json")
    response = gateway_api.post(
        "/api/v1/outputs/?q=secret-query", {"output": LLM_TEXT}, format="json"
    )
    assert response.status_code == 400
    [line] = access_lines(stream)
    assert line["status"] == 400 and "decision" not in line
    assert line["path"] == "/api/v1/outputs/"
    assert LLM_TEXT not in stream.getvalue() and "secret-query" not in stream.getvalue()


def test_other_lines_in_a_request_carry_its_id(log_lines):
    stream = log_lines("json")
    Client().get("/metrics", HTTP_X_REQUEST_ID="scrape-1")  # logs nothing of its own
    logging.getLogger("outside").warning("no request")
    lines = [json.loads(line) for line in stream.getvalue().splitlines()]
    assert {line["request_id"] for line in lines if line["logger"] == "gatehouse.access"} == {
        "scrape-1"
    }
    assert [line["request_id"] for line in lines if line["logger"] == "outside"] == ["-"]


def test_the_default_mode_writes_readable_text(gateway, gateway_api, log_lines):
    stream = log_lines("text")
    TaskTypeFactory(name="texty")
    gateway_api.post(
        "/api/v1/outputs/",
        SubmissionFactory(task_type="texty", output=LLM_TEXT),
        format="json",
        HTTP_X_REQUEST_ID="req-9",
    )
    [line] = [line for line in stream.getvalue().splitlines() if "gatehouse.access" in line]
    decision = Output.objects.get().decision
    assert "INFO gatehouse.access [req-9] POST /api/v1/outputs/ 201 " in line
    assert f"user={gateway.username} " in line
    assert line.endswith(f"task_type=texty decision={decision}")
    assert LLM_TEXT not in stream.getvalue()
    with pytest.raises(json.JSONDecodeError):
        json.loads(line)


def test_base_settings_log_text_and_production_json():
    assert settings.LOGGING["handlers"]["console"]["formatter"] == "text"
    env = {
        **os.environ,
        "SECRET_KEY": "x" * 50,
        "ALLOWED_HOSTS": "example.com",
        "DATABASE_URL": "sqlite:////tmp/unused.sqlite3",
        "REDIS_URL": "redis://127.0.0.1:6379/0",
    }
    env.pop("LOG_FORMAT", None)
    code = (
        "import logging, dashboard.settings.production as p;"
        "import logging.config; logging.config.dictConfig(p.LOGGING);"
        "logging.getLogger('probe').warning('hello')"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=BASE_DIR, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    line = json.loads(done.stderr.strip().splitlines()[-1])
    assert line["logger"] == "probe" and line["message"] == "hello" and line["request_id"] == "-"


def test_a_path_cannot_forge_a_line_in_the_text_log(log_lines):
    stream = log_lines("text")
    Client().get("/no-such-page%0AINFO gatehouse.access [forged] GET / 200")
    lines = stream.getvalue().splitlines()
    assert len([line for line in lines if "gatehouse.access" in line]) == 1
    assert "/no-such-page%0AINFO" in stream.getvalue()
