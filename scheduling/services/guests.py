"""Guests added to a booking after it was made (Cal.com v2's `POST /bookings/{uid}/guests`)."""

from django.db import transaction

from scheduling.models import Booking
from scheduling.services.bookings import booking_attendee_add

MAX_GUESTS_PER_REQUEST = 10  # Cal.com's limit per request


@transaction.atomic
def booking_guests_add(*, booking: Booking, guests: list[dict]) -> Booking:
    """Add each guest (`email`, and optionally `name`, `time_zone`, `locale`) as an attendee, with
    the rules of adding one (an address already there is a 409, the booking's attendee limit, an
    accepted or pending booking only): all of them or, on the first refusal, none. A guest without
    a time zone takes the booker's, as the guests named at booking time do."""
    booker = booking.attendees.order_by("id").first()
    default_time_zone = booker.time_zone if booker is not None else booking.organizer.time_zone
    for guest in guests:
        booking_attendee_add(
            booking=booking,
            name=guest.get("name", ""),
            email=guest["email"],
            time_zone=guest.get("time_zone") or default_time_zone,
            locale=guest.get("locale", "en"),
        )
    return booking
