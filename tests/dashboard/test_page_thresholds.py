"""The thresholds page: who may read, edit and run a cycle; an edit through the one writer
of the gate's settings, refused in words next to the field; and the what-if panel's
numbers against a hand computation."""

import math
from datetime import UTC, datetime, timedelta

import pytest
from statsmodels.stats.proportion import proportion_confint

from dashboard import whatif
from dashboard.estimates import weighted_rate
from dashboard.models import OutputRollup, ReviewRollup
from gating import services
from gating.models import AuditEvent, OutboxMessage, TaskType, Validator
from gating.roles import Role
from tests.factories import TaskTypeFactory, ingested, logged_in

pytestmark = pytest.mark.django_db

PAGE = "/dashboard/thresholds/?task_type=summarize"


@pytest.fixture
def task_type(gateway) -> TaskType:
    made = TaskTypeFactory(
        name="summarize", review_threshold=4.0, approve_threshold=7.0, cold_start_margin=0.0
    )
    ingested(gateway, task_type="summarize")  # creates the validators, and fills the gate's cache
    return made


def _form(task_type: TaskType, **changes) -> dict:
    """The form as the page fills it, with ``changes``."""
    values = {
        name: getattr(task_type, name)
        for name in (
            "review_threshold",
            "approve_threshold",
            "alpha_approve",
            "alpha_bad",
            "alpha_warning",
            "delta",
            "audit_rate_approved",
            "audit_rate_budget",
            "audit_rate_warning",
            "double_review_rate",
            "cold_start_reviews",
            "cold_start_margin",
            "threshold_policy",
            "approve_requires",
            "scorer",
        )
    }
    values |= {f"weight:{v.name}": v.weight for v in Validator.objects.filter(task_type=task_type)}
    # A checkbox is sent only when ticked.
    values |= {
        name: "on"
        for name in ("review_threshold_pinned", "approve_threshold_pinned", "auto_approve")
        if getattr(task_type, name)
    }
    values |= {"reason": "Too many reviews for what they find"}
    return {name: str(value) for name, value in (values | changes).items()}


@pytest.mark.parametrize(
    ("role", "status"),
    [(Role.GATEWAY, 403), (Role.REVIEWER, 403), (Role.LEAD, 200), (Role.ADMIN, 200)],
)
def test_who_may_read_the_thresholds(user_in, task_type, role, status):
    assert logged_in(user_in(role)).get(PAGE).status_code == status


@pytest.mark.parametrize(
    ("role", "status"),
    [(Role.GATEWAY, 403), (Role.REVIEWER, 403), (Role.LEAD, 403), (Role.ADMIN, 302)],
)
def test_only_admins_may_save(user_in, task_type, role, status):
    response = logged_in(user_in(role)).post(PAGE, _form(task_type, review_threshold="4.5"))
    assert response.status_code == status
    task_type.refresh_from_db()
    assert task_type.review_threshold == (4.5 if status == 302 else 4.0)


@pytest.mark.parametrize(
    ("role", "status"),
    [(Role.GATEWAY, 403), (Role.REVIEWER, 403), (Role.LEAD, 403), (Role.ADMIN, 302)],
)
def test_only_admins_may_run_a_cycle_now(user_in, task_type, role, status):
    response = logged_in(user_in(role)).post("/dashboard/thresholds/cycle/", {"kind": "thresholds"})
    assert response.status_code == status
    queued = OutboxMessage.objects.filter(task="learning.tasks.cycle")
    assert [m.args[0] for m in queued] == (["thresholds"] if status == 302 else [])


def test_a_cycle_of_no_known_kind_is_refused(user_in):
    response = logged_in(user_in(Role.ADMIN)).post("/dashboard/thresholds/cycle/", {"kind": "x"})
    assert response.status_code == 400
    assert not OutboxMessage.objects.exists()


def test_an_admins_edit_is_audited_and_reaches_the_gate(
    user_in, gateway, task_type, django_capture_on_commit_callbacks
):
    admin = user_in(Role.ADMIN, username="ada")
    client = logged_in(admin)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            PAGE, _form(task_type, review_threshold="4.5", **{"weight:facts": "2.5"})
        )
    assert response.status_code == 302

    (event,) = AuditEvent.objects.filter(action="threshold_edit")
    assert event.actor == admin
    assert event.before == {"review_threshold": 4.0, "weights": {"facts": 1.0}}
    assert event.after["review_threshold"] == 4.5
    assert event.after["weights"] == {"facts": 2.5}
    assert event.after["reason"] == "Too many reviews for what they find"
    assert event.after["source"] == "page"
    assert ingested(gateway, task_type="summarize").review_threshold == 4.5
    assert "Saved the settings of summarize." in client.get(response["Location"]).content.decode()


