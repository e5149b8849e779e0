"""The reviewers' pages: who may open them, what they show, and that they escape LLM text."""

import re
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from gating import reviews, services
from gating.models import Output, Review, ReviewItem
from gating.roles import Role
from tests.factories import TaskTypeFactory, UserFactory, logged_in, valid_submission

SCRIPT = "<script>window.__xss=1</script>"
IMG = '</script><img src=x onerror="window.__xss=1">'


@pytest.fixture
def hold(gateway):
    """Ingest outputs into a task type in cold start, so the gate holds each for review."""

    def _hold(count=1, task_type="t1", double_review_rate=0.0, **fields) -> list[ReviewItem]:
        TaskTypeFactory(name=task_type, reviewed_count=0, double_review_rate=double_review_rate)
        outputs = [
            services.output_ingest(
                source=gateway,
                submission=valid_submission(task_type=task_type, **fields),
            ).output
            for _ in range(count)
        ]
        return [ReviewItem.objects.get(output=output) for output in outputs]

    return _hold


def _decide(item, reviewer, **decision) -> Review:
    claimed = reviews.item_claim(reviewer=reviewer)
    assert claimed.pk == item.pk
    return reviews.item_decide(
        item_id=item.pk, reviewer=reviewer, decision=reviews.DecisionInput(**decision)
    )


# --------------------------------------------------------------------------- access by role

ANON = "anonymous"
GATEWAY, REVIEWER, LEAD, ADMIN = Role.GATEWAY, Role.REVIEWER, Role.LEAD, Role.ADMIN
CAN_REVIEW = {REVIEWER, LEAD, ADMIN}
PAGES = {
    # (method, path, body): {role: expected status}; anonymous always goes to the login page.
    ("get", "/queue/", None): {GATEWAY: 403, REVIEWER: 200, LEAD: 200, ADMIN: 200},
    ("get", "/queue/table/", None): {GATEWAY: 403, REVIEWER: 200, LEAD: 200, ADMIN: 200},
    ("post", "/queue/next/", None): {GATEWAY: 403, REVIEWER: 302, LEAD: 302, ADMIN: 302},
    ("get", "/review/{item}/", None): {GATEWAY: 403, REVIEWER: 200, LEAD: 200, ADMIN: 200},
    ("post", "/review/{item}/diff/", "edit"): {GATEWAY: 403, REVIEWER: 200, LEAD: 200, ADMIN: 200},
    ("get", "/queue/bulk/", None): {GATEWAY: 403, REVIEWER: 403, LEAD: 200, ADMIN: 200},
    ("post", "/queue/bulk/", "bulk"): {GATEWAY: 403, REVIEWER: 403, LEAD: 200, ADMIN: 200},
}  # fmt: skip
BODIES = {None: {}, "edit": {"output": "edited"}, "bulk": {"action": "reject", "reason": "broken"}}
CASES = [
    (page, who, expected.get(who, 302)) for page, expected in PAGES.items() for who in [ANON, *Role]
]


@pytest.mark.parametrize(
    ("page", "who", "expected"), CASES, ids=[f"{p[0]} {p[1]} as {w}" for p, w, _ in CASES]
)
def test_page_status_by_role(page, who, expected, hold):
    method, path, body = page
    [item] = hold()
    user = None if who == ANON else UserFactory(role=who)
    if who in CAN_REVIEW:
        # The review page is the claim holder's: let this user hold the item.
        reviews.item_claim(reviewer=user)
    path = path.format(item=item.pk)

    response = getattr(logged_in(user), method)(path, BODIES[body])

    assert response.status_code == expected
    if who == ANON:
        assert response["Location"].startswith(f"/login/?next={path}")


def test_a_reviewer_may_not_open_the_bulk_page(hold):
    hold()
    reviewer = logged_in(UserFactory(role=Role.REVIEWER))

    assert reviewer.get("/queue/bulk/").status_code == 403
    assert reviewer.post("/queue/bulk/", {"action": "approve", "reason": "x"}).status_code == 403
    assert Review.objects.count() == 0


