"""The booking lifecycle: create, confirm or reject, reschedule, cancel — and the webhook events
each step emits, in the same transaction as the change (the outbox of `webhooks.outbox`).

No double booking: a booking must be a slot that GET /slots offers (checked here, after taking the
lock of each person it makes busy, `scheduling.services.assignment.lock_people`, so that two
bookings of one person take turns), and PostgreSQL's exclusion constraint
`booking_no_overlap_per_organizer` refuses overlapping ACCEPTED/PENDING bookings of one organizer
whatever path wrote them.
"""

import copy
import uuid
from collections.abc import Iterable
from datetime import datetime, timedelta

from django.core.exceptions import PermissionDenied, ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone

from accounts.models import User
from calendars.selectors import refuse_if_calendar_busy
from calendars.writes import booking_changed as calendar_booking_changed
from core.datetimes import iso_utc
from core.exceptions import ApplicationError, Conflict
from core.fastpath.loaded import record_loaded
from core.ical import ical_uid
from core.models import App
from notifications.outbox import booking_changed
from payments.models import Payment, PaymentOption
from scheduling.models import Attendee, Booking, BookingStatus, EventType
from scheduling.payloads import booking_payload
from scheduling.selectors.bookings import booking_for_update, booking_is_managed_by
from scheduling.selectors.limits import check_booking_limits
from scheduling.selectors.slots import slot_is_offered
from scheduling.services.assignment import (
    booking_host,
    booking_host_stays_free,
    booking_team_hosts_add,
    rescheduled_host,
)
from webhooks.models import Webhook, WebhookTrigger
from webhooks.outbox import create_deliveries
from webhooks.scheduled import cancel_meeting_triggers, create_meeting_triggers, schedule_meeting_triggers
from webhooks.selectors import booking_webhooks, subscribed_to

OVERLAP_CONSTRAINT = "booking_no_overlap_per_organizer"
EXCLUSION_VIOLATION = "23P01"
ACTIVE_STATUSES = (BookingStatus.ACCEPTED, BookingStatus.PENDING)
PAYMENT_APP = {"slug": "stripe", "name": "Stripe"}


def _is_overlap(error: IntegrityError) -> bool:
    return getattr(error.__cause__, "sqlstate", None) == EXCLUSION_VIOLATION or OVERLAP_CONSTRAINT in str(error)


def _validate(booking: Booking) -> None:
    """Check the fields (the title a booking is given can be longer than its column, for one), not
    the rest of `full_clean()`, which costs a query each: the organizer and the event type were
    just read, the uid is a fresh uuid4 (kept by an in-place move) under a unique index, and both check
    constraints hold by construction (end = start + the event type's positive length; a
    BookingStatus). PostgreSQL enforces all of them on write."""
    booking.full_clean(
        exclude=["organizer", "event_type", "rescheduled_from"], validate_unique=False, validate_constraints=False
    )


def _save_without_overlap(booking: Booking, **save_kwargs) -> None:
    # No savepoint: the callers are atomic and raise at once, so their own transaction rolls back.
    try:
        booking.save(**save_kwargs)
    except IntegrityError as error:
        if _is_overlap(error):
            raise Conflict("The organizer already has a booking at this time.") from error
        raise


def _emit(
    trigger: str,
    booking: Booking,
    webhooks: list[Webhook],
    *,
    previous: Booking | None = None,
    attendees: list[Attendee] | None = None,
    payment: Payment | None = None,
) -> None:
    """The outbox rows of `trigger` for the webhooks among `webhooks` (the booking's, from
    `booking_webhooks`) subscribed to it; the payload (Cal.com's for that trigger, see
    docs/webhook-payloads.md) is built only if one is. `previous`: the booking before a reschedule;
    `payment`: the payment of a payment trigger (else the booking's latest is read)."""
    subscribed = subscribed_to(trigger, webhooks)
    if subscribed:
        payload = booking_payload(booking, trigger=trigger, previous=previous, attendees=attendees, payment=payment)
        create_deliveries(webhooks=subscribed, trigger=trigger, payload=payload)
    booking_changed(trigger, booking, previous=previous, attendees=attendees)  # its e-mails (notifications)


