"""POST /v2/bookings/{uid}/mark-absent and POST /v2/bookings/{uid}/attendees: Cal.com's bodies and
answers, who may call them, the outbox rows (BOOKING_NO_SHOW_UPDATED for attendees, nothing for a
new attendee), and every refusal as a v2 error that changes nothing."""

from datetime import timedelta

import pytest
from django.utils import timezone

from accounts.tests.factories import UserFactory
from calv2.tests.helpers import V2Client, assert_error
from scheduling.models import Attendee, Booking, BookingStatus
from scheduling.payloads import booking_payload
from scheduling.services.bookings import MAX_ATTENDEES
from scheduling.tests.factories import BookingFactory
from webhooks.models import WebhookDelivery, WebhookTrigger
from webhooks.tests.factories import WebhookFactory

pytestmark = pytest.mark.django_db

VERSION = "2024-08-13"


def _started_booking(organizer, **kwargs):
    start = (timezone.now() - timedelta(minutes=10)).replace(microsecond=0)
    return BookingFactory(
        organizer=organizer,
        start_time=start,
        end_time=start + timedelta(minutes=30),
        attendees=[
            {"name": "Ada Lovelace", "email": "ada@example.org"},
            {"name": "Alan Turing", "email": "alan@example.org"},
        ],
        **kwargs,
    )


@pytest.fixture
def no_show_webhook(owner):
    return WebhookFactory(user=owner, event_triggers=[WebhookTrigger.BOOKING_NO_SHOW_UPDATED])


def _state(booking):
    booking.refresh_from_db()
    return booking.no_show_host, sorted(booking.attendees.values_list("email", "no_show"))


# --- mark-absent ------------------------------------------------------------------------------


def test_mark_absent_sets_host_and_attendees_and_announces_the_attendees(v2, owner, no_show_webhook):
    booking = _started_booking(owner)
    body = {"host": True, "attendees": [{"email": "ADA@example.org", "absent": True}], "unknownField": 1}
    response = v2.call("POST", f"/v2/bookings/{booking.uid}/mark-absent", body, version=VERSION)
    assert response.status_code == 200, response.content
    data = response.json()["data"]
    assert data["uid"] == booking.uid and data["absentHost"] is True
    assert {attendee["email"]: attendee["absent"] for attendee in data["attendees"]} == {
        "ada@example.org": True,
        "alan@example.org": False,
    }
    assert _state(booking) == (True, [("ada@example.org", True), ("alan@example.org", False)])
    [delivery] = WebhookDelivery.objects.filter(webhook=no_show_webhook)
    assert delivery.trigger_event == "BOOKING_NO_SHOW_UPDATED"
    assert delivery.payload == {
        "message": "ada@example.org marked as no-show",
        "attendees": [{"email": "ada@example.org", "noShow": True}],
        "bookingUid": booking.uid,
        "bookingId": booking.pk,
    }


def test_mark_absent_can_clear_the_flags_and_names_several_attendees_in_one_message(v2, owner, no_show_webhook):
    booking = _started_booking(owner)
    Booking.objects.filter(pk=booking.pk).update(no_show_host=True)
    booking.attendees.update(no_show=True)
    body = {
        "host": False,
        "attendees": [{"email": "ada@example.org", "absent": False}, {"email": "alan@example.org", "absent": False}],
    }
    response = v2.call("POST", f"/v2/bookings/{booking.uid}/mark-absent", body, version=VERSION)
    assert response.status_code == 200, response.content
    assert _state(booking) == (False, [("ada@example.org", False), ("alan@example.org", False)])
    [delivery] = WebhookDelivery.objects.filter(webhook=no_show_webhook)
    assert delivery.payload["message"] == "No-show status updated"
    assert delivery.payload["attendees"] == [
        {"email": "ada@example.org", "noShow": False},
        {"email": "alan@example.org", "noShow": False},
    ]


def test_marking_only_the_host_sends_no_webhook(v2, owner, no_show_webhook):
    booking = _started_booking(owner)
    response = v2.call("POST", f"/v2/bookings/{booking.uid}/mark-absent", {"host": True}, version=VERSION)
    assert response.status_code == 200 and response.json()["data"]["absentHost"] is True
    assert not WebhookDelivery.objects.exists()


