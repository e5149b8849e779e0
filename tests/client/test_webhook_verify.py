"""gatehouse_client.verify_signature accepts what gating.webhooks signs and sends, and
nothing else: the client's scheme is written apart from the server's, and held to it here."""

import json
import time

import pytest
from gatehouse_client import verify_signature
from gatehouse_client import webhooks as client_webhooks

from gating import webhooks
from gating.roles import Role
from tests.gating.test_webhooks import Receiver, delivery_to

SECRET = "whsec-for-tests"
NOW = 1_795_426_867
BODY = json.dumps({"type": "output.decided", "output": {"id": 1042}}).encode()


def signed(body: bytes = BODY, at: int = NOW, secret: str = SECRET) -> str:
    """The header as Gatehouse sends it, signed by the server's own function."""
    return f"t={at},v1={webhooks.sign(secret, at, body)}"


def test_the_server_and_client_use_the_same_header_names():
    assert client_webhooks.SIGNATURE_HEADER == webhooks.SIGNATURE_HEADER
    assert client_webhooks.EVENT_HEADER == webhooks.EVENT_HEADER
    assert client_webhooks.DELIVERY_HEADER == webhooks.DELIVERY_HEADER


def test_a_signature_from_the_server_verifies():
    assert verify_signature(SECRET, signed(), BODY, now=NOW + 10)


def test_the_client_signs_as_the_server_does():
    assert client_webhooks.signature(SECRET, NOW, BODY) == webhooks.sign(SECRET, NOW, BODY)


@pytest.mark.parametrize(
    ("header", "body"),
    [
        (signed(), BODY.replace(b"1042", b"1043")),
        (signed(secret="another secret"), BODY),
        (signed().replace(f"t={NOW}", f"t={NOW + 1}"), BODY),
        (signed()[:-1] + ("0" if signed()[-1] != "0" else "1"), BODY),
    ],
    ids=["tampered body", "wrong secret", "changed timestamp", "changed signature"],
)
def test_anything_tampered_fails(header, body):
    assert not verify_signature(SECRET, header, body, now=NOW)


@pytest.mark.parametrize("age", [301, -301, 86_400])
def test_a_timestamp_outside_the_tolerance_fails(age):
    assert not verify_signature(SECRET, signed(), BODY, now=NOW + age)


def test_the_tolerance_is_the_callers():
    assert verify_signature(SECRET, signed(), BODY, now=NOW + 3_000, tolerance_seconds=3_600)
    assert not verify_signature(SECRET, signed(), BODY, now=NOW + 60, tolerance_seconds=30)


@pytest.mark.parametrize(
    "header", [None, "", "garbage", f"t={NOW}", "v1=abc", f"t=soon,v1={'0' * 64}", "t=,v1="]
)
def test_a_malformed_header_fails(header):
    assert not verify_signature(SECRET, header, BODY, now=NOW)


@pytest.mark.django_db
def test_a_real_delivery_verifies_and_a_stale_one_does_not(settings, user_in):
    """What gating.webhooks puts on the wire, headers and body, verifies with the client."""
    settings.WEBHOOK_ALLOW_PRIVATE_ADDRESSES = True
    server = Receiver([204])
    try:
        hook, secret = webhooks.webhook_register(
            owner=user_in(Role.GATEWAY), url=server.url, actor=user_in(Role.ADMIN)
        )
        webhooks.delivery_attempt(delivery_to(hook).pk)
    finally:
        server.close()

    [request] = server.received
    header = request.headers[client_webhooks.SIGNATURE_HEADER]
    assert verify_signature(secret, header, request.body)
    assert not verify_signature(secret, header, request.body + b" ")
    assert not verify_signature(secret, header, request.body, now=time.time() + 301)
