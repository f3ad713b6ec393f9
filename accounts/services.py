import secrets
from datetime import datetime

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone

from accounts.authentication import hash_api_key
from accounts.models import ROLE_RANK, ApiKey, Membership, MembershipRole, Team, User
from accounts.selectors import membership_rank
from core.exceptions import Conflict, Forbidden


@transaction.atomic
def api_key_create(*, user: User, note: str = "", expires_at: datetime | None = None) -> tuple[ApiKey, str]:
    """Make a key and return it with its one and only clear-text copy; only the hash is stored.

    The fixed prefix lets secret scanners recognise a leaked key.
    """
    raw_key = settings.API_KEY_PREFIX + secrets.token_urlsafe(32)
    api_key = ApiKey(
        user=user,
        prefix=raw_key[: len(settings.API_KEY_PREFIX) + 6],
        hashed_key=hash_api_key(raw_key),
        note=note,
        expires_at=expires_at,
    )
    api_key.full_clean()
    api_key.save()
    return api_key, raw_key


def api_key_revoke(*, api_key: ApiKey) -> ApiKey:
    api_key.revoked_at = timezone.now()
    api_key.save(update_fields=["revoked_at"])
    return api_key


@transaction.atomic
def api_key_refresh(*, api_key_id: int, expires_at: datetime | None) -> tuple[ApiKey, str]:
    """Cal.com v2's key refresh: a new key of the same user (and note) replaces this one, which
    stops working at once. A key already revoked (a second refresh racing this one) is refused."""
    api_key = ApiKey.objects.select_for_update().select_related("user").get(pk=api_key_id)
    if api_key.revoked_at is not None:
        raise Conflict("This API key was already replaced.")
    api_key_revoke(api_key=api_key)
    return api_key_create(user=api_key.user, note=api_key.note, expires_at=expires_at)


# --- Teams and memberships (docs/api.md, "Teams and memberships") ---------------------------------
#
# Every role rule lives here, not in the views or the admin. A team's rows are changed under a lock
# on the team, so that two concurrent requests cannot both remove "one of two" owners and leave none.
#
# `actor=None` is an operator in the back office: staff act outside team roles (they are nobody's
# member), so the role checks do not apply to them, but the team's invariants (an accepted OWNER,
# a unique slug, one membership per user and team) do.

OWNER_RANK = ROLE_RANK[MembershipRole.OWNER]
ADMIN_RANK = ROLE_RANK[MembershipRole.ADMIN]


def _lock_team(team: Team) -> Team:
    return Team.objects.select_for_update().get(pk=team.pk)


def _rank(*, actor: User | None, team: Team) -> int:
    return OWNER_RANK + 1 if actor is None else membership_rank(user=actor, team=team)


def _is_last_accepted_owner(membership: Membership) -> bool:
    if not (membership.accepted and membership.role == MembershipRole.OWNER):
        return False
    others = Membership.objects.filter(team_id=membership.team_id, accepted=True, role=MembershipRole.OWNER)
    return not others.exclude(pk=membership.pk).exists()


def membership_owner_loss(*, team: Team, remaining_owner_ids) -> str | None:
    """For back-office edits, which bypass team roles but not the team's invariant.

    `remaining_owner_ids` are the membership ids that will be accepted OWNERs after the edit. If the
    team has an accepted OWNER now and would have none afterwards, return why the edit is refused.
    """
    current = set(
        Membership.objects.filter(team=team, accepted=True, role=MembershipRole.OWNER).values_list("pk", flat=True)
    )
    if current and not set(remaining_owner_ids):
        return f"Team “{team}” must keep at least one accepted owner; make someone else owner first."
    return None


@transaction.atomic
def team_create(
    *, owner: User, name: str, slug: str, bio: str = "", logo: str = "", hide_branding: bool = False
) -> Team:
    """Make a team with `owner` (the API's caller, or the user an operator names) as its accepted
    OWNER, so that it never starts without one."""
    if Team.objects.filter(slug=slug).exists():
        raise Conflict(f"A team with the slug '{slug}' already exists.")
    team = Team(name=name, slug=slug, bio=bio, logo=logo, hide_branding=hide_branding)
    team.full_clean()
    try:
        with transaction.atomic():
            team.save()
    except IntegrityError:
        raise Conflict(f"A team with the slug '{slug}' already exists.") from None
    Membership.objects.create(user=owner, team=team, accepted=True, role=MembershipRole.OWNER)
    return team


