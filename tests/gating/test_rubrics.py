"""Rubrics: the dimension and score rules, versions and their audit, decisions that carry
scores (refused by name when one is missing or wrong), and the API by role."""

import json
from urllib.parse import urlencode

import pytest

from gating import reviews, rubrics, webhooks
from gating.exceptions import DecisionInvalid, FieldInvalid
from gating.models import AuditEvent, Review, Rubric, WebhookDelivery
from gating.roles import Role
from tests.factories import TaskTypeFactory, ingested, logged_in

pytestmark = pytest.mark.django_db

HELPFUL = {"name": "helpful", "label": "Helpfulness", "kind": "numeric", "minimum": 1, "maximum": 5}
TONE = {"name": "tone", "label": "Tone", "kind": "categorical", "choices": ["neutral", "casual"]}
CITES = {"name": "cites", "label": "Cites its sources", "kind": "boolean", "required": True}
DIMENSIONS = [HELPFUL | {"required": True}, TONE, CITES]
SCORED = {"helpful": 4, "tone": "casual", "cites": False}


def rubric_url(name: str) -> str:
    return f"/api/v1/task-types/{name}/rubric/"


# --------------------------------------------------------------------------- dimension rules


def test_a_dimension_is_stored_with_its_defaults():
    (stored,) = rubrics.dimensions_clean([TONE])
    assert stored == TONE | {"required": False, "help": ""}


@pytest.mark.parametrize(
    ("dimensions", "field"),
    [
        ("helpful", "dimensions"),
        ([HELPFUL] * 2, "dimensions[1].name"),
        ([{**HELPFUL, "kind": "stars"}], "dimensions[0].kind"),
        ([{**HELPFUL, "colour": "red"}], "dimensions[0].colour"),
        ([{**TONE, "minimum": 1}], "dimensions[0].minimum"),
        ([{**HELPFUL, "name": "Helpful"}], "dimensions[0].name"),
        ([{**HELPFUL, "name": "a" * 41}], "dimensions[0].name"),
        ([{**HELPFUL, "label": "  "}], "dimensions[0].label"),
        ([{**HELPFUL, "label": 3}], "dimensions[0].label"),
        ([{**HELPFUL, "required": "yes"}], "dimensions[0].required"),
        ([{**HELPFUL, "minimum": True}], "dimensions[0].minimum"),
        ([{**HELPFUL, "minimum": "1"}], "dimensions[0].minimum"),
        ([{**HELPFUL, "maximum": float("inf")}], "dimensions[0].maximum"),
        ([{**HELPFUL, "maximum": 10**7}], "dimensions[0].maximum"),
        ([{**HELPFUL, "minimum": 5, "maximum": 5}], "dimensions[0].maximum"),
        ([{**TONE, "choices": ["one"]}], "dimensions[0].choices"),
        ([{**TONE, "choices": ["a", "a"]}], "dimensions[0].choices"),
        ([{**TONE, "choices": ["a", ""]}], "dimensions[0].choices[1]"),
        ([{**TONE, "choices": [str(i) for i in range(11)]}], "dimensions[0].choices"),
        ([{**CITES, "name": f"d{i}"} for i in range(13)], "dimensions"),
    ],
    ids=[
        "not a list",
        "a name twice",
        "unknown kind",
        "unknown key",
        "a key of another kind",
        "capitals",
        "name too long",
        "blank label",
        "label a number",
        "required as text",
        "true as a bound",
        "bound as text",
        "infinite bound",
        "bound out of range",
        "empty range",
        "one choice",
        "a choice twice",
        "an empty choice",
        "eleven choices",
        "thirteen dimensions",
    ],
)
def test_a_bad_dimension_is_refused_naming_its_key(dimensions, field):
    with pytest.raises(FieldInvalid) as refused:
        rubrics.dimensions_clean(dimensions)
    assert refused.value.field == field


