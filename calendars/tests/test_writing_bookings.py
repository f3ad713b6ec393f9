"""Bookings written into the destination calendar of a real CalDAV server (Radicale on loopback):
one event per meeting, its UID kept across reschedules (and shown as `iCalUID` / `icsUid` in the
answers and payloads), SEQUENCE raised, rewritten when its title or description is edited, removed
on cancel, never blocking its own booking, and written once each across a server outage."""

from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

import caldav
import icalendar
import pytest
from django.urls import reverse
from django.utils import timezone

from accounts.tests.factories import ApiKeyFactory, UserFactory
from calendars.models import BookingReference, CalendarWrite, ConnectionKind
from calendars.selectors import calendar_busy
from calendars.services import connect_caldav, connection_refresh
from calendars.writes import apply_writes, due_write_bookings
from notifications.invitations import invitation
from notifications.models import EmailMessage
from scheduling.models import Booking
from scheduling.services.bookings import booking_cancel
from scheduling.tests.factories import EventTypeFactory
from tests.support.credentials import bearer
from webhooks.models import WebhookDelivery, WebhookTrigger
from webhooks.tests.factories import EVERY_TRIGGER, WebhookFactory

pytestmark = pytest.mark.django_db

BERLIN = ZoneInfo("Europe/Berlin")


def monday_ahead(weeks: int = 2) -> date:
    today = timezone.now().astimezone(BERLIN).date()
    return today + timedelta(days=(7 - today.weekday()) % 7 + 7 * weeks)


def berlin(hour: int, day: date | None = None) -> datetime:
    return datetime.combine(day or monday_ahead(), time(hour), tzinfo=BERLIN)


@pytest.fixture
def host():
    return UserFactory(time_zone="Europe/Berlin", name="Ada Lovelace")


@pytest.fixture
def key(host):
    return ApiKeyFactory(user=host).raw_key


@pytest.fixture
def event_type(host):
    return EventTypeFactory(owner=host, length=60)


@pytest.fixture
def server_calendar(host, caldav_account, make_calendar):
    calendar = make_calendar(name="Bookings")
    url, username, password = caldav_account
    connection = connect_caldav(user=host, kind=ConnectionKind.CALDAV, url=url, username=username, password=password)
    assert host.destination_calendar.calendar.external_id == str(calendar.url)
    return calendar, connection


def events_on(calendar: caldav.Calendar) -> list[icalendar.Event]:
    found = []
    for item in calendar.events():
        found.extend(icalendar.Calendar.from_ical(item.data).walk("VEVENT"))
    return found


def book(api_client, key, event_type, start: datetime, **extra) -> dict:
    body = {
        "eventTypeId": event_type.pk,
        "start": start.isoformat(),
        "name": "Grace Hopper",
        "email": "grace@example.org",
        "timeZone": "Europe/Berlin",
        **extra,
    }
    response = api_client.post("/v1/bookings", body, format="json", **bearer(key))
    assert response.status_code == 200, response.json()
    return response.json()


def sweep() -> None:
    for booking_id in due_write_bookings():
        apply_writes(booking_id)


def test_a_booking_its_reschedule_and_its_cancel_are_one_event_moved_then_removed(
    api_client, key, event_type, server_calendar
):
    calendar, _ = server_calendar
    first = book(api_client, key, event_type, berlin(10))
    sweep()
    [event] = events_on(calendar)
    uid = f"{first['uid']}@Cal.com"
    assert str(event["UID"]) == uid
    assert event["DTSTART"].dt == berlin(10)
    assert int(event["SEQUENCE"]) == 0
    attendee = event["ATTENDEE"]
    assert (str(attendee), str(attendee.params["CN"])) == ("mailto:grace@example.org", "Grace Hopper")
    assert str(event["ORGANIZER"]).startswith("mailto:")
    assert BookingReference.objects.get().uid == uid

    # v1's reschedule makes a new booking: the event keeps the original's UID, moves, SEQUENCE rises.
    second = book(api_client, key, event_type, berlin(14), rescheduleUid=first["uid"])
    sweep()
    [event] = events_on(calendar)
    assert str(event["UID"]) == uid
    assert event["DTSTART"].dt == berlin(14)
    assert int(event["SEQUENCE"]) >= 1
    assert BookingReference.objects.get().booking_id == second["id"]

    response = api_client.delete(f"/v1/bookings/{second['id']}/cancel?apiKey={key}")
    assert response.status_code == 200, response.json()
    sweep()
    assert events_on(calendar) == []
    assert BookingReference.objects.get().deleted is True


