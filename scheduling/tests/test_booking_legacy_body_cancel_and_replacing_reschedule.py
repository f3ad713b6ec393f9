"""Cal.com API v1's booking calls: the whole v1 booking body, its answer, DELETE as a cancellation,
and Cal.com's reschedule (a new booking replaces the old one)."""

import threading
from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo

import pytest
from django.db import connection, transaction
from django.utils import timezone
from rest_framework.test import APIClient

from accounts.tests.factories import ApiKeyFactory, UserFactory
from payments.models import Payment
from scheduling.models import Attendee, Booking, BookingStatus
from scheduling.tests.factories import BookingFactory, EventTypeFactory
from tests.support.credentials import bearer
from tests.support.live_services import wait_for_a_blocked_transaction
from webhooks.models import WebhookDelivery, WebhookScheduledTrigger, WebhookTrigger
from webhooks.tests.factories import WebhookFactory

pytestmark = pytest.mark.django_db

BERLIN = ZoneInfo("Europe/Berlin")
UTC = ZoneInfo("UTC")


def monday_ahead(weeks: int = 2) -> date:
    today = timezone.now().astimezone(BERLIN).date()
    return today + timedelta(days=(7 - today.weekday()) % 7 + 7 * weeks)


def berlin(hour: int, minute: int = 0) -> datetime:
    return datetime.combine(monday_ahead(), time(hour, minute), tzinfo=BERLIN)


def z(value: datetime) -> str:
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@pytest.fixture
def organizer():
    return UserFactory(name="Ada Lovelace", email="ada@example.org", time_zone="Europe/Berlin")


@pytest.fixture
def webhook(organizer):
    return WebhookFactory(
        user=organizer,
        event_triggers=[
            WebhookTrigger.BOOKING_CREATED,
            WebhookTrigger.BOOKING_REQUESTED,
            WebhookTrigger.BOOKING_RESCHEDULED,
            WebhookTrigger.BOOKING_CANCELLED,
            WebhookTrigger.MEETING_STARTED,
            WebhookTrigger.MEETING_ENDED,
        ],
    )


def v1_body(event_type, start: datetime, **extra) -> dict:
    body = {
        "eventTypeId": event_type.pk,
        "start": start.isoformat(),
        "responses": {"name": "Grace Hopper", "email": "grace@example.org", "location": "Room 4"},
        "timeZone": "America/New_York",
        "language": "en",
        "metadata": {},
    }
    body.update(extra)
    return body


def legacy_body(event_type, start: datetime, **extra) -> dict:
    body = {
        "eventTypeId": event_type.pk,
        "start": start.isoformat(),
        "name": "Grace Hopper",
        "email": "grace@example.org",
        "timeZone": "America/New_York",
    }
    body.update(extra)
    return body


def written() -> tuple[int, ...]:
    """Rows every booking write touches: compare before and after a refused request."""
    return (
        Booking.objects.count(),
        Attendee.objects.count(),
        Payment.objects.count(),
        WebhookDelivery.objects.count(),
        WebhookScheduledTrigger.objects.count(),
    )


def snapshot(booking: Booking) -> tuple:
    booking.refresh_from_db()
    return (booking.status, booking.start_time, booking.rescheduled, booking.cancellation_reason, booking.cancelled_by)


# --- the v1 booking body ------------------------------------------------------------------------


def test_legacy_top_level_fields_are_all_honoured(api_client, key, event_type):
    body = legacy_body(
        event_type,
        berlin(10),
        notes="Bring the slides",
        guests=["alan@example.org", "ALAN@example.org", "grace@example.org", "edsger@example.org"],
        location="https://meet.example.com/abc",
        customInputs=[{"label": "Company", "value": "Navy"}, {"label": "First visit", "value": True}],
        smsReminderNumber="+4915112345678",
        language="de",
        metadata={"crmId": "A-17"},
    )
    response = api_client.post("/v1/bookings", body, format="json", **bearer(key))
    assert response.status_code == 200, response.json()

    booking = Booking.objects.get()
    assert booking.description == "Bring the slides"
    assert booking.location == "https://meet.example.com/abc"
    assert booking.custom_inputs == {"Company": "Navy", "First visit": True}
    assert booking.sms_reminder_number == "+4915112345678"
    assert booking.metadata == {"crmId": "A-17"}
    assert booking.responses == {
        "name": "Grace Hopper",
        "email": "grace@example.org",
        "location": {"value": "https://meet.example.com/abc", "optionValue": ""},
        "notes": "Bring the slides",
        "guests": ["alan@example.org", "edsger@example.org"],
    }
    # Guests become attendees without a name, in the booker's time zone, once each, never the booker.
    assert list(booking.attendees.order_by("id").values_list("name", "email", "time_zone", "locale")) == [
        ("Grace Hopper", "grace@example.org", "America/New_York", "de"),
        ("", "alan@example.org", "America/New_York", "en"),
        ("", "edsger@example.org", "America/New_York", "en"),
    ]
    answer = response.json()
    assert answer["customInputs"] == {"Company": "Navy", "First visit": True}
    assert answer["smsReminderNumber"] == "+4915112345678"
    assert [attendee["email"] for attendee in answer["attendees"]] == [
        "grace@example.org",
        "alan@example.org",
        "edsger@example.org",
    ]


