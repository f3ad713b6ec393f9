"""What v2 answers look like: this service's models written in Cal.com API v2's names and types.

Pure functions of objects the selectors already loaded (no queries of their own), one per shape and
version, so that a version's shape is found by name: `booking_2024_08_13`, `event_type_2024_06_14`.
Date-times are written as JavaScript's `toISOString()` writes them (UTC, milliseconds, `Z`), as
Cal.com's answers are.
"""

from datetime import UTC, datetime
from zoneinfo import ZoneInfo

from django.core.exceptions import ObjectDoesNotExist

from core.ical import ical_uid
from notifications.services import mail_settings_output
from scheduling.limits import to_v2 as limits_to_v2
from scheduling.models import Availability
from scheduling.recurrence import FREQUENCY_NAMES, Recurrence

WEEKDAYS = ("Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday")


def iso_ms(value: datetime | None) -> str | None:
    if value is None:
        return None
    value = value.astimezone(UTC)
    return value.strftime("%Y-%m-%dT%H:%M:%S.") + f"{value.microsecond // 1000:03d}Z"


def local_iso_ms(value: datetime, time_zone: str) -> str:
    """A slot's start as Cal.com writes it in the requested zone: `2026-11-23T09:00:00.000+01:00`."""
    if time_zone in ("UTC", "Etc/UTC"):
        return iso_ms(value)
    local = value.astimezone(ZoneInfo(time_zone))
    offset = local.strftime("%z")
    return local.strftime("%Y-%m-%dT%H:%M:%S.") + f"{local.microsecond // 1000:03d}{offset[:3]}:{offset[3:]}"


# --- me ---------------------------------------------------------------------------------------


def me(user) -> dict:
    return {
        "id": user.pk,
        "username": user.username,
        "email": user.email,
        "name": user.name or None,
        "avatarUrl": user.avatar or None,
        "bio": user.bio or None,
        "timeFormat": int(user.time_format),
        "defaultScheduleId": user.default_schedule_id,
        "weekStart": user.week_start,
        "timeZone": user.time_zone,
        "locale": user.locale,
        "organizationId": None,
    }


def team(team) -> dict:
    return {
        "id": team.pk,
        "name": team.name,
        "slug": team.slug,
        "bio": team.bio or None,
        "logoUrl": team.logo or None,
        "hideBranding": team.hide_branding,
        "isOrganization": False,
        "parentId": None,
    }


# --- webhooks ---------------------------------------------------------------------------------


def webhook(webhook) -> dict:
    """`secret` in every answer, as Cal.com's v2 answers carry it (v1 shows it once). n8n's
    trigger reads it back when it finds its subscription again after a restart; without it the
    node stops checking signatures. Only the webhook's owner or its administrators read it."""
    body = {
        "id": str(webhook.pk),
        "triggers": list(webhook.event_triggers),
        "subscriberUrl": webhook.subscriber_url,
        "active": webhook.active,
        "payloadTemplate": webhook.payload_template or None,
    }
    if webhook.event_type_id is not None:
        body["eventTypeId"] = webhook.event_type_id
    else:
        body["userId"] = webhook.user_id
    if webhook.secret:
        body["secret"] = webhook.secret
    return body


# --- bookings ---------------------------------------------------------------------------------


def _person(user) -> dict:
    return {
        "id": user.pk,
        "name": user.name or user.username,
        "email": user.email,
        "username": user.username,
        "timeZone": user.time_zone,
    }


def _attendee(attendee) -> dict:
    return {
        "name": attendee.name,
        "email": attendee.email,
        "displayEmail": attendee.email,
        "timeZone": attendee.time_zone,
        "language": attendee.locale,
        "absent": attendee.no_show,
    }


def added_attendee_2024_08_13(attendee) -> dict:
    """Cal.com's `BookingAttendeeOutput_2024_08_13`: the attendee of a booking with its ids."""
    return {"id": attendee.pk, "bookingId": attendee.booking_id, **_attendee(attendee)}


