"""GET /slots, read from outside: UTC times are spelled with `Z` (docs/api.md, Conventions)."""

from datetime import timedelta

import pytest
from django.utils import timezone

from scheduling.models import Booking
from scheduling.tests.factories import EventTypeFactory
from tests.support.credentials import auth

pytestmark = pytest.mark.django_db


@pytest.fixture
def headers(organizer):
    return auth(organizer)


@pytest.fixture
def event_type(organizer):
    return EventTypeFactory(owner=organizer, length=60)


def slot_times(api_client, headers, event_type, zone=None) -> list[str]:
    day = timezone.now().date() + timedelta(days=14)
    query = f"eventTypeId={event_type.pk}&startTime={day}&endTime={day + timedelta(days=6)}"
    if zone:
        query += f"&timeZone={zone}"
    response = api_client.get(f"/v1/slots?{query}", **headers)
    assert response.status_code == 200, response.json()
    return [slot["time"] for slots in response.json()["slots"].values() for slot in slots]


@pytest.mark.parametrize("zone", [None, "UTC", "Etc/UTC"])
def test_slots_in_utc_end_with_z(api_client, headers, event_type, zone):
    times = slot_times(api_client, headers, event_type, zone)
    assert times
    assert all(time.endswith("Z") and "+00:00" not in time for time in times)


def test_slots_in_a_zone_at_utc_offset_zero_keep_the_numeric_offset(api_client, headers, event_type):
    times = slot_times(api_client, headers, event_type, "Atlantic/Reykjavik")
    assert times
    assert all(time.endswith("+00:00") for time in times)


def test_utc_slot_time_equals_the_start_time_of_the_booking_made_from_it(api_client, headers, event_type):
    slot = slot_times(api_client, headers, event_type)[0]
    body = {"eventTypeId": event_type.pk, "start": slot, "name": "A", "email": "a@example.org", "timeZone": "UTC"}
    response = api_client.post("/v1/bookings", body, format="json", **headers)
    assert response.status_code == 200, response.json()
    assert response.json()["startTime"] == slot
    assert Booking.objects.filter(event_type=event_type).count() == 1
    assert slot not in slot_times(api_client, headers, event_type)
