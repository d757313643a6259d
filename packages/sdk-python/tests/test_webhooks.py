"""verify_webhook and sign_webhook: the Standard Webhooks specification's test vector,
replays, tampering, rotation."""
import pytest

from svc_sdk import WebhookVerificationError, sign_webhook, verify_webhook

SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
MSG_ID = "msg_p5jXN8AQM9LWM0D4loKWxJek"
TIMESTAMP = 1614265330
BODY = '{"test": 2432232314}'
SIGNATURE = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="


def headers(**overrides):
    given = {"webhook-id": MSG_ID, "webhook-timestamp": str(TIMESTAMP), "webhook-signature": SIGNATURE}
    given.update({key.replace("_", "-"): value for key, value in overrides.items()})
    return given


def test_the_specification_vector_is_reproduced():
    assert sign_webhook(SECRET, MSG_ID, TIMESTAMP, BODY) == SIGNATURE
    assert sign_webhook(SECRET[len("whsec_"):], MSG_ID, TIMESTAMP, BODY.encode()) == SIGNATURE


def test_a_delivery_whose_signature_holds_gives_its_json():
    assert verify_webhook(BODY, headers(), SECRET, now=TIMESTAMP + 10) == {"test": 2432232314}
    assert verify_webhook(BODY.encode(), {"Webhook-Id": MSG_ID, "Webhook-Timestamp": str(TIMESTAMP), "Webhook-Signature": "v1,bm9wZQ== " + SIGNATURE}, SECRET, now=TIMESTAMP) == {"test": 2432232314}


@pytest.mark.parametrize(
    "body, given, secret, message",
    [
        ('{"test": 2432232315}', headers(), SECRET, "no webhook-signature matches"),
        (BODY, headers(), "whsec_bm90IHRoZSBzZWNyZXQ=", "no webhook-signature matches"),
        (BODY, headers(webhook_id="msg_other"), SECRET, "no webhook-signature matches"),
        (BODY, headers(webhook_signature=SIGNATURE.replace("v1,", "v2,")), SECRET, "no webhook-signature matches"),
        (BODY, {"webhook-id": MSG_ID, "webhook-timestamp": str(TIMESTAMP)}, SECRET, "no webhook-signature header"),
        (BODY, headers(webhook_timestamp="2021-02-25"), SECRET, "not a number of seconds"),
    ],
)
def test_refused(body, given, secret, message):
    with pytest.raises(WebhookVerificationError, match=message):
        verify_webhook(body, given, secret, now=TIMESTAMP)


def test_replays_beyond_five_minutes_are_refused():
    assert verify_webhook(BODY, headers(), SECRET, now=TIMESTAMP + 300)
    with pytest.raises(WebhookVerificationError, match="refused as a replay"):
        verify_webhook(BODY, headers(), SECRET, now=TIMESTAMP + 301)
    with pytest.raises(WebhookVerificationError, match="301 s ahead"):
        verify_webhook(BODY, headers(), SECRET, now=TIMESTAMP - 301)
