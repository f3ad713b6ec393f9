"""A booking's location changed after it was made (Cal.com v2's `PATCH /bookings/{uid}/location`)."""

from django.core.exceptions import PermissionDenied
from django.db import transaction

from accounts.models import User
from core.exceptions import Conflict
from scheduling.models import Booking
from scheduling.selectors.bookings import booking_for_update, booking_is_managed_by
from scheduling.services.bookings import ACTIVE_STATUSES


@transaction.atomic
def booking_location_update(*, booking: Booking, actor: User, location: str) -> Booking:
    """The host's side sets the location (the text a person reads, or Cal.com's name of a video
    app) of an accepted or pending booking. Like Cal.com's endpoint it sends no webhook and no
    e-mail, and no calendar changes (this service writes to none)."""
    if not actor.is_system_admin and not booking_is_managed_by(booking_id=booking.pk, user=actor):
        raise PermissionDenied("Only the booking's host side may change its location.")
    booking = booking_for_update(booking_id=booking.pk)
    if booking.status not in ACTIVE_STATUSES:
        raise Conflict(f"Booking {booking.pk} is {booking.status}; only an accepted or pending booking can move.")
    booking.location = location
    booking.save(update_fields=["location", "updated_at"])
    return booking
