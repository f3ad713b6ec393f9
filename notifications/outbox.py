"""How a booking's changes become e-mails: rows in the outbox, written in the transaction that made
the change (they commit or roll back with it), then handed to the worker after commit.

Scheduling calls `booking_changed` next to each webhook event it emits (the trigger names the
change), `series_booked` / `series_cancelled` for a recurring series (one message for the series)
and `booking_paid` when a paid booking's money arrives. This app does not import scheduling: it
reads the booking it is handed. Who gets what is in docs/notifications.md.

After commit a change does not publish a broker message of its own: the first change in a window
(KICK_WINDOW_MILLISECONDS, claimed in the sending bound's Redis round trip) schedules one pass of
the worker for when the window closes, which sends every message not yet tried, the later changes'
too. With the cache away, each change enqueues its own messages as before.
"""

import functools
import hashlib
import logging
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import NamedTuple

from celery import current_app
from django.db import transaction
from django.utils import timezone

from core.datetimes import iso_utc
from core.fastpath.inserts import CompiledInsert
from core.ical import ical_uid, series_ical_uid
from notifications import switches
from notifications.conf import mail_domain, notification_setting
from notifications.limits import release_kick, start_bound
from notifications.models import (
    EmailMessage,
    EmailStatus,
    EventTypeNotifications,
    Invitation,
    Kind,
    Reminder,
    ReminderTarget,
    Role,
)

logger = logging.getLogger(__name__)

SEND_TASK = "notifications.send"
SEND_PENDING_TASK = "notifications.send_pending"
REQUEST, CANCEL = "REQUEST", "CANCEL"
ACCEPTED, PENDING = "ACCEPTED", "PENDING"


@dataclass(frozen=True)
class Recipient:
    role: str
    email: str
    name: str
    locale: str
    time_zone: str


# --- Entry points ---------------------------------------------------------------------------------


def booking_changed(trigger: str, booking, *, previous=None, attendees=None) -> None:
    """The mails of one booking change, named by its webhook trigger. `previous`: the booking before
    a reschedule (the same row for an in-place move); `attendees`: the booking's, when the caller
    holds them. BOOKING_NO_SHOW_UPDATED and the payment triggers send nothing (a paid booking's
    confirmation waits for `booking_paid`)."""
    handler = _HANDLERS.get(trigger)
    if handler is None or not notification_setting("ENABLED"):
        return
    mail_settings = _event_type_settings(booking)
    handler(booking, previous=previous, attendees=attendees, mail_settings=mail_settings)


def booking_paid(booking) -> None:
    """A paid booking's confirmations, held back at booking time, once the money has arrived."""
    if not notification_setting("ENABLED") or booking.status != ACCEPTED:
        return
    mail_settings = _event_type_settings(booking)
    invitation = _invitation_of(booking)
    attendees = _attendees(booking, None)
    context = _context(booking, attendees, invitation, REQUEST)
    recipients = _everyone(booking, attendees, mail_settings)
    _queue(booking, Kind.SCHEDULED, context, recipients, _change_key(invitation, "paid"))


def series_booked(bookings: list, attendees: list[list], recurring_event: dict | None) -> None:
    """One message per recipient for the occurrences of a series booked together, with one
    invitation for the series (a recurring event). Occurrences booked one request at a time (each
    naming the series) send it with the first one only: the message id is the series'."""
    first = bookings[0]
    if not notification_setting("ENABLED"):
        return
    mail_settings = _event_type_settings(first)
    series_uid = series_ical_uid(first.recurring_event_id)
    Invitation.objects.bulk_create(
        [Invitation(booking_id=b.pk, ical_uid=series_uid, sequence=0, recurrence_id=b.start_time) for b in bookings]
    )
    kind = Kind.REQUESTED if first.status == PENDING else Kind.SCHEDULED
    invitation = Invitation(booking_id=first.pk, ical_uid=series_uid, sequence=0)
    context = _context(first, attendees[0], invitation, REQUEST)
    context["occurrences"] = [_occurrence(b) for b in bookings]
    context["recurrence"] = recurring_event
    key = f"series:{series_uid}:{kind}"
    _queue(first, kind, context, _everyone(first, attendees[0], mail_settings), key, deduplicate=True)
    for booking in bookings:
        if booking.status == ACCEPTED:
            _plan_reminders(booking, mail_settings)


