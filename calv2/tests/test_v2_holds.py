"""Slot reservations (`/v2/slots/reservations`) and out-of-office entries (`/v2/me/ooo`): Cal.com
v2's bodies and answers, the time they hold removed from GET /v2/slots (and v1's /slots), a booking
into it refused with a 409 until the hold expires or goes, and every refusal changing nothing."""

from datetime import datetime, timedelta
from uuid import UUID

import pytest
from django.utils import timezone

from accounts.tests.factories import UserFactory
from calv2.tests.helpers import V2Client, assert_error, event_type_of
from holds.models import OutOfOfficeEntry, SlotReservation
from scheduling.models import Booking

pytestmark = pytest.mark.django_db

SLOTS_VERSION = "2024-09-04"
BOOKING_VERSION = "2024-08-13"


def offered(v2, event_type, day) -> list[str]:
    query = f"eventTypeId={event_type.pk}&start={day}&end={day}"
    answer = v2.call("GET", f"/v2/slots?{query}", version=SLOTS_VERSION)
    assert answer.status_code == 200, answer.content
    return [slot["start"] for slots in answer.json()["data"].values() for slot in slots]


def book(v2, event_type, start, **extra):
    body = {
        "start": start,
        "eventTypeId": event_type.pk,
        "attendee": {"name": "Ada Lovelace", "email": "ada@example.org", "timeZone": "Europe/London"},
        **extra,
    }
    return v2.call("POST", "/v2/bookings", body, version=BOOKING_VERSION)


def next_weekday(days_ahead: int = 7):
    day = (timezone.now() + timedelta(days=days_ahead)).date()
    while day.weekday() >= 5:
        day += timedelta(days=1)
    return day


@pytest.fixture
def event_type(owner):
    return event_type_of(owner, length=30)


@pytest.fixture
def booker(api_client):
    return V2Client(api_client, UserFactory())


