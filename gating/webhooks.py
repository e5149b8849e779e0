"""Webhook events: what Gatehouse tells a gateway when a human decides one of its outputs.

Events are written to WebhookDelivery rows inside the deciding transaction, with their
delivery tasks in the outbox (gating/outbox.py), so a decision and its events are stored
together or not at all, no task ever runs for a rolled-back decision, and no decision
waits on the broker.

Each attempt re-checks the webhook's URL, because what a name resolves to can change after
registration, and then connects to the very addresses it checked: a name that resolves to a
public address for the check and to a private one a moment later (DNS rebinding) cannot
steer the request inside. docs/webhooks.md describes the whole contract for receivers.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import json
import secrets
import socket
import time
from dataclasses import dataclass
from datetime import datetime, timedelta

import httpx
from django.conf import settings
from django.contrib.auth.models import AbstractUser
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from gating import rubrics
from gating.audit import audit_record
from gating.models import AuditEvent, Output, Webhook, WebhookAttempt, WebhookDelivery
from gating.outbox import outbox_enqueue_many
from gating.roles import Role

OUTPUT_DECIDED = "output.decided"
OUTPUT_AUDIT_REJECTED = "output.audit_rejected"
ALERT_OPENED = "alert.opened"
# The Celery task that makes a delivery's next attempt (gating/tasks.py).
DELIVER_TASK = "gating.tasks.webhook_deliver"

SIGNATURE_HEADER = "X-Gatehouse-Signature"
EVENT_HEADER = "X-Gatehouse-Event"
DELIVERY_HEADER = "X-Gatehouse-Delivery"

MAX_RETRY_DELAY_SECONDS = 3600.0
# A pending delivery this long past its next attempt has lost its task (a broker restart
# drops the countdowns it held), and webhook_deliveries_resume queues it again.
RESUME_AFTER = timedelta(minutes=5)
# While a worker makes an attempt, the delivery's next_attempt_at is pushed this far ahead:
# far longer than an attempt can take, so it lapses only when the worker died mid-attempt.
_ATTEMPT_LEASE = timedelta(minutes=5)
# A countdown may fire a little before next_attempt_at when workers' clocks disagree; far
# less than the shortest delay, so that a duplicate task never makes an attempt early.
_DUE_TOLERANCE = timedelta(seconds=1)

# Names that reach a cloud provider's instance metadata service from inside that cloud,
# whatever they resolve to where the check runs.
_METADATA_HOSTNAMES = frozenset(
    {
        "metadata",
        "metadata.google.internal",
        "metadata.goog",
        "instance-data",
        "instance-data.ec2.internal",
    }
)
_METADATA_ADDRESSES = frozenset(
    {ipaddress.ip_address("169.254.169.254"), ipaddress.ip_address("fd00:ec2::254")}
)
_DEFAULT_PORTS = {"http": 80, "https": 443}


# --------------------------------------------------------------------------- events


def event_payload(*, output: Output, event_type: str, review=None) -> dict:
    """The JSON body of an event about one output."""
    payload = {
        "type": event_type,
        "output": {
            "id": output.pk,
            "external_id": output.external_id,
            "task_type": output.task_type.name,
            "model": output.model,
            "decision": output.decision,
            "approve_guarantee": output.approve_guarantee,
            "status": output.status,
            "final_output": output.final_output_text,
            "decided_at": output.decided_at.isoformat() if output.decided_at else None,
        },
    }
    if review is not None:
        payload["review"] = {
            "action": review.action,
            "reason": review.reason,
            "note": review.note,
            "is_bulk": review.is_bulk,
            **rubrics.review_scores(review),
        }
    return payload


def webhook_events_emit(*, outputs_with_reviews: list[tuple[Output, object]], event_type: str):
    """Queue one delivery per (output, active webhook of its source), after commit."""
    by_owner: dict[int, list[Webhook]] = {}
    owners = {o.source_id for o, _ in outputs_with_reviews}
    for hook in Webhook.objects.filter(
        owner_id__in=owners, is_active=True, kind=Webhook.Kind.DECISIONS
    ):
        by_owner.setdefault(hook.owner_id, []).append(hook)
    if not by_owner:
        return []
    now = timezone.now()
    deliveries = WebhookDelivery.objects.bulk_create(
        WebhookDelivery(
            webhook=hook,
            event_type=event_type,
            payload=event_payload(output=output, event_type=event_type, review=review),
            next_attempt_at=now,
        )
        for output, review in outputs_with_reviews
        for hook in by_owner.get(output.source_id, [])
    )
    _enqueue(deliveries)
    return deliveries


def alert_event_emit(*, payload: dict) -> list[WebhookDelivery]:
    """Queue one delivery of an alert to every active alert webhook, after commit.
    ``payload`` carries Slack's ``text`` field, so a Slack incoming webhook shows it."""
    now = timezone.now()
    deliveries = WebhookDelivery.objects.bulk_create(
        WebhookDelivery(webhook=hook, event_type=ALERT_OPENED, payload=payload, next_attempt_at=now)
        for hook in Webhook.objects.filter(is_active=True, kind=Webhook.Kind.ALERTS)
    )
    _enqueue(deliveries)
    return deliveries


