"""Webhooks: URL checks, registration, signatures, retries, delivery attempts, events, admin."""

import hashlib
import hmac
import json
import socket
import threading
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from email.message import Message
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import time_machine
from django.core.exceptions import ValidationError
from django.db import transaction
from django.urls import reverse
from django.utils import timezone

from dashboard.settings.base import BASE_DIR
from gating import services, tasks, webhooks
from gating.models import AuditEvent, OutboxMessage, Webhook, WebhookDelivery
from gating.reviews import DecisionInput, item_claim, item_decide
from gating.roles import Role
from tests.factories import TaskTypeFactory, valid_submission

PUBLIC_IP = "93.184.216.34"
PAYLOAD = {
    "type": "output.decided",
    "output": {"id": 7, "external_id": "req-7", "final_output": "Revenue grew 4% — “up”."},
}
T0 = datetime(2026, 11, 23, 9, 0, tzinfo=UTC)


# --------------------------------------------------------------------------- a receiver


@dataclass
class Received:
    path: str
    headers: Message
    body: bytes


class Receiver:
    """An HTTP server on 127.0.0.1, in a thread, answering each POST with the next status
    of ``statuses`` (200 once they run out) and keeping what it received."""

    def __init__(self, statuses=()):
        self.statuses = list(statuses)
        self.received: list[Received] = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers["Content-Length"]))
                receiver.received.append(Received(self.path, self.headers, body))
                status = receiver.statuses.pop(0) if receiver.statuses else 200
                self.send_response(status)
                if 300 <= status < 400:
                    self.send_header("Location", "/elsewhere")
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_port
        self.url = f"http://127.0.0.1:{self.port}/hook"
        self._thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def signature_parts(header: str) -> tuple[str, str]:
    fields = dict(part.split("=", 1) for part in header.split(","))
    return fields["t"], fields["v1"]


def expected_signature(secret: str, timestamp: str, body: bytes) -> str:
    """The formula of docs/webhooks.md, written out independently of gating.webhooks.sign."""
    message = timestamp.encode() + b"." + body
    return hmac.new(secret.encode(), message, hashlib.sha256).hexdigest()


@pytest.fixture
def receiver():
    started = []

    def start(statuses=()):
        started.append(Receiver(statuses))
        return started[-1]

    yield start
    for server in started:
        server.close()


@pytest.fixture
def allow_private(settings):
    settings.WEBHOOK_ALLOW_PRIVATE_ADDRESSES = True
    settings.WEBHOOK_RETRY_BASE_SECONDS = 30
    settings.WEBHOOK_RETRY_HOURS = 24
    return settings


@pytest.fixture
def admin_user(user_in):
    return user_in(Role.ADMIN)


@pytest.fixture
def register(gateway, admin_user):
    def _register(url, owner=None):
        return webhooks.webhook_register(owner=owner or gateway, url=url, actor=admin_user)

    return _register


def delivery_to(hook, payload=PAYLOAD) -> WebhookDelivery:
    return WebhookDelivery.objects.create(
        webhook=hook,
        event_type=webhooks.OUTPUT_DECIDED,
        payload=payload,
        next_attempt_at=timezone.now(),
    )


def outboxed() -> list[int]:
    """Delivery ids whose task waits in the outbox for the relay."""
    return [
        m.args[0] for m in OutboxMessage.objects.filter(task=webhooks.DELIVER_TASK).order_by("id")
    ]


@pytest.fixture
def sent(monkeypatch):
    """Delivery ids a worker hands to the broker, instead of handing them over."""
    ids: list[int] = []
    monkeypatch.setattr(
        tasks.webhook_deliver, "apply_async", lambda args, *rest, **options: ids.append(args[0])
    )
    return ids


# --------------------------------------------------------------------------- URLs


@pytest.mark.parametrize(
    "url",
    [f"http://{PUBLIC_IP}/hook", f"https://{PUBLIC_IP}:8443/hook?x=1", "HTTPS://93.184.216.34"],
)
def test_public_http_and_https_urls_are_accepted(url):
    assert webhooks.webhook_url_problem(url) is None


