"""After an outage (docs/webhooks.md, "After an outage: recover or pull"): the delivery log by time
range and status with a stable cursor, and `POST /webhooks/{id}/recover`."""

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from standardwebhooks.webhooks import Webhook as StandardWebhook

from accounts.tests.factories import UserFactory
from core.datetimes import iso_utc
from scheduling.tests.factories import EventTypeFactory
from tests.support.credentials import auth
from tests.support.live_services import Reply, wait_until
from webhooks.models import DeliveryStatus, WebhookDelivery, WebhookTrigger
from webhooks.signing import new_message_id
from webhooks.tests.factories import WebhookFactory

pytestmark = pytest.mark.django_db


def make_delivery(webhook, *, hours_ago: float, status=DeliveryStatus.FAILED, trigger="BOOKING_CREATED"):
    return WebhookDelivery.objects.create(
        webhook=webhook,
        trigger_event=trigger,
        payload={"uid": new_message_id()},
        event_created_at=timezone.now() - timedelta(hours=hours_ago),
        message_id=new_message_id(),
        status=status,
        attempts=10 if status == DeliveryStatus.FAILED else 1,
    )


def state() -> list[tuple]:
    return list(WebhookDelivery.objects.order_by("id").values_list("id", "status", "next_attempt_at", "retry_index"))


@pytest.fixture
def no_recover_interval(settings):
    settings.WEBHOOKS = {**settings.WEBHOOKS, "RECOVER_MIN_INTERVAL_SECONDS": 0}


# --- the delivery log ----------------------------------------------------------------------------


def test_deliveries_filter_by_time_range_and_status(api_client):
    webhook = WebhookFactory()
    old = make_delivery(webhook, hours_ago=30)
    inside = make_delivery(webhook, hours_ago=10)
    inside_ok = make_delivery(webhook, hours_ago=9, status=DeliveryStatus.SUCCEEDED)
    make_delivery(webhook, hours_ago=1)
    since = iso_utc(timezone.now() - timedelta(hours=24))
    until = iso_utc(timezone.now() - timedelta(hours=2))

    response = api_client.get(
        f"/v1/webhooks/{webhook.pk}/deliveries", {"since": since, "until": until}, **auth(webhook.user)
    )
    assert response.status_code == 200
    assert [item["id"] for item in response.json()["deliveries"]] == [inside_ok.pk, inside.pk]

    failed = api_client.get(
        f"/v1/webhooks/{webhook.pk}/deliveries", {"since": since, "status": "failed"}, **auth(webhook.user)
    )
    assert [item["id"] for item in failed.json()["deliveries"]] == [
        delivery.pk for delivery in WebhookDelivery.objects.filter(status="failed").order_by("-id") if delivery != old
    ]


def test_the_cursor_walks_the_log_without_shifting_while_new_deliveries_arrive(api_client):
    webhook = WebhookFactory()
    first_five = [make_delivery(webhook, hours_ago=5 - index) for index in range(5)]
    headers = auth(webhook.user)
    page = api_client.get(f"/v1/webhooks/{webhook.pk}/deliveries", {"take": 2}, **headers).json()
    seen = [item["id"] for item in page["deliveries"]]
    for _ in range(3):
        make_delivery(webhook, hours_ago=0)  # new events keep arriving at the top
        cursor = page["pagination"]["nextCursor"]
        if cursor is None:
            break
        page = api_client.get(f"/v1/webhooks/{webhook.pk}/deliveries", {"take": 2, "cursor": cursor}, **headers).json()
        seen += [item["id"] for item in page["deliveries"]]
    assert seen == [delivery.pk for delivery in reversed(first_five)]
    assert page["pagination"]["nextCursor"] is None


def test_the_log_takes_the_same_queries_for_1_and_50_deliveries_with_filters(api_client):
    webhook = WebhookFactory()
    headers = auth(webhook.user)
    url = f"/v1/webhooks/{webhook.pk}/deliveries"
    query = {"since": iso_utc(timezone.now() - timedelta(days=2)), "status": "failed"}
    make_delivery(webhook, hours_ago=1)
    api_client.get(url, query, **headers)
    with CaptureQueriesContext(connection) as one:
        assert api_client.get(url, query, **headers).status_code == 200
    for _ in range(49):
        make_delivery(webhook, hours_ago=1)
    with CaptureQueriesContext(connection) as fifty:
        assert len(api_client.get(url, query, **headers).json()["deliveries"]) == 50
    assert len(fifty) == len(one)


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ({"since": "yesterday"}, "since"),
        ({"until": "2026-13-01T00:00:00Z"}, "until"),
        ({"cursor": "not-a-cursor"}, "cursor"),
        ({"cursor": "ZS4xLjI"}, "cursor"),  # an event cursor is not a delivery cursor
    ],
)
def test_bad_filters_of_the_log_are_400_naming_them(api_client, query, field):
    webhook = WebhookFactory()
    response = api_client.get(f"/v1/webhooks/{webhook.pk}/deliveries", query, **auth(webhook.user))
    assert response.status_code == 400
    assert field in response.json()["errors"]