def booking_2024_08_13(booking) -> dict:
    """Cal.com's `BookingOutput_2024_08_13` (also served to 2026-02-25 and 2026-05-01). Reads the
    booking's organizer, event type, attendees, predecessor and successor, which the selector
    (`calv2.selectors.bookings_v2`) loads with it."""
    attendees = list(booking.attendees.all())
    successor = next(iter(booking.rescheduled_to.all()), None) if booking.rescheduled else None
    location = booking.location or None
    body = {
        "id": booking.pk,
        "uid": booking.uid,
        "title": booking.title,
        "description": booking.description,
        # The organizer, then a team booking's other hosts (`BookingHost`).
        "hosts": [_person(booking.organizer), *(_person(row.user) for row in booking.team_hosts.all())],
        "status": booking.status.lower(),
        "start": iso_ms(booking.start_time),
        "end": iso_ms(booking.end_time),
        "duration": int((booking.end_time - booking.start_time).total_seconds() // 60),
        "eventTypeId": booking.event_type_id,
        "eventType": (
            {"id": booking.event_type.pk, "slug": booking.event_type.slug} if booking.event_type is not None else None
        ),
        "meetingUrl": location if location and location.startswith(("http://", "https://")) else None,
        "location": location,
        "absentHost": booking.no_show_host,
        "createdAt": iso_ms(booking.created_at),
        "updatedAt": iso_ms(booking.updated_at),
        "metadata": booking.metadata,
        "rating": None,
        "icsUid": ical_uid(booking),
        "attendees": [_attendee(attendee) for attendee in attendees if attendee.name],
        "guests": [attendee.email for attendee in attendees if not attendee.name],
        "bookingFieldsResponses": booking.responses,
    }
    if booking.rescheduled_from_id is not None:
        body["rescheduledFromUid"] = booking.rescheduled_from.uid
        if booking.cancellation_reason and booking.status != "CANCELLED":
            body["reschedulingReason"] = booking.cancellation_reason
    if booking.status == "CANCELLED":
        if booking.cancellation_reason:
            body["cancellationReason"] = booking.cancellation_reason
        if booking.cancelled_by:
            body["cancelledByEmail"] = booking.cancelled_by
    if successor is not None:
        body["rescheduledToUid"] = successor.uid
    if booking.recurring_event_id:
        body["recurringBookingUid"] = booking.recurring_event_id
    return body


# --- event types ------------------------------------------------------------------------------


def recurrence_2024_06_14(recurring_event: dict | None) -> dict | None:
    """Cal.com's `Recurrence_2024_06_14` of a stored `recurringEvent` (`{"freq": 2, "interval": 1,
    "count": 12}` is `{"frequency": "weekly", "interval": 1, "occurrences": 12}`); None when the
    event type does not recur."""
    if not recurring_event:
        return None
    recurrence = Recurrence.from_json(recurring_event)
    return {
        "frequency": FREQUENCY_NAMES[recurrence.freq],
        "interval": recurrence.interval,
        "occurrences": recurrence.count,
    }


def _mail_settings_of(event_type):
    try:
        return event_type.notification_settings
    except ObjectDoesNotExist:
        return None


def event_type_2024_06_14(event_type) -> dict:
    """Cal.com's `EventTypeOutput_2024_06_14`, with the settings this service has; the ones it has
    not (locations, booking fields, seats) have Cal.com's empty values."""
    body = {
        "id": event_type.pk,
        "ownerId": event_type.owner_id,
        "lengthInMinutes": event_type.length,
        "title": event_type.title,
        "slug": event_type.slug,
        "description": event_type.description,
        "locations": [],
        "bookingFields": [],
        "disableGuests": False,
        "slotInterval": event_type.slot_interval,
        "minimumBookingNotice": event_type.minimum_booking_notice,
        "beforeEventBuffer": event_type.before_event_buffer,
        "afterEventBuffer": event_type.after_event_buffer,
        "recurrence": recurrence_2024_06_14(event_type.recurring_event),
        "metadata": {},
        "price": event_type.price,
        "currency": event_type.currency,
        "lockTimeZoneToggleOnBookingPage": False,
        "seatsPerTimeSlot": None,
        "forwardParamsSuccessRedirect": None,
        "successRedirectUrl": None,
        "isInstantEvent": False,
        "seatsShowAvailabilityCount": None,
        "scheduleId": event_type.schedule_id,
        "hidden": event_type.hidden,
        "requiresConfirmation": event_type.requires_confirmation,
        "bookingRequiresAuthentication": False,
        **mail_settings_output(_mail_settings_of(event_type)),
    }
    # Cal.com leaves them out when the event type has none.
    for name, limits in (
        ("bookingLimitsCount", event_type.booking_limits),
        ("bookingLimitsDuration", event_type.duration_limits),
    ):
        if limits:
            body[name] = limits_to_v2(limits)
    if event_type.team_id is not None:
        body["teamId"] = event_type.team_id
    return body


def event_type_2024_04_15(event_type) -> dict:
    """An item of the 2024-04-15 `eventTypeGroups`: Cal.com's database names (`length`, `userId`)."""
    return {
        "id": event_type.pk,
        "title": event_type.title,
        "slug": event_type.slug,
        "description": event_type.description,
        "length": event_type.length,
        "hidden": event_type.hidden,
        "price": event_type.price,
        "currency": event_type.currency,
        "requiresConfirmation": event_type.requires_confirmation,
        "minimumBookingNotice": event_type.minimum_booking_notice,
        "beforeEventBuffer": event_type.before_event_buffer,
        "afterEventBuffer": event_type.after_event_buffer,
        "slotInterval": event_type.slot_interval,
        "scheduleId": event_type.schedule_id,
        "userId": event_type.owner_id,
        "teamId": event_type.team_id,
    }


def event_type_groups_2024_04_15(user, event_types) -> dict:
    """Cal.com's 2024-04-15 answer of GET /v2/event-types: one group for the caller's own event
    types, then one per team, each with its profile."""
    groups: dict = {None: {"teamId": None, "profile": {"slug": user.username, "name": user.name}, "eventTypes": []}}
    for event_type in event_types:
        if event_type.team_id is not None and event_type.team_id not in groups:
            team_row = event_type.team
            groups[event_type.team_id] = {
                "teamId": team_row.pk,
                "profile": {"slug": team_row.slug, "name": team_row.name},
                "eventTypes": [],
            }
        groups[event_type.team_id]["eventTypes"].append(event_type_2024_04_15(event_type))
    ordered = list(groups.values())
    return {"eventTypeGroups": ordered, "profiles": [group["profile"] for group in ordered]}


# --- schedules --------------------------------------------------------------------------------


def _hhmm(value) -> str:
    return value.strftime("%H:%M")


def schedule_2024_06_11(schedule, *, default_schedule_id: int | None) -> dict:
    """Cal.com's `ScheduleOutput_2024_06_11`: weekly `availability` by day name and `overrides`
    by date, times as `HH:MM`."""
    rows: list[Availability] = list(schedule.availability.all())
    availability = [
        {
            "days": [WEEKDAYS[day] for day in row.days],
            "startTime": _hhmm(row.start_time),
            "endTime": _hhmm(row.end_time),
        }
        for row in rows
        if row.date is None
    ]
    overrides = [
        {"date": row.date.isoformat(), "startTime": _hhmm(row.start_time), "endTime": _hhmm(row.end_time)}
        for row in rows
        if row.date is not None
    ]
    return {
        "id": schedule.pk,
        "ownerId": schedule.user_id,
        "name": schedule.name,
        "timeZone": schedule.time_zone,
        "availability": availability,
        "isDefault": schedule.pk == default_schedule_id,
        "overrides": overrides,
    }
