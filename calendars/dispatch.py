"""Handing work to the worker after the transaction that made it due has committed. A broker that
is down loses nothing: beat's `calendars.refresh_due` re-reads stale connections and applies due
event writes anyway."""

import logging

from celery import current_app
from django.db import transaction

logger = logging.getLogger(__name__)

REFRESH_TASK = "calendars.refresh_connection"
WRITE_TASK = "calendars.apply_writes"


def _send(task_name: str, argument: int) -> None:
    try:
        current_app.tasks[task_name].apply_async((argument,))
    except Exception:  # noqa: BLE001 - the broker is down; beat's sweep picks the work up
        logger.warning("Could not enqueue %s(%s); beat's sweep will pick it up", task_name, argument)


def enqueue_refresh(connection_id: int) -> None:
    transaction.on_commit(lambda: _send(REFRESH_TASK, connection_id))


def enqueue_writes(booking_id: int) -> None:
    transaction.on_commit(lambda: _send(WRITE_TASK, booking_id))