@pytest.mark.parametrize(
    ("scores", "field"),
    [
        ({"tone": "neutral", "cites": True}, "scores.helpful"),
        ({"helpful": None, "cites": True}, "scores.helpful"),
        ({"helpful": 3}, "scores.cites"),
        ({**SCORED, "speed": 1}, "scores.speed"),
        ({**SCORED, "helpful": 6}, "scores.helpful"),
        ({**SCORED, "helpful": 0.99}, "scores.helpful"),
        ({**SCORED, "helpful": "4"}, "scores.helpful"),
        ({**SCORED, "helpful": True}, "scores.helpful"),
        ({**SCORED, "helpful": float("nan")}, "scores.helpful"),
        ({**SCORED, "tone": "rude"}, "scores.tone"),
        ({**SCORED, "tone": 1}, "scores.tone"),
        ({**SCORED, "cites": 0}, "scores.cites"),
        ({**SCORED, "cites": "false"}, "scores.cites"),
        (["helpful"], "scores"),
    ],
    ids=[
        "required missing",
        "required null",
        "required boolean missing",
        "unknown dimension",
        "above the range",
        "below the range",
        "number as text",
        "true as a number",
        "NaN",
        "not a choice",
        "choice as a number",
        "0 as false",
        "false as text",
        "a list",
    ],
)
def test_a_bad_score_is_refused_naming_its_dimension(scores, field):
    with pytest.raises(FieldInvalid) as refused:
        rubrics.scores_clean(rubrics.dimensions_clean(DIMENSIONS), scores)
    assert refused.value.field == field


def test_scores_are_kept_in_the_rubrics_order_and_an_optional_one_may_be_left_out():
    dimensions = rubrics.dimensions_clean(DIMENSIONS)
    assert list(rubrics.scores_clean(dimensions, {"cites": True, "helpful": 1.5})) == [
        "helpful",
        "cites",
    ]
    assert rubrics.scores_clean(dimensions, {**SCORED, "helpful": 5}) == {**SCORED, "helpful": 5}


@pytest.mark.parametrize(
    "markdown",
    [
        "<script>alert(1)</script>",
        "[click](javascript:alert(1))",
        "<img src=x onerror=alert(1)>",
        '<a href="#" onclick="alert(1)">x</a>',
    ],
)
def test_instructions_never_render_a_script(markdown):
    html = rubrics.instructions_html(markdown)
    # Raw HTML is shown as text (escaped), and no link may run a script.
    assert "<script" not in html and "<img" not in html and '<a href="#"' not in html
    assert 'href="javascript' not in html


def test_instructions_load_no_image_from_anywhere():
    html = rubrics.instructions_html("![policy](https://tracker.example.com/p.png) read it")
    assert "<img" not in html and "tracker.example.com" not in html
    assert "read it" in html


def test_instructions_render_their_markdown():
    html = rubrics.instructions_html("**Check** the [policy](https://example.com/p).\n\n- one")
    assert "<strong>Check</strong>" in html
    assert '<a href="https://example.com/p" rel="noopener noreferrer">policy</a>' in html
    assert "<li>one</li>" in html


# --------------------------------------------------------------------------- versions


def test_each_edit_is_a_new_version_audited_with_before_and_after(user_in):
    admin = user_in(Role.ADMIN)
    task_type = TaskTypeFactory(name="t1")
    first, created = rubrics.rubric_save(
        task_type=task_type, instructions="Be strict.", dimensions=[CITES], actor=admin
    )
    second, _ = rubrics.rubric_save(
        task_type=task_type, instructions="Be fair.", dimensions=DIMENSIONS, actor=admin
    )
    assert created and (first.version, second.version) == (1, 2)
    assert rubrics.rubric_in_force(task_type.pk) == second
    first.refresh_from_db()
    assert first.instructions == "Be strict."
    events = AuditEvent.objects.filter(action=AuditEvent.Action.RUBRIC_EDIT).order_by("id")
    assert [e.before for e in events] == [
        None,
        {"version": 1, "instructions": "Be strict.", "dimensions": first.dimensions},
    ]
    assert events[1].after["version"] == 2 and events[1].after["task_type"] == "t1"
    assert events[1].actor == admin


