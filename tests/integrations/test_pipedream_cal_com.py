"""Pipedream's Cal.com components, replayed as they call the API.

PipedreamHQ/pipedream, components/cal_com/:
- cal_com.app.mjs `_makeRequest`: `https://{domain}/v1/{path}` (`hooks`, `hooks/{id}`, `bookings`,
  `bookings/{id}`, `event-types`, `slots`), the API key as the `apiKey` query parameter, header
  `Content-Type: application/json` on every request (also a GET or DELETE without a body); axios
  rejects any non-2xx answer, and only 408, 429 and 500 are retried.
- sources/common/common.mjs: `activate` posts `{eventTriggers, subscriberUrl, active: true}` and
  reads `webhook.id` and `message`; `deactivate` deletes `hooks/{id}`; `deploy` lists `bookings`
  and emits up to 25 of them, summarised by `uid` and `title`.
- sources/booking-cancelled (keeps `status === "CANCELLED"`), booking-ended (keeps
  `Date.parse(endTime) < now`), booking-rescheduled (id `rescheduleUid || uid`), booking-created.
- actions/get-booking, get-bookable-slots (`eventTypeId`, `startTime`, `endTime`, optional
  `timeZone` and `isTeamEvent`), list-event-type-id-options (`event_types[].title` / `.id`), and
  the `bookingId` options (`bookings[].title` / `.id`, optionally without CANCELLED ones).
"""

import json
from datetime import UTC, datetime, timedelta
from urllib.parse import urlencode

import pytest
from django.utils import timezone

from accounts.tests.factories import ApiKeyFactory, UserFactory
from scheduling.models import BookingStatus
from scheduling.tests.factories import BookingFactory, EventTypeFactory, ScheduleFactory
from webhooks.models import Webhook

pytestmark = pytest.mark.django_db

RETRIED_STATUSES = (408, 429, 500)


class PipedreamCalCom:
    """What cal_com.app.mjs puts on the wire."""

    def __init__(self, client, api_key: str):
        self.client, self.api_key = client, api_key

    def send(self, method: str, path: str, params=None, data=None):
        query = {key: value for key, value in (params or {}).items() if value is not None}
        query = {key: str(value).lower() if isinstance(value, bool) else value for key, value in query.items()}
        url = f"/v1/{path}?{urlencode({**query, 'apiKey': self.api_key})}"
        body = b"" if data is None else json.dumps(data)
        return self.client.generic(method, url, body, content_type="application/json")

    def make_request(self, method: str = "GET", path: str = "", params=None, data=None) -> dict:
        response = self.send(method, path, params, data)
        assert 200 <= response.status_code < 300, response.content
        assert response.status_code not in RETRIED_STATUSES
        return response.json()

    def create_webhook(self, data):
        return self.make_request("POST", "hooks", data=data)

    def delete_webhook(self, hook_id):
        return self.make_request("DELETE", f"hooks/{hook_id}")

    def get_booking(self, booking_id):
        return self.make_request(path=f"bookings/{booking_id}")

    def list_bookings(self):
        return self.make_request(path="bookings")

    def list_event_types(self):
        return self.make_request(path="event-types")

    def get_bookable_slots(self, params):
        return self.make_request(path="slots", params=params)


class PipedreamSource:
    """sources/common/common.mjs and the four sources' `eventTriggers` and historical filters."""

    TRIGGERS = {
        "booking-created": "BOOKING_CREATED",
        "booking-cancelled": "BOOKING_CANCELLED",
        "booking-ended": "MEETING_ENDED",
        "booking-rescheduled": "BOOKING_RESCHEDULED",
    }

    def __init__(self, app: PipedreamCalCom, key: str, endpoint: str):
        self.app, self.key, self.endpoint = app, key, endpoint
        self.db: dict = {}
        self.emitted: list[tuple[dict, dict]] = []

    def deploy(self):
        bookings = self.app.list_bookings().get("bookings") or []
        if self.key == "booking-cancelled":
            bookings = [booking for booking in bookings if booking["status"] == "CANCELLED"]
        if self.key == "booking-ended":
            now = datetime.now(UTC)
            bookings = [booking for booking in bookings if datetime.fromisoformat(booking["endTime"]) < now]
        for booking in bookings[-25:]:
            self.emitted.append((booking, self.meta(booking)))

    def activate(self):
        data = {"eventTriggers": [self.TRIGGERS[self.key]], "subscriberUrl": self.endpoint, "active": True}
        response = self.app.create_webhook(data)
        self.db["hookId"] = response["webhook"]["id"]
        return response["message"]

    def deactivate(self):
        self.app.delete_webhook(self.db["hookId"])

    def meta(self, payload: dict) -> dict:
        identifier = payload["uid"]
        if self.key == "booking-rescheduled":
            identifier = payload.get("rescheduleUid") or payload["uid"]
        return {"id": identifier, "summary": payload["title"]}


