"""Writes of holds. Whether a slot may be reserved at all (it is a slot GET /slots offers) is the
booking rule, checked by the scheduling service that calls these (scheduling.services.reservations)."""

import uuid
from datetime import datetime, timedelta

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models.functions import Now

from accounts.models import User
from core.exceptions import Forbidden
from holds.models import OutOfOfficeEntry, SlotReservation
from holds.payloads import ooo_entry_payload
from webhooks.models import WebhookTrigger
from webhooks.outbox import create_deliveries
from webhooks.selectors import subscribed_webhooks

RESERVATION_MINUTES_DEFAULT = 5  # Cal.com's
RESERVATION_MINUTES_MAX = 24 * 60


def reservation_minutes(value: int | None) -> int:
    minutes = RESERVATION_MINUTES_DEFAULT if value is None else value
    if not 1 <= minutes <= RESERVATION_MINUTES_MAX:
        raise ValidationError({"reservationDuration": [f"Must be between 1 and {RESERVATION_MINUTES_MAX} minutes."]})
    return minutes


def reservation_check_owner(*, reservation: SlotReservation, actor: User) -> None:
    """Only who reserved the slot, or the host whose time it holds, may move or free it."""
    if actor.pk not in (reservation.reserved_by_id, reservation.host_id):
        raise Forbidden("Only who reserved this slot, or its host, may change it.")


@transaction.atomic
def reservation_save(
    *,
    reservation: SlotReservation,
    event_type,
    host: User,
    slot_start: datetime,
    slot_end: datetime,
    minutes: int,
    now: datetime,
) -> SlotReservation:
    reservation.event_type, reservation.host = event_type, host
    reservation.slot_start, reservation.slot_end = slot_start, slot_end
    reservation.reserved_until, reservation.minutes = now + timedelta(minutes=minutes), minutes
    reservation.full_clean(exclude=["event_type", "host", "reserved_by"])
    reservation.save()
    return reservation


@transaction.atomic
def reservation_delete(*, reservation: SlotReservation, actor: User) -> None:
    reservation_check_owner(reservation=reservation, actor=actor)
    reservation.delete()


def _check_redirect(*, user: User, to_user_id: int | None) -> User | None:
    if to_user_id is None:
        return None
    if to_user_id == user.pk:
        raise ValidationError({"toUserId": ["An entry cannot redirect to its own user."]})
    to_user = User.objects.filter(pk=to_user_id, is_active=True).first()
    if to_user is None:
        raise ValidationError({"toUserId": [f"User {to_user_id} does not exist."]})
    return to_user


def _check_period(start: datetime, end: datetime) -> None:
    if end <= start:
        raise ValidationError({"end": ["Must be after start."]})


@transaction.atomic
def out_of_office_create(
    *, user: User, start: datetime, end: datetime, notes: str = "", reason: str = "unspecified", to_user_id=None
) -> OutOfOfficeEntry:
    """An absence: its time is busy for every event type the user hosts (GET /slots leaves it out,
    bookings into it are a 409); `to_user_id` names who covers (Cal.com's redirect). The user's
    webhooks subscribed to OOO_CREATED hear of it, in the same transaction (the outbox)."""
    _check_period(start, end)
    entry = OutOfOfficeEntry(
        user=user,
        start=start,
        end=end,
        notes=notes,
        reason=reason,
        to_user=_check_redirect(user=user, to_user_id=to_user_id),
    )
    entry.full_clean(exclude=["user", "to_user"])
    entry.save()
    subscribed = subscribed_webhooks(trigger=WebhookTrigger.OOO_CREATED, user=user)
    if subscribed:
        create_deliveries(webhooks=subscribed, trigger=WebhookTrigger.OOO_CREATED, payload=ooo_entry_payload(entry))
    return entry


UNSET = object()


@transaction.atomic
def out_of_office_update(
    *, entry: OutOfOfficeEntry, start=UNSET, end=UNSET, notes=UNSET, reason=UNSET, to_user_id=UNSET
) -> OutOfOfficeEntry:
    entry = OutOfOfficeEntry.objects.select_for_update().get(pk=entry.pk)
    if start is not UNSET:
        entry.start = start
    if end is not UNSET:
        entry.end = end
    _check_period(entry.start, entry.end)
    if notes is not UNSET:
        entry.notes = notes
    if reason is not UNSET:
        entry.reason = reason
    if to_user_id is not UNSET:
        entry.to_user = _check_redirect(user=entry.user, to_user_id=to_user_id)
    entry.full_clean(exclude=["user", "to_user"])
    entry.save()
    return entry


@transaction.atomic
def out_of_office_delete(*, entry: OutOfOfficeEntry) -> None:
    entry.delete()


@transaction.atomic
def reservation_release_for_booking(*, uid: str, event_type_id: int, slot_start: datetime) -> None:
    """Free the reservation `uid` for the booking of the slot it holds, in the booking's
    transaction (so a booking that fails keeps the hold). A uid naming no unexpired reservation
    (a uid of another system's, one expired) frees nothing: the slot is then judged as any other.
    One that holds another slot is a 400."""
    try:
        key = uuid.UUID(str(uid))
    except ValueError:
        return
    reservation = SlotReservation.objects.select_for_update().filter(uid=key, reserved_until__gt=Now()).first()
    if reservation is None:
        return
    if reservation.event_type_id != event_type_id or reservation.slot_start != slot_start:
        raise ValidationError({"reservationUid": ["This reservation holds another slot."]})
    reservation.delete()
