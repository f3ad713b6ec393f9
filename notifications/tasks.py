"""Celery tasks: the first attempt of new messages (the pass a booking's change schedules after
commit, or a change's own messages when the cache was away), beat's sweep and the retention purge."""

from celery import shared_task
from django.db import close_old_connections

from notifications.sending import purge_finished, send_messages, send_pending, sweep


@shared_task(name="notifications.send", ignore_result=True)
def send_notifications(message_ids: list[int]) -> None:
    close_old_connections()
    send_messages(message_ids, first_only=True)


@shared_task(name="notifications.send_pending", ignore_result=True)
def send_pending_notifications() -> None:
    close_old_connections()
    send_pending()


@shared_task(name="notifications.sweep", ignore_result=True)
def sweep_notifications() -> None:
    close_old_connections()
    sweep()


@shared_task(name="notifications.purge_messages", ignore_result=True)
def purge_messages() -> int:
    close_old_connections()
    return purge_finished()