# --- recover ---------------------------------------------------------------------------------------


def test_recover_queues_the_failed_deliveries_of_the_window_with_their_webhook_ids(
    api_client, no_recover_interval, django_capture_on_commit_callbacks
):
    webhook = WebhookFactory()
    too_old = make_delivery(webhook, hours_ago=30)
    missed = [make_delivery(webhook, hours_ago=hours) for hours in (20, 12, 3)]
    delivered = make_delivery(webhook, hours_ago=5, status=DeliveryStatus.SUCCEEDED)
    ping = make_delivery(webhook, hours_ago=4, trigger="PING")
    other = make_delivery(WebhookFactory(user=webhook.user), hours_ago=4)
    message_ids = {delivery.pk: delivery.message_id for delivery in missed}

    with django_capture_on_commit_callbacks() as callbacks:
        response = api_client.post(
            f"/v1/webhooks/{webhook.pk}/recover",
            {"since": iso_utc(timezone.now() - timedelta(hours=24))},
            format="json",
            **auth(webhook.user, "WRITE_WEBHOOK"),
        )

    assert response.status_code == 202
    assert response.json() == {"queued": 3, "remaining": 0, "message": "3 deliveries queued again."}
    assert len(callbacks) == 1  # one batch to the broker, after commit
    for delivery in missed:
        delivery.refresh_from_db()
        assert delivery.status == DeliveryStatus.PENDING and delivery.retry_index == 0
        assert delivery.next_attempt_at is not None
        assert delivery.message_id == message_ids[delivery.pk]
    for untouched in (too_old, delivered, ping, other):
        before = untouched.status
        untouched.refresh_from_db()
        assert untouched.status == before

    again = api_client.post(
        f"/v1/webhooks/{webhook.pk}/recover",
        {"since": iso_utc(timezone.now() - timedelta(hours=24))},
        format="json",
        **auth(webhook.user),
    )
    assert again.status_code == 202 and again.json()["queued"] == 0


def test_recover_takes_until_and_status(api_client, no_recover_interval):
    webhook = WebhookFactory()
    early = make_delivery(webhook, hours_ago=10, status=DeliveryStatus.SUCCEEDED)
    make_delivery(webhook, hours_ago=2, status=DeliveryStatus.SUCCEEDED)
    body = {
        "since": iso_utc(timezone.now() - timedelta(hours=11)),
        "until": iso_utc(timezone.now() - timedelta(hours=5)),
        "status": "succeeded",
    }
    response = api_client.post(f"/v1/webhooks/{webhook.pk}/recover", body, format="json", **auth(webhook.user))
    assert response.json()["queued"] == 1
    early.refresh_from_db()
    assert early.status == DeliveryStatus.PENDING


def test_recover_queues_at_most_the_limit_and_says_what_remains(api_client, no_recover_interval, settings):
    settings.WEBHOOKS = {**settings.WEBHOOKS, "RECOVER_MAX_DELIVERIES": 2}
    webhook = WebhookFactory()
    for hours in (5, 4, 3):
        make_delivery(webhook, hours_ago=hours)
    body = {"since": iso_utc(timezone.now() - timedelta(hours=6))}
    first = api_client.post(f"/v1/webhooks/{webhook.pk}/recover", body, format="json", **auth(webhook.user))
    assert (first.json()["queued"], first.json()["remaining"]) == (2, 1)
    second = api_client.post(f"/v1/webhooks/{webhook.pk}/recover", body, format="json", **auth(webhook.user))
    assert (second.json()["queued"], second.json()["remaining"]) == (1, 0)


