"""Booking limits (`bookingLimits`, `durationLimits`; v2's `bookingLimitsCount`,
`bookingLimitsDuration`): stored on the event type, answered in v1's and v2's shapes, applied to
/v1/slots and /v2/slots, to booking and rescheduling, and named by the why-not endpoint; periods in
the owner's zone, DST included. And the people's advisory locks with user ids above 2**31."""

import json
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from accounts.tests.factories import ApiKeyFactory, UserFactory
from scheduling.limits import clean_limits, local_midnight, period_start
from scheduling.models import Booking, BookingStatus, EventType
from scheduling.selectors.limits import broken_limits
from scheduling.selectors.slots import available_slots
from scheduling.tests.factories import (
    BookingFactory,
    EventTypeFactory,
    HostFactory,
    ScheduleFactory,
    TeamEventTypeFactory,
)
from tests.support.credentials import bearer

pytestmark = pytest.mark.django_db

BERLIN = ZoneInfo("Europe/Berlin")
EVERY_DAY = [{"days_mask": 127, "start_time": time(9), "end_time": time(17)}]


def next_monday() -> date:
    today = timezone.now().astimezone(BERLIN).date()
    return today + timedelta(days=(7 - today.weekday()) % 7 + 7)


def berlin(day: date, hour: int, minute: int = 0) -> datetime:
    return datetime.combine(day, time(hour, minute), BERLIN).astimezone(UTC)


def z(instant: datetime) -> str:
    return instant.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def limited(organizer, **limits) -> EventType:
    """A 30-minute event type of the organizer's (the shared `organizer` fixture: in Europe/Berlin),
    bookable every day 09:00-17:00 Berlin, no notice."""
    schedule = ScheduleFactory(user=organizer, time_zone="Europe/Berlin", availability=EVERY_DAY)
    return EventTypeFactory(owner=organizer, schedule=schedule, length=30, minimum_booking_notice=0, **limits)


def book(event_type, start: datetime, **kwargs) -> Booking:
    return BookingFactory(
        organizer=event_type.owner,
        event_type=event_type,
        start_time=start,
        end_time=start + timedelta(minutes=event_type.length),
        **kwargs,
    )


def slot_days(api_client, key, event_type, first: date, days: int) -> set[str]:
    """The local days (Berlin) /v1/slots offers a start on, over `days` days from `first`."""
    query = {
        "eventTypeId": event_type.pk,
        "startTime": z(berlin(first, 0)),
        "endTime": z(berlin(first + timedelta(days=days), 0)),
        "timeZone": "Europe/Berlin",
    }
    response = api_client.get("/v1/slots", query, **bearer(key))
    assert response.status_code == 200, response.json()
    return set(response.json()["slots"])


def booking_body(event_type, start: datetime) -> dict:
    return {
        "eventTypeId": event_type.pk,
        "start": z(start),
        "name": "Grace Hopper",
        "email": "grace@example.org",
        "timeZone": "Europe/Berlin",
    }


# --- the rules ----------------------------------------------------------------------------------


def test_periods_start_on_local_midnight_sunday_the_first_of_the_month_and_of_the_year():
    wednesday = date(2026, 11, 25)
    assert period_start(wednesday, "PER_DAY") == wednesday
    assert period_start(wednesday, "PER_WEEK") == date(2026, 11, 22)  # a Sunday
    assert period_start(date(2026, 11, 22), "PER_WEEK") == date(2026, 11, 22)
    assert period_start(wednesday, "PER_MONTH") == date(2026, 11, 1)
    assert period_start(wednesday, "PER_YEAR") == date(2026, 1, 1)
    # The day the clocks go back in Berlin lasts 25 hours, the day they go forward 23.
    assert local_midnight(date(2026, 10, 26), BERLIN) - local_midnight(date(2026, 10, 25), BERLIN) == timedelta(
        hours=25
    )
    assert local_midnight(date(2026, 3, 30), BERLIN) - local_midnight(date(2026, 3, 29), BERLIN) == timedelta(hours=23)


