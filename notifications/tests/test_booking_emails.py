"""Who gets which e-mail for each change of a booking, as received by a real SMTP server: the
headers, both parts, and the invitation a calendar client reads."""

import importlib
from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo

import pytest
from django.db import connection
from django.utils import timezone

from accounts.tests.factories import ApiKeyFactory, UserFactory
from notifications.models import EmailMessage, EmailStatus, Invitation
from notifications.services import event_type_mail_settings_set
from payments.models import Payment
from payments.services import payment_mark_paid
from scheduling.models import Booking
from scheduling.services.bookings import booking_mark_absent
from scheduling.tests.factories import EventTypeFactory
from tests.support.credentials import bearer

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("eager_tasks")]

BERLIN = ZoneInfo("Europe/Berlin")
ATTENDEE, GUEST, ORGANIZER = "grace@example.org", "alan@example.org", "ada@example.org"


def monday_ahead(weeks: int = 2) -> date:
    today = timezone.now().astimezone(BERLIN).date()
    return today + timedelta(days=(7 - today.weekday()) % 7 + 7 * weeks)


def berlin(hour: int, minute: int = 0, weeks: int = 2) -> datetime:
    return datetime.combine(monday_ahead(weeks), time(hour, minute), tzinfo=BERLIN)


@pytest.fixture
def organizer():
    return UserFactory(name="Ada Lovelace", email=ORGANIZER, time_zone="Europe/Berlin", locale="en")


@pytest.fixture
def key(organizer):
    return ApiKeyFactory(user=organizer).raw_key


@pytest.fixture
def event_type(organizer):
    return EventTypeFactory(owner=organizer, length=30, title="Intro call")


def book(api_client, key, event_type, start, captured, **extra):
    body = {
        "eventTypeId": event_type.pk,
        "start": start.isoformat(),
        "responses": {"name": "Grace Hopper", "email": ATTENDEE, "guests": [GUEST]},
        "timeZone": "America/New_York",
        "language": "de",
        "metadata": {},
        **extra,
    }
    with captured(execute=True):
        response = api_client.post("/v1/bookings", body, format="json", **bearer(key))
    assert response.status_code == 200, response.json()
    return response.json()


def event_of(calendar):
    return next(component for component in calendar.walk("VEVENT"))


def test_an_accepted_booking_mails_attendee_guest_and_organizer_once_each(
    api_client, key, event_type, smtp_server, django_capture_on_commit_callbacks
):
    start = berlin(10)
    booking = book(api_client, key, event_type, start, django_capture_on_commit_callbacks)

    assert sorted(address for each in smtp_server.received for address in each.rcpt_tos) == sorted(
        [ATTENDEE, GUEST, ORGANIZER]
    )
    attendee_mail = smtp_server.to(ATTENDEE)[0]
    headers = attendee_mail.message
    assert headers["From"] == "Scheduling <bookings@scheduling.test>"
    assert headers["Reply-To"] == f"Ada Lovelace <{ORGANIZER}>"
    assert headers["To"] == f"Grace Hopper <{ATTENDEE}>"
    assert headers["Message-ID"] == EmailMessage.objects.get(recipient=ATTENDEE).message_id
    # German (the booker's language) and New York time (the booker's zone): 04:00 there.
    assert headers["Subject"].strip().startswith("Bestätigt: Intro call")
    local = start.astimezone(ZoneInfo("America/New_York"))
    assert f"{local:%H:%M}" in attendee_mail.text() and "America/New_York" in attendee_mail.text()
    assert "Intro call" in attendee_mail.html() and "<h1" in attendee_mail.html()
    organizer_mail = smtp_server.to(ORGANIZER)[0]
    assert organizer_mail.message["Subject"].strip().startswith("New event: Intro call")
    assert f"{start:%H:%M}" in organizer_mail.text() and "Europe/Berlin" in organizer_mail.text()

    calendar = attendee_mail.calendar()
    assert calendar["METHOD"] == "REQUEST"
    assert attendee_mail.part("text/calendar").get_param("method") == "REQUEST"
    event = event_of(calendar)
    # The meeting's UID, as its calendar event, payloads and answers carry it (not the mail domain's).
    assert str(event["UID"]) == booking["iCalUID"] == f"{booking['uid']}@Cal.com"
    assert event["SEQUENCE"] == 0 and "DTSTAMP" in event
    assert event.decoded("DTSTART") == start and event.decoded("DTEND") == start + timedelta(minutes=30)
    assert str(event["ORGANIZER"]) == f"mailto:{ORGANIZER}"
    partstats = {str(attendee): attendee.params["PARTSTAT"] for attendee in event["ATTENDEE"]}
    assert partstats == {f"mailto:{ATTENDEE}": "ACCEPTED", f"mailto:{GUEST}": "NEEDS-ACTION"}
    assert event_of(attendee_mail.attachment())["UID"] == event["UID"]
    assert set(EmailMessage.objects.values_list("status", "attempts")) == {(EmailStatus.SENT, 1)}