@pytest.mark.parametrize(
    ("role", "shown", "hidden"),
    [
        (Role.REVIEWER, ['href="/queue/"'], ['href="/queue/bulk/"', 'href="/admin/"']),
        (Role.LEAD, ['href="/queue/"', 'href="/queue/bulk/"'], ['href="/admin/"']),
        (Role.ADMIN, ['href="/queue/"', 'href="/queue/bulk/"', 'href="/admin/"'], []),
        (Role.GATEWAY, [], ['href="/queue/"', 'href="/queue/bulk/"', 'href="/admin/"']),
    ],
)
def test_navigation_links_follow_the_role(role, shown, hidden, db):
    page = logged_in(UserFactory(role=role)).get("/").content.decode()

    assert 'href="/api/docs/"' in page
    for link in shown:
        assert link in page
    for link in hidden:
        assert link not in page


# --------------------------------------------------------------------------- the queue page


def test_queue_page_shows_size_oldest_age_and_items_oldest_first(hold):
    newer_queued, older_queued = hold(2)
    now = timezone.now()
    for item, age in ((older_queued, timedelta(hours=3)), (newer_queued, timedelta(minutes=5))):
        ReviewItem.objects.filter(pk=item.pk).update(queued_at=now - age, turn_at=now - age)

    response = logged_in(UserFactory(role=Role.REVIEWER)).get("/queue/")

    page = response.content.decode()
    assert response.status_code == 200
    assert '<strong id="queue-size">2</strong> open items' in page
    # Durations as every page and alert writes them (gating.formatting.duration).
    assert '<strong id="queue-oldest-age">3 h</strong>' in page
    assert re.search(r">5 min( \d+ s)?</td>", page)  # seconds may pass while it renders
    assert page.index(f"<td>{older_queued.pk}</td>") < page.index(f"<td>{newer_queued.pk}</td>")
    assert 'hx-get="/queue/table/"' in page
    assert 'hx-trigger="every 15s"' in page


def test_queue_filters_narrow_the_summary_and_the_next_claim(hold):
    hold(2, task_type="t1")
    [wanted] = hold(1, task_type="t2")
    reviewer = UserFactory(role=Role.REVIEWER)
    client = logged_in(reviewer)

    page = client.get("/queue/", {"task_type": "t2"}).content.decode()
    response = client.post("/queue/next/", {"task_type": "t2"})

    assert '<strong id="queue-size">1</strong> open item' in page
    assert '<input type="hidden" name="task_type" value="t2">' in page
    assert response["Location"] == f"/review/{wanted.pk}/?task_type=t2"
    assert ReviewItem.objects.get(pk=wanted.pk).claimed_by == reviewer


def _disputed(hold) -> ReviewItem:
    """An output whose two reviews disagree: its adjudication is open, waiting for a lead."""
    [first_item] = hold(double_review_rate=1.0)
    _decide(first_item, UserFactory(role=Role.REVIEWER), action="approve")
    second = UserFactory(role=Role.REVIEWER)
    second_item = reviews.item_claim(reviewer=second)
    reviews.item_decide(
        item_id=second_item.pk,
        reviewer=second,
        decision=reviews.DecisionInput(action="reject", reason="unsafe"),
    )
    return ReviewItem.objects.get(output=first_item.output, kind=ReviewItem.Kind.ADJUDICATION)


def test_a_reviewer_is_not_listed_the_adjudications_only_a_lead_can_take(hold):
    adjudication = _disputed(hold)
    [held] = hold(task_type="t2")
    # The adjudication keeps its output's turn, ahead of the newer held output.
    assert adjudication.turn_at < held.turn_at

    page = logged_in(UserFactory(role=Role.REVIEWER)).get("/queue/").content.decode()

    assert f"<td>{held.pk}</td>" in page
    assert f"<td>{adjudication.pk}</td>" not in page
    assert '<strong id="queue-size">1</strong> open item' in page
    assert (
        "Not listed: 1 adjudication or gold check waiting for a lead, who alone can take it."
        in page
    )

    lead_page = logged_in(UserFactory(role=Role.LEAD)).get("/queue/").content.decode()
    assert lead_page.index(f"<td>{adjudication.pk}</td>") < lead_page.index(f"<td>{held.pk}</td>")
    assert '<strong id="queue-size">2</strong> open items' in lead_page
    assert 'id="queue-lead-only"' not in lead_page


