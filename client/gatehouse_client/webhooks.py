"""Verifying Gatehouse's webhook signatures.

Gatehouse signs each delivery with the webhook's secret and sends
``X-Gatehouse-Signature: t=<unix time>,v1=<hex>``, where ``v1`` is HMAC-SHA256 of
``"<t>."`` followed by the body exactly as sent. Verify over the raw body bytes, before any
JSON parsing, and refuse old timestamps so that a captured request cannot be replayed.
"""

from __future__ import annotations

import hashlib
import hmac
import time

SIGNATURE_HEADER = "X-Gatehouse-Signature"
EVENT_HEADER = "X-Gatehouse-Event"
# The same on every retry of one event to one webhook: drop the duplicates by it.
DELIVERY_HEADER = "X-Gatehouse-Delivery"

TOLERANCE_SECONDS = 300


def signature(secret: str, timestamp: int, body: bytes) -> str:
    """The ``v1`` signature of ``body`` sent at ``timestamp``, in lowercase hex."""
    message = f"{timestamp}.".encode() + body
    return hmac.new(secret.encode(), message, hashlib.sha256).hexdigest()


def verify_signature(
    secret: str,
    signature_header: str | None,
    body: bytes,
    *,
    tolerance_seconds: float = TOLERANCE_SECONDS,
    now: float | None = None,
) -> bool:
    """True when the X-Gatehouse-Signature header is valid for this body and its timestamp
    is within ``tolerance_seconds`` of ``now`` (the clock, by default), either way."""
    if not signature_header:
        return False
    timestamp: int | None = None
    received: list[str] = []
    for part in signature_header.split(","):
        key, _, value = part.strip().partition("=")
        if key == "t" and value.isdigit():
            timestamp = int(value)
        elif key == "v1" and value:
            received.append(value)
    if timestamp is None or not received:
        return False
    if abs((time.time() if now is None else now) - timestamp) > tolerance_seconds:
        return False
    expected = signature(secret, timestamp, body)
    # Every candidate is compared, so the time taken does not tell which one failed.
    return any([hmac.compare_digest(expected, candidate) for candidate in received])
