"""Slots of any event type, the answers GET /slots and a booking being written ask for: a personal
event type's from its host's schedule and busy time (scheduling.selectors.slot_sources), a team
one's from its hosts' (scheduling.selectors.team_slots), then without the starts its booking limits
remove (scheduling.selectors.limits)."""

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

from scheduling.models import EventType
from scheduling.recurrence import Recurrence, plan_series, series_free_starts, series_horizon
from scheduling.selectors.hosts import is_team_hosted, team_hosts
from scheduling.selectors.limits import within_limits
from scheduling.selectors.slot_sources import event_type_host, event_type_schedule, slot_request_for
from scheduling.selectors.team_slots import team_available_slots, team_free_hosts, team_slot_hosts
from scheduling.slots import free_slots, free_slots_on_days, group_by_day, group_seconds_by_day


def slot_is_offered(
    *, event_type: EventType, start: datetime, now: datetime, exclude_booking_id: int | None = None, lock: bool = False
) -> bool:
    """Whether `start` is exactly a slot that GET /slots offers (ignoring `exclude_booking_id`).
    `lock`: for a booking being written, the locks of the people it makes busy are taken before
    their busy time is read."""
    if is_team_hosted(event_type):
        # A booking being written whose host `booking_host` found free at this start, under the
        # hosts' locks (scheduling.services.assignment.AssignedSlot): no need to ask again.
        assigned = getattr(event_type, "_assigned", None)
        if assigned is not None and (assigned.start, assigned.now, assigned.excluded) == (
            start,
            now,
            exclude_booking_id,
        ):
            return True
        free = team_slot_hosts(
            event_type=event_type, start=start, now=now, exclude_booking_id=exclude_booking_id, lock=lock
        )
        return bool(free)
    request = slot_request_for(
        event_type=event_type,
        range_start=start,
        range_end=start + timedelta(minutes=1),
        now=now,
        exclude_booking_id=exclude_booking_id,
        lock=lock,
    )
    return request is not None and start in free_slots(request)


def _recurrence_and_count(event_type: EventType, recurring_count: int | None) -> tuple[Recurrence | None, int]:
    if not event_type.recurring_event:
        return None, 1
    recurrence = Recurrence.from_json(event_type.recurring_event)
    return recurrence, recurring_count or recurrence.count


def offered_occurrences(
    *, event_type: EventType, starts: list[datetime], now: datetime, exclude_booking_id: int | None = None
) -> list[bool]:
    """For each of `starts` (the occurrences of a series), whether GET /slots offers it: free in
    the host's schedule (weekly rules, date overrides, notice, buffers, other bookings). Two
    queries for the whole series, whatever its span."""
    if not starts:
        return []
    request = slot_request_for(
        event_type=event_type,
        range_start=min(starts),
        range_end=max(starts) + timedelta(minutes=1),
        now=now,
        exclude_booking_id=exclude_booking_id,
    )
    if request is None:
        return [False] * len(starts)
    zone = ZoneInfo(request.time_zone)
    offered = free_slots_on_days(request, {start.astimezone(zone).date() for start in starts})
    return [start.astimezone(UTC).replace(tzinfo=None) in offered for start in starts]


def available_slots(
    *,
    event_type: EventType,
    range_start: datetime,
    range_end: datetime,
    time_zone: str,
    now: datetime,
    recurring_count: int | None = None,
    exclude_booking_id: int | None = None,
) -> dict[str, list[dict[str, str]]]:
    """`{"2026-11-23": [{"time": "2026-11-23T09:00:00+01:00"}, …]}` grouped in `time_zone`. For a
    recurring event type, only the starts whose whole series (`recurring_count` occurrences, else
    the event type's count) is free: the availability and bookings are then loaded once, as far
    ahead as the last occurrence of a series starting in the range can fall. `exclude_booking_id`: a
    booking being rescheduled, whose own time counts as free (as the reschedule itself counts it)."""
    if is_team_hosted(event_type):
        grouped = team_available_slots(
            event_type=event_type,
            range_start=range_start,
            range_end=range_end,
            time_zone=time_zone,
            now=now,
            exclude_booking_id=exclude_booking_id,
        )
        return within_limits(event_type=event_type, grouped=grouped, exclude_booking_id=exclude_booking_id)
    recurrence, count = _recurrence_and_count(event_type, recurring_count)
    is_series = recurrence is not None and count > 1
    load_until = range_end
    if is_series:
        schedule = event_type_schedule(event_type)
        if schedule is None:
            return {}
        load_until = series_horizon(range_start, range_end, schedule.time_zone, recurrence, count)
        if load_until is None:
            return {}
    request = slot_request_for(
        event_type=event_type,
        range_start=range_start,
        range_end=load_until,
        now=now,
        exclude_booking_id=exclude_booking_id,
    )
    if request is None:
        return {}
    slots = free_slots(replace(request, range_end=range_end))
    if is_series and slots:
        slots = series_free_starts(request, plan_series(slots, request.time_zone, recurrence, count))
    return within_limits(
        event_type=event_type, grouped=group_by_day(slots, time_zone), exclude_booking_id=exclude_booking_id
    )


def _person(user) -> dict:
    return {"id": user.pk, "name": user.name, "username": user.username, "timeZone": user.time_zone}


def slots_with_hosts(
    *,
    event_type: EventType,
    range_start: datetime,
    range_end: datetime,
    time_zone: str,
    now: datetime,
    exclude_booking_id: int | None = None,
) -> dict[str, list[dict]]:
    """GET /slots with, on each slot, `hosts`: who is free then. For a round-robin event type, the
    round-robin hosts one of whom would be assigned (fixed hosts attend every slot); for a
    collective one, every host; for a personal event type, its owner."""
    if not is_team_hosted(event_type):
        grouped = available_slots(
            event_type=event_type,
            range_start=range_start,
            range_end=range_end,
            time_zone=time_zone,
            now=now,
            exclude_booking_id=exclude_booking_id,
        )
        host = event_type_host(event_type)
        return {day: [{**slot, "hosts": [_person(host)]} for slot in slots] for day, slots in grouped.items()}
    hosts = team_hosts(event_type)
    people = {host.user.pk: _person(host.user) for host in hosts}
    free = team_free_hosts(
        event_type=event_type,
        range_start=range_start,
        range_end=range_end,
        now=now,
        exclude_booking_id=exclude_booking_id,
        hosts=hosts,
    )
    grouped = group_seconds_by_day(free, time_zone)
    # `group_seconds_by_day` keeps the order of `free` (by start): the nth slot is the nth start.
    free_hosts = iter(free.values())
    grouped = {
        day: [{**slot, "hosts": [people[user_id] for user_id in next(free_hosts)]} for slot in slots]
        for day, slots in grouped.items()
    }
    return within_limits(event_type=event_type, grouped=grouped, exclude_booking_id=exclude_booking_id)
