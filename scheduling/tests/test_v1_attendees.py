"""Cal.com v1's `/attendees` and `/teams/{teamId}/event-types` (apps/api/v1/pages/api/attendees,
teams/[teamId]/event-types): envelopes, visibility, and refusals that change nothing."""

import pytest

from accounts.tests.factories import ApiKeyFactory, MembershipFactory, TeamFactory
from scheduling.models import Attendee
from scheduling.tests.factories import BookingFactory, EventTypeFactory
from tests.support.credentials import bearer

pytestmark = pytest.mark.django_db


def test_attendees_of_the_callers_bookings_list_get_add_edit_and_remove(api_client, organizer, key):
    booking = BookingFactory(organizer=organizer, attendees=[{"name": "Ada", "email": "ada@example.org"}])
    BookingFactory()  # someone else's
    listed = api_client.get("/v1/attendees", **bearer(key))
    assert listed.status_code == 200
    [attendee] = listed.json()["attendees"]
    assert attendee["bookingId"] == booking.pk and attendee["email"] == "ada@example.org"
    assert api_client.get(f"/attendees/{attendee['id']}", **bearer(key)).json()["attendee"] == attendee

    body = {"bookingId": booking.pk, "email": "alan@example.org", "name": "Alan", "timeZone": "Europe/London"}
    created = api_client.post("/v1/attendees", body, format="json", **bearer(key))
    assert created.status_code == 200, created.content
    assert created.json()["message"] == "Attendee created successfully"
    new_id = created.json()["attendee"]["id"]

    changed = api_client.patch(f"/v1/attendees/{new_id}", {"name": "Alan Turing"}, format="json", **bearer(key))
    assert changed.status_code == 200 and changed.json()["attendee"]["name"] == "Alan Turing"
    deleted = api_client.delete(f"/v1/attendees/{new_id}", **bearer(key))
    assert deleted.json() == {"message": f"Attendee with id: {new_id} deleted successfully"}
    assert list(booking.attendees.values_list("email", flat=True)) == ["ada@example.org"]


def test_attendee_refusals_change_nothing(api_client, organizer, key):
    booking = BookingFactory(organizer=organizer, attendees=[{"name": "Ada", "email": "ada@example.org"}])
    theirs = BookingFactory()
    only = booking.attendees.get()
    before = sorted(Attendee.objects.values_list("booking_id", "email", "name"))
    base = {"email": "x@example.org", "name": "X", "timeZone": "UTC"}
    for body, status in (
        ({**base, "bookingId": theirs.pk}, 400),
        ({**base, "bookingId": booking.pk, "timeZone": "Mars/Base"}, 400),
        ({**base, "bookingId": booking.pk, "email": "ADA@example.org"}, 409),
        ({**base, "bookingId": booking.pk, "extra": 1}, 400),
    ):
        assert api_client.post("/v1/attendees", body, format="json", **bearer(key)).status_code == status, body
    assert api_client.delete(f"/v1/attendees/{only.pk}", **bearer(key)).status_code == 409
    theirs_attendee = theirs.attendees.get()
    assert api_client.get(f"/v1/attendees/{theirs_attendee.pk}", **bearer(key)).status_code == 404
    assert (
        api_client.patch(f"/v1/attendees/{theirs_attendee.pk}", {"name": "Z"}, format="json", **bearer(key)).status_code
        == 404
    )
    assert sorted(Attendee.objects.values_list("booking_id", "email", "name")) == before


def test_team_event_types_for_its_members(api_client, organizer, key):
    team = TeamFactory()
    MembershipFactory(user=organizer, team=team, accepted=True)
    mine = EventTypeFactory(owner=None, team=team, schedule=None, title="Team call")
    EventTypeFactory(owner=None, team=TeamFactory(), schedule=None)
    EventTypeFactory(owner=organizer)
    listed = api_client.get(f"/v1/teams/{team.pk}/event-types", **bearer(key))
    assert listed.status_code == 200
    assert [event_type["id"] for event_type in listed.json()["event_types"]] == [mine.pk]
    stranger = ApiKeyFactory().raw_key
    assert api_client.get(f"/teams/{team.pk}/event-types", **bearer(stranger)).json()["event_types"] == []
    assert api_client.get("/v1/teams/abc/event-types", **bearer(key)).status_code == 400
