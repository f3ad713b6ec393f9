"""Which event types a caller may see, and which they may book."""

from django.db.models import Q, QuerySet

from accounts.models import Membership, MembershipRole, User
from scheduling.models import EventType

TEAM_MANAGERS = (MembershipRole.ADMIN, MembershipRole.OWNER)


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


def event_type_bookable(*, user: User, event_type_id: int) -> EventType | None:
    """An event type the caller may list slots for and book: one they can see, or anyone's that
    is not hidden (what a public booking page offers). None when there is no such event type."""
    queryset = EventType.objects.select_related("owner", "team", "schedule", "schedule__user")
    if not user.is_system_admin:
        queryset = queryset.filter(_visible_filter(user) | Q(hidden=False))
    return queryset.filter(pk=event_type_id).first()


def user_manages_team(*, user: User, team_id: int) -> bool:
    return Membership.objects.filter(user=user, team_id=team_id, accepted=True, role__in=TEAM_MANAGERS).exists()


def user_is_team_member(*, user: User, team_id: int) -> bool:
    return Membership.objects.filter(user=user, team_id=team_id, accepted=True).exists()
