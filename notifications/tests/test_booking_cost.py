"""What the e-mails add to `POST /v1/bookings`: one INSERT for all of a change's messages, one
Redis round trip for the sending bound and the kick (both counters and the `SET NX` in one
script), and a broker message after commit only for the first booking in the kick's window: a
burst of bookings publishes one, whose pass sends all their messages once each. Nothing is
rendered in the request (the worker renders from the row's context)."""

from datetime import datetime, time, timedelta
from zoneinfo import ZoneInfo

import pytest
from celery import current_app
from django.core.cache import DEFAULT_CACHE_ALIAS, caches
from django.core.cache.backends.redis import RedisCache
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from redis.connection import AbstractConnection

from core.exceptions import RateLimited
from notifications import limits
from notifications.conf import overridden
from notifications.models import EmailMessage, EmailStatus
from notifications.outbox import SEND_PENDING_TASK, SEND_TASK, booking_changed
from notifications.sending import send_pending
from notifications.switches import mail_switches
from scheduling.tests.factories import AttendeeFactory, BookingFactory, EventTypeFactory
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


def commands_in(packed: bytes) -> list[list[bytes]]:
    """The commands in what a connection writes (RESP arrays of bulk strings), each as its arguments."""
    commands, lines, index = [], packed.split(b"\r\n"), 0
    while index < len(lines) and lines[index].startswith(b"*"):
        count = int(lines[index][1:])
        commands.append([lines[index + 2 + 2 * argument] for argument in range(count)])
        index += 1 + 2 * count
    return commands


@pytest.fixture
def counted_redis(monkeypatch):
    """The commands of each Redis round trip (what one write to a connection carries: a command, or a
    pipeline's; the bound's script is "EVALSHA bound", another's, such as the rate limit's, "EVALSHA"),
    with the bound's script loaded already (redis-py loads it on its first `NOSCRIPT`, once per
    server), and a failure for any one-command cache call that the bound used to make (SET NX,
    EXISTS, INCR: three per counter)."""
    bound = caches[DEFAULT_CACHE_ALIAS]._cache.get_client(write=True).script_load(limits.BOUND_LUA).encode()
    executed = []
    send_packed_command = AbstractConnection.send_packed_command

    def counting(self, command, *args, **kwargs):
        packed = b"".join(bytes(part) for part in (command if isinstance(command, list) else [command]))
        executed.append(
            ["EVALSHA bound" if each[:2] == [b"EVALSHA", bound] else each[0].decode() for each in commands_in(packed)]
        )
        return send_packed_command(self, command, *args, **kwargs)

    def refuse(*args, **kwargs):
        raise AssertionError("the bound made a round trip of its own per command")

    monkeypatch.setattr(AbstractConnection, "send_packed_command", counting)
    monkeypatch.setattr(RedisCache, "add", refuse)
    monkeypatch.setattr(RedisCache, "incr", refuse)
    return executed


def test_the_bound_counts_both_counters_in_one_round_trip(counted_redis):
    store = caches[DEFAULT_CACHE_ALIAS]
    assert isinstance(store, RedisCache), "the suite runs with Redis (REDIS_URL)"
    hour = int(timezone.now().timestamp()) // 3600
    keys = [f"notifications:organizer:987654:{hour}", f"notifications:credential:api_key:bound-round-trips:{hour}"]
    client = store._cache.get_client(write=True)
    before = [int(client.get(store.make_and_validate_key(key)) or 0) for key in keys]
    counted_redis.clear()
    with mail_switches(credential="api_key:bound-round-trips"):
        assert limits.check_bound(organizer_id=987654, count=2, kick=False) is None
    assert counted_redis == [["EVALSHA bound"]]
    for key, total in zip(keys, before, strict=True):
        assert int(client.get(store.make_and_validate_key(key))) == total + 2
        assert 3600 < client.ttl(store.make_and_validate_key(key)) <= limits.COUNTER_LIFETIME_SECONDS


def test_the_kick_is_claimed_once_per_window_in_the_same_round_trip(counted_redis):
    limits.release_kick()
    counted_redis.clear()
    assert limits.check_bound(organizer_id=987654, count=1, kick=True) is True
    assert limits.check_bound(organizer_id=987654, count=0, kick=True) is False
    assert counted_redis == [["EVALSHA bound"], ["EVALSHA bound"]]
    store = caches[DEFAULT_CACHE_ALIAS]
    assert 0 < store._cache.get_client().pttl(store.make_and_validate_key(limits.KICK_KEY)) <= 1000
    limits.release_kick()


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
    # The bound's script, which claims the kick too, is the mail's only Redis round trip before
    # commit (the rate limit's is the request's own, with mail on or off) ...
    assert [each for each in counted_redis if each != ["EVALSHA"]] == [["EVALSHA bound"]]
    # ... and the first booking in the window publishes one broker message after it (the webhooks'
    # and calendar's hooks come with either).
    assert len(on_hooks) == len(off_hooks) + 1