def test_limits_are_checked_whole():
    assert clean_limits({"PER_WEEK": 5, "PER_DAY": 2}, kind="count") == {"PER_DAY": 2, "PER_WEEK": 5}
    assert clean_limits(None, kind="count") is None
    for bad in ({"PER_DAY": 0}, {"PER_DAY": 1.5}, {"PER_DAY": True}, {"PER_HOUR": 1}, {"PER_DAY": 3, "PER_WEEK": 2}):
        with pytest.raises(ValueError):
            clean_limits(bad, kind="count")
    with pytest.raises(ValueError):
        clean_limits({"PER_DAY": 1501}, kind="duration")


# --- v1 and v2 shapes ---------------------------------------------------------------------------


def test_v1_event_types_take_and_answer_both_limits(api_client, key, organizer):
    body = {
        "title": "Intro",
        "slug": "intro",
        "length": 30,
        "bookingLimits": {"PER_WEEK": 5, "PER_DAY": 2},
        "durationLimits": {"PER_MONTH": 600},
    }
    response = api_client.post("/v1/event-types", body, format="json", **bearer(key))
    assert response.status_code == 200, response.json()
    created = response.json()["event_type"]
    assert created["bookingLimits"] == {"PER_DAY": 2, "PER_WEEK": 5}
    assert created["durationLimits"] == {"PER_MONTH": 600}
    again = api_client.get(f"/v1/event-types/{created['id']}", **bearer(key)).json()["event_type"]
    assert (again["bookingLimits"], again["durationLimits"]) == ({"PER_DAY": 2, "PER_WEEK": 5}, {"PER_MONTH": 600})

    # v2 answers the same limits under its names
    v2 = api_client.get(f"/v2/event-types/{created['id']}", HTTP_CAL_API_VERSION="2024-06-14", **bearer(key)).json()
    assert v2["data"]["bookingLimitsCount"] == {"day": 2, "week": 5}
    assert v2["data"]["bookingLimitsDuration"] == {"month": 600}

    patched = api_client.patch(
        f"/v1/event-types/{created['id']}", {"bookingLimits": None}, format="json", **bearer(key)
    ).json()["event_type"]
    assert patched["bookingLimits"] is None
    assert patched["durationLimits"] == {"PER_MONTH": 600}


@pytest.mark.parametrize(
    "limits",
    [
        {"bookingLimits": {"PER_DAY": 0}},
        {"bookingLimits": {"PER_DAY": "2"}},
        {"bookingLimits": {"PER_HOUR": 2}},
        {"bookingLimits": {"PER_DAY": 3, "PER_WEEK": 2}},
        {"bookingLimits": [2]},
        {"durationLimits": {"PER_DAY": 2000}},
    ],
)
def test_v1_bad_limits_are_a_400_and_change_nothing(api_client, key, organizer, limits):
    event_type = limited(organizer, booking_limits={"PER_DAY": 1})
    response = api_client.patch(f"/v1/event-types/{event_type.pk}", limits, format="json", **bearer(key))
    assert response.status_code == 400, response.json()
    problem = response.json()
    assert problem["code"] == "validation_error"
    assert any(name.startswith(next(iter(limits))) for name in problem["errors"]), problem
    event_type.refresh_from_db()
    assert (event_type.booking_limits, event_type.duration_limits) == ({"PER_DAY": 1}, None)
    created = api_client.post(
        "/v1/event-types", {"title": "X", "slug": "x", "length": 30, **limits}, format="json", **bearer(key)
    )
    assert created.status_code == 400
    assert not EventType.objects.filter(slug="x").exists()