def series_cancelled(cancelled: list) -> None:
    """One cancellation for the occurrences of a series cancelled together (a booking of no series:
    its own cancellation)."""
    first = cancelled[0]
    if not first.recurring_event_id:
        booking_changed("BOOKING_CANCELLED", first)
        return
    if not notification_setting("ENABLED"):
        return
    mail_settings = _event_type_settings(first)
    invitations = [_bump(booking) for booking in cancelled]
    Reminder.objects.filter(booking_id__in=[b.pk for b in cancelled], sent_at__isnull=True).delete()
    attendees = _attendees(first, None)
    context = _context(first, attendees, invitations[0], CANCEL)
    context["occurrences"] = [
        {
            **_occurrence(booking),
            "sequence": invitation.sequence,
            # The occurrence as the series first placed it, even if it was moved since.
            "recurrenceId": iso_utc(invitation.recurrence_id) if invitation.recurrence_id else None,
        }
        for booking, invitation in zip(cancelled, invitations, strict=True)
    ]
    recipients = _everyone(first, attendees, mail_settings)
    _queue(first, Kind.CANCELLED, context, recipients, _change_key(invitations[0], "series-cancel"))


# --- What each change sends -----------------------------------------------------------------------


def _on_created(booking, *, previous, attendees, mail_settings) -> None:
    if attendees is None:
        # A request the host accepted: the booking service passes the attendees it has just written
        # when it creates a booking, none when it confirms one.
        attendees = _attendees(booking, None)
        invitation = _bump(booking)
        context = _context(booking, attendees, invitation, REQUEST)
        key, deduplicate = _series_decision(booking, context, invitation, "confirmed")
        attendee_side, host_side = _attendee_side(attendees, mail_settings), _host_side(booking, mail_settings)
        _queue(booking, Kind.CONFIRMED, context, attendee_side, key, deduplicate=deduplicate)
        _queue(booking, Kind.SCHEDULED, context, host_side, key, deduplicate=deduplicate)
        _plan_reminders(booking, mail_settings)
        return
    invitation = _new_invitation(booking, previous)
    _plan_reminders(booking, mail_settings)
    attendees = _attendees(booking, attendees)
    event_type = getattr(booking, "event_type", None)
    if event_type is not None and event_type.price > 0 and previous is None:
        return  # confirmed once paid (`booking_paid`)
    context = _context(booking, attendees, invitation, REQUEST)
    _queue(
        booking,
        Kind.SCHEDULED,
        context,
        _everyone(booking, attendees, mail_settings),
        _change_key(invitation, "scheduled"),
    )


def _on_requested(booking, *, previous, attendees, mail_settings) -> None:
    attendees = _attendees(booking, attendees)
    invitation = _new_invitation(booking, previous)
    if previous is not None:
        Reminder.objects.filter(booking_id=previous.pk, sent_at__isnull=True).delete()
    context = _context(booking, attendees, invitation, REQUEST, previous=previous)
    _queue(
        booking,
        Kind.REQUESTED,
        context,
        _everyone(booking, attendees, mail_settings),
        _change_key(invitation, "requested"),
    )


def _on_rescheduled(booking, *, previous, attendees, mail_settings) -> None:
    attendees = _attendees(booking, attendees)
    if previous is not None and previous.pk != booking.pk:
        invitation = _new_invitation(booking, previous)
        Reminder.objects.filter(booking_id=previous.pk, sent_at__isnull=True).delete()
    else:
        invitation = _bump(booking)
    Reminder.objects.filter(booking_id=booking.pk, sent_at__isnull=True).delete()
    _plan_reminders(booking, mail_settings)
    context = _context(booking, attendees, invitation, REQUEST, previous=previous)
    key = _change_key(invitation, "rescheduled")
    _queue(booking, Kind.RESCHEDULED, context, _everyone(booking, attendees, mail_settings), key)


def _on_cancelled(booking, *, previous, attendees, mail_settings) -> None:
    attendees = _attendees(booking, attendees)
    invitation = _bump(booking)
    Reminder.objects.filter(booking_id=booking.pk, sent_at__isnull=True).delete()
    context = _context(booking, attendees, invitation, CANCEL)
    _queue(
        booking,
        Kind.CANCELLED,
        context,
        _everyone(booking, attendees, mail_settings),
        _change_key(invitation, "cancelled"),
    )


def _on_rejected(booking, *, previous, attendees, mail_settings) -> None:
    attendees = _attendees(booking, attendees)
    invitation = _bump(booking)
    context = _context(booking, attendees, invitation, CANCEL)
    key, deduplicate = _series_decision(booking, context, invitation, "rejected")
    recipients = _attendee_side(attendees, mail_settings)
    _queue(booking, Kind.REJECTED, context, recipients, key, deduplicate=deduplicate)


