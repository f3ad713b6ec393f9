"""The booking lifecycle: create, confirm or reject, reschedule, cancel — and the webhook events
each step emits, in the same transaction as the change (the outbox of `webhooks.events`).

No double booking: a booking must be a slot that GET /slots offers (checked here), and PostgreSQL's
exclusion constraint `booking_no_overlap_per_organizer` refuses overlapping ACCEPTED/PENDING
bookings of one organizer even when two requests pass that check at the same moment.
"""

import copy
import uuid
from datetime import datetime, timedelta

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone

from core.exceptions import Conflict
from core.models import App
from payments.models import Payment, PaymentOption
from scheduling.models import Attendee, Booking, BookingStatus, EventType
from scheduling.payloads import booking_payload, iso_utc
from scheduling.selectors.bookings import booking_for_update
from scheduling.selectors.slots import event_type_host, slot_is_offered
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
    just read, the uid is a fresh uuid4 (kept on a reschedule) under a unique index, and both check
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


def _not_offered(event_type: EventType, start: datetime) -> Conflict:
    return Conflict(f"{iso_utc(start)} is not an available slot of event type {event_type.pk}.")


@transaction.atomic
def booking_create(
    *,
    event_type: EventType,
    start: datetime,
    attendee_name: str,
    attendee_email: str,
    attendee_time_zone: str,
    end: datetime | None = None,
    title: str = "",
    description: str = "",
    location: str = "",
    metadata: dict | None = None,
    now: datetime | None = None,
) -> Booking:
    """Book `start` of `event_type` for one attendee; it must be a slot GET /slots offers (else 409).

    Pending when the event type requires confirmation. A paid event type also gets an unpaid
    Payment. Emits BOOKING_REQUESTED or BOOKING_CREATED, then BOOKING_PAYMENT_INITIATED when paid.
    """
    now = now or timezone.now()
    length = timedelta(minutes=event_type.length)
    if end is not None and end != start + length:
        raise ValidationError({"end": f"A booking of this event type lasts {event_type.length} minutes."})
    host = event_type_host(event_type)
    if host is None or not slot_is_offered(event_type=event_type, start=start, now=now):
        raise _not_offered(event_type, start)
    booking = Booking(
        organizer=host,
        event_type=event_type,
        title=title or f"{event_type.title} between {host.name or host.username} and {attendee_name}",
        description=description,
        start_time=start,
        end_time=start + length,
        status=BookingStatus.PENDING if event_type.requires_confirmation else BookingStatus.ACCEPTED,
        location=location,
        metadata=metadata or {},
    )
    _validate(booking)
    _save_without_overlap(booking)
    attendee = Attendee(booking=booking, name=attendee_name, email=attendee_email, time_zone=attendee_time_zone)
    attendee.full_clean(exclude=["booking"])  # saved just above: no query to check that it exists
    attendee.save()

    webhooks = booking_webhooks(booking)
    if booking.status == BookingStatus.PENDING:
        _emit(WebhookTrigger.BOOKING_REQUESTED, booking, webhooks, attendees=[attendee])
    else:
        _emit(WebhookTrigger.BOOKING_CREATED, booking, webhooks, attendees=[attendee])
        create_meeting_triggers(booking=booking, webhooks=webhooks)
    if event_type.price > 0:
        _payment_initiate(booking=booking, event_type=event_type, webhooks=webhooks, attendees=[attendee])
    return booking


def _payment_initiate(
    *, booking: Booking, event_type: EventType, webhooks: list[Webhook], attendees: list[Attendee]
) -> Payment:
    app, _ = App.objects.get_or_create(
        slug=PAYMENT_APP["slug"], defaults={"name": PAYMENT_APP["name"], "categories": ["payment"]}
    )
    payment = Payment(
        uid=uuid.uuid4().hex,
        app=app,
        booking=booking,
        amount=event_type.price,
        currency=event_type.currency,
        success=False,
        payment_option=PaymentOption.ON_BOOKING,
    )
    # As for the booking: the app and the booking were just written, the uid is a fresh uuid4, and
    # the check constraints hold by construction (the event type's currency, a PaymentOption, unpaid).
    payment.full_clean(exclude=["app", "booking"], validate_unique=False, validate_constraints=False)
    payment.save()
    _emit(WebhookTrigger.BOOKING_PAYMENT_INITIATED, booking, webhooks, attendees=attendees)
    return payment


@transaction.atomic
def booking_confirm(*, booking: Booking) -> Booking:
    """PENDING → ACCEPTED; emits BOOKING_CREATED (Cal.com's event for a confirmed booking)."""
    booking = booking_for_update(booking_id=booking.pk)
    if booking.status != BookingStatus.PENDING:
        raise Conflict(f"Booking {booking.pk} is {booking.status}; only a PENDING booking can be confirmed.")
    booking.status = BookingStatus.ACCEPTED
    booking.save(update_fields=["status", "updated_at"])
    webhooks = booking_webhooks(booking)
    _emit(WebhookTrigger.BOOKING_CREATED, booking, webhooks)
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
    cancel_meeting_triggers(booking=booking)
    return booking


@transaction.atomic
def booking_reschedule(
    *, booking: Booking, start: datetime, end: datetime | None = None, now: datetime | None = None
) -> Booking:
    """Move an ACCEPTED or PENDING booking to another offered slot, keeping its id and uid.

    The booking's own current time does not count as busy. Emits BOOKING_RESCHEDULED with the
    previous times; pending MEETING_STARTED/ENDED move with it.
    """
    now = now or timezone.now()
    booking = booking_for_update(booking_id=booking.pk)
    if booking.status not in ACTIVE_STATUSES:
        raise Conflict(f"Booking {booking.pk} is {booking.status} and cannot be rescheduled.")
    event_type = booking.event_type
    if event_type is None:
        raise Conflict(f"Booking {booking.pk} has no event type any more, so it has no slots to move to.")
    length = timedelta(minutes=event_type.length)
    if end is not None and end != start + length:
        raise ValidationError({"endTime": f"A booking of this event type lasts {event_type.length} minutes."})
    if not slot_is_offered(event_type=event_type, start=start, now=now, exclude_booking_id=booking.pk):
        raise _not_offered(event_type, start)
    previous = copy.copy(booking)
    booking.start_time = start
    booking.end_time = start + length
    _validate(booking)
    _save_without_overlap(booking, update_fields=["start_time", "end_time", "updated_at"])
    webhooks = booking_webhooks(booking)
    _emit(WebhookTrigger.BOOKING_RESCHEDULED, booking, webhooks, previous=previous)
    schedule_meeting_triggers(booking=booking, webhooks=webhooks)
    return booking


@transaction.atomic
def booking_cancel(*, booking: Booking, cancellation_reason: str = "") -> Booking:
    """ACCEPTED/PENDING → CANCELLED with an optional reason; emits BOOKING_CANCELLED and removes the
    pending meeting triggers. Cancelling twice is a 409."""
    booking = booking_for_update(booking_id=booking.pk)
    if booking.status not in ACTIVE_STATUSES:
        raise Conflict(f"Booking {booking.pk} is {booking.status} and cannot be cancelled.")
    booking.status = BookingStatus.CANCELLED
    booking.cancellation_reason = cancellation_reason
    booking.save(update_fields=["status", "cancellation_reason", "updated_at"])
    _emit(WebhookTrigger.BOOKING_CANCELLED, booking, booking_webhooks(booking))
    cancel_meeting_triggers(booking=booking)
    return booking
