import factory

from accounts.tests.factories import UserFactory
from scheduling.tests.factories import BookingFactory
from webhooks.models import Webhook, WebhookScheduledTrigger, WebhookTrigger


class WebhookFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Webhook

    user = factory.SubFactory(UserFactory)
    subscriber_url = factory.Sequence(lambda n: f"http://127.0.0.1:9/hooks/{n}")
    event_triggers = factory.LazyFunction(lambda: [WebhookTrigger.BOOKING_CREATED])
    secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
    active = True


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