def test_the_services_own_event_read_back_never_blocks(api_client, key, host, event_type, server_calendar):
    _, connection = server_calendar
    booking = book(api_client, key, event_type, berlin(10))
    sweep()
    assert connection_refresh(connection=connection)
    assert connection.calendars.get().busy_times.count() == 1  # read back from the server…
    assert calendar_busy(host.pk, berlin(0), berlin(23)) == ()  # …and known as the booking's own
    # Cancelled, with its event still on the server (not yet removed): 10:00 is free again.
    booking_cancel(booking=Booking.objects.get(pk=booking["id"]))
    assert connection_refresh(connection=connection)
    day = monday_ahead()
    query = f"eventTypeId={event_type.pk}&startTime={day}&endTime={day}&timeZone=Europe/Berlin"
    slots = api_client.get(f"/v1/slots?{query}", **bearer(key)).json()["slots"][day.isoformat()]
    assert [int(slot["time"][11:13]) for slot in slots] == list(range(9, 17))


def test_drill_server_down_while_booking_then_up_every_event_written_once(
    api_client, key, host, event_type, server_calendar, radicale_server
):
    calendar, _ = server_calendar
    radicale_server.stop()
    try:
        made = [book(api_client, key, event_type, berlin(hour)) for hour in (9, 11, 13)]
        for booking in made:
            assert apply_writes(booking["id"]) is False
        assert CalendarWrite.objects.filter(done_at__isnull=True).count() == 3
        assert all(write.last_error for write in CalendarWrite.objects.all())
        booking_cancel(booking=Booking.objects.get(pk=made[2]["id"]))
    finally:
        radicale_server.start()
    CalendarWrite.objects.update(due_at=timezone.now())
    sweep()
    sweep()
    assert CalendarWrite.objects.filter(done_at__isnull=True).count() == 0
    events = events_on(calendar)
    assert sorted(str(event["UID"]) for event in events) == sorted(f"{made[i]['uid']}@Cal.com" for i in (0, 1))
    # An outcome the worker never learned (the PUT went through, the row was not marked done):
    # the write is applied again and replaces the same event.
    CalendarWrite.objects.update(done_at=None, due_at=timezone.now())
    sweep()
    assert len(events_on(calendar)) == 2


def test_a_host_without_a_destination_calendar_gets_no_outbox_rows(api_client, key, event_type):
    book(api_client, key, event_type, berlin(10))
    assert not CalendarWrite.objects.exists()


# --- the meeting's identity in payloads and answers, and edits of its text ----------------------


def rescheduled_payloads() -> list[dict]:
    return [
        delivery.payload["payload"] if "payload" in delivery.payload else delivery.payload
        for delivery in WebhookDelivery.objects.filter(trigger_event=WebhookTrigger.BOOKING_RESCHEDULED).order_by("id")
    ]


