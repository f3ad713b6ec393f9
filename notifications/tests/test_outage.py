"""The SMTP server away or refusing: bookings go through, nothing is lost, and once it is back every
message arrives exactly once (the outage drill), with each attempt logged."""

from datetime import datetime, time, timedelta
from zoneinfo import ZoneInfo

import pytest
from django.utils import timezone

from accounts.tests.factories import ApiKeyFactory, UserFactory
from notifications.models import EmailAttempt, EmailMessage, EmailStatus
from notifications.sending import sweep
from scheduling.models import Booking
from scheduling.tests.factories import EventTypeFactory
from tests.support.credentials import bearer

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("eager_tasks")]

BERLIN = ZoneInfo("Europe/Berlin")


def weekday_slots(count: int) -> list[datetime]:
    """`count` free 30-minute slots on weekdays from two weeks ahead, 09:00-17:00 Berlin."""
    day = timezone.now().astimezone(BERLIN).date() + timedelta(days=14)
    slots = []
    while len(slots) < count:
        if day.weekday() < 5:
            for index in range(16):
                start = datetime.combine(day, time(9), tzinfo=BERLIN) + timedelta(minutes=30 * index)
                slots.append(start)
        day += timedelta(days=1)
    return slots[:count]


@pytest.fixture
def organizer():
    return UserFactory(name="Ada", email="ada@example.org", time_zone="Europe/Berlin")


def test_outage_drill_fifty_bookings_every_message_exactly_once(
    api_client, organizer, settings, smtp_server, django_capture_on_commit_callbacks
):
    settings.NOTIFICATIONS = {**settings.NOTIFICATIONS, "SWEEP_BATCH_SIZE": 500}
    key = ApiKeyFactory(user=organizer).raw_key
    event_type = EventTypeFactory(owner=organizer, length=30)
    smtp_server.stop()
    for index, start in enumerate(weekday_slots(50)):
        body = {
            "eventTypeId": event_type.pk,
            "start": start.isoformat(),
            "responses": {"name": f"Booker {index}", "email": f"booker{index}@example.org"},
            "timeZone": "Europe/London",
            "language": "en",
            "metadata": {},
        }
        with django_capture_on_commit_callbacks(execute=True):
            response = api_client.post("/v1/bookings", body, format="json", **bearer(key))
        assert response.status_code == 200, response.json()
    assert Booking.objects.count() == 50
    assert smtp_server.received == []
    # The first booking's first attempt found the server away; after it, the worker left every
    # message to the sweep (a pause), so the outage cost one failed attempt, not one per booking.
    assert EmailMessage.objects.filter(status=EmailStatus.PENDING).count() == 100
    assert EmailAttempt.objects.filter(succeeded=False).count() == 1

    # Still away when the sweep comes: nothing is lost, nothing is marked sent.
    later = timezone.now() + timedelta(minutes=2)
    assert sweep(now=later) == 0
    smtp_server.start()
    sent = sweep(now=later + timedelta(minutes=30))
    assert sent == 100
    assert sweep(now=later + timedelta(hours=2)) == 0  # a second pass sends nothing again

    received = [address for each in smtp_server.received for address in each.rcpt_tos]
    expected = [f"booker{index}@example.org" for index in range(50)] + ["ada@example.org"] * 50
    assert sorted(received) == sorted(expected)
    message_ids = [each.message["Message-ID"] for each in smtp_server.received]
    assert len(set(message_ids)) == 100
    assert set(EmailMessage.objects.values_list("status", flat=True)) == {EmailStatus.SENT}

    # The server is back: a new booking's messages go at once again, not at the next sweep.
    body = {
        "eventTypeId": event_type.pk,
        "start": weekday_slots(51)[-1].isoformat(),
        "responses": {"name": "Late", "email": "late@example.org"},
        "timeZone": "Europe/London",
        "metadata": {},
    }
    with django_capture_on_commit_callbacks(execute=True):
        assert api_client.post("/v1/bookings", body, format="json", **bearer(key)).status_code == 200
    assert len(smtp_server.to("late@example.org")) == 1


def test_a_refusing_server_is_retried_with_backoff_and_each_attempt_is_logged(
    api_client, organizer, smtp_server, django_capture_on_commit_callbacks
):
    key = ApiKeyFactory(user=organizer).raw_key
    event_type = EventTypeFactory(owner=organizer, length=30)
    smtp_server.refuse = True
    body = {
        "eventTypeId": event_type.pk,
        "start": weekday_slots(1)[0].isoformat(),
        "responses": {"name": "Grace", "email": "grace@example.org"},
        "timeZone": "Europe/London",
        "metadata": {},
    }
    with django_capture_on_commit_callbacks(execute=True):
        assert api_client.post("/v1/bookings", body, format="json", **bearer(key)).status_code == 200
    message = EmailMessage.objects.get(recipient="grace@example.org")
    assert (message.status, message.attempts) == (EmailStatus.PENDING, 1)
    assert "451" in message.last_error
    first_retry = message.next_attempt_at
    assert sweep(now=first_retry - timedelta(seconds=1)) == 0  # not due yet
    assert sweep(now=first_retry) == 0  # due, refused again: the next step of the backoff
    message.refresh_from_db()
    assert message.attempts == 2 and message.next_attempt_at - first_retry >= timedelta(seconds=60)
    smtp_server.refuse = False
    assert sweep(now=message.next_attempt_at) == 2
    message.refresh_from_db()
    assert message.status == EmailStatus.SENT
    assert list(message.attempt_log.values_list("succeeded", flat=True)) == [False, False, True]
    assert len(smtp_server.to("grace@example.org")) == 1
