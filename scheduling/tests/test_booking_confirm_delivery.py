"""Confirm and reject over POST /bookings/{id}/confirm, delivered for real: a Celery worker sends
BOOKING_CREATED and BOOKING_REJECTED, signed, to a local HTTP receiver, as Cal.com's
updateConfirmationStatus sends them (calcom/cal.com, apps/api/v1/test/lib/bookings/[id]/_confirm.test.ts
replays the calls; packages/features/bookings/lib/updateConfirmationStatus.ts emits the events)."""

import hashlib
import hmac

import pytest

from accounts.tests.factories import ApiKeyFactory, UserFactory
from scheduling.models import BookingStatus
from scheduling.tests.factories import BookingFactory, EventTypeFactory
from tests.support.credentials import bearer
from webhooks.tests.factories import WebhookFactory

pytestmark = pytest.mark.django_db(transaction=True)

SECRET = "a-subscriber-secret"


def test_confirm_and_reject_reach_the_subscriber_signed(api_client, receiver, start_worker):  # noqa: F811
    start_worker()
    organizer = UserFactory()
    event_type = EventTypeFactory(owner=organizer, requires_confirmation=True)
    WebhookFactory(
        user=organizer,
        subscriber_url=receiver.url("/cal"),
        secret=SECRET,
        event_triggers=["BOOKING_CREATED", "BOOKING_REJECTED"],
    )
    to_confirm, to_reject = (
        BookingFactory(organizer=organizer, event_type=event_type, status=BookingStatus.PENDING) for _ in range(2)
    )
    auth = bearer(ApiKeyFactory(user=organizer).raw_key)

    confirmed = api_client.post(f"/v1/bookings/{to_confirm.pk}/confirm", {"confirmed": True}, format="json", **auth)
    assert confirmed.status_code == 200, confirmed.json()
    first = receiver.wait_for(1)[0]
    rejected = api_client.post(f"/v1/bookings/{to_reject.pk}/confirm", {"confirmed": False}, format="json", **auth)
    assert rejected.status_code == 200, rejected.json()
    second = receiver.wait_for(2)[1]

    for request, trigger, booking, status in (
        (first, "BOOKING_CREATED", to_confirm, "ACCEPTED"),
        (second, "BOOKING_REJECTED", to_reject, "REJECTED"),
    ):
        expected = hmac.new(SECRET.encode(), request.body, hashlib.sha256).hexdigest()
        assert request.headers["X-Cal-Signature-256"] == expected
        envelope = request.json()
        assert envelope["triggerEvent"] == trigger
        assert (envelope["payload"]["uid"], envelope["payload"]["status"]) == (booking.uid, status)