def test_responses_are_stored_as_sent_and_answer_the_same_as_top_level_fields(api_client, key, organizer):
    event_type = EventTypeFactory(owner=organizer, length=30)
    responses = {
        "name": "Grace Hopper",
        "email": "grace@example.org",
        "location": {"value": "inPerson", "optionValue": "Berlin office"},
        "notes": "Agenda",
        "guests": ["alan@example.org"],
        "smsReminderNumber": "+4915112345678",
    }
    nested = api_client.post(
        "/v1/bookings", v1_body(event_type, berlin(10), responses=responses), format="json", **bearer(key)
    )
    flat = api_client.post(
        "/v1/bookings",
        legacy_body(
            event_type,
            berlin(11),
            location="Berlin office",
            notes="Agenda",
            guests=["alan@example.org"],
            smsReminderNumber="+4915112345678",
            language="en",
        ),
        format="json",
        **bearer(key),
    )
    assert (nested.status_code, flat.status_code) == (200, 200), (nested.json(), flat.json())
    assert nested.json()["responses"] == responses
    same = ("title", "description", "location", "smsReminderNumber", "status", "userId", "eventTypeId")
    assert {name: nested.json()[name] for name in same} == {name: flat.json()[name] for name in same}
    strip_ids = [{k: v for k, v in attendee.items() if k != "id"} for attendee in nested.json()["attendees"]]
    assert strip_ids == [{k: v for k, v in attendee.items() if k != "id"} for attendee in flat.json()["attendees"]]


def test_top_level_name_and_email_win_over_responses(api_client, key, event_type):
    body = v1_body(event_type, berlin(10), name="Ada", email="ada.b@example.org")
    response = api_client.post("/v1/bookings", body, format="json", **bearer(key))
    assert response.status_code == 200
    assert (response.json()["attendees"][0]["name"], response.json()["attendees"][0]["email"]) == (
        "Ada",
        "ada.b@example.org",
    )


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("noEmail", True),
        ("appsStatus", []),
        ("user", "ada"),
        ("user", ["ada"]),
        ("user", None),
        ("skipContactOwner", True),
        ("cfToken", None),
        ("tracking", {"utm_source": "newsletter"}),
        ("dub_id", "d-1"),
        ("creationSource", "API_V1"),
        ("verificationCode", "123456"),
        ("reservedSlotUid", "slot-1"),
        ("rescheduledBy", "ada@example.org"),
        ("_shouldServeCache", False),
        ("_isDryRun", False),
        ("status", "PENDING"),
        ("seatsShowAttendees", False),
        ("seatsShowAvailabilityCount", True),
        ("title", None),
        ("description", None),
        ("smsReminderNumber", None),
        ("end", None),
        # What Cal.com's booker sends by default for the fields accepted only empty.
        ("hasHashedBookingLink", False),
        ("hasHashedBookingLink", True),  # only `hashedLink` names a link
        ("hashedLink", None),
        ("hashedLink", ""),
        ("seatReferenceUid", ""),
        ("bookingUid", ""),
        ("seatsPerTimeSlot", None),
        ("luckyUsers", []),
        ("routedTeamMemberIds", None),
        ("routedTeamMemberIds", []),
        ("routingFormResponseId", None),
        ("reroutingFormResponses", {}),
        ("teamMemberEmail", None),
        ("crmOwnerRecordType", None),
        ("crmRecordId", None),
        ("crmAppSlug", None),
        ("orgSlug", ""),
        ("userId", None),
        ("eventTypeSlug", ""),
        ("eventTypeSlug", None),
    ],
)
def test_v1_fields_without_effect_are_accepted_and_change_nothing(api_client, key, event_type, field, value):
    response = api_client.post(
        "/v1/bookings", v1_body(event_type, berlin(10), **{field: value}), format="json", **bearer(key)
    )
    assert response.status_code == 200, response.json()
    booking = Booking.objects.get()
    assert (booking.status, booking.organizer_id, booking.end_time) == (
        BookingStatus.ACCEPTED,
        event_type.owner_id,
        berlin(10, 30),
    )
    assert booking.attendees.count() == 1


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("seatReferenceUid", "seat-1"),
        ("bookingUid", "abc"),
        ("seatsPerTimeSlot", 4),
        ("hashedLink", "a1b2c3"),  # no private link has this id
        ("luckyUsers", [1]),
        ("routedTeamMemberIds", [1, 2]),
        ("routingFormResponseId", 5),
        ("reroutingFormResponses", {"response": {}}),
        ("teamMemberEmail", "owner@example.org"),
        ("crmOwnerRecordType", "Account"),
        ("crmRecordId", "0015"),
        ("crmAppSlug", "salesforce"),
        ("orgSlug", "acme"),
        ("user", ["ada", "alan"]),
        ("user", "ada+alan"),
        ("user", 7),
    ],
)
def test_v1_field_asking_for_what_the_service_does_not_do_is_a_400_and_writes_nothing(
    api_client, key, event_type, field, value
):
    before = written()
    response = api_client.post(
        "/v1/bookings", v1_body(event_type, berlin(10), **{field: value}), format="json", **bearer(key)
    )
    assert response.status_code == 400, response.json()
    assert response["Content-Type"] == "application/problem+json"
    problem = response.json()
    assert problem["code"] == "validation_error"
    assert list(problem["errors"]) == [field], problem
    assert written() == before


