"""One booking request, whatever door it came through: POST /v1/bookings, POST /v2/bookings in
every `cal-api-version`, a reschedule or a cancellation of either version. Each view translates its version's body
into a `BookingRequest` (or a `RescheduleRequest`) and `booking_request`'s result into its
version's answer; the sequence in between lives here only:

1. the booking being replaced (`rescheduleUid`), among those the caller sees (404 otherwise);
2. the event type, by id or by slug with its owner's username or its team's slug, among those the
   caller may book (`EventTypeNotFound` otherwise), or the one a private link opens (`hashedLink`),
   and the checks of the names sent beside it;
3. the caller's slot reservation (`reservationUid`), freed in the booking's transaction when it
   holds the slot booked;
4. a series (a count of occurrences, or one occurrence of a series named by its dates) or a single
   booking: `scheduling.services.recurring` or `scheduling.services.bookings.booking_create`.

A field means the same in every version. A field that asks for something this service does not
do is refused by name (400) in every version that knows it (`refuse_unsupported`)."""

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from django.core.exceptions import ImproperlyConfigured, ValidationError
from django.db import transaction

from accounts.models import User
from core.exceptions import NotFound
from holds.services import reservation_release_for_booking
from scheduling.models import Booking, EventType
from scheduling.selectors.bookings import booking_by_uid
from scheduling.selectors.event_types import event_type_bookable, event_type_by_slug
from scheduling.services.bookings import (
    booking_cancel,
    booking_create,
    booking_request_check,
    booking_reschedule_as_new,
)
from scheduling.services.recurring import booking_cancel_series, booking_occurrence_create, booking_series_create


class EventTypeNotFound(NotFound):
    """No event type the caller may book has the id (or slug) sent. v1 answers it as a 400 on
    `eventTypeId`, v2 as Cal.com's 404."""

    def __init__(self, detail: str, *, field_name: str):
        super().__init__(detail)
        self.field_name = field_name


class BookingNotFound(NotFound):
    """The booking to reschedule is not one the caller sees."""


@dataclass(kw_only=True)
class BookingRequest:
    """What a client asks for when it books, in this service's terms (validated by the version's
    serializer; the rules between fields and against the database are `booking_request`'s)."""

    actor: User
    start: datetime
    attendee_name: str
    attendee_email: str
    attendee_time_zone: str
    # The event type: its id, or its slug with its owner's `username` or its team's `team_slug`.
    # A slug (or a username, a team slug) sent beside an id must name that same event type.
    event_type_id: int | None = None
    event_type_slug: str | None = None
    username: str | None = None
    team_slug: str | None = None
    # Cal.com v1's booking on behalf of a user: only the caller's own id (`booking_request_check`).
    user_id: int | None = None
    end: datetime | None = None
    length_in_minutes: int | None = None
    locale: str = "en"
    guests: Sequence[str] = ()
    title: str = ""
    description: str = ""
    location: str = ""
    metadata: dict | None = None
    responses: dict | None = None
    custom_inputs: dict | None = None
    sms_reminder_number: str = ""
    # A new booking replacing this one (Cal.com v1's `rescheduleUid`).
    reschedule_uid: str | None = None
    reschedule_reason: str = ""
    # A series: `recurring_count` occurrences from `start`, or the occurrence
    # `current_recurring_index` of the series `recurring_event_id` whose dates are `all_recurring_dates`.
    recurring_count: int | None = None
    recurring_event_id: str | None = None
    all_recurring_dates: list[datetime] | None = None
    current_recurring_index: int | None = None
    # A private link of the event type (Cal.com v1's `hashedLink`): it opens a hidden event type to
    # whoever has it, and counts one use when the booking is written (`private_link_use`).
    private_link: str | None = None
    # A slot reservation of the booker's (Cal.com v2's `reservationUid`): when it holds this very
    # slot, it no longer blocks this booking and is freed in the booking's transaction.
    reservation_uid: str | None = None
    # What a request of a recurring event type that names no count means: v1 refuses it (400 on
    # `recurringCount`), v2 books the event type's whole count, as Cal.com's v2 does.
    whole_series_by_default: bool = False


@dataclass(kw_only=True)
class RescheduleRequest:
    """Cal.com's reschedule of a booking the caller sees: a new booking at `start` with everything
    of the old one (`booking_reschedule_as_new`)."""

    booking: Booking
    start: datetime
    end: datetime | None = None
    reschedule_reason: str = ""


