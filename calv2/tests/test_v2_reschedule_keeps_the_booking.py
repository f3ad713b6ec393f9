"""Cal.com v2's `POST /v2/bookings/{uid}/reschedule` keeps the booking's location, form answers,
metadata and attendees' languages (Cal.com builds the new booking from the old one's)."""

import pytest

from calv2.tests.helpers import event_type_of, free_slot
from scheduling.models import Booking

pytestmark = pytest.mark.django_db


def test_a_v2_reschedule_keeps_location_answers_metadata_and_languages(v2, owner):
    event_type = event_type_of(owner)
    body = {
        "start": free_slot(v2, event_type),
        "eventTypeId": event_type.pk,
        "attendee": {"name": "Ada Lovelace", "email": "ada@example.org", "timeZone": "Europe/London", "language": "fr"},
        "guests": ["bob@example.org"],
        "location": "Video call",
        "metadata": {"source": "walk-through"},
        "bookingFieldsResponses": {"notes": "Bring the notes"},
    }
    booking = v2.call("POST", "/v2/bookings", body, version="2024-08-13").json()["data"]

    moved = v2.call(
        "POST",
        f"/v2/bookings/{booking['uid']}/reschedule",
        {"start": free_slot(v2, event_type, days=14)},
        version="2024-08-13",
    )

    assert moved.status_code == 201, moved.content
    new = moved.json()["data"]
    assert new["location"] == "Video call"
    assert new["metadata"] == {"source": "walk-through"}
    assert new["bookingFieldsResponses"]["notes"] == "Bring the notes"
    assert {attendee["email"]: attendee["language"] for attendee in new["attendees"]} == {"ada@example.org": "fr"}
    stored = Booking.objects.get(uid=new["uid"])
    assert {attendee.email: attendee.locale for attendee in stored.attendees.all()} == {
        "ada@example.org": "fr",
        "bob@example.org": "en",
    }
