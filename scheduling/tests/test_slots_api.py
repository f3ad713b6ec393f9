"""GET /slots: the schedule, existing bookings and the viewer's time zone, through the API."""

from datetime import date, time, timedelta
from zoneinfo import ZoneInfo

import pytest
from django.utils import timezone

from accounts.tests.factories import AccessTokenFactory
from scheduling.models import Availability, BookingStatus
from scheduling.tests.factories import BookingFactory, EventTypeFactory, ScheduleFactory
from tests.support.credentials import bearer

pytestmark = pytest.mark.django_db

BERLIN = ZoneInfo("Europe/Berlin")


def monday_ahead(weeks: int = 2) -> date:
    today = timezone.now().astimezone(BERLIN).date()
    return today + timedelta(days=(7 - today.weekday()) % 7 + 7 * weeks)


@pytest.fixture
def event_type(organizer):
    """A 60-minute event type (`organizer` and `key` come from tests.support.people)."""
    return EventTypeFactory(owner=organizer, length=60)


def get_slots(api_client, key, event_type, start, end, zone=None):
    query = f"eventTypeId={event_type.pk}&startTime={start}&endTime={end}"
    if zone:
        query += f"&timeZone={zone}"
    return api_client.get(f"/v1/slots?{query}", **bearer(key))


def test_slots_of_a_day_in_the_schedules_zone(api_client, key, event_type):
    day = monday_ahead()
    response = get_slots(api_client, key, event_type, day, day, "Europe/Berlin")
    assert response.status_code == 200, response.json()
    offset = datetime_offset(day)
    assert response.json() == {
        "slots": {day.isoformat(): [{"time": f"{day}T{hour:02d}:00:00{offset}"} for hour in range(9, 17)]}
    }


def datetime_offset(day: date) -> str:
    from datetime import datetime

    return datetime.combine(day, time(12), tzinfo=BERLIN).isoformat()[-6:]


def test_slots_grouped_in_the_viewers_zone(api_client, key, event_type):
    day = monday_ahead()
    slots = get_slots(api_client, key, event_type, day, day, "Asia/Kathmandu").json()["slots"]
    assert list(slots) == [day.isoformat()]
    assert all(slot["time"].endswith("+05:45") for slot in slots[day.isoformat()])


def test_existing_accepted_and_pending_bookings_are_busy_but_cancelled_are_not(api_client, key, organizer, event_type):
    from datetime import datetime

    day = monday_ahead()
    for hour, status in ((10, BookingStatus.ACCEPTED), (12, BookingStatus.PENDING), (14, BookingStatus.CANCELLED)):
        start = datetime.combine(day, time(hour), tzinfo=BERLIN)
        BookingFactory(organizer=organizer, start_time=start, end_time=start + timedelta(minutes=60), status=status)
    slots = get_slots(api_client, key, event_type, day, day, "Europe/Berlin").json()["slots"][day.isoformat()]
    hours = [int(slot["time"][11:13]) for slot in slots]
    assert hours == [9, 11, 13, 14, 15, 16]


def test_date_override_and_day_off_through_the_api(api_client, key, organizer):
    day = monday_ahead()
    schedule = ScheduleFactory(user=organizer)
    Availability.objects.create(schedule=schedule, date=day, start_time=time(13), end_time=time(15))
    Availability.objects.create(schedule=schedule, date=day + timedelta(days=1), start_time=time(0), end_time=time(0))
    event_type = EventTypeFactory(owner=organizer, schedule=schedule, length=60)
    slots = get_slots(api_client, key, event_type, day, day + timedelta(days=2), "Europe/Berlin").json()["slots"]
    assert [slot["time"][11:16] for slot in slots[day.isoformat()]] == ["13:00", "14:00"]
    assert (day + timedelta(days=1)).isoformat() not in slots
    assert len(slots[(day + timedelta(days=2)).isoformat()]) == 8


def test_event_type_without_own_schedule_uses_the_hosts_default(api_client, key, organizer):
    schedule = ScheduleFactory(user=organizer, availability=[{"start_time": time(8), "end_time": time(9)}])
    organizer.default_schedule = schedule
    organizer.save()
    event_type = EventTypeFactory(owner=organizer, schedule=None, length=60)
    day = monday_ahead()
    slots = get_slots(api_client, key, event_type, day, day, "Europe/Berlin").json()["slots"]
    assert [slot["time"][11:16] for slot in slots[day.isoformat()]] == ["08:00"]


def test_minimum_notice_hides_slots_that_are_too_soon(api_client, key, organizer):
    event_type = EventTypeFactory(owner=organizer, length=60, minimum_booking_notice=60 * 24 * 365)
    day = monday_ahead()
    assert get_slots(api_client, key, event_type, day, day).json() == {"slots": {}}


