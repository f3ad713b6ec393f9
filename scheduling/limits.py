"""Booking limits of an event type (Cal.com's `bookingLimits` and `durationLimits`): pure rules.

Both are stored as Cal.com v1 writes them, `{"PER_DAY": 2, "PER_WEEK": 5}`, any subset of the four
periods, or null for none. A count limit caps how many bookings of the event type a period holds;
a duration limit caps their minutes, so a booking is refused when the period's minutes plus its own
would pass the limit. Periods are calendar periods in the host's time zone (the event type's owner,
else its schedule's): a day from local midnight to local midnight (23 or 25 hours across a DST
change), a week from Sunday (Cal.com's `startOf("week")`), a month, a year. A booking belongs to the
period its start falls in.
"""

from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

KEYS = ("PER_DAY", "PER_WEEK", "PER_MONTH", "PER_YEAR")  # shortest period first
UNITS = {"PER_DAY": "day", "PER_WEEK": "week", "PER_MONTH": "month", "PER_YEAR": "year"}
V2_KEYS = {unit: key for key, unit in UNITS.items()}  # v2's `day` … `year` → v1's `PER_DAY` …

COUNT = "count"
DURATION = "duration"
MAX_COUNT = 100_000
# The longest a period can be, in minutes: a duration limit above it could never bind.
MAX_MINUTES = {"PER_DAY": 25 * 60, "PER_WEEK": 7 * 24 * 60 + 60, "PER_MONTH": 31 * 24 * 60 + 60}
MAX_MINUTES["PER_YEAR"] = 366 * 24 * 60 + 60


def clean_limits(value, *, kind: str) -> dict[str, int] | None:
    """`value` checked (`{"PER_DAY": 2, …}`; None or `{}` for none) in key order, or ValueError with
    a message per field: whole numbers of at least 1 (count) or 1 minute (duration), at most
    `MAX_COUNT` / the period's length, never smaller for a longer period than for a shorter one
    (Cal.com's rule: 3 a day and 2 a week is refused)."""
    if value is None:
        return None
    if not isinstance(value, dict):
        raise ValueError({"": 'Must be an object such as {"PER_DAY": 2}, or null.'})
    errors = {}
    for key in value:
        if key not in UNITS:
            errors[key] = f"Unknown period; use {', '.join(KEYS)}."
    cleaned = {}
    for key in KEYS:
        if key not in value:
            continue
        number = value[key]
        ceiling = MAX_COUNT if kind == COUNT else MAX_MINUTES[key]
        if isinstance(number, bool) or not isinstance(number, int):
            errors[key] = "Must be a whole number."
        elif not 1 <= number <= ceiling:
            errors[key] = f"Must be between 1 and {ceiling}."
        else:
            cleaned[key] = number
    present = list(cleaned.items())
    for (_, short_value), (long, long_value) in zip(present, present[1:], strict=False):
        if long_value < short_value:
            errors.setdefault(long, f"Must be at least the limit of the shorter period ({short_value}).")
    if errors:
        raise ValueError(errors)
    return cleaned or None


def to_v2(limits: dict | None) -> dict | None:
    """`{"day": 2, …}` (Cal.com's `bookingLimitsCount` / `bookingLimitsDuration`), None for none."""
    if not limits:
        return None
    return {UNITS[key]: limits[key] for key in KEYS if key in limits}


def period_start(day: date, key: str) -> date:
    """The first local day of the period of `key` holding `day` (weeks start on Sunday)."""
    if key == "PER_DAY":
        return day
    if key == "PER_WEEK":
        return day - timedelta(days=(day.weekday() + 1) % 7)
    if key == "PER_MONTH":
        return day.replace(day=1)
    return day.replace(month=1, day=1)


def next_period_start(day: date, key: str) -> date:
    """The first local day of the period after the one of `key` holding `day`."""
    start = period_start(day, key)
    if key == "PER_DAY":
        return start + timedelta(days=1)
    if key == "PER_WEEK":
        return start + timedelta(days=7)
    if key == "PER_MONTH":
        return (start + timedelta(days=32)).replace(day=1)
    return start.replace(year=start.year + 1)


def local_midnight(day: date, zone: ZoneInfo) -> datetime:
    """The instant (UTC) at which `day` begins in `zone`; where the clocks skip midnight, the
    instant of the skip."""
    return datetime.combine(day, time(), zone).astimezone(UTC)


def span(first: date, last: date, keys) -> tuple[date, date]:
    """The local days [start, end) covering every period of `keys` that holds a day of [first, last]."""
    return min(period_start(first, key) for key in keys), max(next_period_start(last, key) for key in keys)


class PeriodTotals:
    """Bookings and minutes per local day (`{day: (count, minutes)}`), summed per period on demand."""

    def __init__(self, per_day: dict[date, tuple[int, int]]):
        self.per_day = per_day
        self._periods: dict[tuple[str, date], tuple[int, int]] = {}

    def forget(self) -> None:
        """Drop the sums after `per_day` changed."""
        self._periods.clear()

    def of(self, key: str, day: date) -> tuple[int, int]:
        start = period_start(day, key)
        found = self._periods.get((key, start))
        if found is None:
            end = next_period_start(day, key)
            count = minutes = 0
            for each, (day_count, day_minutes) in self.per_day.items():
                if start <= each < end:
                    count += day_count
                    minutes += day_minutes
            found = self._periods[(key, start)] = (count, minutes)
        return found


def broken_limit(
    *, booking_limits: dict | None, duration_limits: dict | None, totals: PeriodTotals, day: date, length: int
) -> tuple[str, str, int] | None:
    """The first limit a booking of `length` minutes starting on local `day` would break, as
    `(kind, key, limit)`, or None."""
    for key, limit in (booking_limits or {}).items():
        if totals.of(key, day)[0] >= limit:
            return COUNT, key, limit
    for key, limit in (duration_limits or {}).items():
        if totals.of(key, day)[1] + length > limit:
            return DURATION, key, limit
    return None


def describe(broken: tuple[str, str, int], time_zone: str) -> str:
    kind, key, limit = broken
    unit = UNITS[key]
    if kind == COUNT:
        return f"The event type's booking limit is reached: at most {limit} per {unit} ({time_zone})."
    return f"The event type's duration limit would be passed: at most {limit} minutes per {unit} ({time_zone})."
