"""A user's bookings as an iCalendar feed a calendar app subscribes to (this service's extension:
Cal.com has no such feed; docs/calendars.md, "Your bookings as a feed").

Each user may have two secret addresses, `GET /v1/calendar-feeds/{variant}/{token}.ics`: the **full** feed
(title, description, location, organizer, attendees, status) and the **busy** feed (only the times,
as "Busy", under UIDs that say nothing of the bookings), which can be handed to someone who may
see when the user is busy and nothing more. The token is 32 random bytes; only its SHA-256 is
stored. A request is looked up by that hash, so a wrong token costs the same one indexed query as
a right one and learns nothing from the time taken; unknown, rotated and revoked tokens, and the
feeds of deactivated users, all answer the same 404 as an unknown path.

The feed shows the bookings the user organises or hosts that start in a window (FEED_PAST_DAYS
back, FEED_FUTURE_DAYS ahead), at most FEED_MAX_UPCOMING from now on (the soonest) and
FEED_MAX_PAST before (the latest), read through index range scans with those limits: a user with
a million bookings costs what one with a thousand does. Each event has the UID and SEQUENCE of the
meeting's event in the destination calendar (`calendars.writes`). A cancelled or rejected booking
stays FEED_CANCELLED_DAYS as STATUS:CANCELLED in the full feed, so that calendars that keep
events remove it; the busy feed leaves it out.

Answers carry a strong ETag (a hash of the body) and Last-Modified (the newest change of a booking
shown; in the busy feed, the newest booking's creation); `If-None-Match` with the current ETag is a
304 without a body.
"""

import hashlib
import hmac
import secrets
from datetime import timedelta

import icalendar
from django.db import transaction
from django.utils import timezone
from django.utils.crypto import salted_hmac

from calendars.conf import calendar_setting
from calendars.models import CalendarFeed
from calendars.sources import FeedEntry, FeedWindow, bookings
from calendars.writes import add_people
from core.exceptions import NotFound

FEED_PATH = "/v1/calendar-feeds/{variant}/{token}.ics"
PRODID = "-//Scheduling service//Calendar feed//EN"
# How often calendar apps are asked to fetch the feed again (a hint; each app has its own floor).
REFRESH_INTERVAL = timedelta(minutes=15)


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


# --- Services -------------------------------------------------------------------------------------


@transaction.atomic
def feed_issue(*, user, variant: str) -> tuple[CalendarFeed, str]:
    """Make the user's feed of this variant, or rotate its address (the old one stops working at
    once). Returns the feed and its token, which is not stored and cannot be shown again."""
    token = secrets.token_urlsafe(32)
    feed, _ = CalendarFeed.objects.update_or_create(
        user=user, variant=variant, defaults={"token_hash": token_hash(token), "created_at": timezone.now()}
    )
    return feed, token


@transaction.atomic
def feed_revoke(*, user, variant: str) -> None:
    """Revoke the address: from now on it answers 404, like one that never existed."""
    deleted, _ = CalendarFeed.objects.filter(user=user, variant=variant).delete()
    if not deleted:
        raise NotFound(f"The {variant} calendar feed does not exist.")


# --- Reading --------------------------------------------------------------------------------------


def feed_of(user, variant: str) -> CalendarFeed | None:
    return CalendarFeed.objects.filter(user=user, variant=variant).first()


def feed_by_token(token: str) -> CalendarFeed | None:
    """The live feed whose token this is: one lookup by the token's hash, whatever the token."""
    digest = token_hash(token)
    feed = CalendarFeed.objects.select_related("user").filter(token_hash=digest).first()
    if feed is None or not hmac.compare_digest(feed.token_hash, digest) or not feed.user.is_active:
        return None
    return feed


def feed_window(now=None) -> FeedWindow:
    now = now or timezone.now()
    return FeedWindow(
        start=now - timedelta(days=calendar_setting("FEED_PAST_DAYS")),
        end=now + timedelta(days=calendar_setting("FEED_FUTURE_DAYS")),
        now=now,
        cancelled_since=now - timedelta(days=calendar_setting("FEED_CANCELLED_DAYS")),
        upcoming_limit=calendar_setting("FEED_MAX_UPCOMING"),
        past_limit=calendar_setting("FEED_MAX_PAST"),
    )


def feed_entries(feed: CalendarFeed, now=None) -> tuple[list[FeedEntry], bool]:
    """The events of the feed, oldest first, and whether the limits left some out."""
    busy = feed.variant == "busy"
    entries, truncated = bookings().feed_entries(feed.user_id, feed_window(now), not busy)
    if busy:
        entries = [entry for entry in entries if entry.status != "CANCELLED"]
    return entries, truncated


# --- iCalendar ------------------------------------------------------------------------------------


def _busy_uid(feed: CalendarFeed, uid: str) -> str:
    """A UID stable while the address is (so an app updates the event it has), that reveals
    nothing of the booking and changes when the address is rotated."""
    digest = salted_hmac("calendars.feeds.busy", f"{feed.token_hash}:{uid}", algorithm="sha256").hexdigest()
    return f"{digest[:40]}@busy"


def _calendar(name: str) -> icalendar.Calendar:
    calendar = icalendar.Calendar()
    calendar.add("prodid", PRODID)
    calendar.add("version", "2.0")
    calendar.add("calscale", "GREGORIAN")
    calendar.add("method", "PUBLISH")
    calendar.add("x-wr-calname", name)
    calendar.add("refresh-interval", REFRESH_INTERVAL, parameters={"VALUE": "DURATION"})
    calendar.add("x-published-ttl", icalendar.vDuration(REFRESH_INTERVAL))
    return calendar


def _full_event(entry: FeedEntry) -> icalendar.Event:
    event = icalendar.Event()
    event.add("uid", entry.uid)
    event.add("sequence", entry.sequence)
    event.add("dtstamp", entry.updated_at)
    event.add("created", entry.created_at)
    event.add("last-modified", entry.updated_at)
    event.add("dtstart", entry.start)
    event.add("dtend", entry.end)
    event.add("summary", entry.title)
    if entry.description:
        event.add("description", entry.description)
    if entry.location:
        event.add("location", entry.location)
    event.add("status", entry.status)
    event.add("transp", "TRANSPARENT" if entry.status == "CANCELLED" else "OPAQUE")
    add_people(event, entry.organizer_name, entry.organizer_email, entry.attendees)
    return event


def _busy_event(feed: CalendarFeed, entry: FeedEntry) -> icalendar.Event:
    event = icalendar.Event()
    event.add("uid", _busy_uid(feed, entry.uid))
    event.add("dtstamp", feed.created_at)
    event.add("dtstart", entry.start)
    event.add("dtend", entry.end)
    event.add("summary", "Busy")
    event.add("transp", "OPAQUE")
    event.add("class", "PRIVATE")
    return event


def render_feed(feed: CalendarFeed, entries: list[FeedEntry]) -> bytes:
    """The feed as iCalendar. Times are in UTC (`Z`), which every client places correctly across
    DST changes; nothing in it depends on the time of the request, so an unchanged feed has an
    unchanged body (and ETag)."""
    if feed.variant == "busy":
        calendar = _calendar("Busy")
        for entry in entries:
            calendar.add_component(_busy_event(feed, entry))
    else:
        calendar = _calendar("Bookings")
        for entry in entries:
            calendar.add_component(_full_event(entry))
    return calendar.to_ical()


def feed_etag(body: bytes) -> str:
    return '"' + hashlib.sha256(body).hexdigest()[:32] + '"'
