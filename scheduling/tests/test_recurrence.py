"""Where the occurrences of a recurring series fall: RFC 5545 dates, and the first start's wall-clock
time in the organiser's zone on each of them, across every DST change (pure, no database)."""

from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from hypothesis import given, settings
from hypothesis import strategies as st

from scheduling.recurrence import (
    MONTHLY,
    WEEKLY,
    YEARLY,
    Recurrence,
    occurrence_dates,
    occurrence_starts,
    plan_series,
    series_free_starts,
)
from scheduling.slots import DateOverride, SlotRequest, WeeklyRule, free_slots, free_slots_on_days, wall_to_instant

ZONES = ("Europe/Berlin", "America/New_York", "Australia/Lord_Howe", "Asia/Tokyo", "America/Santiago")


def local(instant: datetime, zone: str) -> datetime:
    return instant.astimezone(ZoneInfo(zone))


def test_monthly_series_from_the_31st_skips_months_without_one_and_keeps_its_count():
    dates = occurrence_dates(date(2027, 1, 31), Recurrence(MONTHLY, 1, 12), 7)
    assert dates == [
        date(2027, 1, 31),
        date(2027, 3, 31),
        date(2027, 5, 31),
        date(2027, 7, 31),
        date(2027, 8, 31),
        date(2027, 10, 31),
        date(2027, 12, 31),
    ]


def test_monthly_series_from_the_30th_skips_february_only():
    dates = occurrence_dates(date(2027, 1, 30), Recurrence(MONTHLY, 1, 12), 4)
    assert dates == [date(2027, 1, 30), date(2027, 3, 30), date(2027, 4, 30), date(2027, 5, 30)]


def test_every_second_month_from_the_31st_steps_over_the_short_months():
    dates = occurrence_dates(date(2027, 8, 31), Recurrence(MONTHLY, 2, 12), 4)
    assert dates == [date(2027, 8, 31), date(2027, 10, 31), date(2027, 12, 31), date(2028, 8, 31)]


def test_yearly_series_from_29_february_falls_in_leap_years_only():
    dates = occurrence_dates(date(2028, 2, 29), Recurrence(YEARLY, 1, 3), 3)
    assert dates == [date(2028, 2, 29), date(2032, 2, 29), date(2036, 2, 29)]


def test_weekly_series_with_an_interval():
    dates = occurrence_dates(date(2027, 3, 1), Recurrence(WEEKLY, 2, 3), 3)
    assert dates == [date(2027, 3, 1), date(2027, 3, 15), date(2027, 3, 29)]


def test_weekly_0900_in_berlin_stays_0900_across_both_changes_of_2027():
    for first_day in (date(2027, 3, 15), date(2027, 10, 18)):
        first = datetime.combine(first_day, time(9), tzinfo=ZoneInfo("Europe/Berlin"))
        starts = occurrence_starts(first.astimezone(UTC), "Europe/Berlin", Recurrence(WEEKLY, 1, 4), 4)
        assert [local(start, "Europe/Berlin").time() for start in starts] == [time(9)] * 4
        offsets = {local(start, "Europe/Berlin").utcoffset() for start in starts}
        assert offsets == {timedelta(hours=1), timedelta(hours=2)}


def test_new_york_series_keeps_0900_while_berlin_viewers_see_it_move():
    first = datetime(2027, 3, 8, 9, tzinfo=ZoneInfo("America/New_York"))
    starts = occurrence_starts(first, "America/New_York", Recurrence(WEEKLY, 1, 4), 4)
    assert [local(start, "America/New_York").time() for start in starts] == [time(9)] * 4
    # The US changes on 14 March, Europe on 28 March: for two weeks the gap is 5 hours, not 6.
    assert [local(start, "Europe/Berlin").time() for start in starts] == [time(15), time(14), time(14), time(15)]


def test_lord_howe_half_hour_change_keeps_the_wall_time():
    zone = "Australia/Lord_Howe"
    for first_day in (date(2027, 3, 28), date(2027, 9, 26)):
        first = datetime.combine(first_day, time(9, 30), tzinfo=ZoneInfo(zone))
        starts = occurrence_starts(first, zone, Recurrence(WEEKLY, 1, 3), 3)
        assert [local(start, zone).time() for start in starts] == [time(9, 30)] * 3
        assert len({local(start, zone).utcoffset() for start in starts}) == 2
        gaps = {later - earlier for earlier, later in zip(starts, starts[1:], strict=False)}
        # One of the weeks is half an hour longer (April) or shorter (October) in real time.
        assert gaps in (
            {timedelta(days=7, minutes=30), timedelta(days=7)},
            {timedelta(days=7, minutes=-30), timedelta(days=7)},
        )