def test_after_v1_reschedules_the_answer_the_payload_and_the_event_share_the_first_uid(
    api_client, key, host, event_type, server_calendar
):
    calendar, _ = server_calendar
    WebhookFactory(user=host, event_triggers=[WebhookTrigger.BOOKING_RESCHEDULED])
    first = book(api_client, key, event_type, berlin(10))
    uid = f"{first['uid']}@Cal.com"
    assert first["iCalUID"] == uid

    second = book(api_client, key, event_type, berlin(12), rescheduleUid=first["uid"])
    assert (second["iCalUID"], second["iCalSequence"]) == (uid, 1)
    response = api_client.post(
        f"/v1/bookings/{second['id']}/reschedule", {"start": berlin(14).isoformat()}, format="json", **bearer(key)
    )
    third = response.json()["booking"]
    assert (third["iCalUID"], third["iCalSequence"]) == (uid, 2)
    assert api_client.get(f"/v1/bookings/{third['id']}", **bearer(key)).json()["booking"]["iCalUID"] == uid
    listed = api_client.get("/v1/bookings", **bearer(key)).json()["bookings"]
    assert {booking["id"]: booking["iCalUID"] for booking in listed} == {
        first["id"]: uid,
        second["id"]: uid,
        third["id"]: uid,
    }
    assert [(payload["iCalUID"], payload["iCalSequence"]) for payload in rescheduled_payloads()] == [
        (uid, 1),
        (uid, 2),
    ]
    sweep()
    [event] = events_on(calendar)
    assert (str(event["UID"]), event["DTSTART"].dt) == (uid, berlin(14))


def test_the_invitation_the_event_the_payload_and_the_feed_carry_one_uid_after_a_v1_reschedule(
    api_client, key, host, event_type, server_calendar
):
    # An attendee (or the organizer) who accepts the invitation and also has the destination
    # calendar or the feed holds one event: every copy of the meeting carries the same UID.
    calendar, _ = server_calendar
    WebhookFactory(user=host, event_triggers=[WebhookTrigger.BOOKING_CREATED, WebhookTrigger.BOOKING_RESCHEDULED])
    first = book(api_client, key, event_type, berlin(10))
    uid = first["iCalUID"]
    assert uid == f"{first['uid']}@Cal.com"
    sweep()
    [event] = events_on(calendar)
    assert (str(event["UID"]), event["SEQUENCE"]) == (uid, 0)

    second = book(api_client, key, event_type, berlin(12), rescheduleUid=first["uid"])
    assert (second["iCalUID"], second["iCalSequence"]) == (uid, 1)
    sweep()
    [event] = events_on(calendar)
    assert (str(event["UID"]), event["SEQUENCE"], event["DTSTART"].dt) == (uid, 1, berlin(12))

    # A new title rewrites the event (SEQUENCE 2) and mails nobody; the next move mails everyone
    # with a SEQUENCE above it, the same the event takes.
    response = api_client.patch(f"/v1/bookings/{second['id']}", {"title": "Roadmap"}, format="json", **bearer(key))
    assert response.status_code == 200, response.json()
    sweep()
    response = api_client.post(
        f"/v1/bookings/{second['id']}/reschedule", {"start": berlin(14).isoformat()}, format="json", **bearer(key)
    )
    assert response.json()["booking"]["iCalUID"] == uid
    sweep()
    [event] = events_on(calendar)
    assert (str(event["UID"]), event["SEQUENCE"], event["DTSTART"].dt) == (uid, 3, berlin(14))

    for recipient in ("grace@example.org", host.email):
        sent = EmailMessage.objects.filter(recipient=recipient).order_by("id")
        invitations = [icalendar.Calendar.from_ical(invitation(message.context)[1]) for message in sent]
        events = [next(iter(each.walk("VEVENT"))) for each in invitations]
        # The invitations' SEQUENCE follows the calendar event's: a client holding both applies them in order.
        assert [(str(each["UID"]), each["SEQUENCE"]) for each in events] == [(uid, 0), (uid, 1), (uid, 3)]

    payloads = [
        delivery.payload.get("payload", delivery.payload) for delivery in WebhookDelivery.objects.order_by("id")
    ]
    assert [(payload["iCalUID"], payload["iCalSequence"]) for payload in payloads] == [(uid, 0), (uid, 1), (uid, 3)]

    response = api_client.post("/v1/calendar-feeds/full", format="json", **bearer(key))
    feed = api_client.get(response.json()["calendar_feed"]["url"].removeprefix("http://testserver"))
    assert feed.status_code == 200
    in_feed = [
        (str(each["UID"]), each["DTSTART"].dt) for each in icalendar.Calendar.from_ical(feed.content).walk("VEVENT")
    ]
    assert in_feed == [(uid, berlin(14))]