def test_reschedule_and_cancel_update_the_same_calendar_event(
    api_client, key, event_type, smtp_server, django_capture_on_commit_callbacks
):
    first = book(api_client, key, event_type, berlin(10), django_capture_on_commit_callbacks)
    moved = book(
        api_client, key, event_type, berlin(14), django_capture_on_commit_callbacks, rescheduleUid=first["uid"]
    )
    with django_capture_on_commit_callbacks(execute=True):
        response = api_client.delete(f"/v1/bookings/{moved['id']}?cancellationReason=Plans%20changed", **bearer(key))
    assert response.status_code == 200, response.json()

    mails = smtp_server.to(ATTENDEE)
    assert [mail.message["Subject"].strip().split(":")[0] for mail in mails] == ["Bestätigt", "Verschoben", "Abgesagt"]
    events = [event_of(mail.calendar()) for mail in mails]
    assert {str(event["UID"]) for event in events} == {first["iCalUID"]} == {moved["iCalUID"]}
    assert [event["SEQUENCE"] for event in events] == [0, 1, 2]
    assert [mail.calendar()["METHOD"] for mail in mails] == ["REQUEST", "REQUEST", "CANCEL"]
    assert events[1].decoded("DTSTART") == berlin(14)
    assert events[2]["STATUS"] == "CANCELLED"
    assert "Plans changed" in mails[2].text() and "Plans changed" in smtp_server.to(ORGANIZER)[-1].html()
    assert len(smtp_server.to(ORGANIZER)) == 3 and len(smtp_server.to(GUEST)) == 3
    for mail in smtp_server.received:  # every invitation passes the clients' checks, in both places
        assert mail.calendar().to_ical() == mail.attachment().to_ical()


def test_a_meeting_invited_under_the_mail_domains_uid_keeps_it_after_the_upgrade(
    api_client, key, event_type, smtp_server, django_capture_on_commit_callbacks
):
    # Invited before invitations took the meeting's UID: its messages name `<uid>@<mail domain>`,
    # and it has no stored calendar identity. The migration stores the UID as sent, so the next
    # update replaces the event the attendees hold instead of adding a second one.
    booking = book(api_client, key, event_type, berlin(10), django_capture_on_commit_callbacks)
    ended = book(api_client, key, event_type, berlin(12), django_capture_on_commit_callbacks)
    Booking.objects.filter(pk=ended["id"]).update(
        start_time=timezone.now() - timedelta(hours=2), end_time=timezone.now() - timedelta(hours=1)
    )
    sent_uid = f"{booking['uid']}@scheduling.test"
    for message in EmailMessage.objects.filter(booking_id__in=[booking["id"], ended["id"]]):
        message.context["ical"]["uid"] = f"{message.context['bookingUid']}@scheduling.test"
        message.save(update_fields=["context"])
    Invitation.objects.all().delete()
    migration = importlib.import_module("notifications.migrations.0002_invitations_keep_their_sent_uid")
    with connection.cursor() as cursor:
        cursor.execute(migration.KEEP_SENT_UIDS)
        cursor.execute(migration.KEEP_SENT_UIDS)  # run twice: nothing more
    # A meeting that has ended gets nothing stored.
    assert list(Invitation.objects.values_list("booking_id", "ical_uid", "sequence")) == [(booking["id"], sent_uid, 0)]

    with django_capture_on_commit_callbacks(execute=True):
        response = api_client.delete(f"/v1/bookings/{booking['id']}", **bearer(key))
    assert response.status_code == 200, response.json()
    cancel = event_of(smtp_server.to(ATTENDEE)[-1].calendar())
    assert (str(cancel["UID"]), cancel["SEQUENCE"], str(cancel["STATUS"])) == (sent_uid, 1, "CANCELLED")


def test_a_request_then_its_confirmation(api_client, key, organizer, smtp_server, django_capture_on_commit_callbacks):
    event_type = EventTypeFactory(owner=organizer, length=30, title="Review", requires_confirmation=True)
    booking = book(api_client, key, event_type, berlin(11), django_capture_on_commit_callbacks, language="en")
    request_mail = smtp_server.to(ORGANIZER)[0]
    assert request_mail.message["Subject"].strip().startswith("Action required: Review")
    assert f"Confirm or reject booking {booking['id']}." in request_mail.text()
    assert smtp_server.to(ATTENDEE)[0].message["Subject"].strip().startswith("Request submitted: Review")
    assert event_of(smtp_server.to(ATTENDEE)[0].calendar())["STATUS"] == "TENTATIVE"

    with django_capture_on_commit_callbacks(execute=True):
        response = api_client.post(
            f"/v1/bookings/{booking['id']}/confirm", {"confirmed": True}, format="json", **bearer(key)
        )
    assert response.status_code == 200, response.json()
    confirmed = smtp_server.to(ATTENDEE)[1]
    assert confirmed.message["Subject"].strip().startswith("Confirmed: Review")
    event = event_of(confirmed.calendar())
    assert event["STATUS"] == "CONFIRMED" and event["SEQUENCE"] == 1
    assert len(smtp_server.to(ORGANIZER)) == 2