def _not_offered(event_type: EventType, start: datetime) -> Conflict:
    return Conflict(f"{iso_utc(start)} is not an available slot of event type {event_type.pk}.")


def _checked_start(*, event_type: EventType, start: datetime, end: datetime | None, end_field: str) -> timedelta:
    length = timedelta(minutes=event_type.length)
    if end is not None and end != start + length:
        raise ValidationError({end_field: f"A booking of this event type lasts {event_type.length} minutes."})
    return length


def _previous_for_reschedule(booking: Booking) -> Booking:
    """`booking` locked, when it may be rescheduled: ACCEPTED or PENDING, with an event type."""
    previous = booking_for_update(booking_id=booking.pk)
    if previous.status not in ACTIVE_STATUSES:
        raise Conflict(f"Booking {previous.pk} is {previous.status} and cannot be rescheduled.")
    if previous.event_type is None:
        raise Conflict(f"Booking {previous.pk} has no event type any more, so it has no slots to move to.")
    return previous


def _book(
    *,
    booking: Booking,
    attendees: list[Attendee],
    previous: Booking | None,
    now: datetime,
) -> Booking:
    """Check that `booking` (unsaved; its start, end, event type and organizer set) is an offered
    slot, then write it with its attendees and emit its events. With `previous` (locked, ACCEPTED or
    PENDING), this is Cal.com's reschedule: `previous` is cancelled with `rescheduled=True` first, in
    this transaction, so that the new time may overlap it under the no-overlap constraint."""
    event_type = booking.event_type
    excluded = previous.pk if previous is not None else None
    offered = slot_is_offered(
        event_type=event_type, start=booking.start_time, now=now, exclude_booking_id=excluded, lock=True
    )
    if not offered:
        raise _not_offered(event_type, booking.start_time)
    check_booking_limits(event_type=event_type, starts=[booking.start_time], exclude_booking_id=excluded)
    _validate(booking)
    for attendee in attendees:
        # Guests have no name in Cal.com either; the booking is saved just below.
        attendee.full_clean(exclude=["booking", "name"] if not attendee.name else ["booking"])
    if previous is not None:
        previous.status = BookingStatus.CANCELLED
        previous.rescheduled = True
        previous.save(update_fields=["status", "rescheduled", "updated_at"])
        cancel_meeting_triggers(booking=previous)
    _save_without_overlap(booking)
    booking_team_hosts_add(booking=booking)
    for attendee in attendees:
        attendee.booking_id = booking.pk  # the key, not the object: the booking will hold its attendees
    Attendee.objects.bulk_create(attendees)

    webhooks = booking_webhooks(booking)
    if booking.status == BookingStatus.PENDING:
        _emit(WebhookTrigger.BOOKING_REQUESTED, booking, webhooks, previous=previous, attendees=attendees)
    else:
        trigger = WebhookTrigger.BOOKING_CREATED if previous is None else WebhookTrigger.BOOKING_RESCHEDULED
        _emit(trigger, booking, webhooks, previous=previous, attendees=attendees)
        create_meeting_triggers(booking=booking, webhooks=webhooks)
    calendar_booking_changed(booking)
    # A reschedule does not charge again: the payment stays with the booking it was made for.
    payments = []
    if event_type.price > 0 and previous is None:
        payment = _payment_initiate(booking=booking, event_type=event_type, webhooks=webhooks, attendees=attendees)
        payments.append(payment)
    # Returned as written, holding what its answer shows: the create answers with it unread.
    record_loaded(booking, "attendees", attendees)
    record_loaded(booking, "payments", payments)
    return booking


def booking_request_check(
    *, actor: User, event_type: EventType, user_id: int | None = None, event_type_slug: str | None = None
) -> None:
    """Cal.com v1's `userId` and `eventTypeSlug` on a new booking, checked before anything is written.

    - `user_id`: v1 let a system admin book as another user (a non-admin's was ignored). Here a
      booking is always made as the caller, so the caller's own id is accepted, another user's is
      refused rather than silently dropped: 403 for a non-admin (as for every `userId` naming
      someone else), 400 for an admin (a request the service does not carry out).
    - `event_type_slug`: Cal.com's booker sends the booked event type's slug beside its id; a slug
      that is not that event type's means the client meant another one (400)."""
    if user_id is not None and user_id != actor.pk:
        if not actor.is_system_admin:
            raise PermissionDenied("Only system administrators may name another user's userId.")
        raise ValidationError(
            {"userId": "Bookings are made as the caller; booking on behalf of another user is not supported."}
        )
    if event_type_slug is not None and event_type_slug != event_type.slug:
        raise ValidationError(
            {"eventTypeSlug": f"Event type {event_type.pk} has the slug {event_type.slug!r}, not {event_type_slug!r}."}
        )