def _series_decision(booking, context: dict, invitation: Invitation, change: str) -> tuple[str, bool]:
    """A series' request is decided for all its occurrences at once, one booking after the other:
    the first one's message speaks for the series (its occurrences, the recurrence) and the others'
    find it already queued. A booking of no series: its own message."""
    if not booking.recurring_event_id:
        return _change_key(invitation, change), False
    series = list(
        type(booking)
        .objects.filter(recurring_event_id=booking.recurring_event_id, organizer_id=booking.organizer_id)
        .exclude(status__in=("CANCELLED",) if change == "rejected" else ("CANCELLED", "REJECTED"))
        .order_by("start_time")
    )
    context["occurrences"] = [{**_occurrence(each), "sequence": invitation.sequence} for each in series]
    event_type = getattr(booking, "event_type", None)
    recurrence = event_type.recurring_event if event_type is not None else None
    context["recurrence"] = {**recurrence, "count": len(series)} if recurrence else None
    return f"series-{change}:{invitation.ical_uid}:{invitation.sequence}", True


_HANDLERS = {
    "BOOKING_CREATED": _on_created,
    "BOOKING_REQUESTED": _on_requested,
    "BOOKING_RESCHEDULED": _on_rescheduled,
    "BOOKING_CANCELLED": _on_cancelled,
    "BOOKING_REJECTED": _on_rejected,
}


# --- Calendar identity ----------------------------------------------------------------------------


class _BornWith(NamedTuple):
    """The calendar identity a plain new booking was born with, as `_default_invitation`'s unsaved
    `Invitation` holds it, for a change that only reads it (building a model instance was a third of
    the Python that a booking's mail runs, profiled in a booking request)."""

    booking_id: int
    ical_uid: str
    sequence: int
    recurrence_id: None = None


def _new_invitation(booking, previous) -> Invitation | _BornWith:
    """A new booking's calendar event: a reschedule's keeps its predecessor's UID (one event in the
    attendee's calendar, moved) with the next SEQUENCE; a series' occurrence has the series' UID.
    A plain new booking's is the meeting's UID (`core.ical.ical_uid`, the one its calendar event,
    payloads, answers and feed carry) and `ical_sequence`, and is stored only once it changes."""
    if previous is not None:
        before = _invitation_of(previous)
        invitation = Invitation(
            booking_id=booking.pk,
            ical_uid=before.ical_uid,
            sequence=max(booking.ical_sequence, before.sequence + 1),
            recurrence_id=before.recurrence_id,
        )
    elif booking.recurring_event_id:
        invitation = Invitation(
            booking_id=booking.pk,
            ical_uid=series_ical_uid(booking.recurring_event_id),
            sequence=booking.ical_sequence,
            recurrence_id=booking.start_time,
        )
    else:
        return _BornWith(booking_id=booking.pk, ical_uid=ical_uid(booking), sequence=booking.ical_sequence)
    invitation.save(force_insert=True)
    return invitation


def _default_invitation(booking) -> Invitation:
    return Invitation(booking_id=booking.pk, ical_uid=ical_uid(booking), sequence=booking.ical_sequence)


def _invitation_of(booking) -> Invitation:
    """The booking's stored calendar identity, or (unsaved) the one it was born with."""
    return Invitation.objects.filter(booking_id=booking.pk).first() or _default_invitation(booking)


def _bump(booking, invitation: Invitation | None = None) -> Invitation:
    """The next SEQUENCE of the booking's event (the booking row is locked by the change)."""
    invitation = invitation or _invitation_of(booking)
    stored = invitation._state.adding is False
    invitation.sequence = max(invitation.sequence + 1, booking.ical_sequence)
    if stored:
        invitation.save(update_fields=["sequence"])
    else:
        invitation.save(force_insert=True)
    return invitation


def _change_key(invitation: Invitation, change: str) -> str:
    return f"{change}:{invitation.ical_uid}:{invitation.booking_id}:{invitation.sequence}"


# --- Recipients and context -----------------------------------------------------------------------


def _event_type_settings(booking) -> EventTypeNotifications | None:
    """The booking's event type's mail settings: those read with the event type when it was (a new
    booking's, `event_type_bookable`), else one query."""
    if booking.event_type_id is None:
        return None
    event_type = booking._state.fields_cache.get("event_type")
    if event_type is not None and event_type.pk == booking.event_type_id:
        settings = type(event_type).notification_settings.related
        if settings.is_cached(event_type):
            return settings.get_cached_value(event_type)
    return EventTypeNotifications.objects.filter(event_type_id=booking.event_type_id).first()


def _attendees(booking, attendees) -> list:
    return list(attendees) if attendees is not None else list(booking.attendees.all())


