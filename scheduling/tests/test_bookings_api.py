"""Bookings over the API: create, list, get, reschedule, confirm/reject, cancel."""

import threading
from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from rest_framework.test import APIClient

from accounts.tests.factories import AccessTokenFactory, ApiKeyFactory, UserFactory
from payments.models import Payment
from scheduling.models import Attendee, Booking, BookingStatus
from scheduling.tests.factories import BookingFactory, EventTypeFactory
from tests.support.credentials import bearer
from tests.support.live_services import wait_for_a_blocked_transaction
from webhooks.models import WebhookDelivery, WebhookScheduledTrigger, WebhookTrigger
from webhooks.tests.factories import WebhookFactory

pytestmark = pytest.mark.django_db

BERLIN = ZoneInfo("Europe/Berlin")


def monday_ahead(weeks: int = 2) -> date:
    today = timezone.now().astimezone(BERLIN).date()
    return today + timedelta(days=(7 - today.weekday()) % 7 + 7 * weeks)


def berlin(day: date, hour: int, minute: int = 0) -> datetime:
    return datetime.combine(day, time(hour, minute), tzinfo=BERLIN)


def z(value: datetime) -> str:
    return value.astimezone(ZoneInfo("UTC")).strftime("%Y-%m-%dT%H:%M:%SZ")


@pytest.fixture
def organizer():
    return UserFactory(time_zone="Europe/Berlin")


@pytest.fixture
def key(organizer):
    return ApiKeyFactory(user=organizer).raw_key


@pytest.fixture
def event_type(organizer):
    return EventTypeFactory(owner=organizer, length=30)


def booking_body(event_type, when: datetime, **extra) -> dict:
    body = {
        "eventTypeId": event_type.pk,
        "start": when.isoformat(),
        "name": "Grace Hopper",
        "email": "grace@example.org",
        "timeZone": "America/New_York",
    }
    body.update(extra)
    return body


def test_create_booking_in_an_offered_slot(api_client, key, event_type, organizer):
    start = berlin(monday_ahead(), 10)
    response = api_client.post("/v1/bookings", booking_body(event_type, start), format="json", **bearer(key))
    assert response.status_code == 200, response.json()
    booking = response.json()
    assert response["Location"].endswith(f"/v1/bookings/{booking['id']}")
    assert booking["startTime"] == z(start)
    assert booking["endTime"] == z(start + timedelta(minutes=30))
    assert booking["status"] == "ACCEPTED"
    assert booking["userId"] == organizer.pk
    assert booking["eventTypeId"] == event_type.pk
    assert booking["attendees"] == [
        {
            "id": booking["attendees"][0]["id"],
            "name": "Grace Hopper",
            "email": "grace@example.org",
            "timeZone": "America/New_York",
            "locale": "en",
        }
    ]
    assert Booking.objects.get(pk=booking["id"]).organizer == organizer


def test_create_booking_accepts_any_offset_and_normalises_to_utc(api_client, key, event_type):
    start = berlin(monday_ahead(), 11).astimezone(ZoneInfo("Asia/Kathmandu"))
    response = api_client.post("/v1/bookings", booking_body(event_type, start), format="json", **bearer(key))
    assert response.status_code == 200
    assert response.json()["startTime"] == z(start)


def test_booking_outside_availability_is_a_conflict_and_stores_nothing(api_client, key, event_type):
    start = berlin(monday_ahead(), 18)
    response = api_client.post("/v1/bookings", booking_body(event_type, start), format="json", **bearer(key))
    assert response.status_code == 409
    assert response["Content-Type"] == "application/problem+json"
    assert response.json()["code"] == "conflict"
    assert not Booking.objects.exists()


def test_booking_off_the_slot_grid_is_a_conflict(api_client, key, event_type):
    start = berlin(monday_ahead(), 10, 10)
    response = api_client.post("/v1/bookings", booking_body(event_type, start), format="json", **bearer(key))
    assert response.status_code == 409
    assert not Booking.objects.exists()


def test_booking_an_already_booked_slot_is_a_conflict(api_client, key, event_type, organizer):
    start = berlin(monday_ahead(), 10)
    BookingFactory(organizer=organizer, event_type=event_type, start_time=start, end_time=start + timedelta(minutes=30))
    response = api_client.post("/v1/bookings", booking_body(event_type, start), format="json", **bearer(key))
    assert response.status_code == 409
    assert Booking.objects.count() == 1


def test_booking_inside_minimum_notice_is_a_conflict(api_client, key, organizer):
    event_type = EventTypeFactory(owner=organizer, minimum_booking_notice=60 * 24 * 30)
    start = berlin(monday_ahead(weeks=1), 10)
    response = api_client.post("/v1/bookings", booking_body(event_type, start), format="json", **bearer(key))
    assert response.status_code == 409
    assert not Booking.objects.exists()


