"""The retention of the delivery log: beat deletes finished deliveries (and their attempts) whose
event is older than the retention, in short batches; open deliveries and newer ones stay."""

from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from tests.support.database import another_session
from webhooks.models import DeliveryAttempt, DeliveryStatus, WebhookDelivery
from webhooks.retention import purge_old_deliveries, retention_cutoff
from webhooks.signing import new_message_id
from webhooks.tests.factories import WebhookFactory

pytestmark = pytest.mark.django_db
DAY = 24 * 3600


def make_delivery(webhook, *, days_ago: float, status=DeliveryStatus.SUCCEEDED, attempts: int = 1):
    event_time = timezone.now() - timedelta(days=days_ago)
    delivery = WebhookDelivery.objects.create(
        webhook=webhook,
        trigger_event="BOOKING_CREATED",
        payload={"uid": new_message_id()},
        event_created_at=event_time,
        message_id=new_message_id(),
        status=status,
        attempts=attempts,
    )
    for number in range(1, attempts + 1):
        DeliveryAttempt.objects.create(
            delivery=delivery,
            attempt_number=number,
            attempted_at=event_time,
            request_url=webhook.subscriber_url,
            response_status=200 if status == DeliveryStatus.SUCCEEDED else 500,
            error_class="" if status == DeliveryStatus.SUCCEEDED else "http",
        )
    return delivery


def kept_ids() -> list[int]:
    return list(WebhookDelivery.objects.order_by("id").values_list("id", flat=True))


def test_finished_deliveries_past_the_retention_go_with_their_attempts():
    webhook = WebhookFactory()
    gone = [
        make_delivery(webhook, days_ago=31, status=DeliveryStatus.SUCCEEDED, attempts=2),
        make_delivery(webhook, days_ago=45, status=DeliveryStatus.FAILED, attempts=3),
        make_delivery(webhook, days_ago=400, status=DeliveryStatus.CANCELLED, attempts=0),
    ]
    recent = make_delivery(webhook, days_ago=29, status=DeliveryStatus.FAILED, attempts=2)
    assert purge_old_deliveries() == 3
    assert kept_ids() == [recent.pk]
    assert not DeliveryAttempt.objects.filter(delivery_id__in=[delivery.pk for delivery in gone]).exists()
    assert DeliveryAttempt.objects.filter(delivery=recent).count() == 2


@pytest.mark.parametrize("status", [DeliveryStatus.PENDING, DeliveryStatus.DELIVERING])
def test_an_open_delivery_is_never_purged_however_old(status):
    webhook = WebhookFactory()
    open_delivery = make_delivery(webhook, days_ago=365, status=status, attempts=4)
    make_delivery(webhook, days_ago=365)
    assert purge_old_deliveries() == 1
    assert kept_ids() == [open_delivery.pk]
    assert DeliveryAttempt.objects.filter(delivery=open_delivery).count() == 4


@pytest.mark.parametrize("old_count", [0, 1, 3, 4, 5])
def test_every_batch_boundary_deletes_exactly_the_old_rows(old_count):
    """Batches of 2: an empty run, a partial first batch, full batches and a last empty one."""
    webhook = WebhookFactory()
    for _ in range(old_count):
        make_delivery(webhook, days_ago=60, attempts=1)
    recent = [make_delivery(webhook, days_ago=1) for _ in range(2)]
    assert purge_old_deliveries(batch_size=2) == old_count
    assert kept_ids() == [delivery.pk for delivery in recent]
    assert DeliveryAttempt.objects.count() == 2


def test_a_run_of_bounded_length_stops_after_its_batches_oldest_first_and_the_next_goes_on():
    webhook = WebhookFactory()
    old = [make_delivery(webhook, days_ago=days, attempts=1) for days in (95, 90, 85, 80, 75)]
    recent = make_delivery(webhook, days_ago=1)

    assert purge_old_deliveries(batch_size=2, max_batches=1) == 2
    assert kept_ids() == [delivery.pk for delivery in old[2:]] + [recent.pk]
    assert purge_old_deliveries(batch_size=2, max_batches=2) == 3
    assert kept_ids() == [recent.pk]
    assert DeliveryAttempt.objects.count() == 1  # the recent delivery's own


def test_a_second_run_deletes_nothing_and_changes_nothing():
    webhook = WebhookFactory()
    make_delivery(webhook, days_ago=90)
    recent = make_delivery(webhook, days_ago=2, status=DeliveryStatus.FAILED)
    pending = make_delivery(webhook, days_ago=90, status=DeliveryStatus.PENDING)
    assert purge_old_deliveries() == 1
    before = list(WebhookDelivery.objects.order_by("id").values())
    assert purge_old_deliveries() == 0
    assert list(WebhookDelivery.objects.order_by("id").values()) == before
    assert kept_ids() == [recent.pk, pending.pk]


def test_the_retention_setting_moves_the_cutoff(settings):
    settings.WEBHOOKS = {**settings.WEBHOOKS, "DELIVERY_RETENTION_SECONDS": 7 * DAY, "EVENTS_RETENTION_SECONDS": DAY}
    webhook = WebhookFactory()
    make_delivery(webhook, days_ago=8)
    kept = make_delivery(webhook, days_ago=6)
    assert purge_old_deliveries() == 1
    assert kept_ids() == [kept.pk]


def test_the_event_feed_keeps_its_longer_window(settings):
    """GET /v1/events reads the same rows: a longer events retention keeps them for it."""
    settings.WEBHOOKS = {
        **settings.WEBHOOKS,
        "DELIVERY_RETENTION_SECONDS": 7 * DAY,
        "EVENTS_RETENTION_SECONDS": 20 * DAY,
    }
    webhook = WebhookFactory()
    make_delivery(webhook, days_ago=21)
    kept = make_delivery(webhook, days_ago=8)
    assert retention_cutoff() < timezone.now() - timedelta(days=19)
    assert purge_old_deliveries() == 1
    assert kept_ids() == [kept.pk]


def test_beat_runs_the_purge(settings):
    from webhooks.tasks import purge_deliveries

    schedule = settings.CELERY_BEAT_SCHEDULE["webhooks-purge"]
    assert schedule["task"] == purge_deliveries.name
    make_delivery(WebhookFactory(), days_ago=31)
    assert purge_deliveries.apply().get() == 1
    assert not WebhookDelivery.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_a_row_someone_holds_is_skipped_not_waited_for():
    """Each batch locks its rows with SKIP LOCKED: a row locked by a running transaction stays for a
    later run, and the purge does not queue behind it."""
    webhook = WebhookFactory()
    held = make_delivery(webhook, days_ago=40)
    free = make_delivery(webhook, days_ago=41)
    with another_session() as holder:
        holder.execute("BEGIN")
        holder.execute("SET LOCAL lock_timeout = '10s'")
        holder.execute("SELECT id FROM webhooks_webhookdelivery WHERE id = %s FOR UPDATE", [held.pk])
        with connection.cursor() as cursor:
            cursor.execute("SET lock_timeout = '2s'")  # a wait would fail the purge, not hang the test
        try:
            assert purge_old_deliveries() == 1
        finally:
            with connection.cursor() as cursor:
                cursor.execute("SET lock_timeout = 0")
            holder.execute("ROLLBACK")
    assert kept_ids() == [held.pk]
    assert not WebhookDelivery.objects.filter(pk=free.pk).exists()
    assert purge_old_deliveries() == 1
    assert kept_ids() == []