@dataclass(kw_only=True)
class CancelRequest:
    """A cancellation of a booking the caller sees, by `cancelled_by` (an e-mail). With
    `all_remaining` (Cal.com's `allRemainingBookings`) or `subsequent` (`cancelSubsequentBookings`),
    the other occurrences of its series not started yet, or after it, go too."""

    booking: Booking
    cancelled_by: str
    cancellation_reason: str = ""
    all_remaining: bool = False
    subsequent: bool = False


@dataclass
class BookingResult:
    """The bookings written, in order: one, or every occurrence of a series booked at once."""

    bookings: list[Booking] = field(default_factory=list)
    series: bool = False

    @property
    def booking(self) -> Booking:
        return self.bookings[0]


# (*, link_id) -> the id of the event type the private link `link_id` opens, counting one use of
# it in the caller's transaction; a link unknown, expired or used up is a 400 on `hashedLink`.
# Private links sit above this app: their app provides this when Django starts (private_links.apps).
_private_link_use: Callable[..., int] | None = None


def provide_private_links(use: Callable[..., int]) -> None:
    global _private_link_use
    _private_link_use = use


def refuse_unsupported(sent: dict[str, object]) -> None:
    """The fields of `sent` (wire name → value) that ask for something this service does not do:
    a 400 naming each one sent with a value other than "nothing" (None, False, an empty string)."""
    messages = {
        "instant": "Instant meetings are not supported: book a slot of GET /v2/slots.",
        "allowConflicts": "Bookings cannot overlap another booking of the organizer here.",
        "allowBookingOutOfBounds": "Bookings must be slots of the event type's booking window here.",
        "organizationSlug": "This service has no organizations: name the event type by id, username or teamSlug.",
    }
    refused = {name: [messages[name]] for name, value in sent.items() if value not in (None, False, "")}
    if refused:
        raise ValidationError(refused)


def booking_request(request: BookingRequest | RescheduleRequest | CancelRequest) -> BookingResult:
    """Carry out one booking request (the module's docstring has the sequence). Every booking is
    returned as written, with its attendees and payments loaded, so an answer needs no read back;
    a cancellation returns the cancelled bookings, the one named first."""
    if isinstance(request, CancelRequest):
        if request.all_remaining or request.subsequent:
            cancelled = booking_cancel_series(
                booking=request.booking,
                subsequent_only=not request.all_remaining,
                cancellation_reason=request.cancellation_reason,
                cancelled_by=request.cancelled_by,
            )
            return BookingResult(cancelled, series=True)
        cancelled = booking_cancel(
            booking=request.booking, cancellation_reason=request.cancellation_reason, cancelled_by=request.cancelled_by
        )
        return BookingResult([cancelled])
    if isinstance(request, RescheduleRequest):
        moved = booking_reschedule_as_new(
            booking=request.booking, start=request.start, end=request.end, reschedule_reason=request.reschedule_reason
        )
        return BookingResult([moved])
    if request.reservation_uid or request.private_link:
        # A booking refused keeps the reservation and the private link's uses. Without either, the
        # booking's own transaction (`booking_create`, a series') is the whole write: no savepoint.
        with transaction.atomic():
            return _book(request)
    return _book(request)


def _book(request: BookingRequest) -> BookingResult:
    reschedule = None
    if request.reschedule_uid is not None:
        reschedule = booking_by_uid(user=request.actor, uid=request.reschedule_uid)
        if reschedule is None:
            raise BookingNotFound(f"Booking with uid {request.reschedule_uid} does not exist.")
    event_type = _event_type(request)
    booking_request_check(actor=request.actor, event_type=event_type, user_id=request.user_id)
    if request.length_in_minutes is not None and request.length_in_minutes != event_type.length:
        raise ValidationError({"lengthInMinutes": f"This event type lasts {event_type.length} minutes."})
    fields = {
        "start": request.start,
        "end": request.end,
        "attendee_name": request.attendee_name,
        "attendee_email": request.attendee_email,
        "attendee_time_zone": request.attendee_time_zone,
        # None sent: "en", or on a reschedule each attendee's own (`booking_create`).
        "locale": request.locale if reschedule is not None else request.locale or "en",
        "guests": tuple(request.guests),
        "title": request.title,
        "description": request.description,
        "location": request.location,
        "metadata": request.metadata,
        "responses": request.responses,
        "custom_inputs": request.custom_inputs,
        "sms_reminder_number": request.sms_reminder_number,
    }
    if request.reservation_uid:
        reservation_release_for_booking(
            uid=request.reservation_uid, event_type_id=event_type.pk, slot_start=request.start
        )
    series = _series(request, event_type=event_type, rescheduling=reschedule is not None, fields=fields)
    if series is not None:
        return series
    booking = booking_create(
        event_type=event_type, reschedule=reschedule, reschedule_reason=request.reschedule_reason, **fields
    )
    return BookingResult([booking])


