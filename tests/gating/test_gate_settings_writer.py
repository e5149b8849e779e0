"""The gate's settings have one writer: a threshold or a weight moved through any door (the
API, the Django admin, the thresholds page's service call, the learning cycles) is checked
by the same rules, lands in the audit log with before, after, reason and source, and
reaches the gate at once."""

import math

import pytest
from cachetools import TTLCache
from django.contrib.auth import get_user_model
from django.db import connection
from django.test.utils import CaptureQueriesContext

from gating import services
from gating.exceptions import TaskTypeInvalid
from gating.models import AuditEvent, TaskType, Validator
from gating.roles import Role
from learning import alerts, cycles
from learning.models import ThresholdChange, ValidatorAssessment
from tests.factories import SubmissionFactory, TaskTypeFactory
from tests.learning.test_cycles import simulate_history

# Real commits: the gate's caches are filled and cleared only when a transaction commits.
pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def _caches_that_never_expire(monkeypatch):
    """The gate's caches, without their few seconds' expiry: an edit reaches the gate here
    only if it clears them, however slow the test."""
    monkeypatch.setattr(services, "_configs", TTLCache(maxsize=1_000, ttl=3_600))
    monkeypatch.setattr(services, "_pairs", TTLCache(maxsize=50_000, ttl=3_600))


ADMIN_URL = "/admin/gating/tasktype/{}/change/"


@pytest.fixture
def task_type(db):
    # No cold-start margin, so the gate's thresholds are the stored ones.
    task_type = TaskTypeFactory(name="summarize", cold_start_margin=0.0)
    Validator.objects.create(task_type=task_type, name="facts", weight=1.0, is_fact_check=True)
    Validator.objects.create(task_type=task_type, name="length", weight=1.0)
    return task_type


@pytest.fixture
def admin(user_in):
    return user_in(Role.ADMIN)


def ingest(gateway_api) -> dict:
    """One output that passes facts and fails length, with no other points: its score is
    8 * facts / (facts + length)."""
    body = SubmissionFactory(
        validators=[{"name": "facts", "passed": True}, {"name": "length", "passed": False}],
        input_clarity=0.0,
        coherence=0.0,
    )
    response = gateway_api.post("/api/v1/outputs/", body, format="json")
    assert response.status_code == 201, response.content
    return response.json()


def edits_of(task_type) -> list[AuditEvent]:
    return list(
        AuditEvent.objects.filter(
            action=AuditEvent.Action.THRESHOLD_EDIT, object_id=str(task_type.pk)
        ).order_by("id")
    )


def weights_of(task_type) -> dict[str, float]:
    return dict(Validator.objects.filter(task_type=task_type).values_list("name", "weight"))


# --------------------------------------------------------------------------- the doors


def test_the_api_door(task_type, admin, client_for, gateway_api):
    assert ingest(gateway_api)["thresholds"] == {"review": 4.0, "approve": 7.0}

    response = client_for(admin).patch(
        "/api/v1/task-types/summarize/",
        {"review_threshold": 3.0, "reason": "reviewers are swamped"},
        format="json",
    )

    assert response.status_code == 200, response.content
    assert "reason" not in response.json()
    [event] = edits_of(task_type)
    assert event.actor == admin
    assert event.before == {"review_threshold": 4.0}
    assert event.after == {
        "review_threshold": 3.0,
        "reason": "reviewers are swamped",
        "source": "api",
    }
    assert ingest(gateway_api)["thresholds"] == {"review": 3.0, "approve": 7.0}


def test_the_api_reason_is_optional(task_type, admin_api):
    response = admin_api.patch(
        "/api/v1/task-types/summarize/", {"approve_threshold": 8.0}, format="json"
    )

    assert response.status_code == 200
    [event] = edits_of(task_type)
    assert event.after == {"approve_threshold": 8.0, "reason": "", "source": "api"}


def test_the_api_reason_is_text(task_type, admin_api):
    response = admin_api.patch(
        "/api/v1/task-types/summarize/", {"approve_threshold": 8.0, "reason": 5}, format="json"
    )

    assert response.status_code == 400
    assert response.json() == {"reason": ["Must be a JSON string."]}
    assert edits_of(task_type) == []