def test_end_other_than_start_plus_length_is_a_validation_error(api_client, key, event_type):
    start = berlin(monday_ahead(), 10)
    body = booking_body(event_type, start, end=(start + timedelta(minutes=45)).isoformat())
    response = api_client.post("/v1/bookings", body, format="json", **bearer(key))
    assert response.status_code == 400
    assert "end" in response.json()["errors"]
    assert not Booking.objects.exists()


def test_end_equal_to_start_plus_length_is_accepted(api_client, key, event_type):
    start = berlin(monday_ahead(), 10)
    body = booking_body(event_type, start, end=(start + timedelta(minutes=30)).isoformat())
    response = api_client.post("/v1/bookings", body, format="json", **bearer(key))
    assert response.status_code == 200


@pytest.mark.parametrize(
    ("field", "value"),
    [("timeZone", "Mars/Olympus_Mons"), ("email", "not-an-email"), ("start", "next tuesday"), ("metadata", [1])],
)
def test_invalid_booking_field_is_a_400_naming_it(api_client, key, event_type, field, value):
    body = booking_body(event_type, berlin(monday_ahead(), 10), **{field: value})
    response = api_client.post("/v1/bookings", body, format="json", **bearer(key))
    assert response.status_code == 400
    assert field in response.json()["errors"]
    assert not Booking.objects.exists()


def test_invalid_time_zone_error_names_the_value(api_client, key, event_type):
    body = booking_body(event_type, berlin(monday_ahead(), 10), timeZone="Mars/Olympus_Mons")
    response = api_client.post("/v1/bookings", body, format="json", **bearer(key))
    assert "Mars/Olympus_Mons" in response.json()["errors"]["timeZone"][0]


def test_unknown_and_read_only_fields_are_refused(api_client, key, event_type):
    body = booking_body(event_type, berlin(monday_ahead(), 10), uid="abc", colour="red")
    response = api_client.post("/v1/bookings", body, format="json", **bearer(key))
    assert response.status_code == 400
    assert set(response.json()["errors"]) == {"uid", "colour"}
    assert not Booking.objects.exists()


def test_missing_attendee_fields_are_required(api_client, key, event_type):
    response = api_client.post(
        "/v1/bookings",
        {"eventTypeId": event_type.pk, "start": berlin(monday_ahead(), 10).isoformat()},
        format="json",
        **bearer(key),
    )
    assert response.status_code == 400
    assert {"name", "email", "timeZone"} <= set(response.json()["errors"])


def test_booking_a_hidden_event_type_of_someone_else_is_refused(api_client, key):
    hidden = EventTypeFactory(hidden=True)
    body = booking_body(hidden, berlin(monday_ahead(), 10))
    response = api_client.post("/v1/bookings", body, format="json", **bearer(key))
    assert response.status_code == 400
    assert "eventTypeId" in response.json()["errors"]
    assert not Booking.objects.exists()


def test_anyone_may_book_a_public_event_type_and_the_owner_is_the_organizer(api_client, event_type, organizer):
    stranger_key = ApiKeyFactory().raw_key
    response = api_client.post(
        "/v1/bookings", booking_body(event_type, berlin(monday_ahead(), 10)), format="json", **bearer(stranger_key)
    )
    assert response.status_code == 200
    assert Booking.objects.get().organizer == organizer


def test_requires_confirmation_makes_the_booking_pending(api_client, key, organizer):
    event_type = EventTypeFactory(owner=organizer, requires_confirmation=True)
    response = api_client.post(
        "/v1/bookings", booking_body(event_type, berlin(monday_ahead(), 10)), format="json", **bearer(key)
    )
    assert response.json()["status"] == "PENDING"


def test_paid_event_type_creates_an_unpaid_payment(api_client, key, organizer):
    event_type = EventTypeFactory(owner=organizer, price=4500, currency="eur")
    response = api_client.post(
        "/v1/bookings", booking_body(event_type, berlin(monday_ahead(), 10)), format="json", **bearer(key)
    )
    payment = Payment.objects.get()
    assert payment.booking_id == response.json()["id"]
    assert (payment.amount, payment.currency, payment.success, payment.payment_option) == (
        4500,
        "eur",
        False,
        "ON_BOOKING",
    )
    assert payment.app.slug == "stripe"


def test_write_needs_write_booking_scope(api_client, organizer, event_type):
    token = AccessTokenFactory(user=organizer, scope="READ_BOOKING").raw_token
    response = api_client.post(
        "/v1/bookings", booking_body(event_type, berlin(monday_ahead(), 10)), format="json", **bearer(token)
    )
    assert response.status_code == 403
    assert response.json()["code"] == "insufficient_scope"
    assert not Booking.objects.exists()


# --- list and get ------------------------------------------------------------------------------


