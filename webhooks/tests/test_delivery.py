"""End to end: real worker (with beat), real Redis, real PostgreSQL, real HTTP receiver."""

import base64
import hashlib
import hmac
import json

import pytest
from django.db import transaction
from standardwebhooks.webhooks import Webhook as StandardWebhook

from scheduling.tests.factories import BookingFactory
from tests.support.live_services import Reply, wait_until
from webhooks.models import DeliveryStatus, WebhookDelivery, WebhookTrigger
from webhooks.outbox import emit_event
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


def test_receiver_timeout_is_logged_as_timeout_and_retried(start_worker, receiver, fast_retries, settings):
    settings.WEBHOOKS = {**settings.WEBHOOKS, "TIMEOUT_SECONDS": 0.5}
    start_worker()
    receiver.reply(Reply(delay=1.5))
    webhook = WebhookFactory(subscriber_url=receiver.url())
    [delivery] = emit(webhook)

    wait_until(lambda: delivery_status(delivery, DeliveryStatus.SUCCEEDED), what="the delivery to succeed")
    first, second = delivery.attempt_log.all()
    assert (first.error_class, first.response_status) == ("timeout", None)
    assert (second.error_class, second.response_status) == ("", 200)


def test_redirect_is_not_followed_and_counts_as_failure(start_worker, receiver, settings):
    settings.WEBHOOKS = {**settings.WEBHOOKS, "RETRY_SCHEDULE_SECONDS": []}
    start_worker()
    receiver.reply(Reply(status=302, headers={"Location": receiver.url("/elsewhere")}))
    webhook = WebhookFactory(subscriber_url=receiver.url())
    [delivery] = emit(webhook)

    wait_until(lambda: delivery_status(delivery, DeliveryStatus.FAILED), what="the delivery to fail")
    [attempt] = delivery.attempt_log.all()
    assert (attempt.response_status, attempt.error_class) == (302, "http")
    assert attempt.response_headers["Location"].endswith("/elsewhere")
    assert [request.path for request in receiver.requests] == ["/hook"]


def test_410_gone_deactivates_the_webhook_and_cancels_its_pending_deliveries(start_worker, receiver):
    start_worker()
    receiver.reply(Reply(status=410))
    webhook = WebhookFactory(subscriber_url=receiver.url())
    [delivery] = emit(webhook)
    wait_until(lambda: delivery_status(delivery, DeliveryStatus.FAILED), what="the delivery to fail")

    webhook.refresh_from_db()
    assert webhook.active is False
    assert "410" in webhook.disabled_reason
    assert emit(webhook) == []
    assert len(receiver.requests) == 1


def test_429_retry_after_is_honoured_up_to_twice_the_scheduled_delay(start_worker, receiver, fast_retries, settings):
    settings.WEBHOOKS = {**settings.WEBHOOKS, "RETRY_SCHEDULE_SECONDS": [1.0]}
    start_worker()
    receiver.reply(Reply(status=429, headers={"Retry-After": "2"}))
    webhook = WebhookFactory(subscriber_url=receiver.url())
    [delivery] = emit(webhook)

    first, second = receiver.wait_for(2)
    wait_until(lambda: delivery_status(delivery, DeliveryStatus.SUCCEEDED), what="the delivery to succeed")
    assert second.received_at - first.received_at >= 1.9
    assert first.headers["webhook-id"] == second.headers["webhook-id"]


def test_exhausted_schedule_leaves_the_delivery_failed(start_worker, receiver, fast_retries):
    start_worker()
    receiver.default = Reply(status=500)
    webhook = WebhookFactory(subscriber_url=receiver.url())
    [delivery] = emit(webhook)

    wait_until(lambda: delivery_status(delivery, DeliveryStatus.FAILED), what="the delivery to fail")
    assert delivery.attempts == 4  # the first try and three retries
    assert [attempt.attempt_number for attempt in delivery.attempt_log.all()] == [1, 2, 3, 4]
    assert delivery.next_attempt_at is None
    webhook.refresh_from_db()
    assert webhook.active  # failed deliveries alone do not disable it before the window


def test_webhook_whose_attempts_all_fail_for_the_window_is_disabled(start_worker, receiver, fast_retries, settings):
    settings.WEBHOOKS = {**settings.WEBHOOKS, "RETRY_SCHEDULE_SECONDS": [0.5] * 6, "AUTO_DISABLE_AFTER_SECONDS": 1}
    start_worker()
    receiver.default = Reply(status=500)
    webhook = WebhookFactory(subscriber_url=receiver.url())
    [delivery] = emit(webhook)

    wait_until(lambda: not type(webhook).objects.get(pk=webhook.pk).active, what="the webhook to be disabled")
    wait_until(
        lambda: delivery_status(delivery, DeliveryStatus.PENDING) and delivery.next_attempt_at is None,
        what="the delivery to wait for the webhook to be re-enabled",
    )
    webhook.refresh_from_db()
    assert "disabled automatically" in webhook.disabled_reason
    # The failure that started the run, and at least one that found it had lasted the window.
    assert 2 <= delivery.attempts < 7


