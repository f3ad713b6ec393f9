"""The delivery hot path: claiming is one statement that keeps the delivery rules, the success log
is one statement, and kept-alive connections never bypass the send-time address check."""

import threading
from datetime import timedelta

import pytest
from django.db import connection, transaction
from django.utils import timezone

from tests.support.live_services import Reply
from webhooks.delivery import StartedAttempt, _claim, _record, _record_success, attempt_delivery
from webhooks.models import PING_TRIGGER, DeliveryAttempt, DeliveryStatus, Webhook, WebhookDelivery, WebhookTrigger
from webhooks.sending import SendResult
from webhooks.signing import new_message_id
from webhooks.tests.factories import WebhookFactory

pytestmark = pytest.mark.django_db

CLAIMS = pytest.mark.parametrize("claim", [_claim], ids=["one-statement"])


def new_delivery(webhook=None, **fields) -> WebhookDelivery:
    """A due pending delivery, as `emit_event` writes it (without enqueueing it)."""
    now = timezone.now()
    defaults = {
        "trigger_event": WebhookTrigger.BOOKING_CREATED,
        "payload": {"title": "Intro"},
        "event_created_at": now,
        "message_id": new_message_id(),
        "status": DeliveryStatus.PENDING,
        "next_attempt_at": now,
        "lease_expires_at": now + timedelta(seconds=60),
    }
    return WebhookDelivery.objects.create(webhook=webhook or WebhookFactory(), **(defaults | fields))


def snapshot(delivery: WebhookDelivery) -> tuple:
    delivery.refresh_from_db()
    return (delivery.status, delivery.attempts, delivery.next_attempt_at, delivery.lease_expires_at)


@CLAIMS
def test_claim_takes_a_due_pending_delivery_with_its_webhook_and_leases_it(claim, settings):
    delivery = new_delivery()
    due_at = delivery.next_attempt_at
    now = timezone.now()

    claimed = claim(delivery.pk, now=now, force=False)

    assert claimed.pk == delivery.pk
    assert (claimed.status, claimed.attempts, claimed.payload) == (DeliveryStatus.DELIVERING, 1, {"title": "Intro"})
    assert claimed.message_id == delivery.message_id
    assert claimed.webhook.subscriber_url == delivery.webhook.subscriber_url
    assert claimed.webhook.secret == delivery.webhook.secret
    assert claimed.webhook.event_triggers == [WebhookTrigger.BOOKING_CREATED]
    lease = timedelta(seconds=settings.WEBHOOKS["LEASE_SECONDS"])
    assert snapshot(delivery) == (DeliveryStatus.DELIVERING, 1, due_at, now + lease)
    assert delivery.last_attempt_at == now


@CLAIMS
@pytest.mark.parametrize(
    "changes",
    [
        {"next_attempt_at": timezone.now() + timedelta(hours=1)},
        {"status": DeliveryStatus.DELIVERING, "lease_expires_at": timezone.now() + timedelta(hours=1)},
        {"status": DeliveryStatus.SUCCEEDED},
        {"status": DeliveryStatus.FAILED},
        {"status": DeliveryStatus.CANCELLED},
    ],
    ids=["not-due", "leased-to-another-sender", "succeeded", "failed", "cancelled"],
)
def test_claim_leaves_a_delivery_that_is_not_ours_to_send_untouched(claim, changes):
    delivery = new_delivery(**changes)
    before = snapshot(delivery)

    assert claim(delivery.pk, now=timezone.now(), force=False) is None
    assert snapshot(delivery) == before


@CLAIMS
def test_claim_takes_back_a_delivery_whose_senders_lease_expired(claim):
    delivery = new_delivery(
        status=DeliveryStatus.DELIVERING, attempts=1, lease_expires_at=timezone.now() - timedelta(seconds=1)
    )

    claimed = claim(delivery.pk, now=timezone.now(), force=False)

    assert (claimed.status, claimed.attempts) == (DeliveryStatus.DELIVERING, 2)