def test_list_accepts_api_key_in_query_and_bearer_token(api_client, organizer, event_type):
    booking = BookingFactory(organizer=organizer, event_type=event_type)
    BookingFactory()  # someone else's
    raw_key = ApiKeyFactory(user=organizer).raw_key
    token = AccessTokenFactory(user=organizer, scope="READ_BOOKING").raw_token
    by_key = api_client.get(f"/bookings?apiKey={raw_key}")
    by_token = api_client.get("/v1/bookings", **bearer(token))
    for response in (by_key, by_token):
        assert response.status_code == 200
        assert [row["id"] for row in response.json()["bookings"]] == [booking.pk]
        assert response.json()["pagination"] == {
            "page": 1,
            "take": 100,
            "total": 1,
            "totalIsExact": True,
            "hasNextPage": False,
            "nextCursor": None,
        }


def test_list_without_read_booking_scope_is_refused(api_client, organizer):
    token = AccessTokenFactory(user=organizer, scope="READ_PROFILE").raw_token
    response = api_client.get("/v1/bookings", **bearer(token))
    assert response.status_code == 403
    assert 'scope="READ_BOOKING"' in response["WWW-Authenticate"]


def test_list_without_credentials_is_401(api_client):
    response = api_client.get("/v1/bookings")
    assert response.status_code == 401


def test_list_filters_by_status_event_type_and_time(api_client, key, organizer, event_type):
    other_type = EventTypeFactory(owner=organizer)
    day = monday_ahead()
    early = BookingFactory(
        organizer=organizer, event_type=event_type, start_time=berlin(day, 9), end_time=berlin(day, 9, 30)
    )
    late = BookingFactory(
        organizer=organizer, event_type=event_type, start_time=berlin(day, 15), end_time=berlin(day, 15, 30)
    )
    cancelled = BookingFactory(
        organizer=organizer,
        event_type=other_type,
        start_time=berlin(day, 12),
        end_time=berlin(day, 12, 30),
        status=BookingStatus.CANCELLED,
    )

    def ids(query):
        response = api_client.get(f"/v1/bookings?{query}", **bearer(key))
        assert response.status_code == 200, response.json()
        return [row["id"] for row in response.json()["bookings"]]

    assert ids("status=CANCELLED") == [cancelled.pk]
    assert ids("status=accepted,cancelled") == [early.pk, late.pk, cancelled.pk]
    assert ids(f"eventTypeId={other_type.pk}") == [cancelled.pk]
    assert ids(f"afterStartTime={z(berlin(day, 12))}") == [late.pk, cancelled.pk]
    assert ids(f"beforeEndTime={z(berlin(day, 12, 30))}") == [early.pk, cancelled.pk]
    assert ids(f"afterStartTime={z(berlin(day, 10))}&beforeEndTime={z(berlin(day, 13))}") == [cancelled.pk]


@pytest.mark.parametrize(
    "query", ["status=DONE", "eventTypeId=abc", "afterStartTime=yesterday", "beforeEndTime=2026-13-01", "take=501"]
)
def test_bad_list_filter_is_a_400(api_client, key, query):
    response = api_client.get(f"/v1/bookings?{query}", **bearer(key))
    assert response.status_code == 400
    assert response.json()["code"] == "validation_error"


def test_admin_lists_everyones_bookings_and_filters_by_user(api_client):
    admin = UserFactory(role="ADMIN")
    first, second = BookingFactory(), BookingFactory()
    admin_key = ApiKeyFactory(user=admin).raw_key
    everyone = api_client.get("/v1/bookings", **bearer(admin_key)).json()["bookings"]
    assert [row["id"] for row in everyone] == [first.pk, second.pk]
    one = api_client.get(f"/v1/bookings?userId={second.organizer_id}", **bearer(admin_key)).json()["bookings"]
    assert [row["id"] for row in one] == [second.pk]


def test_non_admin_filtering_by_another_user_is_forbidden(api_client, key):
    other = BookingFactory()
    response = api_client.get(f"/v1/bookings?userId={other.organizer_id}", **bearer(key))
    assert response.status_code == 403


def test_list_query_count_does_not_grow_with_rows(api_client, django_assert_num_queries, organizer, key):
    BookingFactory(organizer=organizer)
    api_client.get("/v1/bookings", **bearer(key))  # the key's lastUsedAt is written on first use
    # credential, the caller's event types (scheduling.selectors.bookings.booking_visibility),
    # bookings with organizer and event type, attendees, team members; a list that ends on its page
    # needs no COUNT (one that does not is counted: core/tests/test_api_framework.py)
    with django_assert_num_queries(5):
        response = api_client.get("/v1/bookings", **bearer(key))
    assert len(response.json()["bookings"]) == 1
    for _ in range(49):
        BookingFactory(organizer=organizer, attendees=[{}, {}])
    with django_assert_num_queries(5):
        response = api_client.get("/v1/bookings", **bearer(key))
    assert len(response.json()["bookings"]) == 50
    last = Booking.objects.last()
    # credential, event types, booking with organizer and event type, attendees, team members
    with django_assert_num_queries(5):
        assert api_client.get(f"/v1/bookings/{last.pk}", **bearer(key)).json()["booking"]["uid"] == last.uid


