"""Event streaming deliveries signed as the Standard Webhooks convention says.

Each delivery carries ``webhook-id`` (the same on every attempt), ``webhook-timestamp``
(seconds) and ``webhook-signature`` (``v1,`` and the base64 HMAC-SHA256 of
``id.timestamp.body`` keyed by the secret's bytes, the base64 after ``whsec_``; several,
space-separated, while a secret rotates)::

    from svc_sdk import verify_webhook
    events = verify_webhook(request.body, request.headers, secret)["events"]
"""
import base64
import binascii
import hashlib
import hmac
import json
import time

__all__ = ["WEBHOOK_TOLERANCE_SECONDS", "WebhookVerificationError", "sign_webhook", "verify_webhook"]

WEBHOOK_TOLERANCE_SECONDS = 300
_PREFIX = "whsec_"


class WebhookVerificationError(Exception):
    """A delivery whose headers, age or signature do not hold."""


def _key(secret):
    encoded = secret[len(_PREFIX):] if secret.startswith(_PREFIX) else secret
    try:
        key = base64.b64decode(encoded, validate=True)
    except (binascii.Error, ValueError):
        key = b""
    if not key:
        raise WebhookVerificationError("the webhook secret is empty or not base64")
    return key


def _bytes(body):
    return body.encode("utf-8") if isinstance(body, str) else bytes(body)


def sign_webhook(secret, msg_id, timestamp, body):
    """The ``webhook-signature`` value of a delivery (``v1,`` and the base64 HMAC-SHA256)."""
    digest = hmac.new(_key(secret), ("%s.%d." % (msg_id, timestamp)).encode("utf-8") + _bytes(body), hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode("ascii")


def _header(headers, name):
    for key, value in headers.items():
        if key.lower() == name:
            if value:
                return value
    raise WebhookVerificationError("the delivery has no %s header" % name)


def verify_webhook(body, headers, secret, tolerance_seconds=WEBHOOK_TOLERANCE_SECONDS, now=None):
    """The JSON of a delivery whose signature holds.

    ``body`` exactly as received (bytes or text, not re-serialized), ``headers`` a mapping of
    the request's headers, ``secret`` the destination's. Raises ``WebhookVerificationError``
    when a header is missing, the timestamp is more than ``tolerance_seconds`` from ``now``
    (seconds; default the clock) in either direction, or no signature matches.
    """
    msg_id, timestamp, signatures = (_header(headers, name) for name in ("webhook-id", "webhook-timestamp", "webhook-signature"))
    if not timestamp.isdigit():
        raise WebhookVerificationError("the webhook-timestamp header is not a number of seconds: %s" % timestamp)
    age = (time.time() if now is None else now) - int(timestamp)
    if age > tolerance_seconds:
        raise WebhookVerificationError("the delivery was signed %d s ago, more than %d s: refused as a replay" % (round(age), tolerance_seconds))
    if age < -tolerance_seconds:
        raise WebhookVerificationError("the delivery's timestamp is %d s ahead, more than %d s" % (round(-age), tolerance_seconds))
    expected = sign_webhook(secret, msg_id, int(timestamp), body)[len("v1,"):]
    if not any(part.startswith("v1,") and hmac.compare_digest(part[len("v1,"):], expected) for part in signatures.split(" ")):
        raise WebhookVerificationError("no webhook-signature matches the body with this secret")
    return json.loads(_bytes(body).decode("utf-8"))
