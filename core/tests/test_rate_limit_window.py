"""The rate limit is a sliding window: a budget of N per minute never lets more than N requests
through in any 60 seconds, calendar minute boundaries included, in one Redis round trip."""

import random

import pytest
import redis
from django.core.cache import cache

from accounts.tests.factories import ApiKeyFactory
from core import ratelimit
from tests.support.outages import PrivateRedis

pytestmark = pytest.mark.django_db

MINUTE_START = 1_800_000_000.0  # a multiple of 60: a calendar minute starts here


@pytest.fixture(autouse=True)
def _empty_limits():
    cache.clear()
    yield
    cache.clear()


def test_a_burst_across_a_minute_boundary_gets_one_budget_not_two(settings):
    settings.RATE_LIMIT_PER_MINUTE = 10
    before = [ratelimit.hit("api_key:1", now=MINUTE_START - 1 + i * 0.05)[0] for i in range(10)]
    after = [ratelimit.hit("api_key:1", now=MINUTE_START + 0.5 + i * 0.05)[0] for i in range(10)]

    assert before == [True] * 10
    assert after == [False] * 10  # a fixed window would have let these ten through as well


def test_budget_comes_back_as_the_oldest_requests_leave_the_window(settings):
    settings.RATE_LIMIT_PER_MINUTE = 3
    for offset in (0, 10, 20):
        assert ratelimit.hit("oauth:7", now=MINUTE_START + offset)[0]

    allowed, refused = ratelimit.hit("oauth:7", now=MINUTE_START + 59.5)
    assert not allowed
    assert (refused.remaining, refused.reset) == (0, 1)  # the request at +0 leaves at +60

    allowed, state = ratelimit.hit("oauth:7", now=MINUTE_START + 60.001)
    assert allowed
    assert (state.remaining, state.reset) == (0, 10)  # the next one (+10) leaves at +70
    assert not ratelimit.hit("oauth:7", now=MINUTE_START + 65)[0]
    assert ratelimit.hit("oauth:7", now=MINUTE_START + 70.001)[0]


def test_refused_requests_do_not_push_the_budget_further_away(settings):
    settings.RATE_LIMIT_PER_MINUTE = 2
    ratelimit.hit("api_key:2", now=MINUTE_START)
    ratelimit.hit("api_key:2", now=MINUTE_START + 1)
    refusals = [ratelimit.hit("api_key:2", now=MINUTE_START + 2 + i)[0] for i in range(50)]

    assert not any(refusals)
    assert ratelimit.hit("api_key:2", now=MINUTE_START + 60.5)[0]


def test_no_sixty_seconds_ever_pass_more_than_the_budget(settings):
    settings.RATE_LIMIT_PER_MINUTE = 25
    generator = random.Random(20261123)
    now, passed = MINUTE_START - 30, []
    for _ in range(600):
        now += generator.expovariate(1 / 0.4)  # bursts and pauses around minute boundaries
        if ratelimit.hit("api_key:3", now=now)[0]:
            passed.append(now)

    busiest = max(sum(1 for other in passed if start <= other < start + 60) for start in passed)
    assert busiest == 25
    assert len(passed) > 25 * 3  # the budget does come back


def test_each_credential_has_its_own_window(settings):
    settings.RATE_LIMIT_PER_MINUTE = 1
    assert ratelimit.hit("api_key:4", now=MINUTE_START)[0]
    assert not ratelimit.hit("api_key:4", now=MINUTE_START + 1)[0]
    assert ratelimit.hit("api_key:5", now=MINUTE_START + 1)[0]


def test_counting_a_request_is_one_redis_command(settings, api_client):
    """EVALSHA once per request; the script is loaded once per connection pool, not per call."""
    with PrivateRedis() as server:
        settings.CACHES = {
            "default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": server.url}
        }
        key = ApiKeyFactory().raw_key
        api_client.get("/v1/me", HTTP_AUTHORIZATION=f"Bearer {key}")  # loads the script
        probe = redis.Redis.from_url(server.url)
        probe.config_resetstat()

        for _ in range(5):
            response = api_client.get("/v1/me", HTTP_AUTHORIZATION=f"Bearer {key}")
            assert response.status_code == 200
            assert response["RateLimit-Remaining"]

        calls = {name.removeprefix("cmdstat_"): value["calls"] for name, value in probe.info("commandstats").items()}
        assert calls.pop("evalsha") == 5
        # Everything else was run by the script inside Redis (or is this test's own probing).
        inside = {"time", "zremrangebyscore", "zcard", "zadd", "zrange", "pexpire"}
        assert set(calls) <= inside | {"config|resetstat", "info"}


def test_the_file_cache_of_make_run_keeps_the_same_window(settings, tmp_path):
    settings.CACHES = {
        "default": {"BACKEND": "django.core.cache.backends.filebased.FileBasedCache", "LOCATION": str(tmp_path)}
    }
    settings.RATE_LIMIT_PER_MINUTE = 2
    assert ratelimit.hit("api_key:6", now=MINUTE_START - 1)[0]
    assert ratelimit.hit("api_key:6", now=MINUTE_START - 0.5)[0]
    allowed, state = ratelimit.hit("api_key:6", now=MINUTE_START + 1)
    assert not allowed
    assert (state.remaining, state.reset) == (0, 58)
    assert ratelimit.hit("api_key:6", now=MINUTE_START + 59.5)[0]
