"""Microsoft Graph v1.0, as published: the user's calendars (`/me/calendars`), events read for
busy time, and the booking's event created, updated and deleted.

Busy time is read with `calendarView` rather than `getSchedule`: getSchedule answers anonymous
intervals (the events this service wrote for a booking could not be told apart and would block
their own booking's reschedule) and covers at most 62 days a request; calendarView expands
recurrences and names each event, with `showAs` and `isCancelled`."""

import hashlib
from datetime import UTC, date, datetime
from urllib.parse import quote
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from calendars.ical import BusyPeriod
from calendars.oauth.events import busy_periods, update_or_create
from calendars.oauth.tokens import Session
from calendars.providers import DiscoveredCalendar, ProviderError
from calendars.sources import BookingEvent

PAGE_SIZE = 500
MAX_PAGES = 100
FREE = ("free", "workingElsewhere")  # shown as available: they block nothing
UTC_ANSWERS = {"Prefer": 'outlook.timezone="UTC"'}


def _ok(answer) -> bool:
    return answer.status == 200


def _next(session: Session, answer) -> str | None:
    """@odata.nextLink, only if it stays on the configured Graph endpoint (a link elsewhere is
    never followed: the endpoint is a setting, never an answer's choice)."""
    link = answer.data.get("@odata.nextLink")
    if not link:
        return None
    if not str(link).startswith(session.provider.api_url + "/"):
        raise ProviderError("Microsoft 365 answered a next page on another server; it is not followed.")
    return str(link)


def _pages(session: Session, url: str, action: str, params: dict | None, headers: dict | None = None):
    for _ in range(MAX_PAGES):
        answer = session.call("GET", url, action, ok=_ok, params=params, headers=headers or {})
        yield from (item for item in answer.data.get("value") or [] if isinstance(item, dict))
        url = _next(session, answer)
        if url is None:
            return
        params = None  # the next link carries the query
    raise ProviderError(f"Microsoft 365 answered more than {MAX_PAGES} pages while {action}.")


def discover(session: Session) -> tuple[str, list[DiscoveredCalendar]]:
    """(the account's address, its calendars)."""
    me = session.call(
        "GET",
        f"{session.provider.api_url}/me",
        "reading the account",
        ok=_ok,
        params={"$select": "mail,userPrincipalName"},
    )
    account = str(me.data.get("mail") or me.data.get("userPrincipalName") or "")[:200]
    items = list(
        _pages(
            session,
            f"{session.provider.api_url}/me/calendars",
            "listing calendars",
            {"$select": "id,name,canEdit,isDefaultCalendar", "$top": "100"},
        )
    )
    # The default calendar first: it becomes the destination.
    items.sort(key=lambda item: not item.get("isDefaultCalendar"))
    found = [
        DiscoveredCalendar(
            external_id=str(item["id"])[:1000],
            name=str(item.get("name") or item["id"])[:300],
            time_zone=None,  # Graph keeps no zone per calendar: the user's zone is used
            read_only=not item.get("canEdit", False),
        )
        for item in items
        if item.get("id")
    ]
    return account, found


def _instant(value: dict, all_day: bool, zone: ZoneInfo) -> datetime:
    """Graph's {"dateTime": "2026-01-05T09:00:00.0000000", "timeZone": "UTC"} (asked for in UTC);
    an all-day event's date is midnight in the calendar's zone, whatever zone Graph wrote."""
    text = str(value["dateTime"])[:19]
    moment = datetime.fromisoformat(text)
    if all_day:
        day = date(moment.year, moment.month, moment.day)
        return datetime(day.year, day.month, day.day, tzinfo=zone).astimezone(UTC)
    try:
        event_zone = ZoneInfo(str(value.get("timeZone") or "UTC"))
    except (ZoneInfoNotFoundError, ValueError):
        event_zone = ZoneInfo("UTC")
    return moment.replace(tzinfo=event_zone).astimezone(UTC)


def _calendar_url(session: Session, calendar_id: str) -> str:
    return f"{session.provider.api_url}/me/calendars/{quote(calendar_id, safe='')}"


def busy(
    session: Session, calendar_id: str, *, start: datetime, end: datetime, time_zone: str
) -> list[tuple[BusyPeriod, str]]:
    """The calendar's busy periods in [start, end), each with its Graph event id."""
    zone = ZoneInfo(time_zone)
    params = {
        "startDateTime": start.astimezone(UTC).isoformat(),
        "endDateTime": end.astimezone(UTC).isoformat(),
        "$select": "id,iCalUId,showAs,isCancelled,isAllDay,start,end",
        "$top": str(PAGE_SIZE),
    }
    url = f"{_calendar_url(session, calendar_id)}/calendarView"

    def times(item: dict) -> tuple[datetime, datetime]:
        all_day = bool(item.get("isAllDay"))
        return _instant(item["start"], all_day, zone), _instant(item["end"], all_day, zone)

    return busy_periods(
        _pages(session, url, "reading events", params, UTC_ANSWERS),
        start=start,
        end=end,
        is_free=lambda item: bool(item.get("isCancelled")) or item.get("showAs") in FREE,
        times=times,
        uid_key="iCalUId",
    )


def _body(event: BookingEvent) -> dict:
    # No `attendees`: Graph would send its own invitations, and this service already e-mails each
    # attendee an invitation. They are listed in the event's text instead.
    people = "\n".join(f"{name} <{email}>" if name else email for name, email in event.attendees)
    text = "\n\n".join(part for part in (event.description, people and f"Attendees:\n{people}") if part)
    return {
        "subject": event.title,
        "body": {"contentType": "text", "content": text},
        "start": {"dateTime": event.start.astimezone(UTC).replace(tzinfo=None).isoformat(), "timeZone": "UTC"},
        "end": {"dateTime": event.end.astimezone(UTC).replace(tzinfo=None).isoformat(), "timeZone": "UTC"},
        "location": {"displayName": event.location},
        "showAs": "tentative" if event.tentative else "busy",
    }


def transaction_id(uid: str, sequence: int | None = None) -> str:
    """Graph's `transactionId` of the booking's event: the same for every retry of its creation,
    so that Graph makes one event however often the request is sent. The meeting's UID outlives a
    reschedule, so an event deleted in Outlook and created again takes the write's `sequence` too:
    that creation is a new one, not a retry of the first."""
    key = uid if sequence is None else f"{uid}#{sequence}"
    return hashlib.sha256(key.encode()).hexdigest()


def put(session: Session, calendar_id: str, event_id: str, event: BookingEvent, sequence: int) -> str:
    """Update the event written before, else create it (idempotent through transactionId). Its id."""
    return update_or_create(
        session,
        event_id=event_id,
        update_url=f"{session.provider.api_url}/me/events/{quote(event_id, safe='')}",
        gone=(404,),
        create_url=f"{_calendar_url(session, calendar_id)}/events",
        created=(200, 201),
        body=_body(event),
        identity={"transactionId": transaction_id(event.uid, sequence if event_id else None)},
    )


def delete(session: Session, calendar_id: str, event_id: str, uid: str) -> None:
    """Remove the event; one already gone (404) counts as removed."""
    if not event_id:
        return
    session.call(
        "DELETE",
        f"{session.provider.api_url}/me/events/{quote(event_id, safe='')}",
        "removing the event",
        ok=lambda answer: answer.status in (200, 204, 404),
    )
