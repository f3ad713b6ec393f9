"""Recurring event types and series over the API, as Cal.com v1 clients use them: the event type's
`recurringEvent`, POST /bookings with `recurringCount` or one occurrence per request, series-aware
slots, the list filter, cancelling the rest of a series, rescheduling one occurrence, and the
webhook events of each step."""

from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from accounts.tests.factories import ApiKeyFactory, UserFactory
from scheduling.models import Booking, BookingStatus, EventType
from scheduling.tests.factories import BookingFactory, EventTypeFactory
from tests.support.credentials import bearer
from webhooks.models import WebhookDelivery, WebhookScheduledTrigger, WebhookTrigger
from webhooks.tests.factories import WebhookFactory

pytestmark = pytest.mark.django_db

BERLIN = ZoneInfo("Europe/Berlin")
UTC = ZoneInfo("UTC")
WEEKLY_10 = {"freq": 2, "interval": 1, "count": 10}


def monday_ahead(weeks: int = 2) -> date:
    today = timezone.now().astimezone(BERLIN).date()
    return today + timedelta(days=(7 - today.weekday()) % 7 + 7 * weeks)


def berlin(hour: int, minute: int = 0, *, week: int = 0) -> datetime:
    return datetime.combine(monday_ahead() + timedelta(weeks=week), time(hour, minute), tzinfo=BERLIN)


def z(value: datetime) -> str:
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@pytest.fixture
def organizer():
    return UserFactory(name="Ada Lovelace", email="ada@example.org", time_zone="Europe/Berlin")


@pytest.fixture
def key(organizer):
    return ApiKeyFactory(user=organizer).raw_key


@pytest.fixture
def event_type(organizer):
    return EventTypeFactory(owner=organizer, length=30, recurring_event=WEEKLY_10)


def v1_body(event_type, start: datetime, **extra) -> dict:
    return {
        "eventTypeId": event_type.pk,
        "start": start.isoformat(),
        "responses": {"name": "Grace Hopper", "email": "grace@example.org", "location": "Room 4"},
        "timeZone": "America/New_York",
        "language": "en",
        "metadata": {},
        **extra,
    }


# --- the event type's recurringEvent ---------------------------------------------------------------


def test_event_type_recurring_event_is_created_shown_changed_and_removed(api_client, organizer, key):
    body = {
        "title": "Weekly sync",
        "slug": "sync",
        "length": 30,
        "recurringEvent": {"freq": 2, "interval": 1, "count": 12},
    }
    created = api_client.post("/v1/event-types", body, format="json", **bearer(key))
    assert created.status_code == 200, created.json()
    event_type_id = created.json()["event_type"]["id"]
    assert created.json()["event_type"]["recurringEvent"] == {"freq": 2, "interval": 1, "count": 12}
    shown = api_client.get(f"/v1/event-types/{event_type_id}", **bearer(key)).json()["event_type"]
    assert shown["recurringEvent"] == {"freq": 2, "interval": 1, "count": 12}
    listed = api_client.get("/v1/event-types", **bearer(key)).json()["event_types"]
    assert [item["recurringEvent"] for item in listed] == [{"freq": 2, "interval": 1, "count": 12}]
    monthly = {"freq": 1, "interval": 2, "count": 24}
    patched = api_client.patch(
        f"/v1/event-types/{event_type_id}", {"recurringEvent": monthly}, format="json", **bearer(key)
    )
    assert patched.status_code == 200, patched.json()
    assert patched.json()["event_type"]["recurringEvent"] == monthly
    removed = api_client.patch(
        f"/v1/event-types/{event_type_id}", {"recurringEvent": None}, format="json", **bearer(key)
    )
    assert removed.json()["event_type"]["recurringEvent"] is None
    assert EventType.objects.get(pk=event_type_id).recurring_event is None


