"""Booking through a private link (Cal.com v1's `hashedLink` on POST /v1/bookings): the link opens
its event type, hidden too, to whoever has it; a usage-based link counts each booking and is used
up at its maximum, a time-based one works until it expires; every refusal changes nothing."""

from datetime import timedelta

import pytest
from django.utils import timezone

from accounts.tests.factories import ApiKeyFactory, UserFactory
from private_links.models import PrivateLink
from scheduling.models import Booking
from scheduling.tests.factories import EventTypeFactory
from scheduling.tests.test_booking_legacy_body_cancel_and_replacing_reschedule import berlin, v1_body, written
from tests.support.credentials import bearer

pytestmark = pytest.mark.django_db


@pytest.fixture
def hidden(organizer):
    return EventTypeFactory(owner=organizer, length=30, hidden=True)


@pytest.fixture
def booker_key():
    return ApiKeyFactory(user=UserFactory()).raw_key


def book(api_client, key, event_type, hour, **extra):
    body = v1_body(event_type, berlin(hour), hasHashedBookingLink=True, **extra)
    return api_client.post("/v1/bookings", body, format="json", **bearer(key))


def test_a_usage_based_link_books_its_hidden_event_type_until_used_up(api_client, booker_key, hidden):
    link = PrivateLink.objects.create(event_type=hidden, max_usage_count=2)
    without = api_client.post("/v1/bookings", v1_body(hidden, berlin(10)), format="json", **bearer(booker_key))
    assert without.status_code == 400 and "eventTypeId" in without.json()["errors"]

    for hour in (10, 11):
        booked = book(api_client, booker_key, hidden, hour, hashedLink=link.link_id)
        assert booked.status_code == 200, booked.json()
        assert booked.json()["eventTypeId"] == hidden.pk
    link.refresh_from_db()
    assert link.usage_count == 2

    before = written()
    used_up = book(api_client, booker_key, hidden, 12, hashedLink=link.link_id)
    assert used_up.status_code == 400
    assert used_up.json()["errors"]["hashedLink"] == ["This private link has been used up."]
    assert written() == before
    link.refresh_from_db()
    assert link.usage_count == 2


def test_a_time_based_link_works_until_it_expires(api_client, booker_key, hidden):
    link = PrivateLink.objects.create(event_type=hidden, expires_at=timezone.now() + timedelta(days=30))
    assert book(api_client, booker_key, hidden, 10, hashedLink=link.link_id).status_code == 200
    assert book(api_client, booker_key, hidden, 11, hashedLink=link.link_id).status_code == 200

    PrivateLink.objects.filter(pk=link.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    before = written()
    expired = book(api_client, booker_key, hidden, 12, hashedLink=link.link_id)
    assert expired.status_code == 400
    assert expired.json()["errors"]["hashedLink"] == ["This private link has expired."]
    assert written() == before


def test_a_booking_refused_counts_no_use(api_client, booker_key, hidden):
    link = PrivateLink.objects.create(event_type=hidden, max_usage_count=1)
    assert book(api_client, booker_key, hidden, 10, hashedLink=link.link_id).status_code == 200
    second = PrivateLink.objects.create(event_type=hidden, max_usage_count=1)

    taken = book(api_client, booker_key, hidden, 10, hashedLink=second.link_id)  # the slot is taken: 409

    assert taken.status_code == 409
    second.refresh_from_db()
    assert second.usage_count == 0 and Booking.objects.count() == 1


@pytest.mark.parametrize("case", ["unknown", "other event type"])
def test_a_link_that_does_not_open_the_event_type_is_a_400_and_writes_nothing(
    api_client, booker_key, hidden, organizer, case
):
    other = EventTypeFactory(owner=organizer, length=30)
    link = PrivateLink.objects.create(event_type=other, max_usage_count=1)
    link_id = "0" * 32 if case == "unknown" else link.link_id
    before = written()

    refused = book(api_client, booker_key, hidden, 10, hashedLink=link_id)

    assert refused.status_code == 400 and "hashedLink" in refused.json()["errors"]
    assert written() == before
    link.refresh_from_db()
    assert link.usage_count == 0


def test_v2_2024_04_15_body_books_through_a_link_as_v1_does(api_client, booker_key, hidden):
    link = PrivateLink.objects.create(event_type=hidden, max_usage_count=1)
    body = {
        "eventTypeId": hidden.pk,
        "start": berlin(10).isoformat(),
        "timeZone": "Europe/Berlin",
        "responses": {"name": "Grace Hopper", "email": "grace@example.org"},
        "hashedLink": link.link_id,
    }
    headers = {**bearer(booker_key), "HTTP_CAL_API_VERSION": "2024-04-15"}

    booked = api_client.post("/v2/bookings", body, format="json", **headers)

    assert booked.status_code == 201, booked.json()
    link.refresh_from_db()
    assert link.usage_count == 1
    again = api_client.post("/v2/bookings", {**body, "start": berlin(11).isoformat()}, format="json", **headers)
    assert again.status_code == 400 and Booking.objects.count() == 1
