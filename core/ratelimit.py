"""Per-credential rate limit, counted in the shared cache (Redis) so that the budget holds across web
processes, and the same limiter for sign-in attempts (`accounts.throttle`).

A sliding window: a budget of N per minute never lets more than N requests through in any 60
seconds, wherever a calendar minute starts or ends (a fixed window let 2N through across a minute
boundary). Each limit is a Redis sorted set of the times of the requests it let through in the
last `WINDOW_SECONDS`; one Lua script drops the expired ones, counts, adds the new request when it
fits and says when the oldest one leaves the window, in ONE round trip (`EVALSHA`; redis-py loads
the script once per connection pool, on its first `NOSCRIPT`). Refused requests are not recorded,
so a client that keeps retrying while refused does not push its own budget further away. Memory
follows traffic, not the number of credentials: one member (about 100 bytes) per request served in
the last minute, at most the budget per credential. `python -m benchmarks.rate_limit` compares the
script with the fixed window's pipeline (figures in docs/benchmarks.md).

The numbers are kept on the request and written as `RateLimit-Limit/Remaining/Reset` on the
response by `core.middleware.RequestIdMiddleware`, so every response of an authenticated call has
them, refusals included. `RateLimit-Reset` is the number of seconds until the oldest counted
request leaves the window, that is until `Remaining` grows again; on a refusal it equals
`Retry-After`. A refusal is a 429 `rate_limited` with `Retry-After`.

Redis being away must not take the API with it: the limit then fails OPEN. A call that cannot
reach Redis within `RATE_LIMIT_REDIS_TIMEOUT_SECONDS` lets the request through uncounted and
without `RateLimit-*` headers, and for the next `RATE_LIMIT_RETRY_SECONDS` this process does not
try Redis at all (so a frozen Redis costs one timeout per process per retry period, not one per
request). The first failure of an outage logs `rate_limit_unavailable` (a warning), the first
success after it `rate_limit_recovered` with how many requests went uncounted; `/readyz` shows the
process's counters. docs/operations.md ("Failure modes") has the operator's side.
"""

import itertools
import logging
import math
import os
import socket
import threading
import time
from dataclasses import dataclass

from django.conf import settings
from django.core.cache import caches
from django.core.cache.backends.redis import RedisCache
from redis.exceptions import RedisError
from rest_framework.throttling import BaseThrottle

from core.redis_scripts import registered_script

logger = logging.getLogger(__name__)

WINDOW_SECONDS = 60
KEY_PREFIX = "ratelimit"

# KEYS[1]: the sorted set of one limit. ARGV: now (ms; empty: Redis' own clock, `TIME`), window
# (ms), limit, a unique member for this request, cost (1 counts the request if it fits, 0 only
# looks). Returns {allowed (0/1), requests in the window after this one, ms until the oldest of them
# leaves the window}. Every web host counts on one clock, Redis', so a host whose clock runs ahead
# or behind neither expires others' requests early nor keeps its own too long.
SLIDING_WINDOW_LUA = """
local key = KEYS[1]
local now = tonumber(ARGV[1])
if not now then
  local time = redis.call('TIME')
  now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
end
local window = tonumber(ARGV[2])
local limit = tonumber(ARGV[3])
local cost = tonumber(ARGV[5])
redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
local count = redis.call('ZCARD', key)
local allowed = 0
if count < limit then
  allowed = 1
  if cost > 0 then
    redis.call('ZADD', key, now, ARGV[4])
    count = count + 1
  end
end
local reset = window
local oldest = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
if oldest[2] then
  reset = tonumber(oldest[2]) + window - now
end
if count > 0 then
  redis.call('PEXPIRE', key, window)
end
return {allowed, count, reset}
"""


@dataclass(frozen=True)
class RateLimitState:
    limit: int
    remaining: int
    reset: int  # seconds until the oldest counted request leaves the window

    def headers(self) -> dict[str, str]:
        return {
            "RateLimit-Limit": str(self.limit),
            "RateLimit-Remaining": str(self.remaining),
            "RateLimit-Reset": str(self.reset),
        }


def hit(credential_key: str, *, now: float | None = None) -> tuple[bool, RateLimitState | None]:
    """Count one request for the credential; say whether it is within the budget. The state is
    None when the limit could not be counted (Redis unavailable): the request is then allowed."""
    return consume(f"{KEY_PREFIX}:{credential_key}", settings.RATE_LIMIT_PER_MINUTE, now=now)


def consume(
    key: str, limit: int, *, window: int = WINDOW_SECONDS, cost: int = 1, now: float | None = None
) -> tuple[bool, RateLimitState | None]:
    """One sliding-window limit: `limit` requests per `window` seconds under `key`. With `cost=0`
    nothing is counted; the answer says whether one more request would fit. `now` (seconds) is for
    tests; by default the time is Redis' own (`TIME`), the same for every host."""
    result = _evaluate(key, limit, window, cost, now)
    if result is None:
        return True, None
    allowed, count, reset_ms = result
    reset = max(1, math.ceil(reset_ms / 1000))
    return bool(allowed), RateLimitState(limit=limit, remaining=max(0, limit - count), reset=reset)