@transaction.atomic
def team_update(*, team: Team, actor: User | None, **fields) -> Team:
    """Change a team's profile: accepted ADMINs and OWNERs only."""
    team = _lock_team(team)
    if _rank(actor=actor, team=team) < ADMIN_RANK:
        raise Forbidden("Only the team's admins and owners may change it.")
    slug = fields.get("slug")
    if slug is not None and Team.objects.filter(slug=slug).exclude(pk=team.pk).exists():
        raise Conflict(f"A team with the slug '{slug}' already exists.")
    for name, value in fields.items():
        setattr(team, name, value)
    team.full_clean()
    team.save()
    return team


@transaction.atomic
def team_delete(*, team: Team, actor: User | None) -> None:
    """Delete a team with its memberships: accepted OWNERs only."""
    team = _lock_team(team)
    if _rank(actor=actor, team=team) < OWNER_RANK:
        raise Forbidden("Only the team's owners may delete it.")
    team.delete()


@transaction.atomic
def membership_create(
    *,
    actor: User | None,
    user_id: int,
    team_id: int,
    role: str = MembershipRole.MEMBER,
    disable_impersonation: bool = False,
    accepted: bool | None = None,
) -> Membership:
    """Invite `user` into `team`. The result is a pending invitation, which only the invited user
    can accept, unless a system admin or an operator sets `accepted` (e.g. when migrating teams).

    A team the caller has no membership of (not even an invitation) is reported as not existing,
    like any hidden object."""
    teams = Team.objects.filter(pk=team_id)
    trusted = actor is None or actor.is_system_admin
    if not trusted:
        teams = teams.filter(memberships__user=actor)
    team = teams.first()
    user = User.objects.filter(pk=user_id).first()
    missing = {}
    if team is None:
        missing["teamId"] = [f"Team {team_id} does not exist."]
    if user is None:
        missing["userId"] = [f"User {user_id} does not exist."]
    if missing:
        raise ValidationError(missing)
    team = _lock_team(team)
    rank = _rank(actor=actor, team=team)
    if rank < ADMIN_RANK:
        raise Forbidden("Only the team's admins and owners may add members.")
    if role == MembershipRole.OWNER and rank < OWNER_RANK:
        raise Forbidden("Only an owner may grant the OWNER role.")
    if accepted is not None and not trusted:
        raise Forbidden("Only system administrators may set 'accepted'; the invited user accepts.")
    if Membership.objects.filter(user=user, team=team).exists():
        raise Conflict(f"User {user.pk} is already a member of (or invited to) team {team.pk}.")
    membership = Membership(
        user=user, team=team, role=role, disable_impersonation=disable_impersonation, accepted=bool(accepted)
    )
    membership.full_clean()
    membership.save()
    return membership


@transaction.atomic
def membership_update(
    *,
    membership: Membership,
    actor: User | None,
    accepted: bool | None = None,
    role: str | None = None,
    disable_impersonation: bool | None = None,
) -> Membership:
    """Accept an invitation, change a role or the impersonation switch, each with its own rule:

    - `accepted`: only the invited user, and only to `true` (leaving is a DELETE);
    - `role`: accepted ADMINs/OWNERs; only an OWNER grants or takes away OWNER (so an ADMIN can
      never change an OWNER); the last accepted OWNER cannot be demoted (409);
    - `disable_impersonation`: only the member themselves.

    An operator (`actor=None`) may change any of them, also withdraw an acceptance, but the team
    still keeps an accepted OWNER (409).
    """
    _lock_team(membership.team)
    membership = Membership.objects.select_for_update().get(pk=membership.pk)
    is_self = actor is None or membership.user_id == actor.pk
    was_last_owner = _is_last_accepted_owner(membership)
    if accepted is not None:
        if not is_self:
            raise Forbidden("Only the invited user may accept an invitation.")
        if accepted is not True and actor is not None:
            raise ValidationError(
                {"accepted": ["An invitation can only be accepted; to leave, delete the membership."]}
            )
        membership.accepted = accepted
    if disable_impersonation is not None:
        if not is_self:
            raise Forbidden("Only the member may change their own impersonation setting.")
        membership.disable_impersonation = disable_impersonation
    if role is not None and role != membership.role:
        rank = _rank(actor=actor, team=membership.team)
        if rank < ADMIN_RANK:
            raise Forbidden("Only the team's admins and owners may change roles.")
        if MembershipRole.OWNER in (role, membership.role) and rank < OWNER_RANK:
            raise Forbidden("Only an owner may grant or take away the OWNER role.")
        if membership.role == MembershipRole.OWNER and _is_last_accepted_owner(membership):
            raise Conflict("The team's last accepted owner cannot be demoted; make someone else owner first.")
        membership.role = role
    if was_last_owner and not membership.accepted:
        raise Conflict("The team's last accepted owner cannot withdraw; make someone else owner first.")
    membership.full_clean()
    membership.save()
    return membership


