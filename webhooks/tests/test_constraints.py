"""The database itself refuses webhook rows that break the models' rules."""

import factory
import pytest
from django.utils import timezone

from accounts.tests.factories import ApplicationFactory, TeamFactory
from scheduling.tests.factories import EventTypeFactory
from tests.support.database import refused_by
from webhooks.models import DeliveryAttempt, DeliveryStatus, Webhook, WebhookDelivery, WebhookTrigger
from webhooks.tests.factories import WebhookDeliveryFactory, WebhookFactory, WebhookScheduledTriggerFactory

pytestmark = pytest.mark.django_db


class DeliveryAttemptFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = DeliveryAttempt

    delivery = factory.SubFactory(WebhookDeliveryFactory)
    attempt_number = 1
    attempted_at = factory.LazyFunction(timezone.now)
    request_url = factory.SelfAttribute("delivery.webhook.subscriber_url")
    response_status = 200


def test_a_webhook_cannot_belong_to_an_event_type_and_a_team_at_once():
    with refused_by("webhook_event_type_or_team"):
        WebhookFactory(user=None, event_type=EventTypeFactory(), team=TeamFactory())

    assert not Webhook.objects.exists()


def test_a_user_cannot_subscribe_the_same_url_twice():
    webhook = WebhookFactory()

    with refused_by("webhook_user_url_unique"):
        WebhookFactory(user=webhook.user, subscriber_url=webhook.subscriber_url)


def test_a_team_cannot_subscribe_the_same_url_twice():
    webhook = WebhookFactory(user=None, team=TeamFactory())

    with refused_by("webhook_team_url_unique"):
        WebhookFactory(user=None, team=webhook.team, subscriber_url=webhook.subscriber_url)


def test_an_event_type_cannot_subscribe_the_same_url_twice():
    event_type = EventTypeFactory()
    webhook = WebhookFactory(user=event_type.owner, event_type=event_type)

    with refused_by("webhook_event_type_url_unique"):
        WebhookFactory(user=event_type.owner, event_type=event_type, subscriber_url=webhook.subscriber_url)


def test_an_oauth_client_cannot_subscribe_the_same_url_twice():
    webhook = WebhookFactory(user=None, platform_oauth_client=ApplicationFactory(), platform=True)

    with refused_by("webhook_client_url_unique"):
        WebhookFactory(
            user=None,
            platform_oauth_client=webhook.platform_oauth_client,
            platform=True,
            subscriber_url=webhook.subscriber_url,
        )


def test_the_same_url_may_be_subscribed_by_different_owners():
    first = WebhookFactory()
    WebhookFactory(subscriber_url=first.subscriber_url)

    assert Webhook.objects.filter(subscriber_url=first.subscriber_url).count() == 2


def test_a_meeting_trigger_is_scheduled_once_per_webhook_and_booking():
    trigger = WebhookScheduledTriggerFactory()

    with refused_by("scheduled_trigger_unique"):
        WebhookScheduledTriggerFactory(webhook=trigger.webhook, booking=trigger.booking)


def test_only_meeting_started_or_ended_can_be_scheduled():
    with refused_by("scheduled_trigger_meeting_only"):
        WebhookScheduledTriggerFactory(trigger_event=WebhookTrigger.BOOKING_CREATED)


def test_a_delivery_status_outside_the_contract_is_refused():
    delivery = WebhookDeliveryFactory(status=DeliveryStatus.PENDING)

    with refused_by("delivery_status_valid"):
        WebhookDelivery.objects.filter(pk=delivery.pk).update(status="lost")

    delivery.refresh_from_db()
    assert delivery.status == "pending"


def test_two_deliveries_cannot_share_a_message_id():
    delivery = WebhookDeliveryFactory()

    with refused_by("webhooks_webhookdelivery_message_id_key"):
        WebhookDeliveryFactory(message_id=delivery.message_id)


@pytest.mark.parametrize("field", ["attempts", "retry_index"])
def test_delivery_counters_cannot_go_negative(field):
    delivery = WebhookDeliveryFactory()

    with refused_by(f"webhooks_webhookdelivery_{field}_check"):
        WebhookDelivery.objects.filter(pk=delivery.pk).update(**{field: -1})


def test_an_attempt_number_is_logged_once_per_delivery():
    attempt = DeliveryAttemptFactory()

    with refused_by("attempt_number_unique"):
        DeliveryAttemptFactory(delivery=attempt.delivery, attempt_number=attempt.attempt_number)