def test_v2_event_types_take_and_answer_both_limits(api_client, key, organizer):
    def call(method, path, body=None):
        return api_client.generic(
            method,
            path,
            json.dumps(body) if body is not None else "",
            content_type="application/json",
            HTTP_CAL_API_VERSION="2024-06-14",
            **bearer(key),
        )

    body = {
        "title": "Intro",
        "slug": "intro",
        "lengthInMinutes": 30,
        "bookingLimitsCount": {"day": 2, "year": 100},
        "bookingLimitsDuration": {"week": 120},
    }
    response = call("POST", "/v2/event-types", body)
    assert response.status_code == 201, response.json()
    data = response.json()["data"]
    assert data["bookingLimitsCount"] == {"day": 2, "year": 100}
    assert data["bookingLimitsDuration"] == {"week": 120}
    stored = EventType.objects.get(pk=data["id"])
    assert stored.booking_limits == {"PER_DAY": 2, "PER_YEAR": 100}
    assert stored.duration_limits == {"PER_WEEK": 120}
    v1 = api_client.get(f"/v1/event-types/{data['id']}", **bearer(key)).json()["event_type"]
    assert v1["bookingLimits"] == {"PER_DAY": 2, "PER_YEAR": 100}

    bad = call("PATCH", f"/v2/event-types/{data['id']}", {"bookingLimitsCount": {"day": 5, "week": 1}})
    assert bad.status_code == 400, bad.json()
    assert bad.json()["error"]["details"]["errors"]
    bad = call("PATCH", f"/v2/event-types/{data['id']}", {"bookingLimitsDuration": {"day": 0}})
    assert bad.status_code == 400
    stored.refresh_from_db()
    assert stored.booking_limits == {"PER_DAY": 2, "PER_YEAR": 100}

    off = call("PATCH", f"/v2/event-types/{data['id']}", {"bookingLimitsCount": {"disabled": True}})
    assert off.status_code == 200, off.json()
    assert "bookingLimitsCount" not in off.json()["data"]
    assert off.json()["data"]["bookingLimitsDuration"] == {"week": 120}
    stored.refresh_from_db()
    assert stored.booking_limits is None


# --- slots and bookings -------------------------------------------------------------------------


def test_a_full_day_offers_no_start_and_cancelled_bookings_do_not_count(api_client, key, organizer):
    event_type = limited(organizer, booking_limits={"PER_DAY": 1})
    monday = next_monday()
    book(event_type, berlin(monday, 10))
    book(event_type, berlin(monday + timedelta(days=1), 10), status=BookingStatus.CANCELLED)
    book(event_type, berlin(monday + timedelta(days=2), 10), status=BookingStatus.REJECTED)
    days = slot_days(api_client, key, event_type, monday, 3)
    assert days == {(monday + timedelta(days=n)).isoformat() for n in (1, 2)}
    # another event type of the same host is not limited by this one's bookings
    other = limited(organizer)
    assert monday.isoformat() in slot_days(api_client, key, other, monday, 1)


def test_the_count_boundary_through_the_api(api_client, key, organizer):
    event_type = limited(organizer, booking_limits={"PER_DAY": 2})
    monday = next_monday()
    book(event_type, berlin(monday, 9))
    assert monday.isoformat() in slot_days(api_client, key, event_type, monday, 1)
    second = api_client.post("/v1/bookings", booking_body(event_type, berlin(monday, 11)), format="json", **bearer(key))
    assert second.status_code == 200, second.json()
    assert monday.isoformat() not in slot_days(api_client, key, event_type, monday, 1)
    third = api_client.post("/v1/bookings", booking_body(event_type, berlin(monday, 13)), format="json", **bearer(key))
    assert third.status_code == 409, third.json()
    assert third.json()["code"] == "conflict"
    assert "booking limit" in third.json()["message"]
    assert Booking.objects.filter(event_type=event_type).count() == 2
    # v2 refuses it too
    v2 = api_client.generic(
        "POST",
        "/v2/bookings",
        json.dumps(
            {
                "eventTypeId": event_type.pk,
                "start": z(berlin(monday, 14)),
                "attendee": {"name": "Ada", "email": "ada@example.org", "timeZone": "Europe/Berlin"},
            }
        ),
        content_type="application/json",
        HTTP_CAL_API_VERSION="2024-08-13",
        **bearer(key),
    )
    assert v2.status_code == 409, v2.json()
    v2_slots = api_client.get(
        "/v2/slots",
        {
            "eventTypeId": event_type.pk,
            "start": z(berlin(monday, 0)),
            "end": z(berlin(monday + timedelta(days=1), 0)),
            "timeZone": "Europe/Berlin",
        },
        HTTP_CAL_API_VERSION="2024-09-04",
        **bearer(key),
    )
    assert v2_slots.status_code == 200, v2_slots.json()
    assert v2_slots.json()["data"] == {}