def test_v1_user_id_may_name_the_caller(api_client, key, event_type, organizer):
    response = api_client.post(
        "/v1/bookings", v1_body(event_type, berlin(10), userId=organizer.pk), format="json", **bearer(key)
    )
    assert response.status_code == 200, response.json()
    assert Booking.objects.get().organizer_id == organizer.pk


def test_v1_user_id_of_another_user_is_a_403_and_writes_nothing(api_client, key, event_type):
    before = written()
    body = v1_body(event_type, berlin(10), userId=UserFactory().pk)
    response = api_client.post("/v1/bookings", body, format="json", **bearer(key))
    assert response.status_code == 403, response.json()
    assert response.json()["code"] == "permission_denied"
    assert written() == before


def test_v1_admin_booking_on_behalf_of_another_user_is_a_400_and_writes_nothing(api_client, event_type):
    admin = UserFactory(role="ADMIN")
    before = written()
    body = v1_body(event_type, berlin(10), userId=UserFactory().pk)
    response = api_client.post("/v1/bookings", body, format="json", **bearer(ApiKeyFactory(user=admin).raw_key))
    assert response.status_code == 400, response.json()
    assert list(response.json()["errors"]) == ["userId"]
    assert written() == before


def test_v1_event_type_slug_must_be_the_booked_event_types(api_client, key, event_type):
    before = written()
    wrong = v1_body(event_type, berlin(10), eventTypeSlug=f"{event_type.slug}-other")
    response = api_client.post("/v1/bookings", wrong, format="json", **bearer(key))
    assert response.status_code == 400, response.json()
    assert list(response.json()["errors"]) == ["eventTypeSlug"]
    assert written() == before
    right = v1_body(event_type, berlin(10), eventTypeSlug=event_type.slug)
    response = api_client.post("/v1/bookings", right, format="json", **bearer(key))
    assert response.status_code == 200, response.json()
    assert Booking.objects.get().event_type_id == event_type.pk


def test_cal_booker_request_with_its_defaults_books(api_client, key, event_type, organizer):
    # The body Cal.com's booker builds (mapBookingToMutationInput) for a plain booking page.
    body = v1_body(
        event_type,
        berlin(10),
        end=berlin(10, 30).isoformat(),
        user=organizer.username,
        eventTypeSlug=event_type.slug,
        hasHashedBookingLink=False,
        hashedLink=None,
        teamMemberEmail=None,
        crmOwnerRecordType=None,
        crmAppSlug=None,
        crmRecordId=None,
        routedTeamMemberIds=None,
        skipContactOwner=False,
        _isDryRun=False,
        dub_id=None,
    )
    response = api_client.post("/v1/bookings", body, format="json", **bearer(key))
    assert response.status_code == 200, response.json()
    assert (response.json()["startTime"], response.json()["status"]) == (z(berlin(10)), "ACCEPTED")


def test_v1_reference_example_body_books(api_client, key, event_type):
    # The request example of Cal.com's v1 reference for POST /bookings, with our ids and times.
    body = {
        "eventTypeId": event_type.pk,
        "start": z(berlin(10)).replace("Z", ".000Z"),
        "end": z(berlin(10, 30)).replace("Z", ".000Z"),
        "responses": {"name": "Hello Hello", "email": "hello@gmail.com", "metadata": {}, "location": "Calcom HQ"},
        "timeZone": "Europe/London",
        "language": "en",
        "title": "Debugging between Syed Ali Shahbaz and Hello Hello",
        "description": None,
        "status": "PENDING",
        "smsReminderNumber": None,
    }
    response = api_client.post("/v1/bookings", body, format="json", **bearer(key))
    assert response.status_code == 200, response.json()
    answer = response.json()
    assert answer["title"] == "Debugging between Syed Ali Shahbaz and Hello Hello"
    assert (answer["location"], answer["status"], answer["description"]) == ("Calcom HQ", "ACCEPTED", "")


