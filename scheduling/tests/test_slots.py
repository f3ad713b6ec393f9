"""The pure slot computation: rules, overrides, buffers, notice, interval and daylight-saving time."""

from datetime import UTC, date, datetime, time
from zoneinfo import ZoneInfo

from scheduling.slots import DateOverride, SlotRequest, WeeklyRule, free_slots, group_by_day, wall_to_instant

WEEKDAYS = frozenset({1, 2, 3, 4, 5})
EVERY_DAY = frozenset(range(7))
LONG_AGO = datetime(2020, 1, 1, tzinfo=UTC)


def nine_to_five(days=WEEKDAYS):
    return (WeeklyRule(days=days, start=time(9), end=time(17)),)


def utc(text: str) -> datetime:
    return datetime.fromisoformat(text).astimezone(UTC)


def request(**overrides) -> SlotRequest:
    values = {
        "time_zone": "Europe/Berlin",
        "weekly_rules": nine_to_five(),
        "overrides": (),
        "length": 30,
        "range_start": utc("2026-11-23T00:00:00+01:00"),
        "range_end": utc("2026-11-24T00:00:00+01:00"),
        "now": LONG_AGO,
    }
    values.update(overrides)
    return SlotRequest(**values)


def times(slot_request: SlotRequest, viewer: str | None = None) -> dict[str, list[str]]:
    grouped = group_by_day(free_slots(slot_request), viewer or slot_request.time_zone)
    return {day: [slot["time"] for slot in day_slots] for day, day_slots in grouped.items()}


def test_weekly_rule_gives_slots_every_length_inside_the_window():
    result = times(request())
    assert list(result) == ["2026-11-23"]
    assert result["2026-11-23"][0] == "2026-11-23T09:00:00+01:00"
    assert result["2026-11-23"][-1] == "2026-11-23T16:30:00+01:00"
    assert len(result["2026-11-23"]) == 16


def test_days_without_a_weekly_rule_have_no_slots():
    weekend = request(range_start=utc("2026-11-21T00:00:00+01:00"), range_end=utc("2026-11-23T00:00:00+01:00"))
    assert free_slots(weekend) == []


def test_date_override_replaces_the_weekly_rules_of_that_day_only():
    result = times(
        request(
            overrides=(DateOverride(date=date(2026, 11, 23), start=time(10), end=time(12)),),
            range_end=utc("2026-11-25T00:00:00+01:00"),
        )
    )
    assert result["2026-11-23"] == [
        "2026-11-23T10:00:00+01:00",
        "2026-11-23T10:30:00+01:00",
        "2026-11-23T11:00:00+01:00",
        "2026-11-23T11:30:00+01:00",
    ]
    assert len(result["2026-11-24"]) == 16


def test_override_on_a_day_without_weekly_rules_makes_it_available():
    saturday = request(
        overrides=(DateOverride(date=date(2026, 11, 21), start=time(10), end=time(11)),),
        range_start=utc("2026-11-21T00:00:00+01:00"),
        range_end=utc("2026-11-22T00:00:00+01:00"),
    )
    assert times(saturday) == {"2026-11-21": ["2026-11-21T10:00:00+01:00", "2026-11-21T10:30:00+01:00"]}


def test_all_day_off_override_removes_the_day():
    day_off = request(overrides=(DateOverride(date=date(2026, 11, 23), start=time(0), end=time(0)),))
    assert free_slots(day_off) == []


def test_several_overrides_on_one_date_all_count():
    split_day = request(
        overrides=(
            DateOverride(date=date(2026, 11, 23), start=time(9), end=time(10)),
            DateOverride(date=date(2026, 11, 23), start=time(15), end=time(16)),
        ),
        length=60,
    )
    assert times(split_day) == {"2026-11-23": ["2026-11-23T09:00:00+01:00", "2026-11-23T15:00:00+01:00"]}


