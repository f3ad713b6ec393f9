"""Isolation of subscribers from each other, end to end with a real worker, real Redis and real local
receivers. These tests prove orderings (what happens while something else is still open), not
timings: the speed figures are in `make bench-noisy-neighbour`."""

import socket
import threading
import time
from datetime import timedelta

import pytest
from django.db import transaction

from tests.support.live_services import Receiver, Reply, wait_until
from webhooks.models import DeliveryAttempt, DeliveryStatus, Webhook, WebhookDelivery, WebhookTrigger
from webhooks.outbox import emit_event
from webhooks.tests.factories import WebhookFactory

pytestmark = pytest.mark.django_db(transaction=True)


class SilentServer:
    """Accepts TCP connections, reads what comes and never answers. Counts connections, and how
    many are open at once."""

    def __init__(self):
        self.listener = socket.create_server(("127.0.0.1", 0), backlog=512)
        self.port = self.listener.getsockname()[1]
        self.lock = threading.Lock()
        self.accepted = 0
        self.open = 0
        self.most_open = 0
        self.connections: list[socket.socket] = []
        self.closing = False
        threading.Thread(target=self._accept, daemon=True).start()

    def url(self, path: str = "/silent") -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def _accept(self):
        while not self.closing:
            try:
                connection, _ = self.listener.accept()
            except OSError:
                return
            with self.lock:
                self.accepted += 1
                self.open += 1
                self.most_open = max(self.most_open, self.open)
                self.connections.append(connection)
            threading.Thread(target=self._hold, args=(connection,), daemon=True).start()

    def _hold(self, connection: socket.socket):
        try:
            while connection.recv(65536):
                pass
        except OSError:
            pass
        with self.lock:
            self.open -= 1

    def close(self):
        self.closing = True
        self.listener.close()
        with self.lock:
            for connection in self.connections:
                try:
                    connection.close()
                except OSError:
                    pass


class CountingReceiver(Receiver):
    """A Receiver whose answers take `delay` seconds, counting how many requests it holds at once."""

    def __init__(self, delay: float):
        super().__init__()
        self.default = Reply(delay=delay)
        self.open = 0
        self.most_open = 0
        self.counter = threading.Lock()
        handler = self.server.RequestHandlerClass
        original = handler.do_POST
        receiver = self

        def do_post(handler_self):
            with receiver.counter:
                receiver.open += 1
                receiver.most_open = max(receiver.most_open, receiver.open)
            try:
                original(handler_self)
            finally:
                with receiver.counter:
                    receiver.open -= 1

        handler.do_POST = do_post


@pytest.fixture
def silent_server():
    server = SilentServer()
    yield server
    server.close()


def emit(webhook, payload=None):
    with transaction.atomic():
        return emit_event(trigger=WebhookTrigger.BOOKING_CREATED, payload=payload or {"title": "x"}, user=webhook.user)


def open_attempts(webhook) -> int:
    return DeliveryAttempt.objects.filter(
        delivery__webhook=webhook, error_class="", response_status__isnull=True
    ).count()


def test_a_healthy_subscriber_gets_every_event_while_a_silent_ones_attempts_stay_open(
    start_worker, receiver, silent_server, settings
):
    settings.WEBHOOKS = {**settings.WEBHOOKS, "TIMEOUT_SECONDS": 60.0, "CONCURRENCY_PER_WEBHOOK": 3}
    start_worker()  # 4 pool threads: before, 4 silent attempts were enough to stop it
    silent = WebhookFactory(subscriber_url=silent_server.url())
    healthy = WebhookFactory(subscriber_url=receiver.url())

    silent_deliveries = [emit(silent, {"n": n})[0] for n in range(12)]
    wait_until(lambda: silent_server.accepted >= 3, what="the silent subscriber's attempts to open")
    healthy_deliveries = [emit(healthy, {"n": n})[0] for n in range(20)]

    requests = receiver.wait_for(20)
    wait_until(
        lambda: WebhookDelivery.objects.filter(webhook=healthy, status=DeliveryStatus.SUCCEEDED).count() == 20,
        what="every healthy delivery to succeed",
    )
    assert sorted(request.json()["payload"]["n"] for request in requests) == list(range(20))
    assert {request.headers["webhook-id"] for request in requests} == {d.message_id for d in healthy_deliveries}
    # ... and all that time the silent subscriber's attempts were still open, at most its cap of them.
    assert open_attempts(silent) == 3
    assert silent_server.accepted == silent_server.most_open == 3
    statuses = set(WebhookDelivery.objects.filter(pk__in=[d.pk for d in silent_deliveries]).values_list("status"))
    assert statuses == {(DeliveryStatus.DELIVERING,), (DeliveryStatus.PENDING,)}


