"""Which event types a caller may see, and which they may book."""

import functools

from django.db import connection
from django.db.models import Q, QuerySet

from accounts.models import Membership, User
from accounts.selectors import managed_team_ids
from core.rows import RowLayout, instances, row_layout
from scheduling.models import EventType, Schedule


def _visible_filter(user: User) -> Q:
    member_of = Membership.objects.filter(user=user, accepted=True).values("team_id")
    return Q(owner=user) | Q(team_id__in=member_of)


def event_type_list(*, user: User, user_ids: list[int] | None = None) -> QuerySet[EventType]:
    """The caller's own event types and those of teams they are an accepted member of.

    System admins see every event type; `user_ids` (admins' `?userId=`) narrows to those owners.
    """
    queryset = EventType.objects.select_related("owner", "team", "schedule")
    if user_ids is not None:
        queryset = queryset.filter(owner_id__in=user_ids)
        return queryset if user.is_system_admin else queryset.filter(_visible_filter(user))
    if user.is_system_admin:
        return queryset
    return queryset.filter(_visible_filter(user))


@functools.cache
def _bookable_lookup(*, system_admin: bool) -> tuple[str, tuple[RowLayout, ...]]:
    """The statement of `event_type_bookable` and its row layouts, written once per process.

    Built with the ORM (`select_related` of the owner, the schedule and its user, `_visible_filter`
    in a subquery) the query cost many times more CPU per call than PostgreSQL takes to answer it
    (docs/benchmarks.md); the statement never changes. Its row: the event type; its owner; the
    schedule its slots come from (its own, else the owner's default, which would otherwise cost a
    query of its own); that schedule's user, only when it is not the owner (a team event type's
    host), so that the owner's columns are not read and built twice. The team is not read: bookings
    and slots need its id only.
    """
    layouts = (row_layout(EventType), row_layout(User), row_layout(Schedule), row_layout(User))
    columns = ", ".join(
        layout.columns(alias)
        for layout, alias in zip(layouts, ("event_type", "owner", "schedule", "schedule_user"), strict=True)
    )
    event_types, users, schedules, memberships = (
        connection.ops.quote_name(model._meta.db_table) for model in (EventType, User, Schedule, Membership)
    )
    sql = f"""
        SELECT {columns}
        FROM {event_types} event_type
        LEFT JOIN {users} owner ON owner.id = event_type.owner_id
        LEFT JOIN {schedules} schedule
            ON schedule.id = COALESCE(event_type.schedule_id, owner.default_schedule_id)
        LEFT JOIN {users} schedule_user
            ON schedule_user.id = schedule.user_id AND schedule.user_id IS DISTINCT FROM event_type.owner_id
        WHERE event_type.id = %(event_type_id)s
    """
    if not system_admin:
        # `_visible_filter(user) | Q(hidden=False)`, as event_type_list applies it.
        sql += f"""
            AND (
                NOT event_type.hidden
                OR event_type.owner_id = %(user_id)s
                OR event_type.team_id IN (
                    SELECT team_id FROM {memberships}
                    WHERE user_id = %(user_id)s AND accepted
                )
            )
        """
    return sql, layouts


def event_type_bookable(*, user: User, event_type_id: int) -> EventType | None:
    """An event type the caller may list slots for and book: one they can see, or anyone's that
    is not hidden (what a public booking page offers). None when there is no such event type.

    One query. What the slots and the booking read next comes with it and costs none: the owner,
    the schedule (`event_type.schedule`, or for an event type without one `owner.default_schedule`)
    and the schedule's user (the owner itself when it is theirs)."""
    sql, layouts = _bookable_lookup(system_admin=user.is_system_admin)
    with connection.cursor() as cursor:
        cursor.execute(sql, {"event_type_id": event_type_id, "user_id": user.pk})
        row = cursor.fetchone()
    if row is None:
        return None
    event_type, owner, schedule, schedule_user = instances(row, *layouts)
    event_type.owner = owner
    if schedule is not None:
        schedule.user = schedule_user or owner
        if event_type.schedule_id is not None:
            event_type.schedule = schedule
        else:
            owner.default_schedule = schedule
    return event_type


def user_manages_team(*, user: User, team_id: int) -> bool:
    return managed_team_ids(user=user).filter(team_id=team_id).exists()


def user_is_team_member(*, user: User, team_id: int) -> bool:
    return Membership.objects.filter(user=user, team_id=team_id, accepted=True).exists()