def test_a_bad_filter_is_named_and_lists_nothing(hold):
    hold()

    response = logged_in(UserFactory(role=Role.REVIEWER)).get(
        "/queue/", {"task_type": "no-such-type", "score_min": "high"}
    )

    page = response.content.decode()
    assert response.status_code == 400
    unknown = "Unknown task type &quot;no-such-type&quot;."
    assert f'<span class="error" id="filter-task-type_error">{unknown}' in page
    assert '<span class="error" id="id_score_min_error">Enter a number.</span>' in page
    assert "no items are listed" in page


def test_queue_table_fragment_is_a_fragment(hold):
    hold(3)

    response = logged_in(UserFactory(role=Role.LEAD)).get("/queue/table/")

    page = response.content.decode()
    assert '<strong id="queue-size">3</strong>' in page
    assert "<html" not in page
    assert page.count("<tr>") == 4  # the header and three items


def test_next_claims_the_oldest_item_and_opens_it(hold):
    oldest, _ = hold(2)
    reviewer = UserFactory(role=Role.REVIEWER)

    response = logged_in(reviewer).post("/queue/next/")

    assert response["Location"] == f"/review/{oldest.pk}/"
    assert ReviewItem.objects.get(pk=oldest.pk).claimed_by == reviewer


def test_next_on_an_empty_queue_says_so(db):
    response = logged_in(UserFactory(role=Role.REVIEWER)).post("/queue/next/", follow=True)

    assert response.redirect_chain == [("/queue/", 302)]
    assert "Nothing left to review" in response.content.decode()


def test_queue_page_escapes_untrusted_model_names(hold):
    hold(model=IMG)

    client = logged_in(UserFactory(role=Role.REVIEWER))

    listed = client.get("/queue/").content.decode()
    filtered = client.get("/queue/", {"model": SCRIPT}).content.decode()

    for page in (listed, filtered):
        assert "<img" not in page
        assert "window.__xss=1</script>" not in page
    assert "<td>&lt;/script&gt;&lt;img src=x onerror=&quot;window.__xss=1&quot;&gt;</td>" in listed
    assert 'value="&lt;script&gt;window.__xss=1&lt;/script&gt;"' in filtered


# --------------------------------------------------------------------------- the review page


def test_the_review_page_is_only_for_the_claim_holder(hold):
    [item] = hold()
    reviews.item_claim(reviewer=UserFactory(role=Role.REVIEWER))

    response = logged_in(UserFactory(role=Role.REVIEWER)).get(f"/review/{item.pk}/", follow=True)

    assert response.redirect_chain == [("/queue/", 302)]
    assert f"You do not hold item {item.pk}" in response.content.decode()


def test_a_decided_item_is_not_shown_again(hold):
    [item] = hold()
    reviewer = UserFactory(role=Role.REVIEWER)
    _decide(item, reviewer, action="approve")

    response = logged_in(reviewer).get(f"/review/{item.pk}/")

    assert response.status_code == 302
    assert response["Location"] == "/queue/"


def test_an_unknown_item_is_404(db):
    client = logged_in(UserFactory(role=Role.REVIEWER))

    assert client.get("/review/999999/").status_code == 404
    assert client.post("/review/999999/diff/", {"output": "x"}).status_code == 404