def test_an_absent_attendee_shows_in_the_booking_and_in_the_meeting_payload(v2, owner):
    booking = _started_booking(owner)
    body = {"attendees": [{"email": "alan@example.org", "absent": True}]}
    v2.call("POST", f"/v2/bookings/{booking.uid}/mark-absent", body)
    got = v2.call("GET", f"/v2/bookings/{booking.uid}", version=VERSION).json()["data"]
    assert [attendee["absent"] for attendee in got["attendees"]] == [False, True]
    payload = booking_payload(Booking.objects.get(pk=booking.pk), trigger="MEETING_ENDED")
    assert [attendee["noShow"] for attendee in payload["attendees"]] == [False, True]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({}, None),
        ({"attendees": []}, "attendees"),
        ({"host": "yes"}, "host"),
        ({"attendees": [{"email": "ada@example.org"}]}, "attendees[0].absent"),
        ({"attendees": [{"email": "not-an-email", "absent": True}]}, "attendees[0].email"),
        ({"attendees": [{"email": "nobody@example.org", "absent": True}]}, "attendees[0].email"),
        (
            {"attendees": [{"email": "ada@example.org", "absent": True}, {"email": "Ada@example.org", "absent": 0}]},
            "attendees[1].absent",
        ),
        (
            {"attendees": [{"email": "ada@example.org", "absent": True}, {"email": "Ada@example.org", "absent": True}]},
            "attendees[1].email",
        ),
        ({"host": True, "attendees": [{"email": "nobody@example.org", "absent": True}]}, "attendees[0].email"),
    ],
)
def test_mark_absent_bad_input_is_a_v2_400_and_changes_nothing(v2, owner, no_show_webhook, body, field):
    booking = _started_booking(owner)
    before = _state(booking)
    response = v2.call("POST", f"/v2/bookings/{booking.uid}/mark-absent", body, version=VERSION)
    error = assert_error(response, 400, "BadRequestException")
    if field is not None:
        assert field in error["error"]["details"]["errors"], error
    assert _state(booking) == before
    assert not WebhookDelivery.objects.exists()


def test_mark_absent_before_the_meeting_starts_is_a_400(v2, owner):
    booking = BookingFactory(organizer=owner, attendees=[{"email": "ada@example.org"}])
    response = v2.call("POST", f"/v2/bookings/{booking.uid}/mark-absent", {"host": True}, version=VERSION)
    error = assert_error(response, 400, "BadRequestException")
    assert "once the meeting has started" in error["error"]["message"]
    assert _state(booking) == (False, [("ada@example.org", False)])


@pytest.mark.parametrize("status", [BookingStatus.CANCELLED, BookingStatus.REJECTED, BookingStatus.PENDING])
def test_mark_absent_on_a_booking_that_is_not_accepted_is_a_409(v2, owner, status):
    booking = _started_booking(owner, status=status)
    response = v2.call("POST", f"/v2/bookings/{booking.uid}/mark-absent", {"host": True}, version=VERSION)
    assert_error(response, 409, "ConflictException")
    assert _state(booking)[0] is False


def test_an_attendee_may_not_mark_absences_and_a_stranger_does_not_see_the_booking(api_client, owner):
    booking = _started_booking(owner)
    attendee_user = UserFactory(email="ada@example.org")
    body = {"attendees": [{"email": "alan@example.org", "absent": True}]}
    as_attendee = V2Client(api_client, attendee_user).call("POST", f"/v2/bookings/{booking.uid}/mark-absent", body)
    assert_error(as_attendee, 403, "ForbiddenException")
    as_stranger = V2Client(api_client, UserFactory()).call("POST", f"/v2/bookings/{booking.uid}/mark-absent", body)
    assert_error(as_stranger, 404, "NotFoundException")
    assert _state(booking) == (False, [("ada@example.org", False), ("alan@example.org", False)])


# --- add attendee -----------------------------------------------------------------------------


