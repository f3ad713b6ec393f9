"""The booking source of the calendars app (calendars.sources): a booking as its calendar event, and
a user's bookings as the events of their calendar feed, without calendars importing this app.
Registered in `scheduling.apps`."""

from django.db.models import OuterRef, Prefetch, Q, Subquery

from core.ical import ical_uid
from scheduling.models import Attendee, Booking, BookingHost, BookingStatus


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


FEED_STATUS = {
    BookingStatus.ACCEPTED: "CONFIRMED",
    BookingStatus.PENDING: "TENTATIVE",
    BookingStatus.CANCELLED: "CANCELLED",
    BookingStatus.REJECTED: "CANCELLED",
}


def _feed_ids(user_id: int, window) -> tuple[list[int], bool]:
    """The ids of the bookings the user's feed shows, in one round trip: for the bookings the user
    organises and those they host, the soonest upcoming and the latest past ones, each an index
    range scan with a limit (`booking_organizer_start`; `booking_host_user` for the hosted), so the
    cost does not grow with the bookings outside the window or past the limits."""
    shown = Q(status__in=(BookingStatus.ACCEPTED, BookingStatus.PENDING)) | Q(
        # A booking cancelled because v1 rescheduled it into a new one is left out: the new one
        # carries the meeting's UID.
        status__in=(BookingStatus.CANCELLED, BookingStatus.REJECTED),
        rescheduled=False,
        updated_at__gte=window.cancelled_since,
    )
    organised = Booking.objects.filter(organizer_id=user_id)
    hosted = Booking.objects.filter(pk__in=BookingHost.objects.filter(user_id=user_id).values("booking_id"))
    branches = []
    for bookings in (organised, hosted):
        bookings = bookings.filter(shown)
        upcoming = bookings.filter(start_time__gte=window.now, start_time__lt=window.end).order_by("start_time")
        past = bookings.filter(start_time__gte=window.start, start_time__lt=window.now).order_by("-start_time")
        branches.append(upcoming.values_list("pk", "start_time")[: window.upcoming_limit + 1])
        branches.append(past.values_list("pk", "start_time")[: window.past_limit + 1])
    first, *others = branches
    rows = sorted(set(first.union(*others, all=True)), key=lambda row: (row[1], row[0]))
    upcoming = [row for row in rows if row[1] >= window.now]
    past = [row for row in rows if row[1] < window.now]
    truncated = len(upcoming) > window.upcoming_limit or len(past) > window.past_limit
    kept = past[len(past) - window.past_limit :] if window.past_limit else []
    kept += upcoming[: window.upcoming_limit]
    return [row[0] for row in kept], truncated


def feed_entries(user_id: int, window, with_attendees: bool):
    """The bookings a user organises or hosts as the events of their calendar feed (see
    `calendars.sources.FeedWindow`), oldest first, under the meeting's UID and SEQUENCE: the
    booking's, or the one last written to the destination calendar when higher."""
    from calendars.models import BookingReference
    from calendars.sources import FeedEntry

    ids, truncated = _feed_ids(user_id, window)
    if not ids:
        return [], truncated
    written = BookingReference.objects.filter(booking_id=OuterRef("pk")).order_by("-sequence").values("sequence")[:1]
    bookings = (
        Booking.objects.filter(pk__in=ids)
        .select_related("organizer")
        .annotate(written_sequence=Subquery(written))
        .order_by("start_time", "id")
    )
    if with_attendees:
        bookings = bookings.prefetch_related(Prefetch("attendees", queryset=Attendee.objects.order_by("id")))
    entries = []
    for booking in bookings:
        organizer = booking.organizer
        entries.append(
            FeedEntry(
                uid=ical_uid(booking),
                sequence=max(booking.ical_sequence, booking.written_sequence or 0),
                status=FEED_STATUS[booking.status],
                title=booking.title,
                description=booking.description,
                location=booking.location,
                start=booking.start_time,
                end=booking.end_time,
                created_at=booking.created_at,
                updated_at=booking.updated_at,
                organizer_name=organizer.name or organizer.username,
                organizer_email=organizer.email,
                attendees=(
                    tuple((attendee.name, attendee.email) for attendee in booking.attendees.all())
                    if with_attendees
                    else ()
                ),
            )
        )
    return entries, truncated
