"""POST /v2/bookings' fields beyond the event type id (Cal.com's `CreateBookingInput_2024_08_13`
and its recurring and instant variants), GET /v2/slots by slug, and what v2 shows of a series:
each field works as in Cal.com or is refused by name (400), never dropped."""

from datetime import timedelta

import pytest
from django.utils import timezone

from accounts.tests.factories import MembershipFactory, TeamFactory, UserFactory
from calv2.tests.helpers import WEEKLY_4, assert_error, event_type_of, monday_ahead, v2_body, z
from scheduling.models import Booking
from scheduling.tests.factories import EventTypeFactory, ScheduleFactory
from tests.support.credentials import bearer

pytestmark = pytest.mark.django_db

VERSION = "2024-08-13"


def test_a_recurring_event_type_books_its_whole_series_when_no_count_is_sent(v2, owner):
    event_type = event_type_of(owner, recurring_event=WEEKLY_4)

    response = v2.call("POST", "/v2/bookings", v2_body(event_type, monday_ahead()), version=VERSION)

    assert response.status_code == 201, response.json()
    data = response.json()["data"]
    assert [item["start"] for item in data] == [
        z(monday_ahead() + timedelta(weeks=week)).replace("Z", ".000Z") for week in range(4)
    ]
    assert len({item["recurringBookingUid"] for item in data}) == 1
    assert Booking.objects.filter(recurring_event_id=data[0]["recurringBookingUid"]).count() == 4


def test_recurrence_count_over_the_event_types_is_a_400_naming_it(v2, owner):
    event_type = event_type_of(owner, recurring_event=WEEKLY_4)

    response = v2.call("POST", "/v2/bookings", v2_body(event_type, monday_ahead(), count=5), version=VERSION)

    assert "recurrenceCount" in assert_error(response, 400, "BadRequestException")["error"]["details"]["errors"]
    assert not Booking.objects.exists()


@pytest.mark.parametrize("field", ["instant", "allowConflicts", "allowBookingOutOfBounds"])
def test_a_field_asking_for_what_is_not_built_is_a_400_naming_it(v2, owner, field):
    event_type = event_type_of(owner)

    refused = v2.call("POST", "/v2/bookings", v2_body(event_type, monday_ahead(), **{field: True}), version=VERSION)
    booked = v2.call("POST", "/v2/bookings", v2_body(event_type, monday_ahead(), **{field: False}), version=VERSION)

    assert field in assert_error(refused, 400, "BadRequestException")["error"]["details"]["errors"]
    assert booked.status_code == 201, booked.json()
    assert Booking.objects.count() == 1


def test_an_organization_slug_is_a_400_naming_it(v2, owner):
    event_type = event_type_of(owner)
    body = v2_body(event_type, monday_ahead(), slug=True, organizationSlug="acme")

    response = v2.call("POST", "/v2/bookings", body, version=VERSION)

    assert "organizationSlug" in assert_error(response, 400, "BadRequestException")["error"]["details"]["errors"]
    assert not Booking.objects.exists()


@pytest.mark.parametrize(
    ("names", "status", "field"),
    [
        ({"eventTypeSlug": "no-such-slug", "username": "grace"}, 404, None),
        ({"eventTypeSlug": "SLUG", "username": "nobody-here"}, 404, None),
        ({"eventTypeSlug": "SLUG"}, 400, "eventTypeSlug"),
        ({"eventTypeSlug": "SLUG", "username": "grace", "teamSlug": "t"}, 400, "eventTypeSlug"),
        ({}, 400, "eventTypeId"),
        ({"eventTypeId": "ID", "username": "someone-else"}, 400, "username"),
        ({"eventTypeId": "ID", "teamSlug": "some-team"}, 400, "teamSlug"),
    ],
)
def test_an_event_type_named_wrongly_is_refused_and_books_nothing(v2, owner, names, status, field):
    event_type = event_type_of(owner)
    body = v2_body(event_type, monday_ahead())
    del body["eventTypeId"]
    body.update({key: {"SLUG": event_type.slug, "ID": event_type.pk}.get(value, value) for key, value in names.items()})

    response = v2.call("POST", "/v2/bookings", body, version=VERSION)

    error = assert_error(response, status, "NotFoundException" if status == 404 else "BadRequestException")
    if field is not None:
        assert field in error["error"]["details"]["errors"]
    assert not Booking.objects.exists()


