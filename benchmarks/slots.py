"""`make bench-slots`: the CPU cost of one GET /slots at the input limits, next to a typical schedule.

    python -m benchmarks.slots [--repeat 5]

What a /slots request spends after its two small queries (the schedule's availability rows, at
most API_LIMITS["SCHEDULE_AVAILABILITY_ROWS"], and the host's bookings in the range): turning
the rules into UTC windows day by day, walking each window in steps, grouping by local day and
rendering the JSON body. That part grows with the number of rows, the days in the range
(API_LIMITS["SLOTS_MAX_DAYS"]) and the slots per day, so it is what the limits bound; it is
measured here in-process, with no server and no database, as CPU time (`time.process_time`), the
best of `--repeat` runs (one run for a case that takes over a second). Numbers, not a test: nothing fails.

Last, a recurring event type's slots: only the starts whose whole series is free. A 10-occurrence
weekly series over 31 days of slots computes the free slots of the ~60 days its occurrences reach,
each day once however many starts reach it; the ratio to the plain call is printed (target: at most
3x), in hundredths of a millisecond.

Then a round-robin event type with 10 hosts in ten zones (scheduling.team_slots), against one
host's plain call: each host's windows are built and each host's grid walked, and the answer holds
the union of their starts, so the work grows with the hosts (the database side, two small queries
per host, is not in this number).
"""

import argparse
import os
import time as clock
from dataclasses import replace
from datetime import UTC, datetime, time, timedelta

import django


def _setup():
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ.setdefault("SECRET_KEY", "benchmark-only")
    django.setup()


