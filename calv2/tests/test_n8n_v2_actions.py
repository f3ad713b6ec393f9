"""n8n's Cal.com actions on API v2 (the node's `actions/` folder), replayed as they call.

n8n-io/n8n, packages/nodes-base/nodes/Cal/ (the pull request adding booking, event type, schedule
and slot actions); each operation's exact call (method, path, `cal-api-version`, body, query) is
the one pinned by its unit test in test/actions/<resource>.test.ts:
- actions/booking/create.operation.ts: `POST /bookings`, 2026-02-25, `{eventTypeId, start,
  attendee: {name, timeZone, email?, phoneNumber?, language?}, guests?, instant?,
  lengthInMinutes?, recurrenceCount?, metadata?, bookingFieldsResponses?}` (metadata and booking
  field responses from name/value pairs, guests split on commas); the output is `response.data`.
- actions/booking/get.operation.ts: `GET /bookings/{uid}` (the uid URL-encoded), 2026-02-25.
- actions/booking/getMany.operation.ts: `GET /bookings` with the filters that are set, through
  `calApiRequestV2AllItems` and 2026-05-01, the cursor mode: "Return All" follows `nextCursor`
  while `hasMore` (helpers/interfaces.ts).
- actions/booking/cancel.operation.ts: `POST /bookings/{uid}/cancel`, 2026-02-25, with the
  options that are set (`cancellationReason`, `cancelSubsequentBookings`, `seatUid`).
- actions/booking/reschedule.operation.ts: `POST /bookings/{uid}/reschedule`, 2026-02-25,
  `{start, reschedulingReason?, rescheduleWithSameHost?}`.
- actions/eventType/get.operation.ts and getMany.operation.ts: `GET /event-types/{id}` and
  `GET /event-types` with the filters that are set (`username`, `eventSlug` only with a username),
  2024-06-14; getMany cuts the list to its limit.
- actions/schedule/{create,get,getMany,update,delete}.operation.ts: `/schedules` with 2024-06-11;
  create sends `{name, timeZone, isDefault, availability?, overrides?}` (collection rows without
  days or date left out), update only the fields set, delete reports `{success, scheduleId}`
  since the API answers a status only.
- actions/slot/getMany.operation.ts: `GET /slots`, 2024-09-04, query `{eventTypeId, start, end,
  timeZone?, duration?, bookingUidToReschedule?}`; "Simplify" folds the date into each slot.
- actions/helpers.ts `toQuery`: empty filters are left out.
"""

import json
from datetime import datetime, timedelta
from urllib.parse import quote, urlencode

import pytest
from django.utils import timezone

from accounts.tests.factories import ApiKeyFactory, UserFactory
from calv2.tests.helpers import booking_at
from scheduling.models import Booking
from scheduling.tests.factories import BookingFactory, EventTypeFactory, ScheduleFactory

pytestmark = pytest.mark.django_db

BOOKINGS_WRITE = "2026-02-25"
BOOKINGS_LIST = "2026-05-01"
EVENT_TYPES = "2024-06-14"
SCHEDULES = "2024-06-11"
SLOTS = "2024-09-04"


