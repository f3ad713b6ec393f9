"""Input rules of schedules, event types and slots: bad input is a 400 naming the field, and
nothing is written."""

import pytest

from accounts.tests.factories import UserFactory
from scheduling.models import Availability, EventType, Schedule
from scheduling.tests.factories import EventTypeFactory, ScheduleFactory
from tests.support.credentials import auth
from tests.support.problems import errors_of, send

pytestmark = pytest.mark.django_db


@pytest.fixture
def owner():
    return UserFactory()


@pytest.fixture
def headers(owner):
    return auth(owner)


def rows_of(schedule) -> list[tuple]:
    return sorted(schedule.availability.values_list("days_mask", "start_time", "end_time", "date"))


# --- Availability in a PATCH is whole rows -------------------------------------------------------


@pytest.mark.parametrize("missing", ["startTime", "endTime"])
def test_patch_with_an_availability_row_missing_a_time_is_a_400_and_changes_nothing(client, owner, headers, missing):
    schedule = ScheduleFactory(user=owner)
    before = rows_of(schedule)
    row = {"days": [1], "startTime": "10:00", "endTime": "12:00"}
    del row[missing]

    response = send(client, "patch", f"/v1/schedules/{schedule.pk}", {"name": "New", "availability": [row]}, headers)

    assert errors_of(response) == {f"availability[0].{missing}": ["This field is required."]}
    schedule.refresh_from_db()
    assert schedule.name != "New"
    assert rows_of(schedule) == before


def test_patch_and_post_answer_the_same_for_the_same_bad_row(client, owner, headers):
    schedule = ScheduleFactory(user=owner)
    row = {"days": [1], "endTime": "12:00"}

    patched = send(client, "patch", f"/v1/schedules/{schedule.pk}", {"availability": [row]}, headers)
    posted = send(client, "post", "/v1/schedules", {"name": "x", "timeZone": "UTC", "availability": [row]}, headers)

    assert errors_of(patched) == errors_of(posted)
    assert Schedule.objects.count() == 1


def test_patch_still_leaves_top_level_fields_optional(client, owner, headers):
    schedule = ScheduleFactory(user=owner)

    response = send(
        client,
        "patch",
        f"/v1/schedules/{schedule.pk}",
        {"availability": [{"days": [2], "startTime": "08:00", "endTime": "09:00"}]},
        headers,
    )

    assert response.status_code == 200, response.content
    assert response.json()["schedule"]["availability"][0]["startTime"] == "08:00:00"


# --- Availability rows per schedule ------------------------------------------------------------


def many_rows(count: int) -> list[dict]:
    return [
        {"date": f"2027-{1 + index // 28:02d}-{1 + index % 28:02d}", "startTime": "09:00", "endTime": "10:00"}
        for index in range(count)
    ]


def test_more_availability_rows_than_the_limit_are_a_400_on_create_and_write_nothing(client, headers):
    response = send(
        client, "post", "/v1/schedules", {"name": "x", "timeZone": "UTC", "availability": many_rows(101)}, headers
    )

    assert errors_of(response) == {"availability": ["A schedule may have at most 100 availability rows."]}
    assert not Schedule.objects.exists() and not Availability.objects.exists()


def test_ten_thousand_rows_are_refused_before_any_row_is_validated(client, headers):
    rows = [{"days": [1], "startTime": "09:00", "endTime": "10:00"}] * 10_000

    response = send(client, "post", "/v1/schedules", {"name": "x", "timeZone": "UTC", "availability": rows}, headers)

    assert list(errors_of(response)) == ["availability"]
    assert not Schedule.objects.exists()


def test_more_rows_than_the_limit_are_a_400_on_patch_and_change_nothing(client, owner, headers):
    schedule = ScheduleFactory(user=owner)
    before = rows_of(schedule)

    response = send(client, "patch", f"/v1/schedules/{schedule.pk}", {"availability": many_rows(101)}, headers)

    assert list(errors_of(response)) == ["availability"]
    assert rows_of(schedule) == before


def test_exactly_the_limit_of_rows_is_accepted(client, headers):
    response = send(
        client, "post", "/v1/schedules", {"name": "x", "timeZone": "UTC", "availability": many_rows(100)}, headers
    )

    assert response.status_code == 200, response.content
    assert Availability.objects.count() == 100


def test_the_row_limit_is_a_setting_and_the_service_enforces_it_too(owner, settings):
    from django.core.exceptions import ValidationError

    from scheduling.services.schedules import schedule_create

    settings.API_LIMITS = {**settings.API_LIMITS, "SCHEDULE_AVAILABILITY_ROWS": 2}
    rows = [{"days": [day], "start_time": "09:00", "end_time": "10:00"} for day in (1, 2, 3)]

    with pytest.raises(ValidationError):
        schedule_create(actor=owner, name="x", time_zone="UTC", availability=rows)
    assert not Schedule.objects.exists()


# --- Time zones --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "zone",
    [
        "",
        "localtime",
        "Factory",
        "posixrules",
        "posix/Europe/Berlin",
        "right/UTC",
        "europe/berlin",
        "Europe/Berlin ",
    ],
)
def test_time_zones_are_iana_names_that_mean_the_same_on_every_host(client, headers, zone):
    response = send(client, "post", "/v1/schedules", {"name": "x", "timeZone": zone}, headers)

    assert list(errors_of(response)) == ["timeZone"]
    assert not Schedule.objects.exists()


def test_patch_to_a_host_dependent_zone_is_a_400_and_changes_nothing(client, owner, headers):
    schedule = ScheduleFactory(user=owner, time_zone="Europe/Berlin")

    response = send(client, "patch", f"/v1/schedules/{schedule.pk}", {"timeZone": "localtime"}, headers)

    assert list(errors_of(response)) == ["timeZone"]
    schedule.refresh_from_db()
    assert schedule.time_zone == "Europe/Berlin"


