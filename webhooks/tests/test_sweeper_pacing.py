"""The sweeper drains a backlog at the workers' rate: batch after batch while the broker's queue has
room (SWEEP_QUEUE_TARGET), not one fixed batch per run; what it cannot queue now stays unleased, so
the next run takes it without waiting for a lease to run out."""

import pytest
import redis
from django.utils import timezone

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
