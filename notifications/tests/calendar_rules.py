"""The checks Google Calendar, Outlook and Apple Calendar apply before they accept an iTIP message
(RFC 5545 and RFC 5546), as one assertion helper over the raw bytes of an invitation."""

from icalendar import Calendar

REQUIRED_IN_EVENT = ("UID", "DTSTAMP", "DTSTART", "SEQUENCE", "ORGANIZER", "SUMMARY", "STATUS")


def assert_clients_accept(raw: bytes) -> Calendar:
    """Raw bytes → the parsed calendar, after checking: CRLF line ends and lines folded at 75
    octets; VERSION 2.0, PRODID and a METHOD of REQUEST or CANCEL; every VEVENT with UID, DTSTAMP
    (UTC), DTSTART, SEQUENCE, ORGANIZER (a mailto: address), SUMMARY and STATUS (CANCELLED on a
    CANCEL); every ATTENDEE a mailto: address with PARTSTAT; one UID per message; every TZID
    defined by a VTIMEZONE of the message; DTEND after DTSTART."""
    assert raw.endswith(b"\r\n") and b"\n" not in raw.replace(b"\r\n", b"")
    assert all(len(line) <= 75 for line in raw.split(b"\r\n"))
    calendar = Calendar.from_ical(raw)
    assert str(calendar["VERSION"]) == "2.0" and calendar.get("PRODID")
    method = str(calendar["METHOD"])
    assert method in ("REQUEST", "CANCEL")
    events = calendar.walk("VEVENT")
    assert events
    assert len({str(event["UID"]) for event in events}) == 1
    zones = {str(zone["TZID"]) for zone in calendar.walk("VTIMEZONE")}
    for event in events:
        for name in REQUIRED_IN_EVENT:
            assert name in event, f"{name} missing"
        assert event.decoded("DTSTAMP").utcoffset().total_seconds() == 0
        assert str(event["ORGANIZER"]).startswith("mailto:")
        assert event.decoded("DTEND") > event.decoded("DTSTART")
        attendees = event.get("ATTENDEE", [])
        for attendee in attendees if isinstance(attendees, list) else [attendees]:
            assert str(attendee).startswith("mailto:") and attendee.params.get("PARTSTAT")
        if method == "CANCEL":
            assert str(event["STATUS"]) == "CANCELLED"
        for name in ("DTSTART", "DTEND", "RECURRENCE-ID"):
            if name in event and "TZID" in event[name].params:
                assert event[name].params["TZID"] in zones
    return calendar
