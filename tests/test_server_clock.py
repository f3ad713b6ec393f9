"""The rate limiter and the webhook gate read Redis' clock (`TIME`), not the host's: web processes
and workers on hosts whose clocks disagree still count one window and hold one slot expiry."""

import time
import uuid

import pytest
import redis
from django.core.cache import cache

from core import ratelimit
from webhooks.slots import RedisGate

pytestmark = pytest.mark.django_db

HOUR = 3600.0


class SkewedClock:
    """Stands in for the `time` module of one host whose clock runs an hour ahead (or behind)."""

    def __init__(self, offset: float):
        self.offset = offset

    def time(self) -> float:
        return time.time() + self.offset

    def monotonic(self) -> float:
        return time.monotonic()


def redis_now_ms(client) -> float:
    seconds, microseconds = client.time()
    return seconds * 1000 + microseconds / 1000


@pytest.fixture
def client(settings):
    connection = redis.Redis.from_url(settings.REDIS_URL)
    cache.clear()
    yield connection
    cache.clear()


@pytest.mark.parametrize("offset", [HOUR, -HOUR])
def test_the_rate_limit_counts_on_redis_time_whatever_the_hosts_clock(client, monkeypatch, settings, offset):
    settings.RATE_LIMIT_PER_MINUTE = 3
    allowed = [ratelimit.hit("api_key:clock")[0]]
    monkeypatch.setattr(ratelimit, "time", SkewedClock(offset))  # a second host, its clock an hour off
    allowed += [ratelimit.hit("api_key:clock")[0] for _ in range(3)]

    assert allowed == [True, True, True, False]  # one window for both hosts: nothing expired early
    key = cache.make_and_validate_key("ratelimit:api_key:clock")
    scores = [score for _, score in client.zrange(key, 0, -1, withscores=True)]
    assert len(scores) == 3
    assert all(abs(score - redis_now_ms(client)) < 60_000 for score in scores)


@pytest.mark.parametrize("offset", [HOUR, -HOUR])
def test_the_webhook_gate_holds_slots_on_redis_time(client, monkeypatch, settings, offset):
    import webhooks.slots as slots_module

    monkeypatch.setattr(slots_module, "time", SkewedClock(offset))
    client.flushdb()
    gate = RedisGate(settings.REDIS_URL)
    webhook_id = uuid.uuid4()

    assert gate.acquire(webhook_id=webhook_id, delivery_id=1, cap=1, hold_seconds=60, rate=None).admitted
    assert not gate.acquire(webhook_id=webhook_id, delivery_id=2, cap=1, hold_seconds=60, rate=None).admitted
    assert gate.in_flight(webhook_id) == 1

    ((_, hold_until),) = client.zrange(f"webhooks:gate:{webhook_id}:slots", 0, -1, withscores=True)
    assert abs(hold_until - (redis_now_ms(client) + 60_000)) < 10_000
