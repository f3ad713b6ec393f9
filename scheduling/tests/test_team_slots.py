"""Slots of collective and round-robin event types against an independent computation.

The oracle below does not use `scheduling.slots`: it walks every minute in UTC, reads the host's
wall clock with `zoneinfo`, and asks whether a rule of that local date covers it. Hosts are in
zones whose daylight-saving changes fall on different dates (and one at +05:45), over ranges that
contain those changes, with rules starting or ending inside a skipped or repeated hour."""

import random
from datetime import UTC, datetime, time, timedelta
from zoneinfo import ZoneInfo

import pytest

from accounts.tests.factories import ApiKeyFactory, UserFactory
from scheduling.models import Availability, BookingHost
from scheduling.selectors.hosts import team_hosts
from scheduling.selectors.team_slots import team_available_slots, team_free_hosts
from scheduling.slots import group_seconds_by_day, instant_of
from scheduling.tests.factories import (
    AvailabilityFactory,
    BookingFactory,
    EventTypeFactory,
    HostFactory,
    ScheduleFactory,
    TeamEventTypeFactory,
)
from tests.support.credentials import bearer

pytestmark = pytest.mark.django_db

ZONES = [
    "Europe/Berlin",
    "America/New_York",
    "Australia/Sydney",
    "Asia/Kathmandu",
    "America/Santiago",
    "Europe/London",
    "Pacific/Auckland",
    "America/Los_Angeles",
    "Asia/Tokyo",
    "UTC",
]
# A collective meeting needs every host at once: zones a working day apart at most.
NEAR_ZONES = ["Europe/Berlin", "Europe/London", "UTC", "America/New_York", "America/Santiago"]
# Each range holds daylight-saving changes of several of the zones above.
RANGES = [
    (datetime(2026, 10, 23, tzinfo=UTC), datetime(2026, 11, 3, tzinfo=UTC)),
    (datetime(2026, 3, 6, tzinfo=UTC), datetime(2026, 3, 10, tzinfo=UTC)),
    (datetime(2026, 3, 27, tzinfo=UTC), datetime(2026, 4, 7, tzinfo=UTC)),
    (datetime(2026, 9, 3, tzinfo=UTC), datetime(2026, 9, 8, tzinfo=UTC)),
]
MINUTE = timedelta(minutes=1)
WALL_TIMES = [time(h, m) for h in range(24) for m in (0, 15, 30)] + [time(23, 59)]


def random_rules(rng):
    """Rules as (days or None, date or None, start, end): weekly rules, and sometimes overrides."""
    rules = []
    for _ in range(rng.randint(1, 2)):
        if rng.random() < 0.6:  # long days, so that hosts far apart still share some hours
            start = rng.choice(WALL_TIMES[:28])
            end = rng.choice(WALL_TIMES[-28:])
        else:
            start = rng.choice(WALL_TIMES[:-4])
            end = rng.choice([wall for wall in WALL_TIMES if wall > start])
        rules.append((frozenset(rng.sample(range(7), rng.randint(5, 7))), None, start, end))
    return rules


def oracle_minutes(zone_name, rules, first, last):
    """Every UTC minute in [first, last) at which the host's wall clock is inside one of its rules."""
    zone = ZoneInfo(zone_name)
    overrides = {}
    for _days, day, start, end in rules:
        if day is not None:
            overrides.setdefault(day, []).append((start, end))
    available = set()
    moment = first
    while moment < last:
        local = moment.astimezone(zone)
        wall, day = local.time().replace(tzinfo=None), local.date()
        if day in overrides:
            spans = overrides[day]
        else:
            weekday = (day.weekday() + 1) % 7
            spans = [(start, end) for days, on, start, end in rules if on is None and weekday in days]
        if any(start <= wall and (end >= time(23, 59) or wall < end) for start, end in spans):
            available.add(moment)
        moment += MINUTE
    return available