def test_overlapping_rules_do_not_repeat_slots():
    rules = (
        WeeklyRule(days=WEEKDAYS, start=time(9), end=time(12)),
        WeeklyRule(days=frozenset({1}), start=time(11), end=time(13)),
    )
    result = times(request(weekly_rules=rules, length=60))
    assert result["2026-11-23"] == [f"2026-11-23T{hour:02d}:00:00+01:00" for hour in range(9, 13)]


def test_existing_booking_removes_overlapping_slots():
    busy = ((utc("2026-11-23T11:00:00+01:00"), utc("2026-11-23T11:30:00+01:00")),)
    result = times(request(busy=busy))["2026-11-23"]
    assert "2026-11-23T11:00:00+01:00" not in result
    assert "2026-11-23T10:30:00+01:00" in result
    assert "2026-11-23T11:30:00+01:00" in result
    assert len(result) == 15


def test_buffers_keep_free_time_around_existing_bookings():
    busy = ((utc("2026-11-23T11:00:00+01:00"), utc("2026-11-23T11:30:00+01:00")),)
    result = times(request(busy=busy, before_buffer=15, after_buffer=15))["2026-11-23"]
    # 10:30 would end at 11:00 and need 15 minutes after; 11:30 needs 15 minutes before.
    for taken in ("10:30", "11:00", "11:30"):
        assert f"2026-11-23T{taken}:00+01:00" not in result
    assert "2026-11-23T10:00:00+01:00" in result
    assert "2026-11-23T12:00:00+01:00" in result


def test_minimum_notice_counts_from_now():
    soon = request(now=utc("2026-11-23T09:10:00+01:00"), minimum_notice=120)
    assert times(soon)["2026-11-23"][0] == "2026-11-23T11:30:00+01:00"


def test_slot_interval_differs_from_length():
    hourly_every_half_hour = request(length=60, interval=30)
    result = times(hourly_every_half_hour)["2026-11-23"]
    assert result[:3] == ["2026-11-23T09:00:00+01:00", "2026-11-23T09:30:00+01:00", "2026-11-23T10:00:00+01:00"]
    assert result[-1] == "2026-11-23T16:00:00+01:00"


def test_slot_that_does_not_fit_before_the_window_end_is_not_offered():
    result = times(request(length=45))["2026-11-23"]
    assert result[-1] == "2026-11-23T15:45:00+01:00"


def test_range_limits_slot_starts():
    narrow = request(range_start=utc("2026-11-23T10:00:00+01:00"), range_end=utc("2026-11-23T11:00:00+01:00"))
    assert times(narrow) == {"2026-11-23": ["2026-11-23T10:00:00+01:00", "2026-11-23T10:30:00+01:00"]}


def test_slots_are_grouped_by_day_of_the_viewer_time_zone():
    evening = request(weekly_rules=(WeeklyRule(days=WEEKDAYS, start=time(18), end=time(22)),), length=60)
    result = times(evening, viewer="Asia/Kathmandu")
    assert result == {
        "2026-11-23": ["2026-11-23T22:45:00+05:45", "2026-11-23T23:45:00+05:45"],
        "2026-11-24": ["2026-11-24T00:45:00+05:45", "2026-11-24T01:45:00+05:45"],
    }


def test_schedule_in_kathmandu_uses_its_quarter_hour_offset():
    kathmandu = request(
        time_zone="Asia/Kathmandu",
        range_start=utc("2026-11-23T00:00:00+05:45"),
        range_end=utc("2026-11-24T00:00:00+05:45"),
    )
    assert free_slots(kathmandu)[0] == utc("2026-11-23T03:15:00Z")


def daily(zone: str, first: str, last: str, rules=None, **extra) -> SlotRequest:
    tz = ZoneInfo(zone)
    return request(
        time_zone=zone,
        weekly_rules=rules or nine_to_five(EVERY_DAY),
        range_start=datetime.combine(date.fromisoformat(first), time(0), tzinfo=tz).astimezone(UTC),
        range_end=datetime.combine(date.fromisoformat(last), time(0), tzinfo=tz).astimezone(UTC),
        **extra,
    )


