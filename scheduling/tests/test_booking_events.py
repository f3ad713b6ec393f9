"""Each step of the booking lifecycle emits exactly its webhook event, with the payload shape that
docs/webhook-payloads.md documents (the examples there are parsed and compared)."""

import json
import re
from datetime import date, datetime, time, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from django.utils import timezone

from accounts.tests.factories import ApiKeyFactory, UserFactory
from payments.models import Payment
from payments.services import payment_mark_paid, payment_mark_refunded
from scheduling.models import BookingStatus
from scheduling.payloads import payload_keys
from scheduling.tests.factories import BookingFactory, EventTypeFactory
from tests.support.credentials import bearer
from webhooks.models import Webhook, WebhookDelivery, WebhookScheduledTrigger, WebhookTrigger
from webhooks.scheduled import fire_due_scheduled_triggers
from webhooks.tests.factories import EVERY_TRIGGER, WebhookFactory

pytestmark = pytest.mark.django_db

BERLIN = ZoneInfo("Europe/Berlin")
DOCS = Path(__file__).resolve().parents[2] / "docs" / "webhook-payloads.md"


def documented_examples() -> dict[str, dict]:
    text = DOCS.read_text()
    examples = {}
    for trigger, body in re.findall(r"^### (\w+)\n.*?```json\n(.*?)\n```", text, flags=re.S | re.M):
        envelope = json.loads(body)
        assert envelope["triggerEvent"] == trigger
        examples[trigger] = envelope["payload"]
    return examples


FREE_FORM = ("metadata", "responses", "userFieldsResponses", "customInputs")


def shape(value, key: str = ""):
    """Keys all the way down; leaves reduced to their JSON type (metadata and answers are free-form)."""
    if key in FREE_FORM:
        return "object"
    if isinstance(value, dict):
        return {name: shape(item, name) for name, item in value.items()}
    if isinstance(value, list):
        return [shape(value[0])] if value else []
    return None if value is None else type(value).__name__


def assert_matches_documentation(trigger: str, payload: dict) -> None:
    """Payload and example have every key the trigger always sends and none it never sends; the
    keys both have (those sent only when they apply may differ) have the same shape."""
    example = documented_examples()[trigger]
    required, allowed = set(payload_keys(trigger, optional=False)), set(payload_keys(trigger))
    assert required <= set(payload) <= allowed
    assert required <= set(example) <= allowed
    common = set(payload) & set(example)
    assert shape({name: payload[name] for name in common}) == shape({name: example[name] for name in common})
    assert payload["status"] == example["status"]


def monday_ahead(weeks: int = 2) -> date:
    today = timezone.now().astimezone(BERLIN).date()
    return today + timedelta(days=(7 - today.weekday()) % 7 + 7 * weeks)


def berlin(hour: int, minute: int = 0) -> datetime:
    return datetime.combine(monday_ahead(), time(hour, minute), tzinfo=BERLIN)


@pytest.fixture
def organizer():
    return UserFactory(name="Ada Lovelace", time_zone="Europe/Berlin")


@pytest.fixture
def key(organizer):
    return ApiKeyFactory(user=organizer).raw_key


@pytest.fixture
def webhook(organizer):
    return WebhookFactory(user=organizer, event_triggers=EVERY_TRIGGER)


class Outbox:
    """The deliveries written since the last look."""

    def __init__(self):
        self.seen = 0

    def new(self) -> list[WebhookDelivery]:
        deliveries = list(WebhookDelivery.objects.filter(pk__gt=self.seen).order_by("id"))
        if deliveries:
            self.seen = deliveries[-1].pk
        return deliveries

    def triggers(self) -> list[str]:
        return [delivery.trigger_event for delivery in self.new()]


@pytest.fixture
def outbox():
    return Outbox()


def book(api_client, key, event_type, start: datetime, **extra):
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
    return api_client.post("/v1/bookings", body, format="json", **bearer(key))