def test_a_subscriber_never_has_more_attempts_open_than_its_cap_across_two_workers(start_worker, settings):
    settings.WEBHOOKS = {**settings.WEBHOOKS, "CONCURRENCY_PER_WEBHOOK": 2}
    slow = CountingReceiver(delay=0.3)
    try:
        start_worker()
        start_worker()
        webhook = WebhookFactory(subscriber_url=slow.url())
        deliveries = [emit(webhook, {"n": n})[0] for n in range(12)]

        slow.wait_for(12, timeout=40)
        wait_until(
            lambda: WebhookDelivery.objects.filter(webhook=webhook, status=DeliveryStatus.SUCCEEDED).count() == 12,
            40,
            "every delivery to succeed",
        )
        assert slow.most_open <= 2
        assert {request.headers["webhook-id"] for request in slow.requests} == {d.message_id for d in deliveries}
        assert DeliveryAttempt.objects.filter(delivery__webhook=webhook).count() == 12
    finally:
        slow.close()


def test_a_tripped_breaker_sends_nothing_until_its_backoff_step(silent_server, settings):
    """In-process (no worker): three attempts time out, the circuit opens for the next backoff step;
    a new event then waits for it instead of trying, and goes out once the step has passed."""
    from django.utils import timezone

    from webhooks.delivery import attempt_delivery

    settings.WEBHOOKS = {
        **settings.WEBHOOKS,
        "TIMEOUT_SECONDS": 0.2,
        "BREAKER_THRESHOLD": 3,
        "RETRY_SCHEDULE_SECONDS": [60, 600],
        "RETRY_JITTER": 0.0,
    }
    webhook = WebhookFactory(subscriber_url=silent_server.url())
    first_three = [emit(webhook, {"n": n})[0] for n in range(3)]
    for delivery in first_three:
        assert attempt_delivery(delivery_id=delivery.pk).error_class == "timeout"
    webhook.refresh_from_db()
    assert webhook.consecutive_failures == 3
    opened_at = timezone.now()
    assert 55 < (webhook.circuit_open_until - opened_at).total_seconds() <= 60

    [waiting] = emit(webhook, {"n": 3})
    assert attempt_delivery(delivery_id=waiting.pk) is None
    waiting.refresh_from_db()
    assert (waiting.status, waiting.attempts, waiting.next_attempt_at) == (
        DeliveryStatus.PENDING,
        0,
        webhook.circuit_open_until,
    )
    assert waiting.lease_expires_at is None  # the sweeper sends it when the step is over
    assert silent_server.accepted == 3
    # The third failure's own retry also waits for the step.
    third = WebhookDelivery.objects.get(pk=first_three[2].pk)
    assert third.next_attempt_at >= webhook.circuit_open_until

    # The step is over (moved into the past rather than waited for): the next attempt goes out.
    past = timezone.now() - (webhook.circuit_open_until - opened_at)
    Webhook.objects.filter(pk=webhook.pk).update(circuit_open_until=past)
    WebhookDelivery.objects.filter(pk=waiting.pk).update(next_attempt_at=past)
    assert attempt_delivery(delivery_id=waiting.pk).error_class == "timeout"
    assert silent_server.accepted == 4
    webhook.refresh_from_db()
    assert webhook.consecutive_failures == 4
    # Tripped again: the next step of the schedule.
    assert (webhook.circuit_open_until - timezone.now()).total_seconds() > 550