@transaction.atomic
def booking_create(
    *,
    event_type: EventType,
    start: datetime,
    attendee_name: str,
    attendee_email: str,
    attendee_time_zone: str,
    locale: str = "",
    guests: list[str] | tuple[str, ...] = (),
    end: datetime | None = None,
    title: str = "",
    description: str = "",
    location: str = "",
    metadata: dict | None = None,
    responses: dict | None = None,
    custom_inputs: dict | None = None,
    sms_reminder_number: str = "",
    reschedule: Booking | None = None,
    reschedule_reason: str = "",
    now: datetime | None = None,
) -> Booking:
    """Book `start` of `event_type` for one attendee and their `guests` (extra attendees, in the
    attendee's time zone, as Cal.com adds them); it must be a slot GET /slots offers (else 409).

    Pending when the event type requires confirmation. A paid event type also gets an unpaid
    Payment. Emits BOOKING_REQUESTED or BOOKING_CREATED, then BOOKING_PAYMENT_INITIATED when paid.

    With `reschedule` (Cal.com v1's `rescheduleUid`), the new booking replaces that one, as in
    `booking_reschedule_as_new`: same event type, its own time counts as free, metadata merged
    over the old booking's, and BOOKING_RESCHEDULED instead of BOOKING_CREATED.
    """
    now = now or timezone.now()
    length = _checked_start(event_type=event_type, start=start, end=end, end_field="end")
    previous = None
    if reschedule is not None:
        previous = _previous_for_reschedule(reschedule)
        if previous.event_type_id != event_type.pk:
            detail = f"Booking {previous.uid} is of event type {previous.event_type_id}, not {event_type.pk}."
            raise ValidationError({"eventTypeId": detail})
    host = booking_host(event_type=event_type, start=start, now=now, previous=previous)
    if host is None:
        raise _not_offered(event_type, start)
    if previous is not None:
        status = BookingStatus.PENDING if previous.status == BookingStatus.PENDING else BookingStatus.ACCEPTED
    else:
        status = BookingStatus.PENDING if event_type.requires_confirmation else BookingStatus.ACCEPTED
    booking = Booking(
        organizer=host,
        event_type=event_type,
        title=title or f"{event_type.title} between {host.name or host.username} and {attendee_name}",
        description=description,
        start_time=start,
        end_time=start + length,
        status=status,
        location=location,
        metadata={**(previous.metadata if previous is not None else {}), **(metadata or {})},
        responses=responses or {},
        custom_inputs=custom_inputs or {},
        sms_reminder_number=sms_reminder_number,
    )
    locales = {}
    if previous is not None:
        _mark_as_successor(booking, previous, reschedule_reason)
        locales = _keep_what_the_body_leaves_out(booking, previous)
    locale = locale or locales.get(attendee_email.lower(), "en")
    attendees = [
        Attendee(name=attendee_name, email=attendee_email, time_zone=attendee_time_zone, locale=locale),
        *(
            Attendee(name="", email=guest, time_zone=attendee_time_zone, locale=locales.get(guest.lower(), "en"))
            for guest in guests
        ),
    ]
    return _book(booking=booking, attendees=attendees, previous=previous, now=now)


def _keep_what_the_body_leaves_out(booking: Booking, previous: Booking) -> dict[str, str]:
    """A reschedule through a new booking keeps the old one's location, description and answers
    where the body does not give them (Cal.com's handleNewBooking: `evt.location || original
    location`); returns the old attendees' languages by email, kept unless the body names one."""
    booking.location = booking.location or previous.location
    booking.description = booking.description or previous.description
    booking.responses = {**previous.responses, **booking.responses}
    return {attendee.email.lower(): attendee.locale for attendee in previous.attendees.all()}


