"""The retry schedule (docs/webhooks.md, "Retries, failures and the delivery log"): jitter,
Retry-After bounds, exhaustion; and signing vectors."""

import base64
import hashlib
import hmac

import pytest

from webhooks.delivery import retry_delay
from webhooks.sending import SendResult
from webhooks.signing import signature_headers, standard_signature


def result(status=500, retry_after=None):
    headers = {"Retry-After": retry_after} if retry_after else {}
    return SendResult(request_headers={}, response_status=status, response_headers=headers, error_class="http")


@pytest.fixture
def schedule(settings):
    settings.WEBHOOKS = {**settings.WEBHOOKS, "RETRY_SCHEDULE_SECONDS": [5, 300], "RETRY_JITTER": 0.2}


def test_delays_follow_the_schedule_within_the_jitter(schedule):
    for _ in range(50):
        assert 4 <= retry_delay(1, result()) <= 6
        assert 240 <= retry_delay(2, result()) <= 360


def test_schedule_exhausted_gives_no_delay(schedule):
    assert retry_delay(3, result()) is None


def test_retry_after_is_honoured_but_never_sooner_and_at_most_twice(settings):
    settings.WEBHOOKS = {**settings.WEBHOOKS, "RETRY_SCHEDULE_SECONDS": [100], "RETRY_JITTER": 0.0}
    assert retry_delay(1, result(429, "150")) == 150
    assert retry_delay(1, result(503, "10")) == 100  # never sooner than scheduled
    assert retry_delay(1, result(429, "100000")) == 200  # at most twice the scheduled delay
    assert retry_delay(1, result(500, "150")) == 100  # only 429 and 503 carry weight


def test_retry_after_as_http_date(settings):
    from datetime import timedelta
    from email.utils import format_datetime

    from django.utils import timezone

    settings.WEBHOOKS = {**settings.WEBHOOKS, "RETRY_SCHEDULE_SECONDS": [100], "RETRY_JITTER": 0.0}
    when = format_datetime(timezone.now() + timedelta(seconds=160), usegmt=True)
    assert 150 <= retry_delay(1, result(429, when)) <= 161


def test_signatures_match_the_standard_webhooks_definition():
    key = b"0123456789abcdef0123456789abcdef"
    secret = "whsec_" + base64.b64encode(key).decode()
    body = b'{"a":1}'
    expected = base64.b64encode(hmac.new(key, b"msg_1.1700000000." + body, hashlib.sha256).digest()).decode()
    assert standard_signature(secret=secret, message_id="msg_1", timestamp=1700000000, body=body) == "v1," + expected

    headers = signature_headers(secrets_in_use=[secret], message_id="msg_1", timestamp=1700000000, body=body)
    assert headers["X-Cal-Signature-256"] == hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def test_no_secret_means_no_signature_headers():
    headers = signature_headers(secrets_in_use=[], message_id="msg_1", timestamp=1, body=b"{}")
    assert headers == {"webhook-id": "msg_1", "webhook-timestamp": "1"}
