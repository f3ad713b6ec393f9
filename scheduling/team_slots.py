"""Free slots of several hosts at once: pure functions over each host's availability windows and
busy periods (UTC instants, built per host in the host's own zone by `scheduling.slots`), no
database and no clock.

A group of hosts who must all attend is offered a start when the start lies on the slot grid of a
window of their *shared* availability (the intersection of their windows, each piece's grid
running from its own start, as a single host's grid runs from their window's start), the meeting
with the event type's buffers fits inside it, and no host of the group is busy then.

- Collective: the group is every host.
- Round robin: for each round-robin host, the group of that host and every fixed host; a start is
  offered when at least one such group is free, and the round-robin hosts of the free groups are
  the start's free hosts. With no round-robin host, the fixed hosts form the one group.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime, timedelta

from scheduling.slots import Refused, epoch_seconds, epoch_seconds_up, instant_of

Windows = list[tuple[datetime, datetime]]
Seconds = list[tuple[int, int]]


@dataclass(frozen=True)
class SlotRules:
    """The event type's side of the computation, the same for every host."""

    length: int  # minutes
    interval: int | None  # minutes; None = length
    minimum_notice: int  # minutes
    before_buffer: int  # minutes
    after_buffer: int  # minutes
    range_start: datetime
    range_end: datetime
    now: datetime


@dataclass(frozen=True)
class HostTimes:
    """One host's merged availability windows (whole seconds since the Unix epoch, as
    `scheduling.slots.available_window_seconds` gives them) and busy periods (instants: bookings
    widened by their buffers)."""

    user_id: int
    windows: Seconds
    busy: Windows

    def window_instants(self) -> Windows:
        return [(instant_of(start), instant_of(end)) for start, end in self.windows]


def intersect(first: list[tuple], second: list[tuple]) -> list[tuple]:
    """The instants in both lists of sorted, disjoint windows."""
    shared, i, j = [], 0, 0
    while i < len(first) and j < len(second):
        start, end = max(first[i][0], second[j][0]), min(first[i][1], second[j][1])
        if start < end:
            shared.append((start, end))
        if first[i][1] < second[j][1]:
            i += 1
        else:
            j += 1
    return shared


def group_slots(group: list[HostTimes], rules: SlotRules) -> list[int]:
    """The starts, as whole seconds since the Unix epoch, at which every host of `group` is free
    (see the module's docstring). Every window edge is a whole second and lengths, steps and
    buffers are minutes, so the grid is exact in integers; `now`, the range's end and busy periods
    are rounded towards "not offered"."""
    if not group:
        return []
    windows = group[0].windows
    for host in group[1:]:
        windows = intersect(windows, host.windows)
    length = rules.length * 60
    step = (rules.interval or rules.length) * 60
    refused = Refused(
        [period for host in group for period in host.busy],
        length=length,
        before=rules.before_buffer * 60,
        after=rules.after_buffer * 60,
    )
    earliest = epoch_seconds_up(max(rules.range_start, rules.now + timedelta(minutes=rules.minimum_notice)))
    last = epoch_seconds_up(rules.range_end) - 1  # a start lies before the range's end
    slots: list[int] = []
    for origin, window_end in windows:
        refused.add_grid(slots, origin, max(origin, earliest), min(window_end - length, last), step)
    return slots


def team_slots(hosts: list[tuple[HostTimes, bool]], rules: SlotRules) -> dict[int, list[int]]:
    """`{start: [free host ids]}` in start order, each start as whole seconds since the Unix epoch
    (`free_at` looks an instant up). `hosts` pairs each host's times with whether the host is fixed
    (every host of a collective event type is). The ids listed are the round-robin hosts free at
    that start, or, when every host is fixed, all of them."""
    fixed = [times for times, is_fixed in hosts if is_fixed]
    rotating = [times for times, is_fixed in hosts if not is_fixed]
    if not rotating:
        everyone = [times.user_id for times in fixed]
        return {start: list(everyone) for start in group_slots(fixed, rules)}
    free: defaultdict[int, list[int]] = defaultdict(list)
    for host in rotating:
        user_id = host.user_id
        for start in group_slots([*fixed, host], rules):
            free[start].append(user_id)
    return {start: free[start] for start in sorted(free)}


def team_starts(hosts: list[tuple[HostTimes, bool]], rules: SlotRules) -> list[int]:
    """The starts of `team_slots`, in order, without who is free at each: what GET /slots shows.
    The union of each group's starts is taken by a set, not start by start in Python."""
    fixed = [times for times, is_fixed in hosts if is_fixed]
    rotating = [times for times, is_fixed in hosts if not is_fixed]
    if len(rotating) <= 1:
        return group_slots(fixed + rotating, rules)
    starts: set[int] = set()
    for host in rotating:
        starts.update(group_slots([*fixed, host], rules))
    return sorted(starts)


def free_at(free: dict[int, list[int]], start: datetime) -> list[int]:
    """The hosts `team_slots` finds free at exactly the instant `start` (none off the grid, which
    runs on whole seconds)."""
    seconds = epoch_seconds(start)
    return free.get(seconds, []) if instant_of(seconds) == start else []
