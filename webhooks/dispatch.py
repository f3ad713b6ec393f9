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


def enqueue_new_deliveries(deliveries: list[tuple[int, object, float | None]]) -> None:
    """After commit, new deliveries `(delivery id, webhook id, rate limit)` pass their webhook's gate
    here, in the process that wrote them, before any message is published: one that gets a slot is
    published (the worker finds the slot already its own), one that finds every slot taken waits
    in the webhook's queue without a message (the slot that frees sends it), one that comes too
    early for the rate limit is published with that countdown. So events for a subscriber that is
    holding its slots cost the workers nothing until it answers. Without Redis (`make run`) the gate
    lives in the worker alone, and every delivery is published."""
    from django.conf import settings

    from webhooks.conf import webhook_setting
    from webhooks.slots import publisher_gate

    if not settings.REDIS_URL:
        enqueue_deliveries([delivery_id for delivery_id, _, _ in deliveries])
        return
    admitted, later = [], []
    try:
        admissions = publisher_gate().acquire_many(
            [(webhook_id, delivery_id, rate_limit) for delivery_id, webhook_id, rate_limit in deliveries],
            cap=webhook_setting("CONCURRENCY_PER_WEBHOOK"),
            hold_seconds=webhook_setting("LEASE_SECONDS"),
        )
        for (delivery_id, _, _), admission in zip(deliveries, admissions, strict=True):
            if admission.admitted:
                admitted.append(delivery_id)
            elif admission.retry_in is not None:
                later.append((delivery_id, admission.retry_in))
    except Exception:  # noqa: BLE001 - Redis is down: publishing would fail too; the sweeper sends them
        logger.warning(
            "Could not enqueue webhook deliveries %s; the sweeper will pick them up", [d for d, _, _ in deliveries]
        )
        return
    if admitted:
        enqueue_deliveries(admitted)
    for delivery_id, countdown in later:
        enqueue_deliveries([delivery_id], countdown=countdown)


def broker_backlog() -> int | None:
    """Messages waiting in the default queue (not yet taken by a worker), or None when the broker
    cannot say (it is down, or its transport does not count). The sweeper paces itself on it."""
    from kombu.exceptions import ChannelError

    try:
        with current_app.connection_or_acquire() as connection:
            queue = current_app.conf.task_default_queue
            try:
                return int(connection.default_channel.queue_declare(queue=queue, passive=True).message_count)
            except ChannelError:  # not declared yet: nothing was ever queued there
                return 0
    except Exception:  # noqa: BLE001 - unknown: the sweeper claims one batch, as without pacing
        return None
