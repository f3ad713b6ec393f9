"""Cal.com v1's availability of a user or of a team's members: working hours, date overrides,
busy time and the free ranges between two instants (GET /availability)."""

from datetime import datetime

from django.db.models import Exists, OuterRef

from accounts.models import Membership, Team, User
from scheduling.models import Schedule
from scheduling.selectors.slot_sources import busy_between, schedule_rules
from scheduling.slots import SlotRequest, available_windows, merged_windows
from scheduling.team_slots import intersect

MINUTES = 60


def _minutes(wall) -> int:
    return wall.hour * 60 + wall.minute


def _free(windows, busy):
    """`windows` with the `busy` periods cut out (both sorted; busy merged)."""
    free = []
    for start, end in windows:
        for busy_start, busy_end in busy:
            if busy_end <= start or busy_start >= end:
                continue
            if busy_start > start:
                free.append((start, busy_start))
            start = max(start, busy_end)
            if start >= end:
                break
        if start < end:
            free.append((start, end))
    return free


def _iso(instant: datetime) -> str:
    return instant.isoformat().replace("+00:00", "Z")


def user_availability(*, user: User, date_from: datetime, date_to: datetime) -> dict:
    """One user's availability between `date_from` and `date_to`: Cal.com v1's object. Working
    hours and overrides are wall-clock minutes in `timeZone` (the default schedule's); `busy` is
    everything that makes the user busy (`busy_between`: bookings with their buffers, and the rest),
    `dateRanges` the schedule's windows without the busy time, clipped to the range."""
    schedule = Schedule.objects.filter(pk=user.default_schedule_id).first() if user.default_schedule_id else None
    busy = merged_windows(list(busy_between(user, date_from, date_to, None)))
    body = {
        "busy": [{"start": _iso(start), "end": _iso(end)} for start, end in busy],
        "timeZone": schedule.time_zone if schedule is not None else user.time_zone,
        "dateRanges": [],
        "workingHours": [],
        "dateOverrides": [],
        "currentSeats": None,
    }
    if schedule is None:
        return body
    weekly, overrides = schedule_rules(schedule, date_from.date(), date_to.date())
    request = SlotRequest(
        time_zone=schedule.time_zone,
        weekly_rules=weekly,
        overrides=overrides,
        length=1,
        range_start=date_from,
        range_end=date_to,
        now=date_from,
    )
    windows = intersect(available_windows(request), [(date_from, date_to)])
    body["dateRanges"] = [{"start": _iso(start), "end": _iso(end)} for start, end in _free(windows, busy)]
    body["workingHours"] = [
        {
            "days": sorted(rule.days),
            "startTime": _minutes(rule.start),
            "endTime": 24 * MINUTES if rule.end.hour == 23 and rule.end.minute == 59 else _minutes(rule.end),
            "userId": user.pk,
        }
        for rule in weekly
    ]
    body["dateOverrides"] = [
        {
            "date": override.date.isoformat(),
            "startTime": _minutes(override.start),
            "endTime": _minutes(override.end),
            "userId": user.pk,
        }
        for override in sorted(overrides, key=lambda override: (override.date, override.start))
    ]
    return body


def availability_subject(*, caller: User, user_id: int) -> User | None:
    """The user whose availability `caller` may read: themselves, anyone for a system admin, else
    someone who shares a team with them (both accepted). None: no such user, as far as they know."""
    users = User.objects.filter(pk=user_id, is_active=True)
    if caller.pk == user_id or caller.is_system_admin:
        return users.first()
    shared = Membership.objects.filter(
        user_id=OuterRef("pk"),
        accepted=True,
        team_id__in=Membership.objects.filter(user=caller, accepted=True).values("team_id"),
    )
    return users.filter(Exists(shared)).first()


def team_members_availability(*, team: Team, date_from: datetime, date_to: datetime) -> list[dict]:
    """Cal.com v1's team answer: `[{userId, availability}]` for each accepted member, by user id."""
    members = User.objects.filter(
        pk__in=Membership.objects.filter(team=team, accepted=True).values("user_id"), is_active=True
    ).order_by("pk")
    return [
        {"userId": member.pk, "availability": user_availability(user=member, date_from=date_from, date_to=date_to)}
        for member in members
    ]