class N8nCalActions:
    def __init__(self, client, api_key: str):
        self.client, self.api_key = client, api_key

    def request(self, method, resource, version, body=None, query=None) -> dict:
        url = f"/v2{resource}" + (f"?{urlencode(query)}" if query else "")
        response = self.client.generic(
            method,
            url,
            json.dumps(body) if body is not None else "",
            content_type="application/json",
            HTTP_AUTHORIZATION=f"Bearer {self.api_key}",
            HTTP_CAL_API_VERSION=version,
        )
        assert 200 <= response.status_code < 300, response.content
        return response.json()

    def booking_create(self, *, event_type_id, start, attendee_name, attendee_time_zone, additional=None):
        additional = additional or {}
        attendee = {"name": attendee_name, "timeZone": attendee_time_zone}
        for name in ("email", "phoneNumber", "language"):
            if additional.get(name):
                attendee[name] = additional[name]
        body = {"eventTypeId": event_type_id, "start": start, "attendee": attendee}
        if additional.get("guests"):
            body["guests"] = [guest.strip() for guest in additional["guests"].split(",") if guest.strip()]
        if additional.get("lengthInMinutes") is not None:
            body["lengthInMinutes"] = additional["lengthInMinutes"]
        if additional.get("metadata"):
            body["metadata"] = {pair["name"]: pair["value"] for pair in additional["metadata"]}
        return self.request("POST", "/bookings", BOOKINGS_WRITE, body).get("data") or {}

    def booking_get_many(self, filters: dict, limit: float) -> list[dict]:
        query = {name: value for name, value in filters.items() if value not in (None, "")}
        items: list[dict] = []
        cursor = None
        while len(items) < limit:
            page_query = {**query, "limit": int(min(limit - len(items), 100))}
            if cursor:
                page_query["cursor"] = cursor
            response = self.request("GET", "/bookings", BOOKINGS_LIST, query=page_query)
            items += response["data"]
            pagination = response.get("pagination") or {}
            if not pagination.get("hasMore") or not pagination.get("nextCursor"):
                break
            cursor = pagination["nextCursor"]
        return items

    def booking_get(self, uid: str) -> dict:
        return self.request("GET", f"/bookings/{quote(uid, safe='')}", BOOKINGS_WRITE)["data"]

    def booking_cancel(self, uid: str, options: dict) -> dict:
        body = {name: value for name, value in options.items() if value not in (None, "")}
        return self.request("POST", f"/bookings/{uid}/cancel", BOOKINGS_WRITE, body)["data"]

    def booking_reschedule(self, uid: str, start: str, options: dict) -> dict:
        body = {"start": start, **{name: value for name, value in options.items() if value not in (None, "")}}
        return self.request("POST", f"/bookings/{uid}/reschedule", BOOKINGS_WRITE, body)["data"]

    def event_type_get(self, event_type_id: int) -> dict:
        return self.request("GET", f"/event-types/{event_type_id}", EVENT_TYPES)["data"]

    def event_type_get_many(self, filters: dict, limit: float) -> list[dict]:
        query = {name: value for name, value in filters.items() if value not in (None, "")}
        data = self.request("GET", "/event-types", EVENT_TYPES, query=query).get("data") or []
        return data[: int(min(limit, len(data)))]

    def schedule_create(self, *, name, time_zone, is_default=False, rules=(), overrides=()) -> dict:
        body = {"name": name, "timeZone": time_zone, "isDefault": is_default is True}
        availability = [rule for rule in rules if rule["days"]]
        if availability:
            body["availability"] = availability
        dated = [override for override in overrides if override["date"]]
        if dated:
            body["overrides"] = dated
        return self.request("POST", "/schedules", SCHEDULES, body)["data"]

    def schedule_get(self, schedule_id: int) -> dict:
        return self.request("GET", f"/schedules/{schedule_id}", SCHEDULES)["data"]

    def schedule_get_many(self, limit: float) -> list[dict]:
        data = self.request("GET", "/schedules", SCHEDULES)["data"]
        return data[: int(min(limit, len(data)))]

    def schedule_update(self, schedule_id: int, update_fields: dict) -> dict:
        return self.request("PATCH", f"/schedules/{schedule_id}", SCHEDULES, update_fields)["data"]

    def schedule_delete(self, schedule_id: int) -> dict:
        self.request("DELETE", f"/schedules/{schedule_id}", SCHEDULES)
        return {"success": True, "scheduleId": schedule_id}

    def slot_get_many(self, *, event_type_id, start, end, options=None, simple=True):
        query = {"eventTypeId": event_type_id, "start": start, "end": end, **(options or {})}
        data = self.request("GET", "/slots", SLOTS, query=query).get("data") or {}
        if not simple:
            return data
        return [{"date": day, **slot} for day, slots in data.items() for slot in slots]


