"""A real Celery worker (its own process, configured from the environment as in production:
EMAIL_URL, DEFAULT_FROM_EMAIL) sends a booking's messages to the loopback SMTP server once each,
after the booking's transaction has committed."""

from datetime import datetime, time, timedelta
from zoneinfo import ZoneInfo

from django.utils import timezone

from accounts.tests.factories import ApiKeyFactory, UserFactory
from notifications.models import EmailMessage, EmailStatus
from scheduling.tests.factories import EventTypeFactory
from tests.support.credentials import bearer
from tests.support.live_services import wait_until

BERLIN = ZoneInfo("Europe/Berlin")


def test_the_worker_sends_each_message_once_after_commit(api_client, smtp_server, monkeypatch, start_worker):  # noqa: F811
    monkeypatch.setenv("EMAIL_URL", f"smtp://127.0.0.1:{smtp_server.port}")
    monkeypatch.setenv("DEFAULT_FROM_EMAIL", "Bookings <bookings@worker.test>")
    start_worker()
    organizer = UserFactory(name="Ada", email="ada@example.org")
    key = ApiKeyFactory(user=organizer).raw_key
    event_type = EventTypeFactory(owner=organizer, length=30)
    day = timezone.now().astimezone(BERLIN).date() + timedelta(days=14)
    while day.weekday() >= 5:
        day += timedelta(days=1)
    body = {
        "eventTypeId": event_type.pk,
        "start": datetime.combine(day, time(10), tzinfo=BERLIN).isoformat(),
        "responses": {"name": "Grace", "email": "grace@example.org", "guests": ["alan@example.org"]},
        "timeZone": "Europe/London",
        "metadata": {},
    }
    response = api_client.post("/v1/bookings", body, format="json", **bearer(key))
    assert response.status_code == 200, response.json()

    wait_until(lambda: len(smtp_server.received) >= 3, 60, "three messages at the SMTP server")
    wait_until(
        lambda: set(EmailMessage.objects.values_list("status", flat=True)) == {EmailStatus.SENT},
        30,
        "the messages marked sent",
    )
    assert sorted(address for each in smtp_server.received for address in each.rcpt_tos) == [
        "ada@example.org",
        "alan@example.org",
        "grace@example.org",
    ]
    assert {each.message["From"] for each in smtp_server.received} == {"Bookings <bookings@worker.test>"}
    assert all(each.calendar()["METHOD"] == "REQUEST" for each in smtp_server.received)
    assert len({each.message["Message-ID"] for each in smtp_server.received}) == 3