def _attendee_side(attendees, mail_settings) -> list[Recipient]:
    """The booker and the guests, unless the request said `noEmail` or the event type turned their
    mail off."""
    if not switches.current().attendee_mail or (mail_settings and mail_settings.disable_emails_to_attendees):
        return []
    return [
        Recipient(
            role=Role.ATTENDEE if index == 0 else Role.GUEST,
            email=attendee.email,
            name=attendee.name,
            locale=attendee.locale or "en",
            time_zone=attendee.time_zone or "UTC",
        )
        for index, attendee in enumerate(attendees)
    ]


def _organizer(booking) -> Recipient:
    organizer = booking.organizer
    return Recipient(
        role=Role.ORGANIZER,
        email=organizer.email,
        name=organizer.name or organizer.username,
        locale=organizer.locale or "en",
        time_zone=organizer.time_zone or "UTC",
    )


def _host_side(booking, mail_settings) -> list[Recipient]:
    if mail_settings is not None and mail_settings.disable_emails_to_hosts:
        return []
    return [_organizer(booking)]


def _everyone(booking, attendees, mail_settings) -> list[Recipient]:
    return [*_attendee_side(attendees, mail_settings), *_host_side(booking, mail_settings)]


def _occurrence(booking) -> dict:
    return {"start": iso_utc(booking.start_time), "end": iso_utc(booking.end_time), "bookingId": booking.pk}


def _context(booking, attendees, invitation: Invitation, method: str, previous=None) -> dict:
    """What the message says, as of this change (rendered later by the worker)."""
    organizer = _organizer(booking)
    event_type = getattr(booking, "event_type", None)
    return {
        "bookingId": booking.pk,
        "bookingUid": booking.uid,
        "title": booking.title,
        "eventTypeTitle": event_type.title if event_type is not None else "",
        "description": booking.description,
        "location": booking.location,
        "start": iso_utc(booking.start_time),
        "end": iso_utc(booking.end_time),
        "previousStart": iso_utc(previous.start_time) if previous is not None else None,
        "previousEnd": iso_utc(previous.end_time) if previous is not None else None,
        "reason": booking.cancellation_reason,
        "status": booking.status,
        "organizer": {"name": organizer.name, "email": organizer.email, "timeZone": organizer.time_zone},
        "attendees": [{"name": attendee.name, "email": attendee.email} for attendee in attendees],
        "ical": {
            "uid": invitation.ical_uid,
            "sequence": invitation.sequence,
            "method": method,
            "recurrenceId": iso_utc(invitation.recurrence_id) if invitation.recurrence_id else None,
        },
    }


def message_id_for(change_key: str, recipient: str, domain: str | None = None) -> str:
    digest = hashlib.sha256(f"{change_key}\n{recipient.lower()}".encode()).hexdigest()[:40]
    return f"<{digest}@{domain or mail_domain()}>"


# --- Queueing -------------------------------------------------------------------------------------


def _queue(
    booking,
    kind: str,
    context: dict,
    recipients: list[Recipient],
    change_key: str,
    *,
    bounded: bool = True,
    deduplicate: bool = False,
) -> list[int]:
    """Write the messages of one change and send them after commit. `deduplicate`: the change may
    have been queued already (a series booked one occurrence per request), so rows whose
    Message-ID exists are skipped instead of failing the booking."""
    if not recipients:
        return []
    # The bound's round trip is sent first and read after the INSERT, which runs meanwhile; a
    # refusal then rolls the INSERT back with the rest of the change (outside a transaction, it is
    # read first: nothing may be written).
    bound = start_bound(booking.organizer_id, _counted(recipients), kick=True) if bounded else None
    if bound is not None and not transaction.get_connection().in_atomic_block:
        bound = _Answered(bound.result())
    try:
        ids = _write(booking, kind, context, recipients, change_key, deduplicate)
    except BaseException:
        if bound is not None:
            bound.discard()
        raise
    # True: this change schedules the pass; False: a pass is scheduled; None: enqueue these messages.
    kick = bound.result() if bound is not None else None
    if kick:
        transaction.on_commit(enqueue_pass)
    elif kick is None and ids:
        transaction.on_commit(lambda: enqueue_send(ids))
    return ids


def _counted(recipients: list[Recipient]) -> int:
    """What the bound counts: the messages to attendees and guests, not the organizer's."""
    return sum(1 for recipient in recipients if recipient.role != Role.ORGANIZER)


class _Answered:
    """A bound read already."""

    def __init__(self, answer):
        self.answer = answer

    def result(self):
        return self.answer

    def discard(self) -> None:
        pass