def test_booking_create_action_books_a_slot_with_its_attendee_guests_and_metadata(api_client):
    user = UserFactory()
    event_type = EventTypeFactory(owner=user, schedule=ScheduleFactory(user=user, time_zone="UTC"), length=30)
    n8n = N8nCalActions(api_client, ApiKeyFactory(user=user).raw_key)
    day = (timezone.now() + timedelta(days=8)).date()
    slots = n8n.request(
        "GET",
        "/slots",
        "2024-09-04",
        query={"eventTypeId": event_type.pk, "start": str(day), "end": str(day + timedelta(days=4))},
    )["data"]
    start = next(iter(slots.values()))[0]["start"]
    booking = n8n.booking_create(
        event_type_id=event_type.pk,
        start=start,
        attendee_name="Jane Doe",
        attendee_time_zone="Europe/Berlin",
        additional={
            "email": "jane@example.com",
            "language": "de",
            "guests": "john@example.com, ,amy@example.com",
            "lengthInMinutes": 30,
            "metadata": [{"name": "source", "value": "n8n"}],
        },
    )
    assert booking["status"] == "accepted"
    assert booking["attendees"] == [
        {
            "name": "Jane Doe",
            "email": "jane@example.com",
            "displayEmail": "jane@example.com",
            "timeZone": "Europe/Berlin",
            "language": "de",
            "absent": False,
        }
    ]
    assert booking["guests"] == ["john@example.com", "amy@example.com"]
    assert booking["metadata"] == {"source": "n8n"}
    assert Booking.objects.get().uid == booking["uid"]


@pytest.mark.parametrize("limit", [3, 100, float("inf")])
def test_booking_get_many_action_follows_the_cursor_to_its_limit(api_client, limit):
    user = UserFactory()
    event_type = EventTypeFactory(owner=user)
    now = timezone.now().replace(microsecond=0)
    made = [booking_at(user, event_type, now + timedelta(hours=hour)) for hour in range(1, 106)]
    n8n = N8nCalActions(api_client, ApiKeyFactory(user=user).raw_key)
    filters = {"status": "upcoming", "eventTypeId": event_type.pk, "attendeeEmail": "", "sortStart": "asc"}
    items = n8n.booking_get_many(filters, limit)
    expected = made[: int(min(limit, len(made)))]
    assert [item["uid"] for item in items] == [booking.uid for booking in expected]


def _n8n(api_client, user) -> N8nCalActions:
    return N8nCalActions(api_client, ApiKeyFactory(user=user).raw_key)


def _bookable(user, **kwargs):
    return EventTypeFactory(owner=user, schedule=ScheduleFactory(user=user, time_zone="UTC"), length=30, **kwargs)


def test_booking_get_cancel_and_reschedule_actions(api_client):
    user = UserFactory()
    event_type = _bookable(user)
    n8n = _n8n(api_client, user)
    day = (timezone.now() + timedelta(days=8)).date()
    [first, second, *_] = n8n.slot_get_many(
        event_type_id=event_type.pk, start=str(day), end=str(day + timedelta(days=4))
    )
    booking = n8n.booking_create(
        event_type_id=event_type.pk,
        start=first["start"],
        attendee_name="Jane Doe",
        attendee_time_zone="Europe/Berlin",
        additional={"email": "jane@example.com"},
    )
    assert n8n.booking_get(booking["uid"])["uid"] == booking["uid"]

    moved = n8n.booking_reschedule(
        booking["uid"], second["start"], {"reschedulingReason": "Conflict", "rescheduleWithSameHost": True}
    )
    assert moved["rescheduledFromUid"] == booking["uid"] and moved["start"] == second["start"].replace("+00:00", "Z")
    assert moved["reschedulingReason"] == "Conflict"

    cancelled = n8n.booking_cancel(moved["uid"], {"cancellationReason": "Sick", "seatUid": ""})
    assert cancelled["status"] == "cancelled" and cancelled["cancellationReason"] == "Sick"
    assert Booking.objects.filter(status="CANCELLED").count() == 2


def test_booking_cancel_action_with_subsequent_bookings_cancels_the_rest_of_the_series(api_client):
    user = UserFactory()
    event_type = EventTypeFactory(owner=user)
    start = (timezone.now() + timedelta(days=3)).replace(minute=0, second=0, microsecond=0)
    series = [
        booking_at(user, event_type, start + timedelta(weeks=week), recurring_event_id="series-1") for week in range(3)
    ]
    n8n = _n8n(api_client, user)
    answer = n8n.booking_cancel(series[1].uid, {"cancellationReason": "Sick", "cancelSubsequentBookings": True})
    assert [booking["uid"] for booking in answer] == [booking.uid for booking in series]
    assert [booking["status"] for booking in answer] == ["accepted", "cancelled", "cancelled"]


