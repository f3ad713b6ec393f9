"""The UID of a booking's meeting, the one every copy of it carries: the invitations e-mailed to
the attendees, the event written into a destination calendar, the webhook payloads' `iCalUID`, the
v1 and v2 answers (`iCalUID`, `icsUid`) and the bookings feed. A calendar app that receives the
meeting more than one way (an accepted invitation and a destination calendar) keys it by this UID,
so it holds one event.

Here in `core` because the apps that build these copies (scheduling, notifications, calendars
through scheduling) sit side by side and must not import each other."""

ICAL_UID_DOMAIN = "Cal.com"


def ical_uid(booking) -> str:
    """`<uid>@Cal.com` as Cal.com builds it, or the UID the booking took over from the booking it
    rescheduled (kept along a chain of reschedules)."""
    return booking.ical_uid or f"{booking.uid}@{ICAL_UID_DOMAIN}"


def series_ical_uid(recurring_event_id: str) -> str:
    """The UID of a recurring series' invitation (one recurring event for all its occurrences)."""
    return f"{recurring_event_id}@{ICAL_UID_DOMAIN}"
