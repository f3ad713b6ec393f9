"""Which event types a caller may see, and which they may book."""

import functools

from django.db.models import Q, QuerySet

from accounts.models import Membership, User
from accounts.selectors import managed_team_ids
from core.fastpath.compiled_queries import CompiledQuery, Parameter
from scheduling.models import EventType


def _visible_branches(user: User | Parameter) -> list[Q]:
    """Who sees an event type: its owner, and the accepted members of its team. `user` is a user,
    or the `Parameter` standing for one in a compiled query (`_bookable_lookup`)."""
    member_of = Membership.objects.filter(user=user, accepted=True).values("team_id")
    return [Q(owner=user), Q(team_id__in=member_of)]


def _visible_filter(user: User | Parameter) -> Q:
    """`_visible_branches` as one condition, for a lookup of one event type: the same rule for
    a user and for the `Parameter` of a compiled query."""
    owner, team = _visible_branches(user)
    return owner | team


def _visible_to(user: User) -> Q:
    """`_visible_branches` for a list: the ids of each branch, read along its own index (owner,
    team) and united. As one OR, PostgreSQL walked every event type of the installation for a page
    (a filter no one index answers: 50,000 rows, 16 ms, for a caller of 20)."""
    owner, team = (EventType.objects.filter(branch).order_by().values("pk") for branch in _visible_branches(user))
    return Q(pk__in=owner.union(team))


def event_type_list(*, user: User, user_ids: list[int] | None = None, slug: str | None = None) -> QuerySet[EventType]:
    """The caller's own event types and those of teams they are an accepted member of.

    System admins see every event type; `user_ids` (admins' `?userId=`) narrows to those owners,
    `slug` to the event types with exactly that slug.
    """
    queryset = EventType.objects.select_related("owner", "team", "schedule")
    if slug is not None:
        queryset = queryset.filter(slug=slug)
    if user_ids is not None:
        queryset = queryset.filter(owner_id__in=user_ids)
        return queryset if user.is_system_admin else queryset.filter(_visible_to(user))
    if user.is_system_admin:
        return queryset
    return queryset.filter(_visible_to(user))


def event_types_of_username(*, user: User, username: str, slug: str | None = None) -> QuerySet[EventType]:
    """The event types `username` owns that the caller may book: what their public booking page
    offers (not hidden), plus hidden ones the caller sees (`event_type_bookable`'s rule, for a list);
    `slug` narrows to one."""
    queryset = EventType.objects.select_related("owner", "team", "schedule").filter(owner__username=username)
    if slug is not None:
        queryset = queryset.filter(slug=slug)
    if user.is_system_admin:
        return queryset
    return queryset.filter(_visible_filter(user) | Q(hidden=False))


def event_type_by_slug(
    *, user: User, slug: str, username: str | None = None, team_slug: str | None = None
) -> EventType | None:
    """The event type `slug` of the user `username` or of the team `team_slug` that the caller may
    book (`event_type_bookable`'s rule), or None: Cal.com's way of naming an event type without its id."""
    if username:
        return event_types_of_username(user=user, username=username, slug=slug).first()
    queryset = EventType.objects.filter(team__slug=team_slug, slug=slug)
    if not user.is_system_admin:
        queryset = queryset.filter(_visible_filter(user) | Q(hidden=False))
    return queryset.order_by("id").first()


@functools.cache
def _bookable_lookup(*, system_admin: bool) -> CompiledQuery:
    """The query of `event_type_bookable`, compiled by the ORM once per process (core/fastpath/compiled_queries.py):
    building it on every call cost many times more CPU than PostgreSQL takes to answer it
    (docs/benchmarks.md, "Profiling and what changed"). It reads what slots and bookings read next:
    the owner with their default schedule (the schedule of an event type without one of its own),
    the event type's own schedule and that schedule's user (a team event type's host), and its
    mail settings (a booking's e-mails, notifications.outbox). The team is not read: bookings and
    slots need its id only."""
    queryset = (
        EventType.objects.select_related("owner__default_schedule", "schedule__user", "notification_settings")
        .filter(pk=Parameter("event_type_id", EventType._meta.pk))
        .order_by()  # one row: no ORDER BY (the model's ordering), as `.get()` would do
    )
    if not system_admin:
        queryset = queryset.filter(_visible_filter(Parameter("user_id", User._meta.pk)) | Q(hidden=False))
    return CompiledQuery(queryset)


def event_type_bookable(*, user: User, event_type_id: int, through_private_link: bool = False) -> EventType | None:
    """An event type the caller may list slots for and book: one they can see, or anyone's that
    is not hidden (what a public booking page offers), or any, hidden too, `through_private_link`
    (one of its private links, checked by the caller). None when there is no such event type.

    One query. What the slots and the booking read next comes with it and costs none: the owner,
    the schedule (`event_type.schedule`, or for an event type without one `owner.default_schedule`)
    and the schedule's user (the owner itself when it is theirs)."""
    lookup = _bookable_lookup(system_admin=user.is_system_admin or through_private_link)
    event_type = lookup.first(event_type_id=event_type_id, user_id=user.pk)
    if event_type is None or event_type.owner_id is None:
        return event_type
    # One object per person: the owner also stands for the user of a schedule of theirs.
    owner = event_type.owner
    for schedule in (event_type.schedule, owner.default_schedule):
        if schedule is not None and schedule.user_id == owner.pk:
            schedule.user = owner
    return event_type


def user_manages_team(*, user: User, team_id: int) -> bool:
    return managed_team_ids(user=user).filter(team_id=team_id).exists()


def user_is_team_member(*, user: User, team_id: int) -> bool:
    return Membership.objects.filter(user=user, team_id=team_id, accepted=True).exists()