def test_meeting_url_is_the_location_when_none_is_sent(v2, owner):
    event_type = event_type_of(owner)
    body = v2_body(event_type, monday_ahead(), meetingUrl="https://meet.example.org/ada")

    response = v2.call("POST", "/v2/bookings", body, version=VERSION)

    assert response.status_code == 201, response.json()
    assert response.json()["data"]["meetingUrl"] == "https://meet.example.org/ada"
    assert Booking.objects.get().location == "https://meet.example.org/ada"


# --- what v2 shows of series -----------------------------------------------------------------------


def test_the_recurring_status_filter_lists_the_upcoming_occurrences_of_series(v2, owner):
    recurring = event_type_of(owner, recurring_event=WEEKLY_4)
    one_off = event_type_of(owner)
    v2.call("POST", "/v2/bookings", v2_body(recurring, monday_ahead(), count=2), version=VERSION)
    v2.call("POST", "/v2/bookings", v2_body(one_off, monday_ahead() + timedelta(hours=2)), version=VERSION)

    listed = v2.call("GET", "/v2/bookings?status=recurring", version=VERSION).json()["data"]
    legacy = v2.call("GET", "/v2/bookings?status=recurring", version="2024-04-15").json()["data"]["bookings"]

    assert [item["eventTypeId"] for item in listed] == [recurring.pk, recurring.pk]
    assert len(legacy) == 2


def test_event_types_answer_their_recurrence(v2, owner):
    recurring = event_type_of(owner, recurring_event={"freq": 1, "interval": 2, "count": 6})
    one_off = event_type_of(owner)

    shown = {
        item["id"]: item["recurrence"]
        for item in v2.call("GET", "/v2/event-types", version="2024-06-14").json()["data"]
    }

    assert shown == {recurring.pk: {"frequency": "monthly", "interval": 2, "occurrences": 6}, one_off.pk: None}


# --- slots by slug ---------------------------------------------------------------------------------


def _slots(v2, query: str):
    day = (timezone.now() + timedelta(days=7)).date()
    return v2.call("GET", f"/v2/slots?start={day}&end={day + timedelta(days=4)}&{query}", version="2024-09-04")


@pytest.mark.parametrize("how", ["username", "usernames", "teamSlug"])
def test_slots_take_the_event_type_slug_with_its_owner_or_team(v2, owner, how):
    if how == "teamSlug":
        team = TeamFactory(slug="hoppers")
        MembershipFactory(user=owner, team=team)
        schedule = ScheduleFactory(user=UserFactory(), time_zone="UTC")
        event_type = EventTypeFactory(owner=None, team=team, schedule=schedule, slug="intro")
        query = "eventTypeSlug=intro&teamSlug=hoppers"
    else:
        event_type = event_type_of(owner, slug="intro")
        query = f"eventTypeSlug=intro&{how}=grace"

    by_slug = _slots(v2, query)
    by_id = _slots(v2, f"eventTypeId={event_type.pk}")

    assert by_slug.status_code == 200, by_slug.json()
    assert by_slug.json() == by_id.json()
    assert by_slug.json()["data"]


@pytest.mark.parametrize(
    ("query", "status", "field"),
    [
        ("eventTypeSlug=intro&usernames=grace,hopper", 400, "usernames"),
        ("eventTypeSlug=intro&username=grace&organizationSlug=acme", 400, "organizationSlug"),
        ("eventTypeSlug=intro", 400, "eventTypeSlug"),
        ("eventTypeSlug=nope&username=grace", 404, None),
        ("username=grace", 400, "eventTypeId"),
    ],
)
def test_slots_of_an_event_type_named_wrongly_are_refused(v2, owner, query, status, field):
    event_type_of(owner, slug="intro")

    response = _slots(v2, query)

    error = assert_error(response, status, "NotFoundException" if status == 404 else "BadRequestException")
    if field is not None:
        assert field in error["error"]["details"]["errors"]