def test_the_admin_door_moves_thresholds_and_weights_in_one_edit(
    task_type, admin, client, gateway_api
):
    ingest(gateway_api)
    client.force_login(admin)

    response = admin_post(
        client,
        task_type,
        {"approve_threshold": "6.5", "reason": "approve more"},
        weights={"facts": "3"},
    )

    assert response.status_code == 302, errors_of(response)
    [event] = edits_of(task_type)
    assert event.actor == admin
    assert event.before == {"approve_threshold": 7.0, "weights": {"facts": 1.0}}
    assert event.after == {
        "approve_threshold": 6.5,
        "weights": {"facts": 3.0},
        "reason": "approve more",
        "source": "admin",
    }
    answer = ingest(gateway_api)
    assert answer["thresholds"] == {"review": 4.0, "approve": 6.5}
    assert answer["score"] == pytest.approx(6.0)  # 8 * 3 / (3 + 1)


def test_a_weight_edit_in_the_admin_is_audited_and_reaches_the_gate(
    task_type, admin, client, gateway_api
):
    assert ingest(gateway_api)["score"] == pytest.approx(4.0)
    client.force_login(admin)

    response = admin_post(client, task_type, {"reason": "length matters less"}, {"length": "0"})

    assert response.status_code == 302, errors_of(response)
    [event] = edits_of(task_type)
    assert event.before == {"weights": {"length": 1.0}}
    assert event.after == {
        "weights": {"length": 0.0},
        "reason": "length matters less",
        "source": "admin",
    }
    assert ingest(gateway_api)["score"] == pytest.approx(8.0)


def test_the_pages_door_is_a_service_call(task_type, admin, gateway_api):
    ingest(gateway_api)

    services.gate_settings_change(
        task_type=task_type,
        changes={"review_threshold": 5.0},
        weights={"length": 3.0},
        actor=admin,
        reason="length failures are the costly ones",
        source=services.EditSource.PAGE,
    )

    [event] = edits_of(task_type)
    assert (event.actor, event.before) == (
        admin,
        {"review_threshold": 4.0, "weights": {"length": 1.0}},
    )
    assert event.after["source"] == "page"
    assert event.after["reason"] == "length failures are the costly ones"
    answer = ingest(gateway_api)
    assert answer["thresholds"]["review"] == 5.0
    assert answer["score"] == pytest.approx(2.0)  # 8 * 1 / (1 + 3)


@pytest.mark.slow
def test_the_cycles_door(gateway_api):
    # Audits and budgets generous enough for two days of verdicts to certify a threshold
    # that moves.
    end = simulate_history(
        days=2,
        reviews_per_hour=100,
        audit_rate_approved=0.5,
        audit_rate_warning=0.5,
        alpha_approve=0.5,
        alpha_bad=0.5,
    )
    task_type = TaskType.objects.get(name="summarize")
    stored_before = {w: getattr(task_type, f"{w}_threshold") for w in ("review", "approve")}
    before = ingest_named(gateway_api, task_type)

    reweighed = cycles.cycle_run("validators", end)
    moved = cycles.cycle_run("thresholds", end)

    weight_edit, threshold_edit = edits_of(task_type)
    assessed = {
        a.validator.name: a
        for a in ValidatorAssessment.objects.filter(cycle=reweighed)
        if a.new_weight != a.old_weight
    }
    assert weight_edit.actor is None and weight_edit.at == end
    assert weight_edit.before == {"weights": {n: a.old_weight for n, a in assessed.items()}}
    assert weight_edit.after["weights"] == {n: a.new_weight for n, a in assessed.items()}
    assert weight_edit.after["source"] == "cycle"
    assert weight_edit.after["cycle"] == reweighed.pk
    assert "verdicts" in weight_edit.after["reason"]

    thresholds = {
        f"{c.which}_threshold": c
        for c in ThresholdChange.objects.filter(cycle=moved)
        if c.new_value != c.old_value
    }
    assert thresholds, "the simulated history should move a threshold"
    assert threshold_edit.actor is None and threshold_edit.at == end
    # The approve threshold's guarantee comes with it: certified where this run certified
    # the value it set.
    approve = ThresholdChange.objects.get(cycle=moved, which="approve")
    certified = approve.state == ThresholdChange.State.CERTIFIED
    guarantee = {"approve_guarantee": "certified"} if certified else {}
    assert threshold_edit.before == {
        **{f: c.old_value for f, c in thresholds.items()},
        **({"approve_guarantee": "none"} if certified else {}),
    }
    assert threshold_edit.after == {
        **{f: c.new_value for f, c in thresholds.items()},
        **guarantee,
        "reason": threshold_edit.after["reason"],
        "source": "cycle",
        "cycle": moved.pk,
        "policy": "guarded",
    }
    assert all(c.reason in threshold_edit.after["reason"] for c in thresholds.values())

    # The gate's caches held the old settings; the next output is scored with the new.
    task_type.refresh_from_db()
    after = ingest_named(gateway_api, task_type)
    for which, old in stored_before.items():
        new = getattr(task_type, f"{which}_threshold")
        assert after["thresholds"][which] - before["thresholds"][which] == pytest.approx(new - old)
    facts = Validator.objects.get(task_type=task_type, name="facts").weight
    assert f"passed (weight {facts:g})" in {i["detail"] for i in after["impacts"]}