def test_slots_across_the_berlin_autumn_change_stay_at_nine_local(api_client, key, organizer):
    # 2026-10-25 is in the past by the time this runs, so the schedule's zone does the test:
    # every year has its last October Sunday; pick the next one.
    today = timezone.now().astimezone(BERLIN).date()
    year = today.year if today < date(today.year, 10, 20) else today.year + 1
    last_sunday = max(date(year, 10, day) for day in range(25, 32) if date(year, 10, day).weekday() == 6)
    schedule = ScheduleFactory(user=organizer, availability=[{"days_mask": 0b1111111}])
    event_type = EventTypeFactory(owner=organizer, schedule=schedule, length=60, minimum_booking_notice=0)
    start, end = last_sunday - timedelta(days=1), last_sunday + timedelta(days=1)
    slots = get_slots(api_client, key, event_type, start, end, "Europe/Berlin").json()["slots"]
    assert slots[start.isoformat()][0]["time"] == f"{start}T09:00:00+02:00"
    assert slots[last_sunday.isoformat()][0]["time"] == f"{last_sunday}T09:00:00+01:00"
    assert slots[end.isoformat()][0]["time"] == f"{end}T09:00:00+01:00"
    new_york = get_slots(api_client, key, event_type, start, end, "America/New_York").json()["slots"]
    assert new_york[start.isoformat()][0]["time"] == f"{start}T03:00:00-04:00"
    assert new_york[last_sunday.isoformat()][0]["time"] == f"{last_sunday}T04:00:00-04:00"


def test_range_longer_than_62_days_is_a_400(api_client, key, event_type):
    day = monday_ahead()
    response = get_slots(api_client, key, event_type, day, day + timedelta(days=62))
    assert response.status_code == 400
    assert "endTime" in response.json()["errors"]


def test_range_of_exactly_62_days_is_allowed(api_client, key, event_type):
    day = monday_ahead()
    response = get_slots(api_client, key, event_type, f"{day}T00:00:00Z", f"{day + timedelta(days=62)}T00:00:00Z")
    assert response.status_code == 200


def test_invalid_time_zone_is_a_400_naming_it(api_client, key, event_type):
    day = monday_ahead()
    response = get_slots(api_client, key, event_type, day, day, "Europe/Atlantis")
    assert response.status_code == 400
    assert response.json()["errors"]["timeZone"] == ["'Europe/Atlantis' is not a valid IANA time zone."]


@pytest.mark.parametrize(
    "query",
    [
        "startTime=2030-01-01&endTime=2030-01-02",
        "eventTypeId=x&startTime=2030-01-01&endTime=2030-01-02",
        "eventTypeId={id}&startTime=soon&endTime=2030-01-02",
        "eventTypeId={id}&startTime=2030-01-02&endTime=2030-01-01",
        "eventTypeId={id}&startTime=2030-01-01",
    ],
)
def test_bad_query_is_a_400(api_client, key, event_type, query):
    response = api_client.get("/v1/slots?" + query.format(id=event_type.pk), **bearer(key))
    assert response.status_code == 400
    assert response.json()["code"] == "validation_error"


def test_hidden_event_type_of_someone_else_is_404(api_client, key):
    hidden = EventTypeFactory(hidden=True)
    day = monday_ahead()
    response = get_slots(api_client, key, hidden, day, day)
    assert response.status_code == 404


def test_slots_need_read_booking_scope(api_client, organizer, event_type):
    day = monday_ahead()
    token = AccessTokenFactory(user=organizer, scope="READ_EVENT_TYPE").raw_token
    assert get_slots(api_client, token, event_type, day, day).status_code == 403
    token = AccessTokenFactory(user=organizer, scope="READ_BOOKING").raw_token
    assert get_slots(api_client, token, event_type, day, day).status_code == 200


def test_offered_slot_can_be_booked(api_client, key, event_type):
    day = monday_ahead()
    first = get_slots(api_client, key, event_type, day, day, "America/New_York").json()["slots"]
    slot_time = next(iter(first.values()))[0]["time"]
    body = {"eventTypeId": event_type.pk, "start": slot_time, "name": "A", "email": "a@example.org", "timeZone": "UTC"}
    assert api_client.post("/v1/bookings", body, format="json", **bearer(key)).status_code == 200
    after = get_slots(api_client, key, event_type, day, day, "America/New_York").json()["slots"]
    assert slot_time not in [slot["time"] for slots in after.values() for slot in slots]


def test_offset_with_unencoded_plus_is_read_as_plus(api_client, key, event_type):
    day = monday_ahead()
    encoded = get_slots(api_client, key, event_type, f"{day}T11:00:00%2B01:00", f"{day}T13:00:00%2B01:00")
    unencoded = get_slots(api_client, key, event_type, f"{day}T11:00:00+01:00", f"{day}T13:00:00+01:00")
    assert encoded.status_code == unencoded.status_code == 200
    assert encoded.json() == unencoded.json()
    assert [slot["time"] for slot in encoded.json()["slots"][day.isoformat()]] == [
        f"{day}T10:00:00Z",
        f"{day}T11:00:00Z",
    ]


@pytest.mark.parametrize(("start", "end"), [("0001-01-01", "0001-01-02"), ("9999-12-30", "9999-12-31")])
def test_range_at_the_edges_of_the_calendar_is_a_400(api_client, key, event_type, start, end):
    response = get_slots(api_client, key, event_type, start, end, "Pacific/Kiritimati")
    assert response.status_code == 400
    assert response.json()["code"] == "validation_error"