def first_slots(slot_request: SlotRequest, viewer: str | None = None) -> dict[str, str]:
    return {day: day_slots[0] for day, day_slots in times(slot_request, viewer).items()}


def test_berlin_spring_forward_keeps_nine_oclock_local():
    result = first_slots(daily("Europe/Berlin", "2026-03-28", "2026-03-31"))
    assert result == {
        "2026-03-28": "2026-03-28T09:00:00+01:00",
        "2026-03-29": "2026-03-29T09:00:00+02:00",
        "2026-03-30": "2026-03-30T09:00:00+02:00",
    }


def test_berlin_fall_back_keeps_nine_oclock_local():
    result = first_slots(daily("Europe/Berlin", "2026-10-24", "2026-10-27"))
    assert result == {
        "2026-10-24": "2026-10-24T09:00:00+02:00",
        "2026-10-25": "2026-10-25T09:00:00+01:00",
        "2026-10-26": "2026-10-26T09:00:00+01:00",
    }


def test_new_york_spring_forward_and_fall_back_keep_nine_oclock_local():
    spring = first_slots(daily("America/New_York", "2026-03-07", "2026-03-09"))
    fall = first_slots(daily("America/New_York", "2026-10-31", "2026-11-02"))
    assert spring == {"2026-03-07": "2026-03-07T09:00:00-05:00", "2026-03-08": "2026-03-08T09:00:00-04:00"}
    assert fall == {"2026-10-31": "2026-10-31T09:00:00-04:00", "2026-11-01": "2026-11-01T09:00:00-05:00"}


def test_day_that_loses_an_hour_still_has_a_full_working_day():
    result = times(daily("Europe/Berlin", "2026-03-29", "2026-03-30"))
    assert len(result["2026-03-29"]) == 16
    assert result["2026-03-29"][-1] == "2026-03-29T16:30:00+02:00"


def test_viewer_across_the_atlantic_sees_the_shifting_gap_between_the_two_changes():
    # New York changes on 8 March, Berlin on 29 March: for three weeks they are 5 hours apart.
    result = first_slots(daily("Europe/Berlin", "2026-03-06", "2026-03-31"), viewer="America/New_York")
    assert result["2026-03-06"] == "2026-03-06T03:00:00-05:00"
    assert result["2026-03-09"] == "2026-03-09T04:00:00-04:00"
    assert result["2026-03-30"] == "2026-03-30T03:00:00-04:00"


def test_viewer_zone_changing_offset_moves_the_local_time_of_a_utc_schedule():
    utc_schedule = daily("UTC", "2026-10-24", "2026-10-26")
    assert first_slots(utc_schedule, viewer="Europe/Berlin") == {
        "2026-10-24": "2026-10-24T11:00:00+02:00",
        "2026-10-25": "2026-10-25T10:00:00+01:00",
    }


def test_window_in_the_spring_forward_gap_loses_the_missing_hour():
    override = DateOverride(date=date(2026, 3, 29), start=time(1), end=time(4))
    result = times(daily("Europe/Berlin", "2026-03-29", "2026-03-30", overrides=(override,), length=60))
    assert result == {"2026-03-29": ["2026-03-29T01:00:00+01:00", "2026-03-29T03:00:00+02:00"]}


def test_window_starting_inside_the_gap_starts_at_the_jump():
    override = DateOverride(date=date(2026, 3, 29), start=time(2, 30), end=time(4))
    result = times(daily("Europe/Berlin", "2026-03-29", "2026-03-30", overrides=(override,), length=60))
    assert result == {"2026-03-29": ["2026-03-29T03:00:00+02:00"]}


