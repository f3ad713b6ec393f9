"""Free slots of a schedule: a pure function, no database, no clock (`now` is passed in).

Availability rules are wall-clock times in the schedule's zone; bookings and slots are instants.
The conversion between the two is where daylight-saving time bites, so it is done in one place,
`wall_to_instant`, with one rule for the two awkward cases:

* A window runs **from the first instant the local clock shows its start time** (or later) **to the
  last instant it shows its end time**.
* A wall time that does not exist (inside a spring-forward gap, e.g. 02:30 in Berlin on
  2026-03-29, or 00:00 in Santiago on 2026-09-06) therefore maps, for starts and ends alike, to the
  instant of the jump: the window is shortened by the gap.
* A wall time that exists twice (inside a fall-back overlap, e.g. 02:30 in Berlin on 2026-10-25)
  maps to its **first** occurrence as a start and to its **second** occurrence as an end: the window
  covers the repeated hour.

Inside a window, slots are spaced by real elapsed time (`interval` minutes apart), because bookings
last real minutes. A window that contains a transition therefore keeps its grid in UTC; a 09:00
rule still yields 09:00 local on every day, since each day's window is converted separately.
"""

from __future__ import annotations

import functools
from bisect import bisect_right
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

MIDNIGHT = time(0, 0)
# Cal.com (and people) write "until 23:59" for "until the end of the day".
END_OF_DAY = time(23, 59)


@functools.cache
def zone_named(name: str) -> ZoneInfo:
    """The zone `name`, kept for the process: `ZoneInfo` keeps only the eight zones used last (and
    those still referenced), so a team with hosts in more zones read each zone's file again on
    every request. The names are the IANA database's, a few hundred at most."""
    return ZoneInfo(name)


UNIX_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
UNIX_EPOCH_NAIVE = datetime(1970, 1, 1)
_SECOND = timedelta(seconds=1)


def epoch_seconds(instant: datetime) -> int:
    """An aware instant as whole seconds since the Unix epoch, rounded down."""
    return (instant - UNIX_EPOCH) // _SECOND


