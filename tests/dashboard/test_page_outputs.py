"""The outputs page and one output's page: who may open them, the search against a direct
query, the keyset pages, and hostile text kept as text."""

import pytest
from django.db.models import Q
from django.utils import timezone

from dashboard.rollups import rollups_refresh
from gating import reviews
from gating.models import Output, ReviewItem, Webhook, WebhookAttempt, WebhookDelivery
from gating.roles import Role
from tests.factories import TaskTypeFactory, ingested, logged_in

pytestmark = pytest.mark.django_db


@pytest.fixture
def outputs(gateway):
    TaskTypeFactory(name="summarize")
    TaskTypeFactory(name="translate")
    made = []
    for n in range(12):
        made.append(
            ingested(
                gateway,
                external_id=f"order-{n:02d}" if n % 2 else f"ticket-{n:02d}",
                task_type="summarize" if n % 3 else "translate",
                model="model-a" if n < 6 else "model-b",
                output=f"Revenue GREW {n}%" if n % 4 == 0 else f"Costs fell {n}%",
            )
        )
    rollups_refresh()  # the filter bar knows the models the rollups have seen
    return made


@pytest.mark.parametrize(
    ("role", "status"),
    [(Role.GATEWAY, 403), (Role.REVIEWER, 200), (Role.LEAD, 200), (Role.ADMIN, 200)],
)
def test_who_may_open_the_outputs_and_an_output(user_in, outputs, role, status):
    client = logged_in(user_in(role))
    assert client.get("/dashboard/outputs/").status_code == status
    assert client.get(f"/dashboard/outputs/{outputs[0].pk}/").status_code == status


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("external_id=order-03", Q(external_id="order-03")),
        ("external_id=order&id_match=prefix", Q(external_id__startswith="order")),
        ("external_id=order", Q(external_id="order")),
        ("text=revenue+grew", Q(output_text__icontains="revenue grew")),
        ("task_type=translate&model=model-b", Q(task_type__name="translate", model="model-b")),
        (
            "text=fell&decision=pending_review&status=pending",
            Q(output_text__icontains="fell", decision="pending_review", status="pending"),
        ),
        ("score_min=0&score_max=10", Q(score__lt=10)),
        ("score_min=10", Q(score__gte=10)),
        # score_max is "below", as in the queue API (gating.api.filters.ReviewItemFilter).
        ("score_max=5", Q(score__lt=5)),
    ],
)
def test_search_finds_what_a_direct_query_finds(user_in, outputs, query, expected):
    response = logged_in(user_in(Role.REVIEWER)).get(f"/dashboard/outputs/?range=24h&{query}")
    assert response.status_code == 200
    found = [o.pk for o in response.context["outputs"]]
    direct = Output.objects.filter(expected).order_by("-id").values_list("pk", flat=True)
    assert found == list(direct)


def test_an_output_scored_at_score_max_is_left_out_and_one_at_score_min_is_in(user_in, outputs):
    Output.objects.filter(pk=outputs[0].pk).update(score=5.0)
    client = logged_in(user_in(Role.REVIEWER))

    def found(query):
        response = client.get(f"/dashboard/outputs/?range=24h&{query}")
        return {o.pk for o in response.context["outputs"]}

    assert outputs[0].pk not in found("score_max=5")
    assert outputs[0].pk in found("score_min=5")


def test_the_range_bounds_the_search(user_in, outputs):
    response = logged_in(user_in(Role.LEAD)).get(
        "/dashboard/outputs/?range=custom&since=2020-01-01&until=2020-01-02"
    )
    assert response.context["outputs"] == []


def test_pages_follow_by_id(user_in, outputs, monkeypatch):
    monkeypatch.setattr("dashboard.pages.outputs.PAGE_SIZE", 5)
    client = logged_in(user_in(Role.LEAD))
    seen, url = [], "/dashboard/outputs/?range=24h&external_id=&text="
    while url:
        response = client.get(url)
        seen += [o.pk for o in response.context["outputs"]]
        url = (
            f"/dashboard/outputs/?{response.context['next_query']}"
            if response.context["next_query"]
            else None
        )
    assert seen == sorted((o.pk for o in outputs), reverse=True)


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("score_min=eleven", "score_min"),
        ("score_min=5&score_max=4", "score_max"),
        # score_max is below: equal to score_min, the band holds nothing.
        ("score_min=5&score_max=5", "score_max"),
        ("decision=maybe", "decision"),
        ("id_match=fuzzy", "id_match"),
        ("before=x", "before"),
        ("range=fortnight", "range"),
    ],
)
def test_a_bad_parameter_is_a_400_naming_it(user_in, query, field):
    response = logged_in(user_in(Role.LEAD)).get(f"/dashboard/outputs/?{query}")
    assert response.status_code == 400
    assert f'data-field="{field}"' in response.content.decode()


def test_the_output_page_keeps_hostile_text_as_text(user_in, gateway):
    TaskTypeFactory(name="summarize")
    hostile = ingested(
        gateway,
        external_id="<img src=x onerror=alert(1)>",
        input="<script>alert('in')</script>",
        output="<script>alert('out')</script>",
        validators=[{"name": "facts", "passed": False, "detail": "<i>x</i>"}],
    )
    page = logged_in(user_in(Role.LEAD)).get(f"/dashboard/outputs/{hostile.pk}/").content.decode()
    for raw in ("<script>alert(", "<img src=x", "<i>x</i>"):
        assert raw not in page
    assert "&lt;script&gt;alert(&#x27;out&#x27;)&lt;/script&gt;" in page
    listing = logged_in(user_in(Role.LEAD)).get("/dashboard/outputs/?range=24h").content.decode()
    assert "<img src=x" not in listing and "&lt;img src=x onerror=alert(1)&gt;" in listing


def test_the_output_page_shows_its_whole_history(user_in, gateway):
    TaskTypeFactory(name="held", reviewed_count=0)
    Webhook.objects.create(owner=gateway, url="https://93.184.216.34/decisions")
    output = ingested(gateway, task_type="held", external_id="held-1")
    reviewer = user_in(Role.REVIEWER, username="rita")
    item = reviews.item_claim(reviewer=reviewer, items=ReviewItem.objects.filter(output=output))
    reviews.item_decide(
        item_id=item.pk,
        reviewer=reviewer,
        decision=reviews.DecisionInput(action="reject", reason="factual_error", note="Wrong 4%"),
    )
    delivery = WebhookDelivery.objects.get(payload__output__id=output.pk)
    WebhookAttempt.objects.create(
        delivery=delivery, at=timezone.now(), status_code=502, error="Bad gateway", duration_ms=12
    )

    response = logged_in(user_in(Role.LEAD)).get(f"/dashboard/outputs/{output.pk}/")

    page = response.content.decode()
    assert [r.reviewer.username for r in response.context["reviews"]] == ["rita"]
    assert "Wrong 4%" in page and "factual_error" in page
    actions = {e.action for e, _, _ in response.context["events"]}
    assert {"claim", "decision"} <= actions
    assert response.context["deliveries"] == [delivery]
    assert "Bad gateway" in page and "502" in page
    assert output.reasons[0] in page


def test_the_overview_links_warnings_to_the_output_page(user_in, gateway):
    TaskTypeFactory(name="flagged", review_threshold=0.0, approve_threshold=10.0)
    warning = ingested(gateway, task_type="flagged")
    page = logged_in(user_in(Role.LEAD)).get("/").content.decode()
    assert f'href="/dashboard/outputs/{warning.pk}/"' in page