@pytest.mark.parametrize(
    ("recurring_event", "field"),
    [
        ({"freq": 3, "interval": 1, "count": 5}, "recurringEvent.freq"),  # daily: Cal.com does not offer it
        ({"freq": "weekly", "interval": 1, "count": 5}, "recurringEvent.freq"),
        ({"freq": "2", "interval": 1, "count": 5}, "recurringEvent.freq"),
        ({"freq": 2, "interval": 0, "count": 5}, "recurringEvent.interval"),
        ({"freq": 2, "interval": 21, "count": 5}, "recurringEvent.interval"),
        ({"freq": 2, "interval": 1, "count": 0}, "recurringEvent.count"),
        ({"freq": 2, "interval": 1, "count": 25}, "recurringEvent.count"),
        ({"freq": 2, "interval": 1}, "recurringEvent.count"),
        ({"freq": 2, "interval": 1, "count": 5, "until": "2027-01-01"}, "recurringEvent.until"),
        ({"freq": 2, "interval": 1, "count": 5, "tzid": "Europe/Berlin"}, "recurringEvent.tzid"),
        ([2, 1, 5], "recurringEvent.non_field_errors"),
    ],
)
def test_invalid_recurring_event_is_a_400_naming_it_and_changes_nothing(
    api_client, key, event_type, recurring_event, field
):
    title = event_type.title
    response = api_client.patch(
        f"/v1/event-types/{event_type.pk}",
        {"recurringEvent": recurring_event, "title": "Renamed"},
        format="json",
        **bearer(key),
    )
    assert response.status_code == 400, response.json()
    assert field in response.json()["errors"], response.json()
    event_type.refresh_from_db()
    assert (event_type.recurring_event, event_type.title) == (WEEKLY_10, title)


def test_a_paid_event_type_cannot_recur(api_client, key, event_type):
    response = api_client.patch(f"/v1/event-types/{event_type.pk}", {"price": 1000}, format="json", **bearer(key))
    assert response.status_code == 400
    assert "recurringEvent" in response.json()["errors"]
    body = {"title": "Paid", "slug": "paid", "length": 30, "price": 500, "recurringEvent": WEEKLY_10}
    assert api_client.post("/v1/event-types", body, format="json", **bearer(key)).status_code == 400
    event_type.refresh_from_db()
    assert event_type.price == 0
    assert not EventType.objects.filter(slug="paid").exists()


# --- booking a series ------------------------------------------------------------------------------


def test_recurring_count_books_the_whole_series_and_answers_its_first_booking(api_client, key, event_type):
    response = api_client.post(
        "/v1/bookings", v1_body(event_type, berlin(10), recurringCount=4), format="json", **bearer(key)
    )
    assert response.status_code == 200, response.json()
    first = response.json()
    series_id = first["recurringEventId"]
    assert isinstance(series_id, str) and series_id
    assert first["startTime"] == z(berlin(10))
    assert response["Location"].endswith(f"/v1/bookings/{first['id']}")
    series = Booking.objects.filter(recurring_event_id=series_id).order_by("start_time")
    assert [booking.start_time for booking in series] == [berlin(10, week=week) for week in range(4)]
    assert series[0].pk == first["id"]
    assert {booking.status for booking in series} == {BookingStatus.ACCEPTED}
    assert all(booking.attendees.get().email == "grace@example.org" for booking in series)
    listed = api_client.get(f"/v1/bookings?recurringEventId={series_id}", **bearer(key)).json()
    assert [item["startTime"] for item in listed["bookings"]] == [z(berlin(10, week=week)) for week in range(4)]
    assert {item["recurringEventId"] for item in listed["bookings"]} == {series_id}
    assert listed["pagination"]["total"] == 4
    single = BookingFactory(
        organizer=event_type.owner, event_type=event_type, start_time=berlin(15), end_time=berlin(15, 30)
    )
    shown = api_client.get(f"/v1/bookings/{single.pk}", **bearer(key)).json()["booking"]
    assert shown["recurringEventId"] is None


