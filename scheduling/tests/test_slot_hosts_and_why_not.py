"""Who is free per slot (`includeHosts` on /v1/slots and /v2/slots) and why a start is not
bookable (/v1/slots/why-not, /v2/slots/why-not), host by host."""

from datetime import UTC, datetime, time, timedelta

import pytest
from django.utils import timezone

from accounts.tests.factories import ApiKeyFactory, UserFactory
from calendars.models import BusyTime
from calendars.tests.factories import CalendarConnectionFactory, ExternalCalendarFactory
from holds.models import OutOfOfficeEntry, SlotReservation
from scheduling.tests.factories import (
    BookingFactory,
    EventTypeFactory,
    HostFactory,
    ScheduleFactory,
    TeamEventTypeFactory,
)
from tests.support.credentials import bearer

pytestmark = pytest.mark.django_db


def monday() -> datetime:
    today = timezone.now().astimezone(UTC).date()
    return datetime.combine(today + timedelta(days=(7 - today.weekday()) % 7 + 7), time(0), tzinfo=UTC)


def z(instant: datetime) -> str:
    return instant.strftime("%Y-%m-%dT%H:%M:%SZ")


@pytest.fixture
def team():
    """A round-robin event type (30 minutes, 15 minutes' buffer before) with two hosts working
    09:00-17:00 UTC every day; the first has a booking of their own at 10:00 on Monday."""
    event_type = TeamEventTypeFactory(scheduling_type="ROUND_ROBIN", minimum_booking_notice=0, before_event_buffer=15)
    users = []
    for _ in range(2):
        user = UserFactory(time_zone="UTC")
        user.default_schedule = ScheduleFactory(
            user=user, time_zone="UTC", availability=[{"days_mask": 127, "start_time": time(9), "end_time": time(17)}]
        )
        user.save(update_fields=["default_schedule"])
        HostFactory(event_type=event_type, user=user)
        users.append(user)
    users.sort(key=lambda user: user.pk)
    own = EventTypeFactory(owner=users[0])
    busy = monday() + timedelta(hours=10)
    BookingFactory(organizer=users[0], event_type=own, start_time=busy, end_time=busy + timedelta(minutes=30))
    return event_type, users


def test_slots_list_their_free_hosts_on_request(api_client, team):
    event_type, (first, second) = team
    key = ApiKeyFactory().raw_key
    query = {
        "eventTypeId": event_type.pk,
        "startTime": z(monday() + timedelta(hours=9)),
        "endTime": z(monday() + timedelta(hours=11)),
        "includeHosts": "true",
    }
    response = api_client.get("/v1/slots", query, **bearer(key))
    assert response.status_code == 200, response.json()
    slots = {
        slot["time"]: [host["id"] for host in slot["hosts"]] for slot in next(iter(response.json()["slots"].values()))
    }
    day = monday().date().isoformat()
    assert slots == {
        f"{day}T09:00:00Z": [first.pk, second.pk],
        f"{day}T09:30:00Z": [first.pk, second.pk],  # ends as the first host's booking begins
        f"{day}T10:00:00Z": [second.pk],
        f"{day}T10:30:00Z": [second.pk],  # the buffer before 10:30 overlaps that booking
    }
    plain = api_client.get("/v1/slots", {**query, "includeHosts": "false"}, **bearer(key)).json()
    assert "hosts" not in next(iter(plain["slots"].values()))[0]
    v2 = api_client.get(
        "/v2/slots",
        {"eventTypeId": event_type.pk, "start": query["startTime"], "end": query["endTime"], "includeHosts": "true"},
        HTTP_CAL_API_VERSION="2024-09-04",
        **bearer(key),
    )
    assert v2.status_code == 200, v2.json()
    first_slot = v2.json()["data"][day][0]
    assert [host["id"] for host in first_slot["hosts"]] == [first.pk, second.pk]
    assert set(first_slot["hosts"][0]) == {"id", "name", "username", "timeZone"}


def reasons(answer, user):
    host = next(host for host in answer["hosts"] if host["userId"] == user.pk)
    return [reason["rule"] for reason in host["reasons"]]


def test_why_not_names_the_rule_per_host(api_client, team):
    event_type, (first, second) = team
    key = ApiKeyFactory().raw_key

    def explain(start):
        response = api_client.get("/v1/slots/why-not", {"eventTypeId": event_type.pk, "start": z(start)}, **bearer(key))
        assert response.status_code == 200, response.json()
        return response.json()

    at_ten = explain(monday() + timedelta(hours=10))
    assert at_ten["bookable"] is True
    assert reasons(at_ten, first) == ["booking"]
    assert reasons(at_ten, second) == []
    assert reasons(explain(monday() + timedelta(hours=10, minutes=30)), first) == ["buffer"]
    early = explain(monday() + timedelta(hours=7))
    assert early["bookable"] is False
    assert reasons(early, first) == reasons(early, second) == ["schedule"]
    off_grid = explain(monday() + timedelta(hours=12, minutes=10))
    assert off_grid["bookable"] is False
    assert [reason["rule"] for reason in off_grid["reasons"]] == ["interval"]
    yesterday = timezone.now().astimezone(UTC).date() - timedelta(days=1)
    past = explain(datetime.combine(yesterday, time(12), tzinfo=UTC))
    assert "notice" in reasons(past, second)
    v2 = api_client.get(
        "/v2/slots/why-not",
        {"eventTypeId": event_type.pk, "start": z(monday() + timedelta(hours=10))},
        HTTP_CAL_API_VERSION="2024-09-04",
        **bearer(key),
    )
    assert v2.status_code == 200, v2.json()
    assert v2.json()["data"] == at_ten


