"""GET /bookings with Cal.com v1's query parameters: `dateFrom`, `dateTo`, `status=upcoming`,
`attendeeEmail`, `sortBy` and `order` (the parameters v1's `GET /bookings` read), beside this
service's own filters."""

from datetime import UTC, datetime, timedelta

import pytest
from django.utils import timezone

from accounts.tests.factories import UserFactory
from scheduling.models import Booking
from scheduling.tests.factories import BookingFactory

pytestmark = pytest.mark.django_db


def at(day: int, hour: int = 9) -> datetime:
    return datetime(2031, 3, day, hour, tzinfo=UTC)


def ids(api_client, key, **query) -> list[int]:
    response = api_client.get("/v1/bookings", {**query, "apiKey": key})
    assert response.status_code == 200, response.json()
    return [booking["id"] for booking in response.json()["bookings"]]


def book(organizer, start: datetime, email: str = "guest@example.org") -> Booking:
    return BookingFactory(
        organizer=organizer, start_time=start, end_time=start + timedelta(minutes=30), attendees=[{"email": email}]
    )


def test_date_from_and_date_to_bound_start_and_end_as_v1_did(api_client, key, organizer):
    first, second, third = book(organizer, at(2)), book(organizer, at(3)), book(organizer, at(4))

    assert ids(api_client, key, dateFrom="2031-03-03T00:00:00Z") == [second.pk, third.pk]
    # A bare date is its midnight UTC, as v1 read it: the 4th's booking ends after it.
    assert ids(api_client, key, dateTo="2031-03-04") == [first.pk, second.pk]
    assert ids(api_client, key, dateFrom="2031-03-03", dateTo="2031-03-03T23:00:00Z") == [second.pk]


def test_status_upcoming_keeps_bookings_that_have_not_started(api_client, key, organizer):
    past = book(organizer, timezone.now().replace(microsecond=0) - timedelta(days=2))
    future = book(organizer, timezone.now().replace(microsecond=0) + timedelta(days=2))

    assert ids(api_client, key, status="upcoming") == [future.pk]
    assert past.pk in ids(api_client, key)


def test_attendee_email_keeps_bookings_with_that_attendee_once_each(api_client, key, organizer):
    ada = book(organizer, at(2), "ada@example.org")
    book(organizer, at(3), "bob@example.org")
    both = BookingFactory(
        organizer=organizer,
        start_time=at(5),
        end_time=at(5) + timedelta(minutes=30),
        attendees=[{"email": "ada@example.org"}, {"email": "cyd@example.org"}],
    )

    assert ids(api_client, key, attendeeEmail="ada@example.org") == [ada.pk, both.pk]
    response = api_client.get(f"/v1/bookings?attendeeEmail=ada@example.org&attendeeEmail=cyd@example.org&apiKey={key}")
    assert [booking["id"] for booking in response.json()["bookings"]] == [ada.pk, both.pk]


def test_attendee_email_does_not_reach_other_organizers_bookings(api_client, key, organizer):
    book(UserFactory(), at(2), "ada@example.org")

    assert ids(api_client, key, attendeeEmail="ada@example.org") == []


def test_sort_by_created_at_descending(api_client, key, organizer):
    older, newer = book(organizer, at(3)), book(organizer, at(2))
    Booking.objects.filter(pk=older.pk).update(created_at=datetime(2020, 1, 1, tzinfo=UTC))

    assert ids(api_client, key, sortBy="createdAt", order="desc") == [newer.pk, older.pk]
    assert ids(api_client, key, sortBy="createdAt") == [older.pk, newer.pk]


@pytest.mark.parametrize(
    "query,field",
    [
        ({"sortBy": "startTime"}, "sortBy"),
        ({"sortBy": "createdAt", "order": "up"}, "order"),
        ({"attendeeEmail": "not-an-email"}, "attendeeEmail"),
        ({"dateFrom": "yesterday"}, "dateFrom"),
        ({"dateTo": ""}, "dateTo"),
        ({"status": "soon"}, "status"),
    ],
)
def test_bad_v1_list_parameters_are_a_400_naming_the_parameter(api_client, key, organizer, query, field):
    book(organizer, at(2))

    response = api_client.get("/v1/bookings", {**query, "apiKey": key})

    assert response.status_code == 400
    assert response["Content-Type"] == "application/problem+json"
    assert list(response.json()["errors"]) == [field]


def test_the_v1_filters_cost_no_extra_query(api_client, key, organizer, django_assert_num_queries):
    for day in range(2, 8):
        book(organizer, at(day))
    query = {"dateFrom": "2031-03-01", "attendeeEmail": "guest@example.org", "sortBy": "updatedAt", "apiKey": key}
    api_client.get("/v1/bookings", {"apiKey": key})  # warm the per-process lookups
    # credential, the caller's event types, bookings, attendees, team members (a list within its page needs no COUNT)
    with django_assert_num_queries(5):
        response = api_client.get("/v1/bookings", query)
    assert len(response.json()["bookings"]) == 6
