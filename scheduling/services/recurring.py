"""Recurring series of bookings: book a whole series, or one occurrence of it at a time, and cancel
the rest of a series. Single bookings (and the reschedule or cancellation of one occurrence) are
`scheduling.services.bookings`'.

A series is one booking per occurrence, every one with the same `recurring_event_id` (Cal.com's
`recurringEventId`). Where the occurrences fall is `scheduling.recurrence`'s: the first start's
wall-clock time in the organiser's schedule zone, on dates that follow RFC 5545. Booking a series is
all or nothing: every occurrence must be a slot GET /slots offers, else nothing is written and the
409 names each occurrence that is not. A series takes its organiser's lock before reading, the one
every booking path takes (`scheduling.services.assignment.lock_people`), so a concurrent booking of
that person (a series, a single booking, a team booking they attend) waits, and the second sees
the first's bookings and names its conflicts; the exclusion constraint
`booking_no_overlap_per_organizer` still refuses any overlap, and the whole series rolls back.
"""

import uuid
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from accounts.models import User
from core.datetimes import iso_utc
from core.exceptions import Conflict
from core.fastpath.loaded import record_loaded
from notifications.outbox import series_booked, series_cancelled
from scheduling.models import Attendee, Booking, BookingStatus, EventType
from scheduling.payloads import booking_payload
from scheduling.recurrence import Recurrence, occurrence_starts
from scheduling.selectors.bookings import booking_for_update
from scheduling.selectors.limits import check_booking_limits
from scheduling.selectors.slot_sources import event_type_host, event_type_schedule
from scheduling.selectors.slots import offered_occurrences
from scheduling.services.assignment import lock_people
from scheduling.services.bookings import (
    ACTIVE_STATUSES,
    _save_without_overlap,
    _validate,
    booking_confirm,
    booking_decide,
    booking_reject,
)
from webhooks.models import WebhookTrigger
from webhooks.outbox import create_deliveries
from webhooks.scheduled import cancel_meeting_triggers, create_meeting_triggers
from webhooks.selectors import booking_webhooks, subscribed_to


def event_type_recurrence(event_type: EventType) -> Recurrence | None:
    return Recurrence.from_json(event_type.recurring_event) if event_type.recurring_event else None


def checked_count(event_type: EventType, count: int, field: str = "recurringCount") -> Recurrence:
    """The event type's recurrence, when `count` occurrences of it may be booked (1 to its count)."""
    recurrence = event_type_recurrence(event_type)
    if recurrence is None:
        raise ValidationError({field: f"Event type {event_type.pk} does not recur."})
    if not 1 <= count <= recurrence.count:
        raise ValidationError(
            {field: f"Event type {event_type.pk} recurs at most {recurrence.count} times; {count} were asked."}
        )
    return recurrence


def _describe(start: datetime, time_zone: str) -> str:
    local = start.astimezone(ZoneInfo(time_zone))
    return f"{iso_utc(start)} ({local:%Y-%m-%d %H:%M} {time_zone})"


def _check_offered(*, event_type: EventType, starts: list[datetime], indexes: list[int], time_zone: str, now) -> None:
    offered = offered_occurrences(event_type=event_type, starts=starts, now=now)
    taken = [index for index, is_offered in zip(indexes, offered, strict=True) if not is_offered]
    if taken:
        by_index = dict(zip(indexes, starts, strict=True))
        names = ", ".join(_describe(by_index[index], time_zone) for index in taken)
        raise Conflict(
            f"Not booked: {len(taken)} occurrence(s) of the series are not available slots of event type "
            f"{event_type.pk} (taken, or outside its schedule): {names}.",
            errors={
                f"occurrences[{index}]": [f"{_describe(by_index[index], time_zone)} is not an available slot."]
                for index in taken
            },
        )