def test_the_review_page_shows_what_the_gate_saw_and_why(hold):
    [item] = hold(
        input="Summarise the report.",
        output="Revenue grew 4%.",
        evidence={
            "entries": [{"tool": "read", "target": "annual-report.pdf", "outcome": "ranked"}]
        },
        metadata={"request_id": "req-77"},
    )
    reviewer = UserFactory(role=Role.REVIEWER)
    reviews.item_claim(reviewer=reviewer)

    page = logged_in(reviewer).get(f"/review/{item.pk}/").content.decode()

    output = Output.objects.get(pk=item.output_id)
    assert "Summarise the report." in page
    assert "Revenue grew 4%." in page
    assert "12 words over" in page  # a validator's detail
    for impact in output.impacts:
        assert impact["factor"] in page
    assert output.reasons[0] in page
    assert f"review below {output.review_threshold:.2f}" in page
    assert f"approve from {output.approve_threshold:.2f}" in page
    assert "annual-report.pdf" in page
    assert "req-77" in page
    for key in "amrsn":
        assert f'data-key="{key}"' in page
        assert f"<kbd>{key}</kbd>" in page
    assert f'hx-post="/api/v1/queue/{item.pk}/decision/"' in page
    assert f'hx-post="/api/v1/queue/{item.pk}/heartbeat/" hx-trigger="every 60s"' in page
    assert f'hx-post="/review/{item.pk}/diff/" hx-trigger="keyup changed delay:300ms"' in page
    for reason in ["factual_error", "unsafe", "other"]:
        assert f'<option value="{reason}">' in page


def test_the_review_page_escapes_everything_from_the_output(hold):
    [item] = hold(
        external_id=f"ext-{IMG}",
        model=SCRIPT,
        tier=IMG[:50],
        input=f"Input {SCRIPT} {IMG}",
        output=f"Output {SCRIPT} {IMG}",
        validators=[{"name": "facts", "passed": False, "detail": IMG}],
        evidence={"entries": [{"tool": "grep", "query": SCRIPT, "target": IMG, "sources": [IMG]}]},
        metadata={"note": IMG, "nested": {"deep": SCRIPT}},
    )
    reviewer = UserFactory(role=Role.REVIEWER)
    reviews.item_claim(reviewer=reviewer)

    page = logged_in(reviewer).get(f"/review/{item.pk}/").content.decode()

    assert "<img" not in page
    assert "<script>window" not in page
    assert "window.__xss=1</script>" not in page
    assert "Output &lt;script&gt;window.__xss=1&lt;/script&gt;" in page
    # The modify box holds the original text, escaped, so it cannot close the textarea.
    assert "\nOutput &lt;script&gt;window.__xss=1&lt;/script&gt; &lt;/script&gt;&lt;img" in page


def test_a_second_review_does_not_show_the_first_decision(hold):
    [first_item] = hold(double_review_rate=1.0, output="The original answer.")
    first = UserFactory(role=Role.REVIEWER, username="first-reviewer")
    _decide(first_item, first, action="modify", edited_output="A FIRST-EDIT answer.", note="n1")
    second = UserFactory(role=Role.REVIEWER, username="second-reviewer")
    second_item = reviews.item_claim(reviewer=second)

    page = logged_in(second).get(f"/review/{second_item.pk}/").content.decode()

    assert second_item.kind == ReviewItem.Kind.SECOND
    assert "The original answer." in page
    assert "FIRST-EDIT" not in page
    assert "first-reviewer" not in page
    assert 'id="prior-reviews"' not in page


def test_an_adjudication_shows_both_decisions_with_the_diff(hold):
    [first_item] = hold(double_review_rate=1.0, output="The original answer.")
    first = UserFactory(role=Role.REVIEWER, username="first-reviewer")
    _decide(first_item, first, action="modify", edited_output="The FIRST-EDIT answer.")
    second = UserFactory(role=Role.REVIEWER, username="second-reviewer")
    second_item = reviews.item_claim(reviewer=second)
    reviews.item_decide(
        item_id=second_item.pk,
        reviewer=second,
        decision=reviews.DecisionInput(action="reject", reason="unsafe", note="Too risky <b>"),
    )
    lead = UserFactory(role=Role.LEAD)
    adjudication = reviews.item_claim(reviewer=lead)

    page = logged_in(lead).get(f"/review/{adjudication.pk}/").content.decode()

    assert adjudication.kind == ReviewItem.Kind.ADJUDICATION
    assert 'id="prior-reviews"' in page
    assert "Modify by first-reviewer" in page
    assert "Reject by second-reviewer" in page
    assert "Reason: Unsafe" in page
    assert "Note: Too risky &lt;b&gt;" in page
    assert "The <del>original</del><ins>FIRST-EDIT</ins> answer." in page


