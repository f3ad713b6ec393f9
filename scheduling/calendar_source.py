"""The booking source of the calendars app (calendars.sources): a booking as its calendar event,
without calendars importing this app. Registered in `scheduling.apps`."""

from scheduling.models import Booking, BookingStatus
from scheduling.payloads import ical_uid


def _latest_of_chain(booking: Booking) -> Booking:
    """The booking that now holds the meeting: the newest one that rescheduled this one."""
    seen = {booking.pk}
    while True:
        successor = Booking.objects.filter(rescheduled_from_id=booking.pk).exclude(pk__in=seen).order_by("-id").first()
        if successor is None:
            return booking
        seen.add(successor.pk)
        booking = successor


def booking_event(booking_id: int):
    from calendars.sources import BookingEvent

    booking = Booking.objects.select_related("organizer").filter(pk=booking_id).first()
    if booking is None:
        return None
    latest = _latest_of_chain(booking)
    if latest.pk != booking.pk:
        latest = Booking.objects.select_related("organizer").get(pk=latest.pk)
    organizer = latest.organizer
    return BookingEvent(
        booking_id=latest.pk,
        organizer_id=organizer.pk,
        organizer_name=organizer.name or organizer.username,
        organizer_email=organizer.email,
        uid=ical_uid(latest),
        sequence=latest.ical_sequence,
        title=latest.title,
        description=latest.description,
        location=latest.location,
        start=latest.start_time,
        end=latest.end_time,
        active=latest.status in (BookingStatus.ACCEPTED, BookingStatus.PENDING),
        tentative=latest.status == BookingStatus.PENDING,
        attendees=tuple((attendee.name, attendee.email) for attendee in latest.attendees.order_by("id")),
    )


def booking_organizer_id(booking_id: int) -> int | None:
    return Booking.objects.filter(pk=booking_id).values_list("organizer_id", flat=True).first()