def test_the_answer_is_the_booking_object_at_the_top_level(api_client, key, event_type, organizer):
    response = api_client.post("/v1/bookings", v1_body(event_type, berlin(10)), format="json", **bearer(key))
    assert response.status_code == 200
    answer = response.json()
    assert "booking" not in answer
    assert response["Location"].endswith(f"/v1/bookings/{answer['id']}")
    assert isinstance(answer["id"], int)
    assert answer["uid"] == Booking.objects.get().uid
    assert (answer["userId"], answer["user"]["id"], answer["eventTypeId"]) == (
        organizer.pk,
        organizer.pk,
        event_type.pk,
    )
    assert (answer["startTime"], answer["endTime"], answer["status"]) == (z(berlin(10)), z(berlin(10, 30)), "ACCEPTED")
    assert answer["attendees"][0] == {
        "id": answer["attendees"][0]["id"],
        "name": "Grace Hopper",
        "email": "grace@example.org",
        "timeZone": "America/New_York",
        "locale": "en",
    }
    assert answer["responses"] == {"name": "Grace Hopper", "email": "grace@example.org", "location": "Room 4"}
    assert (answer["payment"], answer["paymentRequired"]) == ([], False)
    assert (answer["rescheduled"], answer["fromReschedule"], answer["iCalSequence"]) == (False, None, 0)
    assert (answer["metadata"], answer["location"], answer["cancelledBy"]) == ({}, "Room 4", None)


def test_a_paid_booking_answers_that_payment_is_required(api_client, key, organizer):
    event_type = EventTypeFactory(owner=organizer, price=4500, currency="eur")
    response = api_client.post("/v1/bookings", v1_body(event_type, berlin(10)), format="json", **bearer(key))
    assert response.status_code == 200
    payment = Payment.objects.get()
    answer = response.json()
    assert answer["payment"] == [
        {"id": payment.pk, "uid": payment.uid, "success": False, "paymentOption": "ON_BOOKING"}
    ]
    assert (answer["paymentRequired"], answer["paymentUid"], answer["paymentId"]) == (True, payment.uid, payment.pk)


@pytest.mark.parametrize(
    ("extra", "error_key"),
    [
        ({"eventTypeId": "7"}, "eventTypeId"),
        ({"eventTypeId": True}, "eventTypeId"),
        ({"eventTypeId": 7.5}, "eventTypeId"),
        ({"email": "not-an-email"}, "email"),
        ({"responses": {"name": "G", "email": "nope"}}, "responses.email"),
        ({"guests": ["alan@example.org", "not-an-email"]}, "guests"),
        ({"guests": "alan@example.org"}, "guests"),
        ({"responses": {"name": "G", "email": "g@example.org", "guests": ["x"]}}, "responses.guests"),
        ({"customInputs": [{"label": "Company"}]}, "customInputs"),
        ({"customInputs": [{"label": "Company", "value": 3}]}, "customInputs"),
        ({"customInputs": {"Company": "Navy"}}, "customInputs"),
        ({"smsReminderNumber": {"number": 1}}, "smsReminderNumber"),
        ({"language": "x" * 36}, "language"),
        ({"location": ["Room 4"]}, "location"),
        ({"recurringCount": 0}, "recurringCount"),
        ({"_isDryRun": True}, "_isDryRun"),
        ({"noEmail": "sometimes"}, "noEmail"),
        ({"rescheduledBy": "not-an-email"}, "rescheduledBy"),
        ({"colour": "red"}, "colour"),
        ({"rescheduleUid": ""}, "rescheduleUid"),
    ],
)
def test_bad_v1_body_is_a_400_naming_the_field_and_writes_nothing(api_client, key, event_type, extra, error_key):
    before = written()
    body = legacy_body(event_type, berlin(10), **extra)
    response = api_client.post("/v1/bookings", body, format="json", **bearer(key))
    assert response.status_code == 400, response.json()
    assert response["Content-Type"] == "application/problem+json"
    problem = response.json()
    assert problem["code"] == "validation_error"
    assert any(
        name == error_key or name.startswith(f"{error_key}.") or name.startswith(f"{error_key}[")
        for name in problem["errors"]
    ), problem
    assert written() == before


def test_end_other_than_start_plus_length_is_a_400_and_writes_nothing(api_client, key, event_type):
    before = written()
    body = v1_body(event_type, berlin(10), end=z(berlin(11)))
    response = api_client.post("/v1/bookings", body, format="json", **bearer(key))
    assert response.status_code == 400
    assert "end" in response.json()["errors"]
    assert written() == before


# --- DELETE cancels -----------------------------------------------------------------------------


def make_booking(organizer, event_type, start, **extra):
    return BookingFactory(
        organizer=organizer, event_type=event_type, start_time=start, end_time=start + timedelta(minutes=30), **extra
    )


