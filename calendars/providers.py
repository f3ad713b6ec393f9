"""The calendar servers' side: CalDAV (through the maintained `caldav` client) and ICS feeds
(`requests`), both on sessions whose every request goes to the address the outbound rule checked
(`calendars.network`: resolved once, checked, connected to; redirects too), and each answer is
time- and size-bounded (`CALENDARS["TIMEOUT_SECONDS"]`, `["MAX_RESPONSE_BYTES"]`). Errors come out as
`ProviderError` with a message fit to show the calendar's owner: never a credential, never the
feed's secret URL.
"""

from dataclasses import dataclass
from datetime import datetime
from urllib.parse import quote, urlsplit

import caldav
import requests
from caldav.lib import error as caldav_error

from calendars.conf import calendar_setting
from calendars.ical import BusyPeriod, CalendarDataRefused, busy_periods, parse_calendar
from calendars.network import AnswerTooLarge, AnswerTooSlow, pin, pinned_session, read_bounded
from core.outbound import TargetRefused, resolve_target


class ProviderError(Exception):
    """The calendar could not be read or written; the message names why, without secrets."""


@dataclass(frozen=True)
class DiscoveredCalendar:
    external_id: str
    name: str
    time_zone: str | None
    read_only: bool


def public_label(url: str, username: str = "") -> str:
    """What may be shown of a connection: the host (and account), never a path or a secret."""
    host = urlsplit(url).hostname or ""
    return f"{username} @ {host}" if username else host


def check_url(url: str) -> None:
    try:
        resolve_target(url)
    except TargetRefused as refusal:
        raise ProviderError(str(refusal)) from None


# --- CalDAV ---------------------------------------------------------------------------------------


def _client(url: str, username: str, password: str, timeout: float | None = None) -> caldav.DAVClient:
    check_url(url)
    client = caldav.DAVClient(
        url=url,
        # Basic credentials with the first request, not after a 401 (a server may delay each 401).
        auth=requests.auth.HTTPBasicAuth(username, password),
        timeout=timeout or calendar_setting("TIMEOUT_SECONDS"),
    )
    # Every request the client sends, to the URL it was given or to one a server answered with (a
    # principal, a calendar home on another host, a redirect), goes to the address its own check
    # of the outbound rule resolved; no proxies or .netrc from the worker's environment.
    pin(client.session)
    return client


def _caldav_failure(error: Exception) -> ProviderError:
    if isinstance(error, caldav_error.AuthorizationError):
        return ProviderError("The calendar server refused the username or password.")
    if isinstance(error, ProviderError):
        return error
    if isinstance(error, TargetRefused):
        return ProviderError(str(error))
    return ProviderError(f"The calendar server could not be read ({type(error).__name__}).")


def caldav_discover(url: str, username: str, password: str) -> list[DiscoveredCalendar]:
    """The principal's calendars (RFC 4791 discovery from `url`)."""
    try:
        with _client(url, username, password) as client:
            found = []
            for calendar in client.principal().calendars():
                found.append(
                    DiscoveredCalendar(
                        external_id=str(calendar.url),
                        name=calendar.get_display_name() or str(calendar.url).rstrip("/").rsplit("/", 1)[-1],
                        time_zone=None,
                        read_only=False,
                    )
                )
            return found
    except Exception as error:  # noqa: BLE001 - any failure of the server is the owner's to see, never a 5xx
        raise _caldav_failure(error) from None


def caldav_busy(
    secret: dict, calendar_url: str, *, start: datetime, end: datetime, time_zone: str, timeout: float | None = None
) -> list[BusyPeriod]:
    """Busy time of one calendar: a calendar-query time-range REPORT, the events it returns expanded
    here (servers differ in how they expand; `calendars.ical` does it one way)."""
    check_url(calendar_url)
    try:
        with _client(secret["url"], secret["username"], secret["password"], timeout) as client:
            calendar = client.calendar(url=calendar_url)
            objects = calendar.search(start=start, end=end, event=True, expand=False)
            periods: list[BusyPeriod] = []
            for item in objects:
                periods.extend(busy_periods(parse_calendar(item.data), start=start, end=end, time_zone=time_zone))
            return periods
    except CalendarDataRefused as refusal:
        raise ProviderError(str(refusal)) from None
    except Exception as error:  # noqa: BLE001
        raise _caldav_failure(error) from None


