"""A reschedule through Cal.com v1's `POST /v1/bookings` with `rescheduleUid` keeps what the
body leaves out, as Cal.com's handleNewBooking does: the location, the form answers, the metadata
and the attendees' languages (README's walk-through moves a "Video call" booking this way)."""

from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo

import pytest
from django.utils import timezone

from accounts.tests.factories import ApiKeyFactory, UserFactory
from scheduling.models import Booking
from scheduling.tests.factories import EventTypeFactory
from tests.support.credentials import bearer

pytestmark = pytest.mark.django_db

BERLIN = ZoneInfo("Europe/Berlin")


def berlin(hour: int) -> str:
    today = timezone.now().astimezone(BERLIN).date()
    monday: date = today + timedelta(days=(7 - today.weekday()) % 7 + 14)
    return datetime.combine(monday, time(hour), tzinfo=BERLIN).isoformat()


@pytest.fixture
def setup(api_client):
    organizer = UserFactory(time_zone="Europe/Berlin")
    event_type = EventTypeFactory(owner=organizer, length=30)
    headers = bearer(ApiKeyFactory(user=organizer).raw_key)

    def post(body: dict):
        return api_client.post("/v1/bookings", {"eventTypeId": event_type.pk, **body}, format="json", **headers)

    first = post(
        {
            "start": berlin(10),
            "timeZone": "Europe/London",
            "language": "fr",
            "metadata": {"source": "walk-through"},
            "responses": {
                "name": "Ada Lovelace",
                "email": "ada@example.org",
                "location": "Video call",
                "notes": "Bring the notes",
                "guests": ["bob@example.org"],
            },
        }
    )
    assert first.status_code == 200, first.content
    return post, first.json()


def test_a_reschedule_that_names_only_the_attendee_keeps_location_answers_metadata_and_languages(setup, api_client):
    post, first = setup

    moved = post(
        {
            "start": berlin(14),
            "timeZone": "Europe/London",
            "rescheduleUid": first["uid"],
            "responses": {"name": "Ada Lovelace", "email": "ada@example.org", "guests": ["bob@example.org"]},
        }
    )

    assert moved.status_code == 200, moved.content
    new = moved.json()
    assert new["location"] == "Video call"
    assert new["metadata"] == {"source": "walk-through"}
    assert new["responses"]["location"] == "Video call"
    assert new["responses"]["notes"] == "Bring the notes"
    assert new["description"] == "Bring the notes"
    booking = Booking.objects.get(uid=new["uid"])
    assert {attendee.email: attendee.locale for attendee in booking.attendees.all()} == {
        "ada@example.org": "fr",
        "bob@example.org": "en",
    }
    assert booking.rescheduled_from.uid == first["uid"]


def test_what_the_reschedule_body_gives_replaces_what_the_old_booking_had(setup):
    post, first = setup

    moved = post(
        {
            "start": berlin(14),
            "timeZone": "Europe/London",
            "rescheduleUid": first["uid"],
            "language": "de",
            "metadata": {"source": "moved"},
            "responses": {"name": "Ada Lovelace", "email": "ada@example.org", "location": "Room 4"},
        }
    )

    assert moved.status_code == 200, moved.content
    new = moved.json()
    assert (new["location"], new["metadata"], new["responses"]["location"]) == ("Room 4", {"source": "moved"}, "Room 4")
    assert Booking.objects.get(uid=new["uid"]).attendees.get().locale == "de"