def as_instant(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def test_a_reservation_holds_the_slot_until_it_is_freed(v2, booker, event_type):
    day = next_weekday()
    first, second = offered(v2, event_type, day)[:2]

    reserved = booker.call(
        "POST",
        "/v2/slots/reservations",
        {"eventTypeId": event_type.pk, "slotStart": first, "reservationDuration": 10},
        version=SLOTS_VERSION,
    )
    assert reserved.status_code == 201, reserved.content
    data = reserved.json()["data"]
    assert data["eventTypeId"] == event_type.pk and data["slotDuration"] == 30
    assert as_instant(data["slotStart"]) == as_instant(first)
    assert as_instant(data["slotEnd"]) == as_instant(first) + timedelta(minutes=30)
    assert data["reservationDuration"] == 10
    until = as_instant(data["reservationUntil"])
    assert timedelta(minutes=9) < until - timezone.now() <= timedelta(minutes=10)
    uid = data["reservationUid"]

    assert first not in offered(v2, event_type, day)
    assert_error(book(v2, event_type, first), 409, "ConflictException")
    again = {"eventTypeId": event_type.pk, "slotStart": first}
    assert_error(v2.call("POST", "/v2/slots/reservations", again, version=SLOTS_VERSION), 409, "ConflictException")
    assert SlotReservation.objects.count() == 1 and not Booking.objects.exists()

    got = v2.call("GET", f"/v2/slots/reservations/{uid}", version=SLOTS_VERSION)
    assert got.status_code == 200 and got.json()["data"]["reservationUid"] == uid

    moved = booker.call(
        "PATCH",
        f"/v2/slots/reservations/{uid}",
        {"eventTypeId": event_type.pk, "slotStart": second},
        version=SLOTS_VERSION,
    )
    assert moved.status_code == 200, moved.content
    assert moved.json()["data"]["reservationDuration"] == 5
    now_offered = offered(v2, event_type, day)
    assert first in now_offered and second not in now_offered

    freed = booker.call("DELETE", f"/v2/slots/reservations/{uid}", version=SLOTS_VERSION)
    assert freed.status_code == 200
    assert second in offered(v2, event_type, day)
    assert v2.call("GET", f"/v2/slots/reservations/{uid}", version=SLOTS_VERSION).json() == {
        "status": "success",
        "data": None,
    }
    assert book(v2, event_type, second).status_code == 201


def test_an_expired_reservation_holds_nothing(v2, booker, event_type):
    day = next_weekday()
    start = offered(v2, event_type, day)[0]
    reserved = booker.call(
        "POST", "/v2/slots/reservations", {"eventTypeId": event_type.pk, "slotStart": start}, version=SLOTS_VERSION
    )
    uid = reserved.json()["data"]["reservationUid"]
    SlotReservation.objects.update(reserved_until=timezone.now() - timedelta(seconds=1))

    assert start in offered(v2, event_type, day)
    assert v2.call("GET", f"/v2/slots/reservations/{uid}", version=SLOTS_VERSION).json()["data"] is None
    assert_error(
        booker.call("DELETE", f"/v2/slots/reservations/{uid}", version=SLOTS_VERSION), 404, "NotFoundException"
    )
    assert book(v2, event_type, start).status_code == 201


def test_only_the_reserver_or_the_host_may_move_or_free_a_reservation(v2, booker, api_client, event_type):
    day = next_weekday()
    start = offered(v2, event_type, day)[0]
    reserved = booker.call(
        "POST", "/v2/slots/reservations", {"eventTypeId": event_type.pk, "slotStart": start}, version=SLOTS_VERSION
    )
    uid = reserved.json()["data"]["reservationUid"]
    before = list(SlotReservation.objects.values())

    stranger = V2Client(api_client, UserFactory())
    body = {"eventTypeId": event_type.pk, "slotStart": start}
    assert_error(
        stranger.call("PATCH", f"/v2/slots/reservations/{uid}", body, version=SLOTS_VERSION), 403, "ForbiddenException"
    )
    assert_error(
        stranger.call("DELETE", f"/v2/slots/reservations/{uid}", version=SLOTS_VERSION), 403, "ForbiddenException"
    )
    assert list(SlotReservation.objects.values()) == before
    assert v2.call("DELETE", f"/v2/slots/reservations/{uid}", version=SLOTS_VERSION).status_code == 200


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        ({"slotStart": "2030-01-07T09:00:00Z"}, 400, "BadRequestException"),
        ({"eventTypeId": 1, "slotStart": "not a time"}, 400, "BadRequestException"),
        ({"eventTypeId": "7", "slotStart": "SLOT"}, 400, "BadRequestException"),
        ({"eventTypeId": "EVENT", "slotStart": "SLOT", "slotDuration": 45}, 400, "BadRequestException"),
        ({"eventTypeId": "EVENT", "slotStart": "SLOT", "reservationDuration": 0}, 400, "BadRequestException"),
        ({"eventTypeId": "EVENT", "slotStart": "SLOT", "reservationDuration": 1441}, 400, "BadRequestException"),
        ({"eventTypeId": "EVENT", "slotStart": "OFF"}, 409, "ConflictException"),
        ({"eventTypeId": 999999, "slotStart": "SLOT"}, 404, "NotFoundException"),
    ],
)
def test_a_bad_reservation_is_refused_and_holds_nothing(v2, event_type, body, status, code):
    day = next_weekday()
    slot = offered(v2, event_type, day)[0]
    off = (as_instant(slot) + timedelta(minutes=7)).strftime("%Y-%m-%dT%H:%M:%SZ")
    replacements = {"EVENT": event_type.pk, "SLOT": slot, "OFF": off}
    body = {key: replacements.get(value, value) if isinstance(value, str) else value for key, value in body.items()}
    assert_error(v2.call("POST", "/v2/slots/reservations", body, version=SLOTS_VERSION), status, code)
    assert not SlotReservation.objects.exists()
    assert slot in offered(v2, event_type, day)