def oracle_group(members, minutes, busy, *, length, step, before, after, earliest, range_end):
    shared = set.intersection(*(minutes[user] for user in members))
    starts, ordered = [], sorted(shared)
    index = 0
    while index < len(ordered):
        run_start = ordered[index]
        while index + 1 < len(ordered) and ordered[index + 1] == ordered[index] + MINUTE:
            index += 1
        run_end = ordered[index] + MINUTE
        index += 1
        start = run_start
        while start + length <= run_end and start < range_end:
            meeting = (start - before, start + length + after)
            clash = any(
                b_start < meeting[1] and meeting[0] < b_end for user in members for b_start, b_end in busy[user]
            )
            if start >= earliest and not clash:
                starts.append(start)
            start += step
    return starts


def oracle(hosts, minutes, busy, **rules):
    fixed = [user for user, is_fixed in hosts if is_fixed]
    rotating = [user for user, is_fixed in hosts if not is_fixed]
    if not rotating:
        return {start: sorted(fixed) for start in oracle_group(fixed, minutes, busy, **rules)}
    free = {}
    for user in rotating:
        for start in oracle_group([*fixed, user], minutes, busy, **rules):
            free.setdefault(start, []).append(user)
    return {start: sorted(users) for start, users in sorted(free.items())}


def build_team(rng, size, kind, range_start, range_end):
    event_type = TeamEventTypeFactory(
        scheduling_type=kind,
        length=rng.choice([15, 30, 45, 60]),
        slot_interval=rng.choice([None, 15, 20]),
        before_event_buffer=rng.choice([0, 0, 10]),
        after_event_buffer=rng.choice([0, 5]),
        minimum_booking_notice=0,
    )
    hosts, minutes, busy = [], {}, {}
    for index in range(size):
        zones = NEAR_ZONES if kind == "COLLECTIVE" else ZONES
        zone = zones[(index + rng.randint(0, 9)) % len(zones)]
        user = UserFactory(time_zone=zone)
        rules = random_rules(rng)
        if kind == "COLLECTIVE":
            rules.append((frozenset(range(7)), None, time(8, 0), time(20, 0)))
        if rng.random() < 0.5:
            day = (range_start + timedelta(days=rng.randint(0, 3))).date()
            start = rng.choice(WALL_TIMES[:-4])
            end = rng.choice([wall for wall in WALL_TIMES if wall > start] + [time(0, 0)])
            rules.append((None, day, start, end if end != time(0, 0) else time(0, 0)))
            if end == time(0, 0):
                rules[-1] = (None, day, time(0, 0), time(0, 0))
        schedule = ScheduleFactory(user=user, time_zone=zone, availability=[])
        for days, day, start, end in rules:
            AvailabilityFactory(
                schedule=schedule,
                days_mask=Availability.mask_for(days) if days else 0,
                date=day,
                start_time=start,
                end_time=end,
            )
        user.default_schedule = schedule
        user.save(update_fields=["default_schedule"])
        is_fixed = kind == "COLLECTIVE" or (index < 2 and rng.random() < 0.5)
        HostFactory(event_type=event_type, user=user, is_fixed=is_fixed)
        hosts.append((user.pk, is_fixed))
        # The oracle reads a day either side of the range, as far as a window can reach.
        minutes[user.pk] = oracle_minutes(zone, rules, range_start - timedelta(days=2), range_end + timedelta(days=2))
        busy[user.pk], taken_starts = [], []
        for _ in range(rng.randint(0, 4)):
            start = range_start + timedelta(minutes=15 * rng.randint(0, int((range_end - range_start) / MINUTE) // 15))
            if any(abs(start - taken) < timedelta(minutes=30) for taken in taken_starts):
                continue  # one person's bookings never overlap (the database refuses it)
            taken_starts.append(start)
            buffers = rng.choice([(0, 0), (15, 10)])
            own = EventTypeFactory(owner=user, before_event_buffer=buffers[0], after_event_buffer=buffers[1])
            BookingFactory(organizer=user, event_type=own, start_time=start, end_time=start + timedelta(minutes=30))
            busy[user.pk].append((start - timedelta(minutes=buffers[0]), start + timedelta(minutes=30 + buffers[1])))
    return event_type, hosts, minutes, busy


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("kind", ["COLLECTIVE", "ROUND_ROBIN"])
def test_team_slots_match_an_independent_computation(seed, kind):
    rng = random.Random(f"{kind}-{seed}")
    range_start, range_end = RANGES[seed % len(RANGES)]
    size = [2, 3, 5, 10][seed % 4]
    event_type, hosts, minutes, busy = build_team(rng, size, kind, range_start, range_end)
    now = range_start - timedelta(days=1)
    expected = oracle(
        hosts,
        minutes,
        busy,
        length=timedelta(minutes=event_type.length),
        step=timedelta(minutes=event_type.slot_interval or event_type.length),
        before=timedelta(minutes=event_type.before_event_buffer),
        after=timedelta(minutes=event_type.after_event_buffer),
        earliest=range_start,
        range_end=range_end,
    )
    found = team_free_hosts(event_type=event_type, range_start=range_start, range_end=range_end, now=now)
    assert expected  # every case offers something, so that the comparison says something
    assert {instant_of(start): sorted(users) for start, users in found.items()} == expected
    assert len(team_hosts(event_type)) == size
    # GET /slots reads the starts alone (`team_starts`), by a path of its own.
    grouped = team_available_slots(
        event_type=event_type, range_start=range_start, range_end=range_end, time_zone="UTC", now=now
    )
    shown = [slot["time"] for slots in grouped.values() for slot in slots]
    assert shown == [start.isoformat().replace("+00:00", "Z") for start in sorted(expected)]


def test_a_collective_booking_keeps_every_host_busy(api_client):
    """A host attending a team booking they do not organize is busy then, for every event type."""
    day = datetime(2026, 12, 1, 9, tzinfo=UTC)
    event_type = TeamEventTypeFactory(scheduling_type="COLLECTIVE", minimum_booking_notice=0)
    users = []
    for _ in range(2):
        user = UserFactory()
        schedule = ScheduleFactory(user=user, time_zone="UTC")
        user.default_schedule = schedule
        user.save(update_fields=["default_schedule"])
        HostFactory(event_type=event_type, user=user)
        users.append(user)
    booking = BookingFactory(organizer=users[0], event_type=event_type, start_time=day, end_time=day + 30 * MINUTE)
    BookingHost.objects.create(booking=booking, user=users[1])
    personal = EventTypeFactory(owner=users[1], schedule=users[1].default_schedule, minimum_booking_notice=0)
    key = ApiKeyFactory(user=users[1]).raw_key
    query = {"startTime": "2026-12-01T08:00:00Z", "endTime": "2026-12-01T10:00:00Z", "timeZone": "UTC"}
    for one in (event_type, personal):
        response = api_client.get("/v1/slots", {**query, "eventTypeId": one.pk}, **bearer(key))
        assert response.status_code == 200, response.json()
        times = [slot["time"] for slot in response.json()["slots"]["2026-12-01"]]
        assert "2026-12-01T09:00:00Z" not in times
        assert "2026-12-01T09:30:00Z" in times


def test_a_host_without_a_schedule_is_never_free():
    event_type = TeamEventTypeFactory(scheduling_type="COLLECTIVE", minimum_booking_notice=0)
    HostFactory(event_type=event_type, user=UserFactory())
    start = datetime(2026, 12, 1, tzinfo=UTC)
    assert (
        team_free_hosts(event_type=event_type, range_start=start, range_end=start + timedelta(days=2), now=start) == {}
    )


@pytest.mark.parametrize(
    "zone_name",
    ["Europe/Berlin", "America/Santiago", "Australia/Lord_Howe", "America/Havana", "Asia/Kathmandu", "UTC"],
)
def test_starts_grouped_from_cached_pieces_read_as_aware_datetimes_do(zone_name):
    # Every 15 minutes of 2026, its DST changes included, and a day of 1900 (a local mean time's
    # offset in seconds): the texts `group_seconds_by_day` puts together are `isoformat`'s.
    zone = ZoneInfo(zone_name)
    starts = [*range(1767225600, 1767225600 + 366 * 86400, 900), *range(-2208988800, -2208988800 + 86400, 1800)]
    expected = {}
    for start in starts:
        text = datetime.fromtimestamp(start, zone).isoformat()
        if zone_name == "UTC":
            text = text.removesuffix("+00:00") + "Z"
        expected.setdefault(text[:10], []).append({"time": text})
    assert group_seconds_by_day(starts, zone_name) == expected