def test_a_client_chosen_recurring_event_id_names_the_series_once(api_client, key, event_type):
    body = v1_body(event_type, berlin(10), recurringCount=2, recurringEventId="my-series")
    assert api_client.post("/v1/bookings", body, format="json", **bearer(key)).json()["recurringEventId"] == "my-series"
    again = api_client.post(
        "/v1/bookings",
        v1_body(event_type, berlin(12), recurringCount=2, recurringEventId="my-series"),
        format="json",
        **bearer(key),
    )
    assert again.status_code == 409
    assert Booking.objects.count() == 2


def test_a_taken_occurrence_is_a_409_naming_it_and_nothing_is_booked(api_client, key, event_type):
    BookingFactory(
        organizer=event_type.owner,
        event_type=event_type,
        start_time=berlin(10, week=2),
        end_time=berlin(10, 30, week=2),
    )
    deliveries = WebhookDelivery.objects.count()
    response = api_client.post(
        "/v1/bookings", v1_body(event_type, berlin(10), recurringCount=4), format="json", **bearer(key)
    )
    assert response.status_code == 409
    assert response.json()["errors"] == {
        "occurrences[2]": [
            f"{z(berlin(10, week=2))} ({berlin(10, week=2):%Y-%m-%d} 10:00 Europe/Berlin) is not an available slot."
        ]
    }
    assert z(berlin(10, week=2)) in response.json()["detail"]
    assert Booking.objects.count() == 1
    assert WebhookDelivery.objects.count() == deliveries


@pytest.mark.parametrize(
    ("extra", "field"),
    [
        ({}, "recurringCount"),  # a recurring event type says how many occurrences
        ({"recurringCount": 11}, "recurringCount"),  # more than its count
        ({"recurringCount": 0}, "recurringCount"),
        ({"recurringEventId": "alone"}, "recurringEventId"),
        ({"recurringEventId": ""}, "recurringEventId"),
        ({"recurringEventId": True}, "recurringEventId"),
        ({"allRecurringDates": [{"start": "2027-01-04T09:00:00Z"}], "recurringEventId": "x"}, "currentRecurringIndex"),
        ({"currentRecurringIndex": 0, "recurringEventId": "x"}, "allRecurringDates"),
        ({"allRecurringDates": [{"start": "2027-01-04T09:00:00Z"}], "currentRecurringIndex": 0}, "recurringEventId"),
        ({"allRecurringDates": [], "currentRecurringIndex": 0, "recurringEventId": "x"}, "allRecurringDates"),
        (
            {
                "allRecurringDates": [{"end": "2027-01-04T09:00:00Z"}],
                "currentRecurringIndex": 0,
                "recurringEventId": "x",
            },
            "allRecurringDates[0].start",
        ),
        ({"currentRecurringIndex": -1}, "currentRecurringIndex"),
    ],
)
def test_bad_recurring_fields_are_a_400_naming_them_and_book_nothing(api_client, key, event_type, extra, field):
    response = api_client.post("/v1/bookings", v1_body(event_type, berlin(10), **extra), format="json", **bearer(key))
    assert response.status_code == 400, response.json()
    assert field in response.json()["errors"], response.json()
    assert not Booking.objects.exists()


@pytest.mark.parametrize(
    "extra",
    [
        {"recurringCount": 3},
        {"recurringCount": 2, "recurringEventId": "x"},
        {"allRecurringDates": [{"start": "2027-01-04T09:00:00Z"}], "currentRecurringIndex": 0, "recurringEventId": "x"},
    ],
)
def test_recurring_fields_on_a_one_off_event_type_are_a_400(api_client, key, organizer, extra):
    one_off = EventTypeFactory(owner=organizer, length=30)
    response = api_client.post("/v1/bookings", v1_body(one_off, berlin(10), **extra), format="json", **bearer(key))
    assert response.status_code == 400, response.json()
    assert not Booking.objects.exists()


def test_recurring_count_of_one_on_a_one_off_event_type_is_the_booking(api_client, key, organizer):
    one_off = EventTypeFactory(owner=organizer, length=30)
    response = api_client.post(
        "/v1/bookings", v1_body(one_off, berlin(10), recurringCount=1), format="json", **bearer(key)
    )
    assert response.status_code == 200
    assert response.json()["recurringEventId"] is None


