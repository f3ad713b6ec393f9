"""The per-webhook gate: how many attempts of one webhook are in flight, across every worker and
host, and how fast they start (docs/webhooks.md, "Isolation").

Each webhook has `CONCURRENCY_PER_WEBHOOK` slots in Redis (a sorted set of delivery ids, scored by
when the hold expires, so that a worker killed mid-send gives its slot back after LEASE_SECONDS).
A delivery that finds every slot taken does not wait in a worker: it joins the webhook's waiting
set (ordered by delivery id, oldest first) and its task ends. Whoever frees a slot takes the oldest
waiting delivery and enqueues it. A webhook with a `rate_limit` also spaces the starts of its
attempts (one every 1/rate seconds, across every worker): a delivery that comes too early joins
the waiting set, and one of them (at most one per webhook at a time) is enqueued again for the
moment the next start is allowed. The delivery rows themselves never depend on Redis: a waiting
delivery whose message is lost (Redis flushed) is enqueued again by the sweeper once its lease
runs out, as any other.

Without Redis (`make run` on the filesystem broker) the gate lives in the worker process: the
same rules, for that one process.
"""

import threading
import time
from dataclasses import dataclass

from django.conf import settings

from core.redis_scripts import scripts_in_one_trip

KEY_PREFIX = "webhooks:gate:"

# Every time in these scripts is Redis' own (`TIME`), so that the workers and web processes of every
# host share one clock for slot holds and rate spacing, whatever their own clocks say.
SERVER_NOW = """
local server_time = redis.call('TIME')
local now = tonumber(server_time[1]) * 1000 + math.floor(tonumber(server_time[2]) / 1000)
"""

# KEYS: slots, waiting, rate. ARGV: delivery id, cap, hold (ms), spacing (ms, 0 = no rate limit).
# Returns {1, 0} when a slot is taken, {0, 0} when full, {0, wait ms} when rate-limited
# and this caller should enqueue itself again after `wait` (also when it is that delivery, woken a
# little early), {0, -1} when rate-limited and another delivery already does.
ACQUIRE = (
    SERVER_NOW
    + """
local hold_until = now + tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZSCORE', KEYS[1], ARGV[1]) then return {1, 0} end
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then
  redis.call('ZADD', KEYS[2], tonumber(ARGV[1]), ARGV[1])
  redis.call('PEXPIRE', KEYS[2], 86400000)
  return {0, 0}
end
local spacing = tonumber(ARGV[4])
if spacing > 0 then
  local next_start = tonumber(redis.call('HGET', KEYS[3], 'next') or '0')
  if next_start > now then
    local wait = next_start - now
    local waker = redis.call('HGET', KEYS[3], 'waker')
    if waker == ARGV[1] then return {0, wait} end
    if waker then
      redis.call('ZADD', KEYS[2], tonumber(ARGV[1]), ARGV[1])
      redis.call('PEXPIRE', KEYS[2], 86400000)
      return {0, -1}
    end
    redis.call('HSET', KEYS[3], 'waker', ARGV[1])
    redis.call('PEXPIRE', KEYS[3], wait + 60000)
    return {0, wait}
  end
  redis.call('HSET', KEYS[3], 'next', now + spacing)
  redis.call('HDEL', KEYS[3], 'waker')
  redis.call('PEXPIRE', KEYS[3], spacing + 60000)
end
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('ZADD', KEYS[1], hold_until, ARGV[1])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[3]) + 1000)
return {1, 0}
"""
)

# KEYS: slots. How many slots are held now (expired holds dropped).
IN_FLIGHT = (
    SERVER_NOW
    + """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
return redis.call('ZCARD', KEYS[1])
"""
)

# KEYS: slots, waiting. ARGV: cap. Drops the holds that ran out (a worker killed before it gave its
# slot back) and pops as many waiting deliveries, oldest first, as there are free slots: nobody
# else would wake them, since only a release pops the waiting set.
REAP = (
    SERVER_NOW
    + """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local free = tonumber(ARGV[1]) - redis.call('ZCARD', KEYS[1])
if free <= 0 then return {} end
local popped = redis.call('ZPOPMIN', KEYS[2], free)
local ids = {}
for index = 1, #popped, 2 do ids[#ids + 1] = popped[index] end
return ids
"""
)