def test_review_not_below_approve_is_refused_next_to_the_field(user_in, task_type):
    response = logged_in(user_in(Role.ADMIN)).post(PAGE, _form(task_type, review_threshold="7.5"))

    assert response.status_code == 400
    page = response.content.decode()
    # The setting named as the page labels it, not as the API does.
    assert 'data-field="review_threshold">Must be below “Approve from” (7).' in page
    assert 'value="7.5"' in page  # the form keeps what was typed
    task_type.refresh_from_db()
    assert (task_type.review_threshold, task_type.approve_threshold) == (4.0, 7.0)
    assert not AuditEvent.objects.filter(action="threshold_edit").exists()


def test_an_admin_chooses_the_scorer_and_the_gate_uses_it(user_in, task_type, gateway):
    page = logged_in(user_in(Role.ADMIN)).get(PAGE).content.decode()
    for name in ("validators", "evidence_categories", "evidence_quality", "interval"):
        assert f'<option value="{name}"' in page

    form = _form(task_type, scorer="evidence_quality")
    assert logged_in(user_in(Role.ADMIN)).post(PAGE, form).status_code == 302

    task_type.refresh_from_db()
    assert task_type.scorer == "evidence_quality"
    event = AuditEvent.objects.get(action="threshold_edit")
    assert event.after["scorer"] == "evidence_quality"
    # Without evidence the chosen scorer gives way to validators, and says so.
    services.gate_caches_clear()
    output = ingested(gateway, task_type="summarize")
    assert output.scorer == "validators-v2"
    assert "evidence_quality reads" in output.reasons[0]


def test_a_scorer_this_version_lacks_stays_selected_and_saving_keeps_it(user_in, task_type):
    # As after a rollback to a version without the scorer a task type chose.
    TaskType.objects.filter(pk=task_type.pk).update(scorer="retired")
    task_type.refresh_from_db()
    page = logged_in(user_in(Role.ADMIN)).get(PAGE).content.decode()
    assert '<option value="retired" title="Not in this version' in page
    assert "selected>retired (not in this version)</option>" in page

    form = _form(task_type, audit_rate_warning="0.5")
    assert logged_in(user_in(Role.ADMIN)).post(PAGE, form).status_code == 302
    task_type.refresh_from_db()
    assert (task_type.scorer, task_type.audit_rate_warning) == ("retired", 0.5)


@pytest.mark.parametrize(
    ("changes", "field", "words"),
    [
        ({"reason": " "}, "reason", "Say why"),
        ({"delta": "lots"}, "delta", "Must be a number."),
        ({"delta": "0.7"}, "delta", "Must be between 0.001 and 0.5."),
        ({"cold_start_reviews": "20.5"}, "cold_start_reviews", "Must be a whole number."),
        ({"weight:facts": "-1"}, "weight:facts", "Must be a number from 0 to 100."),
        ({"threshold_policy": "yolo"}, "threshold_policy", "Must be one of"),
        ({"approve_requires": "sometimes"}, "approve_requires", "Must be one of: estimate, "),
        ({"scorer": "magic"}, "scorer", "Must be one of: validators, "),
    ],
)
def test_each_problem_is_shown_in_words_and_nothing_changes(
    user_in, task_type, changes, field, words
):
    form = _form(task_type, audit_rate_warning="0.5", **changes)
    response = logged_in(user_in(Role.ADMIN)).post(PAGE, form)
    assert response.status_code == 400
    assert f'data-field="{field}">{words}' in response.content.decode()
    task_type.refresh_from_db()
    assert task_type.audit_rate_warning == 0.0
    assert not AuditEvent.objects.filter(action="threshold_edit").exists()


# --------------------------------------------------------------------------- what-if