@pytest.mark.parametrize(
    ("url", "why"),
    [
        (f"ftp://{PUBLIC_IP}/hook", "http:// or https://"),
        (f"file://{PUBLIC_IP}/etc/passwd", "http:// or https://"),
        ("http:///hook", "host"),
        (f"http://{PUBLIC_IP}:99999/hook", "port"),
        (f"http://{PUBLIC_IP}:0/hook", "port"),
        ("http://127.0.0.1:8000/hook", "127.0.0.1 is a loopback address"),
        ("http://10.1.2.3/hook", "10.1.2.3 is a private address"),
        ("http://192.168.1.10/hook", "private"),
        ("http://172.16.0.1/hook", "private"),
        ("http://169.254.169.254/latest/meta-data/", "cloud metadata"),
        ("http://169.254.10.1/", "link-local"),
        ("http://[::1]:8000/hook", "::1 is a loopback address"),
        ("http://[fe80::]/hook", "link-local"),
        ("http://[fe80::1]/hook", "link-local"),
        ("http://[::ffff:127.0.0.1]/hook", "loopback"),
        ("http://[::ffff:10.0.0.1]/hook", "private"),
        ("http://[2002:7f00:1::]/hook", "loopback"),
        ("http://[fd00:ec2::254]/", "cloud metadata"),
        ("http://0.0.0.0/hook", "unspecified"),
        ("http://224.0.0.1/hook", "multicast"),
        ("http://100.64.0.1/hook", "non-public"),
        ("http://metadata.google.internal/computeMetadata/v1/", "cloud metadata service"),
        ("http://METADATA.google.internal./", "cloud metadata service"),
    ],
)
def test_unsafe_urls_are_refused_with_the_reason(url, why):
    problem = webhooks.webhook_url_problem(url)
    assert problem is not None
    assert why in problem


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8000/hook",
        "http://10.1.2.3/hook",
        "http://[::1]/hook",
        "http://169.254.169.254/",
        "http://[::ffff:127.0.0.1]/hook",
    ],
)
def test_the_setting_allows_private_addresses(settings, url):
    settings.WEBHOOK_ALLOW_PRIVATE_ADDRESSES = True
    assert webhooks.webhook_url_problem(url) is None


def test_the_setting_does_not_allow_other_schemes(settings):
    settings.WEBHOOK_ALLOW_PRIVATE_ADDRESSES = True
    assert "http:// or https://" in webhooks.webhook_url_problem("ftp://127.0.0.1/")


def fake_dns(monkeypatch, answers: dict[str, list[str]]):
    def getaddrinfo(host, port, *args, **kwargs):
        if host not in answers:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return [
            (socket.AF_INET6 if ":" in a else socket.AF_INET, socket.SOCK_STREAM, 6, "", (a, port))
            for a in answers[host]
        ]

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)


def test_a_name_is_refused_when_any_of_its_addresses_is_private(monkeypatch):
    fake_dns(monkeypatch, {"hooks.example.com": [PUBLIC_IP, "10.0.0.5"]})
    problem = webhooks.webhook_url_problem("https://hooks.example.com/in")
    assert problem == (
        "hooks.example.com resolves to 10.0.0.5, which is a private address; "
        "webhooks may only point at public addresses."
    )


def test_a_name_with_only_public_addresses_is_accepted(monkeypatch):
    fake_dns(monkeypatch, {"hooks.example.com": [PUBLIC_IP, "2606:2800:220:1:248:1893:25c8:1946"]})
    assert webhooks.webhook_url_problem("https://hooks.example.com/in") is None


def test_an_unresolvable_host_is_refused(monkeypatch):
    fake_dns(monkeypatch, {})
    problem = webhooks.webhook_url_problem("https://nowhere.example.com/in")
    assert problem.startswith("The host nowhere.example.com does not resolve")


# --------------------------------------------------------------------------- registering


