"""The database side of a team event type's slots: each host's windows (from their default
schedule, in its zone) and busy time (`busy_query`: their bookings of every event type, and
whatever else counts as busy there), handed to the pure `scheduling.team_slots` functions. The
statements one host's slots run (scheduling.selectors.slot_sources) are run for every host at once
(`rows_for_each`): two queries for the hosts' times, however many hosts there are. GET /slots with
who is free at each start, for any event type, is `scheduling.selectors.slots.slots_with_hosts`."""

from datetime import datetime, timedelta

from scheduling.models import EventType, Schedule
from scheduling.selectors.hosts import TeamHost, team_hosts
from scheduling.selectors.slot_sources import busy_query, rows_for_each, rules_of_rows, rules_query
from scheduling.slots import SlotRequest, available_window_seconds, group_seconds_by_day
from scheduling.team_slots import HostTimes, SlotRules, free_at, team_slots, team_starts


def reading_margin(event_type: EventType) -> timedelta:
    # As for one host: windows are built per local day, and bookings' buffers reach out.
    return timedelta(days=1, minutes=event_type.length + event_type.before_event_buffer + event_type.after_event_buffer)


def hosts_times(
    *,
    hosts: list[TeamHost],
    rules: SlotRules,
    margin: timedelta,
    exclude_booking_id: int | None = None,
    schedules: dict[int, Schedule | None] | None = None,
    lock: bool = False,
) -> list[HostTimes]:
    """Each host's availability windows and busy periods around the rules' range, in the order of
    `hosts`: from their schedule in `schedules` (by user id) or else their default one. A host
    without a schedule is never available. Two queries whatever the number of hosts: every
    schedule's rules (`rules_query`, for each schedule; with `lock`, after taking every host's lock
    in the same statement, for a booking being written), then every host's busy time
    (`busy_query`, for each host)."""
    first, last = rules.range_start - margin, rules.range_end + margin
    schedules = schedules or {}
    of_host = {
        host.user.pk: schedules.get(host.user.pk)
        or (host.user.default_schedule if host.user.default_schedule_id is not None else None)
        for host in hosts
    }
    schedule_ids = list({schedule.pk for schedule in of_host.values() if schedule is not None})
    rule_rows = rows_for_each(
        rules_query(),
        "schedule_id",
        schedule_ids,
        lock_user_ids=list(of_host) if lock else None,
        first_day=first.date(),
        last_day=last.date(),
    )
    busy_rows = rows_for_each(
        busy_query(excluding=exclude_booking_id is not None),
        "host_id",
        list(of_host),
        start=first,
        end=last,
        excluded=exclude_booking_id,
    )
    times = []
    for host in hosts:
        user_id = host.user.pk
        busy = [
            (booking_start - timedelta(minutes=before or 0), booking_end + timedelta(minutes=after or 0))
            for booking_start, booking_end, before, after in busy_rows[user_id]
        ]
        schedule = of_host[user_id]
        if schedule is None:
            times.append(HostTimes(user_id=user_id, windows=[], busy=busy))
            continue
        weekly, overrides = rules_of_rows(rule_rows[schedule.pk])
        request = SlotRequest(
            time_zone=schedule.time_zone,
            weekly_rules=weekly,
            overrides=overrides,
            length=rules.length,
            range_start=rules.range_start,
            range_end=rules.range_end,
            now=rules.now,
        )
        times.append(HostTimes(user_id=user_id, windows=available_window_seconds(request), busy=busy))
    return times


def slot_rules(*, event_type: EventType, range_start: datetime, range_end: datetime, now: datetime) -> SlotRules:
    return SlotRules(
        length=event_type.length,
        interval=event_type.slot_interval,
        minimum_notice=event_type.minimum_booking_notice,
        before_buffer=event_type.before_event_buffer,
        after_buffer=event_type.after_event_buffer,
        range_start=range_start,
        range_end=range_end,
        now=now,
    )


def _hosts_and_rules(
    event_type: EventType,
    range_start: datetime,
    range_end: datetime,
    now: datetime,
    exclude_booking_id: int | None,
    hosts: list[TeamHost] | None = None,
    lock: bool = False,
) -> tuple[list[tuple[HostTimes, bool]], SlotRules]:
    """Each host's times paired with whether the host is fixed, and the event type's rules: what
    the pure `scheduling.team_slots` functions take."""
    if hosts is None:
        hosts = team_hosts(event_type)
    rules = slot_rules(event_type=event_type, range_start=range_start, range_end=range_end, now=now)
    times = hosts_times(
        hosts=hosts, rules=rules, margin=reading_margin(event_type), exclude_booking_id=exclude_booking_id, lock=lock
    )
    return [(each, host.is_fixed) for each, host in zip(times, hosts, strict=True)], rules


def team_free_hosts(
    *,
    event_type: EventType,
    range_start: datetime,
    range_end: datetime,
    now: datetime,
    exclude_booking_id: int | None = None,
    hosts: list[TeamHost] | None = None,
    lock: bool = False,
) -> dict[int, list[int]]:
    """`{start: [ids of the hosts free then]}` for the starts offered in [range_start, range_end)
    (whole seconds since the Unix epoch, `scheduling.team_slots.team_slots`): the round-robin hosts
    free at each start, or every host when all of them attend. `lock`: every host's lock is taken
    before their busy time is read (`hosts_times`)."""
    return team_slots(*_hosts_and_rules(event_type, range_start, range_end, now, exclude_booking_id, hosts, lock))


def team_slot_hosts(
    *,
    event_type: EventType,
    start: datetime,
    now: datetime,
    exclude_booking_id: int | None = None,
    hosts: list[TeamHost] | None = None,
    lock: bool = False,
) -> list[int]:
    """The ids of the hosts free at exactly `start` (empty: `start` is not offered)."""
    free = team_free_hosts(
        event_type=event_type,
        range_start=start,
        range_end=start + timedelta(minutes=1),
        now=now,
        exclude_booking_id=exclude_booking_id,
        hosts=hosts,
        lock=lock,
    )
    return free_at(free, start)


def team_available_slots(
    *,
    event_type: EventType,
    range_start: datetime,
    range_end: datetime,
    time_zone: str,
    now: datetime,
    exclude_booking_id: int | None = None,
) -> dict[str, list[dict[str, str]]]:
    """GET /slots of a team event type, grouped by day in `time_zone` as for one host: the starts
    of `team_free_hosts` without who is free at each (`scheduling.team_slots.team_starts`)."""
    starts = team_starts(*_hosts_and_rules(event_type, range_start, range_end, now, exclude_booking_id))
    return group_seconds_by_day(starts, time_zone)