def _enqueue(deliveries: list[WebhookDelivery]) -> None:
    # Through the outbox, in the deciding transaction: the decision never waits on the
    # broker, and its events are published (by the relay) once the broker takes them.
    outbox_enqueue_many(DELIVER_TASK, ([d.pk] for d in deliveries))


# --------------------------------------------------------------------------- URLs


class _Refused(Exception):
    """A URL Gatehouse will not send to; the message says why, for a person to read."""


@dataclass(frozen=True)
class _Target:
    url: httpx.URL
    addresses: list[str]


def _address_kind(address: str) -> str | None:
    """What makes an address no place for a webhook, or None for a public one."""
    ip = ipaddress.ip_address(address)
    if isinstance(ip, ipaddress.IPv6Address):
        # An IPv4 address carried inside IPv6 is reached as that IPv4 address.
        if ip.ipv4_mapped is not None:
            return _address_kind(str(ip.ipv4_mapped))
        if ip.sixtofour is not None and (kind := _address_kind(str(ip.sixtofour))):
            return kind
    checks = [
        ("cloud metadata", ip in _METADATA_ADDRESSES),
        ("loopback", ip.is_loopback),
        ("link-local", ip.is_link_local),
        ("multicast", ip.is_multicast),
        ("unspecified", ip.is_unspecified),
        ("reserved", ip.is_reserved),
        ("private", ip.is_private),
        ("non-public", not ip.is_global),
    ]
    return next((kind for kind, hit in checks if hit), None)


def _target(url: str) -> _Target:
    """Parse and resolve a webhook URL, or raise _Refused.

    Every address the host resolves to must be public (unless
    WEBHOOK_ALLOW_PRIVATE_ADDRESSES): one private answer among public ones would be enough
    for a client that picks addresses in another order.
    """
    try:
        parsed = httpx.URL(url)
    except httpx.InvalidURL as exc:
        raise _Refused(f"Not a valid URL: {exc}.") from exc
    if parsed.scheme not in _DEFAULT_PORTS:
        raise _Refused("Must be an http:// or https:// URL.")
    # Also checked before every attempt, so a webhook stored before this rule with
    # credentials in its URL is refused at delivery (a failed attempt that says why) rather
    # than sending them; no migration rewrites it, since outside its admin editor its URL is
    # only ever shown redacted (Webhook.url_redacted).
    if parsed.userinfo:
        raise _Refused(
            "Must not carry a user name or password: a receiver authenticates Gatehouse by "
            "the signature, keyed with the webhook's secret."
        )
    host = parsed.raw_host.decode("ascii").rstrip(".").lower()
    if not host:
        raise _Refused("Must name a host.")
    if parsed.port is not None and not 0 < parsed.port < 65536:
        raise _Refused("The port must be from 1 to 65535.")
    allow_private = settings.WEBHOOK_ALLOW_PRIVATE_ADDRESSES
    if host in _METADATA_HOSTNAMES and not allow_private:
        raise _Refused(f"{host} is a cloud metadata service, not a webhook receiver.")
    try:
        infos = socket.getaddrinfo(
            host, parsed.port or _DEFAULT_PORTS[parsed.scheme], type=socket.SOCK_STREAM
        )
    except (OSError, UnicodeError) as exc:
        raise _Refused(f"The host {host} does not resolve ({exc}).") from exc
    addresses = list(dict.fromkeys(info[4][0] for info in infos))
    if not allow_private:
        for address in addresses:
            if kind := _address_kind(address):
                where = (
                    f"{address} is"
                    if address == host
                    else f"{host} resolves to {address}, which is"
                )
                raise _Refused(
                    f"{where} a {kind} address; webhooks may only point at public addresses."
                )
    return _Target(url=parsed, addresses=addresses)


def webhook_url_problem(url: str) -> str | None:
    """Why Gatehouse refuses to send to this URL, or None when it may."""
    try:
        _target(url)
    except _Refused as exc:
        return str(exc)
    return None


# --------------------------------------------------------------------------- webhooks


def _audit_view(hook: Webhook) -> dict:
    # Never the secret, nor what of the URL can carry the receiver's credentials: the audit
    # log is readable by every admin, for ever.
    return {
        "url": hook.url_redacted,
        "owner": hook.owner_id,
        "kind": hook.kind,
        "is_active": hook.is_active,
    }