def test_register_stores_the_hook_and_audits_it_without_the_secret(register, gateway, admin_user):
    hook, secret = register(f"https://{PUBLIC_IP}/hook")

    assert Webhook.objects.get() == hook
    assert hook.owner == gateway and hook.is_active
    assert hook.secret == secret and len(secret) >= 43  # 32 random bytes, base64url
    event = AuditEvent.objects.get(action=AuditEvent.Action.WEBHOOK_EDIT)
    assert (event.actor, event.action) == (admin_user, AuditEvent.Action.WEBHOOK_EDIT)
    assert (event.object_type, event.object_id) == ("gating.webhook", str(hook.pk))
    assert event.before is None
    assert event.after == {
        "url": f"https://{PUBLIC_IP}/hook",
        "owner": gateway.pk,
        "kind": "decisions",
        "is_active": True,
    }
    assert secret not in json.dumps([event.before, event.after])


def test_each_hook_gets_its_own_secret(register):
    _, first = register(f"https://{PUBLIC_IP}/a")
    _, second = register(f"https://{PUBLIC_IP}/b")
    assert first != second


def test_register_refuses_an_owner_outside_the_gateway_role(register, user_in):
    with pytest.raises(ValidationError) as refused:
        register(f"https://{PUBLIC_IP}/hook", owner=user_in(Role.REVIEWER))
    assert list(refused.value.message_dict) == ["owner"]
    assert not Webhook.objects.exists()
    assert not AuditEvent.objects.filter(action=AuditEvent.Action.WEBHOOK_EDIT).exists()


def test_register_refuses_a_private_url_naming_the_field(register):
    with pytest.raises(ValidationError) as refused:
        register("http://10.0.0.1/hook")
    assert refused.value.message_dict["url"] == [
        "10.0.0.1 is a private address; webhooks may only point at public addresses."
    ]
    assert not Webhook.objects.exists()


def test_register_refuses_the_same_url_twice_for_one_owner(register):
    register(f"https://{PUBLIC_IP}/hook")
    with pytest.raises(ValidationError):
        register(f"https://{PUBLIC_IP}/hook")
    assert Webhook.objects.count() == 1


def test_rotating_the_secret_changes_it_and_audits_without_it(register, admin_user):
    hook, old = register(f"https://{PUBLIC_IP}/hook")
    new = webhooks.webhook_secret_rotate(hook=hook, actor=admin_user)

    hook.refresh_from_db()
    assert new != old and hook.secret == new
    event = AuditEvent.objects.order_by("id").last()
    assert event.after == {"secret_rotated": True}
    assert new not in json.dumps(event.after)


# --------------------------------------------------------------------------- signing, delays


def test_signature_is_hmac_sha256_of_timestamp_dot_body():
    body = b'{"type":"output.decided"}'
    signature = webhooks.sign("whsec-test", 1700000000, body)
    # From `printf '1700000000.{"type":"output.decided"}' | openssl dgst -sha256 -hmac whsec-test`
    assert signature == "39266c779e024f8523d9dcf9818e172d6046078dbc1f3a4573d164828311d922"
    assert signature == expected_signature("whsec-test", "1700000000", body)


@pytest.mark.parametrize(
    ("attempt", "seconds"),
    [(1, 30), (2, 60), (3, 120), (4, 240), (7, 1920), (8, 3600), (9, 3600), (500, 3600)],
)
def test_retry_delay_doubles_from_the_base_up_to_an_hour(attempt, seconds):
    assert webhooks.retry_delay(attempt, base_seconds=30) == seconds


def test_retry_delay_reads_its_base_from_the_settings(settings):
    settings.WEBHOOK_RETRY_BASE_SECONDS = 10
    assert [webhooks.retry_delay(n) for n in (1, 2, 3)] == [10, 20, 40]


# --------------------------------------------------------------------------- attempts