def ingest_named(gateway_api, task_type) -> dict:
    body = SubmissionFactory(task_type=task_type.name, model="model-a")
    body["validators"] = [{"name": "facts", "passed": True}]
    response = gateway_api.post("/api/v1/outputs/", body, format="json")
    assert response.status_code == 201, response.content
    return response.json()


# --------------------------------------------------------------------------- the admin


def admin_post(client, task_type, changes: dict, weights: dict | None = None):
    """Post the task type's change form as shown, with ``changes`` to its fields and
    ``weights`` to its validators' rows."""
    url = ADMIN_URL.format(task_type.pk)
    page = client.get(url)
    data = _form_data(page.context["adminform"].form)
    for inline in page.context["inline_admin_formsets"]:
        formset = inline.formset
        data.update(_form_data(formset.management_form))
        for form in formset.forms:
            data.update(_form_data(form))
            name = form.initial.get("name")
            if weights and name in weights:
                data[form.add_prefix("weight")] = weights[name]
    data.update(changes)
    return client.post(url, data)


def _form_data(form) -> dict:
    data = {}
    for bound in form:
        value = bound.value()
        if value is None or value is False:
            continue
        data[bound.html_name] = "on" if value is True else value
    return data


def errors_of(response) -> dict:
    if response.context is None:
        return {}
    return response.context["adminform"].form.errors


def test_an_admin_edit_that_breaks_the_order_is_refused_next_to_the_field(task_type, admin, client):
    client.force_login(admin)

    response = admin_post(client, task_type, {"review_threshold": "7.5", "reason": "stricter"})

    assert response.status_code == 200
    assert errors_of(response) == {"review_threshold": ["Must be below approve_threshold (7)."]}
    assert b"task_type_thresholds_ordered" not in response.content
    task_type.refresh_from_db()
    assert (task_type.review_threshold, task_type.approve_threshold) == (4.0, 7.0)
    assert edits_of(task_type) == []


def test_a_new_task_type_that_breaks_the_order_is_refused_next_to_the_field(client):
    # Only a superuser adds task types by hand; gateways create theirs by naming them.
    client.force_login(get_user_model().objects.create_superuser("root"))
    page = client.get("/admin/gating/tasktype/add/")
    data = _form_data(page.context["adminform"].form)
    for inline in page.context["inline_admin_formsets"]:
        data.update(_form_data(inline.formset.management_form))
    data.update({"name": "new", "review_threshold": "8", "approve_threshold": "7"})

    response = client.post("/admin/gating/tasktype/add/", data)

    assert response.status_code == 200
    assert errors_of(response) == {"review_threshold": ["Must be below approve_threshold (7)."]}
    assert b"task_type_thresholds_ordered" not in response.content
    assert not TaskType.objects.filter(name="new").exists()


def test_an_admin_edit_says_why(task_type, admin, client):
    client.force_login(admin)

    response = admin_post(client, task_type, {"approve_threshold": "8"})

    assert errors_of(response) == {
        "reason": ["Say why: the reason is kept in the audit log with the change."]
    }
    task_type.refresh_from_db()
    assert task_type.approve_threshold == 7.0


def test_a_negative_weight_is_refused_next_to_it(task_type, admin, client):
    client.force_login(admin)

    response = admin_post(client, task_type, {"reason": "ignore length"}, {"length": "-1"})

    assert response.status_code == 200
    [formset] = [inline.formset for inline in response.context["inline_admin_formsets"]]
    assert [f.errors for f in formset.forms if f.errors] == [
        {"weight": ["Must be a number from 0 to 100."]}
    ]
    assert weights_of(task_type) == {"facts": 1.0, "length": 1.0}
    assert edits_of(task_type) == []


def test_a_refusal_at_save_is_a_message_and_changes_nothing(task_type, admin, client, monkeypatch):
    # What the form could not see coming (a validator deleted meanwhile, say): the service
    # refuses when it writes, inside the admin's transaction.
    client.force_login(admin)

    def refuse(**kwargs):
        raise TaskTypeInvalid("weights.length", "summarize has no validator named 'length'.")

    monkeypatch.setattr(services, "gate_settings_change", refuse)
    response = admin_post(client, task_type, {"approve_threshold": "8", "reason": "r"})

    assert response.status_code == 302
    shown = [str(m) for m in response.wsgi_request._messages]
    assert shown == [
        "Nothing was changed: weights.length: summarize has no validator named 'length'."
    ]
    task_type.refresh_from_db()
    assert task_type.approve_threshold == 7.0