def forget_gate(webhook):
    """Clear the webhook's slots in Redis (ids repeat across tests; other tests' keys stay)."""
    import redis
    from django.conf import settings

    client = redis.Redis.from_url(settings.REDIS_URL)
    client.delete(*(f"webhooks:gate:{webhook.pk}:{name}" for name in ("slots", "waiting", "rate")))


def test_an_event_for_a_webhook_whose_circuit_is_open_waits_in_the_database_and_takes_no_slot(monkeypatch):
    from django.utils import timezone

    from webhooks import outbox, slots

    published = []
    monkeypatch.setattr(outbox, "enqueue_new_deliveries", published.append)
    webhook = WebhookFactory(subscriber_url="http://127.0.0.1:9/closed")
    open_until = timezone.now() + timedelta(minutes=5)
    Webhook.objects.filter(pk=webhook.pk).update(consecutive_failures=3, circuit_open_until=open_until)
    forget_gate(webhook)

    [delivery] = emit(webhook)

    delivery.refresh_from_db()
    assert (delivery.status, delivery.next_attempt_at, delivery.lease_expires_at) == (
        DeliveryStatus.PENDING,
        open_until,
        None,
    )
    assert published == []  # no message: the sweeper sends it when the step is over
    assert slots.gate().in_flight(webhook.pk) == 0


def test_a_delivery_admitted_before_the_circuit_opened_gives_its_slot_back_when_it_parks(settings, monkeypatch):
    from django.utils import timezone

    from webhooks import delivery as engine
    from webhooks import slots

    settings.WEBHOOKS = {**settings.WEBHOOKS, "CONCURRENCY_PER_WEBHOOK": 1}
    enqueued = []
    monkeypatch.setattr(engine, "enqueue_deliveries", lambda ids, **options: enqueued.extend(ids))
    webhook = WebhookFactory(subscriber_url="http://127.0.0.1:9/closed")
    forget_gate(webhook)
    [holding] = emit(webhook, {"n": 1})  # the publisher took the one slot for it
    [waiting] = emit(webhook, {"n": 2})  # every slot taken: it waits in the webhook's queue
    assert slots.gate().in_flight(webhook.pk) == 1
    open_until = timezone.now() + timedelta(minutes=5)
    Webhook.objects.filter(pk=webhook.pk).update(consecutive_failures=3, circuit_open_until=open_until)

    assert engine.start_attempt(delivery_id=holding.pk) is None

    assert slots.gate().in_flight(webhook.pk) == 0
    assert enqueued == [waiting.pk]  # the freed slot wakes the next one, which parks in turn
    assert engine.start_attempt(delivery_id=waiting.pk) is None
    for parked in (holding, waiting):
        parked.refresh_from_db()
        assert (parked.status, parked.attempts, parked.next_attempt_at, parked.lease_expires_at) == (
            DeliveryStatus.PENDING,
            0,
            open_until,
            None,
        )
    assert DeliveryAttempt.objects.filter(delivery__webhook=webhook).count() == 0


def test_an_answer_closes_the_circuit(receiver, settings):
    from django.utils import timezone

    from webhooks.delivery import attempt_delivery

    webhook = WebhookFactory(subscriber_url=receiver.url())
    Webhook.objects.filter(pk=webhook.pk).update(consecutive_failures=5, circuit_open_until=timezone.now())
    [delivery] = emit(webhook)

    assert attempt_delivery(delivery_id=delivery.pk).response_status == 200
    webhook.refresh_from_db()
    assert (webhook.consecutive_failures, webhook.circuit_open_until) == (0, None)


