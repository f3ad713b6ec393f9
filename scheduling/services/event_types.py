"""Writes on event types. Who may write: the owner of a personal event type, an accepted ADMIN or
OWNER of the team of a team event type, system admins, and operators in the back office
(`actor=None`: staff act outside team roles, but the event type's own rules, such as a slug unique
per owner, hold for them too)."""

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction

from accounts.models import Team, User
from core.exceptions import Conflict, Forbidden
from scheduling.limits import COUNT, DURATION, clean_limits
from scheduling.models import EventType, Schedule
from scheduling.selectors.event_types import user_is_team_member, user_manages_team
from scheduling.services.hosts import event_type_hosts_set, pop_host_fields

EDITABLE_FIELDS = (
    "title",
    "slug",
    "description",
    "length",
    "hidden",
    "price",
    "currency",
    "requires_confirmation",
    "minimum_booking_notice",
    "before_event_buffer",
    "after_event_buffer",
    "slot_interval",
    "recurring_event",
    "booking_limits",
    "duration_limits",
)


def _check_can_manage(*, actor: User | None, event_type: EventType) -> None:
    if actor is None or actor.is_system_admin:
        return
    if event_type.team_id is not None and not user_manages_team(user=actor, team_id=event_type.team_id):
        raise Forbidden(f"Only an admin or owner of team {event_type.team_id} may change its event types.")
    if event_type.team_id is None and event_type.owner_id != actor.pk:
        raise Forbidden("Only the owner may change this event type.")


def event_type_check_can_manage(*, actor: User | None, event_type: EventType) -> None:
    """Who may change an event type (or what belongs to it, such as its private links): its
    owner, an admin or owner of its team, a system admin; 403 for anyone else."""
    _check_can_manage(actor=actor, event_type=event_type)


def _schedule_for(*, actor: User | None, event_type: EventType, schedule_id: int | None) -> Schedule | None:
    """The schedule must be the caller's (or, for an admin editing someone's event type, the owner's).
    An operator may pick any schedule for a team event type."""
    if schedule_id is None:
        return None
    schedules = Schedule.objects.filter(pk=schedule_id)
    if actor is not None or event_type.team_id is None:
        allowed_users = {getattr(actor, "pk", None), event_type.owner_id} - {None}
        schedules = schedules.filter(user_id__in=allowed_users)
    schedule = schedules.first()
    if schedule is None:
        raise ValidationError({"scheduleId": f"Schedule {schedule_id} does not exist."})
    return schedule


def _check_slug_free(event_type: EventType) -> None:
    owners = EventType.objects.filter(slug=event_type.slug).exclude(pk=event_type.pk)
    if event_type.team_id is not None:
        taken = owners.filter(team_id=event_type.team_id).exists()
    else:
        taken = owners.filter(owner_id=event_type.owner_id).exists()
    if taken:
        raise Conflict(f"An event type with slug '{event_type.slug}' already exists for this owner.")


def _check_recurrence(event_type: EventType) -> None:
    if event_type.recurring_event is not None:
        event_type.recurring_event = dict(event_type.recurring_event)
        if event_type.price > 0:
            # As in Cal.com, whose event type settings turn recurrence off for a paid event type.
            raise ValidationError({"recurringEvent": "A paid event type cannot recur: set price to 0 first."})


def _check_limits(event_type: EventType) -> None:
    """Booking and duration limits as `scheduling.limits.clean_limits` keeps them (the API's
    serializers check them first, with the same rule; this holds for every other writer)."""
    fields = (("booking_limits", "bookingLimits", COUNT), ("duration_limits", "durationLimits", DURATION))
    for name, field, kind in fields:
        try:
            setattr(event_type, name, clean_limits(getattr(event_type, name) or None, kind=kind))
        except ValueError as error:
            (errors,) = error.args
            messages = [f"{key}: {message}" if key else message for key, message in errors.items()]
            raise ValidationError({field: "; ".join(messages)}) from None