def _new_booking(*, event_type: EventType, host, start: datetime, series_id: str, fields: dict) -> Booking:
    attendee_name = fields["attendee_name"]
    return Booking(
        organizer=host,
        event_type=event_type,
        title=fields.get("title") or f"{event_type.title} between {host.name or host.username} and {attendee_name}",
        description=fields.get("description", ""),
        start_time=start,
        end_time=start + timedelta(minutes=event_type.length),
        status=BookingStatus.PENDING if event_type.requires_confirmation else BookingStatus.ACCEPTED,
        location=fields.get("location", ""),
        metadata=fields.get("metadata") or {},
        responses=fields.get("responses") or {},
        custom_inputs=fields.get("custom_inputs") or {},
        sms_reminder_number=fields.get("sms_reminder_number", ""),
        recurring_event_id=series_id,
    )


def _new_attendees(fields: dict) -> list[Attendee]:
    time_zone = fields["attendee_time_zone"]
    return [
        Attendee(
            name=fields["attendee_name"],
            email=fields["attendee_email"],
            time_zone=time_zone,
            locale=fields.get("locale") or "en",
        ),
        *(Attendee(name="", email=guest, time_zone=time_zone, locale="en") for guest in fields.get("guests", ())),
    ]


def _write(
    *, bookings: list[Booking], fields: dict, starts_named: list[tuple[int, datetime]], time_zone: str
) -> list[list[Attendee]]:
    """Save the bookings and their attendees; an overlap that slipped past the slot check (a single
    booking racing the series) is a 409 naming the occurrence, and the transaction rolls back."""
    all_attendees = []
    for booking, (index, start) in zip(bookings, starts_named, strict=True):
        _validate(booking)
        try:
            _save_without_overlap(booking)
        except Conflict as error:
            raise Conflict(
                f"Not booked: occurrence {index} of the series, {_describe(start, time_zone)}, was just taken.",
                errors={f"occurrences[{index}]": [f"{_describe(start, time_zone)} was just taken."]},
            ) from error
        attendees = _new_attendees(fields)
        for attendee in attendees:
            attendee.full_clean(exclude=["booking", "name"] if not attendee.name else ["booking"])
            attendee.booking_id = booking.pk  # the key, not the object: the booking holds its attendees
        all_attendees.append(attendees)
    Attendee.objects.bulk_create([attendee for attendees in all_attendees for attendee in attendees])
    for booking, attendees in zip(bookings, all_attendees, strict=True):
        # What the create's answer shows, as written (no payment: a paid event type cannot recur).
        record_loaded(booking, "attendees", attendees)
        record_loaded(booking, "payments", [])
    return all_attendees


def _emit_created(bookings: list[Booking], attendees: list[list[Attendee]], recurring_event: dict) -> None:
    """BOOKING_CREATED (BOOKING_REQUESTED when it needs confirmation) for each occurrence, as Cal.com
    sends one per booking of a series, each carrying the series' `recurringEvent`."""
    webhooks = booking_webhooks(bookings[0])
    for booking, booking_attendees in zip(bookings, attendees, strict=True):
        pending = booking.status == BookingStatus.PENDING
        trigger = WebhookTrigger.BOOKING_REQUESTED if pending else WebhookTrigger.BOOKING_CREATED
        subscribed = subscribed_to(trigger, webhooks)
        if subscribed:
            payload = booking_payload(
                booking, trigger=trigger, attendees=booking_attendees, recurring_event=recurring_event
            )
            create_deliveries(webhooks=subscribed, trigger=trigger, payload=payload)
        if booking.status == BookingStatus.ACCEPTED:
            create_meeting_triggers(booking=booking, webhooks=webhooks)
    series_booked(bookings, attendees, recurring_event)  # one e-mail for the series (notifications)


def _host_and_zone(event_type: EventType, start: datetime):
    host, schedule = event_type_host(event_type), event_type_schedule(event_type)
    if host is None or schedule is None:
        raise Conflict(f"{iso_utc(start)} is not an available slot of event type {event_type.pk}.")
    return host, schedule.time_zone


def _check_length(event_type: EventType, start: datetime, end: datetime | None) -> None:
    if end is not None and end != start + timedelta(minutes=event_type.length):
        raise ValidationError({"end": f"A booking of this event type lasts {event_type.length} minutes."})


def _check_series_id_free(series_id: str) -> None:
    if Booking.objects.filter(recurring_event_id=series_id).exists():
        raise Conflict(f"recurringEventId {series_id} already names a series; leave it out to get a new one.")