def test_list_and_get_write_the_body_create_reschedule_and_cancel_write(api_client, key, organizer):
    """GET reads rows (core.fastpath), the writes answer with model instances (`booking_list`):
    both must write the same bytes for the same booking."""
    event_type = EventTypeFactory(owner=organizer, length=30, price=4500, currency="eur")
    body = booking_body(
        event_type,
        berlin(monday_ahead(), 10),
        description="Agenda: naïve questions",
        location="https://meet.example.com/ÿ",
        metadata={"source": "web", "nested": {"ids": [1, 2], "none": None}},
    )
    created = api_client.post("/v1/bookings", body, format="json", **bearer(key))
    assert created.status_code == 200, created.json()
    booking_id = created.json()["id"]
    assert Payment.objects.filter(booking_id=booking_id).exists()
    # The create answer is Cal.com v1's: the booking object, plus what v1 added to a new one.
    created_booking = {
        name: value
        for name, value in created.json().items()
        if name not in {"payment", "paymentRequired", "paymentUid", "paymentId", "creationSource"}
    }

    def bodies_read():
        listed = api_client.get("/v1/bookings", **bearer(key)).json()["bookings"]
        return [booking for booking in listed if booking["id"] == booking_id] + [
            api_client.get(f"/v1/bookings/{booking_id}", **bearer(key)).json()["booking"]
        ]

    assert bodies_read() == [created_booking] * 2
    assert created_booking["eventType"]["id"] == event_type.pk
    assert created_booking["cancellationReason"] is None

    later = {"startTime": berlin(monday_ahead(), 11).isoformat()}
    moved = api_client.patch(f"/v1/bookings/{booking_id}", later, format="json", **bearer(key))
    assert moved.status_code == 200, moved.json()
    assert bodies_read() == [moved.json()["booking"]] * 2

    cancelled = api_client.delete(f"/v1/bookings/{booking_id}/cancel?cancellationReason=Clash", **bearer(key))
    assert cancelled.status_code == 200
    assert cancelled.json()["booking"]["cancellationReason"] == "Clash"
    assert bodies_read() == [cancelled.json()["booking"]] * 2


V1_EXTRAS = {"payment", "paymentRequired", "paymentUid", "paymentId", "creationSource"}
WEEKLY = {"freq": 2, "interval": 1, "count": 10}


def _plain(api_client, organizer):
    event_type = EventTypeFactory(owner=organizer, length=30)
    return booking_body(event_type, berlin(monday_ahead(), 10)), bearer(ApiKeyFactory(user=organizer).raw_key)


def _oauth_token_with_v1_answers(api_client, organizer):
    event_type = EventTypeFactory(owner=organizer, length=60)
    body = {
        "eventTypeId": event_type.pk,
        "start": berlin(monday_ahead(), 10).astimezone(ZoneInfo("Asia/Kolkata")).isoformat(),
        "responses": {
            "name": "Grace Hopper",
            "email": "grace@example.org",
            "location": {"value": "inPerson", "optionValue": "Bürö 4 😀"},
            "notes": "Line one\nline two",
            "guests": ["ada@example.org", "alan@example.org"],
        },
        "timeZone": "Asia/Kolkata",
        "language": "de",
        "metadata": {"z": 1, "a": [1.5, -2, None, True, "x"], "nested": {"ids": [1, 2]}, "big": 1.5e19},
    }
    token = AccessTokenFactory(user=organizer, scope="READ_BOOKING WRITE_BOOKING").raw_token
    return body, bearer(token)


def _paid(api_client, organizer):
    event_type = EventTypeFactory(owner=organizer, length=30, price=4500, currency="eur")
    return booking_body(event_type, berlin(monday_ahead(), 11)), bearer(ApiKeyFactory(user=organizer).raw_key)


def _pending(api_client, organizer):
    event_type = EventTypeFactory(owner=organizer, length=30, requires_confirmation=True)
    body = booking_body(event_type, berlin(monday_ahead(), 12), title="Intro call", description="Agenda")
    return body, bearer(ApiKeyFactory(user=organizer).raw_key)


def _someone_elses_public_event_type(api_client, organizer):
    event_type = EventTypeFactory(owner=UserFactory(time_zone="Europe/Berlin"), length=30, hidden=False)
    return booking_body(event_type, berlin(monday_ahead(), 10)), bearer(ApiKeyFactory(user=organizer).raw_key)


def _team_event_type(api_client, organizer):
    from accounts.tests.factories import MembershipFactory, TeamFactory
    from scheduling.tests.factories import ScheduleFactory

    team = TeamFactory()
    MembershipFactory(team=team, user=organizer, accepted=True)
    event_type = EventTypeFactory(owner=None, team=team, length=30, schedule=ScheduleFactory(user=organizer))
    return booking_body(event_type, berlin(monday_ahead(), 10)), bearer(ApiKeyFactory(user=organizer).raw_key)