def webhook_validate(
    *, owner: AbstractUser | None, url: str, kind: str = Webhook.Kind.DECISIONS
) -> None:
    """Raise ValidationError naming each bad field of a new webhook."""
    errors = {}
    if kind not in Webhook.Kind.values:
        errors["kind"] = f"Must be one of {', '.join(Webhook.Kind.values)}."
    elif kind == Webhook.Kind.ALERTS:
        if owner is None or not owner.groups.filter(name=Role.ADMIN.value).exists():
            errors["owner"] = "Must be an admin: alert webhooks are set up by admins."
    elif owner is None or not owner.groups.filter(name=Role.GATEWAY.value).exists():
        errors["owner"] = "Must be a gateway user: a webhook carries that user's outputs."
    if problem := webhook_url_problem(url):
        errors["url"] = problem
    if errors:
        raise ValidationError(errors)


def webhook_register(
    *, owner: AbstractUser, url: str, actor: AbstractUser, kind: str = Webhook.Kind.DECISIONS
) -> tuple[Webhook, str]:
    """Add a webhook: a gateway user's decisions, or (kind alerts) the alerts, owned by the
    admin who sets it up. Returns it with its signing secret, to show once."""
    webhook_validate(owner=owner, url=url, kind=kind)
    secret = secrets.token_urlsafe(32)
    hook = Webhook(owner=owner, url=url, secret=secret, kind=kind)
    hook.full_clean()
    with transaction.atomic():
        hook.save()
        audit_record(
            actor=actor,
            action=AuditEvent.Action.WEBHOOK_EDIT,
            obj=hook,
            before=None,
            after=_audit_view(hook),
        )
    return hook, secret


def webhook_set_active(*, hook: Webhook, is_active: bool, actor: AbstractUser) -> Webhook:
    """Turn a webhook on or off. Deliveries still pending for it fail at their next attempt."""
    with transaction.atomic():
        current = Webhook.objects.select_for_update().get(pk=hook.pk)
        if current.is_active == is_active:
            return current
        before = _audit_view(current)
        current.is_active = is_active
        current.save(update_fields=["is_active"])
        audit_record(
            actor=actor,
            action=AuditEvent.Action.WEBHOOK_EDIT,
            obj=current,
            before=before,
            after=_audit_view(current),
        )
    return current


def webhook_secret_rotate(*, hook: Webhook, actor: AbstractUser) -> str:
    """Give a webhook a new signing secret and return it, to show once.

    Every attempt from now on, retries of older events included, is signed with it.
    """
    secret = secrets.token_urlsafe(32)
    with transaction.atomic():
        Webhook.objects.filter(pk=hook.pk).update(secret=secret)
        audit_record(
            actor=actor,
            action=AuditEvent.Action.WEBHOOK_EDIT,
            obj=hook,
            before=None,
            after={"secret_rotated": True},
        )
    hook.secret = secret
    return secret


def webhook_delete(*, hook: Webhook, actor: AbstractUser) -> None:
    """Delete a webhook with its deliveries and their attempts; the audit log keeps a trace."""
    with transaction.atomic():
        audit_record(
            actor=actor,
            action=AuditEvent.Action.WEBHOOK_EDIT,
            obj=hook,
            before=_audit_view(hook),
            after=None,
        )
        hook.delete()


# --------------------------------------------------------------------------- delivery


def sign(secret: str, timestamp: int, body: bytes) -> str:
    """HMAC-SHA256, in hex, of ``"<timestamp>."`` followed by the body (docs/webhooks.md)."""
    return hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256).hexdigest()


def retry_delay(attempt_number: int, base_seconds: float | None = None) -> float:
    """Seconds to wait after failed attempt n (1 for the first): base * 2**(n-1), at most 1 h.

    ``base_seconds`` defaults to WEBHOOK_RETRY_BASE_SECONDS.
    """
    base = settings.WEBHOOK_RETRY_BASE_SECONDS if base_seconds is None else base_seconds
    # 2**64 times any sensible base is far past the cap; bounding the exponent keeps an
    # absurd attempt number from overflowing a float.
    return min(base * 2.0 ** min(attempt_number - 1, 64), MAX_RETRY_DELAY_SECONDS)


def _error_text(exc: Exception) -> str:
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