def test_a_2xx_answer_delivers_the_signed_payload(allow_private, receiver, register):
    server = receiver([204])
    hook, secret = register(server.url)
    delivery = delivery_to(hook)

    assert webhooks.delivery_attempt(delivery.pk) is None

    [request] = server.received
    assert request.path == "/hook"
    assert json.loads(request.body) == PAYLOAD
    assert request.headers["Content-Type"] == "application/json"
    assert request.headers["X-Gatehouse-Event"] == "output.decided"
    assert request.headers["X-Gatehouse-Delivery"] == str(delivery.event_id)
    timestamp, v1 = signature_parts(request.headers["X-Gatehouse-Signature"])
    assert abs(int(timestamp) - timezone.now().timestamp()) < 60
    assert v1 == expected_signature(secret, timestamp, request.body)
    delivery.refresh_from_db()
    assert delivery.status == WebhookDelivery.Status.DELIVERED
    assert delivery.attempt_count == 1
    assert delivery.delivered_at is not None and delivery.next_attempt_at is None
    [attempt] = delivery.attempts.all()
    assert (attempt.status_code, attempt.error) == (204, "")
    assert attempt.duration_ms > 0


def test_a_500_is_logged_and_retried_after_the_delay(allow_private, receiver, register):
    server = receiver([500, 200])
    hook, _ = register(server.url)
    with time_machine.travel(T0, tick=False):
        delivery = delivery_to(hook)
        assert webhooks.delivery_attempt(delivery.pk) == 30

    delivery.refresh_from_db()
    assert delivery.status == WebhookDelivery.Status.PENDING
    assert delivery.attempt_count == 1
    assert delivery.next_attempt_at == T0 + timedelta(seconds=30)
    [attempt] = delivery.attempts.all()
    assert (attempt.at, attempt.status_code) == (T0, 500)

    with time_machine.travel(T0 + timedelta(seconds=30), tick=False):
        assert webhooks.delivery_attempt(delivery.pk) is None
    delivery.refresh_from_db()
    assert delivery.status == WebhookDelivery.Status.DELIVERED
    assert [a.status_code for a in delivery.attempts.order_by("at")] == [500, 200]
    assert len(server.received) == 2


def test_a_task_for_an_attempt_not_yet_due_does_nothing(allow_private, receiver, register):
    server = receiver([500])
    hook, _ = register(server.url)
    with time_machine.travel(T0, tick=False):
        delivery = delivery_to(hook)
        webhooks.delivery_attempt(delivery.pk)
    with time_machine.travel(T0 + timedelta(seconds=5), tick=False):
        assert webhooks.delivery_attempt(delivery.pk) is None

    assert len(server.received) == 1
    assert delivery.attempts.count() == 1


def test_the_last_retry_must_fall_inside_the_window(allow_private, receiver, register):
    server = receiver([500])
    hook, _ = register(server.url)
    with time_machine.travel(T0, tick=False):
        delivery = delivery_to(hook)
    # 23:59:30 after the event, a 30 s delay lands exactly on the 24 h mark: still allowed.
    with time_machine.travel(T0 + timedelta(hours=24, seconds=-30), tick=False):
        assert webhooks.delivery_attempt(delivery.pk) == 30

    delivery.refresh_from_db()
    assert delivery.status == WebhookDelivery.Status.PENDING
    assert delivery.next_attempt_at == T0 + timedelta(hours=24)


def test_past_the_window_the_delivery_fails(allow_private, receiver, register):
    server = receiver([500, 503])
    hook, _ = register(server.url)
    with time_machine.travel(T0, tick=False):
        delivery = delivery_to(hook)
    with time_machine.travel(T0 + timedelta(hours=23, minutes=59, seconds=45), tick=False):
        assert webhooks.delivery_attempt(delivery.pk) is None

    delivery.refresh_from_db()
    assert delivery.status == WebhookDelivery.Status.FAILED
    assert delivery.next_attempt_at is None
    [attempt] = delivery.attempts.all()
    assert attempt.status_code == 500
    # A failed delivery is final: a late task sends nothing more.
    assert webhooks.delivery_attempt(delivery.pk) is None
    assert len(server.received) == 1


