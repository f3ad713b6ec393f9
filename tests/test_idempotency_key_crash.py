"""A keyed write whose server process dies half-way (tests.support.faults kills a real gunicorn
worker): the write and its stored answer commit together or not at all, and the client's retry
gets the committed answer or runs the write once."""

import tempfile
from pathlib import Path

import pytest
import requests

from accounts.tests.factories import ApiKeyFactory, UserFactory
from core.models import IdempotencyRecord
from scheduling.models import Booking
from scheduling.tests.factories import EventTypeFactory
from tests.support.outages import Gunicorn
from tests.test_idempotency_key import booking_body
from tests.test_outages_live import live_database_url
from webhooks.models import WebhookDelivery, WebhookTrigger
from webhooks.tests.factories import WebhookFactory


def crashing_server(point: str) -> tuple[Gunicorn, Path]:
    armed = Path(tempfile.mkdtemp(prefix="idempotency-crash-")) / "armed"
    armed.touch()
    env = {
        "DJANGO_SETTINGS_MODULE": "tests.support.fault_settings",
        "DATABASE_URL": live_database_url(),
        "IDEMPOTENCY_CRASH_AT": point,
        "IDEMPOTENCY_CRASH_ARMED": str(armed),
    }
    return Gunicorn(env, workers=1), armed


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    ("point", "replayed"),
    [
        ("committed", True),  # the booking and its answer committed: the retry replays it
        ("stored", False),  # neither committed: the retry books, once
    ],
)
def test_a_crash_between_the_write_and_the_answer_leaves_both_or_neither(point, replayed):
    organizer = UserFactory(time_zone="Europe/Berlin")
    raw = ApiKeyFactory(user=organizer).raw_key
    event_type = EventTypeFactory(owner=organizer, length=30)
    WebhookFactory(user=organizer, event_triggers=[WebhookTrigger.BOOKING_CREATED])
    headers = {"Authorization": f"Bearer {raw}", "Idempotency-Key": f"crash-{point}"}
    server, armed = crashing_server(point)
    try:
        server.start()
        with pytest.raises(requests.ConnectionError):
            requests.post(f"{server.url}/v1/bookings", json=booking_body(event_type), headers=headers, timeout=30)
        assert not armed.exists()  # the process did die at that point
        assert Booking.objects.count() == (1 if replayed else 0)
        assert IdempotencyRecord.objects.count() == (1 if replayed else 0)

        server.wait_for(server._answers, "gunicorn to replace its worker")
        retry = requests.post(f"{server.url}/v1/bookings", json=booking_body(event_type), headers=headers, timeout=30)
    finally:
        server.stop()

    assert retry.status_code == 200, retry.text
    assert (retry.headers.get("Idempotent-Replayed") == "true") is replayed
    booking = Booking.objects.get()
    assert retry.json()["id"] == booking.pk
    assert bytes(IdempotencyRecord.objects.get().response_body) == retry.content
    assert WebhookDelivery.objects.count() == 1