def _save(event_type: EventType) -> EventType:
    _check_recurrence(event_type)
    _check_limits(event_type)
    _check_slug_free(event_type)
    event_type.full_clean()
    try:
        with transaction.atomic():
            event_type.save()
    except IntegrityError as error:
        # Two requests raced for one slug: the unique constraint decides.
        raise Conflict(f"An event type with slug '{event_type.slug}' already exists for this owner.") from error
    return event_type


def _owner_for(*, actor: User, owner_id: int | None, team_id: int | None) -> User | None:
    """Who a new personal event type belongs to. As in Cal.com v1, a system admin names the owner
    (`userId`) or the team (`teamId`) and gets a 400 without either, so that an admin's script never
    creates event types on the admin's own account by mistake; anyone else creates for themselves
    (naming oneself is allowed, naming someone else is a 403)."""
    if owner_id is None:
        if team_id is None and actor.is_system_admin:
            raise ValidationError({"userId": "System administrators must name userId or teamId."})
        return None if team_id is not None else actor
    if team_id is not None:
        raise ValidationError({"userId": "An event type belongs to a user or to a team: send userId or teamId."})
    if owner_id == actor.pk:
        return actor
    if not actor.is_system_admin:
        raise Forbidden("Only system administrators may create event types for another user.")
    owner = User.objects.filter(pk=owner_id).first()
    if owner is None:
        raise ValidationError({"userId": f"User {owner_id} does not exist."})
    return owner


@transaction.atomic
def event_type_create(
    *, user: User | None, team_id: int | None = None, schedule_id: int | None = None, **fields
) -> EventType:
    """A personal event type of `user`, or with `team_id` one of that team (caller ADMIN/OWNER, or
    an operator: `user=None`)."""
    if user is None and team_id is None:
        raise ValidationError("An event type belongs to a user or to a team.")
    host_fields = pop_host_fields(fields)
    event_type = EventType(owner=None if team_id is not None else user, team_id=team_id, **fields)
    if team_id is not None and user is not None and not user.is_system_admin:
        if not user_is_team_member(user=user, team_id=team_id):
            raise ValidationError({"teamId": f"Team {team_id} does not exist."})
        if not user_manages_team(user=user, team_id=team_id):
            raise Forbidden(f"Only an admin or owner of team {team_id} may create its event types.")
    elif team_id is not None and not Team.objects.filter(pk=team_id).exists():
        raise ValidationError({"teamId": f"Team {team_id} does not exist."})
    event_type.schedule = _schedule_for(actor=user, event_type=event_type, schedule_id=schedule_id)
    return event_type_hosts_set(event_type=_save(event_type), **host_fields)


@transaction.atomic
def event_type_create_as(
    *, actor: User, owner_id: int | None = None, team_id: int | None = None, **fields
) -> EventType:
    """An event type created over the API by `actor`: for themselves, for a team (`team_id`), or
    by a system admin for the user `owner_id` (whose schedules it may then use)."""
    owner = _owner_for(actor=actor, owner_id=owner_id, team_id=team_id)
    return event_type_create(user=actor if owner is None else owner, team_id=team_id, **fields)


@transaction.atomic
def event_type_update(*, event_type: EventType, actor: User | None, **fields) -> EventType:
    _check_can_manage(actor=actor, event_type=event_type)
    host_fields = pop_host_fields(fields)
    if "schedule_id" in fields:
        event_type.schedule = _schedule_for(actor=actor, event_type=event_type, schedule_id=fields.pop("schedule_id"))
    for name, value in fields.items():
        if name not in EDITABLE_FIELDS:
            raise ValidationError({name: "This field cannot be changed."})
        setattr(event_type, name, value)
    return event_type_hosts_set(event_type=_save(event_type), **host_fields)


@transaction.atomic
def event_type_delete(*, event_type: EventType, actor: User | None) -> None:
    """Existing bookings stay (their `eventTypeId` becomes null); they are history."""
    _check_can_manage(actor=actor, event_type=event_type)
    event_type.delete()