def test_a_url_refused_at_send_time_is_a_failed_attempt(allow_private, receiver, register):
    server = receiver()
    hook, _ = register(server.url)
    delivery = delivery_to(hook)
    allow_private.WEBHOOK_ALLOW_PRIVATE_ADDRESSES = False

    assert webhooks.delivery_attempt(delivery.pk) == 30

    assert server.received == []
    delivery.refresh_from_db()
    assert delivery.status == WebhookDelivery.Status.PENDING
    assert delivery.attempt_count == 1
    [attempt] = delivery.attempts.all()
    assert attempt.status_code is None
    assert attempt.error == (
        "Refused: 127.0.0.1 is a loopback address; webhooks may only point at public addresses."
    )


def test_a_connection_error_is_a_failed_attempt(allow_private, register):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    hook, _ = register(f"http://127.0.0.1:{port}/hook")
    delivery = delivery_to(hook)

    assert webhooks.delivery_attempt(delivery.pk) == 30

    [attempt] = delivery.attempts.all()
    assert attempt.status_code is None
    assert attempt.error.startswith("ConnectError")


def test_a_redirect_is_not_followed(allow_private, receiver, register):
    server = receiver([302])
    hook, _ = register(server.url)
    delivery = delivery_to(hook)

    assert webhooks.delivery_attempt(delivery.pk) == 30

    assert [r.path for r in server.received] == ["/hook"]
    assert delivery.attempts.get().status_code == 302


def test_the_request_carries_the_registered_host_name(allow_private, receiver, register):
    server = receiver()
    hook, _ = register(f"http://localhost:{server.port}/hook")

    assert webhooks.delivery_attempt(delivery_to(hook).pk) is None

    [request] = server.received
    assert request.headers["Host"] == f"localhost:{server.port}"


def test_a_deactivated_hook_fails_its_pending_deliveries(
    allow_private, receiver, register, admin_user
):
    server = receiver()
    hook, _ = register(server.url)
    delivery = delivery_to(hook)
    webhooks.webhook_set_active(hook=hook, is_active=False, actor=admin_user)

    assert webhooks.delivery_attempt(delivery.pk) is None

    assert server.received == []
    delivery.refresh_from_db()
    assert delivery.status == WebhookDelivery.Status.FAILED
    assert "deactivated" in delivery.attempts.get().error


def documented_verify():
    """The receiver's check from docs/webhooks.md, run as written there."""
    text = (BASE_DIR / "docs" / "webhooks.md").read_text()
    namespace: dict = {}
    exec(text.split("```python\n", 1)[1].split("```", 1)[0], namespace)
    return namespace["verify"]


def test_the_documented_check_accepts_a_real_request_and_nothing_else(
    allow_private, receiver, register
):
    server = receiver()
    hook, secret = register(server.url)
    webhooks.delivery_attempt(delivery_to(hook).pk)
    [request] = server.received
    header = request.headers["X-Gatehouse-Signature"]
    timestamp, _ = signature_parts(header)
    verify = documented_verify()

    assert verify(secret, header, request.body)
    assert not verify(secret, header, request.body.replace(b"4%", b"5%"))
    assert not verify("another-secret", header, request.body)
    assert not verify(secret, header, request.body, now=int(timestamp) + 301)
    assert not verify(secret, "v1=00", request.body)


# --------------------------------------------------------------------------- tasks


def test_the_task_schedules_itself_again_after_a_failure(
    allow_private, receiver, register, monkeypatch
):
    scheduled = []
    monkeypatch.setattr(
        tasks.webhook_deliver,
        "apply_async",
        lambda args, countdown: scheduled.append((args, countdown)),
    )
    server = receiver([500, 200])
    hook, _ = register(server.url)
    delivery = delivery_to(hook)

    tasks.webhook_deliver(delivery.pk)
    assert scheduled == [((delivery.pk,), 30)]

    WebhookDelivery.objects.filter(pk=delivery.pk).update(next_attempt_at=timezone.now())
    tasks.webhook_deliver(delivery.pk)
    assert len(scheduled) == 1
    delivery.refresh_from_db()
    assert delivery.status == WebhookDelivery.Status.DELIVERED


