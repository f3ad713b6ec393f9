import factory
from django.utils import timezone

from accounts.tests.factories import UserFactory
from scheduling.tests.factories import BookingFactory
from webhooks.models import DeliveryStatus, Webhook, WebhookDelivery, WebhookScheduledTrigger, WebhookTrigger
from webhooks.signing import new_message_id


class WebhookFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Webhook

    user = factory.SubFactory(UserFactory)
    subscriber_url = factory.Sequence(lambda n: f"http://127.0.0.1:9/hooks/{n}")
    event_triggers = factory.LazyFunction(lambda: [WebhookTrigger.BOOKING_CREATED])
    secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
    active = True


class WebhookDeliveryFactory(factory.django.DjangoModelFactory):
    """A finished delivery of an event that just happened."""

    class Meta:
        model = WebhookDelivery

    webhook = factory.SubFactory(WebhookFactory)
    trigger_event = WebhookTrigger.BOOKING_CREATED
    payload = factory.LazyFunction(dict)
    event_created_at = factory.LazyFunction(timezone.now)
    message_id = factory.LazyFunction(new_message_id)
    status = DeliveryStatus.SUCCEEDED


class WebhookScheduledTriggerFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = WebhookScheduledTrigger

    webhook = factory.SubFactory(WebhookFactory, event_triggers=[WebhookTrigger.MEETING_STARTED])
    booking = factory.SubFactory(BookingFactory, organizer=factory.SelfAttribute("..webhook.user"))
    trigger_event = WebhookTrigger.MEETING_STARTED
    start_after = factory.LazyAttribute(lambda trigger: trigger.booking.start_time)


# Every trigger this service emits (docs/webhook-payloads.md has an example of each).
EVERY_TRIGGER = [
    WebhookTrigger.BOOKING_CREATED,
    WebhookTrigger.BOOKING_REQUESTED,
    WebhookTrigger.BOOKING_REJECTED,
    WebhookTrigger.BOOKING_RESCHEDULED,
    WebhookTrigger.BOOKING_CANCELLED,
    WebhookTrigger.BOOKING_PAYMENT_INITIATED,
    WebhookTrigger.BOOKING_PAID,
    WebhookTrigger.BOOKING_NO_SHOW_UPDATED,
    WebhookTrigger.MEETING_STARTED,
    WebhookTrigger.MEETING_ENDED,
]
