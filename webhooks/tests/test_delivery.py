"""End to end: real worker (with beat), real Redis, real PostgreSQL, real HTTP receiver."""

import base64
import hashlib
import hmac
import json

import pytest
from django.db import transaction
from standardwebhooks.webhooks import Webhook as StandardWebhook

from webhooks.events import emit_event
from webhooks.models import DeliveryStatus, WebhookTrigger
from webhooks.tests.conftest import Reply, wait_until
from webhooks.tests.factories import WebhookFactory

pytestmark = pytest.mark.django_db(transaction=True)

PAYLOAD = {"title": "Intro call", "bookingId": 1, "attendees": [{"name": 'Ann "Quote" Lee', "email": "a@example.org"}]}


def emit(webhook, trigger=WebhookTrigger.BOOKING_CREATED, payload=PAYLOAD):
    with transaction.atomic():
        return emit_event(trigger=trigger, payload=payload, user=webhook.user)


def delivery_status(delivery, *statuses):
    delivery.refresh_from_db()
    return delivery.status in statuses


def test_delivery_arrives_signed_verifiable_with_standardwebhooks_and_hmac(start_worker, receiver, settings):
    start_worker()
    webhook = WebhookFactory(subscriber_url=receiver.url())
    [delivery] = emit(webhook)

    [request] = receiver.wait_for(1)
    wait_until(lambda: delivery_status(delivery, DeliveryStatus.SUCCEEDED), what="the delivery to succeed")

    body = request.json()
    assert body["triggerEvent"] == "BOOKING_CREATED"
    assert body["payload"] == PAYLOAD
    assert body["createdAt"].endswith("Z")
    assert request.headers["Content-Type"] == "application/json"
    assert request.headers["User-Agent"] == f"{settings.SERVICE_NAME}-Webhooks/{settings.SERVICE_VERSION}"
    assert request.headers["webhook-id"] == delivery.message_id
    assert delivery.message_id.startswith("msg_")
    verified = StandardWebhook(webhook.secret).verify(request.body, request.headers)
    assert verified == body
    expected = hmac.new(webhook.secret.encode(), request.body, hashlib.sha256).hexdigest()
    assert request.headers["X-Cal-Signature-256"] == expected
    [attempt] = delivery.attempt_log.all()
    assert (attempt.attempt_number, attempt.response_status, attempt.error_class) == (1, 200, "")
    assert attempt.request_headers["webhook-id"] == delivery.message_id


def test_non_whsec_secret_verifies_as_whsec_base64_of_the_secret(start_worker, receiver):
    start_worker()
    webhook = WebhookFactory(subscriber_url=receiver.url(), secret="plain secret ü")
    emit(webhook)

    [request] = receiver.wait_for(1)
    as_whsec = "whsec_" + base64.b64encode("plain secret ü".encode()).decode()
    assert StandardWebhook(as_whsec).verify(request.body, request.headers) == json.loads(request.body)
    expected = hmac.new("plain secret ü".encode(), request.body, hashlib.sha256).hexdigest()
    assert request.headers["X-Cal-Signature-256"] == expected


def test_failed_attempt_is_retried_with_the_same_webhook_id(start_worker, receiver, fast_retries):
    start_worker()
    receiver.reply(Reply(status=500, body=b"boom"))
    webhook = WebhookFactory(subscriber_url=receiver.url())
    [delivery] = emit(webhook)

    first, second = receiver.wait_for(2)
    wait_until(lambda: delivery_status(delivery, DeliveryStatus.SUCCEEDED), what="the delivery to succeed")

    assert first.headers["webhook-id"] == second.headers["webhook-id"] == delivery.message_id
    assert first.body == second.body
    attempts = list(delivery.attempt_log.all())
    assert [(a.attempt_number, a.response_status, a.error_class) for a in attempts] == [(1, 500, "http"), (2, 200, "")]
    assert attempts[0].response_body == "boom"
    assert delivery.attempts == 2
