"""Celery tasks of core: housekeeping run by beat."""

from celery import shared_task

from core.idempotency import purge_expired


@shared_task(name="core.purge_idempotency_records", ignore_result=True)
def purge_idempotency_records() -> int:
    """Drop stored Idempotency-Key answers past their retention, in batches."""
    return purge_expired()