def test_one_post_per_occurrence_builds_the_same_series_as_recurring_count(api_client, key, event_type, organizer):
    whole = api_client.post(
        "/v1/bookings", v1_body(event_type, berlin(10), recurringCount=3), format="json", **bearer(key)
    )
    expected = [
        booking.start_time
        for booking in Booking.objects.filter(recurring_event_id=whole.json()["recurringEventId"]).order_by(
            "start_time"
        )
    ]
    # Cal.com's booker: every request carries the series id, all dates and its own index.
    other = EventTypeFactory(
        owner=UserFactory(time_zone="Europe/Berlin"), length=30, recurring_event=WEEKLY_10, hidden=False
    )
    dates = [{"start": z(start), "end": z(start + timedelta(minutes=30))} for start in expected]
    answers = []
    for index, occurrence in enumerate(dates):
        body = v1_body(
            other,
            datetime.fromisoformat(occurrence["start"]),
            end=occurrence["end"],
            recurringEventId="booker-series",
            recurringCount=3,
            allRecurringDates=dates,
            currentRecurringIndex=index,
        )
        answers.append(api_client.post("/v1/bookings", body, format="json", **bearer(key)))
    assert [answer.status_code for answer in answers] == [200, 200, 200]
    assert [answer.json()["recurringEventId"] for answer in answers] == ["booker-series"] * 3
    replayed = Booking.objects.filter(recurring_event_id="booker-series").order_by("start_time")
    assert [booking.start_time for booking in replayed] == expected
    # The same occurrence twice is the same slot twice.
    body = v1_body(
        other, expected[1], recurringEventId="booker-series", allRecurringDates=dates, currentRecurringIndex=1
    )
    assert api_client.post("/v1/bookings", body, format="json", **bearer(key)).status_code == 409
    # Another event type's series id, or a start that is not that index's occurrence.
    body = v1_body(
        event_type,
        berlin(10, week=5),
        recurringEventId="booker-series",
        allRecurringDates=dates,
        currentRecurringIndex=0,
    )
    assert api_client.post("/v1/bookings", body, format="json", **bearer(key)).status_code == 400
    body = v1_body(
        event_type,
        expected[0] + timedelta(weeks=6),
        recurringEventId="booker-series",
        allRecurringDates=[{"start": z(expected[0] + timedelta(weeks=6))}],
        currentRecurringIndex=0,
    )
    assert api_client.post("/v1/bookings", body, format="json", **bearer(key)).status_code == 409
    assert Booking.objects.filter(recurring_event_id="booker-series").count() == 3


# --- slots -----------------------------------------------------------------------------------------


def test_slots_of_a_recurring_event_type_offer_only_starts_whose_series_is_free(api_client, key, event_type):
    BookingFactory(
        organizer=event_type.owner,
        event_type=event_type,
        start_time=berlin(10, week=3),
        end_time=berlin(10, 30, week=3),
    )
    day = monday_ahead().isoformat()
    query = f"/v1/slots?eventTypeId={event_type.pk}&startTime={day}&endTime={day}&timeZone=Europe/Berlin"

    def times(url):
        response = api_client.get(url, **bearer(key))
        assert response.status_code == 200, response.json()
        return [slot["time"][11:16] for slot in response.json()["slots"].get(monday_ahead().isoformat(), [])]

    default = times(query)  # the event type's count: 10 weeks, the fourth Monday at 10:00 is taken
    assert "10:00" not in default and "09:30" in default and "10:30" in default
    assert "10:00" in times(query + "&recurringCount=3")
    assert "10:00" not in times(query + "&recurringCount=4")
    for bad in ("&recurringCount=11", "&recurringCount=0", "&recurringCount=x"):
        response = api_client.get(query + bad, **bearer(key))
        assert response.status_code == 400
        assert "recurringCount" in response.json()["errors"]


