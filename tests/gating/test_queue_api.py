"""The reviewers' API: claim, decide, and what a decision does to the output."""

import pytest

from gating import reviews
from gating.exceptions import DecisionInvalid
from gating.models import AuditEvent, Output, Review, ReviewItem, TaskModelStats, TaskType
from gating.roles import Role

pytestmark = pytest.mark.django_db

CLAIM = "/api/v1/queue/claim/"


def decision_url(item_id):
    return f"/api/v1/queue/{item_id}/decision/"


def test_claim_gives_the_oldest_item_with_everything_needed_to_judge_it(held_outputs, reviewer_api):
    first, _ = held_outputs(2)

    body = reviewer_api.post(CLAIM).json()

    assert body["output"]["id"] == first.pk
    assert body["kind"] == "review"
    assert body["output"]["input"] == first.input_text
    assert body["output"]["output"] == first.output_text
    assert body["output"]["validators"] == first.validator_results
    assert body["output"]["impacts"] == first.impacts
    assert body["output"]["thresholds"] == {
        "review": first.review_threshold,
        "approve": first.approve_threshold,
    }
    assert body["prior_reviews"] == []
    assert body["lease_expires_at"] is not None


def test_claim_when_nothing_is_left_is_204(reviewer_api, db):
    assert reviewer_api.post(CLAIM).status_code == 204


def test_claiming_again_returns_the_item_already_held(held_outputs, reviewer_api):
    held_outputs(2)
    first = reviewer_api.post(CLAIM).json()["id"]
    assert reviewer_api.post(CLAIM).json()["id"] == first


def test_claim_filters_narrow_the_queue_and_bad_ones_are_named(held_outputs, reviewer_api):
    held_outputs(1, task_type="a", model="m1")
    wanted = held_outputs(1, task_type="b", model="m2")[0]

    body = reviewer_api.post(f"{CLAIM}?task_type=b&model=m2").json()
    assert body["output"]["id"] == wanted.pk

    bad = reviewer_api.post(f"{CLAIM}?task_type=nope&score_min=high", format="json")
    assert bad.status_code == 400
    assert set(bad.json()) == {"task_type", "score_min"}


def test_approve_finalizes_the_output_and_counts_the_review(
    held_outputs, reviewer_api, gateway_api
):
    output = held_outputs(1, task_type="t")[0]
    item_id = reviewer_api.post(CLAIM).json()["id"]

    response = reviewer_api.post(decision_url(item_id), {"action": "approve"}, format="json")

    assert response.status_code == 201, response.content
    shown = gateway_api.get(f"/api/v1/outputs/{output.pk}/").json()
    assert shown["status"] == "approved"
    assert shown["final_output"] == output.output_text
    assert TaskType.objects.get(name="t").reviewed_count == 1
    pair = TaskModelStats.objects.get(task_type__name="t", model=output.model)
    assert (pair.reviewed_count, pair.approved_unchanged_count) == (1, 1)


def test_modify_stores_the_edit_as_the_final_output(held_outputs, reviewer_api, gateway_api):
    output = held_outputs(1, task_type="t")[0]
    item_id = reviewer_api.post(CLAIM).json()["id"]

    edited = "Revenue grew 4.2% on the quarter."
    body = {"action": "modify", "output": edited, "note": "precision"}
    assert reviewer_api.post(decision_url(item_id), body, format="json").status_code == 201

    shown = gateway_api.get(f"/api/v1/outputs/{output.pk}/").json()
    assert (shown["status"], shown["final_output"]) == ("modified", edited)
    pair = TaskModelStats.objects.get(task_type__name="t", model=output.model)
    assert (pair.reviewed_count, pair.approved_unchanged_count) == (1, 0)


def test_reject_needs_a_configured_reason_and_leaves_no_final_text(
    held_outputs, reviewer_api, gateway_api, settings
):
    output = held_outputs(1)[0]
    item_id = reviewer_api.post(CLAIM).json()["id"]
    reason = settings.REVIEW_REJECT_REASONS[0]

    response = reviewer_api.post(
        decision_url(item_id), {"action": "reject", "reason": reason}, format="json"
    )

    assert response.status_code == 201
    shown = gateway_api.get(f"/api/v1/outputs/{output.pk}/").json()
    assert (shown["status"], shown["final_output"]) == ("rejected", None)
    assert Review.objects.get().reason == reason


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"action": "modify"}, "output"),
        ({"action": "modify", "output": "Revenue grew 4% on the quarter."}, "output"),
        ({"action": "reject"}, "reason"),
        ({"action": "reject", "reason": "because"}, "reason"),
        ({"action": "approve", "output": "something else"}, "output"),
        ({"action": "approve", "reason": "other"}, "reason"),
        ({"action": "escalate"}, "action"),
        ({}, "action"),
    ],
)
def test_a_bad_decision_is_400_naming_the_field_and_changes_nothing(
    held_outputs, reviewer_api, reviewer, body, field
):
    held_outputs(1)
    item_id = reviewer_api.post(CLAIM).json()["id"]

    response = reviewer_api.post(decision_url(item_id), body, format="json")

    assert response.status_code == 400
    assert field in response.json()
    item = ReviewItem.objects.get(pk=item_id)
    assert (item.state, item.claimed_by_id) == ("open", reviewer.pk)
    assert not Review.objects.exists()
    assert not AuditEvent.objects.filter(action="decision").exists()