def test_saving_the_same_rubric_again_stores_nothing(user_in):
    admin = user_in(Role.ADMIN)
    task_type = TaskTypeFactory(name="t1")
    rubrics.rubric_save(task_type=task_type, instructions="x", dimensions=[CITES], actor=admin)
    again, created = rubrics.rubric_save(
        task_type=task_type, instructions="x ", dimensions=[CITES], actor=admin
    )
    assert not created and again.version == 1
    assert Rubric.objects.count() == 1
    assert AuditEvent.objects.filter(action=AuditEvent.Action.RUBRIC_EDIT).count() == 1


def test_a_bad_rubric_stores_nothing(user_in):
    task_type = TaskTypeFactory(name="t1")
    with pytest.raises(FieldInvalid):
        rubrics.rubric_save(
            task_type=task_type,
            instructions="x",
            dimensions=[CITES, {"kind": "numeric"}],
            actor=user_in(Role.ADMIN),
        )
    assert not Rubric.objects.exists()
    assert not AuditEvent.objects.filter(action=AuditEvent.Action.RUBRIC_EDIT).exists()


# --------------------------------------------------------------------------- decisions


@pytest.fixture
def scored_item(gateway, reviewer, user_in):
    """A held output of a task type with a rubric, claimed by ``reviewer``."""
    task_type = TaskTypeFactory(name="t1", reviewed_count=0, double_review_rate=0.0)
    rubrics.rubric_save(
        task_type=task_type, instructions="", dimensions=DIMENSIONS, actor=user_in(Role.ADMIN)
    )
    ingested(gateway, task_type="t1")
    return reviews.item_claim(reviewer=reviewer)


def decision_url(item) -> str:
    return f"/api/v1/queue/{item.pk}/decision/"


def test_a_review_stores_its_scores_with_the_rubric_version(scored_item, reviewer):
    review = reviews.item_decide(
        item_id=scored_item.pk,
        reviewer=reviewer,
        decision=reviews.DecisionInput("approve", scores=SCORED, rubric_version=1),
    )
    review.refresh_from_db()
    assert (review.rubric.version, review.scores) == (1, SCORED)


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"action": "approve"}, "scores.helpful"),
        ({"action": "approve", "scores": {"helpful": 3}}, "scores.cites"),
        ({"action": "approve", "scores": {**SCORED, "helpful": 9}}, "scores.helpful"),
        ({"action": "approve", "scores": {**SCORED, "cites": "yes"}}, "scores.cites"),
        ({"action": "approve", "scores": {**SCORED, "x": 1}}, "scores.x"),
        ({"action": "approve", "scores": [1, 2]}, "scores"),
        ({"action": "approve", "scores": "helpful"}, "scores"),
        ({"action": "approve", "scores": SCORED, "rubric_version": 0}, "rubric_version"),
        ({"action": "approve", "scores": SCORED, "rubric_version": "1"}, "rubric_version"),
        ({"action": "reject", "reason": "factual_error"}, "scores.helpful"),
    ],
    ids=[
        "no scores",
        "a required one missing",
        "out of range",
        "wrong type",
        "unknown dimension",
        "a list",
        "text",
        "version 0",
        "version as text",
        "a reject needs them too",
    ],
)
def test_a_decision_with_bad_scores_is_400_naming_them_and_nothing_is_stored(
    scored_item, reviewer_api, body, field
):
    refused = reviewer_api.post(decision_url(scored_item), body, format="json")
    assert refused.status_code == 400
    assert field in refused.json(), refused.json()
    assert not Review.objects.exists()
    scored_item.refresh_from_db()
    assert scored_item.state == "open"


def test_a_decision_scored_on_an_older_version_is_refused(scored_item, reviewer_api, user_in):
    rubrics.rubric_save(
        task_type=scored_item.task_type,
        instructions="Changed.",
        dimensions=DIMENSIONS,
        actor=user_in(Role.ADMIN),
    )
    body = {"action": "approve", "scores": SCORED, "rubric_version": 1}
    refused = reviewer_api.post(decision_url(scored_item), body, format="json")
    assert refused.status_code == 400
    assert "version 2" in refused.json()["rubric_version"][0]
    assert not Review.objects.exists()