def _mark_as_successor(booking: Booking, previous: Booking, reschedule_reason: str) -> None:
    # Cal.com's fields of a booking made by rescheduling: `fromReschedule` (here the foreign key),
    # the meeting's iCalUID and its next SEQUENCE, and the reason kept as `cancellationReason`.
    booking.rescheduled_from = previous
    booking.ical_uid = ical_uid(previous)
    booking.ical_sequence = previous.ical_sequence + 1
    booking.cancellation_reason = reschedule_reason
    # A rescheduled occurrence stays in its recurring series.
    booking.recurring_event_id = previous.recurring_event_id


@transaction.atomic
def booking_reschedule_as_new(
    *,
    booking: Booking,
    start: datetime,
    end: datetime | None = None,
    reschedule_reason: str = "",
    now: datetime | None = None,
) -> Booking:
    """Cal.com's reschedule: a new booking (new id and uid) at `start` with everything of `booking`
    (attendees, title, answers, metadata, location), `rescheduled_from` pointing to it; `booking`
    becomes CANCELLED with `rescheduled=True`, in the same transaction and before the new row is
    written, so the new time may overlap the old one. Someone else's booking there is a 409 and
    changes nothing.

    Emits BOOKING_RESCHEDULED (BOOKING_REQUESTED if `booking` was still PENDING) for the new booking
    with the old one as `previous`, and no BOOKING_CANCELLED, as Cal.com does; the pending
    MEETING_STARTED/ENDED triggers move to the new booking.
    """
    now = now or timezone.now()
    previous = _previous_for_reschedule(booking)
    event_type = previous.event_type
    length = _checked_start(event_type=event_type, start=start, end=end, end_field="end")
    new_booking = Booking(
        organizer=rescheduled_host(previous=previous, start=start, now=now),
        event_type=event_type,
        title=previous.title,
        description=previous.description,
        start_time=start,
        end_time=start + length,
        status=previous.status,
        location=previous.location,
        metadata=previous.metadata,
        responses=previous.responses,
        custom_inputs=previous.custom_inputs,
        sms_reminder_number=previous.sms_reminder_number,
    )
    _mark_as_successor(new_booking, previous, reschedule_reason)
    attendees = [
        Attendee(name=attendee.name, email=attendee.email, time_zone=attendee.time_zone, locale=attendee.locale)
        for attendee in previous.attendees.order_by("id")
    ]
    return _book(booking=new_booking, attendees=attendees, previous=previous, now=now)


def _payment_initiate(
    *, booking: Booking, event_type: EventType, webhooks: list[Webhook], attendees: list[Attendee]
) -> Payment:
    app, _ = App.objects.get_or_create(
        slug=PAYMENT_APP["slug"], defaults={"name": PAYMENT_APP["name"], "categories": ["payment"]}
    )
    payment = Payment(
        uid=uuid.uuid4().hex,
        app=app,
        booking_id=booking.pk,
        organizer_id=booking.organizer_id,
        amount=event_type.price,
        currency=event_type.currency,
        success=False,
        payment_option=PaymentOption.ON_BOOKING,
    )
    # As for the booking: the app and the booking were just written, the uid is a fresh uuid4, and
    # the check constraints hold by construction (the event type's currency, a PaymentOption, unpaid).
    payment.full_clean(exclude=["app", "booking"], validate_unique=False, validate_constraints=False)
    payment.save()
    _emit(WebhookTrigger.BOOKING_PAYMENT_INITIATED, booking, webhooks, attendees=attendees, payment=payment)
    return payment


@transaction.atomic
def booking_confirm(*, booking: Booking) -> Booking:
    """PENDING → ACCEPTED; emits BOOKING_CREATED (Cal.com's event for a confirmed booking)."""
    booking = booking_for_update(booking_id=booking.pk)
    if booking.status != BookingStatus.PENDING:
        raise Conflict(f"Booking {booking.pk} is {booking.status}; only a PENDING booking can be confirmed.")
    refuse_if_calendar_busy(booking)
    booking.status = BookingStatus.ACCEPTED
    booking.save(update_fields=["status", "updated_at"])
    webhooks = booking_webhooks(booking)
    _emit(WebhookTrigger.BOOKING_CREATED, booking, webhooks)
    calendar_booking_changed(booking)
    schedule_meeting_triggers(booking=booking, webhooks=webhooks)
    return booking