def _post(delivery: WebhookDelivery, now: datetime) -> tuple[int | None, str]:
    """Send the event once: (the response's status code, "") or (None, what went wrong)."""
    try:
        target = _target(delivery.webhook.url)
    except _Refused as exc:
        return None, f"Refused: {exc}"
    body = json.dumps(delivery.payload, separators=(",", ":")).encode()
    timestamp = int(now.timestamp())
    headers = {
        "Content-Type": "application/json",
        "User-Agent": "Gatehouse-Webhooks/1",
        # The name the admin registered, although the connection goes to a checked address.
        "Host": target.url.netloc.decode("ascii"),
        EVENT_HEADER: delivery.event_type,
        DELIVERY_HEADER: str(delivery.event_id),
        SIGNATURE_HEADER: f"t={timestamp},v1={sign(delivery.webhook.secret, timestamp, body)}",
    }
    error = f"{target.url.host} resolved to no address."
    # trust_env=False: a proxy from the environment would resolve the name itself, past
    # the check.
    with httpx.Client(
        timeout=settings.WEBHOOK_TIMEOUT_SECONDS, follow_redirects=False, trust_env=False
    ) as client:
        for address in target.addresses:
            try:
                with client.stream(
                    "POST",
                    target.url.copy_with(host=address),
                    content=body,
                    headers=headers,
                    # TLS still checks the certificate against the registered name.
                    extensions={"sni_hostname": target.url.raw_host.decode("ascii")},
                ) as response:
                    # The body is never read: a receiver cannot make a worker download much.
                    return response.status_code, ""
            except httpx.ConnectError as exc:
                # On to the host's next address, as any client would.
                error = _error_text(exc)
            except (httpx.HTTPError, httpx.InvalidURL) as exc:
                return None, _error_text(exc)
    return None, error


def delivery_attempt(delivery_id: int, now: datetime | None = None) -> float | None:
    """Make the next attempt at one delivery, and record it.

    Returns how many seconds to wait before the next attempt, or None when there is nothing
    more to do: delivered, failed for good, gone, or not this call's to make (not due yet,
    or another worker is making it). Attempts stop once the next one would fall later than
    WEBHOOK_RETRY_HOURS after the event.
    """
    now = now or timezone.now()
    delivery = WebhookDelivery.objects.select_related("webhook").filter(pk=delivery_id).first()
    if delivery is None or delivery.status != WebhookDelivery.Status.PENDING:
        return None
    if delivery.next_attempt_at is not None and delivery.next_attempt_at > now + _DUE_TOLERANCE:
        # A duplicate task (resumed, or redelivered by the broker): this attempt is already
        # scheduled, or being made.
        return None
    claimed = WebhookDelivery.objects.filter(
        pk=delivery.pk,
        status=WebhookDelivery.Status.PENDING,
        attempt_count=delivery.attempt_count,
    ).update(attempt_count=F("attempt_count") + 1, next_attempt_at=now + _ATTEMPT_LEASE)
    if claimed != 1:
        return None  # another worker got to this attempt first
    delivery.attempt_count += 1

    started = time.perf_counter()
    hook_active = delivery.webhook.is_active
    if hook_active:
        status_code, error = _post(delivery, now)
    else:
        status_code, error = None, "The webhook is deactivated; nothing was sent."
    duration_ms = (time.perf_counter() - started) * 1000

    delay = None
    delivery.next_attempt_at = None
    if status_code is not None and 200 <= status_code < 300:
        delivery.status = WebhookDelivery.Status.DELIVERED
        delivery.delivered_at = now
    else:
        deadline = delivery.created_at + timedelta(hours=settings.WEBHOOK_RETRY_HOURS)
        wait = retry_delay(delivery.attempt_count)
        if hook_active and now + timedelta(seconds=wait) <= deadline:
            delay = wait
            delivery.next_attempt_at = now + timedelta(seconds=wait)
        else:
            delivery.status = WebhookDelivery.Status.FAILED
    with transaction.atomic():
        WebhookAttempt.objects.create(
            delivery=delivery,
            at=now,
            status_code=status_code,
            error=error,
            duration_ms=duration_ms,
        )
        delivery.save(update_fields=["status", "attempt_count", "next_attempt_at", "delivered_at"])
    return delay


def deliveries_resume(*, now: datetime | None = None, limit: int = 1000) -> list[int]:
    """Pending deliveries whose task was lost, made due again; their ids, to queue."""
    now = now or timezone.now()
    with transaction.atomic():
        ids = list(
            WebhookDelivery.objects.select_for_update(skip_locked=True)
            .filter(status=WebhookDelivery.Status.PENDING, next_attempt_at__lt=now - RESUME_AFTER)
            .order_by("next_attempt_at")
            .values_list("pk", flat=True)[:limit]
        )
        # Due now, not overdue: the next run does not queue them again while they wait.
        WebhookDelivery.objects.filter(pk__in=ids).update(next_attempt_at=now)
    return ids