@transaction.atomic
def booking_series_create(
    *,
    event_type: EventType,
    start: datetime,
    count: int,
    recurring_event_id: str = "",
    end: datetime | None = None,
    now: datetime | None = None,
    **fields,
) -> list[Booking]:
    """Book `count` occurrences of `event_type`'s recurrence from `start`, in one transaction: all of
    them or, when any is not an offered slot, none (409 naming each). `fields` are those of
    `booking_create` (the attendee, guests, title, ...), the same on every occurrence.

    Returns the bookings in order; each gets BOOKING_CREATED (or BOOKING_REQUESTED) with the series'
    `recurringEvent` (`count` = the occurrences booked), and MEETING_* triggers when accepted."""
    now = now or timezone.now()
    recurrence = checked_count(event_type, count)
    _check_length(event_type, start, end)
    host, time_zone = _host_and_zone(event_type, start)
    series_id = recurring_event_id or str(uuid.uuid4())
    lock_people([host.pk])
    _check_series_id_free(series_id)
    starts = occurrence_starts(start, time_zone, recurrence, count)
    indexes = list(range(count))
    _check_offered(event_type=event_type, starts=starts, indexes=indexes, time_zone=time_zone, now=now)
    check_booking_limits(event_type=event_type, starts=starts)
    bookings = [
        _new_booking(event_type=event_type, host=host, start=occurrence, series_id=series_id, fields=fields)
        for occurrence in starts
    ]
    attendees = _write(bookings=bookings, fields=fields, starts_named=list(enumerate(starts)), time_zone=time_zone)
    _emit_created(bookings, attendees, recurrence.as_json(count))
    return bookings


@transaction.atomic
def booking_occurrence_create(
    *,
    event_type: EventType,
    start: datetime,
    recurring_event_id: str,
    all_recurring_dates: list[datetime],
    current_recurring_index: int,
    recurring_count: int | None = None,
    end: datetime | None = None,
    now: datetime | None = None,
    **fields,
) -> Booking:
    """Cal.com's other way to book a series: one request per occurrence, each naming the series
    (`recurringEventId`), all its dates (`allRecurringDates`) and which one it books
    (`currentRecurringIndex`). The series is the one `booking_series_create` would book from the
    first date with as many occurrences as there are dates, so `start` must be this service's
    occurrence of that index (400 naming the time it expects otherwise). The occurrence must be an
    offered slot (else 409) and the series id must not belong to another event type (409)."""
    now = now or timezone.now()
    count = len(all_recurring_dates)
    recurrence = checked_count(event_type, count, field="allRecurringDates")
    if recurring_count is not None and recurring_count != count:
        detail = f"allRecurringDates has {count} dates; recurringCount says {recurring_count}."
        raise ValidationError({"recurringCount": detail})
    if current_recurring_index >= count:
        detail = f"allRecurringDates has {count} dates (indexes 0 to {count - 1})."
        raise ValidationError({"currentRecurringIndex": detail})
    _check_length(event_type, start, end)
    host, time_zone = _host_and_zone(event_type, start)
    expected = occurrence_starts(all_recurring_dates[0], time_zone, recurrence, count)[current_recurring_index]
    if start != expected:
        raise ValidationError(
            {
                "start": f"Occurrence {current_recurring_index} of this series is {_describe(expected, time_zone)}: "
                "the same wall-clock time as the first, in the organiser's time zone."
            }
        )
    lock_people([host.pk])
    series = Booking.objects.filter(recurring_event_id=recurring_event_id)
    if series.exclude(event_type=event_type).exists() or series.exclude(organizer=host).exists():
        raise Conflict(f"recurringEventId {recurring_event_id} names a series of another event type.")
    _check_offered(
        event_type=event_type, starts=[start], indexes=[current_recurring_index], time_zone=time_zone, now=now
    )
    check_booking_limits(event_type=event_type, starts=[start])
    booking = _new_booking(event_type=event_type, host=host, start=start, series_id=recurring_event_id, fields=fields)
    attendees = _write(
        bookings=[booking], fields=fields, starts_named=[(current_recurring_index, start)], time_zone=time_zone
    )
    _emit_created([booking], attendees, recurrence.as_json(count))
    return booking