@pytest.mark.parametrize("edited", ["", "   \n\t"])
def test_a_modify_with_an_empty_output_is_400_and_stores_nothing(
    held_outputs, reviewer_api, reviewer, edited
):
    output = held_outputs(1)[0]
    item_id = reviewer_api.post(CLAIM).json()["id"]

    response = reviewer_api.post(
        decision_url(item_id), {"action": "modify", "output": edited}, format="json"
    )

    assert response.status_code == 400
    assert "output" in response.json()
    item = ReviewItem.objects.get(pk=item_id)
    assert (item.state, item.claimed_by_id) == ("open", reviewer.pk)
    assert not Review.objects.exists()
    output.refresh_from_db()
    assert (output.status, output.final_output_text) == ("pending", None)


@pytest.mark.parametrize("edited", ["", "   \n\t"])
def test_the_service_refuses_a_modify_with_an_empty_output(held_outputs, reviewer, edited):
    output = held_outputs(1)[0]
    item = reviews.item_claim(reviewer=reviewer)

    with pytest.raises(DecisionInvalid) as refused:
        reviews.item_decide(
            item_id=item.pk,
            reviewer=reviewer,
            decision=reviews.DecisionInput("modify", edited_output=edited),
        )

    assert refused.value.field == "output"
    item.refresh_from_db()
    assert (item.state, item.claimed_by_id) == ("open", reviewer.pk)
    assert not Review.objects.exists()
    assert Output.objects.get(pk=output.pk).status == "pending"


def test_a_second_decision_on_the_same_slot_is_409(held_outputs, reviewer_api):
    held_outputs(1)
    item_id = reviewer_api.post(CLAIM).json()["id"]
    assert (
        reviewer_api.post(decision_url(item_id), {"action": "approve"}, format="json").status_code
        == 201
    )

    again = reviewer_api.post(decision_url(item_id), {"action": "approve"}, format="json")

    assert again.status_code == 409
    assert Review.objects.count() == 1


def test_a_decision_without_the_claim_is_409(held_outputs, reviewer_api, user_in, client_for):
    held_outputs(1)
    item_id = reviewer_api.post(CLAIM).json()["id"]
    other = client_for(user_in(Role.REVIEWER))

    response = other.post(decision_url(item_id), {"action": "approve"}, format="json")

    assert response.status_code == 409
    assert not Review.objects.exists()


def test_an_unknown_item_is_404(reviewer_api, db):
    assert (
        reviewer_api.post(decision_url(999_999), {"action": "approve"}, format="json").status_code
        == 404
    )


def test_form_encoded_decisions_are_accepted_for_the_pages(held_outputs, reviewer_api):
    held_outputs(1)
    item_id = reviewer_api.post(CLAIM).json()["id"]
    response = reviewer_api.post(decision_url(item_id), {"action": "approve"}, format="multipart")
    # The pages post urlencoded forms; multipart is not among the accepted types.
    assert response.status_code == 415
    response = reviewer_api.post(
        decision_url(item_id),
        "action=approve",
        content_type="application/x-www-form-urlencoded",
    )
    assert response.status_code == 201


def test_claims_and_decisions_are_in_the_audit_log(held_outputs, reviewer_api, reviewer):
    held_outputs(1)
    item_id = reviewer_api.post(CLAIM).json()["id"]
    reviewer_api.post(decision_url(item_id), {"action": "approve"}, format="json")

    claim, decision = AuditEvent.objects.exclude(action="access_change").order_by("id")
    assert (claim.action, claim.actor, claim.object_id) == ("claim", reviewer, str(item_id))
    assert claim.before == {"claimed_by": None}
    assert claim.after["claimed_by"] == reviewer.pk
    assert (decision.action, decision.object_type) == ("decision", "gating.review")
    assert decision.before["output_status"] == "pending"
    assert decision.after["action"] == "approve"


def test_queue_list_is_oldest_first_with_ages(held_outputs, reviewer_api):
    outputs = held_outputs(3)
    body = reviewer_api.get("/api/v1/queue/").json()
    assert [row["output_id"] for row in body["results"]] == [o.pk for o in outputs]
    assert all(row["age_seconds"] >= 0 for row in body["results"])

    summary = reviewer_api.get("/api/v1/queue/summary/").json()
    assert summary["size"] == 3
    assert summary["oldest_age_seconds"] >= 0


def test_output_status_stays_pending_while_only_claimed(held_outputs, reviewer_api):
    output = held_outputs(1)[0]
    reviewer_api.post(CLAIM)
    assert Output.objects.get(pk=output.pk).status == "pending"
