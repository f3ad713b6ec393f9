"""The retention of the delivery log (the outbox): beat deletes finished deliveries, with their
attempts, once their event is older than every window that can still reach them.

`recover` and the delivery log's `since` reach back DELIVERY_RETENTION_SECONDS, `GET /v1/events`
EVENTS_RETENTION_SECONDS; the purge keeps the longer of the two, so neither loses a row it
promises. A delivery still `pending` or `delivering` is never deleted, however old: events are
never lost, only their finished records are.
"""

from datetime import timedelta

from django.utils import timezone

from core.batches import delete_in_batches
from webhooks.conf import webhook_setting
from webhooks.models import OPEN_DELIVERY_STATUSES, DeliveryAttempt, DeliveryStatus, WebhookDelivery

FINISHED_STATUSES = tuple(status for status in DeliveryStatus.values if status not in OPEN_DELIVERY_STATUSES)


def retention_cutoff(now=None):
    """Deliveries whose event happened before this may be deleted once finished."""
    kept = max(webhook_setting("DELIVERY_RETENTION_SECONDS"), webhook_setting("EVENTS_RETENTION_SECONDS"))
    return (now or timezone.now()) - timedelta(seconds=kept)


def purge_old_deliveries(*, now=None, batch_size: int | None = None, max_batches: int | None = None) -> int:
    """Delete finished deliveries (and their attempts) past the retention, oldest first, in short
    batches (core.batches), at most `max_batches` of them if given; returns how many deliveries
    went. Idempotent: a second run finds nothing more to delete."""
    placeholders = ", ".join(["%s"] * len(FINISHED_STATUSES))
    return delete_in_batches(
        table=WebhookDelivery._meta.db_table,
        # The partial index `delivery_finished_event_time` answers exactly this condition and order.
        where=f"status IN ({placeholders}) AND event_created_at < %s",
        params=[*FINISHED_STATUSES, retention_cutoff(now)],
        order_by="event_created_at",
        batch_size=batch_size or webhook_setting("PURGE_BATCH_SIZE"),
        dependents=((DeliveryAttempt._meta.db_table, DeliveryAttempt._meta.get_field("delivery").column),),
        max_batches=max_batches,
    )
