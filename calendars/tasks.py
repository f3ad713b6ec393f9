"""The worker's side: load by id, call a service."""

from celery import shared_task

from calendars.models import CalendarConnection
from calendars.services import connection_refresh, connections_due


@shared_task(name="calendars.refresh_connection", ignore_result=True)
def refresh_connection(connection_id: int) -> None:
    connection = CalendarConnection.objects.filter(pk=connection_id).first()
    if connection is not None:
        connection_refresh(connection=connection)


@shared_task(name="calendars.refresh_due", ignore_result=True)
def refresh_due() -> None:
    """Beat, every REFRESH_INTERVAL_SECONDS: re-read each connection whose last read is older."""
    for connection_id in connections_due():
        refresh_connection.delay(connection_id)