def test_the_admin_leaves_a_task_types_name_alone(task_type, admin, client):
    client.force_login(admin)

    response = admin_post(client, task_type, {"name": "renamed", "reason": "tidy"})

    assert response.status_code == 302
    assert TaskType.objects.get(pk=task_type.pk).name == "summarize"


# --------------------------------------------------------------------------- the rules


@pytest.mark.parametrize(
    ("changes", "weights", "field"),
    [
        ({"review_threshold": 7.0}, {}, "review_threshold"),
        ({"approve_threshold": 4.0}, {}, "approve_threshold"),
        ({"review_threshold": 5.0, "approve_threshold": 5.0}, {}, "review_threshold"),
        ({"approve_threshold": 10.5}, {}, "approve_threshold"),
        ({"review_threshold": -0.1}, {}, "review_threshold"),
        ({"audit_rate_warning": 1.5}, {}, "audit_rate_warning"),
        ({"alpha_approve": 0.6}, {}, "alpha_approve"),
        ({"delta": 0.0}, {}, "delta"),
        ({"cold_start_reviews": 2.5}, {}, "cold_start_reviews"),
        ({"cold_start_margin": math.nan}, {}, "cold_start_margin"),
        ({"approve_threshold": math.inf}, {}, "approve_threshold"),
        ({"approve_threshold": True}, {}, "approve_threshold"),
        ({"backlog_relief": 1}, {}, "backlog_relief"),
        ({"auto_approve": "yes"}, {}, "auto_approve"),
        ({"threshold_policy": "yolo"}, {}, "threshold_policy"),
        ({"approve_requires": "sometimes"}, {}, "approve_requires"),
        ({"approve_requires": True}, {}, "approve_requires"),
        ({"name": "renamed"}, {}, "name"),
        ({"reviewed_count": 0}, {}, "reviewed_count"),
        ({}, {"facts": -1.0}, "weights.facts"),
        ({}, {"facts": math.inf}, "weights.facts"),
        ({}, {"facts": math.nan}, "weights.facts"),
        ({}, {"nope": 1.0}, "weights.nope"),
        ({"review_threshold": 3.0}, {"facts": -1.0}, "weights.facts"),
    ],
)
def test_the_service_refuses_each_rule_by_name_and_changes_nothing(
    task_type, admin, changes, weights, field
):
    with pytest.raises(TaskTypeInvalid) as refused:
        services.gate_settings_change(
            task_type=task_type,
            changes=changes,
            weights=weights,
            actor=admin,
            reason="a try",
            source=services.EditSource.PAGE,
        )

    assert refused.value.field == field
    assert str(refused.value)
    assert TaskType.objects.get(pk=task_type.pk).review_threshold == 4.0
    assert weights_of(task_type) == {"facts": 1.0, "length": 1.0}
    assert edits_of(task_type) == []


@pytest.mark.parametrize(
    ("reason", "source", "message"),
    [
        ("", services.EditSource.PAGE, "Say why"),
        ("  ", services.EditSource.ADMIN, "Say why"),
        ("x" * 501, services.EditSource.API, "At most 500 characters."),
        # Every door: the page and the API's serializer refuse it too, the cycles and the
        # admin rely on this.
        ("tighter\x00", services.EditSource.ADMIN, "Must not contain a NUL character."),
        ("tighter\x00", services.EditSource.CYCLE, "Must not contain a NUL character."),
    ],
)
def test_people_say_why(task_type, admin, reason, source, message):
    with pytest.raises(TaskTypeInvalid) as refused:
        services.gate_settings_change(
            task_type=task_type,
            changes={"review_threshold": 3.0},
            actor=admin,
            reason=reason,
            source=source,
        )

    assert refused.value.field == "reason"
    assert str(refused.value).startswith(message)
    assert TaskType.objects.get(pk=task_type.pk).review_threshold == 4.0


def test_unchanged_values_are_no_edit(task_type, admin):
    stamp = TaskType.objects.get(pk=task_type.pk).updated_at

    services.gate_settings_change(
        task_type=task_type,
        changes={"review_threshold": 4.0, "approve_threshold": 7.0},
        weights={"facts": 1.0},
        actor=admin,
        reason="",
        source=services.EditSource.API,
    )
    services.gate_settings_change(
        task_type=task_type,
        changes={"review_threshold": 4.0, "approve_threshold": 7.5},
        weights={"facts": 1.0, "length": 2.0},
        actor=admin,
        reason="only what moved is recorded",
        source=services.EditSource.PAGE,
    )

    [event] = edits_of(task_type)
    assert event.before == {"approve_threshold": 7.0, "weights": {"length": 1.0}}
    assert TaskType.objects.get(pk=task_type.pk).updated_at > stamp