def app_for(api_client, user) -> PipedreamCalCom:
    return PipedreamCalCom(api_client, ApiKeyFactory(user=user).raw_key)


# pipedream/components/cal_com/sources/common/common.mjs (activate / deactivate) through
# cal_com.app.mjs createWebhook / deleteWebhook: `POST /v1/hooks`, `DELETE /v1/hooks/{id}` with a
# JSON content type and no body. Pipedream's endpoint URL has no path.
@pytest.mark.parametrize("key", sorted(PipedreamSource.TRIGGERS))
def test_source_activate_and_deactivate(api_client, receiver, key):
    user = UserFactory()
    source = PipedreamSource(app_for(api_client, user), key, endpoint=receiver.url(""))

    assert source.activate() == "Webhook created successfully"

    webhook = Webhook.objects.get()
    assert str(webhook.pk) == source.db["hookId"]
    assert (webhook.user_id, webhook.subscriber_url, webhook.active) == (user.pk, receiver.url(""), True)
    assert webhook.event_triggers == [PipedreamSource.TRIGGERS[key]]
    source.deactivate()
    assert not Webhook.objects.exists()


# pipedream/components/cal_com/sources/*/ `deploy` -> emitHistoricalEvents over `GET /v1/bookings`:
# the fields each source reads (`uid`, `title`, `status`, `endTime`) with the types it expects.
def test_source_deploy_emits_history_from_the_bookings_list(api_client):
    user = UserFactory()
    two_days_ago = timezone.now().replace(microsecond=0) - timedelta(days=2)
    past = BookingFactory(organizer=user, start_time=two_days_ago, end_time=two_days_ago + timedelta(minutes=30))
    upcoming = BookingFactory(organizer=user)
    cancelled = BookingFactory(organizer=user, status=BookingStatus.CANCELLED)
    BookingFactory()  # someone else's
    app = app_for(api_client, user)

    emitted = {}
    for key in PipedreamSource.TRIGGERS:
        source = PipedreamSource(app, key, endpoint="http://127.0.0.1:9/")
        source.deploy()
        emitted[key] = [meta["id"] for _, meta in source.emitted]

    assert emitted["booking-created"] == [past.uid, upcoming.uid, cancelled.uid]
    assert emitted["booking-rescheduled"] == [past.uid, upcoming.uid, cancelled.uid]
    assert emitted["booking-cancelled"] == [cancelled.uid]
    assert emitted["booking-ended"] == [past.uid]
    [booking] = [row for row in app.list_bookings()["bookings"] if row["id"] == past.pk]
    assert isinstance(booking["uid"], str) and booking["title"] == past.title
    assert datetime.fromisoformat(booking["endTime"]) == past.end_time


# pipedream/components/cal_com/sources/common/common.mjs `deploy`: a user without bookings gets an
# empty list (the source returns early), not an error.
def test_source_deploy_without_bookings_emits_nothing(api_client):
    source = PipedreamSource(app_for(api_client, UserFactory()), "booking-created", endpoint="http://127.0.0.1:9/")
    source.deploy()
    assert source.emitted == []


# pipedream/components/cal_com/actions/get-booking/get-booking.mjs and the `bookingId` options of
# cal_com.app.mjs (label `title`, value `id`, `filterCancelled` drops CANCELLED).
def test_get_booking_action_and_booking_id_options(api_client):
    user = UserFactory()
    active = BookingFactory(organizer=user, title="Intro")
    cancelled = BookingFactory(organizer=user, title="Dropped", status=BookingStatus.CANCELLED)
    app = app_for(api_client, user)

    bookings = app.list_bookings()["bookings"]
    options = [{"label": booking["title"], "value": booking["id"]} for booking in bookings]
    assert options == [{"label": "Intro", "value": active.pk}, {"label": "Dropped", "value": cancelled.pk}]
    assert [booking["id"] for booking in bookings if booking["status"] != "CANCELLED"] == [active.pk]

    response = app.get_booking(active.pk)
    assert response["booking"]["id"] == active.pk
    assert response["booking"]["uid"] == active.uid
    assert response["booking"]["attendees"][0]["email"]


