"""The webhook payload of a booking, field for field as Cal.com's webhooks (version 2021-10-20) send it.

Booking triggers carry the calendar event Cal.com builds for a booking (`bookerUrl`, `type`,
`organizer`, `attendees`, `responses`, …), the event type's details (`eventTitle`, `price`, …) and
the trigger's own extras (`cancellationReason` on a cancellation, `rescheduleUid` on a reschedule,
`paymentId` on payment triggers). MEETING_STARTED / MEETING_ENDED carry the booking record instead,
as Cal.com's scheduled triggers do. A key Cal.com leaves out when it does not apply is left out
here too, not sent as null. docs/webhook-payloads.md has every key, an example per trigger and
where our values differ from Cal.com's.

Reads `booking.organizer`, `booking.event_type` and `booking.attendees.all()` (pass `attendees`
when you have them); select/prefetch them when building many payloads. Payment triggers read the
booking's latest payment unless it is given.
"""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

from django.conf import settings

from accounts.models import Team, User
from core.datetimes import iso_utc, iso_utc_ms
from core.ical import ical_uid
from scheduling.models import BookingHost

BOOKING_CREATED = "BOOKING_CREATED"
BOOKING_REQUESTED = "BOOKING_REQUESTED"
BOOKING_RESCHEDULED = "BOOKING_RESCHEDULED"
BOOKING_CANCELLED = "BOOKING_CANCELLED"
BOOKING_REJECTED = "BOOKING_REJECTED"
BOOKING_PAYMENT_INITIATED = "BOOKING_PAYMENT_INITIATED"
BOOKING_PAID = "BOOKING_PAID"
BOOKING_NO_SHOW_UPDATED = "BOOKING_NO_SHOW_UPDATED"
MEETING_STARTED = "MEETING_STARTED"
MEETING_ENDED = "MEETING_ENDED"
PING = "PING"

MEETING_TRIGGERS = (MEETING_STARTED, MEETING_ENDED)
PAYMENT_TRIGGERS = (BOOKING_PAYMENT_INITIATED, BOOKING_PAID)

# Cal.com's builder states the status per trigger, whatever the booking's own status.
TRIGGER_STATUS = {
    BOOKING_CREATED: "ACCEPTED",
    BOOKING_REQUESTED: "PENDING",
    BOOKING_RESCHEDULED: "ACCEPTED",
    BOOKING_CANCELLED: "CANCELLED",
    BOOKING_REJECTED: "REJECTED",
    BOOKING_PAYMENT_INITIATED: "ACCEPTED",
    BOOKING_PAID: "ACCEPTED",
    PING: "ACCEPTED",
}

# Keys of every booking trigger's payload (PING, the test send, has the same).
BOOKING_KEYS = (
    "bookerUrl",
    "type",
    "title",
    "description",
    "additionalNotes",
    "customInputs",
    "startTime",
    "endTime",
    "organizer",
    "responses",
    "userFieldsResponses",
    "attendees",
    "location",
    "destinationCalendar",
    "hideCalendarNotes",
    "hideCalendarEventDetails",
    "hideOrganizerEmail",
    "requiresConfirmation",
    "eventTypeId",
    "seatsShowAttendees",
    "seatsPerTimeSlot",
    "seatsShowAvailabilityCount",
    "schedulingType",
    "customReplyToEmail",
    "disableCancelling",
    "disableRescheduling",
    "iCalUID",
    "iCalSequence",
    "hashedLink",
    "uid",
    "bookingId",
    "eventTitle",
    "eventDescription",
    "price",
    "currency",
    "length",
    "status",
    "metadata",
)
RESCHEDULE_KEYS = ("rescheduleId", "rescheduleUid", "rescheduleStartTime", "rescheduleEndTime", "rescheduledBy")
# Keys sent only when they apply (left out otherwise), by trigger.
OPTIONAL_KEYS = {
    # `recurringEvent` on the cancellation of the rest of a series (Cal.com sends one event for it).
    BOOKING_CANCELLED: ("cancellationReason", "cancelledBy", "requestReschedule", "recurringEvent"),
    BOOKING_RESCHEDULED: RESCHEDULE_KEYS,
    # A rescheduled booking that needs confirmation is announced as requested, with the same
    # reschedule keys (Cal.com builds both from one set of booking data). `recurringEvent`: an
    # occurrence of a recurring series, on its creation.
    BOOKING_REQUESTED: (*RESCHEDULE_KEYS, "recurringEvent"),
    BOOKING_CREATED: ("recurringEvent",),
    BOOKING_PAYMENT_INITIATED: ("paymentId",),
    BOOKING_PAID: ("paymentId",),
}
# Every booking trigger may carry `smsReminderNumber` (when the booker gave one).
ANY_TRIGGER_OPTIONAL_KEYS = ("smsReminderNumber", "team")