def test_after_a_v2_reschedule_ics_uid_the_payload_and_the_event_share_the_first_uid(
    api_client, key, host, event_type, server_calendar
):
    calendar, _ = server_calendar
    WebhookFactory(user=host, event_triggers=[WebhookTrigger.BOOKING_RESCHEDULED])
    v2 = {**bearer(key), "HTTP_CAL_API_VERSION": "2024-08-13"}
    body = {
        "start": berlin(10).astimezone(UTC).isoformat().replace("+00:00", "Z"),
        "eventTypeId": event_type.pk,
        "attendee": {"name": "Grace Hopper", "email": "grace@example.org", "timeZone": "Europe/Berlin"},
    }
    created = api_client.post("/v2/bookings", body, format="json", **v2)
    assert created.status_code == 201, created.json()
    first = created.json()["data"]
    uid = f"{first['uid']}@Cal.com"
    assert first["icsUid"] == uid
    start = berlin(15).astimezone(UTC).isoformat().replace("+00:00", "Z")
    moved = api_client.post(f"/v2/bookings/{first['uid']}/reschedule", {"start": start}, format="json", **v2)
    assert moved.status_code == 201, moved.json()
    second = moved.json()["data"]
    assert second["uid"] != first["uid"] and second["icsUid"] == uid
    assert api_client.get(f"/v2/bookings/{second['uid']}", **v2).json()["data"]["icsUid"] == uid
    assert [(payload["iCalUID"], payload["iCalSequence"]) for payload in rescheduled_payloads()] == [(uid, 1)]
    sweep()
    [event] = events_on(calendar)
    assert (str(event["UID"]), event["DTSTART"].dt) == (uid, berlin(15))


def test_a_v1_edit_of_title_and_description_rewrites_the_event_and_mails_nobody(
    api_client, key, host, event_type, server_calendar
):
    calendar, _ = server_calendar
    WebhookFactory(user=host, event_triggers=EVERY_TRIGGER)
    made = book(api_client, key, event_type, berlin(10))
    sweep()
    [event] = events_on(calendar)
    assert (str(event["SUMMARY"]), int(event["SEQUENCE"])) == (made["title"], 0)
    mails, deliveries = EmailMessage.objects.count(), WebhookDelivery.objects.count()

    body = {"title": "Roadmap review", "description": "Agenda: the next quarter"}
    response = api_client.patch(f"/v1/bookings/{made['id']}", body, format="json", **bearer(key))
    assert response.status_code == 200, response.json()
    sweep()
    [event] = events_on(calendar)
    assert (str(event["SUMMARY"]), str(event["DESCRIPTION"])) == ("Roadmap review", "Agenda: the next quarter")
    assert (str(event["UID"]), int(event["SEQUENCE"])) == (f"{made['uid']}@Cal.com", 1)
    # As Cal.com: no e-mail and no webhook for a new title or description.
    assert (EmailMessage.objects.count(), WebhookDelivery.objects.count()) == (mails, deliveries)

    # The same title sent again changes nothing and writes nothing.
    api_client.patch(f"/v1/bookings/{made['id']}", {"title": "Roadmap review"}, format="json", **bearer(key))
    assert not CalendarWrite.objects.filter(done_at__isnull=True).exists()


def test_an_admin_edit_of_the_title_rewrites_the_event(api_client, key, event_type, server_calendar, operator_client):
    calendar, _ = server_calendar
    made = book(api_client, key, event_type, berlin(10))
    sweep()
    mails = EmailMessage.objects.count()
    form = {
        "title": "Corrected title",
        "description": "",
        "location": "",
        "metadata": "{}",
        "attendees-TOTAL_FORMS": 0,
        "attendees-INITIAL_FORMS": 0,
        "attendees-MIN_NUM_FORMS": 0,
        "attendees-MAX_NUM_FORMS": 1000,
    }
    response = operator_client.post(reverse("admin:scheduling_booking_change", args=[made["id"]]), form)
    assert response.status_code == 302
    sweep()
    [event] = events_on(calendar)
    assert (str(event["SUMMARY"]), int(event["SEQUENCE"])) == ("Corrected title", 1)
    assert EmailMessage.objects.count() == mails