# pipedream/components/cal_com/actions/get-booking/get-booking.mjs: a booking id of someone else is
# a 404 that axios rejects (not retried).
def test_get_booking_action_for_someone_elses_booking_is_404(api_client):
    app = app_for(api_client, UserFactory())
    response = app.send("GET", f"bookings/{BookingFactory().pk}")
    assert response.status_code == 404
    assert response["Content-Type"] == "application/problem+json"
    assert response.json()["message"]


# pipedream/components/cal_com/actions/list-event-type-id-options/list-event-type-id-options.mjs
# and the `eventTypeId` options of cal_com.app.mjs: `event_types[].title` / `.id`.
def test_event_type_id_options(api_client):
    user = UserFactory()
    first = EventTypeFactory(owner=user, title="Intro call")
    second = EventTypeFactory(owner=user, title="Deep dive")

    event_types = app_for(api_client, user).list_event_types()["event_types"]

    options = [{"label": event_type["title"], "value": event_type["id"]} for event_type in event_types]
    assert options == [{"label": "Intro call", "value": first.pk}, {"label": "Deep dive", "value": second.pk}]


# pipedream/components/cal_com/actions/get-bookable-slots/get-bookable-slots.mjs: every prop goes to
# the query (`isTeamEvent` as "true"/"false", `timeZone` optional, ISO 8601 `...Z` times); the
# action returns the answer as is: `{"slots": {"YYYY-MM-DD": [{"time": ...}]}}`.
@pytest.mark.parametrize("time_zone", [None, "America/Godthab", "Asia/Rangoon", "Etc/GMT", "Asia/Kolkata"])
def test_get_bookable_slots_action(api_client, time_zone):
    user = UserFactory()
    event_type = EventTypeFactory(owner=user, schedule=ScheduleFactory(user=user, time_zone="UTC"))
    start = (timezone.now() + timedelta(days=7)).replace(hour=0, minute=0, second=0, microsecond=0)
    params = {
        "eventTypeId": event_type.pk,
        "startTime": start.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "endTime": (start + timedelta(days=3)).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "timeZone": time_zone,
        "isTeamEvent": False,
    }

    slots = app_for(api_client, user).get_bookable_slots(params)["slots"]

    times = [slot["time"] for day in slots.values() for slot in day]
    assert times, slots
    assert all(datetime.fromisoformat(time.replace("Z", "+00:00")) >= start for time in times)
    assert all(len(day) == 10 and day.count("-") == 2 for day in slots)


# pipedream/components/cal_com/actions/get-bookable-slots/get-bookable-slots.mjs: a time zone typed
# by hand that does not exist is a 400 naming it (axios rejects it, no retry).
def test_get_bookable_slots_with_an_unknown_time_zone_is_400(api_client):
    user = UserFactory()
    event_type = EventTypeFactory(owner=user)
    params = {
        "eventTypeId": event_type.pk,
        "startTime": "2026-12-01T06:00:00Z",
        "endTime": "2026-12-02T06:00:00Z",
        "timeZone": "Mars/Olympus_Mons",
    }

    response = app_for(api_client, user).send("GET", "slots", params)

    assert response.status_code == 400
    assert response["Content-Type"] == "application/problem+json"
    assert "Mars/Olympus_Mons" in response.json()["errors"]["timeZone"][0]


# pipedream/components/cal_com/sources/common/common.mjs `activate` with a webhook URL the service
# refuses (not http/https): a 400 naming subscriberUrl, nothing saved, and not retried.
def test_source_activate_with_a_refused_endpoint_is_400_and_writes_nothing(api_client):
    app = app_for(api_client, UserFactory())
    data = {"eventTriggers": ["BOOKING_CREATED"], "subscriberUrl": "ftp://127.0.0.1/x", "active": True}

    response = app.send("POST", "hooks", data=data)

    assert response.status_code == 400
    assert "subscriberUrl" in response.json()["errors"]
    assert not Webhook.objects.exists()