@transaction.atomic
def membership_delete(*, membership: Membership, actor: User | None) -> None:
    """A member may leave; anyone else's role must outrank the target's. A team always keeps an
    accepted OWNER, whoever asks (409)."""
    _lock_team(membership.team)
    membership = Membership.objects.select_for_update().get(pk=membership.pk)
    if actor is not None and membership.user_id != actor.pk:
        if _rank(actor=actor, team=membership.team) <= ROLE_RANK[MembershipRole(membership.role)]:
            raise Forbidden("Your role in this team must outrank the member's to remove them.")
    if _is_last_accepted_owner(membership):
        raise Conflict("The team's last accepted owner cannot be removed; make someone else owner first.")
    membership.delete()


# --- Users (the back office adds and edits them; the API reads /me and edits /users/{id}) -------


@transaction.atomic
def user_create(*, username: str, email: str, name: str = "", password: str | None = None) -> User:
    """Make a user; without `password` the account cannot sign in with one."""
    user = User(username=username, email=email, name=name)
    if password is None:
        user.set_unusable_password()
    else:
        user.set_password(password)
    user.full_clean()
    user.save()
    return user


@transaction.atomic
def user_update(*, user: User, **fields) -> User:
    """Change a user's profile, preferences or staff flags; the model's rules (unique e-mail, a real
    time zone, ...) are checked before anything is written."""
    for name, value in fields.items():
        setattr(user, name, value)
    user.full_clean()
    user.save()
    return user


def api_key_create_as(
    *, actor: User, note: str = "", expires_at: datetime | None = None, user_id: int | None = None
) -> tuple[ApiKey, str]:
    """Cal.com v1's `POST /api-keys`: a key for the caller; only a system admin names another user."""
    owner = actor
    if user_id is not None and user_id != actor.pk:
        if not actor.is_system_admin:
            raise Forbidden("Only system administrators may create a key for another user.")
        owner = User.objects.filter(pk=user_id).first()
        if owner is None:
            raise ValidationError({"userId": [f"User {user_id} does not exist."]})
    return api_key_create(user=owner, note=note, expires_at=expires_at)


@transaction.atomic
def api_key_update(*, api_key: ApiKey, note: str | None = None) -> ApiKey:
    if note is None:  # nothing to change
        return api_key
    api_key.note = note
    api_key.full_clean()
    api_key.save(update_fields=["note"])
    return api_key


@transaction.atomic
def team_invite(*, actor: User, team_id: int, username_or_email: str, role: str, accepted: bool | None = None):
    """Cal.com v1's `POST /invites`: invite an existing user, named by username or e-mail, with
    membership_create's rules (the team's admins and owners invite; `accepted` is for system
    admins)."""
    user = (
        User.objects.filter(username=username_or_email).first()
        or User.objects.filter(email__iexact=username_or_email).order_by("id").first()
    )
    if user is None:
        raise ValidationError({"usernameOrEmail": [f"No user with the username or e-mail {username_or_email}."]})
    return membership_create(actor=actor, user_id=user.pk, team_id=team_id, role=role, accepted=accepted)