def test_add_attendee_answers_201_with_the_attendee_and_sends_no_webhook(v2, owner):
    WebhookFactory(user=owner, event_triggers=list(WebhookTrigger.values))
    booking = BookingFactory(organizer=owner, attendees=[{"name": "Ada Lovelace", "email": "ada@example.org"}])
    body = {"name": "Grace Hopper", "email": "grace@example.org", "timeZone": "Europe/Berlin", "language": "de"}
    response = v2.call("POST", f"/v2/bookings/{booking.uid}/attendees", {**body, "extra": True}, version=VERSION)
    assert response.status_code == 201, response.content
    added = Attendee.objects.get(email="grace@example.org")
    assert response.json() == {
        "status": "success",
        "data": {
            "id": added.pk,
            "bookingId": booking.pk,
            "name": "Grace Hopper",
            "email": "grace@example.org",
            "displayEmail": "grace@example.org",
            "timeZone": "Europe/Berlin",
            "language": "de",
            "absent": False,
        },
    }
    got = v2.call("GET", f"/v2/bookings/{booking.uid}", version=VERSION).json()["data"]
    assert [attendee["email"] for attendee in got["attendees"]] == ["ada@example.org", "grace@example.org"]
    assert not WebhookDelivery.objects.exists()


def test_an_attendee_may_add_another_attendee(api_client, owner):
    booking = BookingFactory(organizer=owner, attendees=[{"email": "ada@example.org"}])
    attendee_user = V2Client(api_client, UserFactory(email="ada@example.org"))
    body = {"name": "Alan Turing", "email": "alan@example.org", "timeZone": "Europe/London"}
    response = attendee_user.call("POST", f"/v2/bookings/{booking.uid}/attendees", body, version=VERSION)
    assert response.status_code == 201, response.content
    assert booking.attendees.count() == 2


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"email": "not-an-email"}, "email"),
        ({"timeZone": "Mars/Olympus"}, "timeZone"),
        ({"name": None}, "name"),
        ({"name": "x" * 201}, "name"),
        ({"phoneNumber": "1" * 51}, "phoneNumber"),
    ],
)
def test_add_attendee_bad_input_is_a_v2_400_and_adds_nothing(v2, owner, change, field):
    booking = BookingFactory(organizer=owner)
    body = {"name": "Grace Hopper", "email": "grace@example.org", "timeZone": "Europe/Berlin", **change}
    response = v2.call("POST", f"/v2/bookings/{booking.uid}/attendees", body, version=VERSION)
    error = assert_error(response, 400, "BadRequestException")
    assert field in error["error"]["details"]["errors"], error
    assert booking.attendees.count() == 1


def test_add_attendee_refusals_are_v2_errors_and_add_nothing(api_client, v2, owner):
    booking = BookingFactory(organizer=owner, attendees=[{"email": "ada@example.org"}])
    body = {"name": "Ada", "email": "ADA@example.org", "timeZone": "Europe/London"}
    assert_error(v2.call("POST", f"/v2/bookings/{booking.uid}/attendees", body), 409, "ConflictException")
    cancelled = BookingFactory(organizer=owner, status=BookingStatus.CANCELLED)
    fresh = {**body, "email": "new@example.org"}
    assert_error(v2.call("POST", f"/v2/bookings/{cancelled.uid}/attendees", fresh), 409, "ConflictException")
    stranger = V2Client(api_client, UserFactory())
    assert_error(stranger.call("POST", f"/v2/bookings/{booking.uid}/attendees", fresh), 404, "NotFoundException")
    assert_error(v2.call("POST", "/v2/bookings/no-such-uid/attendees", fresh), 404, "NotFoundException")
    assert Attendee.objects.filter(email="new@example.org").count() == 0
    assert booking.attendees.count() == 1


def test_a_booking_has_at_most_max_attendees(v2, owner):
    booking = BookingFactory(organizer=owner, attendees=[{} for _ in range(MAX_ATTENDEES)])
    body = {"name": "One Too Many", "email": "extra@example.org", "timeZone": "UTC"}
    error = assert_error(v2.call("POST", f"/v2/bookings/{booking.uid}/attendees", body), 409, "ConflictException")
    assert str(MAX_ATTENDEES) in error["error"]["message"]
    assert booking.attendees.count() == MAX_ATTENDEES


def test_mark_absent_works_on_an_added_attendee(v2, owner):
    booking = _started_booking(owner)
    body = {"name": "Grace Hopper", "email": "grace@example.org", "timeZone": "Europe/Berlin"}
    assert v2.call("POST", f"/v2/bookings/{booking.uid}/attendees", body).status_code == 201
    marked = {"attendees": [{"email": "grace@example.org", "absent": True}]}
    response = v2.call("POST", f"/v2/bookings/{booking.uid}/mark-absent", marked, version=VERSION)
    assert response.status_code == 200
    assert Attendee.objects.get(email="grace@example.org").no_show is True
