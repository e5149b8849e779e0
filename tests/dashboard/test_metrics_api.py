"""The metrics API: every chart's rows as JSON and as CSV, the same as dashboard.metrics
gives for the same filter; who may read them; and the 400s and 404s that name the fault."""

import csv
import io
import json
import math
from datetime import timedelta

import pydantic_core
import pytest
from django.utils import timezone

from dashboard import selectors
from dashboard.api import metric_csv
from dashboard.filters import filter_parse
from dashboard.metrics import METRICS, metric_rows
from dashboard.rollups import queue_snapshot_take, rollups_refresh
from gating import reviews, services
from gating.models import ReviewItem, TaskType
from gating.roles import Role
from gating.submissions import OutputSubmission
from tests.factories import SubmissionFactory, TaskTypeFactory, UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def history(gateway):
    """Outputs of every decision from two models, every delivered one audited, a reviewer
    who rejects every third audit, a queue snapshot and the rollups refreshed."""
    TaskTypeFactory(
        name="metrics",
        review_threshold=4.0,
        approve_threshold=7.5,
        reviewed_count=1000,
        audit_rate_approved=1.0,
        audit_rate_warning=1.0,
        double_review_rate=0.0,
    )
    for n in range(24):
        validators = [
            {"name": "facts", "passed": n % 3 != 0},
            {"name": "schema", "passed": n % 2 == 0},
            {"name": "grammar", "passed": True},
        ]
        submission = SubmissionFactory(
            task_type="metrics", model=f"model-{'ab'[n % 2]}", validators=validators
        )
        services.output_ingest(source=gateway, submission=OutputSubmission(**submission))
    reviewer = UserFactory(role=Role.REVIEWER)
    for n, item in enumerate(ReviewItem.objects.filter(kind="audit").order_by("id")):
        claimed = reviews.item_claim(reviewer=reviewer, items=ReviewItem.objects.filter(pk=item.pk))
        action = "reject" if n % 3 == 0 else "approve"
        reviews.item_decide(
            item_id=claimed.pk,
            reviewer=reviewer,
            decision=reviews.DecisionInput(
                action=action, reason="factual_error" if action == "reject" else ""
            ),
        )
    queue_snapshot_take()
    rollups_refresh()


@pytest.fixture
def lead_api(user_in, client_for):
    return client_for(user_in(Role.LEAD))


def _range() -> dict:
    now = timezone.now()
    since, until = now - timedelta(days=2), now + timedelta(hours=1)
    return {"range": "custom", "since": since.isoformat(), "until": until.isoformat()}


def _expected(name: str, query: dict) -> list[dict]:
    known = {
        "task_types": TaskType.objects.values_list("name", flat=True),
        "models": selectors.model_names(),
    }
    return pydantic_core.to_jsonable_python(metric_rows(name, filter_parse(query, **known)))


def _same_cell(text: str, value) -> bool:
    if value is None:
        return text == ""
    if isinstance(value, bool):
        return text == str(value).lower()
    if isinstance(value, int | float):
        return float(text) == float(value) or (math.isnan(value) and math.isnan(float(text)))
    if isinstance(value, dict | list):
        return json.loads(text) == value
    return text == value


@pytest.mark.parametrize("name", list(METRICS))
def test_the_json_rows_are_the_metrics_rows(history, lead_api, name):
    query = {**_range(), "task_type": "metrics", "model": ["model-a", "model-b"]}

    response = lead_api.get(f"/api/v1/metrics/{name}/", query)

    assert response.status_code == 200, response.content
    body = response.json()
    assert body["metric"] == name
    assert body["title"] == METRICS[name].title
    assert body["filter"]["task_types"] == ["metrics"]
    assert body["filter"]["models"] == ["model-a", "model-b"]
    assert body["filter"]["preset"] is None
    assert body["rows"] == _expected(name, query)


@pytest.mark.parametrize("name", list(METRICS))
def test_the_csv_parses_back_to_the_same_rows(history, lead_api, name):
    query = _range()
    expected = _expected(name, query)

    response = lead_api.get(f"/api/v1/metrics/{name}/", {**query, "format": "csv"})

    assert response.status_code == 200, response.content
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    assert response["Content-Disposition"].startswith(f'attachment; filename="{name}-')
    lines = list(csv.reader(io.StringIO(response.content.decode())))
    header, cells = lines[0], lines[1:]
    assert header == list(dict.fromkeys(key for row in expected for key in row))
    assert len(cells) == len(expected)
    for line, row in zip(cells, expected, strict=True):
        for key, text in zip(header, line, strict=True):
            assert _same_cell(text, row.get(key)), (key, text, row.get(key))


def test_the_rows_are_not_empty_for_the_outputs_charts(history, lead_api):
    # Without rows the comparisons above would prove little.
    for name in ("score-histogram", "outputs-by-decision", "audit-estimates", "queue-size"):
        assert lead_api.get(f"/api/v1/metrics/{name}/", _range()).json()["rows"], name