def test_recover_is_rate_limited_per_webhook(api_client):
    from django.core.cache import cache

    webhook = WebhookFactory()
    cache.delete(f"webhooks:recover:{webhook.pk}")
    make_delivery(webhook, hours_ago=1)
    body = {"since": iso_utc(timezone.now() - timedelta(hours=2))}
    headers = auth(webhook.user)
    assert api_client.post(f"/v1/webhooks/{webhook.pk}/recover", body, format="json", **headers).status_code == 202
    before = state()
    refused = api_client.post(f"/v1/webhooks/{webhook.pk}/recover", body, format="json", **headers)
    assert refused.status_code == 429
    assert refused.json()["code"] == "rate_limited"
    assert refused["Retry-After"] == "10"
    assert state() == before
    cache.delete(f"webhooks:recover:{webhook.pk}")


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({}, "since"),
        ({"since": "last tuesday"}, "since"),
        ({"since": "DAYS_AGO_40"}, "since"),  # beyond the retention of deliveries
        ({"since": "DAYS_AGO_1", "until": "DAYS_AGO_2"}, "until"),
        ({"since": "DAYS_AGO_1", "status": "pending"}, "status"),
        ({"since": "DAYS_AGO_1", "webhookId": "x"}, "webhookId"),
    ],
)
def test_bad_recover_bodies_are_400_and_queue_nothing(api_client, no_recover_interval, body, field):
    webhook = WebhookFactory()
    make_delivery(webhook, hours_ago=30)
    days = {"DAYS_AGO_40": 40, "DAYS_AGO_1": 1, "DAYS_AGO_2": 2}
    body = {
        key: iso_utc(timezone.now() - timedelta(days=days[value])) if value in days else value
        for key, value in body.items()
    }
    before = state()
    response = api_client.post(f"/v1/webhooks/{webhook.pk}/recover", body, format="json", **auth(webhook.user))
    assert response.status_code == 400, response.json()
    assert field in response.json()["errors"]
    assert state() == before


def test_recover_of_an_inactive_webhook_is_409_and_of_someone_elses_404(api_client, no_recover_interval):
    webhook = WebhookFactory(active=False)
    make_delivery(webhook, hours_ago=1)
    body = {"since": iso_utc(timezone.now() - timedelta(hours=2))}
    before = state()
    inactive = api_client.post(f"/v1/webhooks/{webhook.pk}/recover", body, format="json", **auth(webhook.user))
    assert inactive.status_code == 409
    hidden = api_client.post(f"/v1/webhooks/{webhook.pk}/recover", body, format="json", **auth(UserFactory()))
    assert hidden.status_code == 404
    read_only = api_client.post(
        f"/v1/webhooks/{webhook.pk}/recover", body, format="json", **auth(webhook.user, "READ_WEBHOOK")
    )
    assert read_only.status_code == 403
    assert state() == before


@pytest.mark.django_db(transaction=True)
def test_a_receiver_down_for_a_day_recovers_every_missed_event_with_one_call(
    api_client, start_worker, receiver, fast_retries, settings
):
    """The receiver answers 503 until every delivery has failed; the events are moved a day back
    (as if the outage had lasted that long); one recover call later it has each of them, with the
    `webhook-id` and a valid signature."""
    settings.WEBHOOKS = {**settings.WEBHOOKS, "RECOVER_MIN_INTERVAL_SECONDS": 0}
    start_worker()
    receiver.default = Reply(status=503)
    organizer = UserFactory()
    event_type = EventTypeFactory(owner=organizer, length=30)
    webhook = WebhookFactory(user=organizer, subscriber_url=receiver.url(), event_triggers=["BOOKING_CREATED"])
    from tests.test_idempotency_key import booking_body

    headers = auth(organizer)
    for hour in (9, 11, 14):
        response = api_client.post("/v1/bookings", booking_body(event_type, hour), format="json", **headers)
        assert response.status_code == 200, response.content
    wait_until(
        lambda: WebhookDelivery.objects.filter(status=DeliveryStatus.FAILED).count() == 3,
        what="every delivery to fail",
    )
    failed_ids = {request.headers["webhook-id"] for request in receiver.requests}
    assert len(failed_ids) == 3
    WebhookDelivery.objects.update(event_created_at=timezone.now() - timedelta(hours=23))
    receiver.default = Reply(status=204, body=b"")
    missed_before = len(receiver.requests)

    response = api_client.post(
        f"/v1/webhooks/{webhook.pk}/recover",
        {"since": iso_utc(timezone.now() - timedelta(days=1))},
        format="json",
        **headers,
    )
    assert response.status_code == 202 and response.json()["queued"] == 3

    wait_until(
        lambda: WebhookDelivery.objects.filter(status=DeliveryStatus.SUCCEEDED).count() == 3,
        what="every delivery to succeed",
    )
    recovered = receiver.requests[missed_before:]
    assert {request.headers["webhook-id"] for request in recovered} == failed_ids
    for request in recovered:
        assert (
            StandardWebhook(webhook.secret).verify(request.body, request.headers)["triggerEvent"] == "BOOKING_CREATED"
        )
    assert webhook.pk and WebhookDelivery.objects.filter(webhook=webhook).count() == 3
    assert WebhookTrigger.BOOKING_CREATED in webhook.event_triggers