@pytest.mark.parametrize("path", ["/v1/bookings/{id}", "/bookings/{id}", "/v1/bookings/{id}/cancel"])
def test_delete_cancels_with_v1s_answer_and_records_who_cancelled(
    api_client, key, organizer, event_type, webhook, path
):
    booking = make_booking(organizer, event_type, berlin(10))
    response = api_client.delete(
        path.format(id=booking.pk) + f"?apiKey={key}&cancellationReason=Clash&allRemainingBookings=true"
    )
    assert response.status_code == 200, response.json()
    answer = response.json()
    assert {
        name: answer[name] for name in ("success", "message", "onlyRemovedAttendee", "bookingId", "bookingUid")
    } == {
        "success": True,
        "message": "Booking successfully cancelled.",
        "onlyRemovedAttendee": False,
        "bookingId": booking.pk,
        "bookingUid": booking.uid,
    }
    assert (answer["booking"]["status"], answer["booking"]["cancelledBy"]) == ("CANCELLED", "ada@example.org")
    booking.refresh_from_db()
    assert (booking.status, booking.cancellation_reason, booking.cancelled_by) == (
        BookingStatus.CANCELLED,
        "Clash",
        "ada@example.org",
    )
    assert list(WebhookDelivery.objects.values_list("trigger_event", flat=True)) == [WebhookTrigger.BOOKING_CANCELLED]


def test_delete_takes_the_reason_from_the_body_over_the_query(api_client, key, organizer, event_type):
    booking = make_booking(organizer, event_type, berlin(10))
    response = api_client.delete(
        f"/v1/bookings/{booking.pk}?cancellationReason=Query",
        {"cancellationReason": "Body", "allRemainingBookings": False},
        format="json",
        **bearer(key),
    )
    assert response.status_code == 200
    booking.refresh_from_db()
    assert booking.cancellation_reason == "Body"


def test_delete_of_a_cancelled_booking_is_a_409_that_changes_nothing(api_client, key, organizer, event_type):
    booking = make_booking(
        organizer, event_type, berlin(10), status=BookingStatus.CANCELLED, cancellation_reason="first"
    )
    before, written_before = snapshot(booking), written()
    response = api_client.delete(f"/v1/bookings/{booking.pk}?cancellationReason=again", **bearer(key))
    assert response.status_code == 409
    assert response.json()["code"] == "conflict"
    assert (snapshot(booking), written()) == (before, written_before)


@pytest.mark.parametrize(
    "body",
    [{"why": "x"}, {"cancellationReason": ["Clash"]}, {"allRemainingBookings": "often"}, {"cancelledBy": "a@b.org"}],
)
def test_delete_with_a_bad_body_is_a_400_that_changes_nothing(api_client, key, organizer, event_type, body):
    booking = make_booking(organizer, event_type, berlin(10))
    before, written_before = snapshot(booking), written()
    response = api_client.delete(f"/v1/bookings/{booking.pk}", body, format="json", **bearer(key))
    assert response.status_code == 400
    assert (snapshot(booking), written()) == (before, written_before)


def test_delete_of_someone_elses_booking_is_a_404_that_changes_nothing(api_client, key):
    booking = BookingFactory()
    before = snapshot(booking)
    response = api_client.delete(f"/v1/bookings/{booking.pk}", **bearer(key))
    assert response.status_code == 404
    assert snapshot(booking) == before


# --- Cal.com's reschedule: POST /bookings with rescheduleUid ------------------------------------


def book(api_client, key, event_type, start, **extra):
    response = api_client.post("/v1/bookings", v1_body(event_type, start, **extra), format="json", **bearer(key))
    assert response.status_code == 200, response.json()
    return response.json()