def test_zone_without_dst_is_exactly_a_week_apart():
    first = datetime(2027, 3, 22, 9, tzinfo=ZoneInfo("Asia/Tokyo"))
    starts = occurrence_starts(first, "Asia/Tokyo", Recurrence(WEEKLY, 1, 10), 10)
    assert all(b - a == timedelta(days=7) for a, b in zip(starts, starts[1:], strict=False))


def test_occurrence_in_a_spring_forward_gap_is_the_instant_of_the_jump():
    zone = ZoneInfo("Europe/Berlin")
    first = datetime(2027, 3, 21, 2, 30, tzinfo=zone)
    starts = occurrence_starts(first, "Europe/Berlin", Recurrence(WEEKLY, 1, 3), 3)
    # 28 March 2027: 02:00 CET jumps to 03:00 CEST, i.e. 01:00 UTC; the week after is 02:30 again.
    assert starts[1] == datetime(2027, 3, 28, 1, 0, tzinfo=UTC)
    assert local(starts[1], "Europe/Berlin").time() == time(3)
    assert local(starts[2], "Europe/Berlin").time() == time(2, 30)


def test_occurrence_in_a_fall_back_overlap_is_the_first_of_the_two():
    zone = ZoneInfo("Europe/Berlin")
    first = datetime(2027, 10, 24, 2, 30, tzinfo=zone)
    starts = occurrence_starts(first, "Europe/Berlin", Recurrence(WEEKLY, 1, 2), 2)
    # 31 October 2027: 02:30 happens at 00:30 UTC (CEST) and again at 01:30 UTC (CET).
    assert starts[1] == datetime(2027, 10, 31, 0, 30, tzinfo=UTC)


def test_series_started_on_the_second_0230_of_a_fall_back_night_keeps_its_first_instant():
    second = datetime(2027, 10, 31, 1, 30, tzinfo=UTC)  # 02:30 CET, the repeated hour
    starts = occurrence_starts(second, "Europe/Berlin", Recurrence(WEEKLY, 1, 2), 2)
    assert starts[0] == second
    assert local(starts[1], "Europe/Berlin").time() == time(2, 30)


def _wall_exists_once(day: date, wall: time, zone: ZoneInfo) -> bool:
    naive = datetime.combine(day, wall)
    return zone.utcoffset(naive) == zone.utcoffset(naive.replace(fold=1))


