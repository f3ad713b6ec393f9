"""The sweeper drains a backlog at the workers' rate: batch after batch while the broker's queue has
room (SWEEP_QUEUE_TARGET), not one fixed batch per run; what it cannot queue now stays unleased, so
the next run takes it without waiting for a lease to run out."""

import base64
import json

import pytest
import redis
from django.utils import timezone

from tests.support.live_services import wait_until
from webhooks.delivery import sweep
from webhooks.dispatch import broker_backlog
from webhooks.models import DeliveryStatus, WebhookDelivery
from webhooks.tests.factories import WebhookDeliveryFactory, WebhookFactory

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def backlog(settings):
    """30 due deliveries whose leases ran out (a Redis outage lost their messages), an empty queue."""
    broker = redis.Redis.from_url(settings.CELERY_BROKER_URL)
    broker.flushdb()
    webhook = WebhookFactory()
    past = timezone.now() - timezone.timedelta(minutes=5)
    rows = WebhookDeliveryFactory.create_batch(
        30, webhook=webhook, status=DeliveryStatus.PENDING, next_attempt_at=past, lease_expires_at=past
    )
    yield rows
    broker.flushdb()


def test_one_run_claims_batch_after_batch_while_the_queue_has_room(backlog, settings):
    settings.WEBHOOKS = {**settings.WEBHOOKS, "SWEEP_BATCH_SIZE": 4, "SWEEP_QUEUE_TARGET": 1000}

    assert sweep() == 30
    assert broker_backlog() == 30
    assert not WebhookDelivery.objects.filter(lease_expires_at__lte=timezone.now()).exists()


def test_a_full_queue_stops_the_run_and_leaves_the_rest_for_the_next_one_unleased(backlog, settings):
    settings.WEBHOOKS = {
        **settings.WEBHOOKS,
        "SWEEP_BATCH_SIZE": 4,
        "SWEEP_QUEUE_TARGET": 10,
        "SWEEP_INTERVAL_SECONDS": 0.3,
    }

    assert sweep() == 10
    assert broker_backlog() == 10
    waiting = WebhookDelivery.objects.filter(lease_expires_at__lte=timezone.now())
    assert waiting.count() == 20  # not leased: the next run takes them at once

    redis.Redis.from_url(settings.CELERY_BROKER_URL).delete("celery")  # the workers took the queue
    assert sweep() == 10
    assert waiting.count() == 10


def test_deliveries_waiting_behind_a_dead_workers_slots_are_sent_once_the_holds_run_out(settings):
    """A worker killed after logging its attempts but before giving their slots back: the slots stay
    held until the hold runs out, and nothing releases them to wake the deliveries waiting behind.
    The first sweep after that sends them, though their own leases (renewed by an earlier sweep)
    are far from over."""
    from webhooks.slots import gate

    broker = redis.Redis.from_url(settings.CELERY_BROKER_URL)
    broker.flushdb()
    settings.WEBHOOKS = {**settings.WEBHOOKS, "CONCURRENCY_PER_WEBHOOK": 2}
    webhook = WebhookFactory()
    now = timezone.now()
    done = WebhookDeliveryFactory.create_batch(2, webhook=webhook, status=DeliveryStatus.SUCCEEDED)
    waiting = WebhookDeliveryFactory.create_batch(
        3,
        webhook=webhook,
        status=DeliveryStatus.PENDING,
        next_attempt_at=now,
        lease_expires_at=now + timezone.timedelta(minutes=1),
    )
    for delivery in done:  # the dead worker's holds, 1 s long
        assert gate().acquire(webhook_id=webhook.pk, delivery_id=delivery.pk, cap=2, hold_seconds=1, rate=None).admitted
    for delivery in waiting:
        assert (
            not gate()
            .acquire(webhook_id=webhook.pk, delivery_id=delivery.pk, cap=2, hold_seconds=60, rate=None)
            .admitted
        )

    assert sweep() == 0  # the holds are still valid: nothing to wake
    wait_until(lambda: gate().in_flight(webhook.pk) == 0, 10, "the holds to run out")

    assert sweep() == 2  # one per freed slot, oldest first; their own ends wake the third
    queued = [json.loads(raw) for raw in broker.lrange("celery", 0, -1)]
    sent = sorted(json.loads(base64.b64decode(message["body"]))[0][0] for message in queued)
    assert sent == sorted(delivery.pk for delivery in waiting[:2])
    broker.flushdb()