@transaction.atomic
def booking_reject(*, booking: Booking) -> Booking:
    """PENDING → REJECTED; emits BOOKING_REJECTED. The time becomes free again."""
    booking = booking_for_update(booking_id=booking.pk)
    if booking.status != BookingStatus.PENDING:
        raise Conflict(f"Booking {booking.pk} is {booking.status}; only a PENDING booking can be rejected.")
    booking.status = BookingStatus.REJECTED
    booking.save(update_fields=["status", "updated_at"])
    _emit(WebhookTrigger.BOOKING_REJECTED, booking, booking_webhooks(booking))
    calendar_booking_changed(booking, removed=True)
    cancel_meeting_triggers(booking=booking)
    return booking


@transaction.atomic
def booking_reschedule(
    *, booking: Booking, start: datetime, end: datetime | None = None, now: datetime | None = None
) -> Booking:
    """Move an ACCEPTED or PENDING booking to another offered slot in place, keeping its id and uid,
    as Cal.com v1's PATCH edited a booking (PATCH /bookings/{id}); Cal.com's own reschedule, which
    makes a new booking, is `booking_reschedule_as_new`.

    The booking's own current time does not count as busy. Emits BOOKING_RESCHEDULED with the
    previous times; pending MEETING_STARTED/ENDED move with it; the iCalendar sequence goes up.
    """
    now = now or timezone.now()
    booking = _previous_for_reschedule(booking)
    event_type = booking.event_type
    length = _checked_start(event_type=event_type, start=start, end=end, end_field="endTime")
    if not slot_is_offered(event_type=event_type, start=start, now=now, exclude_booking_id=booking.pk, lock=True):
        raise _not_offered(event_type, start)
    check_booking_limits(event_type=event_type, starts=[start], exclude_booking_id=booking.pk)
    booking_host_stays_free(booking=booking, start=start, now=now)
    previous = copy.copy(booking)
    booking.start_time = start
    booking.end_time = start + length
    booking.ical_sequence += 1
    _validate(booking)
    _save_without_overlap(booking, update_fields=["start_time", "end_time", "ical_sequence", "updated_at"])
    webhooks = booking_webhooks(booking)
    _emit(WebhookTrigger.BOOKING_RESCHEDULED, booking, webhooks, previous=previous)
    calendar_booking_changed(booking)
    schedule_meeting_triggers(booking=booking, webhooks=webhooks)
    return booking


@transaction.atomic
def booking_cancel(*, booking: Booking, cancellation_reason: str = "", cancelled_by: str = "") -> Booking:
    """ACCEPTED/PENDING → CANCELLED with an optional reason and who cancelled (an email); emits
    BOOKING_CANCELLED and removes the pending meeting triggers. Cancelling twice is a 409."""
    booking = booking_for_update(booking_id=booking.pk)
    if booking.status not in ACTIVE_STATUSES:
        raise Conflict(f"Booking {booking.pk} is {booking.status} and cannot be cancelled.")
    booking.status = BookingStatus.CANCELLED
    booking.cancellation_reason = cancellation_reason
    booking.cancelled_by = cancelled_by
    _validate(booking)
    booking.save(update_fields=["status", "cancellation_reason", "cancelled_by", "updated_at"])
    _emit(WebhookTrigger.BOOKING_CANCELLED, booking, booking_webhooks(booking))
    calendar_booking_changed(booking, removed=True)
    cancel_meeting_triggers(booking=booking)
    return booking