def _write(booking, kind: str, context: dict, recipients: list[Recipient], change_key: str, deduplicate: bool):
    recipients = _unique(recipients)
    domain = mail_domain()
    each = {
        "role": [recipient.role for recipient in recipients],
        "recipient": [recipient.email for recipient in recipients],
        "locale": [recipient.locale for recipient in recipients],
        "time_zone": [recipient.time_zone for recipient in recipients],
        "context": [{**context, "recipientName": recipient.name} for recipient in recipients],
        "message_id": [message_id_for(change_key, recipient.email, domain) for recipient in recipients],
    }
    every = {
        "booking_id": booking.pk,
        "organizer_id": booking.organizer_id,
        "kind": kind,
        "next_attempt_at": timezone.now() + timedelta(seconds=notification_setting("FIRST_ATTEMPT_GRACE_SECONDS")),
    }
    if not deduplicate:
        return _outbox_insert().insert(len(recipients), each=each, every=every)
    rows = [
        EmailMessage(**every, **{name: values[index] for name, values in each.items()})
        for index in range(len(recipients))
    ]
    EmailMessage.objects.bulk_create(rows, ignore_conflicts=True)
    # With ignore_conflicts PostgreSQL returns no ids: read back the rows still unsent.
    return list(
        EmailMessage.objects.filter(
            message_id__in=each["message_id"], status=EmailStatus.PENDING, attempts=0
        ).values_list("pk", flat=True)
    )


def _unique(recipients: list[Recipient]) -> list[Recipient]:
    seen, unique = set(), []
    for recipient in recipients:
        address = recipient.email.lower()
        if address not in seen:
            seen.add(address)
            unique.append(recipient)
    return unique


@functools.cache
def _outbox_insert() -> CompiledInsert:
    """The outbox's INSERT of a change's messages (`core.fastpath.inserts`): built once, one
    statement for any number of recipients."""
    return CompiledInsert(EmailMessage, each=["role", "recipient", "locale", "time_zone", "context", "message_id"])


def enqueue_send(message_ids: list[int]) -> None:
    """After commit: one broker message for the change's messages. A broker that is away loses
    nothing: the sweeper sends them once FIRST_ATTEMPT_GRACE_SECONDS have passed."""
    try:
        current_app.tasks[SEND_TASK].apply_async((message_ids,))
    except Exception:  # noqa: BLE001 - the sweeper will send them
        logger.warning("Could not enqueue e-mails %s; the sweeper will send them", message_ids)


def enqueue_pass() -> None:
    """After commit, by the change that claimed the kick: one broker message for the pass that sends
    every message not yet tried, run when the window has closed (so that it finds the window's
    other changes' messages too). A broker that is away loses nothing: the sweeper sends them."""
    try:
        current_app.tasks[SEND_PENDING_TASK].apply_async(
            countdown=notification_setting("KICK_WINDOW_MILLISECONDS") / 1000
        )
    except Exception:  # noqa: BLE001 - the sweeper will send them
        logger.warning("Could not enqueue the e-mail pass; the sweeper will send the messages")
        release_kick()


# --- Reminders ------------------------------------------------------------------------------------


def _plan_reminders(booking, mail_settings: EventTypeNotifications | None, now: datetime | None = None) -> None:
    """The booking's reminders from its event type's rules; a reminder whose time has passed when
    the booking is made is not planned."""
    if mail_settings is None or not mail_settings.reminders:
        return
    now = now or timezone.now()
    rows = []
    for rule in mail_settings.reminders:
        minutes = int(rule["minutesBefore"])
        send_at = booking.start_time - timedelta(minutes=minutes)
        if send_at > now:
            rows.append(
                Reminder(booking_id=booking.pk, minutes_before=minutes, to=rule.get("to", "attendee"), send_at=send_at)
            )
    Reminder.objects.bulk_create(rows, ignore_conflicts=True)


def queue_reminder(reminder: Reminder, booking) -> None:
    """The messages of one due reminder (the worker's sweep calls this)."""
    mail_settings = _event_type_settings(booking)
    attendees = _attendees(booking, None)
    invitation = _invitation_of(booking)
    context = _context(booking, attendees, invitation, REQUEST)
    context["minutesBefore"] = reminder.minutes_before
    recipients = []
    if reminder.to in (ReminderTarget.ATTENDEE, ReminderTarget.BOTH):
        recipients += _attendee_side(attendees, mail_settings)
    if reminder.to in (ReminderTarget.ORGANIZER, ReminderTarget.BOTH):
        recipients += _host_side(booking, mail_settings)
    key = f"reminder:{reminder.pk}:{invitation.ical_uid}:{invitation.sequence}"
    _queue(booking, Kind.REMINDER, context, recipients, key, bounded=False)