def test_resume_queues_only_deliveries_whose_task_was_lost(register, sent):
    hook, _ = register(f"https://{PUBLIC_IP}/hook")
    lost, recent, delivered = (delivery_to(hook) for _ in range(3))
    now = timezone.now()
    WebhookDelivery.objects.filter(pk__in=[lost.pk, delivered.pk]).update(
        next_attempt_at=now - timedelta(minutes=6)
    )
    WebhookDelivery.objects.filter(pk=delivered.pk).update(status=WebhookDelivery.Status.DELIVERED)
    WebhookDelivery.objects.filter(pk=recent.pk).update(next_attempt_at=now - timedelta(minutes=4))

    assert tasks.webhook_deliveries_resume() == 1
    assert sent == [lost.pk]
    lost.refresh_from_db()
    # Due again now, so that the next run leaves it alone while its task waits in the queue.
    assert now <= lost.next_attempt_at <= timezone.now()
    assert tasks.webhook_deliveries_resume() == 0


# --------------------------------------------------------------------------- events


def held_output(source, task_type="fresh"):
    TaskTypeFactory(name=task_type, reviewed_count=0, double_review_rate=0)
    submission = valid_submission(task_type=task_type)
    output = services.output_ingest(source=source, submission=submission).output
    assert output.decision == "pending_review"
    return output


def test_emit_makes_one_delivery_per_active_hook_of_the_source_in_the_outbox(
    register, gateway, user_in, django_capture_on_commit_callbacks
):
    first, _ = register(f"https://{PUBLIC_IP}/a")
    second, _ = register(f"https://{PUBLIC_IP}/b")
    off, _ = register(f"https://{PUBLIC_IP}/off")
    Webhook.objects.filter(pk=off.pk).update(is_active=False)
    register(f"https://{PUBLIC_IP}/a", owner=user_in(Role.GATEWAY))
    output = held_output(gateway)

    with django_capture_on_commit_callbacks() as callbacks:
        deliveries = webhooks.webhook_events_emit(
            outputs_with_reviews=[(output, None)], event_type=webhooks.OUTPUT_DECIDED
        )
    # Nothing waits for the broker after commit: the tasks are rows of the same transaction.
    assert callbacks == []

    assert {d.webhook_id for d in deliveries} == {first.pk, second.pk}
    assert WebhookDelivery.objects.count() == 2
    assert len({d.event_id for d in deliveries}) == 2
    assert sorted(outboxed()) == sorted(d.pk for d in deliveries)


def test_a_rolled_back_decision_sends_nothing(
    register, gateway, django_capture_on_commit_callbacks
):
    register(f"https://{PUBLIC_IP}/a")
    output = held_output(gateway)

    with (
        django_capture_on_commit_callbacks(execute=True) as callbacks,
        pytest.raises(RuntimeError),
        transaction.atomic(),
    ):
        webhooks.webhook_events_emit(
            outputs_with_reviews=[(output, None)], event_type=webhooks.OUTPUT_DECIDED
        )
        raise RuntimeError("the decision failed")

    assert callbacks == [] and outboxed() == []
    assert not WebhookDelivery.objects.exists()


def test_a_final_decision_emits_output_decided(
    register, gateway, user_in, django_capture_on_commit_callbacks
):
    register(f"https://{PUBLIC_IP}/a")
    output = held_output(gateway)
    reviewer = user_in(Role.REVIEWER)
    item = item_claim(reviewer=reviewer)

    with django_capture_on_commit_callbacks(execute=True):
        item_decide(item_id=item.pk, reviewer=reviewer, decision=DecisionInput(action="approve"))

    delivery = WebhookDelivery.objects.get()
    assert outboxed() == [delivery.pk]
    assert delivery.event_type == "output.decided"
    assert delivery.payload["type"] == "output.decided"
    assert delivery.payload["output"]["external_id"] == output.external_id
    assert delivery.payload["output"]["status"] == "approved"
    assert delivery.payload["output"]["final_output"] == output.output_text
    assert delivery.payload["review"]["action"] == "approve"