def _evaluate(key: str, limit: int, window: int, cost: int, now: float | None) -> tuple[int, int, float] | None:
    backend = caches["default"]
    if not isinstance(backend, RedisCache):
        return _evaluate_in_cache(backend, key, limit, window, cost, time.time() if now is None else now)
    if not health.should_try():
        health.passed_uncounted()
        return None
    try:
        script = registered_script(backend, SLIDING_WINDOW_LUA)
        allowed, count, reset_ms = script(
            keys=[backend.make_and_validate_key(key)],
            args=["" if now is None else int(now * 1000), window * 1000, limit, _member(), cost],
        )
    except RedisError as error:
        health.failed(error)
        return None
    health.succeeded()
    return int(allowed), int(count), float(reset_ms)


def forget(key: str) -> None:
    """Drop everything counted under `key` (a sign-in that succeeded clears its account's failures).
    Best effort, like the counting: an unreachable Redis is not an error here."""
    backend = caches["default"]
    if isinstance(backend, RedisCache) and not health.should_try():
        return
    try:
        backend.delete(key)
    except RedisError as error:
        health.failed(error)


_SEQUENCE = itertools.count()
_HOST = socket.gethostname()


def _member() -> str:
    """Unique within the sorted set: two requests in the same millisecond are two members (the host
    name, process, thread and a counter; the score carries the time)."""
    return f"{_HOST}:{os.getpid()}:{threading.get_ident()}:{next(_SEQUENCE)}"


def _evaluate_in_cache(backend, key: str, limit: int, window: int, cost: int, now: float):
    """The same window kept as a list of times in a non-Redis cache (the file cache of `make run`).
    Not atomic across processes: good enough for one developer, not for production."""
    times = [stamp for stamp in backend.get(key, []) if stamp > now - window]
    allowed = len(times) < limit
    if allowed and cost > 0:
        times.append(now)
        backend.set(key, times, timeout=window + 1)
    reset_ms = ((times[0] + window - now) if times else window) * 1000
    return int(allowed), len(times), reset_ms


class LimiterHealth:
    """Whether this process can reach the limiter's Redis, and what it let through while not."""

    def __init__(self):
        self._lock = threading.Lock()
        self.unavailable_since: float | None = None
        self.retry_at = 0.0
        self.outages_total = 0
        self.uncounted_total = 0  # requests let through without counting, since the process started
        self._uncounted_in_outage = 0

    def should_try(self) -> bool:
        return self.unavailable_since is None or time.monotonic() >= self.retry_at

    def passed_uncounted(self) -> None:
        with self._lock:
            self.uncounted_total += 1
            self._uncounted_in_outage += 1

    def failed(self, error: Exception) -> None:
        with self._lock:
            self.uncounted_total += 1
            self._uncounted_in_outage += 1
            self.retry_at = time.monotonic() + settings.RATE_LIMIT_RETRY_SECONDS
            if self.unavailable_since is not None:
                return
            self.unavailable_since = time.time()
            self.outages_total += 1
        logger.warning(
            "rate_limit_unavailable: Redis did not answer (%s: %s); requests pass uncounted and "
            "without RateLimit-* headers, Redis is tried again every %ss",
            error.__class__.__name__,
            error,
            settings.RATE_LIMIT_RETRY_SECONDS,
            extra={"event": "rate_limit_unavailable"},
        )

    def succeeded(self) -> None:
        if self.unavailable_since is None:
            return
        with self._lock:
            if self.unavailable_since is None:
                return
            seconds = time.time() - self.unavailable_since
            uncounted = self._uncounted_in_outage
            self.unavailable_since = None
            self._uncounted_in_outage = 0
        logger.warning(
            "rate_limit_recovered: Redis answers again after %.1fs; %d requests passed uncounted",
            seconds,
            uncounted,
            extra={"event": "rate_limit_recovered"},
        )

    def report(self) -> dict:
        return {
            "status": "ok" if self.unavailable_since is None else "unavailable",
            "outages": self.outages_total,
            "uncountedRequests": self.uncounted_total,
        }


health = LimiterHealth()


class CredentialRateThrottle(BaseThrottle):
    """A DRF throttle: requests without a credential are not counted (they end in a 401).

    Idempotent per request: the answer is kept on the Django request, and asking again (the
    resource views ask before their permission check, DRF asks once more after it) returns it
    without another count or round trip to Redis."""

    def allow_request(self, request, view):
        django_request = request._request
        decided = getattr(django_request, "rate_limit_allowed", None)
        if decided is not None:
            self.state = getattr(django_request, "rate_limit", None)
            return decided
        credential = getattr(request, "auth", None)
        key = getattr(credential, "rate_limit_key", None)
        if key is None:
            return True
        allowed, state = hit(key)
        # On the Django request, where the middleware sees it (None: not counted, no headers).
        django_request.rate_limit = state
        django_request.rate_limit_allowed = allowed
        self.state = state
        return allowed

    def wait(self):
        state = getattr(self, "state", None)
        return state.reset if state is not None else None