def test_the_csv_filename_names_the_metric_and_the_range(lead_api):
    query = {"since": "2025-05-01T09:30:00Z", "until": "2025-05-02"}

    response = lead_api.get("/api/v1/metrics/review-share/", {**query, "format": "csv"})

    assert response["Content-Disposition"] == (
        'attachment; filename="review-share-20250501T093000Z-20250502T000000Z.csv"'
    )
    assert response.content.decode() == "\r\n"


def test_accept_text_csv_gets_the_csv(lead_api):
    response = lead_api.get("/api/v1/metrics/queue-size/", HTTP_ACCEPT="text/csv")

    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/csv")


def test_the_list_names_every_metric_with_its_urls(lead_api):
    response = lead_api.get("/api/v1/metrics/")

    assert response.status_code == 200
    listed = {m["name"]: m for m in response.json()}
    assert list(listed) == list(METRICS)
    histogram = listed["score-histogram"]
    assert histogram["title"] == METRICS["score-histogram"].title
    assert histogram["url"] == "http://testserver/api/v1/metrics/score-histogram/"
    assert histogram["csv_url"] == histogram["url"] + "?format=csv"


@pytest.mark.parametrize("path", ["/api/v1/metrics/", "/api/v1/metrics/score-histogram/"])
@pytest.mark.parametrize(
    ("role", "status"),
    [(Role.GATEWAY, 403), (Role.REVIEWER, 403), (Role.LEAD, 200), (Role.ADMIN, 200)],
)
def test_leads_and_admins_may_read_the_metrics(user_in, client_for, path, role, status):
    response = client_for(user_in(role)).get(path)

    assert response.status_code == status
    assert response["Content-Type"] == "application/json"


def test_anonymous_requests_are_refused(client):
    response = client.get("/api/v1/metrics/score-histogram/", {"format": "csv"})

    assert response.status_code == 401
    assert response["Content-Type"] == "application/json"


@pytest.mark.parametrize(
    ("query", "parameter"),
    [
        ({"range": "1y"}, "range"),
        ({"since": "yesterday"}, "since"),
        ({"until": "soon"}, "until"),
        ({"since": "2025-05-02", "until": "2025-05-01"}, "until"),
        ({"task_type": "nope"}, "task_type"),
        ({"model": "nope"}, "model"),
        ({"format": "xml"}, "format"),
        ({"colour": "blue"}, "colour"),
    ],
)
def test_a_bad_query_is_a_400_naming_the_parameter(lead_api, query, parameter):
    for fmt in ({}, {"format": "csv"}):
        response = lead_api.get("/api/v1/metrics/score-histogram/", {**fmt, **query})

        assert response.status_code == 400
        assert response["Content-Type"] == "application/json"
        assert list(response.json()) == [parameter]


def test_the_list_takes_no_query_parameters(lead_api):
    response = lead_api.get("/api/v1/metrics/", {"range": "7d"})

    assert response.status_code == 400
    assert list(response.json()) == ["range"]


def test_an_unknown_metric_is_a_404_in_json(lead_api):
    response = lead_api.get("/api/v1/metrics/nope/", {"format": "csv"})

    assert response.status_code == 404
    assert response["Content-Type"] == "application/json"
    assert "nope" in response.json()["detail"]


def test_options_is_not_allowed(lead_api):
    response = lead_api.options("/api/v1/metrics/score-histogram/?format=csv")

    assert response.status_code == 405
    assert response["Content-Type"] == "application/json"


def test_text_a_spreadsheet_would_run_is_quoted_in_the_csv():
    rows = [{"model": '=HYPERLINK("http://x")', "reviewer": "@me", "count": -3, "name": "a-b"}]

    lines = list(csv.reader(io.StringIO(metric_csv(rows))))

    assert lines == [
        ["model", "reviewer", "count", "name"],
        ['\'=HYPERLINK("http://x")', "'@me", "-3", "a-b"],
    ]


def test_an_accept_header_naming_nothing_we_write_gets_json(lead_api):
    response = lead_api.get("/api/v1/metrics/queue-size/", HTTP_ACCEPT="application/xml")

    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"


@pytest.mark.parametrize("parameter", ["since", "until", "range", "task_type", "model"])
def test_an_empty_filter_value_is_named_not_read_as_absent(lead_api, parameter):
    response = lead_api.get("/api/v1/metrics/outputs-by-decision/", {parameter: ""})

    assert response.status_code == 400
    assert list(response.json()) == [parameter]


def test_a_preset_beside_since_is_refused_naming_range(lead_api):
    # Not one of them silently ignored: the same refusal as the pages' (dashboard.filters).
    response = lead_api.get(
        "/api/v1/metrics/outputs-by-decision/", {"range": "30d", "since": "2025-05-01T00:00Z"}
    )

    assert response.status_code == 400
    (message,) = response.json()["range"]
    assert "cannot be given with since" in message