def test_reschedule_uid_makes_a_new_booking_and_cancels_the_old_one(api_client, key, organizer, event_type, webhook):
    old = book(api_client, key, event_type, berlin(10), metadata={"crmId": "A-17", "stage": "lead"})
    WebhookDelivery.objects.all().delete()
    body = v1_body(
        event_type,
        berlin(14),
        rescheduleUid=old["uid"],
        rescheduleReason="Clash",
        metadata={"stage": "customer"},
    )
    response = api_client.post("/v1/bookings", body, format="json", **bearer(key))
    assert response.status_code == 200, response.json()
    new = response.json()

    assert new["id"] != old["id"] and new["uid"] != old["uid"]
    assert (new["fromReschedule"], new["iCalSequence"], new["status"]) == (old["uid"], 1, "ACCEPTED")
    assert (new["startTime"], new["metadata"]) == (z(berlin(14)), {"crmId": "A-17", "stage": "customer"})
    assert new["cancellationReason"] == "Clash"  # Cal.com keeps the reschedule reason there
    previous = Booking.objects.get(pk=old["id"])
    assert (previous.status, previous.rescheduled, previous.start_time) == (BookingStatus.CANCELLED, True, berlin(10))
    assert Booking.objects.get(pk=new["id"]).rescheduled_from_id == old["id"]

    [delivery] = WebhookDelivery.objects.all()  # no BOOKING_CANCELLED for the old one, as in Cal.com
    assert delivery.trigger_event == WebhookTrigger.BOOKING_RESCHEDULED
    assert (delivery.payload["uid"], delivery.payload["rescheduleUid"]) == (new["uid"], old["uid"])
    assert (delivery.payload["rescheduleStartTime"], delivery.payload["startTime"]) == (z(berlin(10)), z(berlin(14)))
    triggers = WebhookScheduledTrigger.objects.values_list("booking_id", "trigger_event", "start_after")
    assert sorted(triggers) == [
        (new["id"], WebhookTrigger.MEETING_ENDED, berlin(14, 30)),
        (new["id"], WebhookTrigger.MEETING_STARTED, berlin(14)),
    ]

    listed = api_client.get("/v1/bookings", **bearer(key)).json()["bookings"]
    assert [(item["id"], item["status"], item["rescheduled"], item["fromReschedule"]) for item in listed] == [
        (old["id"], "CANCELLED", True, None),
        (new["id"], "ACCEPTED", False, old["uid"]),
    ]


def test_rescheduling_into_the_bookings_own_time_works(api_client, key, organizer):
    event_type = EventTypeFactory(owner=organizer, length=30, slot_interval=15)
    old = book(api_client, key, event_type, berlin(10))
    response = api_client.post(
        "/v1/bookings", v1_body(event_type, berlin(10, 15), rescheduleUid=old["uid"]), format="json", **bearer(key)
    )
    assert response.status_code == 200, response.json()
    assert response.json()["startTime"] == z(berlin(10, 15))
    assert Booking.objects.get(pk=old["id"]).status == BookingStatus.CANCELLED


def test_rescheduling_onto_another_booking_is_a_409_that_changes_nothing(api_client, key, organizer, event_type):
    old = book(api_client, key, event_type, berlin(10))
    book(api_client, key, event_type, berlin(14))
    previous = Booking.objects.get(pk=old["id"])
    before, written_before = snapshot(previous), written()
    response = api_client.post(
        "/v1/bookings", v1_body(event_type, berlin(14), rescheduleUid=old["uid"]), format="json", **bearer(key)
    )
    assert response.status_code == 409
    assert (snapshot(previous), written()) == (before, written_before)


@pytest.mark.parametrize("status", [BookingStatus.CANCELLED, BookingStatus.REJECTED])
def test_rescheduling_a_finished_booking_is_a_409_that_writes_nothing(api_client, key, organizer, event_type, status):
    old = make_booking(organizer, event_type, berlin(10), status=status)
    before = written()
    response = api_client.post(
        "/v1/bookings", v1_body(event_type, berlin(14), rescheduleUid=old.uid), format="json", **bearer(key)
    )
    assert response.status_code == 409
    assert written() == before


@pytest.mark.parametrize("whose", ["unknown", "someone else's"])
def test_reschedule_uid_the_caller_cannot_see_is_a_404_that_writes_nothing(api_client, key, event_type, whose):
    uid = "does-not-exist" if whose == "unknown" else BookingFactory().uid
    before = written()
    response = api_client.post(
        "/v1/bookings", v1_body(event_type, berlin(14), rescheduleUid=uid), format="json", **bearer(key)
    )
    assert response.status_code == 404
    assert response.json()["code"] == "not_found"
    assert written() == before


def test_reschedule_uid_of_another_event_type_is_a_400_that_writes_nothing(api_client, key, organizer, event_type):
    other = EventTypeFactory(owner=organizer, length=30)
    old = make_booking(organizer, event_type, berlin(10))
    before = written()
    response = api_client.post(
        "/v1/bookings", v1_body(other, berlin(14), rescheduleUid=old.uid), format="json", **bearer(key)
    )
    assert response.status_code == 400
    assert "eventTypeId" in response.json()["errors"]
    assert written() == before
    assert snapshot(old)[0] == BookingStatus.ACCEPTED


# --- this service's reschedule call -------------------------------------------------------------