def test_a_burst_of_bookings_publishes_one_pass_that_sends_every_message_once(
    api_client, key, organizer, smtp_server, monkeypatch, django_capture_on_commit_callbacks
):
    """Five bookings in one window, three messages each: one broker message (the pass, due when the
    window closes); run, it sends the fifteen messages once each, and a second run sends nothing."""
    event_type = EventTypeFactory(owner=organizer, length=30)
    published = []
    monkeypatch.setattr(
        current_app.tasks[SEND_PENDING_TASK], "apply_async", lambda *a, **kw: published.append((SEND_PENDING_TASK, kw))
    )
    monkeypatch.setattr(current_app.tasks[SEND_TASK], "apply_async", lambda *a, **kw: published.append((SEND_TASK, a)))
    for index in range(5):
        with django_capture_on_commit_callbacks(execute=True):
            response = api_client.post(
                "/v1/bookings", body(event_type, slot(index), f"guest{index}@example.org"), format="json", **bearer(key)
            )
        assert response.status_code == 200, response.json()
    assert published == [(SEND_PENDING_TASK, {"countdown": 1.0})]
    assert EmailMessage.objects.filter(status=EmailStatus.PENDING, attempts=0).count() == 15
    assert send_pending() == 15
    assert send_pending() == 0
    assert len(smtp_server.received) == 15
    assert len({each.message["Message-ID"] for each in smtp_server.received}) == 15
    assert set(EmailMessage.objects.values_list("status", flat=True)) == {EmailStatus.SENT}
    # The pass released the kick: the next booking schedules the next pass.
    with django_capture_on_commit_callbacks(execute=True):
        api_client.post("/v1/bookings", body(event_type, slot(6), "late@example.org"), format="json", **bearer(key))
    assert published[1:] == [(SEND_PENDING_TASK, {"countdown": 1.0})]


def test_with_the_cache_away_each_booking_enqueues_its_own_messages(
    api_client, key, organizer, monkeypatch, django_capture_on_commit_callbacks
):
    """No kick can be claimed: the booking is not slowed or refused, and publishes its messages' ids
    as before (the broker being away too, the sweeper sends them)."""
    event_type = EventTypeFactory(owner=organizer, length=30)
    published = []
    monkeypatch.setattr(current_app.tasks[SEND_TASK], "apply_async", lambda *a, **kw: published.append(a[0][0]))
    monkeypatch.setattr(
        current_app.tasks[SEND_PENDING_TASK], "apply_async", lambda *a, **kw: pytest.fail("no kick was claimed")
    )

    def away(*args, **kwargs):
        raise ConnectionError("Redis is away")

    monkeypatch.setattr(limits, "sent_script", away)
    for index in range(2):
        with django_capture_on_commit_callbacks(execute=True):
            response = api_client.post(
                "/v1/bookings", body(event_type, slot(index), f"guest{index}@example.org"), format="json", **bearer(key)
            )
        assert response.status_code == 200, response.json()
        assert sorted(published[-1]) == sorted(
            EmailMessage.objects.filter(booking_id=response.json()["id"]).values_list("pk", flat=True)
        )
    assert len(published) == 2


@pytest.mark.django_db(transaction=True)
def test_outside_a_transaction_a_refusal_comes_before_anything_is_written(settings):
    """In a transaction the bound is read after the INSERT (a refusal rolls it back); a change made
    outside one (autocommit: each statement is committed at once) reads it first."""
    settings.NOTIFICATIONS = {**settings.NOTIFICATIONS, "MAX_PER_ORGANIZER_PER_HOUR": 1}
    booking = BookingFactory()
    AttendeeFactory(booking=booking, email="first@example.org")
    AttendeeFactory(booking=booking, email="second@example.org")
    store = caches[DEFAULT_CACHE_ALIAS]
    hour = int(timezone.now().timestamp()) // 3600
    store.delete(f"notifications:organizer:{booking.organizer_id}:{hour}")
    try:
        with pytest.raises(RateLimited):
            booking_changed("BOOKING_CANCELLED", booking)  # two attendees: past the bound of one
        assert not EmailMessage.objects.filter(booking_id=booking.pk).exists()
    finally:
        store.delete(f"notifications:organizer:{booking.organizer_id}:{hour}")