def epoch_seconds_up(instant: datetime) -> int:
    return -((UNIX_EPOCH - instant) // _SECOND)


@dataclass(frozen=True)
class WeeklyRule:
    """Available on `days` (0 = Sunday … 6 = Saturday) from `start` to `end`, wall-clock."""

    days: frozenset[int]
    start: time
    end: time


@dataclass(frozen=True)
class DateOverride:
    """Replaces the weekly rules on `date`; `00:00–00:00` means unavailable all day."""

    date: date
    start: time
    end: time

    @property
    def is_day_off(self) -> bool:
        return self.start == MIDNIGHT and self.end == MIDNIGHT


@dataclass(frozen=True)
class SlotRequest:
    time_zone: str
    weekly_rules: tuple[WeeklyRule, ...]
    overrides: tuple[DateOverride, ...]
    length: int  # minutes
    range_start: datetime
    range_end: datetime
    now: datetime
    busy: tuple[tuple[datetime, datetime], ...] = ()
    interval: int | None = None  # minutes; None = length
    minimum_notice: int = 0  # minutes
    before_buffer: int = 0  # minutes
    after_buffer: int = 0  # minutes


def sunday_based_weekday(day: date) -> int:
    return (day.weekday() + 1) % 7


def _utc_offset_at(instant: datetime, zone: ZoneInfo) -> timedelta:
    return instant.astimezone(zone).utcoffset()


def wall_to_instant(day: date, wall: time, zone: ZoneInfo, *, as_end: bool) -> datetime:
    """The UTC instant for `wall` on `day` in `zone`, by the module's rule (see the docstring)."""
    naive = datetime.combine(day, wall)
    offset = zone.utcoffset(naive)
    if offset == zone.utcoffset(naive.replace(fold=1)):
        # The usual case, a wall time that exists exactly once: one subtraction.
        return (naive - offset).replace(tzinfo=UTC)
    candidates = []
    for fold in (0, 1):
        local = datetime.combine(day, wall, tzinfo=zone).replace(fold=fold)
        instant = local.astimezone(UTC)
        back = instant.astimezone(zone)
        if back.replace(tzinfo=None) == local.replace(tzinfo=None, fold=0):
            candidates.append(instant)
    if candidates:
        return max(candidates) if as_end else min(candidates)
    # In a gap. fold=1 reads the wall time with the offset after the jump (an instant before the
    # jump), fold=0 with the offset before it (an instant after it); the jump lies in between.
    low = datetime.combine(day, wall, tzinfo=zone).replace(fold=1).astimezone(UTC)
    high = datetime.combine(day, wall, tzinfo=zone).replace(fold=0).astimezone(UTC)
    low, high = min(low, high), max(low, high)
    offset_after = _utc_offset_at(high, zone)
    while high - low > timedelta(seconds=1):
        middle = low + (high - low) / 2
        if _utc_offset_at(middle, zone) == offset_after:
            high = middle
        else:
            low = middle
    return high.replace(microsecond=0)


def _spans_for_day(day: date, rules: Iterable[WeeklyRule], overrides: list[DateOverride]) -> list[tuple[time, time]]:
    """The day's wall-clock spans: its date overrides if it has any, else its weekday's rules."""
    if overrides:
        return [(o.start, o.end) for o in overrides if not o.is_day_off]
    weekday = sunday_based_weekday(day)
    return [(r.start, r.end) for r in rules if weekday in r.days]


def _windows_for_day(day: date, rules: Iterable[WeeklyRule], overrides: list[DateOverride], zone: ZoneInfo):
    for start, end in _spans_for_day(day, rules, overrides):
        window_start = wall_to_instant(day, start, zone, as_end=False)
        if end >= END_OF_DAY:
            window_end = wall_to_instant(day + timedelta(days=1), MIDNIGHT, zone, as_end=False)
        else:
            window_end = wall_to_instant(day, end, zone, as_end=True)
        if window_end > window_start:
            yield window_start, window_end


DAY_SECONDS = 86400
_EPOCH_ORDINAL = date(1970, 1, 1).toordinal()


class LocalDays:
    """The days of one zone as seconds since the Unix epoch, each midnight's offset read once: a
    series' computation asks about the same ~100 days again and again."""

    def __init__(self, zone: ZoneInfo):
        self.zone = zone
        self._offsets: dict[date, timedelta] = {}
        self._midnights: dict[date, int | None] = {}

    def _offset_at_midnight(self, day: date) -> timedelta:
        offset = self._offsets.get(day)
        if offset is None:
            offset = self._offsets[day] = self.zone.utcoffset(datetime.combine(day, MIDNIGHT))
        return offset

    def midnight(self, day: date) -> int | None:
        """`day`'s first instant as seconds since the Unix epoch when the day has no DST change
        (then each of its wall times, and the next midnight, is this plus its seconds since
        midnight), else None. A change at any time of the day, its first midnight included, makes
        the offsets at its two midnights differ (a change exactly at the next midnight does not,
        and needs none: the day's times are all before it, and the jump is where the day ends)."""
        midnight = self._midnights.get(day, False)
        if midnight is False:
            offset = self._offset_at_midnight(day)
            if offset == self._offset_at_midnight(day + timedelta(days=1)):
                midnight = (day.toordinal() - _EPOCH_ORDINAL) * DAY_SECONDS - offset // _SECOND
            else:
                midnight = None
            self._midnights[day] = midnight
        return midnight

    def midnights(self, first: date, last: date) -> list[int | None]:
        """`midnight` of each day from `first` to `last`, in order: each midnight's offset read
        once, by one call of the zone each, without the caches (a request's days, read once)."""
        start, zone = first.toordinal(), self.zone
        offsets = [zone.utcoffset(datetime.fromordinal(day)) for day in range(start, last.toordinal() + 2)]
        return [
            (start + index - _EPOCH_ORDINAL) * DAY_SECONDS - offset // _SECOND if offset == offsets[index + 1] else None
            for index, offset in enumerate(offsets[:-1])
        ]


def seconds_since_midnight(wall: time) -> int:
    return wall.hour * 3600 + wall.minute * 60 + wall.second


def _windows_for_day_seconds(day: date, rules, overrides: list[DateOverride], local_days: LocalDays):
    """`_windows_for_day` as seconds since the Unix epoch; on a day without a DST change, by
    arithmetic alone."""
    midnight = local_days.midnight(day)
    if midnight is None:
        windows = _windows_for_day(day, rules, overrides, local_days.zone)
        return [(epoch_seconds(start), epoch_seconds(end)) for start, end in windows]
    windows = []
    for start, end in _spans_for_day(day, rules, overrides):
        window_start = midnight + seconds_since_midnight(start)
        window_end = midnight + (DAY_SECONDS if end >= END_OF_DAY else seconds_since_midnight(end))
        if window_end > window_start:
            windows.append((window_start, window_end))
    return windows


def merged_windows(windows: list[tuple[datetime, datetime]]) -> list[tuple[datetime, datetime]]:
    merged: list[tuple[datetime, datetime]] = []
    for start, end in sorted(windows):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def available_windows(request: SlotRequest) -> list[tuple[datetime, datetime]]:
    """The schedule's availability as merged UTC windows around the requested range."""
    return [(instant_of(start), instant_of(end)) for start, end in available_window_seconds(request)]


def instant_of(seconds: int) -> datetime:
    """The aware UTC instant `seconds` after the Unix epoch."""
    return UNIX_EPOCH + timedelta(seconds=seconds)


def _weekday_spans(rules: Iterable[WeeklyRule]) -> dict[int, list[tuple[int, int]]]:
    """`{weekday (0 = Sunday): its rules' non-empty spans as seconds since midnight}`, as
    `_windows_for_day_seconds` reads them on a day without a DST change."""
    spans: dict[int, list[tuple[int, int]]] = {}
    for rule in rules:
        start = seconds_since_midnight(rule.start)
        end = DAY_SECONDS if rule.end >= END_OF_DAY else seconds_since_midnight(rule.end)
        if end > start:
            for weekday in rule.days:
                spans.setdefault(weekday, []).append((start, end))
    return spans


def available_window_seconds(request: SlotRequest) -> list[tuple[int, int]]:
    """`available_windows` as whole seconds since the Unix epoch: on a day without a DST change
    or a date override, by arithmetic alone from its weekday's spans (`_weekday_spans`, read once
    per request, not once per day); on the others, by `_windows_for_day_seconds`."""
    zone = zone_named(request.time_zone)
    local_days = LocalDays(zone)
    overrides_by_day: dict[int, list[DateOverride]] = {}  # by the date's ordinal
    for override in request.overrides:
        overrides_by_day.setdefault(override.date.toordinal(), []).append(override)
    spans = _weekday_spans(request.weekly_rules)
    # One day of margin each side: a day's window may start or end on a neighbouring UTC day.
    first_day = request.range_start.astimezone(zone).date() - timedelta(days=1)
    last_day = request.range_end.astimezone(zone).date() + timedelta(days=1)
    days = range(first_day.toordinal(), last_day.toordinal() + 1)
    windows = []
    for ordinal, midnight in zip(days, local_days.midnights(first_day, last_day), strict=True):
        overrides = overrides_by_day.get(ordinal)
        if midnight is None or overrides:
            day = date.fromordinal(ordinal)
            windows += _windows_for_day_seconds(day, request.weekly_rules, overrides or [], local_days)
        else:
            # The day's weekday, Sunday = 0 (`sunday_based_weekday`): ordinal 1 is a Monday.
            windows += [(midnight + start, midnight + end) for start, end in spans.get(ordinal % 7, ())]
    return merged_windows(windows)


def free_slots(request: SlotRequest) -> list[datetime]:
    """Start instants (UTC) of every bookable slot whose start lies in [range_start, range_end)."""
    length = timedelta(minutes=request.length)
    step = timedelta(minutes=request.interval or request.length)
    before = timedelta(minutes=request.before_buffer)
    after = timedelta(minutes=request.after_buffer)
    earliest = max(request.range_start, request.now + timedelta(minutes=request.minimum_notice))
    busy = merged_windows(list(request.busy))
    busy_ends = [end for _, end in busy]
    slots = []
    for window_start, window_end in available_windows(request):
        start = window_start
        while start + length <= window_end:
            if start >= request.range_end:
                break
            if start >= earliest and not _overlaps_busy(start - before, start + length + after, busy, busy_ends):
                slots.append(start)
            start += step
    return slots


def free_slots_on_days(request: SlotRequest, days: Iterable[date]) -> set[datetime]:
    """The starts `free_slots` offers whose local date (in the schedule's zone) is one of `days`,
    ignoring `range_start`/`range_end`, as **naive UTC** datetimes (`free_slot_seconds_on_days`,
    converted)."""
    return {UNIX_EPOCH_NAIVE + timedelta(seconds=second) for second in free_slot_seconds_on_days(request, days)}


def free_slot_seconds_on_days(
    request: SlotRequest, days: Iterable[date], local_days: LocalDays | None = None
) -> list[int]:
    """The starts `free_slots` offers whose local date (in the schedule's zone) is one of `days`,
    ignoring `range_start`/`range_end`, as whole **seconds since the Unix epoch**, in order: what a recurring
    series needs, its occurrences being weeks, months or years apart, and looked up by the thousand.

    Windows are built for those days and their neighbours only, so the cost follows the number of
    days asked, not the span they cover. Every instant here is a whole second (windows and days
    come from `wall_to_instant`, lengths and buffers are minutes), so an integer grid is exact; a
    booking's or `now`'s fraction of a second is rounded towards "busy". Each window's grid is cut
    into the stretches no busy period touches, and each stretch is added as one `range`."""
    zone = zone_named(request.time_zone)
    if local_days is None:
        local_days = LocalDays(zone)
    wanted = sorted(set(days))
    if not wanted:
        return []
    overrides_by_date: dict[date, list[DateOverride]] = {}
    for override in request.overrides:
        overrides_by_date.setdefault(override.date, []).append(override)
    built = sorted({day + timedelta(days=shift) for day in wanted for shift in (-1, 0, 1)})
    windows = []
    for day in built:
        windows.extend(_windows_for_day_seconds(day, request.weekly_rules, overrides_by_date.get(day, []), local_days))
    # The wanted days as instants: runs of consecutive days, each from its first midnight to the next.
    runs: list[list[date]] = []
    for day in wanted:
        if runs and runs[-1][1] + timedelta(days=1) == day:
            runs[-1][1] = day
        else:
            runs.append([day, day])
    run_bounds = [
        (
            epoch_seconds(wall_to_instant(first, MIDNIGHT, zone, as_end=False)),
            epoch_seconds(wall_to_instant(last + timedelta(days=1), MIDNIGHT, zone, as_end=False)),
        )
        for first, last in runs
    ]
    run_ends = [end for _, end in run_bounds]
    length = request.length * 60
    step = (request.interval or request.length) * 60
    earliest = epoch_seconds_up(request.now + timedelta(minutes=request.minimum_notice))
    refused = Refused(request.busy, length=length, before=request.before_buffer * 60, after=request.after_buffer * 60)
    # Windows are disjoint and in order, and so are the pieces of each: the ranges come in order.
    slots: list[int] = []
    for origin, window_end in merged_windows(windows):
        low, high = max(origin, earliest), window_end - length
        for run_start, run_end in run_bounds[bisect_right(run_ends, low) :]:
            if run_start > high:
                break
            refused.add_grid(slots, origin, max(low, run_start), min(high, run_end - 1), step)
    return slots


class Refused:
    """The starts (whole seconds since the Unix epoch) that busy periods refuse for a meeting of
    `length` seconds with buffers `before` and `after`: a start s is refused by a busy period
    [b, e) when [s - before, s + length + after) overlaps it, i.e. s in [b - after - length + 1,
    e + before - 1], merged into sorted, disjoint, inclusive stretches. A busy period's fraction of
    a second is rounded towards "busy"."""

    def __init__(self, busy, *, length: int, before: int, after: int):
        self.stretches: list[tuple[int, int]] = []
        for busy_start, busy_end in merged_windows(list(busy)):
            low = epoch_seconds(busy_start) - after - length + 1
            high = epoch_seconds_up(busy_end) + before - 1
            if self.stretches and low <= self.stretches[-1][1] + 1:
                self.stretches[-1] = (self.stretches[-1][0], max(self.stretches[-1][1], high))
            else:
                self.stretches.append((low, high))
        self.ends = [high for _, high in self.stretches]

    def add_grid(self, slots: list[int], origin: int, low: int, high: int, step: int) -> None:
        """Append to `slots`, in order, the starts of the grid `origin + k × step` in [low, high]
        (inclusive) that no stretch refuses."""
        for piece_low, piece_high in _outside(low, high, self.stretches, self.ends):
            first = origin + -(-(piece_low - origin) // step) * step  # the window's grid, from its start
            slots.extend(range(first, piece_high + 1, step))


def _outside(low: int, high: int, refused: list[tuple[int, int]], refused_ends: list[int]):
    """The pieces of [low, high] (inclusive) that no stretch of `refused` (sorted, disjoint,
    inclusive; `refused_ends` their ends) covers."""
    index = bisect_right(refused_ends, low - 1)  # the first stretch that ends at `low` or later
    while low <= high:
        if index == len(refused) or refused[index][0] > high:
            yield low, high
            return
        if refused[index][0] > low:
            yield low, refused[index][0] - 1
        low = refused[index][1] + 1
        index += 1


def _overlaps_busy(start: datetime, end: datetime, busy: list[tuple[datetime, datetime]], busy_ends) -> bool:
    # `busy` is merged, hence sorted and disjoint: only the first period ending after `start` can overlap.
    index = bisect_right(busy_ends, start)
    return index < len(busy) and busy[index][0] < end


# Zones that are UTC itself: their times are spelled with `Z` like every other UTC date-time of the
# API (docs/api.md, Conventions), so a slot can be compared with a booking's `startTime` as a string.
UTC_ZONE_NAMES = frozenset({"UTC", "Etc/UTC", "Etc/UCT", "UCT", "Etc/Universal", "Universal", "Etc/Zulu", "Zulu"})


def group_by_day(slots: Iterable[datetime], time_zone: str) -> dict[str, list[dict[str, str]]]:
    """`{"2026-11-23": [{"time": "2026-11-23T09:00:00+01:00"}, …]}`, days and offsets in `time_zone`."""
    zone = zone_named(time_zone)
    return _grouped((slot.astimezone(zone) for slot in slots), time_zone)


def group_seconds_by_day(slots: Iterable[int], time_zone: str) -> dict[str, list[dict[str, str]]]:
    """`group_by_day` of starts given as whole seconds since the Unix epoch. A UTC day whose two
    midnights have the same offset has it throughout (as `LocalDays.midnight` holds of local
    days): its starts' texts are put together from that offset and a few cached pieces (the local
    date, the time of day, the offset as `isoformat` writes it) rather than an aware datetime each;
    on the other days, from an aware datetime each."""
    zone = zone_named(time_zone)
    zulu = time_zone in UTC_ZONE_NAMES
    days: dict[int, tuple[int, str] | None] = {}  # UTC day: (offset in seconds, its text) or None
    dates: dict[int, str] = {}  # local day: YYYY-MM-DD
    clocks: dict[int, str] = {}  # seconds since local midnight: THH:MM:SS
    grouped: dict[str, list[dict[str, str]]] = {}
    for slot in slots:
        utc_day = slot // DAY_SECONDS
        offset = days.get(utc_day, False)
        if offset is False:
            offset = days[utc_day] = _day_offset(utc_day * DAY_SECONDS, zone, zulu)
        if offset is None:
            text = datetime.fromtimestamp(slot, zone).isoformat()
            if zulu:
                text = text.removesuffix("+00:00") + "Z"
            grouped.setdefault(text[:10], []).append({"time": text})
            continue
        local_day, clock = divmod(slot + offset[0], DAY_SECONDS)
        day_text = dates.get(local_day)
        if day_text is None:
            day_text = dates[local_day] = date.fromordinal(local_day + _EPOCH_ORDINAL).isoformat()
        clock_text = clocks.get(clock)
        if clock_text is None:
            clock_text = clocks[clock] = f"T{clock // 3600:02d}:{clock // 60 % 60:02d}:{clock % 60:02d}"
        grouped.setdefault(day_text, []).append({"time": day_text + clock_text + offset[1]})
    return grouped


def _day_offset(midnight: int, zone: ZoneInfo, zulu: bool) -> tuple[int, str] | None:
    """The UTC offset in seconds of the UTC day from `midnight` (seconds since the Unix epoch) and
    its text in an ISO date-time (`Z` in a UTC zone), or None when the offsets at its two midnights
    differ."""
    first = datetime.fromtimestamp(midnight, zone)
    if first.utcoffset() != datetime.fromtimestamp(midnight + DAY_SECONDS, zone).utcoffset():
        return None
    text = first.isoformat()[19:]  # after YYYY-MM-DDTHH:MM:SS: the offset, as every start shows it
    if zulu:
        text = text.removesuffix("+00:00") + "Z"
    return first.utcoffset() // _SECOND, text


def _grouped(local_times: Iterable[datetime], time_zone: str) -> dict[str, list[dict[str, str]]]:
    zulu = time_zone in UTC_ZONE_NAMES
    grouped: dict[str, list[dict[str, str]]] = {}
    for local in local_times:
        text = local.isoformat()
        if zulu:
            text = text.removesuffix("+00:00") + "Z"
        grouped.setdefault(text[:10], []).append({"time": text})  # the local date: YYYY-MM-DD
    return grouped