# KEYS: slots, waiting. ARGV: delivery id. Frees the slot, returns the oldest waiting delivery (or false).
RELEASE = """
redis.call('ZREM', KEYS[1], ARGV[1])
local oldest = redis.call('ZPOPMIN', KEYS[2])
if oldest[1] then return oldest[1] end
return false
"""

# KEYS: waiting. ARGV: delivery ids. Queues deliveries behind the webhook's slots; returns the oldest.
ENQUEUE_WAITING = """
for _, id in ipairs(ARGV) do redis.call('ZADD', KEYS[1], tonumber(id), id) end
redis.call('PEXPIRE', KEYS[1], 86400000)
local oldest = redis.call('ZPOPMIN', KEYS[1])
if oldest[1] then return oldest[1] end
return false
"""


@dataclass(frozen=True)
class Admission:
    admitted: bool
    # Seconds until this delivery should be enqueued again (rate limit), or None: someone else wakes it.
    retry_in: float | None = None


def _keys(webhook_id) -> tuple[str, str, str]:
    base = f"{KEY_PREFIX}{webhook_id}:"
    return base + "slots", base + "waiting", base + "rate"


class RedisGate:
    def __init__(self, url: str, timeout: float = 5.0):
        from core.redis_sentinel import client

        self.client = client(url, timeout=timeout)
        self.acquire_script = self.client.register_script(ACQUIRE)
        self.release_script = self.client.register_script(RELEASE)
        self.enqueue_waiting_script = self.client.register_script(ENQUEUE_WAITING)
        self.in_flight_script = self.client.register_script(IN_FLIGHT)
        self.reap_script = self.client.register_script(REAP)

    def acquire(self, *, webhook_id, delivery_id: int, cap: int, hold_seconds: float, rate: float | None):
        return self.acquire_many([(webhook_id, delivery_id, rate)], cap=cap, hold_seconds=hold_seconds)[0]

    def acquire_many(self, requests: list[tuple], *, cap: int, hold_seconds: float) -> list[Admission]:
        """`acquire` for each (webhook id, delivery id, rate) in order, in one round trip: the script
        runs once per delivery, one after another, as separate calls would (a commit's deliveries)."""
        hold = int(hold_seconds * 1000)
        calls = [
            (_keys(webhook_id), [delivery_id, cap, hold, int(1000 / rate) if rate else 0])
            for webhook_id, delivery_id, rate in requests
        ]
        return [
            Admission(True) if admitted else Admission(False, wait / 1000 if wait > 0 else None)
            for admitted, wait in scripts_in_one_trip(self.acquire_script, calls)
        ]

    def release(self, *, webhook_id, delivery_id: int) -> int | None:
        slots, waiting, _ = _keys(webhook_id)
        oldest = self.release_script(keys=[slots, waiting], args=[delivery_id])
        return int(oldest) if oldest else None

    def enqueue_waiting(self, *, webhook_id, delivery_ids: list[int]) -> int | None:
        _, waiting, _ = _keys(webhook_id)
        oldest = self.enqueue_waiting_script(keys=[waiting], args=delivery_ids)
        return int(oldest) if oldest else None

    def in_flight(self, webhook_id) -> int:
        slots, _, _ = _keys(webhook_id)
        return int(self.in_flight_script(keys=[slots]))

    def reap_many(self, webhook_ids: list, *, cap: int) -> list[int]:
        """The waiting deliveries of these webhooks that expired holds left slots for, in one round trip."""
        calls = [(_keys(webhook_id)[:2], [cap]) for webhook_id in webhook_ids]
        return [int(delivery_id) for popped in scripts_in_one_trip(self.reap_script, calls) for delivery_id in popped]


