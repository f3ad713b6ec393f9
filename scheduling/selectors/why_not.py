"""Why a start is or is not bookable: for each host, the rules that remove it.

Rules, as the API names them:
- `schedule`: the meeting does not fit inside the host's availability (weekly hours and date
  overrides in the host's zone), or the host has no schedule;
- `booking`: the meeting overlaps one of the host's bookings (with that booking's own buffers);
- `buffer`: only the event type's buffers before or after the meeting overlap a busy period;
- `calendar`: the meeting overlaps busy time of the host's connected calendars;
- `hold`: the meeting overlaps the host's held time (an unexpired slot reservation or an
  out-of-office entry);
- `notice`: the start is sooner than the event type's minimum booking notice;
- `interval`: every host is free, but the start is not on the slot grid (the event type's interval
  from the start of the shared availability window);
- `limit`: the event type's booking or duration limit for the period the start falls in (a day, week,
  month or year in the host's time zone) is reached; named once for the event type, in `reasons`,
  since the limits count the event type's bookings whoever hosts them.
"""

from collections import Counter
from datetime import datetime, timedelta

from calendars.selectors import calendar_busy
from holds.selectors import held_time
from scheduling.models import EventType
from scheduling.selectors.hosts import TeamHost, is_team_hosted, team_hosts
from scheduling.selectors.limits import has_limits, limit_reasons
from scheduling.selectors.slot_sources import busy_query, event_type_host, event_type_schedule
from scheduling.selectors.team_slots import hosts_times, reading_margin, slot_rules
from scheduling.team_slots import HostTimes, free_at, team_slots

RULES = ("schedule", "booking", "buffer", "calendar", "hold", "notice", "interval", "limit")


def _overlaps(start: datetime, end: datetime, periods) -> bool:
    return any(period_start < end and start < period_end for period_start, period_end in periods)


def _busy_by_source(user_id: int, start: datetime, end: datetime) -> dict[str, list]:
    """The host's busy periods near [start, end) by what makes them busy (`booking`, `calendar`,
    `hold`). The slots' busy-time statement unions them without saying which is which (and is kept
    so: slots are its hot path); here the held time and the calendars' busy time are read again on
    their own, and the bookings are what remains of the union without them."""
    rows = busy_query(excluding=False).rows(host_id=user_id, start=start, end=end, excluded=None)
    every = Counter(
        (busy_start - timedelta(minutes=before or 0), busy_end + timedelta(minutes=after or 0))
        for busy_start, busy_end, before, after in rows
    )
    held = Counter(
        (held_start, held_end)
        for query in held_time(host_id=user_id, start=start, end=end)
        for held_start, held_end, *_ in query
    )
    calendar = Counter(calendar_busy(user_id, start, end))
    return {"booking": list(every - held - calendar), "calendar": list(calendar), "hold": list(held)}


def host_reasons(*, event_type: EventType, times: HostTimes, start: datetime, now: datetime) -> list[dict]:
    """The rules that remove `start` for one host, each `{rule, detail}`."""
    length = timedelta(minutes=event_type.length)
    end = start + length
    before = timedelta(minutes=event_type.before_event_buffer)
    after = timedelta(minutes=event_type.after_event_buffer)
    reasons = []
    if not any(window_start <= start and end <= window_end for window_start, window_end in times.window_instants()):
        reasons.append({"rule": "schedule", "detail": "The meeting is outside the host's available hours."})
    if start < now + timedelta(minutes=event_type.minimum_booking_notice):
        detail = f"Bookings need {event_type.minimum_booking_notice} minutes' notice."
        reasons.append({"rule": "notice", "detail": detail})
    busy = _busy_by_source(times.user_id, start - before - timedelta(days=1), end + after + timedelta(days=1))
    if _overlaps(start, end, busy["booking"]):
        reasons.append({"rule": "booking", "detail": "The host has a booking then (with its buffers)."})
    if _overlaps(start, end, busy["calendar"]):
        reasons.append({"rule": "calendar", "detail": "The host's calendar is busy then."})
    if _overlaps(start, end, busy["hold"]):
        detail = "The host's time is held then (a slot reservation or an out-of-office entry)."
        reasons.append({"rule": "hold", "detail": detail})
    if not _overlaps(start, end, times.busy) and _overlaps(start - before, end + after, times.busy):
        detail = "The event type's buffers before or after the meeting overlap the host's busy time."
        reasons.append({"rule": "buffer", "detail": detail})
    return reasons


def why_not(*, event_type: EventType, start: datetime, now: datetime) -> dict:
    """Whether `start` is offered, and per host what removes it. For a round-robin event type a
    start is offered when every fixed host and at least one round-robin host is free."""
    team_hosted = is_team_hosted(event_type)
    rules = slot_rules(event_type=event_type, range_start=start, range_end=start + timedelta(minutes=1), now=now)
    margin = reading_margin(event_type)
    if team_hosted:
        hosts = team_hosts(event_type)
        times = hosts_times(hosts=hosts, rules=rules, margin=margin)
        free = team_slots([(each, host.is_fixed) for each, host in zip(times, hosts, strict=True)], rules)
        offered = bool(free_at(free, start))
    else:
        user = event_type_host(event_type)
        schedule = event_type_schedule(event_type)
        hosts = [TeamHost(user=user, is_fixed=True, priority=2, weight=100)] if user is not None else []
        times = hosts_times(hosts=hosts, rules=rules, margin=margin, schedules={user.pk: schedule} if hosts else None)
        offered = bool(hosts) and not host_reasons(event_type=event_type, times=times[0], start=start, now=now)
    limits = limit_reasons(event_type=event_type, start=start) if has_limits(event_type) else []
    answer_hosts = []
    for host, host_time in zip(hosts, times, strict=True):
        reasons = host_reasons(event_type=event_type, times=host_time, start=start, now=now)
        answer_hosts.append({"userId": host.user.pk, "isFixed": host.is_fixed, "free": not reasons, "reasons": reasons})
    team_reasons = []
    if not offered and answer_hosts and _enough_free(answer_hosts):
        detail = "Every host needed is free, but the start is not on the event type's slot grid."
        team_reasons.append({"rule": "interval", "detail": detail})
    team_reasons.extend(limits)
    return {
        "eventTypeId": event_type.pk,
        "start": start,
        "bookable": offered and not limits,
        "schedulingType": event_type.scheduling_type or None,
        "reasons": team_reasons,
        "hosts": answer_hosts,
    }


def _enough_free(hosts: list[dict]) -> bool:
    fixed_free = all(host["free"] for host in hosts if host["isFixed"])
    rotating = [host for host in hosts if not host["isFixed"]]
    return fixed_free and (not rotating or any(host["free"] for host in rotating))