def test_series_slots_load_the_schedule_and_bookings_once_as_far_as_the_last_occurrence(
    api_client, key, event_type, organizer
):
    one_off = EventTypeFactory(owner=organizer, length=30)
    # The tenth Monday, the last occurrence of a series starting on the first.
    BookingFactory(
        organizer=organizer, event_type=one_off, start_time=berlin(11, week=9), end_time=berlin(11, 30, week=9)
    )
    day = monday_ahead().isoformat()

    def queries_and_times(booked):
        url = f"/v1/slots?eventTypeId={booked.pk}&startTime={day}&endTime={day}&timeZone=Europe/Berlin"
        with CaptureQueriesContext(connection) as queries:
            response = api_client.get(url, **bearer(key))
        assert response.status_code == 200, response.json()
        return len(queries), [slot["time"][11:16] for slot in response.json()["slots"].get(day, [])]

    queries_and_times(one_off)  # the first request of a key also records its use
    plain_queries, plain_times = queries_and_times(one_off)
    series_queries, series_times = queries_and_times(event_type)
    assert "11:00" in plain_times and "11:00" not in series_times and "11:30" in series_times
    assert series_queries == plain_queries


def test_recurring_count_on_the_slots_of_a_one_off_event_type_is_a_400(api_client, key, organizer):
    one_off = EventTypeFactory(owner=organizer, length=30)
    day = monday_ahead().isoformat()
    response = api_client.get(
        f"/v1/slots?eventTypeId={one_off.pk}&startTime={day}&endTime={day}&recurringCount=2", **bearer(key)
    )
    assert response.status_code == 400
    assert "recurringCount" in response.json()["errors"]


# --- cancelling and rescheduling -------------------------------------------------------------------


def book_series(api_client, key, event_type, count=4, hour=10) -> list[Booking]:
    response = api_client.post(
        "/v1/bookings", v1_body(event_type, berlin(hour), recurringCount=count), format="json", **bearer(key)
    )
    assert response.status_code == 200, response.json()
    return list(Booking.objects.filter(recurring_event_id=response.json()["recurringEventId"]).order_by("start_time"))


def statuses(bookings) -> list[str]:
    return [Booking.objects.get(pk=booking.pk).status for booking in bookings]


def test_cancelling_one_occurrence_leaves_the_rest(api_client, key, event_type):
    series = book_series(api_client, key, event_type)
    response = api_client.delete(f"/v1/bookings/{series[1].pk}?cancellationReason=Away", **bearer(key))
    assert response.status_code == 200
    assert statuses(series) == ["ACCEPTED", "CANCELLED", "ACCEPTED", "ACCEPTED"]


@pytest.mark.parametrize("path", ["/v1/bookings/{id}", "/v1/bookings/{id}/cancel"])
def test_all_remaining_bookings_cancels_every_occurrence_not_started(api_client, key, event_type, path, organizer):
    webhook = WebhookFactory(
        user=organizer, event_triggers=[WebhookTrigger.BOOKING_CANCELLED, WebhookTrigger.MEETING_STARTED]
    )
    series = book_series(api_client, key, event_type)
    # One occurrence already in the past stays as it was (Cal.com cancels those starting from now).
    Booking.objects.filter(pk=series[0].pk).update(
        start_time=timezone.now() - timedelta(days=7),
        end_time=timezone.now() - timedelta(days=7) + timedelta(minutes=30),
    )
    url = path.format(id=series[2].pk) + "?allRemainingBookings=true&cancellationReason=Moving"
    response = api_client.delete(url, **bearer(key))
    assert response.status_code == 200, response.json()
    assert response.json()["bookingId"] == series[2].pk
    assert statuses(series) == ["ACCEPTED", "CANCELLED", "CANCELLED", "CANCELLED"]
    assert {Booking.objects.get(pk=booking.pk).cancellation_reason for booking in series[1:]} == {"Moving"}
    cancelled = WebhookDelivery.objects.filter(webhook=webhook, trigger_event=WebhookTrigger.BOOKING_CANCELLED)
    assert cancelled.count() == 1  # one event for the series, as Cal.com sends
    payload = cancelled.get().payload
    assert payload["uid"] == series[2].uid
    assert payload["recurringEvent"] == {"freq": 2, "count": 10, "interval": 1}