@CLAIMS
def test_claim_cancels_a_due_delivery_of_an_inactive_webhook(claim):
    delivery = new_delivery()
    Webhook.objects.filter(pk=delivery.webhook_id).update(active=False)

    assert claim(delivery.pk, now=timezone.now(), force=False) is None
    assert snapshot(delivery) == (DeliveryStatus.CANCELLED, 0, None, None)


@CLAIMS
def test_forced_claim_sends_an_inactive_webhooks_delivery_that_is_not_due(claim):
    delivery = new_delivery(next_attempt_at=timezone.now() + timedelta(hours=1))
    Webhook.objects.filter(pk=delivery.webhook_id).update(active=False)

    claimed = claim(delivery.pk, now=timezone.now(), force=True)

    assert (claimed.status, claimed.attempts, claimed.webhook.active) == (DeliveryStatus.DELIVERING, 1, False)


@pytest.mark.django_db(transaction=True)
@CLAIMS
def test_claim_skips_a_row_locked_by_another_transaction_instead_of_waiting(claim):
    delivery = new_delivery()
    locked, release = threading.Event(), threading.Event()

    def hold_lock():
        try:
            with transaction.atomic():
                WebhookDelivery.objects.select_for_update().get(pk=delivery.pk)
                locked.set()
                release.wait(30)
        finally:
            connection.close()

    holder = threading.Thread(target=hold_lock)
    holder.start()
    try:
        assert locked.wait(30)
        assert claim(delivery.pk, now=timezone.now(), force=False) is None
    finally:
        release.set()
        holder.join(30)
    assert claim(delivery.pk, now=timezone.now(), force=False).attempts == 1


def succeeded_result() -> SendResult:
    return SendResult(
        request_headers={"webhook-id": "msg_1"},
        duration_ms=12,
        response_status=204,
        response_headers={"Server": "test"},
        response_body="",
    )


def started(delivery, now) -> StartedAttempt:
    """What `start_attempt` hands over: the claimed delivery and its attempt, logged open."""
    attempt = DeliveryAttempt.objects.create(
        delivery=delivery,
        attempt_number=delivery.attempts,
        attempted_at=now,
        request_url=delivery.webhook.subscriber_url,
    )
    return StartedAttempt(delivery=delivery, attempt=attempt, body=b"", headers={}, gated=False)


def record_in_one_statement(delivery, now, result):
    return _record_success(started=started(delivery, now), result=result)


def record_locking(delivery, now, result):
    return _record(started=started(delivery, now), result=result, retry=True)


RECORDS = pytest.mark.parametrize("record", [record_in_one_statement, record_locking], ids=["one-statement", "locking"])


@RECORDS
def test_success_is_logged_and_ends_the_webhooks_run_of_failures(record):
    delivery = new_delivery()
    Webhook.objects.filter(pk=delivery.webhook_id).update(failing_since=timezone.now() - timedelta(days=1))
    now = timezone.now()
    claimed = _claim(delivery.pk, now=now, force=False)

    attempt = record(claimed, now, succeeded_result())

    stored = DeliveryAttempt.objects.get()
    assert attempt.pk == stored.pk
    assert (stored.attempt_number, stored.attempted_at, stored.duration_ms) == (1, now, 12)
    assert (stored.response_status, stored.response_headers, stored.error_class) == (204, {"Server": "test"}, "")
    assert stored.request_headers == {"webhook-id": "msg_1"}
    assert stored.request_url == delivery.webhook.subscriber_url
    delivery.refresh_from_db()
    assert (delivery.status, delivery.next_attempt_at, delivery.lease_expires_at) == (
        DeliveryStatus.SUCCEEDED,
        None,
        None,
    )
    assert delivery.delivered_at >= now
    assert Webhook.objects.get(pk=delivery.webhook_id).failing_since is None


