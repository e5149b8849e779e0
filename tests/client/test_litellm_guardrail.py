"""The LiteLLM guardrail (gatehouse_client.litellm) in a real LiteLLM proxy, run from its own
virtualenv (.venv-litellm, `make test` builds it) with a mock model, against a live
Gatehouse. Nothing leaves the machine: the model answers from the config, and the proxy
reads its cost map and other lists locally."""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from dashboard.settings.base import BASE_DIR
from gating.models import ApiToken, Output
from gating.roles import Role
from gating.tokens import hash_token
from tests.client.conftest import ALL_PASS, HALF_PASS
from tests.factories import TaskTypeFactory, UserFactory
from tests.processes import free_port, running

pytestmark = [pytest.mark.serial, pytest.mark.slow]

LITELLM = BASE_DIR / ".venv-litellm" / "bin" / "litellm"
MOCK_ANSWER = "The mock model's answer."
# The proxy starts once for the module with this token in its environment; each test gives
# it to its own gateway user, as the tables are emptied between tests.
GATEWAY_TOKEN = "gh_litellm-proxy-tests-token"
PROXY_KEY = "sk-proxy-tests"

CONFIG = """
model_list:
  - model_name: mock-gpt
    litellm_params:
      model: openai/mock-gpt
      api_key: sk-not-used
      mock_response: "{answer}"
guardrails:
  - guardrail_name: gatehouse-block
    litellm_params:
      guardrail: gatehouse_client.litellm.GatehouseGuardrail
      mode: post_call
      api_base: os.environ/GATEHOUSE_URL
      api_key: os.environ/GATEHOUSE_API_KEY
      task_type: client-approve
      input_clarity: 0.8
      coherence: 0.9
      on_hold: block
  - guardrail_name: gatehouse-wait
    litellm_params:
      guardrail: gatehouse_client.litellm.GatehouseGuardrail
      mode: post_call
      api_base: os.environ/GATEHOUSE_URL
      api_key: os.environ/GATEHOUSE_API_KEY
      input_clarity: 0.8
      coherence: 0.9
      on_hold: wait
      wait_seconds: 20
  - guardrail_name: gatehouse-down
    litellm_params:
      guardrail: gatehouse_client.litellm.GatehouseGuardrail
      mode: post_call
      api_base: {down_url}
      api_key: os.environ/GATEHOUSE_API_KEY
      task_type: client-approve
      input_clarity: 0.8
      coherence: 0.9
general_settings:
  master_key: {proxy_key}
litellm_settings:
  telemetry: false
"""

# Every list litellm would fetch at start (cost map, beta headers, presets, templates, blog)
# is read from the package, and the URLs point at a closed local port besides.
OFFLINE = {
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    "LITELLM_LOCAL_ANTHROPIC_BETA_HEADERS": "True",
    "LITELLM_LOCAL_AUTOROUTER_PRESETS": "True",
    "LITELLM_LOCAL_BLOG_POSTS": "True",
    "LITELLM_LOCAL_POLICY_TEMPLATES": "True",
    "LITELLM_TELEMETRY": "False",
    "LITELLM_DONT_SHOW_FEEDBACK_BOX": "True",
    "DISABLE_ADMIN_UI": "True",
}


def closed_url() -> str:
    return f"http://127.0.0.1:{free_port()}"


def proxy_env(gatehouse_url: str) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in {"DATABASE_URL", "REDIS_URL", "DJANGO_SETTINGS_MODULE"}
        and not k.endswith("_PROXY")
        and not k.endswith("_proxy")
    }
    for url_variable in (
        "LITELLM_MODEL_COST_MAP_URL",
        "LITELLM_BLOG_POSTS_URL",
        "LITELLM_ANTHROPIC_BETA_HEADERS_URL",
        "LITELLM_AUTOROUTER_PRESETS_URL",
    ):
        env[url_variable] = closed_url()
    env.update(OFFLINE, GATEHOUSE_URL=gatehouse_url, GATEHOUSE_API_KEY=GATEWAY_TOKEN)
    env["NO_PROXY"] = "*"
    return env


@pytest.fixture(scope="module")
def proxy(live_server, tmp_path_factory) -> Iterator[str]:
    if not LITELLM.exists():
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"{LITELLM} is missing: make test builds it")
        pytest.skip(f"{LITELLM} is missing: `make .venv-litellm/.installed` builds it")
    folder = tmp_path_factory.mktemp("litellm")
    config = folder / "config.yaml"
    config.write_text(CONFIG.format(answer=MOCK_ANSWER, down_url=closed_url(), proxy_key=PROXY_KEY))
    port = free_port()
    log_path = folder / "proxy.log"
    command = [str(LITELLM), "--config", str(config), "--host", "127.0.0.1", "--port", str(port)]
    with running(command, proxy_env(live_server.url), log_path, cwd=folder) as process:
        url = f"http://127.0.0.1:{port}"
        _wait_ready(process, url, log_path)
        yield url


def _wait_ready(process: subprocess.Popen, url: str, log_path: Path) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"litellm exited with {process.returncode}:\n{log_path.read_text()}")
        try:
            if httpx.get(f"{url}/health/liveliness", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.5)
    raise RuntimeError(f"litellm did not answer within 120 s:\n{log_path.read_text()}")