def test_window_over_the_fall_back_overlap_covers_the_repeated_hour():
    override = DateOverride(date=date(2026, 10, 25), start=time(1), end=time(4))
    result = times(daily("Europe/Berlin", "2026-10-25", "2026-10-26", overrides=(override,), length=60))
    assert result == {
        "2026-10-25": [
            "2026-10-25T01:00:00+02:00",
            "2026-10-25T02:00:00+02:00",
            "2026-10-25T02:00:00+01:00",
            "2026-10-25T03:00:00+01:00",
        ]
    }


def test_nonexistent_wall_time_maps_to_the_instant_of_the_jump():
    berlin = ZoneInfo("Europe/Berlin")
    jump = utc("2026-03-29T01:00:00Z")
    assert wall_to_instant(date(2026, 3, 29), time(2, 30), berlin, as_end=False) == jump
    assert wall_to_instant(date(2026, 3, 29), time(2, 30), berlin, as_end=True) == jump


def test_ambiguous_wall_time_starts_at_first_and_ends_at_second_occurrence():
    berlin = ZoneInfo("Europe/Berlin")
    assert wall_to_instant(date(2026, 10, 25), time(2, 30), berlin, as_end=False) == utc("2026-10-25T00:30:00Z")
    assert wall_to_instant(date(2026, 10, 25), time(2, 30), berlin, as_end=True) == utc("2026-10-25T01:30:00Z")


def test_lord_howe_half_hour_change_keeps_nine_oclock_local():
    result = first_slots(daily("Australia/Lord_Howe", "2026-10-03", "2026-10-05"))
    assert result == {"2026-10-03": "2026-10-03T09:00:00+10:30", "2026-10-04": "2026-10-04T09:00:00+11:00"}
    back = first_slots(daily("Australia/Lord_Howe", "2026-04-04", "2026-04-06"))
    assert back == {"2026-04-04": "2026-04-04T09:00:00+11:00", "2026-04-05": "2026-04-05T09:00:00+10:30"}


def test_lord_howe_half_hour_gap_shortens_the_window_by_thirty_minutes():
    override = DateOverride(date=date(2026, 10, 4), start=time(2), end=time(3))
    result = times(daily("Australia/Lord_Howe", "2026-10-04", "2026-10-05", overrides=(override,), length=30))
    assert result == {"2026-10-04": ["2026-10-04T02:30:00+11:00"]}


def test_santiago_midnight_gap_starts_the_day_at_one():
    rules = (WeeklyRule(days=EVERY_DAY, start=time(0), end=time(2)),)
    result = times(daily("America/Santiago", "2026-09-05", "2026-09-07", rules=rules, length=60))
    assert result == {
        "2026-09-05": ["2026-09-05T00:00:00-04:00", "2026-09-05T01:00:00-04:00"],
        "2026-09-06": ["2026-09-06T01:00:00-03:00"],
    }


def test_end_of_day_rule_reaches_midnight_even_when_midnight_does_not_exist():
    rules = (WeeklyRule(days=EVERY_DAY, start=time(22), end=time(23, 59)),)
    result = times(daily("America/Santiago", "2026-09-05", "2026-09-06", rules=rules, length=60))
    assert result == {"2026-09-05": ["2026-09-05T22:00:00-04:00", "2026-09-05T23:00:00-04:00"]}


def test_havana_midnight_fall_back_offers_midnight_twice():
    rules = (WeeklyRule(days=EVERY_DAY, start=time(0), end=time(2)),)
    result = times(daily("America/Havana", "2026-11-01", "2026-11-02", rules=rules, length=60))
    assert result == {
        "2026-11-01": ["2026-11-01T00:00:00-04:00", "2026-11-01T00:00:00-05:00", "2026-11-01T01:00:00-05:00"]
    }


def test_havana_midnight_spring_forward_starts_the_day_at_one():
    rules = (WeeklyRule(days=EVERY_DAY, start=time(0), end=time(2)),)
    result = times(daily("America/Havana", "2026-03-08", "2026-03-09", rules=rules, length=60))
    assert result == {"2026-03-08": ["2026-03-08T01:00:00-04:00"]}