# --------------------------------------------------------------------------- the diff preview


def test_the_diff_preview_marks_the_edit(hold):
    [item] = hold(output="Revenue grew 4% on the quarter.")

    response = logged_in(UserFactory(role=Role.REVIEWER)).post(
        f"/review/{item.pk}/diff/", {"output": "Revenue grew 5% on the quarter."}
    )

    assert response.content.decode().strip() == (
        '<pre class="text diff">Revenue grew <del>4%</del><ins>5%</ins> on the quarter.</pre>'
    )


def test_the_diff_preview_escapes_script(hold):
    [item] = hold(output="Plain <b>text</b>.")

    response = logged_in(UserFactory(role=Role.REVIEWER)).post(
        f"/review/{item.pk}/diff/", {"output": f"Plain <b>text</b>. {SCRIPT}"}
    )

    fragment = response.content.decode()
    assert "<script>" not in fragment
    assert "<b>" not in fragment
    assert "<ins> &lt;script&gt;window.__xss=1&lt;/script&gt;</ins>" in fragment


def test_the_diff_preview_says_when_nothing_changed(hold):
    [item] = hold(output="Same text.")

    response = logged_in(UserFactory(role=Role.REVIEWER)).post(
        f"/review/{item.pk}/diff/", {"output": "Same text."}
    )

    assert "No change yet" in response.content.decode()


def test_the_page_can_decide_through_the_api_with_its_csrf_token(hold):
    """What the page's htmx does: session cookie, form-encoded body, X-CSRFToken header."""
    [item] = hold()
    reviewer = UserFactory(role=Role.REVIEWER)
    reviews.item_claim(reviewer=reviewer)
    client = Client(enforce_csrf_checks=True)
    client.force_login(reviewer)
    client.get(f"/review/{item.pk}/")
    token = client.cookies["csrftoken"].value
    url = f"/api/v1/queue/{item.pk}/decision/"

    form = {"data": "action=approve", "content_type": "application/x-www-form-urlencoded"}

    without_token = client.post(url, **form)
    with_token = client.post(url, **form, headers={"X-CSRFToken": token})

    assert without_token.status_code == 403
    assert with_token.status_code == 201
    assert Output.objects.get(pk=item.output_id).status == Output.Status.APPROVED


# --------------------------------------------------------------------------- bulk decisions


def test_a_lead_previews_then_confirms_a_bulk_reject(hold):
    chosen = hold(3, task_type="t1")
    [other] = hold(1, task_type="t9")
    lead = UserFactory(role=Role.LEAD)
    client = logged_in(lead)
    form = {"task_type": "t1", "action": "reject", "reason": "model-a broke"}

    preview = client.post("/queue/bulk/", form | {"step": "preview"})

    assert preview.status_code == 200
    assert '<strong id="bulk-count">3</strong> held outputs will be' in preview.content.decode()
    assert Review.objects.count() == 0

    done = client.post("/queue/bulk/", form | {"step": "confirm"}, follow=True)

    assert done.redirect_chain == [("/queue/bulk/", 302)]
    assert "Rejected 3 held outputs." in done.content.decode()
    decided = Output.objects.filter(pk__in=[item.output_id for item in chosen])
    assert set(decided.values_list("status", flat=True)) == {Output.Status.REJECTED}
    bulk = Review.objects.filter(output__in=decided)
    assert bulk.count() == 3
    assert all(r.is_bulk and r.reviewer == lead and r.note == "model-a broke" for r in bulk)
    assert Output.objects.get(pk=other.output_id).status == Output.Status.PENDING


def test_a_bulk_decision_needs_a_reason_and_an_action(hold):
    hold()

    response = logged_in(UserFactory(role=Role.LEAD)).post(
        "/queue/bulk/", {"action": "", "reason": "", "step": "confirm"}
    )

    page = response.content.decode()
    assert response.status_code == 400
    assert "reason: This field may not be blank." in page
    assert "action: " in page
    assert Review.objects.count() == 0
