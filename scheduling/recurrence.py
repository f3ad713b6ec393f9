"""Recurring series: where each occurrence of a series falls. Pure functions, no database.

An event type's `recurringEvent` is Cal.com's: `{"freq": 2, "interval": 1, "count": 12}`, `freq`
being the iCalendar RRULE frequency as Cal.com numbers it (0 = yearly, 1 = monthly, 2 = weekly;
Cal.com offers no other). A series booked from a first start repeats that start's **wall-clock
time in the organiser's schedule zone**, so a weekly 09:00 stays at 09:00 local across a DST
change, whatever the attendee's zone (Cal.com computes the dates in the booker's zone and shifts
them by the booker's DST, which moves the meeting by an hour for an organiser elsewhere).

Dates follow RFC 5545 (what Cal.com's rrule library does): a monthly series started on the 31st
falls on the 31st of the months that have one and skips the others; a yearly series started on
29 February falls on 29 February of leap years only; skipped dates do not count, so a series
always has its `count` occurrences. Each occurrence's wall time is turned into an instant by the
rule of every window and slot (`scheduling.slots.wall_to_instant`): a time in a spring-forward gap
is the instant of the jump, a time that a fall-back shows twice is its first instant.
"""

from __future__ import annotations

import calendar
from bisect import bisect_left
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from scheduling.slots import (
    DAY_SECONDS,
    LocalDays,
    SlotRequest,
    epoch_seconds,
    free_slot_seconds_on_days,
    seconds_since_midnight,
    wall_to_instant,
)

YEARLY, MONTHLY, WEEKLY = 0, 1, 2
FREQUENCY_NAMES = {YEARLY: "yearly", MONTHLY: "monthly", WEEKLY: "weekly"}
# Cal.com's event type settings: "repeats every 1-20 weeks/months/years, for a maximum of 1-24 events".
MAX_INTERVAL = 20
MAX_COUNT = 24
# Months or years stepped through looking for the next valid date: enough for any allowed
# interval (a 29 February comes at least every 8 years; a 31st at least every 2 months).
_MAX_STEPS = MAX_COUNT * 64


@dataclass(frozen=True)
class Recurrence:
    freq: int
    interval: int
    count: int

    @classmethod
    def from_json(cls, value: dict) -> Recurrence:
        return cls(freq=int(value["freq"]), interval=int(value["interval"]), count=int(value["count"]))

    def as_json(self, count: int | None = None) -> dict:
        """Cal.com's shape; `count` overrides the event type's (the occurrences actually booked)."""
        return {"freq": self.freq, "count": self.count if count is None else count, "interval": self.interval}


def _add_months(first: date, months: int) -> date | None:
    year, month_index = divmod(first.month - 1 + months, 12)
    year += first.year
    if year > 9999:
        return None
    month = month_index + 1
    if first.day > calendar.monthrange(year, month)[1]:
        return None
    return date(year, month, first.day)


def occurrence_dates(first: date, recurrence: Recurrence, count: int) -> list[date]:
    """The local dates of the first `count` occurrences of a series starting on `first`."""
    if recurrence.freq == WEEKLY:
        return [first + timedelta(weeks=recurrence.interval * index) for index in range(count)]
    months_per_step = recurrence.interval * (12 if recurrence.freq == YEARLY else 1)
    dates = [first]
    step = 0
    while len(dates) < count and step < _MAX_STEPS:
        step += 1
        candidate = _add_months(first, months_per_step * step)
        if candidate is not None:
            dates.append(candidate)
    return dates


def occurrence_starts(first_start: datetime, time_zone: str, recurrence: Recurrence, count: int) -> list[datetime]:
    """The instants of the first `count` occurrences of a series whose first occurrence is
    `first_start`: the same wall-clock time in `time_zone` (the organiser's schedule zone) on each
    occurrence's date, by the gap/fold rule of the module docstring. The first is `first_start`
    itself (it may be the second 02:30 of a fall-back night)."""
    zone = ZoneInfo(time_zone)
    local = first_start.astimezone(zone)
    wall = local.time().replace(tzinfo=None, fold=0)
    dates = occurrence_dates(local.date(), recurrence, count)
    return [first_start] + [wall_to_instant(day, wall, zone, as_end=False) for day in dates[1:]]