def test_scores_sent_as_a_form_are_read_as_json(scored_item, reviewer_api):
    """The review page posts a form whose scores field holds JSON text."""
    body = urlencode({"action": "approve", "scores": json.dumps(SCORED), "rubric_version": "1"})
    answer = reviewer_api.post(
        decision_url(scored_item), body, content_type="application/x-www-form-urlencoded"
    )
    assert answer.status_code == 201, answer.json()
    assert Review.objects.get().scores == SCORED


def test_the_answer_webhook_and_audit_carry_the_scores(
    scored_item, reviewer_api, gateway, settings
):
    settings.WEBHOOK_ALLOW_PRIVATE_ADDRESSES = True
    webhooks.webhook_register(owner=gateway, url="http://127.0.0.1:9/hook", actor=gateway)
    body = {"action": "approve", "scores": SCORED, "rubric_version": 1}
    answer = reviewer_api.post(decision_url(scored_item), body, format="json").json()
    assert (answer["rubric_version"], answer["scores"]) == (1, SCORED)
    delivery = WebhookDelivery.objects.get()
    assert delivery.payload["review"]["scores"] == SCORED
    assert delivery.payload["review"]["rubric_version"] == 1
    event = AuditEvent.objects.get(action=AuditEvent.Action.DECISION)
    assert event.after["scores"] == SCORED


def test_a_task_type_without_a_rubric_takes_no_scores(gateway, reviewer, reviewer_api):
    TaskTypeFactory(name="t2", reviewed_count=0, double_review_rate=0.0)
    ingested(gateway, task_type="t2")
    item = reviews.item_claim(reviewer=reviewer)
    refused = reviewer_api.post(
        decision_url(item), {"action": "approve", "scores": {"x": 1}}, format="json"
    )
    assert refused.status_code == 400 and "scores" in refused.json()
    answer = reviewer_api.post(decision_url(item), {"action": "approve"}, format="json")
    assert answer.status_code == 201
    assert (answer.json()["rubric_version"], answer.json()["scores"]) == (None, {})


def test_recorded_decisions_are_checked_against_the_rubric(scored_item, reviewer):
    reviews.item_release(item_id=scored_item.pk, reviewer=reviewer)
    scored_item.refresh_from_db()
    with pytest.raises(DecisionInvalid) as refused:
        reviews.decisions_record(
            [
                reviews.RecordedDecision(
                    item=scored_item,
                    reviewer=reviewer,
                    decision=reviews.DecisionInput("approve"),
                    decided_at=scored_item.queued_at,
                )
            ]
        )
    assert refused.value.field == "scores.helpful"
    assert not Review.objects.exists()


# --------------------------------------------------------------------------- the API


def test_an_admin_saves_versions_and_everyone_on_staff_reads_them(admin_api, reviewer_api):
    TaskTypeFactory(name="t1")
    body = {"instructions": "# Read\n<script>x</script>", "dimensions": DIMENSIONS}
    created = admin_api.put(rubric_url("t1"), body, format="json")
    assert created.status_code == 201, created.json()
    assert created.json()["version"] == 1
    assert admin_api.put(rubric_url("t1"), body, format="json").status_code == 200
    body["dimensions"] = [CITES]
    assert admin_api.put(rubric_url("t1"), body, format="json").json()["version"] == 2
    read = reviewer_api.get(rubric_url("t1")).json()
    assert read["version"] == 2
    assert read["dimensions"] == [CITES | {"help": ""}]
    assert "<script>" not in read["instructions_html"]
    assert read["instructions"] == body["instructions"]
    versions = reviewer_api.get(rubric_url("t1") + "versions/").json()
    assert [v["version"] for v in versions] == [2, 1]


@pytest.mark.parametrize("role", [Role.REVIEWER, Role.LEAD])
def test_only_an_admin_may_save_a_rubric(user_in, client_for, role):
    TaskTypeFactory(name="t1")
    body = {"instructions": "", "dimensions": [CITES]}
    assert client_for(user_in(role)).put(rubric_url("t1"), body, format="json").status_code == 403
    assert not Rubric.objects.exists()


def test_a_gateway_may_not_read_a_rubric(gateway_api, admin_api):
    TaskTypeFactory(name="t1")
    admin_api.put(rubric_url("t1"), {"instructions": "", "dimensions": []}, format="json")
    assert gateway_api.get(rubric_url("t1")).status_code == 403
    assert gateway_api.get(rubric_url("t1") + "versions/").status_code == 403


