"""What the v2 tests share: a client that speaks v2 with a real API key, a bookable event type,
a free slot, the check of a v2 error envelope, and the same booking request in v1's body and in
v2's (2024-08-13) body."""

import json
from datetime import UTC, datetime, time, timedelta

from django.utils import timezone

from accounts.tests.factories import ApiKeyFactory
from scheduling.tests.factories import BookingFactory, EventTypeFactory, ScheduleFactory
from tests.support.credentials import bearer

ALL_VERSIONS = [None, "2024-04-15", "2024-06-11", "2024-06-14", "2024-08-13", "2024-09-04", "2026-02-25", "2026-05-01"]


class V2Client:
    def __init__(self, client, user):
        self.client, self.user = client, user
        self.key = ApiKeyFactory(user=user).raw_key

    def call(self, method, path, body=None, *, version=None, raw=None, **headers):
        extra = {**bearer(self.key), **headers}
        if version is not None:
            extra["HTTP_CAL_API_VERSION"] = version
        payload = raw if raw is not None else (json.dumps(body) if body is not None else "")
        return self.client.generic(method, path, payload, content_type="application/json", **extra)


def event_type_of(user, **kwargs):
    """An event type of `user` on a schedule in UTC (Monday-Friday 09:00-17:00)."""
    return EventTypeFactory(owner=user, schedule=ScheduleFactory(user=user, time_zone="UTC"), **kwargs)


def free_slot(v2, event_type, *, days=7) -> str:
    day = (timezone.now() + timedelta(days=days)).date()
    query = f"eventTypeId={event_type.pk}&start={day}&end={day + timedelta(days=4)}"
    slots = v2.call("GET", f"/v2/slots?{query}", version="2024-09-04").json()["data"]
    return next(iter(slots.values()))[0]["start"]


def assert_error(response, status: int, code: str) -> dict:
    assert response.status_code == status, response.content
    body = response.json()
    assert body["status"] == "error"
    assert body["error"]["code"] == code
    assert body["path"].startswith("/v2/")
    assert body["timestamp"].endswith("Z")
    return body


def booking_at(organizer, event_type, start, **kwargs):
    """A booking of `event_type` by `organizer` at `start`, lasting 30 minutes."""
    return BookingFactory(
        organizer=organizer, event_type=event_type, start_time=start, end_time=start + timedelta(minutes=30), **kwargs
    )


# --- one booking request in each version's body ------------------------------------------------

# v2 versions whose booking body is v1's (2024-04-15 and what falls back to it), and the others.
V1_BODY_VERSIONS = [None, "2024-04-15", "2024-06-11", "2024-06-14", "2024-09-04"]
V2_BODY_VERSIONS = ["2024-08-13", "2026-02-25", "2026-05-01"]
WEEKLY_4 = {"freq": 2, "interval": 1, "count": 4}
ATTENDEE = {"name": "Ada Lovelace", "email": "ada@example.org"}
GUESTS = ["babbage@example.org"]


def monday_ahead(weeks: int = 2) -> datetime:
    today = timezone.now().date()
    return datetime.combine(today + timedelta(days=(7 - today.weekday()) % 7 + 7 * weeks), time(10), tzinfo=UTC)


def z(value: datetime) -> str:
    return value.strftime("%Y-%m-%dT%H:%M:%SZ")


def v1_body(event_type, start, *, count=None, slug=False, **extra) -> dict:
    body = {
        "eventTypeId": event_type.pk,
        "start": z(start),
        "timeZone": "Europe/London",
        "language": "en",
        "responses": {**ATTENDEE, "guests": GUESTS},
        **extra,
    }
    if count is not None:
        body["recurringCount"] = count
    if slug:
        body["eventTypeSlug"] = event_type.slug
    return body


def v2_body(event_type, start, *, count=None, slug=False, **extra) -> dict:
    body = {
        "start": z(start),
        "attendee": {**ATTENDEE, "timeZone": "Europe/London", "language": "en"},
        "guests": GUESTS,
        **extra,
    }
    if slug and event_type.team_id is not None:
        body.update(eventTypeSlug=event_type.slug, teamSlug=event_type.team.slug)
    elif slug:
        body.update(eventTypeSlug=event_type.slug, username=event_type.owner.username)
    else:
        body["eventTypeId"] = event_type.pk
    if count is not None:
        body["recurrenceCount"] = count
    return body