def test_reschedule_endpoint_copies_the_booking_to_the_new_time(api_client, key, organizer, event_type, webhook):
    old = book(
        api_client,
        key,
        event_type,
        berlin(10),
        guests=["alan@example.org"],
        customInputs=[{"label": "Company", "value": "Navy"}],
        language="fr",
    )
    WebhookDelivery.objects.all().delete()
    response = api_client.post(
        f"/v1/bookings/{old['id']}/reschedule",
        {"start": berlin(14).isoformat(), "end": berlin(14, 30).isoformat(), "rescheduleReason": "Clash"},
        format="json",
        **bearer(key),
    )
    assert response.status_code == 200, response.json()
    new = response.json()["booking"]
    assert response["Location"].endswith(f"/v1/bookings/{new['id']}")
    assert (new["fromReschedule"], new["startTime"], new["iCalSequence"]) == (old["uid"], z(berlin(14)), 1)
    same = ("title", "description", "location", "responses", "customInputs", "metadata", "userId", "eventTypeId")
    assert {name: new[name] for name in same} == {name: old[name] for name in same}
    strip = [{k: v for k, v in attendee.items() if k != "id"} for attendee in new["attendees"]]
    assert strip == [{k: v for k, v in attendee.items() if k != "id"} for attendee in old["attendees"]]
    assert Booking.objects.get(pk=old["id"]).rescheduled is True
    assert list(WebhookDelivery.objects.values_list("trigger_event", flat=True)) == [WebhookTrigger.BOOKING_RESCHEDULED]


def test_a_pending_booking_rescheduled_stays_pending_and_is_requested(api_client, key, organizer, webhook):
    event_type = EventTypeFactory(owner=organizer, requires_confirmation=True)
    old = book(api_client, key, event_type, berlin(10))
    WebhookDelivery.objects.all().delete()
    response = api_client.post(
        f"/bookings/{old['id']}/reschedule", {"start": berlin(14).isoformat()}, format="json", **bearer(key)
    )
    assert response.status_code == 200
    assert response.json()["booking"]["status"] == "PENDING"
    [delivery] = WebhookDelivery.objects.all()
    assert (delivery.trigger_event, delivery.payload["rescheduleUid"]) == (WebhookTrigger.BOOKING_REQUESTED, old["uid"])


@pytest.mark.parametrize(
    "body",
    [{}, {"start": "tomorrow"}, {"start": "2030-01-01T10:00:00Z", "startTime": "x"}, {"start": None}],
)
def test_reschedule_endpoint_with_a_bad_body_is_a_400_that_changes_nothing(
    api_client, key, organizer, event_type, body
):
    old = make_booking(organizer, event_type, berlin(10))
    before, written_before = snapshot(old), written()
    response = api_client.post(f"/v1/bookings/{old.pk}/reschedule", body, format="json", **bearer(key))
    assert response.status_code == 400
    assert (snapshot(old), written()) == (before, written_before)


def test_reschedule_endpoint_end_other_than_start_plus_length_is_a_400(api_client, key, organizer, event_type):
    old = make_booking(organizer, event_type, berlin(10))
    before, written_before = snapshot(old), written()
    body = {"start": berlin(14).isoformat(), "end": berlin(15).isoformat()}
    response = api_client.post(f"/v1/bookings/{old.pk}/reschedule", body, format="json", **bearer(key))
    assert response.status_code == 400
    assert "end" in response.json()["errors"]
    assert (snapshot(old), written()) == (before, written_before)


def test_reschedule_endpoint_refuses_what_it_cannot_move(api_client, key, organizer, event_type):
    cancelled = make_booking(organizer, event_type, berlin(10), status=BookingStatus.CANCELLED)
    taken = make_booking(organizer, event_type, berlin(14))
    active = make_booking(organizer, event_type, berlin(11))
    hidden = BookingFactory()
    before = written()
    start = {"start": berlin(14).isoformat()}
    assert (
        api_client.post(f"/v1/bookings/{cancelled.pk}/reschedule", start, format="json", **bearer(key)).status_code
        == 409
    )
    assert (
        api_client.post(f"/v1/bookings/{active.pk}/reschedule", start, format="json", **bearer(key)).status_code == 409
    )
    assert (
        api_client.post(f"/v1/bookings/{hidden.pk}/reschedule", start, format="json", **bearer(key)).status_code == 404
    )
    assert written() == before
    assert snapshot(active)[:3] == (BookingStatus.ACCEPTED, berlin(11), False)
    assert snapshot(taken)[0] == BookingStatus.ACCEPTED


def test_patch_still_moves_in_place_and_bumps_the_sequence(api_client, key, organizer, event_type):
    booking = make_booking(organizer, event_type, berlin(10))
    response = api_client.patch(
        f"/v1/bookings/{booking.pk}", {"startTime": berlin(14).isoformat()}, format="json", **bearer(key)
    )
    assert response.status_code == 200
    moved = response.json()["booking"]
    assert (moved["id"], moved["uid"], moved["iCalSequence"], moved["fromReschedule"]) == (
        booking.pk,
        booking.uid,
        1,
        None,
    )
    assert Booking.objects.count() == 1


# --- list and detail ----------------------------------------------------------------------------