def test_why_not_of_a_personal_event_type(api_client):
    owner = UserFactory()
    event_type = EventTypeFactory(owner=owner, minimum_booking_notice=0)  # Mon-Fri 09:00-17:00 Berlin
    key = ApiKeyFactory(user=owner).raw_key
    sunday = monday() - timedelta(days=1) + timedelta(hours=12)
    answer = api_client.get("/v1/slots/why-not", {"eventTypeId": event_type.pk, "start": z(sunday)}, **bearer(key))
    assert answer.status_code == 200
    assert answer.json()["schedulingType"] is None
    assert [host["userId"] for host in answer.json()["hosts"]] == [owner.pk]
    assert reasons(answer.json(), owner) == ["schedule"]


def test_why_not_tells_bookings_calendar_busy_time_and_held_time_apart(api_client):
    """Bookings, a connected calendar's busy time and held time are read in one busy-time statement;
    why-not still names each by its own rule, and says nothing of the calendar's event."""
    owner = UserFactory(time_zone="UTC")
    owner.default_schedule = ScheduleFactory(
        user=owner, time_zone="UTC", availability=[{"days_mask": 127, "start_time": time(9), "end_time": time(17)}]
    )
    owner.save(update_fields=["default_schedule"])
    event_type = EventTypeFactory(owner=owner, minimum_booking_notice=0, length=30)
    key = ApiKeyFactory(user=owner).raw_key
    day = monday()
    calendar = ExternalCalendarFactory(connection=CalendarConnectionFactory(user=owner))
    at = {hour: day + timedelta(hours=hour) for hour in (9, 10, 11, 12, 13)}
    half = timedelta(minutes=30)
    BookingFactory(organizer=owner, event_type=event_type, start_time=at[9], end_time=at[9] + half)
    BusyTime.objects.create(user=owner, calendar=calendar, start=at[10], end=at[10] + half, event_uid="secret@x")
    SlotReservation.objects.create(
        event_type=event_type,
        host=owner,
        slot_start=at[11],
        slot_end=at[11] + half,
        reserved_until=timezone.now() + timedelta(minutes=5),
        minutes=5,
    )
    OutOfOfficeEntry.objects.create(user=owner, start=at[12], end=at[12] + half)

    def explain(start):
        response = api_client.get("/v1/slots/why-not", {"eventTypeId": event_type.pk, "start": z(start)}, **bearer(key))
        assert response.status_code == 200, response.json()
        return response.json()

    assert reasons(explain(at[9]), owner) == ["booking"]
    by_calendar = explain(at[10])
    assert by_calendar["bookable"] is False
    assert by_calendar["hosts"][0]["reasons"] == [{"rule": "calendar", "detail": "The host's calendar is busy then."}]
    assert reasons(explain(at[11]), owner) == ["hold"]
    assert reasons(explain(at[12]), owner) == ["hold"]
    assert reasons(explain(at[13]), owner) == []
    # The calendar's period where a booking also is: both rules.
    BusyTime.objects.create(user=owner, calendar=calendar, start=at[9], end=at[9] + half)
    assert reasons(explain(at[9]), owner) == ["booking", "calendar"]
    v2 = api_client.get(
        "/v2/slots/why-not",
        {"eventTypeId": event_type.pk, "start": z(at[10])},
        HTTP_CAL_API_VERSION="2024-09-04",
        **bearer(key),
    )
    assert v2.status_code == 200, v2.json()
    assert v2.json()["data"] == by_calendar


@pytest.mark.parametrize(
    "query",
    [
        {},
        {"eventTypeId": "x", "start": "2026-12-01T10:00:00Z"},
        {"eventTypeId": 1},
        {"eventTypeId": 1, "start": "soon"},
    ],
)
def test_why_not_refuses_bad_queries(api_client, query):
    key = ApiKeyFactory().raw_key
    response = api_client.get("/v1/slots/why-not", query, **bearer(key))
    assert response.status_code == 400
    assert (
        api_client.get(
            "/v1/slots/why-not", {"eventTypeId": 999999, "start": "2026-12-01T10:00:00Z"}, **bearer(key)
        ).status_code
        == 404
    )


def test_include_hosts_is_a_boolean(api_client, team):
    event_type, _ = team
    key = ApiKeyFactory().raw_key
    query = {"eventTypeId": event_type.pk, "startTime": "2026-12-01", "endTime": "2026-12-02", "includeHosts": "yes"}
    response = api_client.get("/v1/slots", query, **bearer(key))
    assert response.status_code == 400
    assert "includeHosts" in response.json()["errors"]