def test_unknown_reservation_uids(v2):
    for uid in ("not-a-uuid", "3f1c0d0e-2b7a-4c55-9f0e-1f3c5a7b9d21"):
        assert v2.call("GET", f"/v2/slots/reservations/{uid}", version=SLOTS_VERSION).json()["data"] is None
        assert_error(
            v2.call("DELETE", f"/v2/slots/reservations/{uid}", version=SLOTS_VERSION), 404, "NotFoundException"
        )


# --- out of office ----------------------------------------------------------------------------


def test_out_of_office_removes_its_time_from_slots_and_bookings(v2, owner, event_type, api_client):
    day = next_weekday()
    slots = offered(v2, event_type, day)
    start, end = as_instant(slots[0]), as_instant(slots[0]) + timedelta(hours=2)
    cover = UserFactory()
    body = {
        "start": start.isoformat(),
        "end": end.isoformat(),
        "notes": "Dentist",
        "reason": "sick",
        "toUserId": cover.pk,
    }
    created = v2.call("POST", "/v2/me/ooo", body, version=BOOKING_VERSION)
    assert created.status_code == 201, created.content
    entry = created.json()["data"]
    assert (entry["userId"], entry["toUserId"], entry["reason"], entry["notes"]) == (
        owner.pk,
        cover.pk,
        "sick",
        "Dentist",
    )
    assert as_instant(entry["start"]) == start and as_instant(entry["end"]) == end

    remaining = offered(v2, event_type, day)
    assert all(not start <= as_instant(slot) < end for slot in remaining)
    assert any(as_instant(slot) >= end for slot in remaining)
    v1_slots = api_client.get(
        f"/v1/slots?eventTypeId={event_type.pk}&startTime={day}&endTime={day}&apiKey={v2.key}"
    ).json()["slots"]
    assert all(
        not start <= as_instant(slot["time"]) < end for slots_of_day in v1_slots.values() for slot in slots_of_day
    )
    assert_error(book(v2, event_type, slots[0]), 409, "ConflictException")

    listed = v2.call("GET", "/v2/me/ooo", version=BOOKING_VERSION).json()["data"]
    assert [item["id"] for item in listed] == [entry["id"]]
    assert v2.call("GET", f"/v2/me/ooo/{entry['id']}", version=BOOKING_VERSION).json()["data"] == entry

    shorter = v2.call(
        "PATCH",
        f"/v2/me/ooo/{entry['id']}",
        {"end": (start + timedelta(minutes=30)).isoformat(), "toUserId": None},
        version=BOOKING_VERSION,
    )
    assert shorter.status_code == 200, shorter.content
    assert shorter.json()["data"]["toUserId"] is None
    assert slots[1] in offered(v2, event_type, day)

    deleted = v2.call("DELETE", f"/v2/me/ooo/{entry['id']}", version=BOOKING_VERSION)
    assert deleted.status_code == 200
    assert slots[0] in offered(v2, event_type, day)
    assert not OutOfOfficeEntry.objects.exists()


@pytest.mark.parametrize(
    "body",
    [
        {"start": "2030-01-08T00:00:00Z", "end": "2030-01-07T00:00:00Z"},
        {"start": "2030-01-07T00:00:00Z", "end": "2030-01-07T00:00:00Z"},
        {"start": "2030-01-07T00:00:00Z"},
        {"start": "2030-01-07T00:00:00Z", "end": "2030-01-08T00:00:00Z", "reason": "bored"},
        {"start": "2030-01-07T00:00:00Z", "end": "2030-01-08T00:00:00Z", "toUserId": "SELF"},
        {"start": "2030-01-07T00:00:00Z", "end": "2030-01-08T00:00:00Z", "toUserId": 999999},
        {"start": "2030-01-07T00:00:00Z", "end": "2030-01-08T00:00:00Z", "notes": "x" * 2001},
    ],
)
def test_a_bad_out_of_office_entry_is_a_400_and_creates_nothing(v2, owner, body):
    body = {key: owner.pk if value == "SELF" else value for key, value in body.items()}
    assert_error(v2.call("POST", "/v2/me/ooo", body, version=BOOKING_VERSION), 400, "BadRequestException")
    assert not OutOfOfficeEntry.objects.exists()