# BOOKING_NO_SHOW_UPDATED: Cal.com sends what changed, not the calendar event.
NO_SHOW_KEYS = ("message", "attendees", "bookingUid", "bookingId")

MEETING_KEYS = (
    "triggerEvent",
    "id",
    "uid",
    "userId",
    "userPrimaryEmail",
    "eventTypeId",
    "title",
    "description",
    "customInputs",
    "responses",
    "userFieldsResponses",
    "startTime",
    "endTime",
    "location",
    "createdAt",
    "updatedAt",
    "status",
    "paid",
    "destinationCalendarId",
    "cancellationReason",
    "rejectionReason",
    "rescheduled",
    "fromReschedule",
    "recurringEventId",
    "smsReminderNumber",
    "metadata",
    "isRecorded",
    "iCalUID",
    "iCalSequence",
    "cancelledBy",
    "rescheduledBy",
    "user",
    "attendees",
)

# Cal.com's booking-form system fields, with the label key it sends for each; `responses` lists
# them whether or not the booker filled them in (a field left empty has a label and no value).
SYSTEM_FIELD_LABELS = {
    "name": "your_name",
    "email": "email_address",
    "location": "location",
    "title": "what_is_this_meeting_about",
    "notes": "additional_notes",
    "guests": "additional_guests",
    "rescheduleReason": "reason_for_reschedule",
    "attendeePhoneNumber": "phone_number",
    "smsReminderNumber": "number_to_receive_sms_reminders",
}
ALWAYS_LISTED_FIELDS = ("name", "email", "location", "notes", "guests", "rescheduleReason")

TIME_FORMATS = {12: "h:mma", 24: "HH:mm"}


