from core.datetimes import iso_utc_ms
from holds.models import OutOfOfficeEntry
from holds.payloads import ooo_entry_payload
from integrations.bodies import flattened_booking
from scheduling.models import Booking
from scheduling.payloads import booking_payload

SAMPLE_BOOKINGS = 3  # Cal.com's apps list the three newest bookings (and out-of-office entries) as samples


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
    """The caller's newest out-of-office entries as OOO_CREATED deliveries carry them (Zapier's
    sample data): `{createdAt, triggerEvent, payload: {oooEntry}}`."""
    entries = OutOfOfficeEntry.objects.filter(user=user).select_related("user", "to_user").order_by("-id")
    return [
        {"createdAt": iso_utc_ms(entry.created_at), "triggerEvent": "OOO_CREATED", "payload": ooo_entry_payload(entry)}
        for entry in entries[:SAMPLE_BOOKINGS]
    ]