def test_inactive_webhook_gets_nothing_and_its_pending_deliveries_are_cancelled(
    start_worker, receiver, settings, api_client
):
    from accounts.tests.factories import ApiKeyFactory

    settings.WEBHOOKS = {**settings.WEBHOOKS, "RETRY_SCHEDULE_SECONDS": [600]}
    start_worker()
    receiver.reply(Reply(status=500))
    webhook = WebhookFactory(subscriber_url=receiver.url())
    [delivery] = emit(webhook)
    receiver.wait_for(1)
    wait_until(lambda: delivery_status(delivery, DeliveryStatus.PENDING) and delivery.attempts == 1, what="a retry")

    response = api_client.patch(
        f"/v1/webhooks/{webhook.pk}",
        {"active": False},
        format="json",
        HTTP_AUTHORIZATION=f"Bearer {ApiKeyFactory(user=webhook.user).raw_key}",
    )
    assert response.status_code == 200
    assert response.json()["webhook"]["disabledReason"] == "Deactivated by its owner."
    delivery.refresh_from_db()
    assert delivery.status == DeliveryStatus.CANCELLED
    assert emit(webhook) == []

    # A delivery whose webhook went inactive after it was enqueued is cancelled by the worker.
    other = WebhookFactory(subscriber_url=receiver.url("/other"))
    with transaction.atomic():
        [late] = emit(other)
        type(other).objects.filter(pk=other.pk).update(active=False)
    wait_until(lambda: delivery_status(late, DeliveryStatus.CANCELLED), what="the late delivery to be cancelled")
    assert [request.path for request in receiver.requests] == ["/hook"]


def test_rolled_back_transaction_sends_nothing(start_worker, receiver):
    start_worker()
    webhook = WebhookFactory(subscriber_url=receiver.url())
    with pytest.raises(RuntimeError), transaction.atomic():
        emit_event(trigger=WebhookTrigger.BOOKING_CREATED, payload={"n": "rolled back"}, user=webhook.user)
        raise RuntimeError("the change failed")
    emit(webhook, payload={"n": "committed"})

    receiver.wait_for(1)
    wait_until(lambda: WebhookDelivery.objects.filter(status=DeliveryStatus.SUCCEEDED).exists(), what="delivery")
    assert [request.json()["payload"] for request in receiver.requests] == [{"n": "committed"}]
    assert WebhookDelivery.objects.count() == 1


def test_killed_worker_loses_no_delivery(start_worker, receiver, fast_retries):
    receiver.default = Reply(delay=0.3)
    webhooks = [WebhookFactory(subscriber_url=receiver.url(f"/hook/{n}")) for n in range(6)]
    deliveries = [emit(webhook)[0] for webhook in webhooks]  # enqueued while no worker runs

    worker = start_worker()
    receiver.wait_for(1)
    worker.kill()  # SIGKILL in the middle of the batch: in-flight and prefetched messages are lost
    start_worker()

    wait_until(
        lambda: all(delivery_status(delivery, DeliveryStatus.SUCCEEDED) for delivery in deliveries),
        40,
        "every delivery to succeed after the restart",
    )
    received = {request.headers["webhook-id"] for request in receiver.requests}
    assert received == {delivery.message_id for delivery in deliveries}


def test_meeting_started_fires_through_the_worker_when_its_time_comes(start_worker, receiver, fast_retries):
    from datetime import timedelta

    from webhooks.delivery import sweep
    from webhooks.scheduled import schedule_meeting_triggers

    start_worker()
    webhook = WebhookFactory(subscriber_url=receiver.url(), event_triggers=["MEETING_STARTED"])
    booking = BookingFactory(organizer=webhook.user)
    schedule_meeting_triggers(booking=booking)

    sweep(now=booking.start_time - timedelta(minutes=1))  # the clock we control: not yet
    sweep(now=booking.start_time)

    [request] = receiver.wait_for(1)
    body = StandardWebhook(webhook.secret).verify(request.body, request.headers)
    assert body["triggerEvent"] == "MEETING_STARTED"
    assert body["payload"]["id"] == booking.pk  # the booking record, as Cal.com sends MEETING_*
