"""Every trigger's delivered body, as a receiver gets it over HTTP, against a JSON Schema written
from Cal.com's v2021-10-20 payload builders (docs/webhook-payloads.md): every key Cal.com always
sends is required, keys it sends only when they apply are allowed, and nothing else is."""

import json
import re
from datetime import date, datetime, time, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import jsonschema
import pytest
from django.utils import timezone
from standardwebhooks.webhooks import Webhook as StandardWebhook

from accounts.tests.factories import UserFactory
from payments.models import Payment
from payments.services import payment_mark_paid
from scheduling.tests.factories import BookingFactory, EventTypeFactory
from tests.support.credentials import auth
from webhooks.delivery import attempt_delivery
from webhooks.models import WebhookDelivery, WebhookTrigger
from webhooks.samples import sample_payload
from webhooks.scheduled import fire_due_scheduled_triggers
from webhooks.tests.factories import EVERY_TRIGGER, WebhookFactory

pytestmark = pytest.mark.django_db

BERLIN = ZoneInfo("Europe/Berlin")

# --- The schemas, from Cal.com's types (CalendarEvent, Person, EventTypeInfo, the builders' extras).

STRING = {"type": "string"}
NULLABLE_STRING = {"type": ["string", "null"]}
INTEGER = {"type": "integer"}
BOOLEAN = {"type": "boolean"}
NULL = {"type": "null"}
UTC_SECONDS = {"type": "string", "pattern": r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$"}
UTC_MILLISECONDS = {"type": "string", "pattern": r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$"}
LANGUAGE = {
    "type": "object",
    "properties": {"locale": STRING},
    "required": ["locale"],
    "additionalProperties": False,
}
ORGANIZER = {
    "type": "object",
    "properties": {
        "id": INTEGER,
        "name": STRING,
        "email": STRING,
        "username": STRING,
        "timeZone": STRING,
        "language": LANGUAGE,
        "timeFormat": {"enum": ["h:mma", "HH:mm"]},
        "utcOffset": INTEGER,
    },
    "required": ["id", "name", "email", "username", "timeZone", "language", "timeFormat", "utcOffset"],
    "additionalProperties": False,
}
ATTENDEE = {
    "type": "object",
    "properties": {
        "email": STRING,
        "name": STRING,
        "firstName": STRING,
        "lastName": STRING,
        "timeZone": STRING,
        "language": LANGUAGE,
        "utcOffset": INTEGER,
    },
    "required": ["email", "name", "firstName", "lastName", "timeZone", "language", "utcOffset"],
    "additionalProperties": False,
}
RESPONSES = {
    "type": "object",
    "additionalProperties": {
        "type": "object",
        "properties": {"label": STRING, "value": {}, "isHidden": BOOLEAN},
        "required": ["label"],
        "additionalProperties": False,
    },
}
METADATA = {
    "type": "object",
    "properties": {"videoCallUrl": STRING},
    "additionalProperties": {"type": ["string", "number", "boolean", "null"]},
}
BOOKING_PROPERTIES = {
    "bookerUrl": STRING,
    "type": STRING,
    "title": STRING,
    "description": STRING,
    "additionalNotes": STRING,
    "customInputs": {"type": "object"},
    "startTime": UTC_SECONDS,
    "endTime": UTC_SECONDS,
    "organizer": ORGANIZER,
    "responses": RESPONSES,
    "userFieldsResponses": RESPONSES,
    "attendees": {"type": "array", "items": ATTENDEE, "minItems": 1},
    "location": STRING,
    "destinationCalendar": {"type": ["array", "null"]},
    "hideCalendarNotes": BOOLEAN,
    "hideCalendarEventDetails": BOOLEAN,
    "hideOrganizerEmail": BOOLEAN,
    "requiresConfirmation": BOOLEAN,
    "eventTypeId": {"type": ["integer", "null"]},
    "seatsShowAttendees": BOOLEAN,
    "seatsPerTimeSlot": {"type": ["integer", "null"]},
    "seatsShowAvailabilityCount": BOOLEAN,
    "schedulingType": {"type": ["string", "null"]},
    "customReplyToEmail": NULLABLE_STRING,
    "disableCancelling": BOOLEAN,
    "disableRescheduling": BOOLEAN,
    "iCalUID": STRING,
    "iCalSequence": INTEGER,
    "hashedLink": NULLABLE_STRING,
    "uid": STRING,
    "bookingId": INTEGER,
    "eventTitle": NULLABLE_STRING,
    "eventDescription": NULLABLE_STRING,
    "price": INTEGER,
    "currency": {"type": "string", "pattern": "^[a-z]{3}$"},
    "length": INTEGER,
    "status": {"enum": ["ACCEPTED", "PENDING", "CANCELLED", "REJECTED"]},
    "metadata": METADATA,
}
ONLY_WHEN_THEY_APPLY = {
    WebhookTrigger.BOOKING_CANCELLED: {
        "cancellationReason": STRING,
        "cancelledBy": STRING,
        "requestReschedule": {"const": False},
    },
    WebhookTrigger.BOOKING_RESCHEDULED: {
        "rescheduleId": INTEGER,
        "rescheduleUid": STRING,
        "rescheduleStartTime": UTC_SECONDS,
        "rescheduleEndTime": UTC_SECONDS,
        "rescheduledBy": STRING,
    },
    WebhookTrigger.BOOKING_PAYMENT_INITIATED: {"paymentId": INTEGER},
    WebhookTrigger.BOOKING_PAID: {"paymentId": INTEGER},
}
MEETING_ATTENDEE = {
    "type": "object",
    "properties": {
        "id": INTEGER,
        "email": STRING,
        "name": STRING,
        "timeZone": STRING,
        "phoneNumber": NULLABLE_STRING,
        "locale": STRING,
        "bookingId": INTEGER,
        "noShow": BOOLEAN,
        "utcOffset": INTEGER,
    },
    "additionalProperties": False,
}
MEETING_ATTENDEE["required"] = list(MEETING_ATTENDEE["properties"])
MEETING_PROPERTIES = {
    "triggerEvent": {"enum": ["MEETING_STARTED", "MEETING_ENDED"]},
    "id": INTEGER,
    "uid": STRING,
    "userId": INTEGER,
    "userPrimaryEmail": STRING,
    "eventTypeId": {"type": ["integer", "null"]},
    "title": STRING,
    "description": STRING,
    "customInputs": {"type": "object"},
    "responses": RESPONSES,
    "userFieldsResponses": RESPONSES,
    "startTime": UTC_MILLISECONDS,
    "endTime": UTC_MILLISECONDS,
    "location": NULLABLE_STRING,
    "createdAt": UTC_MILLISECONDS,
    "updatedAt": UTC_MILLISECONDS,
    "status": {"enum": ["ACCEPTED", "PENDING", "CANCELLED", "REJECTED"]},
    "paid": BOOLEAN,
    "destinationCalendarId": NULL,
    "cancellationReason": NULLABLE_STRING,
    "rejectionReason": NULLABLE_STRING,
    "rescheduled": BOOLEAN,
    "fromReschedule": NULLABLE_STRING,
    "recurringEventId": NULLABLE_STRING,
    "smsReminderNumber": NULLABLE_STRING,
    "metadata": METADATA,
    "isRecorded": BOOLEAN,
    "iCalUID": STRING,
    "iCalSequence": INTEGER,
    "cancelledBy": NULLABLE_STRING,
    "rescheduledBy": NULLABLE_STRING,
    "user": {
        "type": "object",
        "properties": {"email": STRING, "name": NULLABLE_STRING, "timeZone": STRING, "username": STRING},
        "required": ["email", "name", "timeZone", "username"],
        "additionalProperties": False,
    },
    "attendees": {"type": "array", "items": MEETING_ATTENDEE},
}


NO_SHOW_PROPERTIES = {
    "message": STRING,
    "attendees": {
        "type": "array",
        "minItems": 1,
        "items": {
            "type": "object",
            "properties": {"email": STRING, "noShow": BOOLEAN},
            "required": ["email", "noShow"],
            "additionalProperties": False,
        },
    },
    "bookingUid": STRING,
    "bookingId": INTEGER,
}


TEAM = {
    "type": "object",
    "properties": {"name": STRING, "members": {"type": "array", "items": ORGANIZER}, "id": INTEGER},
    "required": ["name", "members", "id"],
    "additionalProperties": False,
}


def payload_schema(trigger: str) -> dict:
    if trigger == WebhookTrigger.BOOKING_NO_SHOW_UPDATED:
        properties, required = NO_SHOW_PROPERTIES, list(NO_SHOW_PROPERTIES)
    elif trigger in (WebhookTrigger.MEETING_STARTED, WebhookTrigger.MEETING_ENDED):
        properties, required = MEETING_PROPERTIES, list(MEETING_PROPERTIES)
    else:
        required = list(BOOKING_PROPERTIES)
        properties = {
            **BOOKING_PROPERTIES,
            "smsReminderNumber": STRING,
            "team": TEAM,  # a team booking's (scheduling/tests/test_team_bookings.py)
            **ONLY_WHEN_THEY_APPLY.get(trigger, {}),
        }
    return {"type": "object", "properties": properties, "required": required, "additionalProperties": False}


def body_schema(trigger: str) -> dict:
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {
            "triggerEvent": {"const": trigger},
            "createdAt": {"type": "string", "format": "date-time"},
            "payload": payload_schema(trigger),
        },
        "required": ["triggerEvent", "createdAt", "payload"],
        "additionalProperties": False,
    }


def assert_valid(trigger: str, body: dict) -> None:
    jsonschema.Draft202012Validator(body_schema(trigger)).validate(body)


# --- Driving the real flows and the real delivery.


def monday_ahead(weeks: int = 2) -> date:
    today = timezone.now().astimezone(BERLIN).date()
    return today + timedelta(days=(7 - today.weekday()) % 7 + 7 * weeks)


def berlin(hour: int, minute: int = 0) -> datetime:
    return datetime.combine(monday_ahead(), time(hour, minute), tzinfo=BERLIN)


@pytest.fixture
def organizer():
    return UserFactory(name="Ada Lovelace", time_zone="Europe/Berlin", locale="de", time_format=24)


@pytest.fixture
def headers(organizer):
    return auth(organizer)


@pytest.fixture
def webhook(organizer, receiver):
    return WebhookFactory(user=organizer, subscriber_url=receiver.url(), event_triggers=EVERY_TRIGGER)


class Deliveries:
    """Sends the deliveries written since the last call through the real delivery path and returns
    the bodies the receiver got, verified with the webhook's secret."""

    def __init__(self, receiver, webhook):
        self.receiver, self.webhook, self.seen = receiver, webhook, 0

    def send(self) -> list[dict]:
        deliveries = list(WebhookDelivery.objects.filter(pk__gt=self.seen).order_by("id"))
        for delivery in deliveries:
            assert attempt_delivery(delivery_id=delivery.pk).response_status == 200
            self.seen = delivery.pk
        requests = self.receiver.requests[-len(deliveries) :] if deliveries else []
        return [StandardWebhook(self.webhook.secret).verify(request.body, request.headers) for request in requests]


@pytest.fixture
def deliveries(receiver, webhook):
    return Deliveries(receiver, webhook)


def book(api_client, headers, event_type, start: datetime, **extra):
    body = {
        "eventTypeId": event_type.pk,
        "start": start.isoformat(),
        "name": "Grace Hopper",
        "email": "grace@example.org",
        "timeZone": "America/New_York",
        "location": "https://meet.example.com/ada",
        "metadata": {"crmId": "A-17"},
        **extra,
    }
    response = api_client.post("/v1/bookings", body, format="json", **headers)
    assert response.status_code == 200, response.content
    return response.json()


def test_created_rescheduled_cancelled_and_meeting_bodies_match_their_schemas(
    api_client, headers, organizer, deliveries
):
    event_type = EventTypeFactory(owner=organizer, slug="intro-call", title="Intro call", description="A first chat.")
    booking = book(api_client, headers, event_type, berlin(10))
    [created] = deliveries.send()
    assert_valid("BOOKING_CREATED", created)
    payload = created["payload"]
    assert (payload["type"], payload["eventTitle"], payload["length"], payload["bookingId"]) == (
        "intro-call",
        "Intro call",
        30,
        booking["id"],
    )
    assert payload["organizer"]["language"] == {"locale": "de"} and payload["organizer"]["timeFormat"] == "HH:mm"
    assert payload["responses"]["name"] == {"label": "your_name", "value": "Grace Hopper"}
    assert payload["responses"]["email"] == {"label": "email_address", "value": "grace@example.org"}
    assert payload["metadata"] == {"crmId": "A-17", "videoCallUrl": "https://meet.example.com/ada"}
    assert not {"cancellationReason", "rescheduleUid", "paymentId", "smsReminderNumber"} & set(payload)

    moved = api_client.patch(
        f"/v1/bookings/{booking['id']}", {"startTime": berlin(14).isoformat()}, format="json", **headers
    )
    assert moved.status_code == 200
    [rescheduled] = deliveries.send()
    assert_valid("BOOKING_RESCHEDULED", rescheduled)
    payload = rescheduled["payload"]
    utc = ZoneInfo("UTC")
    assert (payload["rescheduleId"], payload["rescheduleUid"]) == (booking["id"], booking["uid"])
    assert payload["rescheduleStartTime"] == berlin(10).astimezone(utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    assert payload["rescheduleEndTime"] == berlin(10, 30).astimezone(utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    assert payload["startTime"] == berlin(14).astimezone(utc).strftime("%Y-%m-%dT%H:%M:%SZ")

    fire_due_scheduled_triggers(now=berlin(15))
    meetings = deliveries.send()
    assert sorted(body["triggerEvent"] for body in meetings) == ["MEETING_ENDED", "MEETING_STARTED"]
    for body in meetings:
        assert_valid(body["triggerEvent"], body)
        assert body["payload"]["triggerEvent"] == body["triggerEvent"]
        assert (body["payload"]["id"], body["payload"]["uid"]) == (booking["id"], booking["uid"])
        assert body["payload"]["startTime"] == berlin(14).astimezone(utc).strftime("%Y-%m-%dT%H:%M:%S.000Z")

    cancel = api_client.delete(
        f"/v1/bookings/{booking['id']}/cancel", {"cancellationReason": "Travelling"}, format="json", **headers
    )
    assert cancel.status_code == 200
    [cancelled] = deliveries.send()
    assert_valid("BOOKING_CANCELLED", cancelled)
    assert (cancelled["payload"]["status"], cancelled["payload"]["cancellationReason"]) == ("CANCELLED", "Travelling")
    assert cancelled["payload"]["requestReschedule"] is False


def test_cancelling_without_a_reason_leaves_the_reason_out(api_client, headers, organizer, deliveries):
    event_type = EventTypeFactory(owner=organizer)
    booking = book(api_client, headers, event_type, berlin(10))
    deliveries.send()
    assert api_client.delete(f"/v1/bookings/{booking['id']}/cancel", **headers).status_code == 200
    [cancelled] = deliveries.send()
    assert_valid("BOOKING_CANCELLED", cancelled)
    assert "cancellationReason" not in cancelled["payload"]


def test_requested_and_rejected_bodies_match_their_schemas(api_client, headers, organizer, deliveries):
    event_type = EventTypeFactory(owner=organizer, requires_confirmation=True)
    booking = book(api_client, headers, event_type, berlin(10))
    [requested] = deliveries.send()
    assert_valid("BOOKING_REQUESTED", requested)
    assert (requested["payload"]["status"], requested["payload"]["requiresConfirmation"]) == ("PENDING", True)

    response = api_client.patch(f"/v1/bookings/{booking['id']}", {"status": "REJECTED"}, format="json", **headers)
    assert response.status_code == 200
    [rejected] = deliveries.send()
    assert_valid("BOOKING_REJECTED", rejected)
    assert rejected["payload"]["status"] == "REJECTED"


def test_payment_bodies_carry_the_payment_id(api_client, headers, organizer, deliveries):
    event_type = EventTypeFactory(owner=organizer, price=4500, currency="eur")
    book(api_client, headers, event_type, berlin(10))
    created, initiated = deliveries.send()
    assert_valid("BOOKING_CREATED", created)
    assert_valid("BOOKING_PAYMENT_INITIATED", initiated)
    payment = Payment.objects.get()
    assert initiated["payload"]["paymentId"] == payment.pk
    assert (initiated["payload"]["price"], initiated["payload"]["currency"]) == (4500, "eur")
    assert "paymentId" not in created["payload"]

    payment_mark_paid(payment=payment)
    [paid] = deliveries.send()
    assert_valid("BOOKING_PAID", paid)
    assert paid["payload"]["paymentId"] == payment.pk


def test_no_show_body_names_the_attendees_marked(api_client, headers, organizer, deliveries):
    event_type = EventTypeFactory(owner=organizer)
    start = timezone.now().replace(microsecond=0) - timedelta(minutes=5)
    booking = BookingFactory(
        organizer=organizer,
        event_type=event_type,
        start_time=start,
        end_time=start + timedelta(minutes=30),
        attendees=[{"email": "grace@example.org"}],
    )
    body = {"attendees": [{"email": "grace@example.org", "absent": True}]}
    response = api_client.post(f"/v2/bookings/{booking.uid}/mark-absent", body, format="json", **headers)
    assert response.status_code == 200, response.content
    [no_show] = deliveries.send()
    assert_valid("BOOKING_NO_SHOW_UPDATED", no_show)
    assert no_show["payload"] == {
        "message": "grace@example.org marked as no-show",
        "attendees": [{"email": "grace@example.org", "noShow": True}],
        "bookingUid": booking.uid,
        "bookingId": booking.pk,
    }


def test_the_test_ping_matches_the_booking_schema(api_client, headers, webhook, receiver):
    response = api_client.post(f"/v1/webhooks/{webhook.pk}/test", **headers)
    assert response.status_code == 200
    [request] = receiver.requests
    body = StandardWebhook(webhook.secret).verify(request.body, request.headers)
    schema = body_schema("BOOKING_CREATED")
    schema["properties"]["triggerEvent"] = {"const": "PING"}
    jsonschema.Draft202012Validator(schema).validate(body)


def test_a_payload_with_an_extra_or_missing_key_fails_the_schema():
    """The schemas really are strict: they would catch a key too many or too few."""
    body = {"triggerEvent": "BOOKING_CREATED", "createdAt": "2026-11-20T09:00:00Z", "payload": sample_payload()}
    assert_valid("BOOKING_CREATED", body)
    with pytest.raises(jsonschema.ValidationError):
        assert_valid("BOOKING_CREATED", {**body, "payload": {**body["payload"], "cancellationReason": None}})
    without_uid = {key: value for key, value in body["payload"].items() if key != "uid"}
    with pytest.raises(jsonschema.ValidationError):
        assert_valid("BOOKING_CREATED", {**body, "payload": without_uid})


def test_every_example_in_the_documentation_matches_its_triggers_schema():
    text = (Path(__file__).resolve().parents[2] / "docs" / "webhook-payloads.md").read_text()
    examples = re.findall(r"^### (\w+)\n.*?```json\n(.*?)\n```", text, flags=re.S | re.M)
    assert sorted(trigger for trigger, _ in examples) == sorted(EVERY_TRIGGER)
    for trigger, body in examples:
        assert_valid(trigger, json.loads(body))
