"""What the e-mails add to `POST /v1/bookings`: one INSERT for all of a change's messages, one
Redis round trip for the sending bound (both counters in one pipeline), one broker message after
commit. Nothing is rendered in the request (the worker renders from the row's context)."""

from datetime import datetime, time, timedelta
from zoneinfo import ZoneInfo

import pytest
from django.core.cache import DEFAULT_CACHE_ALIAS, caches
from django.core.cache.backends.redis import RedisCache
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from redis.client import Pipeline

from notifications import limits
from notifications.conf import overridden
from notifications.models import EmailMessage
from notifications.switches import mail_switches
from scheduling.tests.factories import EventTypeFactory
from tests.support.credentials import bearer

pytestmark = pytest.mark.django_db

BERLIN = ZoneInfo("Europe/Berlin")


def slot(index: int) -> datetime:
    day = timezone.now().astimezone(BERLIN).date() + timedelta(days=14)
    while day.weekday() >= 5:
        day += timedelta(days=1)
    return datetime.combine(day, time(9), tzinfo=BERLIN) + timedelta(minutes=30 * index)


def body(event_type, start: datetime, email: str) -> dict:
    return {
        "eventTypeId": event_type.pk,
        "start": start.isoformat(),
        "responses": {"name": "Grace Hopper", "email": email, "guests": ["alan@example.org"]},
        "timeZone": "America/New_York",
        "language": "de",
        "metadata": {},
    }


def statements(captured) -> list[str]:
    return [q["sql"] for q in captured.captured_queries if not q["sql"].startswith(("SAVEPOINT", "RELEASE"))]


@pytest.fixture
def counted_redis(monkeypatch):
    """Round trips through redis-py pipelines, and a failure for any one-command cache call that
    the bound used to make (SET NX, EXISTS, INCR: three per counter)."""
    executed = []
    execute = Pipeline.execute

    def counting(self, *args, **kwargs):
        executed.append([command[0][0] for command in self.command_stack])
        return execute(self, *args, **kwargs)

    def refuse(*args, **kwargs):
        raise AssertionError("the bound made a round trip of its own per command")

    monkeypatch.setattr(Pipeline, "execute", counting)
    monkeypatch.setattr(RedisCache, "add", refuse)
    monkeypatch.setattr(RedisCache, "incr", refuse)
    return executed


def test_the_bound_counts_both_counters_in_one_round_trip(counted_redis):
    assert isinstance(caches[DEFAULT_CACHE_ALIAS], RedisCache), "the suite runs with Redis (REDIS_URL)"
    with mail_switches(credential="api_key:bound-round-trips"):
        limits.check_bound(organizer_id=987654, count=2)
    assert counted_redis == [["INCRBY", "EXPIRE", "INCRBY", "EXPIRE"]]


@pytest.mark.fastpath  # the statements of the booking path itself
def test_mail_adds_one_statement_and_one_bound_round_trip_to_a_booking(
    api_client, key, organizer, counted_redis, django_capture_on_commit_callbacks
):
    """The attendee, a guest and the organizer: three messages, written by one INSERT."""
    event_type = EventTypeFactory(owner=organizer, length=30)
    api_client.get("/v1/me", **bearer(key))  # the key's once-a-minute lastUsedAt write, not counted here
    with CaptureQueriesContext(connection) as without_mail, django_capture_on_commit_callbacks() as off_hooks:
        with overridden(ENABLED=False):
            response = api_client.post(
                "/v1/bookings", body(event_type, slot(0), "grace@example.org"), format="json", **bearer(key)
            )
    assert response.status_code == 200, response.json()
    counted_redis.clear()
    with CaptureQueriesContext(connection) as with_mail, django_capture_on_commit_callbacks() as on_hooks:
        response = api_client.post(
            "/v1/bookings", body(event_type, slot(1), "linus@example.org"), format="json", **bearer(key)
        )
    assert response.status_code == 200, response.json()
    off, on = statements(without_mail), statements(with_mail)
    # (The event type's mail settings come joined to the event type, read with mail on or off.)
    added = [sql for sql in on if sql.startswith('INSERT INTO "notifications_') or 'FROM "notifications_' in sql]
    assert len(added) == 1 and added[0].startswith('INSERT INTO "notifications_emailmessage"')
    assert len(on) == len(off) + 1, (off, on)
    # The booking's own statements (8 with mail off, in this data set: no webhook, no calendar)
    # and the messages' INSERT.
    assert len(on) == 9, on
    assert EmailMessage.objects.filter(booking_id=response.json()["id"]).count() == 3
    # The bound's pipeline is the mail's only Redis round trip before commit ...
    assert counted_redis == [["INCRBY", "EXPIRE", "INCRBY", "EXPIRE"]]
    # ... and one broker message after it (the webhooks' and calendar's hooks come with either).
    assert len(on_hooks) == len(off_hooks) + 1