@pytest.mark.parametrize(("action", "events"), [("reject", 1), ("approve", 0)])
def test_only_a_rejecting_audit_of_a_delivered_output_emits(
    register, gateway, user_in, django_capture_on_commit_callbacks, action, events
):
    register(f"https://{PUBLIC_IP}/a")
    TaskTypeFactory(
        name="audited", audit_rate_approved=1, audit_rate_warning=1, double_review_rate=0
    )
    submission = valid_submission(task_type="audited")
    output = services.output_ingest(source=gateway, submission=submission).output
    assert output.decision in ("approved", "warning")
    reviewer = user_in(Role.REVIEWER)
    item = item_claim(reviewer=reviewer)
    assert item.is_audit
    reason = "factual_error" if action == "reject" else ""

    with django_capture_on_commit_callbacks(execute=True):
        item_decide(
            item_id=item.pk, reviewer=reviewer, decision=DecisionInput(action=action, reason=reason)
        )
    if action == "reject":
        # A fault found by an audit is reviewed again before it stands: nothing yet.
        assert not WebhookDelivery.objects.exists()
        other = user_in(Role.REVIEWER)
        second = item_claim(reviewer=other)
        assert second.kind == "second"
        with django_capture_on_commit_callbacks(execute=True):
            item_decide(
                item_id=second.pk,
                reviewer=other,
                decision=DecisionInput(action="reject", reason=reason),
            )

    deliveries = list(WebhookDelivery.objects.all())
    assert len(deliveries) == len(outboxed()) == events
    if events:
        assert deliveries[0].event_type == "output.audit_rejected"
        assert deliveries[0].payload["output"]["status"] == output.status
        assert deliveries[0].payload["review"]["reason"] == "factual_error"


# --------------------------------------------------------------------------- admin


@pytest.fixture
def admin_client_(client, admin_user):
    client.force_login(admin_user)
    return client


def test_admin_add_shows_the_secret_once(admin_client_, gateway):
    response = admin_client_.post(
        reverse("admin:gating_webhook_add"),
        {"kind": "decisions", "owner": gateway.pk, "url": f"https://{PUBLIC_IP}/hook"},
        follow=True,
    )

    hook = Webhook.objects.get()
    assert response.status_code == 200
    assert hook.secret in response.content.decode()
    assert AuditEvent.objects.filter(action=AuditEvent.Action.WEBHOOK_EDIT).count() == 1
    again = admin_client_.get(reverse("admin:gating_webhook_change", args=[hook.pk]))
    assert again.status_code == 200
    assert hook.secret not in again.content.decode()


def test_admin_add_refuses_a_private_url(admin_client_, gateway):
    response = admin_client_.post(
        reverse("admin:gating_webhook_add"), {"owner": gateway.pk, "url": "http://10.0.0.1/hook"}
    )

    assert response.status_code == 200
    assert "10.0.0.1 is a private address" in response.content.decode()
    assert not Webhook.objects.exists()


def test_admin_deactivating_a_hook_is_audited(admin_client_, register, admin_user):
    hook, _ = register(f"https://{PUBLIC_IP}/hook")

    admin_client_.post(reverse("admin:gating_webhook_change", args=[hook.pk]), {})

    hook.refresh_from_db()
    assert not hook.is_active
    event = AuditEvent.objects.order_by("id").last()
    assert (event.before["is_active"], event.after["is_active"]) == (True, False)


def test_admin_deletes_a_hook_without_deliveries_and_audits_it(admin_client_, register):
    hook, _ = register(f"https://{PUBLIC_IP}/hook")

    admin_client_.post(reverse("admin:gating_webhook_delete", args=[hook.pk]), {"post": "yes"})

    assert not Webhook.objects.exists()
    event = AuditEvent.objects.order_by("id").last()
    assert (event.object_id, event.after) == (str(hook.pk), None)
    assert event.before["url"] == f"https://{PUBLIC_IP}/hook"


