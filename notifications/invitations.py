"""The iCalendar invitation each message carries (RFC 5545, as an iTIP message of RFC 5546).

- METHOD:REQUEST for a new or changed meeting, METHOD:CANCEL (STATUS:CANCELLED) when it is off;
  every VEVENT has UID, DTSTAMP, SEQUENCE, ORGANIZER and the ATTENDEEs with PARTSTAT, the rules
  Google Calendar, Outlook and Apple Calendar check before they accept an update.
- The UID is the booking's calendar identity (`notifications.models.Invitation`): kept by a
  reschedule, shared by a series' occurrences; SEQUENCE rises with each change, so a client
  replaces the event it holds instead of adding a second one.
- A single meeting's times are UTC. A series is one recurring event (RRULE) whose times are in the
  organizer's time zone with its VTIMEZONE, so that a weekly meeting stays at the same wall-clock
  time across a DST change; one occurrence changed or cancelled is addressed by RECURRENCE-ID.
"""

from datetime import UTC, datetime
from zoneinfo import ZoneInfo

from django.conf import settings
from icalendar import Calendar, Event, vCalAddress, vRecur, vText

PRODID = "-//Scheduling service//Booking invitations//EN"
FREQUENCIES = {0: "YEARLY", 1: "MONTHLY", 2: "WEEKLY"}


def _instant(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00")).astimezone(UTC)


def _address(email: str, name: str, **params) -> vCalAddress:
    address = vCalAddress(f"mailto:{email}")
    if name:
        address.params["CN"] = vText(name)
    for key, value in params.items():
        address.params[key.upper().replace("_", "-")] = vText(value)
    return address


def _status(context: dict) -> str:
    if context["ical"]["method"] == "CANCEL":
        return "CANCELLED"
    return "TENTATIVE" if context["status"] == "PENDING" else "CONFIRMED"


def _event(context: dict, *, start: datetime, end: datetime, sequence: int, recurrence_id: datetime | None) -> Event:
    event = Event()
    event.add("uid", context["ical"]["uid"])
    event.add("dtstamp", datetime.now(UTC))
    event.add("dtstart", start)
    event.add("dtend", end)
    event.add("sequence", sequence)
    event.add("summary", context["title"])
    if context["description"]:
        event.add("description", context["description"])
    if context["location"]:
        event.add("location", context["location"])
    event.add("status", _status(context))
    event.add("transp", "OPAQUE")
    if recurrence_id is not None:
        event.add("recurrence-id", recurrence_id)
    organizer = context["organizer"]
    event.add("organizer", _address(organizer["email"], organizer["name"]))
    pending = context["status"] == "PENDING"
    for index, attendee in enumerate(context["attendees"]):
        # The booker said yes by booking (unless the host has yet to accept); guests are asked.
        partstat = "ACCEPTED" if index == 0 and not pending else "NEEDS-ACTION"
        event.add(
            "attendee",
            _address(
                attendee["email"],
                attendee["name"],
                role="REQ-PARTICIPANT",
                partstat=partstat,
                rsvp="FALSE" if partstat == "ACCEPTED" else "TRUE",
            ),
        )
    return event


def invitation(context: dict) -> tuple[str, bytes]:
    """(METHOD, the iCalendar object's bytes) for a message's context."""
    ical = context["ical"]
    method = ical["method"]
    calendar = Calendar()
    calendar.add("prodid", PRODID)
    calendar.add("version", "2.0")
    calendar.add("calscale", "GREGORIAN")
    calendar.add("method", method)
    zone = ZoneInfo(context["organizer"].get("timeZone") or settings.TIME_ZONE)
    occurrences = context.get("occurrences")
    recurrence = context.get("recurrence")
    if occurrences and method == "REQUEST" and recurrence:
        first = occurrences[0]
        event = _event(
            context,
            start=_instant(first["start"]).astimezone(zone),
            end=_instant(first["end"]).astimezone(zone),
            sequence=ical["sequence"],
            recurrence_id=None,
        )
        # The series' count: occurrences booked one request at a time are announced with the first.
        rule = {
            "FREQ": FREQUENCIES.get(recurrence.get("freq"), "WEEKLY"),
            "COUNT": recurrence.get("count") or len(occurrences),
        }
        if recurrence.get("interval", 1) != 1:
            rule["INTERVAL"] = recurrence["interval"]
        event.add("rrule", vRecur(rule))
        calendar.add_component(event)
    elif occurrences:
        # Occurrences of a series cancelled together: one VEVENT each, addressed by RECURRENCE-ID.
        for occurrence in occurrences:
            start = _instant(occurrence["start"]).astimezone(zone)
            calendar.add_component(
                _event(
                    context,
                    start=start,
                    end=_instant(occurrence["end"]).astimezone(zone),
                    sequence=occurrence.get("sequence", ical["sequence"]),
                    recurrence_id=_instant(occurrence.get("recurrenceId") or occurrence["start"]).astimezone(zone),
                )
            )
    else:
        recurrence_id = _instant(ical["recurrenceId"]).astimezone(zone) if ical.get("recurrenceId") else None
        in_zone = recurrence_id is not None
        start, end = _instant(context["start"]), _instant(context["end"])
        calendar.add_component(
            _event(
                context,
                start=start.astimezone(zone) if in_zone else start,
                end=end.astimezone(zone) if in_zone else end,
                sequence=ical["sequence"],
                recurrence_id=recurrence_id,
            )
        )
    calendar.add_missing_timezones()
    return method, calendar.to_ical()
