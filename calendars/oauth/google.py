"""Google Calendar API v3, as published: the calendar list, events read for busy time, and the
booking's event inserted, patched and deleted.

Busy time is read with `events.list` (`singleEvents=true`: Google expands recurrences) rather than
`freeBusy`: freeBusy answers anonymous intervals, so the events this service wrote for a booking
could not be told apart and would block their own booking's reschedule; events.list names each
event (`iCalUID`), says which are free (`transparency`) or cancelled, and has no range limit."""

from datetime import UTC, date, datetime
from urllib.parse import quote
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from calendars.ical import BusyPeriod
from calendars.oauth.events import busy_periods, update_or_create
from calendars.oauth.tokens import Session
from calendars.providers import DiscoveredCalendar, ProviderError
from calendars.sources import BookingEvent

PAGE_SIZE = 2500  # events.list's largest page
MAX_PAGES = 100
WRITERS = ("writer", "owner")


def _ok(answer) -> bool:
    return answer.status == 200


def _calendar_url(session: Session, calendar_id: str) -> str:
    # The id comes from Google's own answer; quoted whole, it can only ever name a calendar.
    return f"{session.provider.api_url}/calendars/{quote(calendar_id, safe='@')}"


def discover(session: Session) -> tuple[str, list[DiscoveredCalendar]]:
    """(the account's address, its calendars that it may read)."""
    found: list[DiscoveredCalendar] = []
    account = ""
    params = {"minAccessRole": "reader", "maxResults": "250"}
    for _ in range(MAX_PAGES):
        answer = session.call(
            "GET", f"{session.provider.api_url}/users/me/calendarList", "listing calendars", ok=_ok, params=params
        )
        for item in answer.data.get("items") or []:
            if not isinstance(item, dict) or not item.get("id") or item.get("deleted"):
                continue
            if item.get("primary"):
                account = str(item["id"])
            found.append(
                DiscoveredCalendar(
                    external_id=str(item["id"])[:1000],
                    name=str(item.get("summaryOverride") or item.get("summary") or item["id"])[:300],
                    time_zone=_zone_name(item.get("timeZone")),
                    read_only=item.get("accessRole") not in WRITERS,
                )
            )
        token = answer.data.get("nextPageToken")
        if not token:
            break
        params = {**params, "pageToken": token}
    # The primary calendar first: it becomes the destination.
    found.sort(key=lambda calendar: calendar.external_id != account)
    return account, found


def _zone_name(value) -> str | None:
    try:
        return str(ZoneInfo(str(value))) if value else None
    except (ZoneInfoNotFoundError, ValueError):
        return None


def _instant(value: dict, zone: ZoneInfo) -> datetime:
    """An event's start or end: a date-time with its offset, or an all-day date (midnight in the
    calendar's zone)."""
    if value.get("dateTime"):
        moment = datetime.fromisoformat(str(value["dateTime"]).replace("Z", "+00:00"))
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=_event_zone(value, zone))
        return moment.astimezone(UTC)
    day = date.fromisoformat(str(value["date"]))
    return datetime(day.year, day.month, day.day, tzinfo=zone).astimezone(UTC)


def _event_zone(value: dict, zone: ZoneInfo) -> ZoneInfo:
    try:
        return ZoneInfo(str(value["timeZone"])) if value.get("timeZone") else zone
    except (ZoneInfoNotFoundError, ValueError):
        return zone


def _declined(item: dict) -> bool:
    return any(
        isinstance(attendee, dict) and attendee.get("self") and attendee.get("responseStatus") == "declined"
        for attendee in item.get("attendees") or []
    )


def _events(session: Session, calendar_id: str, params: dict):
    for _ in range(MAX_PAGES):
        answer = session.call(
            "GET", f"{_calendar_url(session, calendar_id)}/events", "reading events", ok=_ok, params=params
        )
        yield from (item for item in answer.data.get("items") or [] if isinstance(item, dict))
        token = answer.data.get("nextPageToken")
        if not token:
            return
        params = {**params, "pageToken": token}
    raise ProviderError(f"The calendar has more than {MAX_PAGES} pages of events in the window read.")


def busy(
    session: Session, calendar_id: str, *, start: datetime, end: datetime, time_zone: str
) -> list[tuple[BusyPeriod, str]]:
    """The calendar's busy periods in [start, end), each with its Google event id. `time_zone`:
    the calendar's (from the calendar list), for all-day events and times without an offset."""
    zone = ZoneInfo(time_zone)
    params = {
        "timeMin": start.astimezone(UTC).isoformat(),
        "timeMax": end.astimezone(UTC).isoformat(),
        "singleEvents": "true",
        "maxResults": str(PAGE_SIZE),
    }
    return busy_periods(
        _events(session, calendar_id, params),
        start=start,
        end=end,
        is_free=lambda item: (
            item.get("status") == "cancelled" or item.get("transparency") == "transparent" or _declined(item)
        ),
        times=lambda item: (_instant(item["start"], zone), _instant(item["end"], zone)),
        uid_key="iCalUID",
    )


def _body(event: BookingEvent, sequence: int) -> dict:
    body = {
        "summary": event.title,
        "description": event.description,
        "location": event.location,
        "start": {"dateTime": event.start.astimezone(UTC).isoformat(), "timeZone": "UTC"},
        "end": {"dateTime": event.end.astimezone(UTC).isoformat(), "timeZone": "UTC"},
        "sequence": sequence,
        "status": "tentative" if event.tentative else "confirmed",
        "attendees": [{"email": email, "displayName": name} for name, email in event.attendees],
    }
    return body


# This service e-mails the attendees itself: Google must not send invitations of its own.
QUIET = {"sendUpdates": "none"}


def _find(session: Session, calendar_id: str, uid: str) -> str:
    """The id of the calendar's event with this iCalUID (one written before, its outcome unknown)."""
    answer = session.call(
        "GET",
        f"{_calendar_url(session, calendar_id)}/events",
        "looking the event up",
        ok=_ok,
        params={"iCalUID": uid, "showDeleted": "true"},
    )
    for item in answer.data.get("items") or []:
        if isinstance(item, dict) and item.get("id"):
            return str(item["id"])
    return ""


def put(session: Session, calendar_id: str, event_id: str, event: BookingEvent, sequence: int) -> str:
    """Write the booking's event: patch the one written before (found by id, else by iCalUID, so a
    retry after an unknown outcome never makes a second), else insert it. Its id."""
    event_id = event_id or _find(session, calendar_id, event.uid)
    events = f"{_calendar_url(session, calendar_id)}/events"
    return update_or_create(
        session,
        event_id=event_id,
        update_url=f"{events}/{quote(event_id, safe='')}",
        gone=(404, 410),
        create_url=events,
        created=(200,),
        body=_body(event, sequence),
        identity={"iCalUID": event.uid},
        params=QUIET,
    )


def delete(session: Session, calendar_id: str, event_id: str, uid: str) -> None:
    """Remove the event; one already gone (404, 410) counts as removed."""
    event_id = event_id or _find(session, calendar_id, uid)
    if not event_id:
        return
    session.call(
        "DELETE",
        f"{_calendar_url(session, calendar_id)}/events/{quote(event_id, safe='')}",
        "removing the event",
        ok=lambda answer: answer.status in (200, 204, 404, 410),
        params=QUIET,
    )