# --- the 414 in both documents ----------------------------------------------------------------------


def test_both_documents_list_the_414_of_a_request_line_over_the_limit_on_every_api_operation(client, v2):
    v1 = client.get("/v1/openapi.json").json()
    v2_document = v2.call("GET", "/v2/openapi.json").json()

    for document in (v1, v2_document):
        operations = [
            operation
            for path, item in document["paths"].items()
            if path.startswith(("/v1/", "/v2/"))
            for operation in item.values()
            if isinstance(operation, dict)
        ]
        assert operations
        assert all("414" in operation["responses"] for operation in operations)


def test_a_v1_client_sees_the_same_series_fields_through_2024_04_15(v2, owner, api_client):
    event_type = event_type_of(owner, recurring_event=WEEKLY_4)
    body = {
        "eventTypeId": event_type.pk,
        "eventTypeSlug": event_type.slug,
        "userId": owner.pk,
        "recurringCount": 3,
        "start": z(monday_ahead()),
        "timeZone": "UTC",
        "responses": {"name": "Ada", "email": "ada@example.org"},
    }

    v2_answer = v2.call("POST", "/v2/bookings", body, version="2024-04-15")
    listed = api_client.get("/v1/bookings", **bearer(v2.key)).json()["bookings"]

    assert v2_answer.status_code == 201, v2_answer.json()
    assert v2_answer.json()["data"]["id"] == listed[0]["id"]
    assert len({item["recurringEventId"] for item in listed}) == 1 and len(listed) == 3


def test_an_event_types_recurrence_is_created_changed_and_turned_off_through_v2(v2, owner):
    body = {"lengthInMinutes": 30, "title": "Sync", "slug": "sync"}
    weekly = {"frequency": "weekly", "interval": 1, "occurrences": 8}

    created = v2.call("POST", "/v2/event-types", {**body, "recurrence": weekly}, version="2024-06-14")
    event_type_id = created.json()["data"]["id"]
    monthly = {"frequency": "monthly", "interval": 2, "occurrences": 3}
    changed = v2.call("PATCH", f"/v2/event-types/{event_type_id}", {"recurrence": monthly}, version="2024-06-14")
    v1_view = v2.client.get(f"/v1/event-types/{event_type_id}", **bearer(v2.key)).json()["event_type"]
    off = v2.call("PATCH", f"/v2/event-types/{event_type_id}", {"recurrence": {"disabled": True}}, version="2024-06-14")

    assert created.status_code == 201, created.json()
    assert created.json()["data"]["recurrence"] == weekly
    assert changed.json()["data"]["recurrence"] == monthly
    assert v1_view["recurringEvent"] == {"freq": 1, "interval": 2, "count": 3}
    assert off.json()["data"]["recurrence"] is None


@pytest.mark.parametrize(
    ("recurrence", "extra"),
    [
        ({"frequency": "daily", "interval": 1, "occurrences": 3}, {}),
        ({"frequency": "weekly", "interval": 21, "occurrences": 3}, {}),
        ({"frequency": "weekly", "interval": 1, "occurrences": 25}, {}),
        ({"frequency": "weekly", "interval": 1, "occurrences": 3}, {"price": 500, "currency": "usd"}),
    ],
)
def test_a_recurrence_v1_would_refuse_is_a_400_naming_it_and_creates_nothing(v2, owner, recurrence, extra):
    body = {"lengthInMinutes": 30, "title": "Sync", "slug": "sync", "recurrence": recurrence, **extra}

    response = v2.call("POST", "/v2/event-types", body, version="2024-06-14")

    errors = assert_error(response, 400, "BadRequestException")["error"]["details"]["errors"]
    assert any(name.startswith("recurrence") for name in errors), errors
    assert not owner.event_types.exists()