def _reschedule(api_client, organizer):
    event_type = EventTypeFactory(owner=organizer, length=30)
    headers = bearer(ApiKeyFactory(user=organizer).raw_key)
    first = api_client.post(
        "/v1/bookings", booking_body(event_type, berlin(monday_ahead(), 10)), format="json", **headers
    )
    assert first.status_code == 200, first.json()
    body = booking_body(event_type, berlin(monday_ahead(), 14), rescheduleUid=first.json()["uid"])
    return body, headers


def _series(api_client, organizer):
    event_type = EventTypeFactory(owner=organizer, length=30, recurring_event=WEEKLY)
    body = booking_body(event_type, berlin(monday_ahead(), 10), recurringCount=3)
    return body, bearer(ApiKeyFactory(user=organizer).raw_key)


def _one_occurrence_of_a_series(api_client, organizer):
    event_type = EventTypeFactory(owner=organizer, length=30, recurring_event=WEEKLY)
    starts = [berlin(monday_ahead() + timedelta(weeks=week), 10) for week in range(3)]
    body = booking_body(
        event_type,
        starts[1],
        recurringEventId="booker-series",
        allRecurringDates=[{"start": z(start), "end": z(start + timedelta(minutes=30))} for start in starts],
        currentRecurringIndex=1,
    )
    return body, bearer(ApiKeyFactory(user=organizer).raw_key)


CREATE_CASES = {
    "plain": _plain,
    "oauth token, v1 answers, guests, an offset": _oauth_token_with_v1_answers,
    "paid": _paid,
    "pending": _pending,
    "someone else's public event type": _someone_elses_public_event_type,
    "team event type": _team_event_type,
    "reschedule": _reschedule,
    "series": _series,
    "one occurrence of a series": _one_occurrence_of_a_series,
}


@pytest.mark.parametrize("case", CREATE_CASES.values(), ids=CREATE_CASES.keys())
def test_create_answers_exactly_what_get_shows(api_client, organizer, case):
    """A create answers with the booking as written, reading nothing back (scheduling.views.bookings);
    that answer is what GET /{id} shows the organizer, for every way of booking. Its payments are
    the booking's rows."""
    body, headers = case(api_client, organizer)

    created = api_client.post("/v1/bookings", body, format="json", **headers)

    assert created.status_code == 200, created.json()
    answer = created.json()
    booking = Booking.objects.get(pk=answer["id"])
    viewer = bearer(ApiKeyFactory(user=booking.organizer).raw_key)
    shown = api_client.get(f"/v1/bookings/{booking.pk}", **viewer)
    assert shown.status_code == 200
    assert {name: value for name, value in answer.items() if name not in V1_EXTRAS} == shown.json()["booking"]
    payments = [
        {"id": payment.pk, "uid": payment.uid, "success": payment.success, "paymentOption": payment.payment_option}
        for payment in Payment.objects.filter(booking=booking).order_by("id")
    ]
    assert answer["payment"] == payments
    assert answer["paymentRequired"] is bool(payments)
    assert (answer.get("paymentUid"), answer.get("paymentId")) == (
        (payments[0]["uid"], payments[0]["id"]) if payments else (None, None)
    )


@pytest.mark.fastpath  # the machinery's own work, not the answer
def test_create_reads_nothing_back_after_its_writes(api_client, key, event_type):
    """After the booking's INSERT, no statement reads a booking, an attendee or a payment: the answer
    is the booking as written."""
    api_client.get("/v1/bookings", **bearer(key))  # the key's lastUsedAt write happens once a minute
    with CaptureQueriesContext(connection) as context:
        response = api_client.post(
            "/v1/bookings", booking_body(event_type, berlin(monday_ahead(), 10)), format="json", **bearer(key)
        )
    assert response.status_code == 200
    statements = [query["sql"] for query in context.captured_queries]
    written = next(index for index, sql in enumerate(statements) if sql.startswith('INSERT INTO "scheduling_booking"'))
    read_after = [
        sql
        for sql in statements[written:]
        if sql.startswith("SELECT")
        and any(table in sql for table in ('"scheduling_booking"', '"scheduling_attendee"', '"payments_payment"'))
    ]
    assert read_after == []


