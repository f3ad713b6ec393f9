"""Field by field: how the payload builder (scheduling/payloads.py) fills Cal.com's keys from our
models, what it leaves out, and what it costs (docs/webhook-payloads.md)."""

from datetime import UTC, datetime, timedelta

import pytest

from accounts.tests.factories import UserFactory
from payments.tests.factories import PaymentFactory
from scheduling.payloads import booking_payload
from scheduling.services.bookings import _emit
from scheduling.tests.factories import AttendeeFactory, BookingFactory, EventTypeFactory
from webhooks.models import WebhookDelivery, WebhookTrigger
from webhooks.tests.factories import WebhookFactory

pytestmark = pytest.mark.django_db


def at(*args) -> datetime:
    return datetime(*args, tzinfo=UTC)


def make_booking(start: datetime, **extra):
    organizer = UserFactory(name="Ada Lovelace", time_zone="Europe/Berlin")
    return BookingFactory(
        organizer=organizer,
        start_time=start,
        end_time=start + timedelta(minutes=30),
        attendees=[{"name": "Grace Hopper", "email": "grace@example.org", "time_zone": "America/New_York"}],
        **extra,
    )


def test_utc_offsets_are_minutes_at_the_bookings_start_with_daylight_saving_time():
    winter = booking_payload(make_booking(at(2027, 1, 11, 9)))
    summer = booking_payload(make_booking(at(2027, 7, 12, 9)))
    assert (winter["organizer"]["utcOffset"], winter["attendees"][0]["utcOffset"]) == (60, -300)
    assert (summer["organizer"]["utcOffset"], summer["attendees"][0]["utcOffset"]) == (120, -240)
    # The Sunday the clocks change: 00:30 UTC is still winter time in Berlin, 01:30 UTC summer time.
    assert booking_payload(make_booking(at(2027, 3, 28, 0, 30)))["organizer"]["utcOffset"] == 60
    assert booking_payload(make_booking(at(2027, 3, 28, 1, 30)))["organizer"]["utcOffset"] == 120


def test_responses_have_cal_com_labels_and_user_fields_are_listed_apart():
    booking = make_booking(
        at(2027, 1, 11, 9),
        responses={
            "name": {"firstName": "Grace", "lastName": "Hopper"},
            "email": "grace@example.org",
            "company": "Navy",
        },
        description="Bring the slides",
    )
    payload = booking_payload(booking)
    assert payload["responses"] == {
        "name": {"label": "your_name", "value": {"firstName": "Grace", "lastName": "Hopper"}},
        "email": {"label": "email_address", "value": "grace@example.org"},
        "location": {"label": "location"},
        "notes": {"label": "additional_notes", "value": "Bring the slides"},
        "guests": {"label": "additional_guests"},
        "rescheduleReason": {"label": "reason_for_reschedule"},
        "company": {"label": "company", "value": "Navy"},
    }
    assert payload["userFieldsResponses"] == {"company": {"label": "company", "value": "Navy"}}
    assert (payload["attendees"][0]["firstName"], payload["attendees"][0]["lastName"]) == ("Grace", "Hopper")
    assert payload["additionalNotes"] == "Bring the slides"


def test_description_is_the_event_types_else_the_notes_and_event_type_details_are_sent():
    event_type = EventTypeFactory(title="Consultation", description="", length=45, price=900, currency="gbp")
    start = at(2027, 1, 11, 9)
    booking = BookingFactory(
        organizer=event_type.owner,
        event_type=event_type,
        start_time=start,
        end_time=start + timedelta(minutes=45),
        description="Notes",
        sms_reminder_number="+15555550100",
        ical_sequence=3,
    )
    payload = booking_payload(booking)
    assert payload["description"] == "Notes"
    assert (payload["eventTitle"], payload["eventDescription"], payload["length"]) == ("Consultation", "", 45)
    assert (payload["price"], payload["currency"]) == (900, "gbp")
    assert payload["smsReminderNumber"] == "+15555550100"
    assert (payload["iCalUID"], payload["iCalSequence"]) == (f"{booking.uid}@Cal.com", 3)
    event_type.description = "A chat"
    assert booking_payload(booking)["description"] == "A chat"


