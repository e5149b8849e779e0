"""Style-only modifications: a modify the reviewer marks as taste (the output was fine),
which the learning cycles do not count as an error."""

import json
from urllib.parse import urlencode

import pytest
from django.db import IntegrityError, transaction
from django.test import Client
from rest_framework.test import APIClient

from gating import reviews, selectors
from gating.exceptions import DecisionInvalid
from gating.models import AuditEvent, Output, Review, ReviewItem
from gating.reviews import DecisionInput, RecordedDecision
from gating.roles import Role

pytestmark = pytest.mark.django_db

EDITED = "Revenue grew 4.2% on the quarter."


@pytest.fixture
def claimed(held_outputs, reviewer) -> ReviewItem:
    held_outputs(1)
    return reviews.item_claim(reviewer=reviewer)


def decide(api, item, body):
    return api.post(f"/api/v1/queue/{item.pk}/decision/", body, format="json")


def assert_nothing_decided(item, reviewer):
    current = ReviewItem.objects.get(pk=item.pk)
    assert (current.state, current.claimed_by_id) == ("open", reviewer.pk)
    assert not Review.objects.exists()
    assert Output.objects.get(pk=item.output_id).status == Output.Status.PENDING


# --------------------------------------------------------------------------- the API


def test_a_style_only_modify_is_stored_answered_and_logged(claimed, reviewer_api):
    body = {"action": "modify", "output": EDITED, "style_only": True}

    response = decide(reviewer_api, claimed, body)

    assert response.status_code == 201, response.content
    assert response.json()["style_only"] is True
    review = Review.objects.get()
    assert (review.action, review.edited_output, review.style_only) == ("modify", EDITED, True)
    # The output is still delivered as edited: style only changes what learning counts.
    assert Output.objects.get(pk=claimed.output_id).final_output_text == EDITED
    event = AuditEvent.objects.get(action="decision")
    assert event.after["style_only"] is True


@pytest.mark.parametrize("body", [{}, {"style_only": False}])
def test_a_modify_is_not_style_only_unless_marked(claimed, reviewer_api, body):
    response = decide(reviewer_api, claimed, {"action": "modify", "output": EDITED, **body})

    assert response.status_code == 201, response.content
    assert response.json()["style_only"] is False
    assert Review.objects.get().style_only is False
    assert AuditEvent.objects.get(action="decision").after["style_only"] is False


@pytest.mark.parametrize("value", ["true", 1, "yes", None, [True]])
def test_style_only_must_be_a_json_boolean(claimed, reviewer, reviewer_api, value):
    response = decide(
        reviewer_api, claimed, {"action": "modify", "output": EDITED, "style_only": value}
    )

    assert response.status_code == 400, response.content
    assert set(response.json()) == {"style_only"}
    assert_nothing_decided(claimed, reviewer)


@pytest.mark.parametrize(
    "body",
    [{"action": "approve"}, {"action": "reject", "reason": "other"}],
    ids=lambda b: b["action"],
)
def test_only_a_modify_can_be_style_only(claimed, reviewer, reviewer_api, body):
    response = decide(reviewer_api, claimed, {**body, "style_only": True})

    assert response.status_code == 400, response.content
    assert response.json() == {"style_only": ["Only a modify decision can be style only."]}
    assert_nothing_decided(claimed, reviewer)


def test_an_approve_that_says_it_is_not_style_only_is_an_approve(claimed, reviewer_api):
    response = decide(reviewer_api, claimed, {"action": "approve", "style_only": False})

    assert response.status_code == 201, response.content
    assert Review.objects.get().style_only is False


