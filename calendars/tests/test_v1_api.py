"""Cal.com API v1's connected-calendar resources: shapes, envelopes, visibility, scopes, and no
secret in any answer."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from accounts.tests.factories import AccessTokenFactory, ApiKeyFactory, UserFactory
from calendars.models import BookingReference, DestinationCalendar, ExternalCalendar
from calendars.tests.factories import BookingReferenceFactory, CalendarConnectionFactory, ExternalCalendarFactory
from scheduling.tests.factories import BookingFactory
from tests.support.credentials import bearer

pytestmark = pytest.mark.django_db


@pytest.fixture
def user():
    return UserFactory()


@pytest.fixture
def key(user):
    return ApiKeyFactory(user=user).raw_key


def test_connected_calendars_are_a_bare_array_without_secrets(api_client, user, key):
    calendar = ExternalCalendarFactory(connection=CalendarConnectionFactory(user=user), name="Work")
    ExternalCalendarFactory()  # someone else's
    response = api_client.get("/v1/connected-calendars", **bearer(key))
    assert response.status_code == 200, response.json()
    assert response.json() == [
        {
            "name": "CalDav Server",
            "appId": "caldav-calendar",
            "userId": user.pk,
            "integration": "caldav_calendar",
            "credentialId": calendar.connection_id,
            "healthy": False,
            "calendars": [
                {
                    "externalId": calendar.external_id,
                    "name": "Work",
                    "primary": True,
                    "readOnly": False,
                    "isSelected": True,
                }
            ],
        }
    ]
    assert "s3cret" not in response.content.decode()


def test_selected_calendars_list_select_and_unselect(api_client, user, key):
    calendar = ExternalCalendarFactory(connection=CalendarConnectionFactory(user=user), is_selected=False)
    assert api_client.get("/v1/selected-calendars", **bearer(key)).json()["selected_calendars"] == []
    body = {"integration": "caldav_calendar", "externalId": calendar.external_id}
    response = api_client.post("/v1/selected-calendars", body, format="json", **bearer(key))
    assert response.status_code == 200, response.json()
    assert response.json()["selected_calendar"] == {
        "id": calendar.pk,
        "userId": user.pk,
        "integration": "caldav_calendar",
        "externalId": calendar.external_id,
        "credentialId": calendar.connection_id,
    }
    response = api_client.delete(f"/v1/selected-calendars/{calendar.pk}", **bearer(key))
    assert response.status_code == 200, response.json()
    calendar.refresh_from_db()
    assert calendar.is_selected is False


def test_selecting_someone_elses_calendar_is_a_404_and_changes_nothing(api_client, key):
    calendar = ExternalCalendarFactory(is_selected=False)
    body = {"integration": "caldav_calendar", "externalId": calendar.external_id}
    response = api_client.post("/v1/selected-calendars", body, format="json", **bearer(key))
    assert response.status_code == 404, response.json()
    calendar.refresh_from_db()
    assert calendar.is_selected is False


def test_a_selected_calendar_body_with_an_unknown_integration_is_a_400(api_client, key):
    response = api_client.post(
        "/v1/selected-calendars", {"integration": "zoho_calendar", "externalId": "x"}, format="json", **bearer(key)
    )
    assert response.status_code == 400
    assert response.json()["code"] == "validation_error"


def test_destination_calendars_create_read_update_delete(api_client, user, key):
    connection = CalendarConnectionFactory(user=user)
    first, second = ExternalCalendarFactory(connection=connection), ExternalCalendarFactory(connection=connection)
    body = {"integration": "caldav_calendar", "externalId": first.external_id}
    response = api_client.post("/v1/destination-calendars", body, format="json", **bearer(key))
    assert response.status_code == 200, response.json()
    destination = response.json()["destination_calendar"]
    assert destination["externalId"] == first.external_id
    assert (destination["eventTypeId"], destination["bookingId"]) == (None, None)
    body = {"integration": "caldav_calendar", "externalId": second.external_id}
    response = api_client.patch(f"/v1/destination-calendars/{destination['id']}", body, format="json", **bearer(key))
    assert response.status_code == 200, response.json()
    assert DestinationCalendar.objects.get(user=user).calendar == second
    listed = api_client.get("/v1/destination-calendars", **bearer(key)).json()["destination_calendars"]
    assert [item["externalId"] for item in listed] == [second.external_id]
    assert api_client.delete(f"/v1/destination-calendars/{destination['id']}", **bearer(key)).status_code == 200
    assert not DestinationCalendar.objects.exists()


def test_booking_references_crud_on_the_callers_bookings_only(api_client, user, key):
    booking = BookingFactory(organizer=user)
    body = {"type": "daily_video", "uid": "room-1", "bookingId": booking.pk, "meetingUrl": "https://meet.example.org/1"}
    response = api_client.post("/v1/booking-references", body, format="json", **bearer(key))
    assert response.status_code == 200, response.json()
    reference = response.json()["booking_reference"]
    assert (reference["type"], reference["uid"], reference["bookingId"]) == ("daily_video", "room-1", booking.pk)
    response = api_client.patch(
        f"/v1/booking-references/{reference['id']}", {"meetingId": "m-1"}, format="json", **bearer(key)
    )
    assert response.status_code == 200, response.json()
    assert response.json()["booking_reference"]["meetingId"] == "m-1"
    assert api_client.delete(f"/v1/booking-references/{reference['id']}", **bearer(key)).status_code == 200
    assert not BookingReference.objects.exists()

    others = BookingFactory()
    body = {"type": "daily_video", "uid": "room-2", "bookingId": others.pk}
    response = api_client.post("/v1/booking-references", body, format="json", **bearer(key))
    assert response.status_code == 404, response.json()
    hidden = BookingReferenceFactory(booking=others)
    assert api_client.get(f"/v1/booking-references/{hidden.pk}", **bearer(key)).status_code == 404
    assert BookingReference.objects.count() == 1


def test_an_oauth_token_needs_the_calendar_scope(api_client, user):
    ExternalCalendarFactory(connection=CalendarConnectionFactory(user=user))
    token = AccessTokenFactory(user=user, scope="READ_BOOKING").token
    assert api_client.get("/v1/selected-calendars", **bearer(token)).status_code == 403
    calendar = ExternalCalendar.objects.get()
    body = {"integration": "caldav_calendar", "externalId": calendar.external_id}
    token = AccessTokenFactory(user=user, scope="READ_CALENDAR").token
    assert api_client.get("/v1/selected-calendars", **bearer(token)).status_code == 200
    assert api_client.post("/v1/destination-calendars", body, format="json", **bearer(token)).status_code == 403
    assert not DestinationCalendar.objects.exists()


@pytest.mark.parametrize(
    ("path", "make"),
    [
        ("/v1/selected-calendars", lambda user, n: ExternalCalendarFactory.create_batch(n, connection__user=user)),
        (
            "/v1/booking-references",
            lambda user, n: BookingReferenceFactory.create_batch(n, booking=BookingFactory(organizer=user)),
        ),
        ("/v1/connected-calendars", lambda user, n: ExternalCalendarFactory.create_batch(n, connection__user=user)),
    ],
)
def test_a_list_costs_the_same_queries_for_1_and_50(api_client, path, make):
    counts = []
    for size in (1, 50):
        user = UserFactory()
        make(user, size)
        key = ApiKeyFactory(user=user).raw_key
        api_client.get(path, **bearer(key))  # the key's lastUsedAt write happens once a minute
        with CaptureQueriesContext(connection) as queries:
            assert api_client.get(path, **bearer(key)).status_code == 200
        counts.append(len(queries))
    assert counts[0] == counts[1]