def test_booking_created_emits_booking_created_with_the_documented_payload(api_client, key, organizer, webhook, outbox):
    event_type = EventTypeFactory(owner=organizer, slug="intro-call", title="Intro call")
    response = book(api_client, key, event_type, berlin(10))
    assert response.status_code == 200
    [delivery] = outbox.new()
    assert delivery.trigger_event == WebhookTrigger.BOOKING_CREATED
    assert_matches_documentation(WebhookTrigger.BOOKING_CREATED, delivery.payload)
    booking = response.json()
    payload = delivery.payload
    assert {name: payload[name] for name in ("type", "title", "startTime", "endTime", "uid", "bookingId")} == {
        "type": "intro-call",
        "title": "Intro call between Ada Lovelace and Grace Hopper",
        "startTime": booking["startTime"],
        "endTime": booking["endTime"],
        "uid": booking["uid"],
        "bookingId": booking["id"],
    }
    assert payload["organizer"]["id"] == organizer.pk and payload["organizer"]["timeZone"] == "Europe/Berlin"
    assert [(person["name"], person["email"]) for person in payload["attendees"]] == [
        ("Grace Hopper", "grace@example.org")
    ]
    assert (payload["status"], payload["eventTypeId"], payload["price"], payload["currency"]) == (
        "ACCEPTED",
        event_type.pk,
        0,
        "usd",
    )
    assert payload["location"] == "https://meet.example.com/ada"
    assert payload["metadata"] == {"crmId": "A-17", "videoCallUrl": "https://meet.example.com/ada"}
    assert not {"rescheduleUid", "cancellationReason"} & set(payload)
    scheduled = WebhookScheduledTrigger.objects.filter(booking_id=booking["id"])
    assert sorted(scheduled.values_list("trigger_event", flat=True)) == ["MEETING_ENDED", "MEETING_STARTED"]


def test_booking_needing_confirmation_emits_booking_requested_only(api_client, key, organizer, webhook, outbox):
    event_type = EventTypeFactory(owner=organizer, requires_confirmation=True)
    response = book(api_client, key, event_type, berlin(10))
    [delivery] = outbox.new()
    assert delivery.trigger_event == WebhookTrigger.BOOKING_REQUESTED
    assert_matches_documentation(WebhookTrigger.BOOKING_REQUESTED, delivery.payload)
    assert not WebhookScheduledTrigger.objects.filter(booking_id=response.json()["id"]).exists()


def test_confirming_emits_booking_created_and_schedules_the_meeting(api_client, key, organizer, webhook, outbox):
    booking = BookingFactory(
        organizer=organizer, start_time=berlin(10), end_time=berlin(10, 30), status=BookingStatus.PENDING
    )
    response = api_client.patch(f"/v1/bookings/{booking.pk}", {"status": "ACCEPTED"}, format="json", **bearer(key))
    assert response.status_code == 200
    [delivery] = outbox.new()
    assert delivery.trigger_event == WebhookTrigger.BOOKING_CREATED
    assert_matches_documentation(WebhookTrigger.BOOKING_CREATED, delivery.payload)
    assert WebhookScheduledTrigger.objects.filter(booking=booking).count() == 2


def test_rejecting_emits_booking_rejected(api_client, key, organizer, webhook, outbox):
    booking = BookingFactory(
        organizer=organizer, start_time=berlin(10), end_time=berlin(10, 30), status=BookingStatus.PENDING
    )
    api_client.patch(f"/v1/bookings/{booking.pk}", {"status": "REJECTED"}, format="json", **bearer(key))
    [delivery] = outbox.new()
    assert delivery.trigger_event == WebhookTrigger.BOOKING_REJECTED
    assert_matches_documentation(WebhookTrigger.BOOKING_REJECTED, delivery.payload)


