"""n8n's Cal.com actions on API v2 (the node's `actions/` folder), replayed as they call.

n8n-io/n8n, packages/nodes-base/nodes/Cal/:
- actions/booking/create.operation.ts: `POST /bookings` with `{eventTypeId, start, attendee:
  {name, timeZone, email?, phoneNumber?, language?}, guests?, instant?, lengthInMinutes?,
  recurrenceCount?, metadata?, bookingFieldsResponses?}` (metadata and booking field responses
  from name/value pairs, guests split on commas) and `cal-api-version` BOOKINGS_WRITE; the
  output is `response.data`.
- actions/booking/getMany.operation.ts: `GET /bookings` with the filters that are set
  (`afterStart`, `attendeeEmail`, `attendeeName`, `beforeEnd`, `eventTypeId`, `sortStart`,
  `status`, `teamId`) through `calApiRequestV2AllItems` and BOOKINGS_LIST; helpers/interfaces.ts
  types the list's `pagination` as `{nextCursor, hasMore}`, the cursor mode of 2026-05-01, so
  "Return All" follows `nextCursor` while `hasMore`.
- actions/helpers.ts `toQuery`: empty filters are left out.
The values of the version constants are defined in GenericFunctions.ts; the replays send the
versions whose shapes the node reads (2024-08-13 for the booking, 2026-05-01 for the cursor).
"""

import json
from datetime import timedelta
from urllib.parse import urlencode

import pytest
from django.utils import timezone

from accounts.tests.factories import ApiKeyFactory, UserFactory
from scheduling.models import Booking
from scheduling.tests.factories import BookingFactory, EventTypeFactory, ScheduleFactory

pytestmark = pytest.mark.django_db

BOOKINGS_WRITE = "2024-08-13"
BOOKINGS_LIST = "2026-05-01"


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
    made = [
        BookingFactory(
            organizer=user,
            event_type=event_type,
            start_time=now + timedelta(hours=hour),
            end_time=now + timedelta(hours=hour, minutes=30),
        )
        for hour in range(1, 106)
    ]
    n8n = N8nCalActions(api_client, ApiKeyFactory(user=user).raw_key)
    filters = {"status": "upcoming", "eventTypeId": event_type.pk, "attendeeEmail": "", "sortStart": "asc"}
    items = n8n.booking_get_many(filters, limit)
    expected = made[: int(min(limit, len(made)))]
    assert [item["uid"] for item in items] == [booking.uid for booking in expected]