def test_someone_elses_entry_is_a_404_and_stays(v2, api_client):
    other = UserFactory()
    entry = OutOfOfficeEntry.objects.create(user=other, start=timezone.now(), end=timezone.now() + timedelta(days=1))
    for method in ("GET", "PATCH", "DELETE"):
        body = {"notes": "mine now"} if method == "PATCH" else None
        assert_error(v2.call(method, f"/v2/me/ooo/{entry.pk}", body, version=BOOKING_VERSION), 404, "NotFoundException")
    entry.refresh_from_db()
    assert entry.notes == ""


def reserve(booker, event_type, start) -> str:
    body = {"eventTypeId": event_type.pk, "slotStart": start}
    reserved = booker.call("POST", "/v2/slots/reservations", body, version=SLOTS_VERSION)
    assert reserved.status_code == 201, reserved.content
    return reserved.json()["data"]["reservationUid"]


def test_a_booking_naming_its_reservation_books_the_held_slot_and_frees_it(v2, booker, event_type):
    day = next_weekday()
    start = offered(v2, event_type, day)[0]
    uid = reserve(booker, event_type, start)
    assert_error(book(booker, event_type, start), 409, "ConflictException")

    booked = book(booker, event_type, start, reservationUid=uid)

    assert booked.status_code == 201, booked.content
    assert as_instant(booked.json()["data"]["start"]) == as_instant(start)
    assert not SlotReservation.objects.exists()
    assert Booking.objects.count() == 1
    assert v2.call("GET", f"/v2/slots/reservations/{uid}", version=SLOTS_VERSION).json()["data"] is None


@pytest.mark.parametrize(
    ("other_slot", "extra", "status", "code"),
    [
        (True, {}, 400, "BadRequestException"),  # the reservation holds another slot
        (False, {"recurrenceCount": 2}, 400, "BadRequestException"),  # refused after the hold was freed
    ],
)
def test_a_refused_booking_keeps_the_hold(v2, booker, event_type, other_slot, extra, status, code):
    day = next_weekday()
    first, second = offered(v2, event_type, day)[:2]
    uid = reserve(booker, event_type, first)

    refused = book(booker, event_type, second if other_slot else first, reservationUid=uid, **extra)

    assert_error(refused, status, code)
    assert list(SlotReservation.objects.values_list("uid", flat=True)) == [UUID(uid)]
    assert not Booking.objects.exists()
    assert first not in offered(v2, event_type, day)


@pytest.mark.parametrize("other_uid", ["not-a-uid", "3f1c0d0e-2b7a-4c55-9f0e-1f3c5a7b9d21"])
def test_a_uid_naming_no_reservation_frees_nothing(v2, booker, event_type, other_uid):
    day = next_weekday()
    held, free = offered(v2, event_type, day)[:2]
    uid = reserve(booker, event_type, held)

    assert_error(book(booker, event_type, held, reservationUid=other_uid), 409, "ConflictException")
    assert list(SlotReservation.objects.values_list("uid", flat=True)) == [UUID(uid)]
    assert book(booker, event_type, free, reservationUid=other_uid).status_code == 201


def test_v1_reserved_slot_uid_books_the_held_slot_as_reservation_uid_does(v2, booker, event_type):
    day = next_weekday()
    held = offered(v2, event_type, day)[0]
    uid = reserve(booker, event_type, held)
    body = {
        "eventTypeId": event_type.pk,
        "start": held,
        "timeZone": "Europe/London",
        "responses": {"name": "Ada Lovelace", "email": "ada@example.org"},
    }
    assert booker.call("POST", "/v1/bookings", body).status_code == 409

    booked = booker.call("POST", "/v1/bookings", {**body, "reservedSlotUid": uid})

    assert booked.status_code == 200, booked.content
    assert not SlotReservation.objects.exists() and Booking.objects.count() == 1
