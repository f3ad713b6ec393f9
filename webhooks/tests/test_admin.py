"""The back office: webhooks with deliveries inline, delivery filters, the redeliver action."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from webhooks.models import DeliveryStatus, WebhookDelivery, WebhookTrigger
from webhooks.outbox import emit_event
from webhooks.tests.factories import WebhookFactory

pytestmark = pytest.mark.django_db


def emit(webhook, n=1):
    return [
        emit_event(trigger=WebhookTrigger.BOOKING_CREATED, payload={"n": i}, user=webhook.user)[0] for i in range(n)
    ]


def test_webhook_page_shows_its_deliveries_inline(operator_client):
    webhook = WebhookFactory()
    [delivery] = emit(webhook)
    response = operator_client.get(reverse("admin:webhooks_webhook_change", args=[webhook.pk]))
    assert response.status_code == 200
    assert delivery.message_id in response.content.decode()
    assert webhook.secret not in response.content.decode()


def test_operator_edit_goes_through_the_checks(operator_client):
    webhook = WebhookFactory()
    url = reverse("admin:webhooks_webhook_change", args=[webhook.pk])
    form = {
        "subscriber_url": webhook.subscriber_url,
        "event_triggers": '["BOOKING_NOPE"]',
        "payload_template": "",
        "active": "on",
        "scheduled_triggers-TOTAL_FORMS": "0",
        "scheduled_triggers-INITIAL_FORMS": "0",
        "deliveries-TOTAL_FORMS": "0",
        "deliveries-INITIAL_FORMS": "0",
    }
    response = operator_client.post(url, form)
    assert response.status_code == 200
    assert "Unknown trigger" in response.content.decode()
    webhook.refresh_from_db()
    assert webhook.event_triggers == ["BOOKING_CREATED"]

    response = operator_client.post(url, {**form, "event_triggers": '["BOOKING_PAID"]', "active": ""})
    assert response.status_code == 302
    webhook.refresh_from_db()
    assert webhook.event_triggers == ["BOOKING_PAID"] and webhook.active is False


def test_delivery_log_filters_by_status_and_trigger(operator_client):
    webhook = WebhookFactory()
    pending, failed = emit(webhook, 2)
    WebhookDelivery.objects.filter(pk=failed.pk).update(status=DeliveryStatus.FAILED)
    url = reverse("admin:webhooks_webhookdelivery_changelist")
    response = operator_client.get(url, {"status__exact": "failed", "trigger_event__exact": "BOOKING_CREATED"})
    assert response.status_code == 200
    assert list(response.context["cl"].result_list) == [failed]


def test_redeliver_action_requeues_the_delivery(operator_client, django_capture_on_commit_callbacks):
    webhook = WebhookFactory()
    [delivery] = emit(webhook)
    WebhookDelivery.objects.filter(pk=delivery.pk).update(status=DeliveryStatus.FAILED, next_attempt_at=None)
    with django_capture_on_commit_callbacks() as callbacks:
        response = operator_client.post(
            reverse("admin:webhooks_webhookdelivery_changelist"),
            {"action": "redeliver", "_selected_action": [delivery.pk]},
        )
    assert response.status_code == 302
    delivery.refresh_from_db()
    assert delivery.status == DeliveryStatus.PENDING
    assert len(callbacks) == 1


@pytest.mark.parametrize("name", ["webhooks_webhook_changelist", "webhooks_webhookdelivery_changelist"])
def test_changelist_query_count_does_not_grow_with_rows(operator_client, name):
    url = reverse(f"admin:{name}")
    emit(WebhookFactory())
    operator_client.get(url)
    with CaptureQueriesContext(connection) as one:
        assert operator_client.get(url).status_code == 200
    for _ in range(19):
        emit(WebhookFactory())
    with CaptureQueriesContext(connection) as twenty:
        assert operator_client.get(url).status_code == 200
    assert len(one) == len(twenty)


def test_delivery_page_shows_attempts(operator_client, receiver):
    from webhooks.delivery import attempt_delivery

    webhook = WebhookFactory(subscriber_url=receiver.url())
    [delivery] = emit(webhook)
    attempt_delivery(delivery_id=delivery.pk)
    response = operator_client.get(reverse("admin:webhooks_webhookdelivery_change", args=[delivery.pk]))
    assert response.status_code == 200
    assert "200" in response.content.decode()


def test_the_webhook_page_shows_why_it_was_disabled_and_its_circuit_and_the_operator_sets_a_rate_limit(
    operator_client,
):
    from django.utils import timezone

    from webhooks.delivery import webhook_auto_disable
    from webhooks.models import Webhook

    webhook = WebhookFactory()
    Webhook.objects.filter(pk=webhook.pk).update(consecutive_failures=4, circuit_open_until=timezone.now())
    webhook_auto_disable(webhook=webhook, reason="Every delivery failed since 2026-11-20T09:00:00Z; disabled.")
    url = reverse("admin:webhooks_webhook_change", args=[webhook.pk])

    page = operator_client.get(url).content.decode()
    assert "Every delivery failed since 2026-11-20T09:00:00Z; disabled." in page
    assert "Consecutive failures" in page and "Circuit open until" in page

    form = {
        "subscriber_url": webhook.subscriber_url,
        "event_triggers": '["BOOKING_CREATED"]',
        "payload_template": "",
        "rate_limit": "0",
        "scheduled_triggers-TOTAL_FORMS": "0",
        "scheduled_triggers-INITIAL_FORMS": "0",
        "deliveries-TOTAL_FORMS": "0",
        "deliveries-INITIAL_FORMS": "0",
    }
    assert operator_client.post(url, form).status_code == 200  # 0 is refused (the model's constraint)
    assert Webhook.objects.get(pk=webhook.pk).rate_limit is None
    assert operator_client.post(url, {**form, "rate_limit": "2.5"}).status_code == 302
    assert Webhook.objects.get(pk=webhook.pk).rate_limit == 2.5