def test_a_week_runs_from_sunday(api_client, key, organizer):
    event_type = limited(organizer, booking_limits={"PER_WEEK": 1})
    monday = next_monday()
    book(event_type, berlin(monday, 10))
    saturday_before = monday - timedelta(days=2)
    days = slot_days(api_client, key, event_type, saturday_before, 9)
    assert days == {saturday_before.isoformat(), (monday + timedelta(days=6)).isoformat()}  # Sat before, next Sun


def test_month_and_year_periods():
    owner = UserFactory(time_zone="Europe/Berlin")
    monthly = limited(owner, booking_limits={"PER_MONTH": 1})
    yearly = limited(owner, booking_limits={"PER_YEAR": 1})
    book(monthly, berlin(date(2027, 3, 15), 10))
    book(yearly, berlin(date(2027, 6, 15), 10))
    starts = [berlin(date(2027, 2, 28), 16), berlin(date(2027, 3, 1), 9), berlin(date(2027, 3, 31), 16)]
    starts.append(berlin(date(2027, 4, 1), 9))
    assert [reason is None for reason in broken_limits(event_type=monthly, starts=starts)] == [True, False, False, True]
    starts = [berlin(date(2026, 12, 31), 16), berlin(date(2027, 1, 1), 9), berlin(date(2028, 1, 1), 9)]
    assert [reason is None for reason in broken_limits(event_type=yearly, starts=starts)] == [True, False, True]


def test_days_follow_the_owners_zone_across_dst():
    owner = UserFactory(time_zone="Europe/Berlin")
    event_type = limited(owner, booking_limits={"PER_DAY": 1})
    # 23:30 in Berlin on the 25-hour day the clocks go back is 22:30 UTC: it is that day's booking
    book(event_type, berlin(date(2026, 10, 25), 23, 30))
    assert broken_limits(event_type=event_type, starts=[berlin(date(2026, 10, 25), 0, 15)])[0] is not None
    assert broken_limits(event_type=event_type, starts=[berlin(date(2026, 10, 26), 0, 15)])[0] is None
    # 00:30 on the 23-hour day the clocks go forward is 22:30 UTC the day before
    book(event_type, berlin(date(2026, 3, 29), 0, 30))
    assert broken_limits(event_type=event_type, starts=[berlin(date(2026, 3, 28), 23, 45)])[0] is None
    assert broken_limits(event_type=event_type, starts=[berlin(date(2026, 3, 29), 23, 45)])[0] is not None


def test_a_duration_limit_refuses_what_would_pass_it(api_client, key, organizer):
    event_type = limited(organizer, duration_limits={"PER_DAY": 60})
    monday = next_monday()
    book(event_type, berlin(monday, 9))
    assert monday.isoformat() in slot_days(api_client, key, event_type, monday, 1)  # 30 + 30 <= 60
    book(event_type, berlin(monday, 10))
    assert monday.isoformat() not in slot_days(api_client, key, event_type, monday, 1)
    response = api_client.post(
        "/v1/bookings", booking_body(event_type, berlin(monday, 13)), format="json", **bearer(key)
    )
    assert response.status_code == 409, response.json()
    assert "duration limit" in response.json()["message"]


def test_rescheduling_into_a_full_period_is_refused_and_within_its_own_is_not(api_client, key, organizer):
    event_type = limited(organizer, booking_limits={"PER_DAY": 1})
    monday = next_monday()
    moving = book(event_type, berlin(monday, 10))
    book(event_type, berlin(monday + timedelta(days=1), 10))
    start = berlin(monday + timedelta(days=1), 14)
    into_full = api_client.patch(
        f"/v1/bookings/{moving.pk}",
        {"startTime": z(start)},
        format="json",
        **bearer(key),
    )
    assert into_full.status_code == 409, into_full.json()
    later = berlin(monday, 15)
    same_day = api_client.patch(
        f"/v1/bookings/{moving.pk}",
        {"startTime": z(later)},
        format="json",
        **bearer(key),
    )
    assert same_day.status_code == 200, same_day.json()