def test_admin_keeps_a_hook_that_has_deliveries(admin_client_, register):
    hook, _ = register(f"https://{PUBLIC_IP}/hook")
    delivery_to(hook)

    response = admin_client_.post(
        reverse("admin:gating_webhook_delete", args=[hook.pk]), {"post": "yes"}
    )

    assert response.status_code == 403
    assert Webhook.objects.filter(pk=hook.pk).exists()


def test_admin_shows_a_delivery_with_its_attempts_escaped(
    admin_client_, allow_private, receiver, register
):
    server = receiver([500])
    hook, _ = register(server.url)
    delivery = delivery_to(hook, payload={"output": {"final_output": "<b>bold</b>"}})
    webhooks.delivery_attempt(delivery.pk)

    page = admin_client_.get(reverse("admin:gating_webhookdelivery_change", args=[delivery.pk]))

    assert page.status_code == 200
    html = page.content.decode()
    assert "&lt;b&gt;bold&lt;/b&gt;" in html and "<b>bold</b>" not in html
    assert ">500<" in html.replace(" ", "").replace("\n", "")


def test_audit_events_are_read_only_and_escaped_in_the_admin(admin_client_, admin_user):
    event = AuditEvent.objects.create(
        actor=admin_user,
        at=timezone.now(),
        action=AuditEvent.Action.DECISION,
        object_type="gating.review",
        object_id="1",
        after={"edited_output": "<script>alert(1)</script>"},
    )
    change_url = reverse("admin:gating_auditevent_change", args=[event.pk])

    page = admin_client_.get(change_url)
    assert page.status_code == 200
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page.content.decode()
    assert "<script>alert(1)</script>" not in page.content.decode()
    assert admin_client_.get(reverse("admin:gating_auditevent_add")).status_code == 403
    assert admin_client_.post(change_url, {"object_id": "2"}).status_code == 403
    delete_url = reverse("admin:gating_auditevent_delete", args=[event.pk])
    assert admin_client_.post(delete_url, {"post": "yes"}).status_code == 403
    event.refresh_from_db()
    assert event.object_id == "1"


@pytest.fixture
def broker_down():
    """Point Celery at a port where nothing listens, as when Redis is down."""
    from dashboard.celery import app

    saved = app.conf.broker_url
    app.conf.broker_url = "redis://127.0.0.1:9/0"
    app._pool = None
    app.amqp._producer_pool = None
    yield
    app.conf.broker_url = saved
    app._pool = None
    app.amqp._producer_pool = None


def test_decisions_work_with_the_broker_down_and_the_outbox_keeps_the_event(
    register, gateway, user_in, broker_down, django_capture_on_commit_callbacks
):
    register(f"https://{PUBLIC_IP}/a")
    held_output(gateway)
    reviewer = user_in(Role.REVIEWER)

    started = datetime.now(UTC)
    with django_capture_on_commit_callbacks(execute=True):
        item = item_claim(reviewer=reviewer)
        item_decide(item_id=item.pk, reviewer=reviewer, decision=DecisionInput("approve"))
    # Publishing failed fast instead of hanging the request on the broker.
    assert datetime.now(UTC) - started < timedelta(seconds=5)

    (delivery,) = WebhookDelivery.objects.all()
    assert delivery.status == WebhookDelivery.Status.PENDING
    # Once the broker is back, beat's resume task finds it.
    later = timezone.now() + webhooks.RESUME_AFTER + timedelta(seconds=1)
    assert webhooks.deliveries_resume(now=later) == [delivery.pk]


def test_alert_webhooks_belong_to_admins(admin_client_, gateway, user_in):
    admin = user_in(Role.ADMIN)
    with pytest.raises(ValidationError) as error:
        webhooks.webhook_register(
            owner=gateway, url=f"https://{PUBLIC_IP}/slack", actor=admin, kind="alerts"
        )
    assert "admin" in str(error.value.message_dict["owner"])

    response = admin_client_.post(
        reverse("admin:gating_webhook_add"),
        {"kind": "alerts", "owner": admin.pk, "url": f"https://{PUBLIC_IP}/slack"},
        follow=True,
    )
    assert response.status_code == 200
    hook = Webhook.objects.get(kind="alerts")
    assert hook.owner == admin