# The hand computation. Outputs per half-point bucket over 2 days: 10 in [3.5, 4), 20 in
# [4, 4.5), 30 in [7, 7.5), 40 in [9.5, 10]. Review below 4.25, approve from 7:
#   below 4.25: 10 + 20 * (0.25 / 0.5) = 20; below 7: 30; in all 100
#   held a day    20 / 2                           = 10
#   audits a day  (10 * 0.1 + 70 * 0.02) / 2       = 1.2 (0.5 warnings, 0.7 approved)
#   seconds       10 * 0.1 + 0.5 * (0.1 + 0.9 * 0.2) + 0.7 * (0.1 + 0.9 * 0) = 1.21
#                 (the warning band's audits find fault 20 % of the time, below; each of
#                 those is reviewed again)
#   reviews a day 10 + 1.2 + 1.21                  = 12.41
# First reviews: in [3.9, 4) 8 rejected and 12 approved, held (weight 1 each): 8 / 20,
# effective n 20. In [5, 5.1) audits drawn at 0.1 (weight 10 each): 2 rejected, 8 approved:
# 20 / 100, effective n 100² / (10 * 10²) = 10. In [9.9, 10) 5 approved audits drawn at 0.02
# (weight 50): 0 / 250, effective n 5. With equal weights in a band the effective n is the
# count of reviews, so each interval is Wilson's for the plain counts.
HISTOGRAM = [
    {"lower": 3.5, "upper": 4.0, "count": 10},
    {"lower": 4.0, "upper": 4.5, "count": 20},
    {"lower": 7.0, "upper": 7.5, "count": 30},
    {"lower": 9.5, "upper": 10.0, "count": 40},
]
# (bucket of 0.1, reviews, weight each, not approved)
REVIEWS = [(39, 8, 1.0, True), (39, 12, 1.0, False), (50, 2, 10.0, True), (50, 8, 10.0, False)]
REVIEWS += [(99, 5, 50.0, False)]


def _cells():
    return [
        {
            "lower": round(b * 0.1, 6),
            "upper": round((b + 1) * 0.1, 6),
            "reviews": n,
            "weight": n * w,
            "squared": n * w * w,
            "not_approved": bad,
        }
        for b, n, w, bad in REVIEWS
    ]


def _assert_hand_computed(result, days: float):
    assert result.held_per_day == pytest.approx(20 / days)
    assert result.audits_per_day == pytest.approx(2.4 / days)
    seconds = (20 * 0.1 + 1.0 * (0.1 + 0.9 * 0.2) + 1.4 * 0.1) / days
    assert result.second_reviews_per_day == pytest.approx(seconds)
    assert result.reviews_per_day == pytest.approx((20 + 2.4) / days + seconds)
    below, warning, approve = result.bands
    for band, (bad, n) in zip((below, warning, approve), [(8, 20), (2, 10), (0, 5)], strict=True):
        assert band.rate == pytest.approx(bad / n)
        assert band.effective_n == pytest.approx(n)
        expected = proportion_confint(bad, n, alpha=0.05, method="wilson")
        assert (band.low, band.high) == pytest.approx(expected, abs=1e-9)
    assert (below.lower, below.upper, warning.upper, approve.upper) == (0.0, 4.25, 7.0, 10.0)
    assert [b.reviews for b in result.bands] == [20, 10, 5]


def test_what_if_against_a_hand_computation():
    result = whatif.what_if(
        review_threshold=4.25,
        approve_threshold=7.0,
        histogram=HISTOGRAM,
        review_cells=_cells(),
        days=2.0,
        audit_rate_approved=0.02,
        audit_rate_warning=0.1,
        double_review_rate=0.1,
    )
    assert result.held_per_day == pytest.approx(10)
    assert result.audits_per_day == pytest.approx(1.2)
    assert result.second_reviews_per_day == pytest.approx(1.21)
    assert result.reviews_per_day == pytest.approx(12.41)
    _assert_hand_computed(result, days=2.0)


def test_band_volumes_against_a_hand_computation():
    # Three whole days: held 10, 20, 30; warnings 5 each; approved 40, 50, 60. Review
    # below 4, approve from 7, on bucket edges. Over the 3 days, held is 20 a day with a
    # sample sd of 10; t(0.975, 2) = 4.303 (any t table), so a day's volume lies within
    # 20 ± 4.303 * 10 * sqrt(1 + 1/3) = 20 ± 49.68, clipped at 0. Warnings never vary.
    def day(held, warned, approved):
        return [
            {"lower": 3.5, "upper": 4.0, "count": held},
            {"lower": 5.0, "upper": 5.5, "count": warned},
            {"lower": 7.0, "upper": 7.5, "count": approved},
        ]

    days = [day(10, 5, 40), day(20, 5, 50), day(30, 5, 60)]
    whole = [
        bucket | {"count": sum(d[i]["count"] for d in days)} for i, bucket in enumerate(days[0])
    ]
    held, warned, approved = whatif.band_volumes(
        histogram=whole, daily_histograms=days, review_threshold=4.0, approve_threshold=7.0, days=3
    )
    assert [v.delivery for v in (held, warned, approved)] == [
        "Held for review",
        "Delivered as warnings",
        "Approved",
    ]
    assert (held.per_day, held.low, held.high) == pytest.approx((20, 0, 69.683), abs=1e-3)
    assert (warned.per_day, warned.low, warned.high) == pytest.approx((5, 5, 5))
    assert (approved.per_day, approved.low, approved.high) == pytest.approx(
        (50, 0.317, 99.683), abs=1e-3
    )
    # Approvals waiting for a guarantee (no approval line): what reaches 7 is a warning.
    held, warned, approved = whatif.band_volumes(
        histogram=whole,
        daily_histograms=days,
        review_threshold=4.0,
        approve_threshold=math.inf,
        days=3,
    )
    assert (warned.per_day, approved.per_day) == (55, 0)
    # With two whole days the spread is too unsure to plan by.
    (two,) = whatif.band_volumes(
        histogram=whole,
        daily_histograms=days[:2],
        review_threshold=4.0,
        approve_threshold=7.0,
        days=3,
    )[:1]
    assert (two.low, two.high, two.days) == (None, None, 2)