def test_booking_cancel_of_a_seat_is_refused_and_cancels_nothing(api_client):
    """A seat of a seated booking (`seatUid`): this service has none, so cancelling "the seat"
    must not cancel the whole booking."""
    user = UserFactory()
    booking = BookingFactory(organizer=user)
    n8n = _n8n(api_client, user)
    response = n8n.client.generic(
        "POST",
        f"/v2/bookings/{booking.uid}/cancel",
        json.dumps({"seatUid": "seat_9"}),
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {n8n.api_key}",
        HTTP_CAL_API_VERSION=BOOKINGS_WRITE,
    )
    assert response.status_code == 400
    assert "seatUid" in response.json()["error"]["details"]["errors"]
    booking.refresh_from_db()
    assert booking.status == "ACCEPTED"


def test_event_type_get_and_get_many_actions(api_client):
    caller, jane = UserFactory(), UserFactory(username="jane")
    own = EventTypeFactory(owner=caller, title="Mine")
    public = EventTypeFactory(owner=jane, slug="intro-call", title="Intro call")
    EventTypeFactory(owner=jane, slug="secret", hidden=True)
    n8n = _n8n(api_client, caller)
    assert n8n.event_type_get(own.pk)["title"] == "Mine"
    assert [item["id"] for item in n8n.event_type_get_many({}, limit=2)] == [own.pk]
    assert [item["id"] for item in n8n.event_type_get_many({"username": "jane", "eventSlug": ""}, limit=50)] == [
        public.pk
    ]
    found = n8n.event_type_get_many({"eventSlug": "intro-call", "username": "jane"}, limit=50)
    assert [item["slug"] for item in found] == ["intro-call"]


def test_schedule_actions_create_get_many_update_and_delete(api_client):
    user = UserFactory()
    n8n = _n8n(api_client, user)
    created = n8n.schedule_create(
        name="Working hours",
        time_zone="Europe/Berlin",
        is_default=True,
        rules=[
            {"days": ["Monday", "Tuesday"], "startTime": "08:00", "endTime": "16:00"},
            {"days": [], "startTime": "10:00", "endTime": "12:00"},
        ],
        overrides=[
            {"date": "2033-12-24", "startTime": "09:00", "endTime": "12:00"},
            {"date": "", "startTime": "09:00", "endTime": "12:00"},
        ],
    )
    assert created["availability"] == [{"days": ["Monday", "Tuesday"], "startTime": "08:00", "endTime": "16:00"}]
    assert created["overrides"] == [{"date": "2033-12-24", "startTime": "09:00", "endTime": "12:00"}]
    assert created["isDefault"] is True
    plain = n8n.schedule_create(name="Defaults", time_zone="UTC")
    assert plain["availability"] == [
        {"days": ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"], "startTime": "09:00", "endTime": "17:00"}
    ]
    assert n8n.schedule_get(created["id"])["name"] == "Working hours"
    assert [item["id"] for item in n8n.schedule_get_many(limit=1)] == [created["id"]]
    updated = n8n.schedule_update(plain["id"], {"name": "New hours", "isDefault": False})
    assert (updated["name"], updated["isDefault"]) == ("New hours", False)
    assert n8n.schedule_delete(created["id"]) == {"success": True, "scheduleId": created["id"]}
    assert [item["id"] for item in n8n.schedule_get_many(limit=10)] == [plain["id"]]


def test_slot_get_many_action_simplified_and_for_a_reschedule(api_client):
    user = UserFactory()
    event_type = _bookable(user)
    n8n = _n8n(api_client, user)
    day = (timezone.now() + timedelta(days=8)).date()
    window = {"event_type_id": event_type.pk, "start": str(day), "end": str(day + timedelta(days=4))}
    by_day = n8n.slot_get_many(**window, simple=False)
    folded = n8n.slot_get_many(**window)
    assert folded == [{"date": date, **slot} for date, slots in by_day.items() for slot in slots]
    taken = folded[0]["start"]
    booking = n8n.booking_create(
        event_type_id=event_type.pk,
        start=taken,
        attendee_name="Jane Doe",
        attendee_time_zone="UTC",
        additional={"email": "jane@example.com"},
    )
    assert taken not in [slot["start"] for slot in n8n.slot_get_many(**window)]
    options = {"timeZone": "Europe/Berlin", "duration": 30, "bookingUidToReschedule": booking["uid"]}
    moving = n8n.slot_get_many(**window, options=options)
    assert moving[0]["start"].endswith(("+01:00", "+02:00"))
    assert datetime.fromisoformat(moving[0]["start"]) == datetime.fromisoformat(taken)