def test_booking_rows_write_what_model_instances_write(django_assert_num_queries, organizer):
    from core.fastpath import read_rows
    from scheduling.selectors.bookings import booking_list
    from scheduling.serializers.bookings import BookingSerializer

    event_type = EventTypeFactory(owner=organizer)
    BookingFactory(
        organizer=organizer,
        event_type=event_type,
        attendees=[{"name": "Ada"}, {"name": "Grace", "time_zone": "Asia/Tokyo"}],
        metadata={"a": [1, {"b": None}]},
        description="Long\nnotes",
        location="Room 4",
    )
    BookingFactory(organizer=organizer, event_type=None, attendees=[])  # its event type was deleted
    BookingFactory(organizer=organizer, status=BookingStatus.CANCELLED, cancellation_reason="Ill")
    BookingFactory()  # someone else's
    admin = UserFactory(role="ADMIN")

    for user, count in ((organizer, 3), (admin, 4)):
        visible = booking_list(user=user)  # reads the caller's event types (booking_visibility)
        with django_assert_num_queries(3):  # bookings with organizer and event type, attendees, team members
            rows = list(read_rows(visible, BookingSerializer))
        models = list(booking_list(user=user))
        assert len(rows) == count
        assert BookingSerializer(rows, many=True).data == BookingSerializer(models, many=True).data
    assert [len(booking["attendees"]) for booking in BookingSerializer(rows, many=True).data] == [2, 0, 1, 1]
    assert BookingSerializer(rows[1]).data["eventType"] is None


def test_get_own_booking(api_client, key, organizer):
    booking = BookingFactory(organizer=organizer)
    response = api_client.get(f"/v1/bookings/{booking.pk}", **bearer(key))
    assert response.status_code == 200
    assert response.json()["booking"]["uid"] == booking.uid


def test_get_someone_elses_booking_is_404(api_client, key):
    booking = BookingFactory()
    response = api_client.get(f"/bookings/{booking.pk}", **bearer(key))
    assert response.status_code == 404
    assert response.json()["code"] == "not_found"


# --- reschedule, confirm, reject, cancel --------------------------------------------------------


def make_booking(organizer, event_type, start, **extra):
    return BookingFactory(
        organizer=organizer, event_type=event_type, start_time=start, end_time=start + timedelta(minutes=30), **extra
    )


def test_reschedule_moves_the_booking_to_another_offered_slot(api_client, key, organizer, event_type):
    booking = make_booking(organizer, event_type, berlin(monday_ahead(), 10))
    new_start = berlin(monday_ahead(), 14)
    response = api_client.patch(
        f"/v1/bookings/{booking.pk}", {"startTime": new_start.isoformat()}, format="json", **bearer(key)
    )
    assert response.status_code == 200, response.json()
    assert response.json()["booking"]["startTime"] == z(new_start)
    booking.refresh_from_db()
    assert (booking.start_time, booking.end_time) == (new_start, new_start + timedelta(minutes=30))


def test_reschedule_may_overlap_the_bookings_own_old_time(api_client, key, organizer):
    event_type = EventTypeFactory(owner=organizer, length=60, slot_interval=30)
    booking = BookingFactory(
        organizer=organizer,
        event_type=event_type,
        start_time=berlin(monday_ahead(), 10),
        end_time=berlin(monday_ahead(), 11),
    )
    response = api_client.patch(
        f"/v1/bookings/{booking.pk}",
        {"startTime": berlin(monday_ahead(), 10, 30).isoformat()},
        format="json",
        **bearer(key),
    )
    assert response.status_code == 200, response.json()


def test_reschedule_onto_a_taken_slot_is_a_conflict_and_changes_nothing(api_client, key, organizer, event_type):
    booking = make_booking(organizer, event_type, berlin(monday_ahead(), 10))
    make_booking(organizer, event_type, berlin(monday_ahead(), 14))
    response = api_client.patch(
        f"/v1/bookings/{booking.pk}",
        {"startTime": berlin(monday_ahead(), 14).isoformat()},
        format="json",
        **bearer(key),
    )
    assert response.status_code == 409
    booking.refresh_from_db()
    assert booking.start_time == berlin(monday_ahead(), 10)


def test_reschedule_of_a_cancelled_booking_is_a_conflict(api_client, key, organizer, event_type):
    booking = make_booking(organizer, event_type, berlin(monday_ahead(), 10), status=BookingStatus.CANCELLED)
    response = api_client.patch(
        f"/v1/bookings/{booking.pk}",
        {"startTime": berlin(monday_ahead(), 14).isoformat()},
        format="json",
        **bearer(key),
    )
    assert response.status_code == 409
    booking.refresh_from_db()
    assert booking.start_time == berlin(monday_ahead(), 10)


def test_confirm_and_reject_a_pending_booking(api_client, key, organizer, event_type):
    first = make_booking(organizer, event_type, berlin(monday_ahead(), 10), status=BookingStatus.PENDING)
    second = make_booking(organizer, event_type, berlin(monday_ahead(), 11), status=BookingStatus.PENDING)
    confirmed = api_client.patch(f"/v1/bookings/{first.pk}", {"status": "ACCEPTED"}, format="json", **bearer(key))
    rejected = api_client.patch(f"/v1/bookings/{second.pk}", {"status": "REJECTED"}, format="json", **bearer(key))
    assert confirmed.json()["booking"]["status"] == "ACCEPTED"
    assert rejected.json()["booking"]["status"] == "REJECTED"