@settings(max_examples=300, deadline=None)
@given(
    zone_name=st.sampled_from(ZONES),
    first_day=st.dates(min_value=date(2026, 12, 1), max_value=date(2027, 12, 31)),
    minutes=st.integers(min_value=0, max_value=24 * 60 - 1).map(lambda m: m - m % 15),
    freq=st.sampled_from([YEARLY, MONTHLY, WEEKLY]),
    interval=st.integers(min_value=1, max_value=3),
    count=st.integers(min_value=1, max_value=24),
)
def test_every_occurrence_has_the_first_ones_wall_time_unless_the_gap_or_fold_rule_applies(
    zone_name, first_day, minutes, freq, interval, count
):
    zone = ZoneInfo(zone_name)
    wall = time(minutes // 60, minutes % 60)
    first = wall_to_instant(first_day, wall, zone, as_end=False)
    first_wall = first.astimezone(zone).time()
    starts = occurrence_starts(first, zone_name, Recurrence(freq, interval, count), count)
    assert len(starts) == count
    assert starts == sorted(starts)
    dates = occurrence_dates(first.astimezone(zone).date(), Recurrence(freq, interval, count), count)
    for day, start in zip(dates, starts, strict=True):
        seen = start.astimezone(zone)
        if _wall_exists_once(day, first_wall, zone):
            assert (seen.date(), seen.time()) == (day, first_wall)
        else:
            # The documented rule: the first instant the clock shows the time, or the jump.
            assert start == wall_to_instant(day, first_wall, zone, as_end=False)
            assert seen.date() == day and seen.fold == 0


def _nine_to_eleven(zone: str, first_day: date, busy_start: datetime) -> tuple[SlotRequest, list[datetime]]:
    """Hour-long slots 09:00-11:00 on `first_day`'s weekday, one booking at `busy_start`; and the
    free slots of `first_day`, the candidates of a series."""
    request = SlotRequest(
        time_zone=zone,
        weekly_rules=(WeeklyRule(days=frozenset({(first_day.weekday() + 1) % 7}), start=time(9), end=time(11)),),
        overrides=(),
        length=60,
        range_start=datetime.combine(first_day, time(0), tzinfo=ZoneInfo(zone)),
        range_end=datetime(2027, 5, 1, tzinfo=UTC),
        now=datetime(2027, 1, 1, tzinfo=UTC),
        busy=((busy_start, busy_start + timedelta(hours=1)),),
    )
    candidates = [slot for slot in free_slots(request) if slot.astimezone(ZoneInfo(zone)).date() == first_day]
    return request, candidates


def test_series_filter_keeps_only_starts_whose_every_occurrence_is_free():
    zone = "Europe/Berlin"
    busy_start = datetime(2027, 3, 29, 9, tzinfo=ZoneInfo(zone))  # after the change: CEST
    request, candidates = _nine_to_eleven(zone, date(2027, 3, 1), busy_start)
    assert [local(slot, zone).time() for slot in candidates] == [time(9), time(10)]
    free = series_free_starts(request, plan_series(candidates, zone, Recurrence(WEEKLY, 1, 5), 5))
    # 09:00 on 29 March (the fifth Monday) is taken; 10:00 is free every week, DST included.
    assert [local(slot, zone).time() for slot in free] == [time(10)]
    assert series_free_starts(request, plan_series(candidates, zone, Recurrence(WEEKLY, 1, 4), 4)) == candidates


@settings(max_examples=60, deadline=None)
@given(
    zone_name=st.sampled_from(ZONES),
    first_day=st.dates(min_value=date(2027, 1, 1), max_value=date(2027, 12, 20)),
    offsets=st.sets(st.integers(min_value=0, max_value=40), min_size=1, max_size=8),
    start_hour=st.integers(min_value=1, max_value=10),
    hours=st.integers(min_value=1, max_value=12),
    length=st.sampled_from([15, 30, 45, 60]),
    busy_hours=st.lists(st.integers(min_value=0, max_value=24 * 40), max_size=6),
)
def test_free_slots_of_chosen_days_are_those_of_each_whole_day(
    zone_name, first_day, offsets, start_hour, hours, length, busy_hours
):
    # The series check computes only the days it needs; it must agree with the plain computation.
    zone = ZoneInfo(zone_name)
    origin = datetime.combine(first_day, time(0), tzinfo=UTC)
    request = SlotRequest(
        time_zone=zone_name,
        weekly_rules=(WeeklyRule(days=frozenset(range(7)), start=time(start_hour), end=time(start_hour + hours)),),
        overrides=(),
        length=length,
        range_start=origin,
        range_end=origin + timedelta(days=42),
        now=origin - timedelta(days=1),
        busy=tuple((origin + timedelta(hours=hour), origin + timedelta(hours=hour, minutes=50)) for hour in busy_hours),
    )
    days = {first_day + timedelta(days=offset) for offset in offsets}
    expected = set()
    for day in days:
        day_start = wall_to_instant(day, time(0), zone, as_end=False)
        day_end = wall_to_instant(day + timedelta(days=1), time(0), zone, as_end=False)
        whole_day = SlotRequest(**{**request.__dict__, "range_start": day_start, "range_end": day_end})
        expected |= {slot.astimezone(UTC).replace(tzinfo=None) for slot in free_slots(whole_day)}
    assert free_slots_on_days(request, days) == expected


def _whole_day_slots(request: SlotRequest, day: date) -> set[datetime]:
    """The plain computation's free slots of one local day, as naive UTC."""
    zone = ZoneInfo(request.time_zone)
    day_start = wall_to_instant(day, time(0), zone, as_end=False)
    day_end = wall_to_instant(day + timedelta(days=1), time(0), zone, as_end=False)
    whole_day = SlotRequest(**{**request.__dict__, "range_start": day_start, "range_end": day_end})
    return {slot.astimezone(UTC).replace(tzinfo=None) for slot in free_slots(whole_day)}


SERIES_ZONES = (*ZONES, "America/Havana", "UTC")


@settings(max_examples=150, deadline=None)
@given(
    zone_name=st.sampled_from(SERIES_ZONES),
    first_day=st.dates(min_value=date(2027, 1, 1), max_value=date(2027, 12, 20)),
    freq=st.sampled_from([WEEKLY, WEEKLY, MONTHLY, YEARLY]),
    interval=st.integers(min_value=1, max_value=3),
    count=st.integers(min_value=2, max_value=6),
    start_hour=st.integers(min_value=0, max_value=10),
    hours=st.integers(min_value=1, max_value=12),
    length=st.sampled_from([15, 30, 45, 60]),
    slot_interval=st.sampled_from([None, 10, 20]),
    buffers=st.tuples(st.sampled_from([0, 10]), st.sampled_from([0, 25])),
    notice_hours=st.integers(min_value=0, max_value=60),
    # Busy periods and a day off where occurrences fall: so many weeks (or months) after a day of the range.
    busy=st.lists(
        st.tuples(
            st.integers(min_value=0, max_value=16),
            st.integers(min_value=0, max_value=8),
            st.integers(min_value=0, max_value=23),
            st.integers(min_value=0, max_value=999_999),
        ),
        max_size=25,
    ),
    day_off=st.tuples(st.integers(min_value=0, max_value=16), st.integers(min_value=0, max_value=8)),
)
def test_series_filter_agrees_with_checking_every_occurrence_on_its_own(
    zone_name,
    first_day,
    freq,
    interval,
    count,
    start_hour,
    hours,
    length,
    slot_interval,
    buffers,
    notice_hours,
    busy,
    day_off,
):
    # The slots of a recurring event type keep a start when every later occurrence is a free slot of
    # the plain computation on its own day, whatever the zone's changes, buffers, notice and overrides.
    zone = ZoneInfo(zone_name)
    origin = datetime.combine(first_day, time(0), tzinfo=UTC)
    step = timedelta(days=7 if freq == WEEKLY else 30 if freq == MONTHLY else 365)
    override = DateOverride(date=first_day + step * day_off[0] + timedelta(days=day_off[1]), start=time(0), end=time(0))
    request = SlotRequest(
        time_zone=zone_name,
        weekly_rules=(WeeklyRule(days=frozenset(range(7)), start=time(start_hour), end=time(start_hour + hours)),),
        overrides=(override,),
        length=length,
        interval=slot_interval,
        before_buffer=buffers[0],
        after_buffer=buffers[1],
        minimum_notice=notice_hours * 60,
        range_start=origin,
        range_end=origin + timedelta(days=8),
        now=origin - timedelta(hours=12),
        busy=tuple(
            (start, start + timedelta(minutes=50))
            for start in (
                origin + step * steps + timedelta(days=day, hours=hour, microseconds=micro)
                for steps, day, hour, micro in busy
            )
        ),
    )
    recurrence = Recurrence(freq, interval, count)
    candidates = free_slots(request)
    plan = plan_series(candidates, zone_name, recurrence, count)
    if plan.span_end is None:
        assert plan.series == []
        return
    kept = series_free_starts(SlotRequest(**{**request.__dict__, "range_end": plan.span_end}), plan)
    by_day: dict[date, set[datetime]] = {}
    expected = []
    for candidate in candidates:
        starts = occurrence_starts(candidate, zone_name, recurrence, count)
        if len(starts) < count:
            continue
        for start in starts[1:]:
            day = start.astimezone(zone).date()
            if day not in by_day:
                by_day[day] = _whole_day_slots(request, day)
            if start.astimezone(UTC).replace(tzinfo=None) not in by_day[day]:
                break
        else:
            expected.append(candidate)
    assert kept == expected


def test_series_filter_checks_an_occurrence_on_the_day_of_a_dst_change():
    # Berlin springs forward on Sunday 28 March 2027: that day's occurrences are found by the gap
    # rule, not by the day's midnight plus the wall time, and are checked against its bookings too.
    zone = "Europe/Berlin"
    request, candidates = _nine_to_eleven(zone, date(2027, 3, 7), datetime(2027, 3, 28, 9, tzinfo=ZoneInfo(zone)))
    free = series_free_starts(request, plan_series(candidates, zone, Recurrence(WEEKLY, 1, 4), 4))
    assert [local(slot, zone).time() for slot in free] == [time(10)]
    day_off = DateOverride(date=date(2027, 3, 28), start=time(0), end=time(0))
    request = SlotRequest(**{**request.__dict__, "overrides": (day_off,), "busy": ()})
    assert series_free_starts(request, plan_series(candidates, zone, Recurrence(WEEKLY, 1, 4), 4)) == []
    assert series_free_starts(request, plan_series(candidates, zone, Recurrence(WEEKLY, 1, 3), 3)) == candidates
