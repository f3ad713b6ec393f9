"""Writes on a team event type's hosts: its `schedulingType`, its `Host` rows and
`assignAllTeamMembers`, checked together (a host must be an accepted member of the team)."""

from django.core.exceptions import ValidationError

from accounts.models import Membership
from scheduling.models import DEFAULT_HOST_PRIORITY, DEFAULT_HOST_WEIGHT, EventType, Host

HOST_FIELDS = ("scheduling_type", "hosts", "assign_all_team_members")


def pop_host_fields(fields: dict) -> dict:
    """The host settings among an event type's write fields, taken out of `fields`."""
    return {name: fields.pop(name) for name in HOST_FIELDS if name in fields}


def event_type_hosts_set(
    *,
    event_type: EventType,
    scheduling_type: str | None = None,
    hosts: list[dict] | None = None,
    assign_all_team_members: bool | None = None,
) -> EventType:
    """Apply the host settings sent with a create or an update of `event_type` (saved, inside the
    caller's transaction). `hosts` replaces the whole list; each is `{user_id, is_fixed, priority,
    weight}`. Only a team event type has hosts, and hosts need a scheduling type."""
    if scheduling_type is None and hosts is None and assign_all_team_members is None:
        _check_not_recurring(event_type)
        return event_type
    if event_type.team_id is None:
        field = "schedulingType" if scheduling_type is not None else "hosts"
        if assign_all_team_members is not None and hosts is None and scheduling_type is None:
            field = "assignAllTeamMembers"
        raise ValidationError({field: "Only a team event type has hosts."})
    if hosts and assign_all_team_members:
        raise ValidationError({"hosts": "Send either hosts or assignAllTeamMembers: true, not both."})
    if scheduling_type is not None:
        event_type.scheduling_type = scheduling_type or ""
    if assign_all_team_members is not None:
        event_type.assign_all_team_members = assign_all_team_members
    if not event_type.scheduling_type and (hosts or event_type.assign_all_team_members):
        raise ValidationError({"schedulingType": "A team event type with hosts needs a scheduling type."})
    _check_not_recurring(event_type)
    event_type.save(update_fields=["scheduling_type", "assign_all_team_members"])
    if hosts is not None:
        _replace_hosts(event_type, hosts)
    return event_type


def _check_not_recurring(event_type: EventType) -> None:
    # A series is booked with one host's schedule (scheduling.services.recurring): the hosts'
    # slots are for single meetings.
    if event_type.scheduling_type and event_type.recurring_event:
        raise ValidationError({"recurringEvent": "A collective or round-robin event type cannot recur."})


def host_memberships(*, team_id: int, user_ids: list[int]) -> tuple[dict[int, Membership], dict[int, str]]:
    """The accepted memberships in team `team_id` of `user_ids` (by user id), and why each of
    `user_ids` that cannot be a host cannot (by its index in `user_ids`): listed twice, or not an
    accepted member. One query; the API's and the back office's check."""
    memberships = {
        membership.user_id: membership
        for membership in Membership.objects.filter(team_id=team_id, accepted=True, user_id__in=user_ids)
    }
    problems, seen = {}, set()
    for index, user_id in enumerate(user_ids):
        if user_id in seen:
            problems[index] = f"User {user_id} is listed twice."
        elif user_id not in memberships:
            problems[index] = f"User {user_id} is not an accepted member of team {team_id}."
        seen.add(user_id)
    return memberships, problems


def _replace_hosts(event_type: EventType, hosts: list[dict]) -> None:
    memberships, problems = host_memberships(team_id=event_type.team_id, user_ids=[host["user_id"] for host in hosts])
    if problems:
        raise ValidationError({f"hosts[{index}].userId": message for index, message in problems.items()})
    Host.objects.filter(event_type=event_type).delete()
    rows = [
        Host(
            event_type=event_type,
            user_id=host["user_id"],
            membership=memberships[host["user_id"]],
            is_fixed=host.get("is_fixed", False),
            priority=host.get("priority", DEFAULT_HOST_PRIORITY),
            weight=host.get("weight", DEFAULT_HOST_WEIGHT),
        )
        for host in hosts
    ]
    for row in rows:
        row.full_clean(exclude=["event_type", "user", "membership"], validate_unique=False)
    Host.objects.bulk_create(rows)
