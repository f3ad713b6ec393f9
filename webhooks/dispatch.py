"""Handing delivery rows to the broker, after the transaction that wrote them has committed.

The message names the task (`webhooks.deliver`) instead of importing it: the task runs the
delivery engine, and the engine enqueues its own short retries through here, so importing the
task would tie the engine and its task into an import loop. The task is registered by name when
Django starts (`WebhooksConfig.ready`), so sending it still goes through `Task.apply_async`
(eager mode, the task's options) exactly as a direct call would.
"""

import logging

from celery import current_app

logger = logging.getLogger(__name__)

DELIVER_TASK = "webhooks.deliver"


def enqueue_deliveries(delivery_ids: list[int], *, countdown: float | None = None) -> None:
    """Send one message per delivery to the broker, all in one round trip: kombu's producer batch
    writes them to Redis in one pipeline (a message each, as before, so that workers share them out).

    A broker that is down, or a pipeline that fails half-way, loses nothing: the rows stay leased
    for LEASE_SECONDS, then the sweeper enqueues them again (a second message for a delivery finds
    it claimed or done, as the sweeper's own do).
    """
    deliver_webhook = current_app.tasks[DELIVER_TASK]
    try:
        with deliver_webhook.app.producer_or_acquire() as producer, producer.batch():
            for delivery_id in delivery_ids:
                deliver_webhook.apply_async((delivery_id,), countdown=countdown, producer=producer)
    except Exception:  # noqa: BLE001 - the broker is down; the sweeper will retry
        logger.warning("Could not enqueue webhook deliveries %s; the sweeper will pick them up", delivery_ids)
