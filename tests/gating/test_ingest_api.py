"""POST /api/v1/outputs/: the gate's answer, stored as given."""

import pytest

from gating.models import Output, TaskType, Validator
from tests.factories import SubmissionFactory, TaskModelStatsFactory, TaskTypeFactory

URL = "/api/v1/outputs/"


def post(client, body):
    return client.post(URL, body, format="json")


def test_first_output_of_a_task_type_creates_it_in_cold_start(gateway_api):
    response = post(gateway_api, SubmissionFactory(task_type="translate"))

    assert response.status_code == 201
    body = response.json()
    assert body["decision"] == "pending_review"
    assert body["status"] == "pending"
    assert body["final_output"] is None
    assert any("Cold start" in r for r in body["reasons"])
    task_type = TaskType.objects.get(name="translate")
    assert task_type.in_cold_start
    facts = Validator.objects.get(task_type=task_type, name="facts")
    assert facts.is_fact_check and facts.weight == 1.0
    assert not Validator.objects.get(task_type=task_type, name="length").is_fact_check


def test_score_and_decision_match_the_formula(gateway_api):
    stats = TaskModelStatsFactory(
        task_type=TaskTypeFactory(name="summarize"), reviewed_count=40, approved_unchanged_count=32
    )
    body = SubmissionFactory(
        task_type="summarize",
        model=stats.model,
        validators=[
            {"name": "facts", "passed": True},
            {"name": "schema", "passed": True},
            {"name": "grammar", "passed": False},
            {"name": "tone", "passed": True},
        ],
        input_clarity=0.6,
        coherence=0.6,
    )
    # fraction 3/4 -> 6.0; + 0.6*0.5 = 0.3; + 0.6*1.5 = 0.9 -> base 7.2
    # accuracy 32/40 = 0.8 -> bonus 0.2 * min(1, 40/20) = 0.2, on the odds:
    # 7.2 * 1.2 / (1 + 0.2 * 0.72) = 8.64 / 1.144 = 7.5524
    response = post(gateway_api, body)

    assert response.status_code == 201
    data = response.json()
    assert data["base_score"] == pytest.approx(7.2)
    assert data["score"] == pytest.approx(8.64 / 1.144, abs=1e-4)
    assert data["thresholds"] == {"review": 4.0, "approve": 7.0}
    assert data["decision"] == "approved"
    assert data["status"] == "approved"
    assert data["final_output"] == body["output"]
    assert data["scorer"] == "validators-v2"
    assert {"validator:grammar", "input_clarity", "coherence", "task_accuracy_bonus"} <= {
        i["factor"] for i in data["impacts"]
    }


def test_warning_is_delivered_and_flagged(gateway_api):
    TaskModelStatsFactory(task_type=TaskTypeFactory(name="summarize"), approved_unchanged_count=20)
    # 2 of 4 passed -> 4.0 + 0.4 + 1.35 = 5.75; accuracy 0.5 -> no bonus -> warning
    body = SubmissionFactory(
        validators=[
            {"name": "facts", "passed": True},
            {"name": "schema", "passed": True},
            {"name": "grammar", "passed": False},
            {"name": "tone", "passed": False},
        ]
    )
    data = post(gateway_api, body).json()
    assert data["score"] == pytest.approx(5.75)
    assert data["decision"] == "warning"
    assert data["status"] == "approved"


def test_everything_sent_is_stored(gateway_api, gateway):
    evidence = {
        "intent": "explain",
        "entries": [{"tool": "read", "target": "a.py", "outcome": "ranked"}],
    }
    body = SubmissionFactory(evidence=evidence, metadata={"k": [1, {"x": None}]})
    response = post(gateway_api, body)

    output = Output.objects.get(pk=response.json()["id"])
    assert output.source == gateway
    assert output.input_text == body["input"]
    assert output.output_text == body["output"]
    assert output.tier == "fast"
    assert output.requires_fact_check is True
    assert output.evidence["entries"][0]["target"] == "a.py"
    assert output.evidence["entries"][0]["outcome"] == "ranked"
    assert output.metadata == {"k": [1, {"x": None}]}
    assert output.validator_results[3] == {
        "name": "length",
        "passed": False,
        "detail": "12 words over",
    }


def test_get_returns_the_same_representation(gateway_api):
    created = post(gateway_api, SubmissionFactory()).json()
    fetched = gateway_api.get(f"{URL}{created['id']}/")
    assert fetched.status_code == 200
    assert fetched.json() == created


def test_learned_validator_weights_are_used(gateway_api):
    task_type = TaskTypeFactory(name="summarize")
    TaskModelStatsFactory(task_type=task_type, approved_unchanged_count=20)
    Validator.objects.create(task_type=task_type, name="facts", weight=3.0, is_fact_check=True)
    Validator.objects.create(task_type=task_type, name="length", weight=1.0)
    body = SubmissionFactory(
        validators=[{"name": "facts", "passed": True}, {"name": "length", "passed": False}],
        input_clarity=0.0,
        coherence=0.0,
    )
    # fraction = 3 / (3 + 1) = 0.75 -> base 6.0
    assert post(gateway_api, body).json()["score"] == pytest.approx(6.0)
