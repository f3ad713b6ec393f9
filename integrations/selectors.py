from integrations.bodies import flattened_booking
from scheduling.models import Booking
from scheduling.payloads import booking_payload

SAMPLE_BOOKINGS = 3  # Cal.com's apps list the three newest bookings as samples


def sample_bookings(*, user) -> list[dict]:
    """The caller's newest bookings as the apps' `listBookings` shows them (a trigger's sample data)."""
    bookings = (
        Booking.objects.filter(organizer=user)
        .select_related("organizer", "event_type", "rescheduled_from")
        .prefetch_related("attendees")
        .order_by("-id")[:SAMPLE_BOOKINGS]
    )
    return [
        flattened_booking(
            booking_payload(booking),
            status=booking.status,
            cancellation_reason=booking.cancellation_reason or None,
        )
        for booking in bookings
    ]


def out_of_office_samples(*, user) -> list[dict]:
    """The caller's newest out-of-office entries as OOO_CREATED deliveries (Zapier's sample data).
    This service records no out-of-office entries yet: the list is empty."""
    return []