def test_the_schema_takes_style_only_as_a_boolean_and_answers_it(db):
    schema = json.loads(APIClient().get("/api/schema/", {"format": "json"}).content)
    components = schema["components"]["schemas"]
    operation = schema["paths"]["/api/v1/queue/{item_id}/decision/"]["post"]
    request = operation["requestBody"]["content"]["application/json"]["schema"]["$ref"]
    answer = operation["responses"]["201"]["content"]["application/json"]["schema"]["$ref"]

    taken = components[request.rsplit("/", 1)[1]]["properties"]["style_only"]
    given = components[answer.rsplit("/", 1)[1]]
    assert taken["type"] == "boolean"
    assert "matter of taste" in taken["description"]
    assert given["properties"]["style_only"]["type"] == "boolean"
    assert "style_only" in given["required"]


# --------------------------------------------------------------------------- the rules


def test_the_service_refuses_style_only_on_anything_but_a_modify(claimed, reviewer):
    with pytest.raises(DecisionInvalid) as refused:
        reviews.item_decide(
            item_id=claimed.pk,
            reviewer=reviewer,
            decision=DecisionInput("approve", style_only=True),
        )
    assert refused.value.field == "style_only"
    assert_nothing_decided(claimed, reviewer)


def test_the_database_refuses_a_style_only_approve(claimed, reviewer):
    review = reviews.item_decide(
        item_id=claimed.pk, reviewer=reviewer, decision=DecisionInput("approve")
    )

    with pytest.raises(IntegrityError), transaction.atomic():
        Review.objects.filter(pk=review.pk).update(style_only=True)


def test_replayed_decisions_keep_style_only(held_outputs, reviewer):
    held_outputs(1)
    item = ReviewItem.objects.get()

    (review,) = reviews.decisions_record(
        [
            RecordedDecision(
                item=item,
                reviewer=reviewer,
                decision=DecisionInput("modify", edited_output=EDITED, style_only=True),
                decided_at=item.queued_at,
            )
        ]
    )

    assert Review.objects.get(pk=review.pk).style_only is True


def test_an_adjudicator_sees_which_modification_was_style_only(held_outputs, user_in):
    held_outputs(1, double_review_rate=1.0)
    first, second, lead = user_in(Role.REVIEWER), user_in(Role.REVIEWER), user_in(Role.LEAD)
    for who, decision in [
        (first, DecisionInput("modify", edited_output=EDITED, style_only=True)),
        (second, DecisionInput("approve")),
    ]:
        item = reviews.item_claim(reviewer=who)
        reviews.item_decide(item_id=item.pk, reviewer=who, decision=decision)
    adjudication = reviews.item_claim(reviewer=lead)

    shown = [review.style_only for review in selectors.item_prior_reviews(adjudication)]
    client = Client()
    client.force_login(lead)
    page = client.get(f"/review/{adjudication.pk}/").content.decode()

    assert shown == [True, False]
    assert "Modify (style only) by" in page


# --------------------------------------------------------------------------- the page


def test_the_review_page_offers_style_only_in_the_modify_form(claimed, reviewer):
    client = Client()
    client.force_login(reviewer)

    page = client.get(f"/review/{claimed.pk}/").content.decode()

    form = page[
        page.index('<form id="modify-form"') : page.index(
            "</form>", page.index('<form id="modify-form"')
        )
    ]
    assert '<input type="checkbox" id="modify-style-only" name="style_only" value="true">' in form
    assert "Style only: the output was fine</label>" in form


@pytest.mark.parametrize(("checked", "stored"), [(True, True), (False, False)])
def test_the_page_form_submits_style_only(claimed, reviewer, checked, stored):
    """What the modify form sends: form-encoded, the checkbox's value only when ticked."""
    client = Client(enforce_csrf_checks=True)
    client.force_login(reviewer)
    client.get(f"/review/{claimed.pk}/")
    form = {"action": "modify", "output": EDITED, "note": ""}
    if checked:
        form["style_only"] = "true"

    response = client.post(
        f"/api/v1/queue/{claimed.pk}/decision/",
        data=urlencode(form),
        content_type="application/x-www-form-urlencoded",
        headers={"X-CSRFToken": client.cookies["csrftoken"].value},
    )

    assert response.status_code == 201, response.content
    review = Review.objects.get()
    assert (review.edited_output, review.style_only) == (EDITED, stored)