def event_href(calendar_url: str, uid: str) -> str:
    """The event's resource on the server, named after its UID, so that writing it again replaces it."""
    return calendar_url.rstrip("/") + "/" + quote(uid, safe="") + ".ics"


def _answered(response, action: str) -> None:
    if response.status == 401 or response.status == 403:
        raise ProviderError("The calendar server refused the username or password.")
    if response.status >= 400:
        raise ProviderError(f"The calendar server answered HTTP {response.status} to {action}.")


def caldav_put(secret: dict, href: str, ics: str) -> None:
    """PUT the event at its resource (created, or replaced whole): the client's own save would
    raise the SEQUENCE it is given, which this service sets itself."""
    try:
        with _client(secret["url"], secret["username"], secret["password"]) as client:
            response = client.put(href, ics, {"Content-Type": 'text/calendar; charset="utf-8"'})
    except Exception as error:  # noqa: BLE001
        raise _caldav_failure(error) from None
    _answered(response, "writing the event")


def caldav_delete(secret: dict, href: str) -> None:
    """Remove the event; one already gone counts as removed."""
    check_url(href)
    try:
        with _client(secret["url"], secret["username"], secret["password"]) as client:
            response = client.delete(href)
    except Exception as error:  # noqa: BLE001
        raise _caldav_failure(error) from None
    if response.status != 404:
        _answered(response, "removing the event")


# --- ICS feeds -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FeedAnswer:
    data: bytes | None  # None: not modified since `etag`
    etag: str


def fetch_feed(url: str, *, etag: str = "", timeout: float | None = None) -> FeedAnswer:
    """GET the feed, conditional on its last ETag; size-bounded while reading, redirects refused
    (a feed's address is the one its owner gave)."""
    check_url(url)
    limit = calendar_setting("MAX_RESPONSE_BYTES")
    timeout = timeout or calendar_setting("TIMEOUT_SECONDS")
    headers = {"Accept": "text/calendar"}
    if etag:
        headers["If-None-Match"] = etag
    try:
        with pinned_session() as session:
            with session.get(url, headers=headers, timeout=timeout, allow_redirects=False, stream=True) as response:
                if response.status_code == 304:
                    return FeedAnswer(data=None, etag=etag)
                if response.status_code != 200:
                    raise ProviderError(f"The feed answered HTTP {response.status_code}.")
                body = read_bounded(response, limit=limit, timeout=timeout)
                return FeedAnswer(data=body, etag=response.headers.get("ETag", ""))
    except AnswerTooLarge:
        raise ProviderError(f"The feed has more than {limit} bytes.") from None
    except AnswerTooSlow:
        raise ProviderError(f"The feed took more than {timeout:g} s to send.") from None
    except TargetRefused as refusal:
        raise ProviderError(str(refusal)) from None
    except requests.RequestException as error:
        raise ProviderError(f"The feed could not be fetched ({type(error).__name__}).") from None


def feed_busy(data: bytes, *, start: datetime, end: datetime, time_zone: str) -> list[BusyPeriod]:
    try:
        return busy_periods(parse_calendar(data), start=start, end=end, time_zone=time_zone)
    except CalendarDataRefused as refusal:
        raise ProviderError(str(refusal)) from None


def feed_name(data: bytes) -> str:
    try:
        return str(parse_calendar(data).get("X-WR-CALNAME", ""))[:300]
    except CalendarDataRefused:
        return ""


def feed_zone(data: bytes) -> str | None:
    try:
        zone = parse_calendar(data).get("X-WR-TIMEZONE")
    except CalendarDataRefused:
        return None
    return str(zone) if zone else None