def test_a_stored_value_outside_a_rule_does_not_block_other_edits(task_type, admin):
    # Stored before the rule was as tight as it is now.
    TaskType.objects.filter(pk=task_type.pk).update(alpha_approve=0.8)

    services.gate_settings_change(
        task_type=task_type,
        changes={"alpha_approve": 0.8, "review_threshold": 3.0},
        actor=admin,
        reason="as the page sends the whole form",
        source=services.EditSource.PAGE,
    )

    assert TaskType.objects.get(pk=task_type.pk).review_threshold == 3.0


# --------------------------------------------------------------------------- many at once


def _task_types(count: int, prefix: str = "bulk") -> list[TaskType]:
    made = []
    for i in range(count):
        t = TaskTypeFactory(name=f"{prefix}-{i}")
        Validator.objects.create(task_type=t, name="facts", weight=1.0)
        made.append(t)
    return made


def _edits(task_types, step: float):
    return [
        services.GateSettingsEdit(
            t,
            changes={"review_threshold": 4.0 + step},
            weights={"facts": 1.0 + step},
            reason="cycle",
            context={"cycle": 1},
        )
        for t in task_types
    ]


def test_many_edits_take_the_same_few_queries_whatever_their_number():
    def queries(count: int, step: float) -> int:
        edits = _edits(_task_types(count, prefix=f"bulk-{count}"), step)
        with CaptureQueriesContext(connection) as ctx:
            services.gate_settings_change_many(
                edits=edits, actor=None, source=services.EditSource.CYCLE
            )
        return len(ctx.captured_queries)

    few, many = queries(2, 0.1), queries(20, 0.2)

    assert few == many <= 7
    assert AuditEvent.objects.filter(action="threshold_edit").count() == 22


def test_many_edits_apply_all_or_none():
    first, second = _task_types(2)
    edits = [
        services.GateSettingsEdit(first, changes={"review_threshold": 3.0}, reason="ok"),
        services.GateSettingsEdit(second, changes={"review_threshold": 9.0}, reason="clash"),
    ]

    with pytest.raises(TaskTypeInvalid):
        services.gate_settings_change_many(
            edits=edits, actor=None, source=services.EditSource.CYCLE
        )

    assert set(TaskType.objects.values_list("review_threshold", flat=True)) == {4.0}
    assert not AuditEvent.objects.filter(action="threshold_edit").exists()


# --------------------------------------------------------------------------- drift alert


def test_threshold_drift_reads_the_edits_the_service_writes(task_type, admin, client):
    client.force_login(admin)
    admin_post(client, task_type, {"approve_threshold": "7.6", "reason": "r"}, {"facts": "2"})
    services.gate_settings_change(
        task_type=task_type,
        weights={"length": 0.5},
        actor=admin,
        reason="weights only",
        source=services.EditSource.PAGE,
    )
    latest = AuditEvent.objects.latest("at")

    found = {f.subject: f for f in alerts.threshold_drift(latest.at)}

    assert found["summarize approve threshold"].value == pytest.approx(0.6)
    assert found["summarize approve threshold"].firing
    assert not found["summarize review threshold"].firing


def test_the_schema_documents_the_reason_as_write_only(client):
    schema = client.get("/api/schema/", {"format": "json"}).json()["components"]["schemas"]

    assert schema["PatchedTaskTypeRequest"]["properties"]["reason"]["maxLength"] == 500
    assert "reason" not in schema["TaskType"]["properties"]


def test_an_admin_chooses_the_scorer_and_an_unknown_one_is_refused(task_type, admin, client):
    client.force_login(admin)
    page = client.get(ADMIN_URL.format(task_type.pk)).content.decode()
    for name in ("validators", "evidence_categories", "evidence_quality", "interval"):
        assert f'<option value="{name}"' in page

    refused = admin_post(client, task_type, {"scorer": "magic", "reason": "try"})
    assert "scorer" in errors_of(refused)
    task_type.refresh_from_db()
    assert task_type.scorer == "validators"

    admin_post(client, task_type, {"scorer": "interval", "reason": "claims with provenance"})
    task_type.refresh_from_db()
    assert task_type.scorer == "interval"
    assert edits_of(task_type)[-1].after["scorer"] == "interval"