def test_no_rubric_or_no_task_type_is_404(reviewer_api):
    TaskTypeFactory(name="t1")
    assert reviewer_api.get(rubric_url("t1")).status_code == 404
    assert reviewer_api.get(rubric_url("nope")).status_code == 404
    assert reviewer_api.get(rubric_url("nope") + "versions/").status_code == 404


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"instructions": "", "dimensions": [CITES], "colour": 1}, "colour"),
        ({"dimensions": [CITES]}, "instructions"),
        ({"instructions": 5, "dimensions": [CITES]}, "instructions"),
        ({"instructions": "x" * 20_001, "dimensions": []}, "instructions"),
        ({"instructions": ""}, "dimensions"),
        ({"instructions": "", "dimensions": {"a": 1}}, "dimensions"),
        ({"instructions": "", "dimensions": [{**HELPFUL, "maximum": 0}]}, "dimensions[0].maximum"),
    ],
    ids=[
        "unknown field",
        "no instructions",
        "number",
        "too long",
        "no dimensions",
        "object",
        "empty range",
    ],
)
def test_a_bad_rubric_is_400_naming_the_field(admin_api, body, field):
    TaskTypeFactory(name="t1")
    refused = admin_api.put(rubric_url("t1"), body, format="json")
    assert refused.status_code == 400
    assert field in refused.json(), refused.json()
    assert not Rubric.objects.exists()


# --------------------------------------------------------------------------- the pages


def test_an_admin_saves_a_version_on_the_page_and_sees_its_history(user_in):
    TaskTypeFactory(name="t1")
    client = logged_in(user_in(Role.ADMIN))
    assert "none yet" in client.get("/rubrics/").content.decode()
    saved = client.post(
        "/rubrics/t1/",
        {"instructions": "Check <b>figures</b>.", "dimensions": json.dumps([CITES])},
        follow=True,
    )
    html = saved.content.decode()
    assert "Saved as version 1." in html
    assert "<b>figures</b>" not in html and "&lt;b&gt;figures&lt;/b&gt;" in html
    assert Rubric.objects.get().dimensions == [CITES | {"help": ""}]


@pytest.mark.parametrize(
    ("dimensions", "named"),
    [("[{", "dimensions"), (json.dumps([{**HELPFUL, "maximum": 0}]), "dimensions[0].maximum")],
    ids=["not JSON", "empty range"],
)
def test_a_refused_rubric_on_the_page_keeps_what_was_typed(user_in, dimensions, named):
    TaskTypeFactory(name="t1")
    page = logged_in(user_in(Role.ADMIN)).post(
        "/rubrics/t1/", {"instructions": "Kept.", "dimensions": dimensions}
    )
    html = page.content.decode()
    assert page.status_code == 400
    assert f"<strong>{named}</strong>" in html
    assert "Kept." in html
    assert not Rubric.objects.exists()


def test_a_lead_reads_the_page_but_may_not_save(user_in):
    TaskTypeFactory(name="t1")
    client = logged_in(user_in(Role.LEAD))
    page = client.get("/rubrics/t1/").content.decode()
    assert "No rubric yet" in page and "rubric-edit" not in page
    body = {"instructions": "", "dimensions": "[]"}
    assert client.post("/rubrics/t1/", body).status_code == 403
    assert logged_in(user_in(Role.GATEWAY)).get("/rubrics/").status_code == 403
    assert not Rubric.objects.exists()


def test_the_outputs_page_shows_a_reviews_scores(scored_item, reviewer, user_in):
    reviews.item_decide(
        item_id=scored_item.pk,
        reviewer=reviewer,
        decision=reviews.DecisionInput("approve", scores={**SCORED, "helpful": 3.5}),
    )
    html = logged_in(user_in(Role.LEAD)).get(f"/dashboard/outputs/{scored_item.output_id}/")
    text = html.content.decode()
    assert "helpful <strong>3.5</strong>" in text
    assert "tone <strong>casual</strong>" in text
    assert "cites <strong>no</strong>" in text
    assert "(rubric v1)" in text