def test_list_and_detail_give_the_same_keys_and_values(api_client, key, organizer, event_type):
    old = book(api_client, key, event_type, berlin(10), guests=["alan@example.org"], smsReminderNumber="+491")
    new = api_client.post(
        f"/v1/bookings/{old['id']}/reschedule", {"start": berlin(14).isoformat()}, format="json", **bearer(key)
    ).json()["booking"]
    listed = api_client.get("/v1/bookings", **bearer(key)).json()["bookings"]
    for item in (old, new):
        detail = api_client.get(f"/v1/bookings/{item['id']}", **bearer(key)).json()["booking"]
        [in_list] = [booking for booking in listed if booking["id"] == item["id"]]
        assert in_list == detail
        assert {
            "responses",
            "customInputs",
            "smsReminderNumber",
            "rescheduled",
            "fromReschedule",
            "cancelledBy",
            "iCalSequence",
        } <= set(detail)
    assert set(in_list) == set(new)


# --- replays of the integrations' booking calls -------------------------------------------------


@pytest.mark.parametrize("prefix", ["/v1", ""])
def test_pipedream_create_booking(api_client, key, event_type, prefix):
    # Pipedream components/cal_com/actions/create-booking/create-booking.mjs (through
    # components/cal_com/cal_com.app.mjs: POST bookings, apiKey in the query string). It reads
    # `response.id` for its summary and treats any 2xx as success.
    body = {
        "eventTypeId": event_type.pk,
        "name": "Grace Hopper",
        "email": "grace@example.org",
        "title": "Intro call",
        "start": berlin(10).astimezone(UTC).replace(tzinfo=None).isoformat(),
        "end": berlin(10, 30).astimezone(UTC).replace(tzinfo=None).isoformat(),
        "recurringCount": 1,
        "language": "en",
        "timeZone": "Europe/Berlin",
        "location": "",
        "customInputs": [],
        "metadata": {},
    }
    response = api_client.post(f"{prefix}/bookings?apiKey={key}", body, format="json")
    assert response.status_code == 200, response.json()
    assert isinstance(response.json()["id"], int)
    assert Booking.objects.get(pk=response.json()["id"]).title == "Intro call"


@pytest.mark.parametrize("prefix", ["/v1", ""])
def test_pipedream_delete_booking(api_client, key, organizer, event_type, prefix):
    # Pipedream components/cal_com/actions/delete-booking/delete-booking.mjs (through
    # components/cal_com/cal_com.app.mjs: DELETE bookings/{bookingId}, apiKey in the query string,
    # no body). It returns the answer as it is and treats any 2xx as success.
    booking = make_booking(organizer, event_type, berlin(10))
    response = api_client.delete(f"{prefix}/bookings/{booking.pk}?apiKey={key}")
    assert response.status_code == 200
    assert response.json()["message"] == "Booking successfully cancelled."
    assert Booking.objects.get(pk=booking.pk).status == BookingStatus.CANCELLED


@pytest.mark.parametrize("prefix", ["/v1", ""])
def test_v1_reference_script_reschedules_with_reschedule_uid(api_client, key, organizer, event_type, prefix):
    # Cal.com apps/api/v1/pages/api/bookings/_post.ts (its documented `rescheduleUid`): a script books,
    # then books again with the first booking's `uid` and reads the new `id`, `uid` and `startTime`.
    first = api_client.post(f"{prefix}/bookings?apiKey={key}", v1_body(event_type, berlin(10)), format="json")
    assert first.status_code == 200
    again = api_client.post(
        f"{prefix}/bookings?apiKey={key}",
        v1_body(event_type, berlin(11), rescheduleUid=first.json()["uid"]),
        format="json",
    )
    assert again.status_code == 200, again.json()
    assert isinstance(again.json()["id"], int) and isinstance(again.json()["uid"], str)
    assert again.json()["uid"] != first.json()["uid"]
    assert again.json()["startTime"] == z(berlin(11))


@pytest.mark.django_db(transaction=True)
def test_a_reschedule_onto_an_overlap_only_the_database_sees_is_a_409_that_keeps_the_old_booking(
    organizer, key, event_type
):
    """The rival is not yet committed when the slot is checked, so the request cancels the old
    booking and inserts the new one, which waits for the rival and then breaks the exclusion
    constraint: the 409 rolls the cancellation back too."""
    old = make_booking(organizer, event_type, berlin(10))
    responses = []

    def reschedule_in_another_connection():
        try:
            body = {"start": berlin(14).isoformat()}
            responses.append(APIClient().post(f"/v1/bookings/{old.pk}/reschedule", body, format="json", **bearer(key)))
        finally:
            connection.close()

    request = threading.Thread(target=reschedule_in_another_connection)
    with transaction.atomic():
        rival = make_booking(organizer, None, berlin(14))
        request.start()
        wait_for_a_blocked_transaction("the new booking's INSERT to wait for the rival")
    request.join(30)

    [response] = responses
    assert response.status_code == 409
    assert response.json()["code"] == "conflict"
    assert snapshot(old)[:3] == (BookingStatus.ACCEPTED, berlin(10), False)
    assert sorted(Booking.objects.values_list("pk", flat=True)) == sorted([old.pk, rival.pk])
