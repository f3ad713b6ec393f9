"""Delivery endpoints (docs/webhooks.md, Managing webhooks): test, deliveries, redeliver, rotate-secret."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from standardwebhooks.webhooks import Webhook as StandardWebhook

from tests.support.credentials import auth
from tests.support.live_services import Reply
from webhooks.models import DeliveryStatus, WebhookDelivery, WebhookTrigger
from webhooks.outbox import emit_event
from webhooks.tests.factories import WebhookFactory

pytestmark = pytest.mark.django_db


def test_test_send_delivers_a_signed_ping_and_answers_with_the_attempt(api_client, receiver):
    webhook = WebhookFactory(subscriber_url=receiver.url())
    response = api_client.post(f"/v1/webhooks/{webhook.pk}/test", **auth(webhook.user, "WRITE_WEBHOOK"))

    assert response.status_code == 200
    attempt = response.json()["attempt"]
    assert attempt["responseStatus"] == 200
    assert attempt["errorClass"] is None
    assert isinstance(attempt["durationMs"], int)
    assert response.json()["delivery"]["status"] == "succeeded"
    assert response.json()["delivery"]["triggerEvent"] == "PING"
    [request] = receiver.requests
    body = StandardWebhook(webhook.secret).verify(request.body, request.headers)
    assert body["triggerEvent"] == "PING"
    assert set(body["payload"]) >= {"title", "startTime", "organizer", "attendees", "bookingId"}


def test_test_send_to_a_failing_receiver_reports_the_failure_without_retrying(api_client, receiver):
    receiver.reply(Reply(status=503, body=b"down"))
    webhook = WebhookFactory(subscriber_url=receiver.url())
    response = api_client.post(f"/v1/webhooks/{webhook.pk}/test", **auth(webhook.user))

    assert response.status_code == 200
    attempt = response.json()["attempt"]
    assert (attempt["responseStatus"], attempt["errorClass"], attempt["responseBody"]) == (503, "http", "down")
    delivery = WebhookDelivery.objects.get()
    assert delivery.status == DeliveryStatus.FAILED and delivery.next_attempt_at is None
    webhook.refresh_from_db()
    assert webhook.active and webhook.failing_since is None


def test_test_send_with_a_body_is_400(api_client):
    webhook = WebhookFactory()
    response = api_client.post(f"/v1/webhooks/{webhook.pk}/test", {"x": 1}, format="json", **auth(webhook.user))
    assert response.status_code == 400
    assert "x" in response.json()["errors"]
    assert not WebhookDelivery.objects.exists()


def test_deliveries_list_filters_by_status_newest_first(api_client):
    webhook = WebhookFactory()
    first, second = (
        emit_event(trigger=WebhookTrigger.BOOKING_CREATED, payload={"n": n}, user=webhook.user)[0] for n in (1, 2)
    )
    WebhookDelivery.objects.filter(pk=first.pk).update(status=DeliveryStatus.FAILED)
    headers = auth(webhook.user, "READ_WEBHOOK")

    response = api_client.get(f"/v1/webhooks/{webhook.pk}/deliveries", **headers)
    assert response.status_code == 200
    assert [d["id"] for d in response.json()["deliveries"]] == [second.pk, first.pk]
    assert response.json()["pagination"]["total"] == 2
    listed = response.json()["deliveries"][0]
    assert listed["messageId"] == second.message_id and listed["payload"] == {"n": 2}
    assert listed["status"] == "pending" and listed["attemptCount"] == 0

    failed = api_client.get(f"/webhooks/{webhook.pk}/deliveries?status=failed", **headers)
    assert [d["id"] for d in failed.json()["deliveries"]] == [first.pk]

    bad = api_client.get(f"/v1/webhooks/{webhook.pk}/deliveries?status=lost", **headers)
    assert bad.status_code == 400
    assert "status" in bad.json()["errors"]


def test_delivery_detail_has_its_attempts(api_client, receiver):
    receiver.reply(Reply(status=500, headers={"X-Why": "because"}, body=b"x" * 9000))
    webhook = WebhookFactory(subscriber_url=receiver.url())
    api_client.post(f"/v1/webhooks/{webhook.pk}/test", **auth(webhook.user))
    delivery = WebhookDelivery.objects.get()

    response = api_client.get(f"/v1/webhooks/{webhook.pk}/deliveries/{delivery.pk}", **auth(webhook.user))

    assert response.status_code == 200
    [attempt] = response.json()["delivery"]["attempts"]
    assert attempt["attemptNumber"] == 1
    assert attempt["responseStatus"] == 500
    assert attempt["responseHeaders"]["X-Why"] == "because"
    assert len(attempt["responseBody"]) == 8192
    assert attempt["requestHeaders"]["webhook-id"] == delivery.message_id
    assert attempt["attemptedAt"].endswith("Z")


def test_delivery_of_another_webhook_is_404(api_client):
    mine, theirs = WebhookFactory(), WebhookFactory()
    [delivery] = emit_event(trigger=WebhookTrigger.BOOKING_CREATED, payload={}, user=theirs.user)
    headers = auth(mine.user)
    assert api_client.get(f"/v1/webhooks/{mine.pk}/deliveries/{delivery.pk}", **headers).status_code == 404
    response = api_client.post(f"/v1/webhooks/{mine.pk}/deliveries/{delivery.pk}/redeliver", **headers)
    assert response.status_code == 404
    delivery.refresh_from_db()
    assert delivery.status == DeliveryStatus.PENDING


def test_redeliver_restarts_a_failed_delivery_with_the_same_message_id(api_client, django_capture_on_commit_callbacks):
    webhook = WebhookFactory()
    [delivery] = emit_event(trigger=WebhookTrigger.BOOKING_CREATED, payload={}, user=webhook.user)
    WebhookDelivery.objects.filter(pk=delivery.pk).update(
        status=DeliveryStatus.FAILED, retry_index=9, next_attempt_at=None
    )

    with django_capture_on_commit_callbacks() as callbacks:
        response = api_client.post(
            f"/v1/webhooks/{webhook.pk}/deliveries/{delivery.pk}/redeliver", **auth(webhook.user)
        )

    assert response.status_code == 202
    body = response.json()["delivery"]
    assert body["status"] == "pending" and body["messageId"] == delivery.message_id
    delivery.refresh_from_db()
    assert delivery.retry_index == 0 and delivery.next_attempt_at is not None
    assert len(callbacks) == 1


def test_redeliver_on_an_inactive_webhook_is_409(api_client):
    webhook = WebhookFactory()
    [delivery] = emit_event(trigger=WebhookTrigger.BOOKING_CREATED, payload={}, user=webhook.user)
    webhook.active = False
    webhook.save()
    WebhookDelivery.objects.filter(pk=delivery.pk).update(status=DeliveryStatus.CANCELLED)
    response = api_client.post(f"/v1/webhooks/{webhook.pk}/deliveries/{delivery.pk}/redeliver", **auth(webhook.user))
    assert response.status_code == 409
    delivery.refresh_from_db()
    assert delivery.status == DeliveryStatus.CANCELLED


def test_rotated_secret_is_shown_once_and_both_secrets_sign_during_grace(api_client, receiver):
    webhook = WebhookFactory(subscriber_url=receiver.url())
    old_secret = webhook.secret
    response = api_client.post(f"/v1/webhooks/{webhook.pk}/rotate-secret", **auth(webhook.user, "WRITE_WEBHOOK"))

    assert response.status_code == 200
    new_secret = response.json()["webhook"]["secret"]
    assert new_secret.startswith("whsec_") and new_secret != old_secret
    assert response.json()["webhook"]["previousSecretExpiresAt"].endswith("Z")
    assert api_client.get(f"/v1/webhooks/{webhook.pk}", **auth(webhook.user)).json()["webhook"]["secret"] is None

    api_client.post(f"/v1/webhooks/{webhook.pk}/test", **auth(webhook.user))
    [request] = receiver.requests
    assert len(request.headers["webhook-signature"].split(" ")) == 2
    for secret in (old_secret, new_secret):
        assert StandardWebhook(secret).verify(request.body, request.headers)["triggerEvent"] == "PING"


def test_rotate_secret_needs_write_scope(api_client):
    webhook = WebhookFactory()
    response = api_client.post(f"/v1/webhooks/{webhook.pk}/rotate-secret", **auth(webhook.user, "READ_WEBHOOK"))
    assert response.status_code == 403
    webhook.refresh_from_db()
    assert webhook.previous_secret == ""


def test_deliveries_list_runs_the_same_number_of_queries_for_1_and_50(api_client):
    webhook = WebhookFactory()
    headers = auth(webhook.user)
    url = f"/v1/webhooks/{webhook.pk}/deliveries"
    api_client.get(url, **headers)

    def count():
        with CaptureQueriesContext(connection) as captured:
            response = api_client.get(url, **headers)
        return len(captured), len(response.json()["deliveries"])

    emit_event(trigger=WebhookTrigger.BOOKING_CREATED, payload={}, user=webhook.user)
    one = count()
    for _ in range(49):
        emit_event(trigger=WebhookTrigger.BOOKING_CREATED, payload={}, user=webhook.user)
    fifty = count()
    assert (one[1], fifty[1]) == (1, 50)
    assert one[0] == fifty[0] <= 5


@pytest.mark.parametrize("query", ["status=failed&status=pending", "status="])
def test_status_filter_given_twice_or_empty_is_a_400(api_client, query):
    # Before the filters were declared (core.query), the last copy was read and an empty one ignored.
    webhook = WebhookFactory()

    response = api_client.get(f"/v1/webhooks/{webhook.pk}/deliveries?{query}", **auth(webhook.user))

    assert response.status_code == 400
    assert list(response.json()["errors"]) == ["status"]
