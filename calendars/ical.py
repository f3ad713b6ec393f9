"""Busy time out of iCalendar data, read by rules that hold whatever wrote it.

- Recurring events are expanded by `recurring-ical-events` (RRULE, RDATE, EXDATE, and moved or
  cancelled instances, RECURRENCE-ID), VTIMEZONE / TZID across DST by `icalendar`'s zones.
- `TRANSP:TRANSPARENT` ("show as free") and `STATUS:CANCELLED` (the event, or one instance) do not
  block.
- All-day events (DATE values) and floating times (no zone) are read in the calendar's zone.
- Hostile data is bounded: more than `MAX_RESPONSE_BYTES`, more components than `MAX_COMPONENTS`, or
  an RRULE finer than hourly (FREQ=SECONDLY or MINUTELY, or an hourly one with many BYMINUTE
  values), more instances in the window than `MAX_INSTANCES` (many RRULEs without end), or
  expansion past `EXPAND_SECONDS` is refused with `CalendarDataRefused`, whose message says which
  bound; the read never runs unbounded.
"""

import time
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

import icalendar
import recurring_ical_events

from calendars.conf import calendar_setting

MAX_COMPONENTS = 50000


class CalendarDataRefused(Exception):
    """The calendar data is not read: malformed, or past a bound. The message says which."""


@dataclass(frozen=True)
class BusyPeriod:
    start: datetime  # aware, UTC
    end: datetime
    uid: str


def _as_utc(value: date | datetime, zone: ZoneInfo) -> datetime:
    if not isinstance(value, datetime):  # an all-day event's day starts at midnight in the calendar's zone
        value = datetime(value.year, value.month, value.day)
    if value.tzinfo is None:  # floating: the calendar's zone
        value = value.replace(tzinfo=zone)
    return value.astimezone(UTC)


def _is_free(component) -> bool:
    status = str(component.get("STATUS", "")).upper()
    transparency = str(component.get("TRANSP", "")).upper()
    return status == "CANCELLED" or transparency == "TRANSPARENT"


def parse_calendar(data: bytes | str) -> icalendar.Calendar:
    """One VCALENDAR (or several, as a CalDAV REPORT answers) from bytes, within the bounds."""
    raw = data.encode() if isinstance(data, str) else data
    limit = calendar_setting("MAX_RESPONSE_BYTES")
    if len(raw) > limit:
        raise CalendarDataRefused(f"The calendar data has more than {limit} bytes.")
    if raw.count(b"BEGIN:") > MAX_COMPONENTS:
        raise CalendarDataRefused(f"The calendar data has more than {MAX_COMPONENTS} components.")
    try:
        return icalendar.Calendar.from_ical(raw)
    except (ValueError, IndexError, KeyError, RecursionError) as error:
        raise CalendarDataRefused(f"The calendar data is not valid iCalendar ({type(error).__name__}).") from None


# Recurrence finer than hourly has no place in a calendar of meetings, and expanding it costs time
# before the first instance is seen (the instance bound alone would come too late).
REFUSED_FREQUENCIES = {"SECONDLY", "MINUTELY"}
MAX_BY_VALUES = 4  # BYSECOND / BYMINUTE values: more would make an hourly rule per-minute


def _refuse_fine_recurrence(calendar: icalendar.Calendar) -> None:
    for component in calendar.walk("VEVENT"):
        rules = component.get("RRULE")
        for rule in rules if isinstance(rules, list) else [rules] if rules is not None else []:
            frequency = str((rule.get("FREQ") or [""])[0]).upper()
            if frequency in REFUSED_FREQUENCIES:
                raise CalendarDataRefused(f"An RRULE with FREQ={frequency} (finer than hourly) is refused.")
            for part in ("BYSECOND", "BYMINUTE"):
                if len(rule.get(part) or []) > MAX_BY_VALUES:
                    raise CalendarDataRefused(f"An RRULE with more than {MAX_BY_VALUES} {part} values is refused.")


def busy_periods(calendar: icalendar.Calendar, *, start: datetime, end: datetime, time_zone: str) -> list[BusyPeriod]:
    """The busy periods of `calendar` that overlap [start, end)."""
    _refuse_fine_recurrence(calendar)
    zone = ZoneInfo(time_zone)
    limit = calendar_setting("MAX_INSTANCES")
    seconds = calendar_setting("EXPAND_SECONDS")
    deadline = time.monotonic() + seconds
    periods: list[BusyPeriod] = []
    # The query works in the calendar's own terms: floating and all-day values are compared as
    # local times, so the window is handed to it in the calendar's zone, a day wider each side.
    query = recurring_ical_events.of(calendar, components=["VEVENT"])
    window_start = (start.astimezone(zone) - timedelta(days=1)).replace(tzinfo=None)
    window_end = (end.astimezone(zone) + timedelta(days=1)).replace(tzinfo=None)
    seen = 0
    try:
        for event in query.after(window_start):
            seen += 1
            if seen > limit:
                raise CalendarDataRefused(f"The calendar has more than {limit} event instances in the window read.")
            if seen % 256 == 0 and time.monotonic() > deadline:
                raise CalendarDataRefused(f"The calendar's events took more than {seconds:g} s to expand.")
            event_start = event.get("DTSTART")
            if event_start is None:
                continue
            begin = event_start.dt
            local_begin = begin if isinstance(begin, datetime) else datetime(begin.year, begin.month, begin.day)
            if local_begin.tzinfo is not None:
                local_begin = local_begin.astimezone(zone).replace(tzinfo=None)
            if local_begin >= window_end:
                break
            if _is_free(event):
                continue
            event_end = event.get("DTEND")
            if event_end is not None:
                finish = event_end.dt
            elif "DURATION" in event:
                finish = begin + event["DURATION"].dt
            else:  # RFC 5545: a date lasts one day, a date-time no time at all
                finish = begin + timedelta(days=1) if not isinstance(begin, datetime) else begin
            period_start, period_end = _as_utc(begin, zone), _as_utc(finish, zone)
            if period_end <= period_start or period_end <= start or period_start >= end:
                continue
            periods.append(BusyPeriod(start=period_start, end=period_end, uid=str(event.get("UID", ""))[:500]))
    except CalendarDataRefused:
        raise
    except (ValueError, TypeError, KeyError, AttributeError, OverflowError, RecursionError) as error:
        raise CalendarDataRefused(f"The calendar's events cannot be read ({type(error).__name__}: {error}).") from None
    return periods