@dataclass(frozen=True)
class SeriesPlan:
    """The series of each candidate start: its local wall time and the dates of its later
    occurrences; `days`, every such date; `span_end`, an instant after the last of them (the
    availability and bookings to load reach that far)."""

    time_zone: str
    series: list[tuple[datetime, time, list[date]]]
    days: frozenset[date]
    span_end: datetime | None


def plan_series(candidates: list[datetime], time_zone: str, recurrence: Recurrence, count: int) -> SeriesPlan:
    zone = ZoneInfo(time_zone)
    dates_by_day: dict[date, list[date]] = {}
    series = []
    for start in candidates:
        local = start.astimezone(zone)
        day = local.date()
        if day not in dates_by_day:
            dates_by_day[day] = occurrence_dates(day, recurrence, count)[1:]
        if len(dates_by_day[day]) == count - 1:
            wall = local.time()  # naive; it keeps the fold of a repeated hour, which is dropped
            series.append((start, wall.replace(fold=0) if wall.fold else wall, dates_by_day[day]))
    days = frozenset(day for dates in dates_by_day.values() for day in dates)
    return SeriesPlan(time_zone=time_zone, series=series, days=days, span_end=_after(days, zone))


def _after(days, zone: ZoneInfo) -> datetime | None:
    """An instant safely after the last of `days` in `zone` (None without days)."""
    return wall_to_instant(max(days) + timedelta(days=2), time(0), zone, as_end=False) if days else None


def series_horizon(
    range_start: datetime, range_end: datetime, time_zone: str, recurrence: Recurrence, count: int
) -> datetime | None:
    """An instant after the last occurrence of every whole series (of `count`) that can start in
    [range_start, range_end): how far ahead a schedule's availability and bookings must be loaded
    to check them, known before any slot is computed, so that they are loaded once. None when no
    day of the range starts a whole series (a yearly series from 29 February, say)."""
    zone = ZoneInfo(time_zone)
    day, last_day = range_start.astimezone(zone).date(), range_end.astimezone(zone).date()
    last_dates = []
    while day <= last_day:
        dates = occurrence_dates(day, recurrence, count)
        if len(dates) == count:
            last_dates.append(dates[-1])
        day += timedelta(days=1)
    return _after(last_dates, zone)


def series_free_starts(request: SlotRequest, plan: SeriesPlan) -> list[datetime]:
    """The candidates of `plan` (free starts, in order) whose later occurrences are free too.
    `request` must hold the host's availability and bookings up to `plan.span_end`.

    The free slots of every day an occurrence falls on are computed once, however many candidates
    reach that day, and kept per day as their times since midnight (in seconds). The candidates of
    one day share their later dates, so the times free on all of those dates are one intersection
    of sets, and each candidate is then one lookup. Only a date with a DST change is checked per
    candidate, by the gap/fold rule."""
    zone = ZoneInfo(plan.time_zone)
    local_days = LocalDays(zone)
    offered = free_slot_seconds_on_days(request, plan.days, local_days)
    free_times: dict[date, set[int]] = {}  # the days without a DST change
    for day in plan.days:
        midnight = local_days.midnight(day)
        if midnight is not None:
            first, last = bisect_left(offered, midnight), bisect_left(offered, midnight + DAY_SECONDS)
            free_times[day] = {instant - midnight for instant in offered[first:last]}
    offered_set = None  # every free slot, for the days with a DST change
    # By the identity of a candidate day's list of dates: the times free on all its plain days, and
    # its days with a DST change.
    shared: dict[int, tuple[set[int] | None, list[date]]] = {}
    free = []
    for start, wall, dates in plan.series:
        if id(dates) not in shared:
            plain = [free_times[day] for day in dates if day in free_times]
            shared[id(dates)] = (set.intersection(*plain) if plain else None, [d for d in dates if d not in free_times])
        times, changing = shared[id(dates)]
        if times is not None and seconds_since_midnight(wall) not in times:
            continue
        if changing:
            if offered_set is None:
                offered_set = set(offered)
            if any(
                epoch_seconds(wall_to_instant(day, wall, zone, as_end=False)) not in offered_set for day in changing
            ):
                continue
        free.append(start)
    return free