def _event_type(request: BookingRequest) -> EventType:
    if request.private_link:
        return _event_type_of_link(request)
    event_type = event_type_named(
        actor=request.actor,
        event_type_id=request.event_type_id,
        event_type_slug=request.event_type_slug,
        username=request.username,
        team_slug=request.team_slug,
    )
    if request.event_type_id is not None:
        booking_request_check(actor=request.actor, event_type=event_type, event_type_slug=request.event_type_slug)
    return event_type


def _event_type_of_link(request: BookingRequest) -> EventType:
    """The event type a private link opens, hidden or not, used once more; the event type the
    request names beside it must be that one."""
    if _private_link_use is None:
        raise ImproperlyConfigured("No private links: the private_links app provides them when Django starts.")
    event_type_id = _private_link_use(link_id=request.private_link)
    if request.event_type_id is not None and request.event_type_id != event_type_id:
        raise ValidationError({"hashedLink": f"This link is for another event type than {request.event_type_id}."})
    event_type = event_type_bookable(user=request.actor, event_type_id=event_type_id, through_private_link=True)
    booking_request_check(actor=request.actor, event_type=event_type, event_type_slug=request.event_type_slug)
    return event_type


def event_type_named(
    *,
    actor: User,
    event_type_id: int | None = None,
    event_type_slug: str | None = None,
    username: str | None = None,
    team_slug: str | None = None,
) -> EventType:
    """The event type a request names, among those `actor` may book, loaded as
    `event_type_bookable` loads it: by id (a username or team slug sent beside it must be its
    owner's or team's), or by slug with its owner's username or its team's slug. A read, shared by
    the booking and the slots of every version; `EventTypeNotFound` when there is none."""
    if event_type_id is not None:
        event_type = event_type_bookable(user=actor, event_type_id=event_type_id)
        if event_type is None:
            raise EventTypeNotFound(f"Event type {event_type_id} does not exist.", field_name="eventTypeId")
        if username and (event_type.owner is None or event_type.owner.username != username):
            raise ValidationError({"username": f"Event type {event_type.pk} is not {username}'s."})
        if team_slug and (event_type.team is None or event_type.team.slug != team_slug):
            raise ValidationError({"teamSlug": f"Event type {event_type.pk} is not team {team_slug}'s."})
        return event_type
    if not event_type_slug:
        raise ValidationError({"eventTypeId": "Send eventTypeId, or eventTypeSlug with username or teamSlug."})
    if bool(username) == bool(team_slug):
        raise ValidationError({"eventTypeSlug": "Send it with one of username and teamSlug."})
    found = event_type_by_slug(user=actor, slug=event_type_slug, username=username, team_slug=team_slug)
    event_type = event_type_bookable(user=actor, event_type_id=found.pk) if found is not None else None
    if event_type is None:
        owner = f"user {username}" if username else f"team {team_slug}"
        raise EventTypeNotFound(
            f"Event type {event_type_slug!r} of {owner} does not exist.", field_name="eventTypeSlug"
        )
    return event_type


def _series(
    request: BookingRequest, *, event_type: EventType, rescheduling: bool, fields: dict
) -> BookingResult | None:
    """A series, when the request asks for one (or, for a recurring event type, when the version
    books one by default); None for a single booking. A one-off event type refuses a series (400),
    except for a count of 1, which is the meeting itself."""
    count = request.recurring_count
    if count == 1 and not event_type.recurring_event:
        count = None  # One occurrence of a one-off meeting is the meeting (Pipedream sends 1 always).
    if request.all_recurring_dates is not None:
        booking = booking_occurrence_create(
            event_type=event_type,
            recurring_event_id=request.recurring_event_id,
            all_recurring_dates=request.all_recurring_dates,
            current_recurring_index=request.current_recurring_index,
            recurring_count=count,
            **fields,
        )
        return BookingResult([booking], series=True)
    if count is None and request.recurring_event_id is not None:
        raise ValidationError(
            {"recurringEventId": "Send it with recurringCount (a whole series) or allRecurringDates (one occurrence)."}
        )
    if count is None and event_type.recurring_event and not rescheduling:
        if not request.whole_series_by_default:
            limit = event_type.recurring_event["count"]
            detail = f"Event type {event_type.pk} recurs: send recurringCount (1 to {limit})."
            raise ValidationError({"recurringCount": detail})
        count = event_type.recurring_event["count"]
    if count is not None:
        bookings = booking_series_create(
            event_type=event_type, count=count, recurring_event_id=request.recurring_event_id or "", **fields
        )
        return BookingResult(bookings, series=True)
    return None