class LocalGate:
    """The same rules in one process (no Redis)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.slots: dict = {}
        self.waiting: dict = {}
        self.rates: dict = {}

    def acquire(self, *, webhook_id, delivery_id: int, cap: int, hold_seconds: float, rate: float | None):
        now = time.time()
        with self.lock:
            slots = self.slots.setdefault(webhook_id, {})
            for held, until in list(slots.items()):
                if until <= now:
                    del slots[held]
            if delivery_id in slots:
                return Admission(True)
            waiting = self.waiting.setdefault(webhook_id, set())
            if len(slots) >= cap:
                waiting.add(delivery_id)
                return Admission(False)
            if rate:
                state = self.rates.setdefault(webhook_id, {"next": 0.0, "waker": None})
                if state["next"] > now:
                    if state["waker"] == delivery_id:
                        return Admission(False, state["next"] - now)  # woken a little early
                    if state["waker"] is not None:
                        waiting.add(delivery_id)
                        return Admission(False)
                    state["waker"] = delivery_id
                    return Admission(False, state["next"] - now)
                state["next"], state["waker"] = now + 1 / rate, None
            waiting.discard(delivery_id)
            slots[delivery_id] = now + hold_seconds
            return Admission(True)

    def acquire_many(self, requests: list[tuple], *, cap: int, hold_seconds: float) -> list[Admission]:
        return [
            self.acquire(webhook_id=webhook_id, delivery_id=delivery_id, cap=cap, hold_seconds=hold_seconds, rate=rate)
            for webhook_id, delivery_id, rate in requests
        ]

    def release(self, *, webhook_id, delivery_id: int) -> int | None:
        with self.lock:
            self.slots.get(webhook_id, {}).pop(delivery_id, None)
            return self._pop_oldest(webhook_id)

    def enqueue_waiting(self, *, webhook_id, delivery_ids: list[int]) -> int | None:
        with self.lock:
            self.waiting.setdefault(webhook_id, set()).update(delivery_ids)
            return self._pop_oldest(webhook_id)

    def _pop_oldest(self, webhook_id) -> int | None:
        waiting = self.waiting.get(webhook_id)
        if not waiting:
            return None
        oldest = min(waiting)
        waiting.discard(oldest)
        return oldest

    def in_flight(self, webhook_id) -> int:
        now = time.time()
        with self.lock:
            return sum(1 for until in self.slots.get(webhook_id, {}).values() if until > now)

    def reap_many(self, webhook_ids: list, *, cap: int) -> list[int]:
        now = time.time()
        woken = []
        with self.lock:
            for webhook_id in webhook_ids:
                slots = self.slots.setdefault(webhook_id, {})
                for held, until in list(slots.items()):
                    if until <= now:
                        del slots[held]
                for _ in range(max(0, cap - len(slots))):
                    oldest = self._pop_oldest(webhook_id)
                    if oldest is None:
                        break
                    woken.append(oldest)
        return woken


_gate = {"pid": None, "gate": None}
_gate_lock = threading.Lock()


def gate():
    """This process's gate (a forked worker child opens its own Redis connections)."""
    import os

    with _gate_lock:
        if _gate["pid"] != os.getpid() or _gate["gate"] is None:
            _gate["gate"] = RedisGate(settings.REDIS_URL) if settings.REDIS_URL else LocalGate()
            _gate["pid"] = os.getpid()
        return _gate["gate"]


_publisher = {"pid": None, "gate": None}


def publisher_gate() -> RedisGate:
    """The gate as the processes that write deliveries (web, sweeper) reach it: Redis with the web
    processes' short timeouts (REDIS_SOCKET_TIMEOUT_SECONDS), so that a frozen Redis cannot hold a
    request for longer than publishing would."""
    import os

    with _gate_lock:
        if _publisher["pid"] != os.getpid() or _publisher["gate"] is None:
            _publisher["gate"] = RedisGate(settings.REDIS_URL, timeout=settings.REDIS_SOCKET_TIMEOUT_SECONDS)
            _publisher["pid"] = os.getpid()
        return _publisher["gate"]