def test_cancel_subsequent_bookings_cancels_this_one_and_the_later_ones(api_client, key, event_type):
    series = book_series(api_client, key, event_type)
    response = api_client.delete(
        f"/v1/bookings/{series[2].pk}/cancel", {"cancelSubsequentBookings": True}, format="json", **bearer(key)
    )
    assert response.status_code == 200, response.json()
    assert statuses(series) == ["ACCEPTED", "ACCEPTED", "CANCELLED", "CANCELLED"]
    # Cancelling a cancelled occurrence again is a 409 that changes nothing, series flag or not.
    again = api_client.delete(f"/v1/bookings/{series[2].pk}?allRemainingBookings=true", **bearer(key))
    assert again.status_code == 409
    assert statuses(series) == ["ACCEPTED", "ACCEPTED", "CANCELLED", "CANCELLED"]


def test_series_flags_on_a_one_off_booking_cancel_just_it(api_client, key, organizer):
    one_off = EventTypeFactory(owner=organizer, length=30)
    booking = BookingFactory(organizer=organizer, event_type=one_off, start_time=berlin(9), end_time=berlin(9, 30))
    other = BookingFactory(organizer=organizer, event_type=one_off, start_time=berlin(11), end_time=berlin(11, 30))
    assert api_client.delete(f"/v1/bookings/{booking.pk}?allRemainingBookings=true", **bearer(key)).status_code == 200
    assert statuses([booking, other]) == ["CANCELLED", "ACCEPTED"]


def test_rescheduling_one_occurrence_keeps_it_in_its_series(api_client, key, event_type):
    series = book_series(api_client, key, event_type)
    series_id = series[0].recurring_event_id
    moved = api_client.post(
        "/v1/bookings",
        v1_body(event_type, berlin(14, week=1), rescheduleUid=series[1].uid),
        format="json",
        **bearer(key),
    )
    assert moved.status_code == 200, moved.json()
    assert moved.json()["recurringEventId"] == series_id
    again = api_client.post(
        f"/v1/bookings/{moved.json()['id']}/reschedule", {"start": z(berlin(15, week=1))}, format="json", **bearer(key)
    )
    assert again.status_code == 200, again.json()
    assert again.json()["booking"]["recurringEventId"] == series_id
    patched = api_client.patch(
        f"/v1/bookings/{series[3].pk}", {"startTime": z(berlin(16, week=3))}, format="json", **bearer(key)
    )
    assert patched.json()["booking"]["recurringEventId"] == series_id
    active = Booking.objects.filter(recurring_event_id=series_id, status=BookingStatus.ACCEPTED).order_by("start_time")
    assert [booking.start_time for booking in active] == [
        berlin(10),
        berlin(15, week=1),
        berlin(10, week=2),
        berlin(16, week=3),
    ]
    refused = api_client.post(
        "/v1/bookings",
        v1_body(event_type, berlin(9, week=2), rescheduleUid=series[2].uid, recurringCount=2),
        format="json",
        **bearer(key),
    )
    assert refused.status_code == 400
    assert "rescheduleUid" in refused.json()["errors"]


# --- webhooks --------------------------------------------------------------------------------------


def test_each_occurrence_gets_its_own_created_event_with_the_series_recurring_event(
    api_client, key, event_type, organizer
):
    webhook = WebhookFactory(
        user=organizer, event_triggers=[WebhookTrigger.BOOKING_CREATED, WebhookTrigger.MEETING_STARTED]
    )
    series = book_series(api_client, key, event_type, count=3)
    created = WebhookDelivery.objects.filter(webhook=webhook, trigger_event=WebhookTrigger.BOOKING_CREATED).order_by(
        "id"
    )
    assert [delivery.payload["uid"] for delivery in created] == [booking.uid for booking in series]
    assert [delivery.payload["startTime"] for delivery in created] == [z(booking.start_time) for booking in series]
    assert {str(delivery.payload["recurringEvent"]) for delivery in created} == {
        str({"freq": 2, "count": 3, "interval": 1})
    }
    assert WebhookScheduledTrigger.objects.filter(webhook=webhook).count() == 3
    # MEETING_* carry the booking record, with its recurringEventId.
    from scheduling.payloads import booking_payload

    assert (
        booking_payload(series[0], trigger=WebhookTrigger.MEETING_STARTED)["recurringEventId"]
        == series[0].recurring_event_id
    )