def utc_offset(time_zone: str, at: datetime) -> int:
    """Minutes east of UTC of `time_zone` at `at` (DST included), as Cal.com's `utcOffset`."""
    try:
        offset = at.astimezone(ZoneInfo(time_zone)).utcoffset()
    except (ValueError, KeyError):  # not an IANA zone: Cal.com's dayjs treats it as UTC
        return 0
    return int(offset.total_seconds() // 60) if offset is not None else 0


def booker_url() -> str:
    return getattr(settings, "BOOKER_URL", "http://localhost:8000").rstrip("/")


def payload_keys(trigger: str, *, optional: bool = True) -> tuple[str, ...]:
    """The keys `trigger`'s payload can carry (with `optional`: also those sent only when they apply)."""
    if trigger in MEETING_TRIGGERS:
        return MEETING_KEYS
    if trigger == BOOKING_NO_SHOW_UPDATED:
        return NO_SHOW_KEYS
    if not optional:
        return BOOKING_KEYS
    return BOOKING_KEYS + ANY_TRIGGER_OPTIONAL_KEYS + OPTIONAL_KEYS.get(trigger, ())


def _first_booker(attendees):
    return attendees[0] if attendees else None


def calendar_responses(booking, attendees) -> tuple[dict, dict]:
    """`responses` and `userFieldsResponses` as Cal.com sends them: `{field: {label, value}}`.

    `booking.responses` holds the booking form's answers as stored (`{"name": "Ada", ...}`). Name
    and email fall back to the first attendee (bookings made without a form), notes to the
    booking's description; a system field nobody answered is listed with its label only.
    """
    stored = booking.responses if isinstance(booking.responses, dict) else {}
    booker = _first_booker(attendees)
    fallbacks = {}
    if booker is not None:
        fallbacks = {"name": booker.name, "email": booker.email}
    if booking.description:
        fallbacks["notes"] = booking.description
    responses: dict = {}
    user_fields: dict = {}
    for name in ALWAYS_LISTED_FIELDS:
        entry = {"label": SYSTEM_FIELD_LABELS[name]}
        if name in stored:
            entry["value"] = stored[name]
        elif name in fallbacks:
            entry["value"] = fallbacks[name]
        responses[name] = entry
    for name, value in stored.items():
        if name in responses:
            continue
        entry = {"label": SYSTEM_FIELD_LABELS.get(name, name), "value": value}
        responses[name] = entry
        if name not in SYSTEM_FIELD_LABELS:
            user_fields[name] = entry
    return responses, user_fields


def _split_name(booking, attendee) -> tuple[str, str]:
    """Cal.com fills firstName/lastName (else `""`) from the booking form's name answer when that is
    split into first and last name; it is the booker's, so a guest's stay empty."""
    stored = booking.responses if isinstance(booking.responses, dict) else {}
    name, booker_email = stored.get("name"), stored.get("email")
    if isinstance(name, dict) and booker_email in (None, attendee.email):
        return str(name.get("firstName") or ""), str(name.get("lastName") or "")
    return "", ""


def organizer_payload(organizer, start: datetime) -> dict:
    return {
        "id": organizer.pk,
        "name": organizer.name or "Nameless",
        "email": organizer.email,
        "username": organizer.username,
        "timeZone": organizer.time_zone,
        "language": {"locale": organizer.locale or "en"},
        "timeFormat": TIME_FORMATS.get(organizer.time_format, "h:mma"),
        "utcOffset": utc_offset(organizer.time_zone, start),
    }


def attendee_payload(booking, attendee, start: datetime) -> dict:
    first_name, last_name = _split_name(booking, attendee)
    return {
        "email": attendee.email,
        "name": attendee.name,
        "firstName": first_name,
        "lastName": last_name,
        "timeZone": attendee.time_zone,
        "language": {"locale": attendee.locale or "en"},
        "utcOffset": utc_offset(attendee.time_zone, start),
    }


def team_payload(booking, event_type, start: datetime) -> dict:
    """Cal.com's `team` of a team booking: the team, and the hosts attending beside the organizer
    (each shaped as the organizer is)."""
    members = User.objects.filter(pk__in=BookingHost.objects.filter(booking=booking).values("user_id")).order_by("pk")
    team = Team.objects.only("name").get(pk=event_type.team_id)
    return {
        "name": team.name,
        "members": [organizer_payload(member, start) for member in members],
        "id": event_type.team_id,
    }


def booking_metadata(booking) -> dict:
    """The booking's metadata; `videoCallUrl` is the location when that is a link, as Cal.com adds it."""
    metadata = dict(booking.metadata) if isinstance(booking.metadata, dict) else {}
    location = booking.location or ""
    if location.startswith(("https://", "http://")):
        metadata.setdefault("videoCallUrl", location)
    return metadata


def booking_payload(
    booking,
    *,
    trigger: str = BOOKING_CREATED,
    previous=None,
    attendees=None,
    payment=None,
    recurring_event: dict | None = None,
) -> dict:
    """The payload of `trigger` for `booking`.

    `recurring_event`: Cal.com's `recurringEvent` (`{freq, count, interval}`), sent on the creation
    of each occurrence of a series and on the cancellation of the rest of one, as Cal.com does.

    `previous`: the booking as it was before a reschedule; without it, a booking created by
    rescheduling another (`rescheduled_from`) reports that one. `attendees`: the booking's, when
    the caller has them (it has just written them), to save their query. `payment`: the payment of
    a payment trigger, when the caller has it.
    """
    if trigger in MEETING_TRIGGERS:
        return meeting_payload(booking, trigger=trigger, attendees=attendees)
    if trigger == BOOKING_NO_SHOW_UPDATED:
        return no_show_payload(booking, attendees=booking.attendees.all() if attendees is None else attendees)
    organizer = booking.organizer
    event_type = booking.event_type
    attendees = list(booking.attendees.all()) if attendees is None else list(attendees)
    start = booking.start_time
    responses, user_fields = calendar_responses(booking, attendees)
    payload = {
        "bookerUrl": booker_url(),
        "type": event_type.slug if event_type else "",
        "title": booking.title,
        # Cal.com: the event type's description, else the booker's notes.
        "description": (event_type.description if event_type else "") or booking.description,
        "additionalNotes": booking.description,
        "customInputs": booking.custom_inputs if isinstance(booking.custom_inputs, dict) else {},
        "startTime": iso_utc(start),
        "endTime": iso_utc(booking.end_time),
        "organizer": organizer_payload(organizer, start),
        "responses": responses,
        "userFieldsResponses": user_fields,
        "attendees": [attendee_payload(booking, attendee, start) for attendee in attendees],
        "location": booking.location,
        "destinationCalendar": None,
        "hideCalendarNotes": False,
        "hideCalendarEventDetails": False,
        "hideOrganizerEmail": False,
        "requiresConfirmation": bool(event_type.requires_confirmation) if event_type else False,
        "eventTypeId": booking.event_type_id,
        # Cal.com: an event type without seats shows attendees and the availability count.
        "seatsShowAttendees": True,
        "seatsPerTimeSlot": None,
        "seatsShowAvailabilityCount": True,
        "schedulingType": (event_type.scheduling_type or None) if event_type else None,
        # Cal.com: the event type's reply-to address for the booking's emails; none here.
        "customReplyToEmail": None,
        "disableCancelling": False,
        "disableRescheduling": False,
        "iCalUID": ical_uid(booking),
        "iCalSequence": booking.ical_sequence,
        "hashedLink": None,
        "uid": booking.uid,
        "bookingId": booking.pk,
        "eventTitle": event_type.title if event_type else None,
        "eventDescription": event_type.description if event_type else None,
        "price": event_type.price if event_type else 0,
        "currency": event_type.currency if event_type else "usd",
        "length": event_type.length if event_type else int((booking.end_time - start).total_seconds() // 60),
        "status": TRIGGER_STATUS.get(trigger, booking.status),
        "metadata": booking_metadata(booking),
    }
    if booking.sms_reminder_number:
        payload["smsReminderNumber"] = booking.sms_reminder_number
    if event_type is not None and event_type.scheduling_type:
        payload["team"] = team_payload(booking, event_type, start)
    if recurring_event is not None:
        payload["recurringEvent"] = recurring_event
    if trigger == BOOKING_CANCELLED:
        if booking.cancellation_reason:
            payload["cancellationReason"] = booking.cancellation_reason
        if booking.cancelled_by:
            payload["cancelledBy"] = booking.cancelled_by
        payload["requestReschedule"] = False
    elif trigger in (BOOKING_RESCHEDULED, BOOKING_REQUESTED):
        before = previous if previous is not None else booking.rescheduled_from
        if before is not None:
            payload["rescheduleId"] = before.pk
            payload["rescheduleUid"] = before.uid
            payload["rescheduleStartTime"] = iso_utc(before.start_time)
            payload["rescheduleEndTime"] = iso_utc(before.end_time)
    elif trigger in PAYMENT_TRIGGERS:
        payment_id = payment.pk if payment is not None else _latest_payment_id(booking)
        if payment_id is not None:
            payload["paymentId"] = payment_id
    return payload


def no_show_message(attendees) -> str:
    """Cal.com's English message: the one attendee it names, or a summary for several."""
    if len(attendees) == 1:
        attendee = attendees[0]
        return f"{attendee.email} {'marked' if attendee.no_show else 'unmarked'} as no-show"
    return "No-show status updated"


def no_show_payload(booking, *, attendees) -> dict:
    """BOOKING_NO_SHOW_UPDATED: the attendees whose no-show flag was set (as they are now), a
    message saying so, and the booking's uid and id. The host's flag is not announced (Cal.com
    sends this trigger for attendees only)."""
    attendees = list(attendees)
    return {
        "message": no_show_message(attendees),
        "attendees": [{"email": attendee.email, "noShow": attendee.no_show} for attendee in attendees],
        "bookingUid": booking.uid,
        "bookingId": booking.pk,
    }


def _latest_payment_id(booking) -> int | None:
    from payments.models import Payment

    return Payment.objects.filter(booking_id=booking.pk).order_by("-id").values_list("id", flat=True).first()


def booking_paid(booking) -> bool:
    """Cal.com's `paid` flag of a booking: one of its payments succeeded. Reads the payments
    prefetched with the booking when they are (`prefetch_related("payments")`); a sample booking,
    never saved, has none."""
    if booking._state.adding:
        return False
    return any(payment.success for payment in booking.payments.all())


def meeting_payload(booking, *, trigger: str, attendees=None) -> dict:
    """MEETING_STARTED / MEETING_ENDED: the booking record with its answers, as Cal.com stores it
    when it schedules the trigger (nulls included, dates as JavaScript writes them), plus
    `triggerEvent`, which Cal.com keeps inside the payload of these triggers."""
    organizer = booking.organizer
    attendees = list(booking.attendees.all()) if attendees is None else list(attendees)
    start = booking.start_time
    responses, user_fields = calendar_responses(booking, attendees)
    before = booking.rescheduled_from if booking.rescheduled_from_id is not None else None
    return {
        "triggerEvent": trigger,
        "id": booking.pk,
        "uid": booking.uid,
        "userId": booking.organizer_id,
        "userPrimaryEmail": organizer.email,
        "eventTypeId": booking.event_type_id,
        "title": booking.title,
        "description": booking.description,
        "customInputs": booking.custom_inputs if isinstance(booking.custom_inputs, dict) else {},
        "responses": responses,
        "userFieldsResponses": user_fields,
        "startTime": iso_utc_ms(start),
        "endTime": iso_utc_ms(booking.end_time),
        "location": booking.location or None,
        "createdAt": iso_utc_ms(booking.created_at),
        "updatedAt": iso_utc_ms(booking.updated_at),
        "status": booking.status,
        "paid": booking_paid(booking),
        "destinationCalendarId": None,
        "cancellationReason": booking.cancellation_reason or None,
        "rejectionReason": None,
        "rescheduled": booking.rescheduled,
        "fromReschedule": before.uid if before is not None else None,
        "recurringEventId": booking.recurring_event_id or None,
        "smsReminderNumber": booking.sms_reminder_number or None,
        "metadata": booking_metadata(booking),
        "isRecorded": False,
        "iCalUID": ical_uid(booking),
        "iCalSequence": booking.ical_sequence,
        "cancelledBy": booking.cancelled_by or None,
        "rescheduledBy": None,
        "user": {
            "email": organizer.email,
            "name": organizer.name or None,
            "timeZone": organizer.time_zone,
            "username": organizer.username,
        },
        "attendees": [
            {
                "id": attendee.pk,
                "email": attendee.email,
                "name": attendee.name,
                "timeZone": attendee.time_zone,
                "phoneNumber": None,
                "locale": attendee.locale or "en",
                "bookingId": booking.pk,
                "noShow": attendee.no_show,
                "utcOffset": utc_offset(attendee.time_zone, start),
            }
            for attendee in attendees
        ],
    }