def test_a_band_rate_is_the_overviews_weighted_rate():
    # The same cells, as dashboard.estimates.weighted_rate takes them.
    cells = _cells()
    band = whatif.band_rate(cells, "all", 0.0, 10.0)
    estimate = weighted_rate(
        {"audits": c["reviews"], "weight": c["weight"], "not_approved": c["not_approved"]}
        for c in cells
    )
    assert (band.rate, band.low, band.high) == pytest.approx(
        (estimate.rate, estimate.low, estimate.high)
    )
    assert band.effective_n == pytest.approx(estimate.effective_n)


def test_a_band_with_no_review_has_no_rate():
    band = whatif.band_rate(_cells(), "empty", 6.0, 7.0)
    assert (band.rate, band.reviews) == (None, 0)


def test_the_what_if_panel_reads_the_rollups(user_in, task_type):
    TaskType.objects.filter(pk=task_type.pk).update(
        audit_rate_approved=0.02, audit_rate_warning=0.1, double_review_rate=0.1
    )
    hour = datetime.now(UTC).replace(minute=0, second=0, microsecond=0) - timedelta(hours=1)
    for bucket, count in ((7, 10), (8, 20), (14, 30), (19, 40)):
        OutputRollup.objects.create(
            hour=hour,
            task_type=task_type,
            model="model-a",
            decision="approved",
            status="approved",
            score_bucket=bucket,
            outputs=count,
            score_sum=0.0,
        )
    for bucket, n, weight, bad in REVIEWS:
        ReviewRollup.objects.create(
            hour=hour,
            task_type=task_type,
            model="model-a",
            decision="pending_review" if weight == 1.0 else "approved",
            kind="review" if weight == 1.0 else "audit",
            is_audit=weight != 1.0,
            is_bulk=False,
            action="reject" if bad else "approve",
            score_bucket=bucket,
            reviews=n,
            weight_sum=n * weight,
        )

    response = logged_in(user_in(Role.LEAD)).get(f"{PAGE}&range=24h&review=4.25&approve=7")

    assert response.status_code == 200
    _assert_hand_computed(response.context["what_if"], days=1.0)
    # 20 held + 2.4 audits + 2.42 second reviews (2 + 1.0 * 0.28 + 1.4 * 0.1), a day.
    assert 'id="reviews-per-day">24.8<' in response.content.decode()


@pytest.mark.parametrize("query", ["review=8&approve=7", "review=x", "approve=11"])
def test_candidate_thresholds_out_of_order_or_range_are_named(user_in, task_type, query):
    response = logged_in(user_in(Role.LEAD)).get(f"{PAGE}&{query}")
    assert response.status_code == 400
    assert 'data-field="candidates"' in response.content.decode()


def test_the_panel_asked_for_by_htmx_shows_its_refusal(user_in, task_type):
    response = logged_in(user_in(Role.ADMIN)).get(
        f"{PAGE}&review=8&approve=7", headers={"HX-Request": "true"}
    )
    assert response.status_code == 200
    assert "must be below the approve one" in response.content.decode()


def test_auto_approval_turned_off_on_the_page_delivers_as_warnings(user_in, gateway, task_type):
    # The factory's submission scores above the approve threshold of 7.0 once out of cold
    # start; the switch, unticked, makes the same output a warning.
    TaskType.objects.filter(pk=task_type.pk).update(cold_start_reviews=0)
    assert ingested(gateway, task_type="summarize").decision == "approved"
    form = _form(task_type)
    del form["auto_approve"]
    response = logged_in(user_in(Role.ADMIN)).post(PAGE, form)
    assert response.status_code == 302
    (event,) = AuditEvent.objects.filter(action="threshold_edit")
    assert (event.before["auto_approve"], event.after["auto_approve"]) == (True, False)
    output = ingested(gateway, task_type="summarize")
    assert output.decision == "warning"
    assert any("auto-approval is off" in reason for reason in output.reasons)