@RECORDS
def test_a_successful_ping_leaves_the_run_of_failures_alone(record):
    failing_since = timezone.now() - timedelta(days=1)
    webhook = WebhookFactory(failing_since=failing_since)
    ping = new_delivery(webhook, trigger_event=PING_TRIGGER, next_attempt_at=None, lease_expires_at=None)
    now = timezone.now()

    record(_claim(ping.pk, now=now, force=True), now, succeeded_result())

    assert WebhookDelivery.objects.get(pk=ping.pk).status == DeliveryStatus.SUCCEEDED
    assert Webhook.objects.get(pk=webhook.pk).failing_since == failing_since


def test_deliveries_to_one_receiver_share_a_kept_alive_connection(keep_alive_receiver):
    webhook = WebhookFactory(subscriber_url=keep_alive_receiver.url())
    deliveries = [new_delivery(webhook) for _ in range(3)]

    for delivery in deliveries:
        assert attempt_delivery(delivery_id=delivery.pk).response_status == 200

    requests = keep_alive_receiver.wait_for(3)
    assert len({request.client_port for request in requests}) == 1
    assert [request.headers["webhook-id"] for request in requests] == [d.message_id for d in deliveries]


def test_an_idle_connection_is_not_reused(keep_alive_receiver, settings):
    settings.WEBHOOKS = {**settings.WEBHOOKS, "KEEPALIVE_IDLE_SECONDS": -1}
    webhook = WebhookFactory(subscriber_url=keep_alive_receiver.url())

    for delivery in [new_delivery(webhook) for _ in range(2)]:
        assert attempt_delivery(delivery_id=delivery.pk).response_status == 200

    assert len({request.client_port for request in keep_alive_receiver.wait_for(2)}) == 2


def test_each_host_name_gets_its_own_connection_even_on_the_same_address(keep_alive_receiver, fake_dns):
    fake_dns["a.example.test"] = fake_dns["b.example.test"] = ["127.0.0.1"]
    port = keep_alive_receiver.port
    first = WebhookFactory(subscriber_url=f"http://a.example.test:{port}/hook")
    second = WebhookFactory(subscriber_url=f"http://b.example.test:{port}/hook")

    for webhook in (first, second, first):
        assert attempt_delivery(delivery_id=new_delivery(webhook).pk).response_status == 200

    requests = keep_alive_receiver.wait_for(3)
    assert [request.headers["Host"] for request in requests] == [
        f"a.example.test:{port}",
        f"b.example.test:{port}",
        f"a.example.test:{port}",
    ]
    assert requests[0].client_port == requests[2].client_port != requests[1].client_port


def test_a_kept_alive_connection_does_not_carry_a_send_whose_check_fails(keep_alive_receiver, fake_dns, settings):
    fake_dns["rebind.example.test"] = ["127.0.0.1"]
    webhook = WebhookFactory(subscriber_url=f"http://rebind.example.test:{keep_alive_receiver.port}/hook")
    assert attempt_delivery(delivery_id=new_delivery(webhook).pk).response_status == 200

    fake_dns["rebind.example.test"] = ["127.0.0.2"]
    settings.WEBHOOKS = {**settings.WEBHOOKS, "ALLOWED_CIDRS": ["127.0.0.1/32"]}
    attempt = attempt_delivery(delivery_id=new_delivery(webhook).pk)

    assert attempt.error_class == "blocked"
    assert "127.0.0.2" in attempt.error_message
    assert len(keep_alive_receiver.requests) == 1


def test_a_nul_character_in_the_answer_is_logged_replaced_so_a_success_stays_recorded(receiver):
    receiver.reply(Reply(status=200, body=b"ok\x00done"))
    delivery = new_delivery(WebhookFactory(subscriber_url=receiver.url()))

    attempt = attempt_delivery(delivery_id=delivery.pk)

    assert DeliveryAttempt.objects.get(pk=attempt.pk).response_body == "ok\ufffddone"
    assert WebhookDelivery.objects.get(pk=delivery.pk).status == DeliveryStatus.SUCCEEDED
