"""The back office: connections and their health, never a secret; an operator can disconnect."""

import pytest
from django.urls import reverse
from django.utils import timezone

from calendars import crypto
from calendars.models import CalendarConnection, ExternalCalendar
from calendars.tests.factories import CalendarConnectionFactory, ExternalCalendarFactory

pytestmark = pytest.mark.django_db


def test_the_list_and_the_page_show_health_but_no_secret(operator_client):
    healthy = CalendarConnectionFactory(last_success_at=timezone.now())
    broken = CalendarConnectionFactory(last_error="The calendar server refused the username or password.")
    ExternalCalendarFactory(connection=healthy, name="Work")
    listing = operator_client.get(reverse("admin:calendars_calendarconnection_changelist"))
    assert listing.status_code == 200
    page = listing.content.decode()
    assert "refused the username or password" in page
    page += operator_client.get(
        reverse("admin:calendars_calendarconnection_change", args=[healthy.pk])
    ).content.decode()
    assert "Work" in page
    for connection in (healthy, broken):
        assert "s3cret" not in page
        assert connection.credentials not in page
        assert crypto.decrypt(connection.credentials)["password"] == "s3cret"


def test_an_operator_disconnects_a_connection_with_the_action(operator_client):
    connection = CalendarConnectionFactory()
    ExternalCalendarFactory(connection=connection)
    response = operator_client.post(
        reverse("admin:calendars_calendarconnection_changelist"),
        {"action": "disconnect", "_selected_action": [connection.pk]},
    )
    assert response.status_code == 302
    assert not CalendarConnection.objects.exists()
    assert not ExternalCalendar.objects.exists()
