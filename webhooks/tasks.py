"""Celery tasks: another interface to the delivery engine (load by id, call the service)."""

from celery import shared_task

from webhooks.delivery import attempt_delivery, sweep


@shared_task(name="webhooks.deliver", ignore_result=True)
def deliver_webhook(delivery_id: int) -> None:
    attempt_delivery(delivery_id=delivery_id)


@shared_task(name="webhooks.sweep", ignore_result=True)
def sweep_webhook_deliveries() -> None:
    sweep()
