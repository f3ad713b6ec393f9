"""Celery tasks: another interface to the delivery engine (load by id, call the service)."""

from celery import shared_task
from django.db import close_old_connections

from webhooks.delivery import attempt_delivery, sweep


@shared_task(name="webhooks.deliver", ignore_result=True)
def deliver_webhook(delivery_id: int) -> None:
    # What Django does around a request: drop a connection that broke or outlived CONN_MAX_AGE.
    # It matters when the worker keeps connections between tasks (CELERY_DB_REUSE_MAX), which is
    # what makes a delivery cheap: opening a PostgreSQL connection costs more than the delivery.
    close_old_connections()
    attempt_delivery(delivery_id=delivery_id)


@shared_task(name="webhooks.sweep", ignore_result=True)
def sweep_webhook_deliveries() -> None:
    close_old_connections()
    sweep()