@transaction.atomic
def booking_edit(
    *,
    booking: Booking,
    actor: User,
    title: str | None = None,
    description: str | None = None,
    start: datetime | None = None,
    end: datetime | None = None,
    status: str | None = None,
    organizer_id: int | None = None,
    event_type_id: int | None = None,
    cancelled_by: str = "",
    now: datetime | None = None,
) -> Booking:
    """Cal.com v1's PATCH /bookings/{id} (`schemaBookingEditBodyParams`) on a booking `actor` may
    see. v1 wrote the fields straight into the row; here each one goes through its own rule:

    - `title`, `description`: changed in place; Cal.com emits nothing for them (no webhook, no
      e-mail), but the event in the organizer's destination calendar is written again.
    - `start`/`end`: a move in time when they differ from the booking's (v1 clients send the current
      times back with a title change): `booking_reschedule`, so the slot rules, the no-overlap
      constraint and BOOKING_RESCHEDULED all apply.
    - `status`: ACCEPTED confirms, REJECTED rejects (`booking_decide`'s rule on who may), CANCELLED
      cancels as DELETE does (with `cancelled_by`, default the actor's email).
    - `organizer_id` (v1's `userId`): only system admins may send it (403 otherwise, as in v1), and
      only as the current organizer: handing a booking to someone else would skip their
      availability, webhooks and meeting triggers (400).
    - `event_type_id`: only the current one (400): the slots, length and price come from it.
    """
    if organizer_id is not None:
        if not actor.is_system_admin:
            raise PermissionDenied("Only system administrators may send the organizer's userId.")
        if organizer_id != booking.organizer_id:
            raise ValidationError(
                {"userId": "The organizer of a booking cannot change: cancel it and book for the other user."}
            )
    if event_type_id is not None and event_type_id != booking.event_type_id:
        raise ValidationError(
            {"eventTypeId": "The event type of a booking cannot change: cancel it and book the other one."}
        )
    booking = booking_for_update(booking_id=booking.pk)
    changed = {}
    if title is not None and title != booking.title:
        changed["title"] = title
    if description is not None and description != booking.description:
        changed["description"] = description
    if changed:
        for field, value in changed.items():
            setattr(booking, field, value)
        _validate(booking)
        # The meeting's calendar event shows them: it is written again, its SEQUENCE raised. The
        # booking's `ical_sequence` is the counter the calendar write and the next invitation
        # both start from, so it rises too.
        booking.ical_sequence += 1
        booking.save(update_fields=[*changed, "ical_sequence", "updated_at"])
        calendar_booking_changed(booking)
    moved = start is not None and (start != booking.start_time or (end is not None and end != booking.end_time))
    if moved:
        booking = booking_reschedule(booking=booking, start=start, end=end, now=now)
    if status == BookingStatus.ACCEPTED or status == BookingStatus.REJECTED:
        booking = booking_decide(booking=booking, actor=actor, confirmed=status == BookingStatus.ACCEPTED)
    elif status == BookingStatus.CANCELLED:
        booking = booking_cancel(booking=booking, cancelled_by=cancelled_by or actor.email)
    return booking


# What a booking's calendar event shows besides its times and people.
EVENT_TEXT_FIELDS = frozenset({"title", "description", "location"})


@transaction.atomic
def booking_details_save(*, booking: Booking, changed_fields: Iterable[str]) -> Booking:
    """Save the descriptive fields staff corrected in the back office (title, description,
    location, metadata). The meeting's event in the organizer's destination calendar is written
    again when it shows one of them; like v1's PATCH of a title, no webhook and no e-mail."""
    _validate(booking)
    shown = bool(EVENT_TEXT_FIELDS & set(changed_fields))
    if shown:  # the counter of the calendar write and the next invitation, as for v1's edit
        booking.ical_sequence += 1
    booking.save()
    if shown:
        calendar_booking_changed(booking)
    return booking


@transaction.atomic
def booking_decide(*, booking: Booking, actor: User, confirmed: bool) -> Booking:
    """Confirm (`confirmed`) or reject a PENDING booking, as Cal.com v1's POST
    /bookings/{id}/confirm: BOOKING_CREATED or BOOKING_REJECTED. The decision belongs to the host's
    side (`booking_manages`: the organizer, the event type's owner, the team's admins and owners,
    system admins); an attendee who may see the booking may not accept their own request (403)."""
    if not actor.is_system_admin and not booking_is_managed_by(booking_id=booking.pk, user=actor):
        raise PermissionDenied("Only the organizer, the event type's owner or team admins may confirm or reject.")
    return booking_confirm(booking=booking) if confirmed else booking_reject(booking=booking)