def _cases(max_rows: int, max_days: int):
    from scheduling.slots import WeeklyRule

    every_day = frozenset(range(7))
    typical = (WeeklyRule(days=frozenset({1, 2, 3, 4, 5}), start=time(9), end=time(17)),)
    # Distinct, non-overlapping windows on every day: each row is converted on every day of the range.
    many = tuple(
        WeeklyRule(
            days=every_day, start=time(minute // 60, minute % 60), end=time((minute + 10) // 60, (minute + 10) % 60)
        )
        for minute in range(0, max_rows * 14, 14)
    )
    full_days = tuple(WeeklyRule(days=every_day, start=time(0), end=time(23, 59)) for _ in range(max_rows))
    before_limits = tuple(WeeklyRule(days=every_day, start=time(9), end=time(17)) for _ in range(10_000))
    return [
        ("typical: Mon-Fri 09-17, 30 min, 31 days", typical, 30, None, 31),
        ("typical: Mon-Fri 09-17, 30 min, max days", typical, 30, None, max_days),
        (f"worst rows: {max_rows} rows every day, 10 min, max days", many, 10, None, max_days),
        (f"worst slots: {max_rows} all-day rows, 1 min every 1 min, max days", full_days, 1, 1, max_days),
        ("before the limits: 10,000 rows, 30 min, 62 days", before_limits, 30, None, 62),
    ]


def _once(rules, length, interval, days):
    from core.renderers import ORJSONRenderer
    from scheduling.slots import SlotRequest, free_slots, group_by_day

    start = datetime(2027, 1, 4, tzinfo=UTC)
    request = SlotRequest(
        time_zone="Europe/Berlin",
        weekly_rules=rules,
        overrides=(),
        length=length,
        interval=interval,
        range_start=start,
        range_end=start + timedelta(days=days),
        now=start - timedelta(days=1),
    )
    began = clock.process_time()
    slots = free_slots(request)
    body = ORJSONRenderer().render({"slots": group_by_day(slots, "Europe/Berlin")})
    return clock.process_time() - began, len(slots), len(body)


def _series_once(rules, length, days, count):
    """A recurring event type's slots: the plain computation, then the starts whose weekly series of
    `count` occurrences is free (scheduling.recurrence.series_free_starts), over the same range."""
    from core.renderers import ORJSONRenderer
    from scheduling.recurrence import WEEKLY, Recurrence, plan_series, series_free_starts
    from scheduling.slots import SlotRequest, free_slots, group_by_day

    start = datetime(2027, 1, 4, tzinfo=UTC)
    request = SlotRequest(
        time_zone="Europe/Berlin",
        weekly_rules=rules,
        overrides=(),
        length=length,
        range_start=start,
        range_end=start + timedelta(days=days),
        now=start - timedelta(days=1),
    )
    recurrence = Recurrence(WEEKLY, 1, count)
    began = clock.process_time()
    slots = free_slots(request)
    if count > 1:
        plan = plan_series(slots, request.time_zone, recurrence, count)
        slots = series_free_starts(replace(request, range_end=plan.span_end), plan)
    body = ORJSONRenderer().render({"slots": group_by_day(slots, "Europe/Berlin")})
    return clock.process_time() - began, len(slots), len(body)


TEAM_ZONES = (
    "Europe/Berlin",
    "Europe/London",
    "America/New_York",
    "Europe/Paris",
    "Europe/Madrid",
    "Africa/Lagos",
    "Europe/Athens",
    "Asia/Dubai",
    "America/Sao_Paulo",
    "Europe/Lisbon",
)


def _team_once(rules, length, days, hosts: int):
    """A round-robin event type's slots (scheduling.team_slots): each of `hosts` round-robin hosts
    with the same weekly rules in their own zone, after their windows are built, as GET /slots
    does once it has read each host's rows and bookings."""
    from core.renderers import ORJSONRenderer
    from scheduling.slots import SlotRequest, available_window_seconds, group_seconds_by_day
    from scheduling.team_slots import HostTimes, SlotRules, team_starts

    start = datetime(2027, 1, 4, tzinfo=UTC)
    end = start + timedelta(days=days)
    rules_of_team = SlotRules(
        length=length,
        interval=None,
        minimum_notice=0,
        before_buffer=0,
        after_buffer=0,
        range_start=start,
        range_end=end,
        now=start - timedelta(days=1),
    )
    began = clock.process_time()
    times = []
    for index in range(hosts):
        request = SlotRequest(
            time_zone=TEAM_ZONES[index % len(TEAM_ZONES)],
            weekly_rules=rules,
            overrides=(),
            length=length,
            range_start=start,
            range_end=end,
            now=start - timedelta(days=1),
        )
        times.append((HostTimes(user_id=index, windows=available_window_seconds(request), busy=[]), False))
    free = team_starts(times, rules_of_team)  # as GET /slots (team_available_slots) does
    body = ORJSONRenderer().render({"slots": group_seconds_by_day(free, "Europe/Berlin")})
    return clock.process_time() - began, len(free), len(body)


def _best(run, repeat: int):
    runs = [run()]
    while len(runs) < repeat and runs[0][0] < 1:  # one run is enough for a slow case
        runs.append(run())
    return min(each[0] for each in runs), runs[0][1], runs[0][2]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    arguments = parser.parse_args()
    _setup()
    from core.limits import limit

    max_rows, max_days = limit("SCHEDULE_AVAILABILITY_ROWS"), limit("SLOTS_MAX_DAYS")
    print(f"GET /slots CPU after its queries (best of {arguments.repeat}); limits: {max_rows} rows, {max_days} days")
    print(f"{'case':<62} {'CPU ms':>8} {'slots':>7} {'body KB':>8}")
    for label, rules, length, interval, days in _cases(max_rows, max_days):
        runs = [_once(rules, length, interval, days)]
        while len(runs) < arguments.repeat and runs[0][0] < 1:  # one run is enough for a slow case
            runs.append(_once(rules, length, interval, days))
        best = min(run[0] for run in runs)
        _, slots, size = runs[0]
        print(f"{label:<62} {best * 1000:8.1f} {slots:7d} {size / 1024:8.1f}")
    print()
    print("A recurring event type: only starts whose whole weekly series is free (same range, same schedule)")
    typical = _cases(max_rows, max_days)[0][1]
    plain, _, _ = _best(lambda: _series_once(typical, 30, 31, 1), arguments.repeat)
    for label, count in (("plain slots, 31 days (the baseline)", 1), ("10-occurrence weekly series, 31 days", 10)):
        best, slots, size = _best(lambda count=count: _series_once(typical, 30, 31, count), arguments.repeat)
        print(f"{label:<62} {best * 1000:8.2f} {slots:7d} {size / 1024:8.1f}  {best / plain:4.2f}x")
    print()
    print("A round-robin event type: hosts in ten zones, the same hours each (same range); target at most 3x")
    for label, hosts in (("one round-robin host, 31 days", 1), ("10 round-robin hosts, 31 days", 10)):
        best, slots, size = _best(lambda hosts=hosts: _team_once(typical, 30, 31, hosts), arguments.repeat)
        print(f"{label:<62} {best * 1000:8.2f} {slots:7d} {size / 1024:8.1f}  {best / plain:4.2f}x")


if __name__ == "__main__":
    main()