@pytest.mark.parametrize("zone", ["", "localtime", "Factory"])
def test_slots_refuse_host_dependent_and_empty_zones(client, owner, headers, zone):
    event_type = EventTypeFactory(owner=owner)

    response = client.get(
        "/v1/slots",
        {"eventTypeId": event_type.pk, "startTime": "2027-01-04", "endTime": "2027-01-05", "timeZone": zone},
        **headers,
    )

    assert list(errors_of(response)) == ["timeZone"]


# --- Slots query -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "query,name",
    [
        ("eventTypeId=%D9%A1&startTime=2027-01-04&endTime=2027-01-05", "eventTypeId"),
        ("eventTypeId=+1&startTime=2027-01-04&endTime=2027-01-05", "eventTypeId"),
        ("eventTypeId=1&eventTypeId=2&startTime=2027-01-04&endTime=2027-01-05", "eventTypeId"),
        ("eventTypeId=1&startTime=2027-01-04&startTime=2027-01-05&endTime=2027-01-06", "startTime"),
        ("eventTypeId=1&startTime=&endTime=2027-01-05", "startTime"),
        ("eventTypeId=1&startTime=2027-01-04&endTime=2027-03-08", "endTime"),
    ],
)
def test_slots_query_is_strict(client, headers, query, name):
    assert list(errors_of(client.get(f"/v1/slots?{query}", **headers))) == [name]


def test_the_slots_range_is_a_setting(client, owner, headers, settings):
    settings.API_LIMITS = {**settings.API_LIMITS, "SLOTS_MAX_DAYS": 7}
    event_type = EventTypeFactory(owner=owner)

    response = client.get(f"/v1/slots?eventTypeId={event_type.pk}&startTime=2027-01-04&endTime=2027-01-11", **headers)

    assert errors_of(response) == {"endTime": ["The range may span at most 7 days."]}


# --- Event types: currencies, booleans ---------------------------------------------------------


@pytest.mark.parametrize("currency", ["AAA", "aaa", "xts", "us", "usdd", "", "€"])
def test_currencies_are_iso_4217_codes(client, owner, headers, currency):
    body = {"title": "Call", "slug": "call", "length": 30, "price": 100, "currency": currency}

    response = send(client, "post", "/v1/event-types", body, headers)

    assert list(errors_of(response)) == ["currency"]
    assert not EventType.objects.exists()


def test_a_real_currency_is_stored_in_lower_case(client, owner, headers):
    body = {"title": "Call", "slug": "call", "length": 30, "price": 100, "currency": "JPY"}

    response = send(client, "post", "/v1/event-types", body, headers)

    assert response.status_code == 200, response.content
    assert response.json()["event_type"]["currency"] == "jpy"


@pytest.mark.parametrize("value", [0, 1, "true", "on"])
def test_event_type_booleans_are_json_booleans(client, owner, headers, value):
    event_type = EventTypeFactory(owner=owner)

    response = send(client, "patch", f"/v1/event-types/{event_type.pk}", {"hidden": value, "title": "Changed"}, headers)

    assert list(errors_of(response)) == ["hidden"]
    event_type.refresh_from_db()
    assert event_type.title != "Changed" and event_type.hidden is False


# --- Bookings: free-form JSON is bounded, filters are strict --------------------------------------


def _nested(depth: int) -> dict:
    value: dict = {"leaf": "x"}
    for _ in range(depth - 1):
        value = {"next": value}
    return value


@pytest.mark.parametrize(
    "metadata",
    [_nested(20), {f"key{number}": number for number in range(500)}, {"note": "x" * 20_000}, ["not", "an", "object"]],
    ids=["too-deep", "too-many-keys", "string-too-long", "not-an-object"],
)
def test_booking_metadata_out_of_bounds_is_a_400_and_books_nothing(client, owner, headers, metadata):
    from scheduling.models import Booking

    event_type = EventTypeFactory(owner=owner)
    body = {
        "eventTypeId": event_type.pk,
        "start": "2030-01-07T09:00:00Z",
        "name": "Ada",
        "email": "ada@example.org",
        "timeZone": "UTC",
        "metadata": metadata,
    }

    response = send(client, "post", "/v1/bookings", body, headers)

    assert list(errors_of(response)) == ["metadata"]
    assert not Booking.objects.exists()


@pytest.mark.parametrize("raw", ["٥", "+5", "5x", "0"])
def test_booking_list_event_type_filter_takes_ascii_ids_only(client, headers, raw):
    response = client.get("/v1/bookings", {"eventTypeId": raw}, **headers)

    assert list(errors_of(response)) == ["eventTypeId"]


@pytest.mark.parametrize("query,field", [("eventTypeId=1,x", "eventTypeId"), ("attendeeEmail=", "attendeeEmail")])
def test_booking_list_filters_refuse_a_bad_item(client, headers, query, field):
    response = client.get(f"/v1/bookings?{query}", **headers)

    assert list(errors_of(response)) == [field]


@pytest.mark.parametrize(
    "query", ["status=", "status=ACCEPTED,", "status=ACCEPTED,%20PENDING", "eventTypeId=%205", "eventTypeId=1,,2"]
)
def test_booking_list_filters_trim_comma_separated_items_and_drop_empty_ones(client, headers, query):
    """As the bookings list has always read them, and as Cal.com v1 clients may send them."""
    response = client.get(f"/v1/bookings?{query}", **headers)

    assert response.status_code == 200, response.json()