# A booking's attendees: the booker and at most 50 guests when it is made (v1's limit), and as
# many again added later.
MAX_ATTENDEES = 101


@transaction.atomic
def booking_mark_absent(
    *,
    booking: Booking,
    actor: User,
    host: bool | None = None,
    attendees: list[tuple[str, bool]] | None = None,
    now: datetime | None = None,
) -> Booking:
    """Record who did not show up, as Cal.com's mark-absent: `host` sets (or clears) the
    organizer's no-show flag, `attendees` each named attendee's (`(email, absent)`, matched in any
    letter case). The host's side decides (`booking_manages`, as for confirming), only for an
    accepted booking whose meeting has started; an e-mail that is not one of the booking's
    attendees is a 400 and changes nothing.

    Emits BOOKING_NO_SHOW_UPDATED with the attendees sent, when attendees were sent (Cal.com does
    not announce the host's flag)."""
    now = now or timezone.now()
    if host is None and not attendees:
        raise ApplicationError("Nothing to mark: send host, attendees or both.")
    if not actor.is_system_admin and not booking_is_managed_by(booking_id=booking.pk, user=actor):
        raise PermissionDenied("Only the organizer, the event type's owner or team admins may mark absences.")
    booking = booking_for_update(booking_id=booking.pk)
    if booking.status != BookingStatus.ACCEPTED:
        raise Conflict(f"Booking {booking.pk} is {booking.status}; only an accepted booking has a meeting to miss.")
    if now < booking.start_time:
        raise ApplicationError(f"Absences can be marked once the meeting has started ({iso_utc(booking.start_time)}).")
    marked = _attendees_by_email(booking, attendees or [])
    for attendee, absent in marked:
        attendee.no_show = absent
    Attendee.objects.bulk_update([attendee for attendee, _ in marked], ["no_show"])
    if host is not None:
        booking.no_show_host = host
    booking.save(update_fields=["no_show_host", "updated_at"])
    if marked:
        _emit(
            WebhookTrigger.BOOKING_NO_SHOW_UPDATED, booking, booking_webhooks(booking), attendees=[a for a, _ in marked]
        )
    return booking


def _attendees_by_email(booking: Booking, changes: list[tuple[str, bool]]) -> list[tuple[Attendee, bool]]:
    by_email = {attendee.email.lower(): attendee for attendee in booking.attendees.all()}
    errors, seen, marked = {}, set(), []
    for index, (email, absent) in enumerate(changes):
        key = email.lower()
        if key in seen:
            errors[f"attendees[{index}].email"] = f"{email} is listed twice."
        elif key not in by_email:
            errors[f"attendees[{index}].email"] = f"{email} is not an attendee of this booking."
        else:
            marked.append((by_email[key], absent))
        seen.add(key)
    if errors:
        raise ValidationError(errors)
    return marked


@transaction.atomic
def booking_attendee_add(*, booking: Booking, name: str, email: str, time_zone: str, locale: str = "en") -> Attendee:
    """Add a named attendee to an accepted or pending booking, as Cal.com v2's add-attendee. Whoever
    may see the booking may add one (its host's side, or one of its attendees: `booking_list`'s
    visibility, applied by the caller). An address already among its attendees is a 409; a booking
    has at most MAX_ATTENDEES. No webhook: Cal.com sends none for it."""
    booking = booking_for_update(booking_id=booking.pk)
    if booking.status not in ACTIVE_STATUSES:
        raise Conflict(f"Booking {booking.pk} is {booking.status}; attendees can join an accepted or pending booking.")
    emails = [attendee.email.lower() for attendee in booking.attendees.all()]
    if email.lower() in emails:
        raise Conflict(f"{email} is already an attendee of this booking.")
    if len(emails) >= MAX_ATTENDEES:
        raise Conflict(f"A booking has at most {MAX_ATTENDEES} attendees.")
    attendee = Attendee(booking=booking, name=name, email=email, time_zone=time_zone, locale=locale or "en")
    # A guest may come without a name (it is then listed among the booking's `guests`).
    attendee.full_clean(exclude=["booking"] if name else ["booking", "name"])
    attendee.save()
    booking.save(update_fields=["updated_at"])
    return attendee