def series_bookings_to_cancel(booking: Booking, *, subsequent_only: bool, now: datetime):
    """The other active occurrences a series cancellation takes with `booking`: with
    `subsequent_only`, those starting after it (v2's `cancelSubsequentBookings`); otherwise every
    one not started yet (Cal.com's `allRemainingBookings`)."""
    others = Booking.objects.filter(
        recurring_event_id=booking.recurring_event_id,
        organizer_id=booking.organizer_id,
        status__in=ACTIVE_STATUSES,
    ).exclude(pk=booking.pk)
    boundary = booking.start_time if subsequent_only else now
    others = others.filter(start_time__gt=boundary) if subsequent_only else others.filter(start_time__gte=boundary)
    return others.select_for_update(of=("self",)).order_by("start_time")


@transaction.atomic
def booking_cancel_series(
    *,
    booking: Booking,
    subsequent_only: bool,
    cancellation_reason: str = "",
    cancelled_by: str = "",
    now: datetime | None = None,
) -> list[Booking]:
    """Cancel `booking` and, when it belongs to a series, the series' other active occurrences that
    have not started (`allRemainingBookings`) or that come after it (`cancelSubsequentBookings`).

    As Cal.com: one BOOKING_CANCELLED, for `booking`, carrying the event type's `recurringEvent`;
    the pending MEETING_* triggers of every cancelled occurrence go. Returns the cancelled bookings,
    `booking` first. A booking that is not ACCEPTED or PENDING is a 409 and changes nothing."""
    now = now or timezone.now()
    booking = booking_for_update(booking_id=booking.pk)
    if booking.status not in ACTIVE_STATUSES:
        raise Conflict(f"Booking {booking.pk} is {booking.status} and cannot be cancelled.")
    others = []
    if booking.recurring_event_id:
        others = list(series_bookings_to_cancel(booking, subsequent_only=subsequent_only, now=now))
    cancelled = [booking, *others]
    for each in cancelled:
        each.status = BookingStatus.CANCELLED
        each.cancellation_reason = cancellation_reason
        each.cancelled_by = cancelled_by
        _validate(each)
        each.save(update_fields=["status", "cancellation_reason", "cancelled_by", "updated_at"])
        cancel_meeting_triggers(booking=each)
    subscribed = subscribed_to(WebhookTrigger.BOOKING_CANCELLED, booking_webhooks(booking))
    if subscribed:
        recurrence = event_type_recurrence(booking.event_type) if booking.event_type is not None else None
        recurring_event = recurrence.as_json() if recurrence is not None and booking.recurring_event_id else None
        payload = booking_payload(booking, trigger=WebhookTrigger.BOOKING_CANCELLED, recurring_event=recurring_event)
        create_deliveries(webhooks=subscribed, trigger=WebhookTrigger.BOOKING_CANCELLED, payload=payload)
    series_cancelled(cancelled)  # one cancellation e-mail (notifications)
    return cancelled


@transaction.atomic
def booking_decide_series(*, booking: Booking, actor: User, confirmed: bool, recurring_event_id: str) -> Booking:
    """Cal.com's confirmation with `recurringEventId` (v1's POST /bookings/{id}/confirm handed it to
    the same handler as its web app): the decision applies to every PENDING occurrence of the
    series, each with its own BOOKING_CREATED or BOOKING_REJECTED, in one transaction.

    The booking named is decided as by `booking_decide` (who may, 403; not PENDING, 409); the id
    must be its own series (400), so that one booking cannot decide another series. Returns the
    booking named."""
    if recurring_event_id != booking.recurring_event_id:
        raise ValidationError(
            {"recurringEventId": f"Booking {booking.pk} is not an occurrence of the series {recurring_event_id!r}."}
        )
    decided = booking_decide(booking=booking, actor=actor, confirmed=confirmed)
    others = Booking.objects.filter(
        recurring_event_id=recurring_event_id, organizer_id=booking.organizer_id, status=BookingStatus.PENDING
    ).exclude(pk=booking.pk)
    decide = booking_confirm if confirmed else booking_reject
    for other in others.order_by("start_time", "id"):
        decide(booking=other)
    return decided
