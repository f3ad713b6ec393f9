"""Reads of teams, memberships, users and API keys: who may see which (docs/api.md, "Teams and memberships")."""

from django.db.models import Q, QuerySet

from accounts.models import ROLE_RANK, ApiKey, Membership, MembershipRole, Team, User


def _accepted_team_ids(user: User):
    return Membership.objects.filter(user=user, accepted=True).values("team_id")


TEAM_MANAGER_ROLES = (MembershipRole.ADMIN, MembershipRole.OWNER)


def managed_team_ids(*, user: User) -> QuerySet[Membership]:
    """The teams where `user` is an accepted ADMIN or OWNER, those who manage a team's event types
    and webhooks: a `team_id` values query, to use as a subquery (or narrow and ask `.exists()`)."""
    return Membership.objects.filter(user=user, accepted=True, role__in=TEAM_MANAGER_ROLES).values("team_id")


def team_list(*, user: User, user_ids: list[int] | None = None) -> QuerySet[Team]:
    """Teams where the caller is an accepted member; a system admin sees all (narrowed by members)."""
    queryset = Team.objects.all()
    if not user.is_system_admin:
        queryset = queryset.filter(pk__in=_accepted_team_ids(user))
    if user_ids is not None:
        queryset = queryset.filter(pk__in=Membership.objects.filter(user_id__in=user_ids).values("team_id"))
    return queryset.order_by("id")


def membership_list(
    *, user: User, user_ids: list[int] | None = None, team_id: int | None = None
) -> QuerySet[Membership]:
    """Memberships of every team where the caller is an accepted member, plus the caller's own
    (pending invitations included); a system admin sees all. One query with user and team."""
    queryset = Membership.objects.select_related("user", "team")
    if not user.is_system_admin:
        queryset = queryset.filter(Q(team_id__in=_accepted_team_ids(user)) | Q(user=user))
    if user_ids is not None:
        queryset = queryset.filter(user_id__in=user_ids)
    if team_id is not None:
        queryset = queryset.filter(team_id=team_id)
    return queryset.order_by("id")


def membership_rank(*, user: User, team: Team) -> int:
    """The caller's power in the team: 0 unless an accepted member. System admins rank above OWNER."""
    if user.is_system_admin:
        return ROLE_RANK[MembershipRole.OWNER] + 1
    role = Membership.objects.filter(user=user, team=team, accepted=True).values_list("role", flat=True).first()
    return ROLE_RANK[MembershipRole(role)] if role else 0


def user_list(*, user: User, user_ids: list[int] | None = None) -> QuerySet[User]:
    """Cal.com v1's `/users`: system admins see every user (or `user_ids`); anyone else only
    themselves."""
    if user.is_system_admin:
        queryset = User.objects.all()
        return queryset.filter(pk__in=user_ids) if user_ids else queryset
    return User.objects.filter(pk=user.pk)


def api_key_list(*, user: User, user_ids: list[int] | None = None) -> QuerySet[ApiKey]:
    """The caller's API keys that still work or may still be shown (not revoked); system admins
    see everyone's (or `user_ids`')."""
    queryset = ApiKey.objects.filter(revoked_at__isnull=True)
    if user.is_system_admin:
        return queryset.filter(user_id__in=user_ids) if user_ids else queryset
    return queryset.filter(user=user)