def test_why_not_names_the_limit(api_client, key, organizer):
    event_type = limited(organizer, booking_limits={"PER_DAY": 1})
    monday = next_monday()
    book(event_type, berlin(monday, 10))
    full = api_client.get(
        "/v1/slots/why-not", {"eventTypeId": event_type.pk, "start": z(berlin(monday, 14))}, **bearer(key)
    ).json()
    assert full["bookable"] is False
    assert [reason["rule"] for reason in full["reasons"]] == ["limit"]
    free = api_client.get(
        "/v1/slots/why-not",
        {"eventTypeId": event_type.pk, "start": z(berlin(monday + timedelta(days=1), 14))},
        **bearer(key),
    ).json()
    assert free["bookable"] is True
    assert free["reasons"] == []


def test_limits_cost_one_statement_and_none_without_them(organizer):
    monday = next_monday()
    plain = limited(organizer)
    capped = limited(organizer, booking_limits={"PER_DAY": 1}, duration_limits={"PER_WEEK": 600})
    arguments = {
        "range_start": berlin(monday, 0),
        "range_end": berlin(monday + timedelta(days=7), 0),
        "time_zone": "Europe/Berlin",
        "now": timezone.now(),
    }
    with CaptureQueriesContext(connection) as without:
        available_slots(event_type=plain, **arguments)
    with CaptureQueriesContext(connection) as with_limits:
        available_slots(event_type=capped, **arguments)
    assert len(with_limits) == len(without) + 1


# --- people's locks with big ids ----------------------------------------------------------------


def test_a_user_whose_id_is_above_int4_books_through_the_api(api_client):
    big = UserFactory(id=2**31 + 7, time_zone="Europe/Berlin")
    bigger = UserFactory(id=2**32 + 2**31 + 7, time_zone="Europe/Berlin")  # the same low 32 bits as `big`
    for user in (big, bigger):
        event_type = limited(user)
        start = berlin(next_monday(), 10)
        response = api_client.post(
            "/v1/bookings", booking_body(event_type, start), format="json", **bearer(ApiKeyFactory(user=user).raw_key)
        )
        assert response.status_code == 200, response.json()
        assert Booking.objects.get(pk=response.json()["id"]).organizer_id == user.pk


def test_a_team_event_types_limit_counts_every_hosts_bookings(api_client):
    event_type = TeamEventTypeFactory(
        scheduling_type="ROUND_ROBIN", minimum_booking_notice=0, booking_limits={"PER_DAY": 1}
    )
    hosts = []
    for _ in range(2):
        user = UserFactory(time_zone="UTC")
        user.default_schedule = ScheduleFactory(user=user, time_zone="UTC", availability=EVERY_DAY)
        user.save(update_fields=["default_schedule"])
        HostFactory(event_type=event_type, user=user)
        hosts.append(user)
    monday = next_monday()
    start = datetime.combine(monday, time(10), UTC)
    BookingFactory(organizer=hosts[0], event_type=event_type, start_time=start, end_time=start + timedelta(minutes=30))
    key = ApiKeyFactory(user=hosts[1]).raw_key
    query = {
        "eventTypeId": event_type.pk,
        "startTime": z(datetime.combine(monday, time(0), UTC)),
        "endTime": z(datetime.combine(monday + timedelta(days=2), time(0), UTC)),
    }
    for extra in ({}, {"includeHosts": "true"}):
        response = api_client.get("/v1/slots", {**query, **extra}, **bearer(key))
        assert response.status_code == 200, response.json()
        assert set(response.json()["slots"]) == {(monday + timedelta(days=1)).isoformat()}
    later = datetime.combine(monday, time(14), UTC)
    refused = api_client.post("/v1/bookings", booking_body(event_type, later), format="json", **bearer(key))
    assert refused.status_code == 409, refused.json()
