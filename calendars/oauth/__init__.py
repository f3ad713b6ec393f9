"""Google Calendar and Microsoft 365, behind the same three doors as CalDAV and feeds: busy time
read into the cache (`read_busy`, called by calendars.services.connection_refresh), the booking's
event written and removed (`write_event`, `remove_event`, called by calendars.writes), and the
OAuth 2.0 connect (calendars.oauth.connect).

- tokens.py: the providers' apps from the environment, the signed state, PKCE, token refresh.
- google.py, microsoft.py: each provider's published REST API.
- http.py: the one bounded, rule-checked HTTP call.

Neither provider can be reached from the test environment: the tests replay recorded answers
shaped as the providers document them, from a local server (calendars/tests/recorded_server.py)."""

from dataclasses import replace
from datetime import datetime

from calendars.models import BookingReference, CalendarConnection, ConnectionKind, ExternalCalendar
from calendars.oauth import google, microsoft
from calendars.oauth.tokens import Session
from calendars.sources import BookingEvent

API = {ConnectionKind.GOOGLE: google, ConnectionKind.OFFICE365: microsoft}


def read_busy(
    connection: CalendarConnection,
    calendars: list[ExternalCalendar],
    *,
    start: datetime,
    end: datetime,
    timeout: float | None = None,
) -> dict[int, list]:
    """The busy periods of each calendar (by pk). An event this service wrote for a booking is
    given the booking's UID, whatever the provider calls it, so it never blocks its own booking."""
    session = Session.of(connection, timeout=timeout)
    api = API[connection.kind]
    own = dict(BookingReference.objects.filter(connection=connection).exclude(href="").values_list("href", "uid"))
    read: dict[int, list] = {}
    for calendar in calendars:
        periods = api.busy(session, calendar.external_id, start=start, end=end, time_zone=calendar.time_zone)
        read[calendar.pk] = [
            replace(period, uid=own[event_id]) if event_id in own else period for period, event_id in periods
        ]
    return read


def write_event(reference: BookingReference, event: BookingEvent, sequence: int) -> None:
    """Create or update the booking's event; the provider's event id is kept in `reference.href`."""
    connection = reference.connection
    session = Session.of(connection)
    reference.href = API[connection.kind].put(session, reference.external_calendar_id, reference.href, event, sequence)


def remove_event(reference: BookingReference) -> None:
    connection = reference.connection
    API[connection.kind].delete(Session.of(connection), reference.external_calendar_id, reference.href, reference.uid)
