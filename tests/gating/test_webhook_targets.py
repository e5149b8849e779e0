"""Webhook targets: credentials in a URL are refused, and a URL is shown redacted everywhere
but the webhook's admin editor."""

import httpx
import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse
from django.utils import timezone

from gating import reviews, webhooks
from gating.models import AuditEvent, ReviewItem, Webhook, WebhookAttempt, WebhookDelivery
from gating.roles import Role
from tests.factories import logged_in

pytestmark = pytest.mark.django_db

PUBLIC_IP = "93.184.216.34"
TOKEN = "s3cr3t-query-token"
PASSWORD = "s3cr3t-password"
WITH_TOKEN = f"https://{PUBLIC_IP}/decisions?token={TOKEN}#{TOKEN}"
WITH_USERINFO = f"https://relay:{PASSWORD}@{PUBLIC_IP}/decisions"


@pytest.fixture
def admin_user(user_in):
    return user_in(Role.ADMIN)


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        (WITH_TOKEN, f"https://{PUBLIC_IP}/decisions"),
        (WITH_USERINFO, f"https://{PUBLIC_IP}/decisions"),
        ("https://a:b@hooks.example.com:8443/in/x?sig=1", "https://hooks.example.com:8443/in/x"),
        ("https://[2001:db8::1]/in", "https://[2001:db8::1]/in"),
        ("https://hooks.example.com", "https://hooks.example.com"),
    ],
)
def test_a_url_is_redacted_to_scheme_host_and_path(url, shown):
    assert Webhook(url=url).url_redacted == shown


def test_the_service_refuses_credentials_in_the_url_naming_the_field(gateway, admin_user):
    with pytest.raises(ValidationError) as refused:
        webhooks.webhook_register(owner=gateway, url=WITH_USERINFO, actor=admin_user)

    assert list(refused.value.message_dict) == ["url"]
    assert "user name or password" in refused.value.message_dict["url"][0]
    assert PASSWORD not in str(refused.value)
    assert not Webhook.objects.exists()


def test_the_admin_form_refuses_credentials_in_the_url(admin_user, gateway):
    response = logged_in(admin_user).post(
        reverse("admin:gating_webhook_add"),
        {"kind": "decisions", "owner": gateway.pk, "url": WITH_USERINFO},
    )

    assert response.status_code == 200
    errors = response.context["adminform"].form.errors
    assert list(errors) == ["url"] and "user name or password" in errors["url"][0]
    assert not Webhook.objects.exists()


def test_a_stored_url_with_credentials_is_refused_at_delivery(gateway, monkeypatch):
    # Stored before the rule: the attempt fails saying why, and sends nothing.
    hook = Webhook.objects.create(owner=gateway, url=WITH_USERINFO, secret="x")
    delivery = WebhookDelivery.objects.create(
        webhook=hook, event_type=webhooks.OUTPUT_DECIDED, payload={}, next_attempt_at=timezone.now()
    )
    posted = []

    def stream(client, method, url, **kwargs):
        posted.append(url)
        raise httpx.ConnectError("no network in tests")

    monkeypatch.setattr(httpx.Client, "stream", stream)

    webhooks.delivery_attempt(delivery.pk)

    attempt = WebhookAttempt.objects.get(delivery=delivery)
    assert attempt.error.startswith("Refused: Must not carry a user name or password")
    assert PASSWORD not in attempt.error
    assert posted == []


def test_the_history_page_shows_a_reviewer_the_target_without_its_secrets(
    user_in, gateway, admin_user, held_outputs
):
    webhooks.webhook_register(owner=gateway, url=WITH_TOKEN, actor=admin_user)
    # One stored before credentials in a URL were refused.
    Webhook.objects.create(owner=gateway, url=WITH_USERINFO.replace("/decisions", "/old"))
    [output] = held_outputs(1)
    reviewer = user_in(Role.REVIEWER)
    item = reviews.item_claim(reviewer=reviewer, items=ReviewItem.objects.filter(output=output))
    reviews.item_decide(
        item_id=item.pk, reviewer=reviewer, decision=reviews.DecisionInput(action="approve")
    )
    assert WebhookDelivery.objects.filter(payload__output__id=output.pk).count() == 2

    page = logged_in(reviewer).get(f"/dashboard/outputs/{output.pk}/").content.decode()

    assert f"to https://{PUBLIC_IP}/decisions:" in page
    assert f"to https://{PUBLIC_IP}/old:" in page
    assert TOKEN not in page and PASSWORD not in page


def test_the_audit_log_records_the_url_redacted(gateway, admin_user):
    hook, _ = webhooks.webhook_register(owner=gateway, url=WITH_TOKEN, actor=admin_user)
    webhooks.webhook_delete(hook=hook, actor=admin_user)

    events = AuditEvent.objects.filter(action=AuditEvent.Action.WEBHOOK_EDIT).order_by("id")
    assert [e.after and e.after["url"] for e in events] == [f"https://{PUBLIC_IP}/decisions", None]
    assert events[1].before["url"] == f"https://{PUBLIC_IP}/decisions"
    assert TOKEN not in str([(e.before, e.after) for e in events])


def test_the_admin_shows_the_full_url_only_in_the_webhooks_editor(gateway, admin_user):
    hook, _ = webhooks.webhook_register(owner=gateway, url=WITH_TOKEN, actor=admin_user)
    delivery = WebhookDelivery.objects.create(
        webhook=hook, event_type=webhooks.OUTPUT_DECIDED, payload={}, next_attempt_at=None
    )
    client = logged_in(admin_user)

    editor = client.get(reverse("admin:gating_webhook_change", args=[hook.pk])).content.decode()
    assert f"token={TOKEN}" in editor
    for path in (
        reverse("admin:gating_webhook_changelist"),
        reverse("admin:gating_webhookdelivery_changelist"),
        reverse("admin:gating_webhookdelivery_change", args=[delivery.pk]),
    ):
        page = client.get(path).content.decode()
        assert f"https://{PUBLIC_IP}/decisions" in page, path
        assert TOKEN not in page, path
