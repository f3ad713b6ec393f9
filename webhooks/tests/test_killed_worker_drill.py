"""A worker killed (SIGKILL) in the middle of deliveries, twice in a row: every delivery it held
(sending, prefetched, holding one of its webhook's slots in Redis, or waiting behind them) is sent
once LEASE_SECONDS have passed and the sweeper has run ONCE. The surviving worker runs without a
beat here and the test runs the sweeper itself, so "one sweep" is counted, not timed: a delivery
that needed a second lease or a second sweep would never arrive."""

import time

import pytest
from django.db import transaction

from tests.support.live_services import Reply, wait_until
from webhooks.delivery import sweep
from webhooks.models import DeliveryStatus, WebhookDelivery, WebhookTrigger
from webhooks.outbox import emit_event
from webhooks.tests.factories import WebhookFactory

pytestmark = pytest.mark.django_db(transaction=True)

DELIVERIES = 30
LEASE_SECONDS = 3


@pytest.fixture
def drill_settings(settings):
    settings.WEBHOOKS = {
        **settings.WEBHOOKS,
        "LEASE_SECONDS": LEASE_SECONDS,
        "SWEEP_INTERVAL_SECONDS": 0.5,
        "TIMEOUT_SECONDS": 5.0,
        "CONNECT_TIMEOUT_SECONDS": 2.0,
    }
    return settings.WEBHOOKS


def delivered_message_ids(receiver) -> set[str]:
    return {request.headers["webhook-id"] for request in receiver.requests}


def wait_past_the_lease(since: float) -> None:
    time.sleep(max(0.0, since + LEASE_SECONDS + 0.5 - time.monotonic()))


def test_every_delivery_a_killed_worker_held_is_sent_after_one_lease_and_one_sweep(
    start_worker, receiver, drill_settings
):
    receiver.default = Reply(delay=0.4)  # attempts are in flight when the worker dies
    webhook = WebhookFactory(subscriber_url=receiver.url(), event_triggers=[WebhookTrigger.BOOKING_CREATED])
    deliveries = []
    for number in range(DELIVERIES):  # one subscriber: its 4 slots are taken, the rest wait behind them
        with transaction.atomic():
            deliveries += emit_event(trigger=WebhookTrigger.BOOKING_CREATED, payload={"n": number}, user=webhook.user)

    first = start_worker(beat=False)
    receiver.wait_for(4)
    first.kill()
    killed_at = time.monotonic()
    sent_before_second_kill = len(receiver.requests)

    second = start_worker(beat=False)
    wait_past_the_lease(killed_at)
    sweep()  # the first worker's deliveries go to the second one
    receiver.wait_for(sent_before_second_kill + 4, 60)
    second.kill()
    killed_at = time.monotonic()

    start_worker(beat=False)
    wait_past_the_lease(killed_at)
    assert sweep() >= 1  # the one sweep after the lease: everything else follows from it

    wait_until(
        lambda: WebhookDelivery.objects.filter(status=DeliveryStatus.SUCCEEDED).count() == DELIVERIES,
        60,
        "every delivery to succeed after one sweep",
    )
    assert delivered_message_ids(receiver) == {delivery.message_id for delivery in deliveries}
    # At least once: an attempt cut short by a kill may have reached the receiver and is sent again.
    assert len(receiver.requests) >= DELIVERIES