@pytest.fixture
def gatehouse(gatehouse):
    """The live Gatehouse, with a gateway whose token the proxy holds."""
    gateway = UserFactory(role=Role.GATEWAY)
    ApiToken.objects.create(user=gateway, key_hash=hash_token(GATEWAY_TOKEN))
    TaskTypeFactory(name="client-hold-wait", reviewed_count=0, double_review_rate=0.0)
    return gatehouse


def chat(
    proxy: str, guardrail: str, stream: bool = False, n: int = 1, **gatehouse_metadata
) -> httpx.Response:
    return httpx.post(
        f"{proxy}/v1/chat/completions",
        headers={"Authorization": f"Bearer {PROXY_KEY}"},
        json={
            "model": "mock-gpt",
            "messages": [{"role": "user", "content": "Summarise the quarterly report."}],
            "guardrails": [guardrail],
            "metadata": {"gatehouse": gatehouse_metadata},
            "stream": stream,
            "n": n,
        },
        timeout=60,
    )


def content_of(response: httpx.Response) -> str:
    return response.json()["choices"][0]["message"]["content"]


def test_an_approved_response_passes(proxy, gatehouse):
    response = chat(proxy, "gatehouse-block", validators=ALL_PASS)

    assert response.status_code == 200, response.text
    assert content_of(response) == MOCK_ANSWER
    assert response.headers["x-gatehouse-decision"] == "approved"
    stored = Output.objects.get(pk=int(response.headers["x-gatehouse-output-id"]))
    assert (stored.task_type.name, stored.output_text) == ("client-approve", MOCK_ANSWER)
    assert "Summarise the quarterly report." in stored.input_text


def test_a_warning_passes_with_the_decision_and_score(proxy, gatehouse):
    response = chat(proxy, "gatehouse-block", task_type="client-warn", validators=HALF_PASS)

    assert response.status_code == 200, response.text
    assert content_of(response) == MOCK_ANSWER
    stored = Output.objects.get(pk=int(response.headers["x-gatehouse-output-id"]))
    assert response.headers["x-gatehouse-decision"] == stored.decision == "warning"
    assert float(response.headers["x-gatehouse-score"]) == pytest.approx(stored.score)


def test_a_held_response_is_blocked_with_the_reason(proxy, gatehouse):
    response = chat(proxy, "gatehouse-block", task_type="client-hold", validators=ALL_PASS)

    assert response.status_code == 400, response.text
    assert "Held for human review by Gatehouse" in response.text
    assert MOCK_ANSWER not in response.text
    assert Output.objects.get().status == "pending"


def test_waiting_for_a_reviewer_who_approves(proxy, gatehouse):
    reviewer = gatehouse.review_later(1.0, "approve")
    response = chat(proxy, "gatehouse-wait", task_type="client-hold-wait", validators=ALL_PASS)
    reviewer.join()

    assert response.status_code == 200, response.text
    assert content_of(response) == MOCK_ANSWER
    assert response.headers["x-gatehouse-status"] == "approved"


def test_waiting_for_a_reviewer_who_modifies(proxy, gatehouse):
    reviewer = gatehouse.review_later(1.0, "modify", output="The reviewer's better answer.")
    response = chat(proxy, "gatehouse-wait", task_type="client-hold-wait", validators=ALL_PASS)
    reviewer.join()

    assert response.status_code == 200, response.text
    assert content_of(response) == "The reviewer's better answer."
    assert response.headers["x-gatehouse-status"] == "modified"


def test_waiting_for_a_reviewer_who_rejects(proxy, gatehouse):
    reviewer = gatehouse.review_later(1.0, "reject", reason="factual_error")
    response = chat(proxy, "gatehouse-wait", task_type="client-hold-wait", validators=ALL_PASS)
    reviewer.join()

    assert response.status_code == 400, response.text
    assert "Rejected by a Gatehouse reviewer" in response.text
    assert MOCK_ANSWER not in response.text


def test_gatehouse_down_blocks(proxy, gatehouse):
    response = chat(proxy, "gatehouse-down", validators=ALL_PASS)

    assert response.status_code == 503
    assert "Gatehouse could not judge the response" in response.text
    assert MOCK_ANSWER not in response.text


def test_a_request_without_a_task_type_is_blocked(proxy, gatehouse):
    response = chat(proxy, "gatehouse-wait", validators=ALL_PASS)

    assert response.status_code == 503
    assert "no task_type" in response.text
    assert not Output.objects.exists()


def test_a_streamed_response_is_refused(proxy, gatehouse):
    response = chat(proxy, "gatehouse-block", stream=True, validators=ALL_PASS)

    assert response.status_code == 400
    assert "Streamed responses cannot pass the Gatehouse guardrail" in response.text
    assert MOCK_ANSWER not in response.text


def test_a_response_of_several_choices_is_refused(proxy, gatehouse):
    response = chat(proxy, "gatehouse-block", n=2, validators=ALL_PASS)

    assert response.status_code == 400, response.text
    assert "judges one choice a response, not 2" in response.text
    assert MOCK_ANSWER not in response.text
    assert not Output.objects.exists()