def test_an_attempt_cut_short_by_a_killed_worker_is_logged_as_interrupted(
    start_worker, receiver, fast_retries, settings, api_client
):
    from accounts.tests.factories import ApiKeyFactory

    settings.WEBHOOKS = {**settings.WEBHOOKS, "TIMEOUT_SECONDS": 30.0}
    receiver.reply(Reply(delay=20))
    worker = start_worker()
    webhook = WebhookFactory(subscriber_url=receiver.url())
    [delivery] = emit(webhook)
    receiver.wait_for(1)  # the receiver has the request; its answer is 20 s away
    worker.kill()
    start_worker()

    receiver.wait_for(2)
    wait_until(
        lambda: WebhookDelivery.objects.get(pk=delivery.pk).status == DeliveryStatus.SUCCEEDED,
        what="the delivery to succeed after the restart",
    )
    wait_until(lambda: open_attempts(webhook) == 0, what="the sweeper to close the cut-short attempt")
    response = api_client.get(
        f"/v1/webhooks/{webhook.pk}/deliveries/{delivery.pk}",
        HTTP_AUTHORIZATION=f"Bearer {ApiKeyFactory(user=webhook.user).raw_key}",
    )
    assert response.status_code == 200
    body = response.json()["delivery"]
    assert body["attemptCount"] == len(body["attempts"]) == 2
    first, second = body["attempts"]
    assert (first["attemptNumber"], first["errorClass"], first["responseStatus"]) == (1, "interrupted", None)
    assert first["requestHeaders"]["webhook-id"] == delivery.message_id
    assert (second["attemptNumber"], second["errorClass"], second["responseStatus"]) == (2, None, 200)


def test_a_webhook_disabled_for_failing_keeps_its_deliveries_and_resumes_them_in_order(
    start_worker, receiver, fast_retries, settings, api_client
):
    from accounts.tests.factories import ApiKeyFactory

    settings.WEBHOOKS = {**settings.WEBHOOKS, "RETRY_SCHEDULE_SECONDS": [0.3] * 20, "AUTO_DISABLE_AFTER_SECONDS": 1}
    receiver.default = Reply(status=500)
    start_worker()
    webhook = WebhookFactory(subscriber_url=receiver.url())
    deliveries = [emit(webhook, {"n": n})[0] for n in range(6)]

    wait_until(lambda: not Webhook.objects.get(pk=webhook.pk).active, what="the webhook to be disabled")
    wait_until(
        lambda: not WebhookDelivery.objects.filter(webhook=webhook, status=DeliveryStatus.DELIVERING).exists(),
        what="the attempts in flight to end",
    )
    key = ApiKeyFactory(user=webhook.user).raw_key
    shown = api_client.get(f"/v1/webhooks/{webhook.pk}", HTTP_AUTHORIZATION=f"Bearer {key}").json()["webhook"]
    assert shown["active"] is False
    assert "disabled automatically" in shown["disabledReason"]
    waiting = WebhookDelivery.objects.filter(webhook=webhook).order_by("id")
    assert [(d.status, d.next_attempt_at) for d in waiting] == [(DeliveryStatus.PENDING, None)] * 6
    time.sleep(1)  # nothing is sent while it is disabled (the sweeper runs every 0.5 s)
    failed_before = len(receiver.requests)

    receiver.default = Reply(status=200)
    response = api_client.patch(
        f"/v1/webhooks/{webhook.pk}", {"active": True}, format="json", HTTP_AUTHORIZATION=f"Bearer {key}"
    )
    assert response.status_code == 200
    assert response.json()["webhook"]["disabledReason"] is None

    requests = receiver.wait_for(failed_before + 6)
    wait_until(
        lambda: WebhookDelivery.objects.filter(webhook=webhook, status=DeliveryStatus.SUCCEEDED).count() == 6,
        what="every delivery to succeed",
    )
    resumed = requests[failed_before:]
    assert [request.json()["payload"]["n"] for request in resumed] == list(range(6))
    assert [request.headers["webhook-id"] for request in resumed] == [d.message_id for d in deliveries]
