"""Comments on an output: the service's rules, the API by role, and the pages' thread."""

import pytest
from django.urls import reverse

from gating import comments, reviews
from gating.exceptions import FieldInvalid
from gating.models import COMMENT_MAX_CHARS, AuditEvent, Comment
from gating.roles import Role
from tests.factories import TaskTypeFactory, ingested, logged_in

pytestmark = pytest.mark.django_db

SCRIPT = "<script>alert(1)</script>"


@pytest.fixture
def output(gateway):
    return ingested(gateway)


def url_of(output) -> str:
    return f"/api/v1/outputs/{output.pk}/comments/"


# --------------------------------------------------------------------------- the service


def test_a_comment_is_stored_stripped_with_its_author(output, reviewer):
    comment = comments.comment_add(output=output, author=reviewer, text="  why 4.2?\n")
    assert (comment.output, comment.author, comment.text) == (output, reviewer, "why 4.2?")


def test_the_longest_text_counts_characters_after_stripping(output, reviewer):
    longest = "é" * COMMENT_MAX_CHARS
    assert comments.comment_add(output=output, author=reviewer, text=f" {longest} ").text == longest


def test_one_character_is_enough(output, reviewer):
    assert comments.comment_add(output=output, author=reviewer, text="?").text == "?"


@pytest.mark.parametrize(
    "text",
    ["", "   ", "\n\t ", "x" * (COMMENT_MAX_CHARS + 1), "null\x00byte"],
    ids=["empty", "spaces", "white space", "one too long", "NUL"],
)
def test_a_bad_text_is_refused_by_name_and_nothing_is_stored(output, reviewer, text):
    with pytest.raises(FieldInvalid) as refused:
        comments.comment_add(output=output, author=reviewer, text=text)
    assert refused.value.field == "text"
    assert not Comment.objects.exists()
    assert not AuditEvent.objects.filter(action=AuditEvent.Action.COMMENT).exists()


def test_a_comment_is_audited_by_id_and_length_without_its_words(output, reviewer):
    comment = comments.comment_add(output=output, author=reviewer, text="secret words")
    event = AuditEvent.objects.get(action=AuditEvent.Action.COMMENT)
    assert (event.actor, event.object_type, event.object_id) == (
        reviewer,
        "gating.output",
        str(output.pk),
    )
    assert event.after == {"comment": comment.pk, "length": len("secret words")}
    assert event.at == comment.created_at


def test_a_failed_audit_leaves_no_comment(output, reviewer, monkeypatch):
    def broken(**kwargs):
        raise RuntimeError("the audit log is down")

    monkeypatch.setattr(comments, "audit_record", broken)
    with pytest.raises(RuntimeError):
        comments.comment_add(output=output, author=reviewer, text="hello")
    assert not Comment.objects.exists()


def test_the_thread_is_oldest_first_and_only_the_outputs_own(gateway, reviewer):
    first, other = ingested(gateway), ingested(gateway)
    for text in ["one", "two", "three"]:
        comments.comment_add(output=first, author=reviewer, text=text)
    comments.comment_add(output=other, author=reviewer, text="elsewhere")
    assert [c.text for c in comments.comments_of(first)] == ["one", "two", "three"]


# --------------------------------------------------------------------------- the API


@pytest.mark.parametrize("role", [Role.REVIEWER, Role.LEAD, Role.ADMIN])
def test_staff_roles_comment_and_read_the_thread(output, user_in, client_for, role):
    api = client_for(user_in(role))
    added = api.post(url_of(output), {"text": " first "}, format="json")
    assert added.status_code == 201
    assert added.json()["text"] == "first"
    assert added.json()["output"] == output.pk
    api.post(url_of(output), {"text": "second"}, format="json")
    listed = api.get(url_of(output))
    assert listed.status_code == 200
    assert [c["text"] for c in listed.json()] == ["first", "second"]


def test_a_gateway_token_may_neither_read_nor_comment(output, gateway_api):
    assert gateway_api.get(url_of(output)).status_code == 403
    assert gateway_api.post(url_of(output), {"text": "hi"}, format="json").status_code == 403
    assert not Comment.objects.exists()


def test_an_unknown_output_is_404(reviewer_api):
    assert reviewer_api.get("/api/v1/outputs/999999/comments/").status_code == 404
    missing = reviewer_api.post("/api/v1/outputs/999999/comments/", {"text": "hi"}, format="json")
    assert missing.status_code == 404


