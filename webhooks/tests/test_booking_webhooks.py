"""`booking_webhooks`, compiled once per shape of booking, finds the webhooks `owner_filter` (the
rule every other event uses) finds, for every shape: with or without an event type, an event type
of a user or of a team, and an organizer who is not the event type's owner."""

import pytest

from accounts.tests.factories import TeamFactory, UserFactory
from scheduling.tests.factories import BookingFactory, EventTypeFactory
from webhooks.models import Webhook
from webhooks.selectors import booking_webhooks, owner_filter
from webhooks.tests.factories import WebhookFactory

pytestmark = pytest.mark.django_db


def _by_the_rule(booking) -> list[Webhook]:
    condition = owner_filter(user=booking.organizer, event_type=booking.event_type)
    return list(Webhook.objects.filter(condition, active=True).order_by("created_at", "id"))


def test_every_shape_of_booking_hears_what_the_rule_says():
    organizer, owner, team = UserFactory(), UserFactory(), TeamFactory()
    own_type = EventTypeFactory(owner=organizer)
    someone_elses = EventTypeFactory(owner=owner)
    team_type = EventTypeFactory(owner=None, team=team, schedule=None)
    for event_type in (own_type, someone_elses, team_type):
        WebhookFactory(user=None, event_type=event_type)
    organizers_own = WebhookFactory(user=organizer)
    WebhookFactory(user=organizer, active=False)
    WebhookFactory(user=owner)
    WebhookFactory(user=None, team=team)
    WebhookFactory()  # someone else's
    bookings = [
        BookingFactory(organizer=organizer, event_type=None),
        BookingFactory(organizer=organizer, event_type=own_type),
        BookingFactory(organizer=organizer, event_type=someone_elses),
        BookingFactory(organizer=organizer, event_type=team_type),
    ]

    found = [booking_webhooks(booking) for booking in bookings]

    assert found == [_by_the_rule(booking) for booking in bookings]
    assert found[0] == [organizers_own]
    assert [len(webhooks) for webhooks in found] == [1, 2, 3, 3]