def test_rescheduling_emits_booking_rescheduled_with_the_previous_time_and_moves_triggers(
    api_client, key, organizer, webhook, outbox
):
    event_type = EventTypeFactory(owner=organizer)
    booking_id = book(api_client, key, event_type, berlin(10)).json()["id"]
    outbox.new()
    response = api_client.patch(
        f"/v1/bookings/{booking_id}", {"startTime": berlin(14).isoformat()}, format="json", **bearer(key)
    )
    assert response.status_code == 200
    [delivery] = outbox.new()
    assert delivery.trigger_event == WebhookTrigger.BOOKING_RESCHEDULED
    assert_matches_documentation(WebhookTrigger.BOOKING_RESCHEDULED, delivery.payload)
    utc = ZoneInfo("UTC")
    assert delivery.payload["rescheduleStartTime"] == berlin(10).astimezone(utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    assert delivery.payload["startTime"] == berlin(14).astimezone(utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    assert delivery.payload["rescheduleUid"] == delivery.payload["uid"]
    started = WebhookScheduledTrigger.objects.get(booking_id=booking_id, trigger_event="MEETING_STARTED")
    assert started.start_after == berlin(14)


def test_cancelling_emits_booking_cancelled_with_the_reason_and_removes_triggers(
    api_client, key, organizer, webhook, outbox
):
    event_type = EventTypeFactory(owner=organizer)
    booking_id = book(api_client, key, event_type, berlin(10)).json()["id"]
    outbox.new()
    api_client.delete(
        f"/v1/bookings/{booking_id}/cancel", {"cancellationReason": "Travelling"}, format="json", **bearer(key)
    )
    [delivery] = outbox.new()
    assert delivery.trigger_event == WebhookTrigger.BOOKING_CANCELLED
    assert_matches_documentation(WebhookTrigger.BOOKING_CANCELLED, delivery.payload)
    assert delivery.payload["cancellationReason"] == "Travelling"
    assert not WebhookScheduledTrigger.objects.filter(booking_id=booking_id).exists()


def test_paid_booking_emits_created_then_payment_initiated_and_marking_paid_emits_paid_once(
    api_client, key, organizer, webhook, outbox
):
    event_type = EventTypeFactory(owner=organizer, price=4500, currency="eur")
    book(api_client, key, event_type, berlin(10))
    deliveries = outbox.new()
    assert [delivery.trigger_event for delivery in deliveries] == ["BOOKING_CREATED", "BOOKING_PAYMENT_INITIATED"]
    assert_matches_documentation(WebhookTrigger.BOOKING_PAYMENT_INITIATED, deliveries[1].payload)
    assert (deliveries[1].payload["price"], deliveries[1].payload["currency"]) == (4500, "eur")

    payment = Payment.objects.get()
    payment_mark_paid(payment=payment)
    [paid] = outbox.new()
    assert paid.trigger_event == WebhookTrigger.BOOKING_PAID
    assert_matches_documentation(WebhookTrigger.BOOKING_PAID, paid.payload)
    payment_mark_paid(payment=payment)
    payment_mark_refunded(payment=payment)
    assert outbox.triggers() == []


def test_meeting_started_and_ended_carry_the_documented_payload(api_client, key, organizer, webhook, outbox):
    event_type = EventTypeFactory(owner=organizer)
    book(api_client, key, event_type, berlin(10))
    outbox.new()
    fire_due_scheduled_triggers(now=berlin(11))
    deliveries = outbox.new()
    assert sorted(delivery.trigger_event for delivery in deliveries) == ["MEETING_ENDED", "MEETING_STARTED"]
    for delivery in deliveries:
        assert_matches_documentation(delivery.trigger_event, delivery.payload)


def test_refused_booking_emits_nothing(api_client, key, organizer, webhook, outbox):
    event_type = EventTypeFactory(owner=organizer)
    assert book(api_client, key, event_type, berlin(20)).status_code == 409
    assert outbox.triggers() == []


def test_every_documented_trigger_has_an_example():
    assert set(documented_examples()) == set(EVERY_TRIGGER)


def test_a_new_booking_writes_rows_only_for_the_webhooks_subscribed_to_each_trigger(api_client, key, organizer, outbox):
    event_type = EventTypeFactory(owner=organizer)
    created_only = WebhookFactory(user=organizer, event_triggers=[WebhookTrigger.BOOKING_CREATED])
    started_only = WebhookFactory(user=None, event_type=event_type, event_triggers=[WebhookTrigger.MEETING_STARTED])
    everything = WebhookFactory(user=organizer, event_triggers=EVERY_TRIGGER)
    WebhookFactory(user=organizer, event_triggers=EVERY_TRIGGER, active=False)
    WebhookFactory(user=organizer, event_triggers=[WebhookTrigger.BOOKING_CANCELLED])
    WebhookFactory(event_triggers=EVERY_TRIGGER)  # someone else's

    response = book(api_client, key, event_type, berlin(10))

    assert response.status_code == 200
    deliveries = outbox.new()
    assert [(delivery.webhook_id, delivery.trigger_event) for delivery in deliveries] == [
        (created_only.pk, WebhookTrigger.BOOKING_CREATED),
        (everything.pk, WebhookTrigger.BOOKING_CREATED),
    ]
    assert deliveries[0].payload == deliveries[1].payload
    assert [(person["name"], person["email"], person["timeZone"]) for person in deliveries[0].payload["attendees"]] == [
        ("Grace Hopper", "grace@example.org", "America/New_York")
    ]
    scheduled = WebhookScheduledTrigger.objects.filter(booking_id=response.json()["id"])
    assert sorted(scheduled.values_list("webhook_id", "trigger_event", "start_after")) == sorted(
        [
            (started_only.pk, WebhookTrigger.MEETING_STARTED, berlin(10)),
            (everything.pk, WebhookTrigger.MEETING_STARTED, berlin(10)),
            (everything.pk, WebhookTrigger.MEETING_ENDED, berlin(10, 30)),
        ]
    )


def test_rescheduling_moves_meeting_rows_in_place_and_drops_those_no_longer_subscribed(
    api_client, key, organizer, webhook
):
    event_type = EventTypeFactory(owner=organizer)
    leaving = WebhookFactory(user=organizer, event_triggers=[WebhookTrigger.MEETING_STARTED])
    booking_id = book(api_client, key, event_type, berlin(10)).json()["id"]
    rows = WebhookScheduledTrigger.objects.filter(booking_id=booking_id)
    before = {(row.webhook_id, row.trigger_event): row.pk for row in rows}
    # Unsubscribed behind the service's back, which would have removed its rows at once.
    Webhook.objects.filter(pk=leaving.pk).update(event_triggers=[WebhookTrigger.BOOKING_CREATED])

    response = api_client.patch(
        f"/v1/bookings/{booking_id}", {"startTime": berlin(14).isoformat()}, format="json", **bearer(key)
    )

    assert response.status_code == 200
    assert sorted(rows.values_list("id", "webhook_id", "trigger_event", "start_after")) == sorted(
        [
            (before[webhook.pk, "MEETING_STARTED"], webhook.pk, "MEETING_STARTED", berlin(14)),
            (before[webhook.pk, "MEETING_ENDED"], webhook.pk, "MEETING_ENDED", berlin(14, 30)),
        ]
    )


def test_rescheduling_by_uid_emits_rescheduled_for_the_new_booking_and_no_cancellation(
    api_client, key, organizer, webhook, outbox
):
    """Cal.com's reschedule: the new booking's BOOKING_RESCHEDULED names the old one; the old one,
    cancelled with `rescheduled=True`, gets no BOOKING_CANCELLED; the meeting triggers move."""
    event_type = EventTypeFactory(owner=organizer)
    old = book(api_client, key, event_type, berlin(10)).json()
    outbox.new()

    response = book(api_client, key, event_type, berlin(14), rescheduleUid=old["uid"])

    assert response.status_code == 200, response.json()
    new = response.json()
    [delivery] = outbox.new()
    assert delivery.trigger_event == WebhookTrigger.BOOKING_RESCHEDULED
    assert_matches_documentation(WebhookTrigger.BOOKING_RESCHEDULED, delivery.payload)
    utc = ZoneInfo("UTC")
    assert (delivery.payload["bookingId"], delivery.payload["uid"]) == (new["id"], new["uid"])
    assert delivery.payload["rescheduleUid"] == old["uid"]
    assert delivery.payload["rescheduleStartTime"] == berlin(10).astimezone(utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    assert not WebhookScheduledTrigger.objects.filter(booking_id=old["id"]).exists()
    assert WebhookScheduledTrigger.objects.get(booking_id=new["id"], trigger_event="MEETING_STARTED").start_after == (
        berlin(14)
    )
