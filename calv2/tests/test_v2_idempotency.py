"""Idempotency-Key on the v2 writes (the same mechanism as v1's, core.idempotency): a retried
booking, reschedule or webhook creation runs once and gets the first answer, the v2 envelope byte
for byte, with `Idempotent-Replayed: true`; a reused or busy key is a v2 error envelope."""

import pytest

from calv2.tests.helpers import assert_error, event_type_of, free_slot
from scheduling.models import Booking, BookingStatus
from tests.support.idempotency_keys import key_held_elsewhere
from webhooks.models import Webhook, WebhookDelivery, WebhookTrigger
from webhooks.tests.factories import WebhookFactory

pytestmark = pytest.mark.django_db

VERSION = "2024-08-13"


@pytest.fixture
def event_type(owner):
    return event_type_of(owner, length=30)


@pytest.fixture
def created_webhook(owner):
    return WebhookFactory(
        user=owner, event_triggers=[WebhookTrigger.BOOKING_CREATED, WebhookTrigger.BOOKING_RESCHEDULED]
    )


def _booking_body(v2, event_type, **attendee):
    return {
        "start": free_slot(v2, event_type),
        "eventTypeId": event_type.pk,
        "attendee": {"name": "Ada Lovelace", "email": "ada@example.org", "timeZone": "Europe/London", **attendee},
    }


def _twice(v2, path, body, key="key-1", version=VERSION):
    first = v2.call("POST", path, body, version=version, HTTP_IDEMPOTENCY_KEY=key)
    again = v2.call("POST", path, body, version=version, HTTP_IDEMPOTENCY_KEY=key)
    return first, again


def _assert_replayed(first, again, status: int):
    assert first.status_code == status, first.content
    assert "Idempotent-Replayed" not in first
    assert again.status_code == status
    assert again["Idempotent-Replayed"] == "true"
    assert again.content == first.content
    assert again["Content-Type"] == first["Content-Type"] == "application/json"


@pytest.mark.parametrize("version", [VERSION, "2026-02-25", "2026-05-01"])
def test_a_retried_booking_books_once_and_gets_the_first_answer(v2, event_type, created_webhook, version):
    first, again = _twice(v2, "/v2/bookings", _booking_body(v2, event_type), version=version)
    _assert_replayed(first, again, 201)
    assert first.json()["status"] == "success"
    assert Booking.objects.count() == 1
    assert WebhookDelivery.objects.filter(webhook=created_webhook).count() == 1


def test_a_retried_reschedule_moves_once(v2, owner, event_type, created_webhook):
    booking = v2.call("POST", "/v2/bookings", _booking_body(v2, event_type), version=VERSION).json()["data"]
    body = {"start": free_slot(v2, event_type, days=14), "reschedulingReason": "Clash"}
    first, again = _twice(v2, f"/v2/bookings/{booking['uid']}/reschedule", body)
    _assert_replayed(first, again, 201)
    assert first.json()["data"]["rescheduledFromUid"] == booking["uid"]
    assert Booking.objects.count() == 2
    assert Booking.objects.filter(status=BookingStatus.ACCEPTED).count() == 1
    assert WebhookDelivery.objects.filter(trigger_event="BOOKING_RESCHEDULED").count() == 1


@pytest.mark.parametrize("path", ["/v2/webhooks", "/v2/event-types/{event_type}/webhooks"])
def test_a_retried_webhook_creation_subscribes_once(v2, event_type, path):
    body = {"subscriberUrl": "http://127.0.0.1:9/n8n", "triggers": ["BOOKING_CREATED"], "active": True}
    first, again = _twice(v2, path.format(event_type=event_type.pk), body)
    _assert_replayed(first, again, 201)
    assert first.json()["data"]["secret"]
    assert Webhook.objects.count() == 1


def test_the_key_reused_with_another_body_is_a_v2_422_and_changes_nothing(v2, event_type, created_webhook):
    body = _booking_body(v2, event_type)
    first = v2.call("POST", "/v2/bookings", body, version=VERSION, HTTP_IDEMPOTENCY_KEY="key-1")
    assert first.status_code == 201
    other = _booking_body(v2, event_type, name="Grace Hopper")
    response = v2.call("POST", "/v2/bookings", other, version=VERSION, HTTP_IDEMPOTENCY_KEY="key-1")
    error = assert_error(response, 422, "UnprocessableEntityException")
    assert error["error"]["details"]["code"] == "idempotency_key_reused"
    elsewhere = v2.call(
        "POST",
        "/v2/webhooks",
        {"subscriberUrl": "http://127.0.0.1:9/x", "triggers": ["BOOKING_CREATED"], "active": True},
        HTTP_IDEMPOTENCY_KEY="key-1",
    )
    assert_error(elsewhere, 422, "UnprocessableEntityException")
    assert Booking.objects.count() == 1
    assert WebhookDelivery.objects.count() == 1
    assert Webhook.objects.count() == 1  # the fixture's


def test_a_refused_write_is_replayed_as_the_same_v2_error(v2, event_type):
    body = {"subscriberUrl": "ftp://127.0.0.1/x", "triggers": ["BOOKING_CREATED"], "active": True}
    first, again = _twice(v2, "/v2/webhooks", body)
    assert_error(first, 400, "BadRequestException")
    replayed = assert_error(again, 400, "BadRequestException")
    assert again["Idempotent-Replayed"] == "true"
    assert replayed["error"] == first.json()["error"]
    assert not Webhook.objects.exists()


def test_a_malformed_key_is_a_v2_400(v2, event_type):
    response = v2.call("POST", "/v2/bookings", _booking_body(v2, event_type), version=VERSION, HTTP_IDEMPOTENCY_KEY="é")
    error = assert_error(response, 400, "BadRequestException")
    assert "Idempotency-Key" in error["error"]["details"]["errors"]
    assert not Booking.objects.exists()


def test_a_repeat_while_the_first_runs_is_a_v2_409_with_retry_after(v2, owner, event_type):
    with key_held_elsewhere(user_id=owner.pk, key="busy"):
        response = v2.call(
            "POST", "/v2/bookings", _booking_body(v2, event_type), version=VERSION, HTTP_IDEMPOTENCY_KEY="busy"
        )
    error = assert_error(response, 409, "ConflictException")
    assert error["error"]["details"]["code"] == "idempotency_key_in_use"
    assert response["Retry-After"] == "1"
    assert not Booking.objects.exists()
