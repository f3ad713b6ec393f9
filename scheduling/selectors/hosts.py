"""Who hosts a team event type: its `Host` rows, or with `assign_all_team_members` every accepted
member of its team (a listed member keeps the settings of their row)."""

from dataclasses import dataclass

from accounts.models import Membership, User
from scheduling.models import DEFAULT_HOST_PRIORITY, DEFAULT_HOST_WEIGHT, EventType, Host, SchedulingType


@dataclass(frozen=True)
class TeamHost:
    user: User
    is_fixed: bool
    priority: int
    weight: int


def is_team_hosted(event_type: EventType) -> bool:
    """Whether slots and bookings come from the event type's hosts rather than from one person."""
    return event_type.team_id is not None and bool(event_type.scheduling_type)


def team_hosts(event_type: EventType) -> list[TeamHost]:
    """The hosts, in user id order, each with their default schedule loaded. Every host of a
    collective event type is fixed (each of them attends)."""
    rows = {
        host.user_id: host
        for host in Host.objects.filter(event_type=event_type, membership__accepted=True).select_related(
            "user__default_schedule"
        )
    }
    users = {host.user_id: host.user for host in rows.values()}
    if event_type.assign_all_team_members:
        members = User.objects.filter(
            pk__in=Membership.objects.filter(team_id=event_type.team_id, accepted=True).values("user_id")
        ).select_related("default_schedule")
        users.update({user.pk: user for user in members if user.pk not in users})
    collective = event_type.scheduling_type == SchedulingType.COLLECTIVE
    hosts = []
    for user_id in sorted(users):
        row = rows.get(user_id)
        hosts.append(
            TeamHost(
                user=users[user_id],
                is_fixed=collective or (row is not None and row.is_fixed),
                priority=row.priority if row is not None else DEFAULT_HOST_PRIORITY,
                weight=row.weight if row is not None else DEFAULT_HOST_WEIGHT,
            )
        )
    return hosts