def test_a_booking_made_by_rescheduling_another_reports_that_one():
    old = make_booking(at(2027, 1, 11, 9))
    new = BookingFactory(
        organizer=old.organizer,
        event_type=old.event_type,
        start_time=at(2027, 1, 12, 9),
        end_time=at(2027, 1, 12, 9, 30),
        rescheduled_from=old,
    )
    payload = booking_payload(new, trigger=WebhookTrigger.BOOKING_RESCHEDULED)
    assert (payload["rescheduleId"], payload["rescheduleUid"]) == (old.pk, old.uid)
    assert (payload["rescheduleStartTime"], payload["rescheduleEndTime"]) == (
        "2027-01-11T09:00:00Z",
        "2027-01-11T09:30:00Z",
    )
    assert "rescheduledBy" not in payload
    assert booking_payload(new, trigger=WebhookTrigger.MEETING_STARTED)["fromReschedule"] == old.uid
    assert "rescheduleUid" not in booking_payload(new, trigger=WebhookTrigger.BOOKING_CREATED)


def test_cancellation_keys_are_sent_only_on_cancellations():
    booking = make_booking(at(2027, 1, 11, 9), cancellation_reason="Ill", cancelled_by="grace@example.org")
    cancelled = booking_payload(booking, trigger=WebhookTrigger.BOOKING_CANCELLED)
    assert (cancelled["cancellationReason"], cancelled["cancelledBy"], cancelled["requestReschedule"]) == (
        "Ill",
        "grace@example.org",
        False,
    )
    created = booking_payload(booking, trigger=WebhookTrigger.BOOKING_CREATED)
    assert not {"cancellationReason", "cancelledBy", "requestReschedule"} & set(created)


def test_a_location_that_is_not_a_link_adds_no_video_call_url():
    booking = make_booking(at(2027, 1, 11, 9), location="Office, 2nd floor", metadata={"a": 1})
    assert booking_payload(booking)["metadata"] == {"a": 1}


def test_meeting_payloads_say_paid_once_a_payment_of_the_booking_succeeded():
    booking = make_booking(at(2027, 1, 11, 9))
    PaymentFactory(booking=booking, success=False)
    assert booking_payload(booking, trigger=WebhookTrigger.MEETING_STARTED)["paid"] is False
    PaymentFactory(booking=booking, success=True)
    assert booking_payload(booking, trigger=WebhookTrigger.MEETING_ENDED)["paid"] is True
    assert "paid" not in booking_payload(booking)


def test_booking_triggers_carry_a_null_custom_reply_to_email_as_cal_com_sends_without_one():
    booking = make_booking(at(2027, 1, 11, 9))
    for trigger in (WebhookTrigger.BOOKING_CREATED, WebhookTrigger.BOOKING_CANCELLED):
        payload = booking_payload(booking, trigger=trigger)
        assert "customReplyToEmail" in payload and payload["customReplyToEmail"] is None


def test_building_costs_one_query_for_the_attendees_however_many_and_none_when_given(django_assert_num_queries):
    booking = make_booking(at(2027, 1, 11, 9))
    AttendeeFactory.create_batch(4, booking=booking)
    booking = type(booking).objects.select_related("organizer", "event_type").get(pk=booking.pk)
    attendees = list(booking.attendees.all())
    with django_assert_num_queries(1):
        assert len(booking_payload(booking)["attendees"]) == 5
    with django_assert_num_queries(2):  # the attendees, and the payments for `paid`
        assert len(booking_payload(booking, trigger=WebhookTrigger.MEETING_ENDED)["attendees"]) == 5
    prefetched = type(booking).objects.select_related("organizer", "event_type").prefetch_related("payments")
    booking = prefetched.get(pk=booking.pk)
    with django_assert_num_queries(0):
        booking_payload(booking, trigger=WebhookTrigger.MEETING_ENDED, attendees=attendees)
    with django_assert_num_queries(0):
        booking_payload(booking, trigger=WebhookTrigger.BOOKING_CANCELLED, attendees=attendees)


def test_emit_builds_nothing_without_a_subscriber_and_the_triggers_payload_with_one(
    django_assert_num_queries, settings
):
    # The webhook side alone: the e-mails `_emit` also queues are notifications' (tested there).
    settings.NOTIFICATIONS = {**settings.NOTIFICATIONS, "ENABLED": False}
    booking = make_booking(at(2027, 1, 11, 9), cancellation_reason="Ill")
    created_only = WebhookFactory(user=booking.organizer)
    with django_assert_num_queries(0):
        _emit(WebhookTrigger.BOOKING_CANCELLED, booking, [created_only])
    webhook = WebhookFactory(user=booking.organizer, event_triggers=[WebhookTrigger.BOOKING_CANCELLED])
    _emit(WebhookTrigger.BOOKING_CANCELLED, booking, [webhook])
    [delivery] = WebhookDelivery.objects.all()
    assert (delivery.payload["status"], delivery.payload["cancellationReason"]) == ("CANCELLED", "Ill")