def test_confirming_an_accepted_booking_is_a_conflict(api_client, key, organizer, event_type):
    booking = make_booking(organizer, event_type, berlin(monday_ahead(), 10))
    response = api_client.patch(f"/v1/bookings/{booking.pk}", {"status": "ACCEPTED"}, format="json", **bearer(key))
    assert response.status_code == 409
    booking.refresh_from_db()
    assert booking.status == BookingStatus.ACCEPTED


@pytest.mark.parametrize(
    "body",
    [
        {"status": "PENDING"},
        {},
        {"status": "ACCEPTED", "startTime": "2030-01-01T10:00:00Z"},
        {"title": ""},
        {"endTime": "2030-01-01T10:00:00Z"},
        {"createdAt": "2030-01-01T10:00:00Z"},
        {"uid": "another"},
        {"cancelledBy": "someone@example.org"},
        {"startTime": "not a date"},
    ],
)
def test_bad_patch_is_a_400_and_changes_nothing(api_client, key, organizer, event_type, body):
    booking = make_booking(organizer, event_type, berlin(monday_ahead(), 10), status=BookingStatus.PENDING)
    response = api_client.patch(f"/v1/bookings/{booking.pk}", body, format="json", **bearer(key))
    assert response.status_code == 400
    booking.refresh_from_db()
    assert booking.status == BookingStatus.PENDING
    assert booking.start_time == berlin(monday_ahead(), 10)


def test_patching_someone_elses_booking_is_404(api_client, key):
    booking = BookingFactory(status=BookingStatus.PENDING)
    response = api_client.patch(f"/v1/bookings/{booking.pk}", {"status": "ACCEPTED"}, format="json", **bearer(key))
    assert response.status_code == 404
    booking.refresh_from_db()
    assert booking.status == BookingStatus.PENDING


def test_cancel_with_a_reason(api_client, key, organizer, event_type):
    booking = make_booking(organizer, event_type, berlin(monday_ahead(), 10))
    response = api_client.delete(
        f"/v1/bookings/{booking.pk}/cancel", {"cancellationReason": "Ill"}, format="json", **bearer(key)
    )
    assert response.status_code == 200
    assert response.json()["message"] == "Booking successfully cancelled."
    assert response.json()["booking"]["status"] == "CANCELLED"
    assert response.json()["booking"]["cancellationReason"] == "Ill"


def test_cancel_reason_as_query_parameter_for_v1_clients(api_client, key, organizer, event_type):
    booking = make_booking(organizer, event_type, berlin(monday_ahead(), 10))
    response = api_client.delete(f"/bookings/{booking.pk}/cancel?cancellationReason=Clash", **bearer(key))
    assert response.status_code == 200
    booking.refresh_from_db()
    assert (booking.status, booking.cancellation_reason) == (BookingStatus.CANCELLED, "Clash")


def test_cancelled_slot_can_be_booked_again(api_client, key, organizer, event_type):
    start = berlin(monday_ahead(), 10)
    make_booking(organizer, event_type, start, status=BookingStatus.CANCELLED)
    response = api_client.post("/v1/bookings", booking_body(event_type, start), format="json", **bearer(key))
    assert response.status_code == 200


def test_cancelling_twice_is_a_conflict(api_client, key, organizer, event_type):
    booking = make_booking(
        organizer, event_type, berlin(monday_ahead(), 10), status=BookingStatus.CANCELLED, cancellation_reason="first"
    )
    response = api_client.delete(f"/v1/bookings/{booking.pk}/cancel", **bearer(key))
    assert response.status_code == 409
    booking.refresh_from_db()
    assert booking.cancellation_reason == "first"


def test_cancel_with_unknown_body_field_is_a_400(api_client, key, organizer, event_type):
    booking = make_booking(organizer, event_type, berlin(monday_ahead(), 10))
    response = api_client.delete(f"/v1/bookings/{booking.pk}/cancel", {"why": "x"}, format="json", **bearer(key))
    assert response.status_code == 400
    booking.refresh_from_db()
    assert booking.status == BookingStatus.ACCEPTED


def test_cal_com_v1_body_with_responses_and_language_books(api_client, key, event_type):
    body = {
        "eventTypeId": event_type.pk,
        "start": berlin(monday_ahead(), 10).isoformat(),
        "responses": {
            "name": "Grace Hopper",
            "email": "grace@example.org",
            "location": {"value": "inPerson", "optionValue": "Berlin office"},
            "notes": "Bring the slides",
        },
        "timeZone": "America/New_York",
        "language": "en",
        "metadata": {},
    }
    response = api_client.post("/v1/bookings", body, format="json", **bearer(key))
    assert response.status_code == 200, response.json()
    booking = response.json()
    assert booking["attendees"][0]["name"] == "Grace Hopper"
    assert (booking["location"], booking["description"]) == ("Berlin office", "Bring the slides")


def test_v1_responses_with_unknown_answer_is_a_400_naming_it(api_client, key, event_type):
    body = booking_body(event_type, berlin(monday_ahead(), 10), responses={"favouriteColour": "red"})
    response = api_client.post("/v1/bookings", body, format="json", **bearer(key))
    assert response.status_code == 400
    assert "responses.favouriteColour" in response.json()["errors"]
    assert not Booking.objects.exists()


