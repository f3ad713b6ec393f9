"""A re-enabled webhook's kept deliveries go out oldest first, one after the other, and the order is
held by the database rather than by timing: the ones not yet released have no due time, so no
worker and no sweep can send them early, however long the sequence takes (a lease that runs out
sends the released one again, never the next)."""

from datetime import timedelta

import pytest
from django.db import transaction
from django.utils import timezone

from tests.support.live_services import Reply
from webhooks import delivery as engine
from webhooks.delivery import attempt_delivery, webhook_auto_disable
from webhooks.models import DeliveryStatus, WebhookDelivery, WebhookTrigger
from webhooks.outbox import emit_event
from webhooks.services import delivery_redeliver, webhook_update
from webhooks.tests.factories import WebhookFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def enqueued(monkeypatch):
    """The delivery ids handed to the broker (after commit), in order."""
    from webhooks import services

    sent: list[int] = []
    for module in (engine, services):
        monkeypatch.setattr(module, "enqueue_deliveries", lambda ids, countdown=None: sent.extend(ids))
    return sent


@pytest.fixture
def kept(receiver, django_capture_on_commit_callbacks):
    """A webhook disabled for failing, with four deliveries kept (pending, no due time)."""
    webhook = WebhookFactory(subscriber_url=receiver.url())
    with django_capture_on_commit_callbacks(execute=False):
        deliveries = [
            emit_event(trigger=WebhookTrigger.BOOKING_CREATED, payload={"n": n}, user=webhook.user)[0] for n in range(4)
        ]
    webhook_auto_disable(webhook=webhook, reason="Every delivery failed; disabled automatically.")
    return webhook, [d.pk for d in deliveries]


def states(ids):
    rows = {d.pk: d for d in WebhookDelivery.objects.filter(pk__in=ids)}
    return [(rows[i].status, rows[i].next_attempt_at is not None, rows[i].in_sequence) for i in ids]


def reenable(webhook, capture):
    with capture(execute=True):
        webhook_update(webhook=webhook, active=True)


def test_reenabling_releases_the_oldest_alone(kept, enqueued, django_capture_on_commit_callbacks):
    webhook, ids = kept
    reenable(webhook, django_capture_on_commit_callbacks)

    assert enqueued == [ids[0]]
    assert states(ids) == [(DeliveryStatus.PENDING, True, True)] + [(DeliveryStatus.PENDING, False, True)] * 3
    assert set(WebhookDelivery.objects.filter(pk__in=ids).values_list("retry_index", flat=True)) == {0}


def test_a_sweep_after_every_lease_ran_out_sends_the_released_one_again_and_not_the_next(
    kept, enqueued, django_capture_on_commit_callbacks
):
    webhook, ids = kept
    reenable(webhook, django_capture_on_commit_callbacks)
    # Its message was lost and its lease ran out (a worker killed, Redis flushed, a slow machine).
    WebhookDelivery.objects.filter(pk__in=ids).update(lease_expires_at=timezone.now() - timedelta(seconds=1))
    enqueued.clear()

    with django_capture_on_commit_callbacks(execute=True):
        engine._sweep_batch(100)

    assert enqueued == [ids[0]]
    assert states(ids)[1:] == [(DeliveryStatus.PENDING, False, True)] * 3


def test_each_end_releases_the_next_whatever_the_outcome(kept, enqueued, receiver, django_capture_on_commit_callbacks):
    webhook, ids = kept
    reenable(webhook, django_capture_on_commit_callbacks)
    receiver.reply(Reply(status=200), Reply(status=500), Reply(status=200), Reply(status=200))

    for position, delivery_id in enumerate(ids):
        enqueued.clear()
        with django_capture_on_commit_callbacks(execute=True):
            attempt_delivery(delivery_id=delivery_id)
        # The one that ended left the sequence; the next (and only it) is due now.
        assert [i for i in enqueued if i != delivery_id] == ids[position + 1 : position + 2]

    assert [request.json()["payload"]["n"] for request in receiver.requests] == [0, 1, 2, 3]
    assert states(ids) == [
        (DeliveryStatus.SUCCEEDED, False, False),
        (DeliveryStatus.PENDING, True, False),  # its retry waits on its own schedule
        (DeliveryStatus.SUCCEEDED, False, False),
        (DeliveryStatus.SUCCEEDED, False, False),
    ]


def test_a_message_for_a_delivery_not_yet_released_sends_nothing(
    kept, enqueued, receiver, django_capture_on_commit_callbacks
):
    webhook, ids = kept
    reenable(webhook, django_capture_on_commit_callbacks)

    with django_capture_on_commit_callbacks(execute=True):
        assert attempt_delivery(delivery_id=ids[2]) is None

    assert receiver.requests == []
    assert states(ids)[2] == (DeliveryStatus.PENDING, False, True)


def test_disabled_again_mid_sequence_it_starts_again_from_the_one_not_sent(
    kept, enqueued, django_capture_on_commit_callbacks
):
    webhook, ids = kept
    reenable(webhook, django_capture_on_commit_callbacks)
    webhook_auto_disable(webhook=webhook, reason="Every delivery failed; disabled automatically.")
    assert states(ids) == [(DeliveryStatus.PENDING, False, True)] * 4
    enqueued.clear()

    reenable(webhook, django_capture_on_commit_callbacks)

    assert enqueued == [ids[0]]


def test_a_redelivered_one_goes_at_once_and_the_sequence_waits_for_both(
    kept, enqueued, receiver, django_capture_on_commit_callbacks
):
    webhook, ids = kept
    reenable(webhook, django_capture_on_commit_callbacks)
    with django_capture_on_commit_callbacks(execute=True):
        delivery_redeliver(delivery=WebhookDelivery.objects.get(pk=ids[3]))
    assert enqueued == [ids[0], ids[3]]

    enqueued.clear()
    with django_capture_on_commit_callbacks(execute=True):
        attempt_delivery(delivery_id=ids[0])
    assert [i for i in enqueued if i != ids[0]] == []  # the redelivered one is still out

    with django_capture_on_commit_callbacks(execute=True):
        attempt_delivery(delivery_id=ids[3])
    assert [i for i in enqueued if i not in (ids[0], ids[3])] == [ids[1]]


def test_deactivating_it_takes_every_delivery_out_of_the_sequence(kept, enqueued, django_capture_on_commit_callbacks):
    webhook, ids = kept
    reenable(webhook, django_capture_on_commit_callbacks)

    with transaction.atomic():
        webhook_update(webhook=webhook, active=False)

    assert states(ids) == [(DeliveryStatus.CANCELLED, False, False)] * 4
