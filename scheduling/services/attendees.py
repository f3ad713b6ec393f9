"""Cal.com v1's `/attendees`: an attendee of one of the caller's bookings, added, changed or
removed on its own (v2's add-attendee rule applies to adding: booking_attendee_add)."""

from django.core.exceptions import ValidationError
from django.db import transaction

from accounts.models import User
from core.exceptions import Conflict
from scheduling.models import Attendee, Booking
from scheduling.selectors.bookings import booking_for_update
from scheduling.services.bookings import booking_attendee_add


@transaction.atomic
def attendee_create(*, actor: User, booking_id: int, name: str, email: str, time_zone: str) -> Attendee:
    """On a booking the caller organizes (any booking for a system admin); another's is reported
    as not existing."""
    bookings = Booking.objects.all() if actor.is_system_admin else Booking.objects.filter(organizer=actor)
    booking = bookings.filter(pk=booking_id).first()
    if booking is None:
        raise ValidationError({"bookingId": [f"Booking {booking_id} does not exist."]})
    return booking_attendee_add(booking=booking, name=name, email=email, time_zone=time_zone)


UNSET = object()


@transaction.atomic
def attendee_update(*, attendee: Attendee, name=UNSET, email=UNSET, time_zone=UNSET) -> Attendee:
    """An address already used by another attendee of the booking is a 409, as when adding one."""
    booking_for_update(booking_id=attendee.booking_id)
    attendee = Attendee.objects.select_for_update().get(pk=attendee.pk)
    if email is not UNSET and email.lower() != attendee.email.lower():
        if Attendee.objects.filter(booking_id=attendee.booking_id, email__iexact=email).exists():
            raise Conflict(f"{email} is already an attendee of this booking.")
    for field, value in (("name", name), ("email", email), ("time_zone", time_zone)):
        if value is not UNSET:
            setattr(attendee, field, value)
    attendee.full_clean(exclude=["booking", "name"] if not attendee.name else ["booking"])
    attendee.save()
    return attendee


@transaction.atomic
def attendee_delete(*, attendee: Attendee) -> None:
    """A booking keeps at least one attendee: its last one is a 409 (cancel the booking instead)."""
    booking_for_update(booking_id=attendee.booking_id)
    if Attendee.objects.filter(booking_id=attendee.booking_id).count() <= 1:
        raise Conflict("A booking keeps at least one attendee; cancel the booking instead.")
    Attendee.objects.filter(pk=attendee.pk).delete()