@pytest.mark.parametrize(
    ("field", "value"),
    [("start", "9999-12-31T23:50:00Z"), ("start", "0001-01-01T00:00:00+01:00"), ("metadata", {"note": "a\x00b"})],
)
def test_values_the_database_or_calendar_cannot_hold_are_a_400(api_client, key, event_type, field, value):
    body = booking_body(event_type, berlin(monday_ahead(), 10), **{field: value})
    response = api_client.post("/v1/bookings", body, format="json", **bearer(key))
    assert response.status_code == 400
    assert field in response.json()["errors"]
    assert not Booking.objects.exists()


def test_reschedule_to_the_end_of_time_is_a_400(api_client, key, organizer, event_type):
    booking = make_booking(organizer, event_type, berlin(monday_ahead(), 10))
    response = api_client.patch(
        f"/v1/bookings/{booking.pk}", {"startTime": "9999-12-31T23:59:00Z"}, format="json", **bearer(key)
    )
    assert response.status_code == 400
    booking.refresh_from_db()
    assert booking.start_time == berlin(monday_ahead(), 10)


# --- what a create costs, and what the database refuses -------------------------------------------


def test_create_runs_a_fixed_number_of_queries(api_client, key, event_type, organizer, django_assert_num_queries):
    """Authentication, the event type, the transaction (a savepoint inside the test's), the slot's
    two reads, one INSERT each for the booking, its attendee, the outbox rows and the scheduled
    triggers, one read of the webhooks for all of them, and the calendar outbox's INSERT … SELECT
    (a row only when the organizer has a destination calendar); for its e-mails, one INSERT of
    the messages (the event type's mail settings come with the event type). No query validates
    (the database enforces what `full_clean()` would check with one each), and none reads the
    answer back."""
    WebhookFactory(user=organizer, event_triggers=[WebhookTrigger.BOOKING_CREATED, WebhookTrigger.MEETING_STARTED])
    WebhookFactory(user=organizer, event_triggers=[WebhookTrigger.BOOKING_CREATED, WebhookTrigger.MEETING_ENDED])
    api_client.get("/v1/bookings", **bearer(key))  # the key's lastUsedAt write happens once a minute
    with django_assert_num_queries(13):
        response = api_client.post(
            "/v1/bookings", booking_body(event_type, berlin(monday_ahead(), 10)), format="json", **bearer(key)
        )
    assert response.status_code == 200
    assert WebhookDelivery.objects.count() == 2
    assert WebhookScheduledTrigger.objects.count() == 2


def test_a_title_longer_than_its_column_is_a_400_and_stores_nothing(api_client, key, organizer):
    """The title made of the event type's and both people's names can outgrow its 500 characters."""
    organizer.name = "N" * 200
    organizer.save()
    event_type = EventTypeFactory(owner=organizer, title="T" * 200)
    body = booking_body(event_type, berlin(monday_ahead(), 10), name="A" * 200)

    response = api_client.post("/v1/bookings", body, format="json", **bearer(key))

    assert response.status_code == 400
    problem = response.json()
    message = "Ensure this value has at most 500 characters (it has 614)."
    assert problem == {
        "status": 400,
        "code": "validation_error",
        "title": "Validation error",
        "detail": f"Invalid input. title: {message}",
        "message": f"Invalid input. title: {message}",
        "requestId": problem["requestId"],
        "errors": {"title": [message]},
    }
    assert not Booking.objects.exists()
    assert not Attendee.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_an_overlap_only_the_database_sees_is_a_409_that_stores_nothing(organizer, key, event_type):
    """The exclusion constraint, not the slot check, refuses a booking whose rival is not yet
    committed when the slot is checked: the request waits for the rival, then gets the 409."""
    start = berlin(monday_ahead(), 10)
    responses = []

    def book_in_another_connection():
        try:
            responses.append(
                APIClient().post("/v1/bookings", booking_body(event_type, start), format="json", **bearer(key))
            )
        finally:
            connection.close()

    request = threading.Thread(target=book_in_another_connection)
    with transaction.atomic():
        rival = BookingFactory(organizer=organizer, start_time=start, end_time=start + timedelta(minutes=30))
        request.start()
        wait_for_a_blocked_transaction("the booking's INSERT to wait for the rival's transaction")
    request.join(30)

    [response] = responses
    assert response.status_code == 409
    problem = response.json()
    detail = "The organizer already has a booking at this time."
    assert problem == {
        "status": 409,
        "code": "conflict",
        "title": "Conflict",
        "detail": detail,
        "message": detail,
        "requestId": problem["requestId"],
    }
    assert list(Booking.objects.values_list("pk", flat=True)) == [rival.pk]
    assert not Attendee.objects.exclude(booking=rival).exists()
