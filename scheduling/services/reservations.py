"""Slot reservations (Cal.com v2's `/slots/reservations`): a short hold on a slot that GET /slots
offers, during which that time of the host is busy for everyone (slots and bookings alike, the
reserver included, unless the booking names the reservation: `reservationUid`, which frees it in
the booking's transaction, scheduling.services.booking_requests)."""

from datetime import datetime, timedelta

from django.core.exceptions import ValidationError
from django.db import transaction

from accounts.models import User
from core.datetimes import iso_utc
from core.exceptions import Conflict, NotFound
from holds.models import SlotReservation
from holds.services import reservation_check_owner, reservation_minutes, reservation_save
from scheduling.selectors.event_types import event_type_bookable
from scheduling.selectors.slot_sources import event_type_host
from scheduling.selectors.slots import slot_is_offered


def _hold(
    *,
    reservation: SlotReservation,
    actor: User,
    event_type_id: int,
    slot_start: datetime,
    slot_duration: int | None,
    reservation_duration: int | None,
    now: datetime,
) -> SlotReservation:
    event_type = event_type_bookable(user=actor, event_type_id=event_type_id)
    if event_type is None:
        raise NotFound(f"Event type {event_type_id} does not exist.")
    if slot_duration is not None and slot_duration != event_type.length:
        raise ValidationError({"slotDuration": [f"This event type lasts {event_type.length} minutes."]})
    minutes = reservation_minutes(reservation_duration)
    if not slot_is_offered(event_type=event_type, start=slot_start, now=now):
        raise Conflict(f"{iso_utc(slot_start)} is not an available slot of event type {event_type.pk}.")
    return reservation_save(
        reservation=reservation,
        event_type=event_type,
        host=event_type_host(event_type),
        slot_start=slot_start,
        slot_end=slot_start + timedelta(minutes=event_type.length),
        minutes=minutes,
        now=now,
    )


@transaction.atomic
def slot_reserve(
    *,
    actor: User,
    event_type_id: int,
    slot_start: datetime,
    slot_duration: int | None = None,
    reservation_duration: int | None = None,
    now: datetime,
) -> SlotReservation:
    """Hold a free slot of an event type the caller may book, for `reservation_duration` minutes
    (default 5): a slot that is not offered (taken, held, outside the schedule) is a 409."""
    return _hold(
        reservation=SlotReservation(reserved_by=actor),
        actor=actor,
        event_type_id=event_type_id,
        slot_start=slot_start,
        slot_duration=slot_duration,
        reservation_duration=reservation_duration,
        now=now,
    )


@transaction.atomic
def slot_reservation_update(
    *,
    reservation: SlotReservation,
    actor: User,
    event_type_id: int,
    slot_start: datetime,
    slot_duration: int | None = None,
    reservation_duration: int | None = None,
    now: datetime,
) -> SlotReservation:
    """Move a hold (or renew it): the new slot must be free apart from this hold itself."""
    reservation = SlotReservation.objects.select_for_update().get(pk=reservation.pk)
    reservation_check_owner(reservation=reservation, actor=actor)
    # The hold no longer counts while its new time is checked; a refusal rolls this back.
    SlotReservation.objects.filter(pk=reservation.pk).update(reserved_until=now)
    return _hold(
        reservation=reservation,
        actor=actor,
        event_type_id=event_type_id,
        slot_start=slot_start,
        slot_duration=slot_duration,
        reservation_duration=reservation_duration,
        now=now,
    )