def test_anonymous_is_401(output, client):
    assert client.get(url_of(output)).status_code in {401, 403}


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"text": "hi", "colour": "blue"}, "colour"),
        ({"text": 1}, "text"),
        ({"text": None}, "text"),
        ({}, "text"),
        ({"text": ""}, "text"),
        ({"text": "   "}, "text"),
        ({"text": "x" * (COMMENT_MAX_CHARS + 1)}, "text"),
    ],
    ids=["unknown field", "number", "null", "missing", "empty", "spaces", "too long"],
)
def test_a_bad_body_is_400_naming_the_field_and_stores_nothing(output, reviewer_api, body, field):
    refused = reviewer_api.post(url_of(output), body, format="json")
    assert refused.status_code == 400
    assert field in refused.json()
    assert not Comment.objects.exists()


def test_a_list_body_is_400(output, reviewer_api):
    refused = reviewer_api.post(url_of(output), ["hi"], format="json")
    assert refused.status_code == 400
    assert not Comment.objects.exists()


def test_the_api_gives_text_back_as_written(output, reviewer_api):
    reviewer_api.post(url_of(output), {"text": SCRIPT}, format="json")
    assert reviewer_api.get(url_of(output)).json()[0]["text"] == SCRIPT


# --------------------------------------------------------------------------- the pages


@pytest.fixture
def held_item(gateway, reviewer):
    TaskTypeFactory(name="t1", reviewed_count=0, double_review_rate=0.0)
    ingested(gateway, task_type="t1")
    return reviews.item_claim(reviewer=reviewer)


def test_the_review_page_shows_the_thread_escaped(held_item, reviewer):
    comments.comment_add(output=held_item.output, author=reviewer, text=SCRIPT)
    page = logged_in(reviewer).get(reverse("review", args=[held_item.pk]))
    html = page.content.decode()
    assert page.status_code == 200
    assert SCRIPT not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert reviewer.username in html
    assert 'id="comment-form"' in html


def test_a_comment_posted_from_the_review_page_goes_back_to_it(held_item, reviewer):
    client = logged_in(reviewer)
    posted = client.post(reverse("review-comment", args=[held_item.pk]), {"text": " looks off "})
    assert posted.status_code == 302
    assert posted["Location"] == f"{reverse('review', args=[held_item.pk])}#comments"
    assert Comment.objects.get().text == "looks off"
    assert "looks off" in client.get(reverse("review", args=[held_item.pk])).content.decode()


def test_a_bad_comment_from_the_page_stores_nothing_and_says_why(held_item, reviewer):
    client = logged_in(reviewer)
    posted = client.post(
        reverse("review-comment", args=[held_item.pk]), {"text": "   "}, follow=True
    )
    assert not Comment.objects.exists()
    assert "The comment was not added" in posted.content.decode()


def test_a_gateway_cannot_post_a_comment_from_a_page(held_item, gateway):
    posted = logged_in(gateway).post(reverse("review-comment", args=[held_item.pk]), {"text": "x"})
    assert posted.status_code == 403
    assert not Comment.objects.exists()


def test_the_output_page_shows_the_thread_escaped_and_takes_a_comment(output, user_in):
    lead = user_in(Role.LEAD)
    comments.comment_add(output=output, author=lead, text=SCRIPT)
    client = logged_in(lead)
    html = client.get(reverse("dashboard-output", args=[output.pk])).content.decode()
    assert SCRIPT not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    posted = client.post(reverse("dashboard-output-comment", args=[output.pk]), {"text": "ok"})
    assert posted.status_code == 302
    assert [c.text for c in comments.comments_of(output)] == [SCRIPT, "ok"]


def test_htmx_gets_the_thread_again_and_a_refused_text_back(held_item, reviewer):
    client = logged_in(reviewer)
    url = reverse("review-comment", args=[held_item.pk])
    refused = client.post(url, {"text": " \n "}, HTTP_HX_REQUEST="true")
    html = refused.content.decode()
    assert 'id="comment-error"' in html and "The comment was not added" in html
    assert "<html" not in html  # the section only, for htmx to swap in
    assert not Comment.objects.exists()
    added = client.post(url, {"text": f"{SCRIPT} ok"}, HTTP_HX_REQUEST="true").content.decode()
    assert "&lt;script&gt;alert(1)&lt;/script&gt; ok" in added
    assert 'id="comment-error"' not in added
    assert Comment.objects.get().text == f"{SCRIPT} ok"