def test_a_rejected_request_tells_the_attendee_side_only(
    api_client, key, organizer, smtp_server, django_capture_on_commit_callbacks
):
    event_type = EventTypeFactory(owner=organizer, length=30, title="Review", requires_confirmation=True)
    booking = book(api_client, key, event_type, berlin(11), django_capture_on_commit_callbacks, language="en")
    with django_capture_on_commit_callbacks(execute=True):
        response = api_client.post(
            f"/v1/bookings/{booking['id']}/confirm", {"confirmed": False}, format="json", **bearer(key)
        )
    assert response.status_code == 200, response.json()
    rejected = smtp_server.to(ATTENDEE)[-1]
    assert rejected.message["Subject"].strip().startswith("Declined: Review")
    assert rejected.calendar()["METHOD"] == "CANCEL"
    assert len(smtp_server.to(ORGANIZER)) == 1  # the request only


def test_a_paid_booking_is_confirmed_once_paid(
    api_client, key, organizer, smtp_server, django_capture_on_commit_callbacks
):
    event_type = EventTypeFactory(owner=organizer, length=30, title="Paid", price=5000)
    booking = book(api_client, key, event_type, berlin(9), django_capture_on_commit_callbacks)
    assert smtp_server.received == []
    with django_capture_on_commit_callbacks(execute=True):
        payment_mark_paid(payment=Payment.objects.get(booking_id=booking["id"]))
        payment_mark_paid(payment=Payment.objects.get(booking_id=booking["id"]))
    assert len(smtp_server.to(ATTENDEE)) == 1 and len(smtp_server.to(ORGANIZER)) == 1


def test_no_email_spares_the_attendee_side_and_an_event_type_can_turn_either_side_off(
    api_client, key, event_type, organizer, smtp_server, django_capture_on_commit_callbacks
):
    book(api_client, key, event_type, berlin(10), django_capture_on_commit_callbacks, noEmail=True)
    assert [each.rcpt_tos for each in smtp_server.received] == [[ORGANIZER]]

    no_attendees = EventTypeFactory(owner=organizer, length=30)
    event_type_mail_settings_set(event_type=no_attendees, disable_emails_to_attendees=True)
    book(api_client, key, no_attendees, berlin(15), django_capture_on_commit_callbacks)
    assert [each.rcpt_tos for each in smtp_server.received] == [[ORGANIZER], [ORGANIZER]]

    no_hosts = EventTypeFactory(owner=organizer, length=30)
    event_type_mail_settings_set(event_type=no_hosts, disable_emails_to_hosts=True)
    book(api_client, key, no_hosts, berlin(16), django_capture_on_commit_callbacks)
    assert sorted(smtp_server.received[-1].rcpt_tos + smtp_server.received[-2].rcpt_tos) == [GUEST, ATTENDEE]
    assert len(smtp_server.received) == 4
    assert Booking.objects.count() == 3


def test_no_email_in_a_v2_body_of_v1_shape_spares_the_attendee_too(
    api_client, key, event_type, smtp_server, django_capture_on_commit_callbacks
):
    body = {
        "eventTypeId": event_type.pk,
        "start": berlin(11).isoformat(),
        "responses": {"name": "Grace Hopper", "email": ATTENDEE},
        "timeZone": "Europe/London",
        "metadata": {},
        "noEmail": True,
    }
    with django_capture_on_commit_callbacks(execute=True):
        response = api_client.post(
            "/v2/bookings", body, format="json", HTTP_CAL_API_VERSION="2024-04-15", **bearer(key)
        )
    assert response.status_code in (200, 201), response.json()
    assert [each.rcpt_tos for each in smtp_server.received] == [[ORGANIZER]]


def test_marking_a_no_show_sends_nothing(api_client, key, event_type, smtp_server, django_capture_on_commit_callbacks):
    booking = book(api_client, key, event_type, berlin(10), django_capture_on_commit_callbacks)
    before = EmailMessage.objects.count()
    row = Booking.objects.get(pk=booking["id"])
    with django_capture_on_commit_callbacks(execute=True):
        booking_mark_absent(
            booking=row,
            actor=row.organizer,
            host=False,
            attendees=[(ATTENDEE, True)],
            now=row.start_time + timedelta(minutes=5),
        )
    assert EmailMessage.objects.count() == before
    assert len(smtp_server.received) == 3