def test_a_series_that_needs_confirmation_is_requested_occurrence_by_occurrence(api_client, key, event_type, organizer):
    event_type.requires_confirmation = True
    event_type.save()
    webhook = WebhookFactory(
        user=organizer, event_triggers=[WebhookTrigger.BOOKING_REQUESTED, WebhookTrigger.BOOKING_CREATED]
    )
    series = book_series(api_client, key, event_type, count=2)
    assert statuses(series) == ["PENDING", "PENDING"]
    requested = WebhookDelivery.objects.filter(webhook=webhook).order_by("id")
    assert [(delivery.trigger_event, delivery.payload["status"]) for delivery in requested] == [
        ("BOOKING_REQUESTED", "PENDING"),
        ("BOOKING_REQUESTED", "PENDING"),
    ]
    assert requested[0].payload["recurringEvent"] == {"freq": 2, "count": 2, "interval": 1}


@pytest.mark.parametrize(
    ("confirmed", "status", "trigger"), [(True, "ACCEPTED", "BOOKING_CREATED"), (False, "REJECTED", "BOOKING_REJECTED")]
)
def test_deciding_with_the_series_id_decides_every_pending_occurrence(
    api_client, key, event_type, organizer, confirmed, status, trigger
):
    event_type.requires_confirmation = True
    event_type.save()
    series = book_series(api_client, key, event_type, count=3)
    other_series = book_series(api_client, key, event_type, count=2, hour=14)
    webhook = WebhookFactory(
        user=organizer, event_triggers=[WebhookTrigger.BOOKING_CREATED, WebhookTrigger.BOOKING_REJECTED]
    )
    body = {"confirmed": confirmed, "recurringEventId": series[1].recurring_event_id}
    response = api_client.post(f"/v1/bookings/{series[1].pk}/confirm", body, format="json", **bearer(key))
    assert response.status_code == 200, response.json()
    assert (response.json()["status"], response.json()["booking"]["id"]) == (status, series[1].pk)
    assert statuses(series) == [status] * 3
    assert statuses(other_series) == ["PENDING", "PENDING"]
    decided = WebhookDelivery.objects.filter(webhook=webhook)
    assert sorted((delivery.trigger_event, delivery.payload["bookingId"]) for delivery in decided) == sorted(
        (trigger, booking.pk) for booking in series
    )


def test_deciding_with_another_series_id_is_a_400_and_decides_nothing(api_client, key, event_type):
    event_type.requires_confirmation = True
    event_type.save()
    series = book_series(api_client, key, event_type, count=2)
    other_series = book_series(api_client, key, event_type, count=2, hour=14)
    before = WebhookDelivery.objects.count()
    body = {"confirmed": True, "recurringEventId": other_series[0].recurring_event_id}
    response = api_client.post(f"/v1/bookings/{series[0].pk}/confirm", body, format="json", **bearer(key))
    assert response.status_code == 400, response.json()
    assert list(response.json()["errors"]) == ["recurringEventId"]
    assert statuses(series) + statuses(other_series) == ["PENDING"] * 4
    assert WebhookDelivery.objects.count() == before


def test_deciding_without_the_series_id_decides_one_occurrence(api_client, key, event_type):
    event_type.requires_confirmation = True
    event_type.save()
    series = book_series(api_client, key, event_type, count=2)
    response = api_client.post(
        f"/v1/bookings/{series[0].pk}/confirm", {"confirmed": True}, format="json", **bearer(key)
    )
    assert response.status_code == 200, response.json()
    assert statuses(series) == ["ACCEPTED", "PENDING"]
