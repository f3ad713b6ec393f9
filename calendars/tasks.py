"""The worker's side: load by id, call a service."""

from celery import shared_task

from calendars.models import CalendarConnection
from calendars.services import connection_refresh, connections_due
from calendars.writes import apply_writes as apply_booking_writes
from calendars.writes import due_write_bookings


@shared_task(name="calendars.refresh_connection", ignore_result=True)
def refresh_connection(connection_id: int) -> None:
    connection = CalendarConnection.objects.filter(pk=connection_id).first()
    if connection is not None:
        connection_refresh(connection=connection)


@shared_task(name="calendars.apply_writes", ignore_result=True)
def apply_writes(booking_id: int) -> None:
    apply_booking_writes(booking_id)


@shared_task(name="calendars.refresh_due", ignore_result=True)
def refresh_due() -> None:
    """Beat, every REFRESH_INTERVAL_SECONDS: re-read each connection whose last read is older, and
    send the event writes that are due (retries, and those whose message was lost)."""
    for connection_id in connections_due():
        refresh_connection.delay(connection_id)
    for booking_id in due_write_bookings():
        apply_writes.delay(booking_id)
