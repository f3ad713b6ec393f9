"""The bound on booking e-mails per organizer and per credential (docs/notifications.md, "Limits"),
and the kick: which booking's change schedules the worker's pass over new messages (docs/notifications.md,
"How mail is sent: the outbox"). Both are one Redis round trip, which the outbox sends before its
INSERT and reads after it (`start_bound`), so that the two round trips overlap."""

import logging

from django.core.cache import DEFAULT_CACHE_ALIAS, caches
from django.core.cache.backends.redis import RedisCache
from django.utils import timezone

from core.exceptions import RateLimited
from core.redis_scripts import ScriptReply, sent_script
from notifications import switches
from notifications.conf import notification_setting

logger = logging.getLogger(__name__)


KICK_KEY = "notifications:kick"


def check_bound(organizer_id: int, count: int, *, kick: bool = False) -> bool | None:
    """At most MAX_PER_ORGANIZER_PER_HOUR messages to attendees per organizer (and as many per API
    key or token) in a clock hour, so that the API cannot be used to mail arbitrary addresses in
    bulk. Counted in the cache (Redis: both counters in one round trip); when it is away the bound
    is not applied.

    `kick`: in that same round trip, claim the kick (`SET NX PX`, KICK_WINDOW_MILLISECONDS): True
    when this change is the one to schedule the worker's pass (`notifications.send_pending`), False
    when a pass is scheduled already and will find this change's messages, None when the cache could
    not say (away, or the window is 0): the caller enqueues its own messages."""
    return start_bound(organizer_id, count, kick=kick).result()


def start_bound(organizer_id: int, count: int, *, kick: bool = False) -> "Bound":
    """`check_bound` in two halves: the round trip is sent now and its answer is `Bound.result()`,
    which raises `RateLimited` or says whether the kick was claimed, as `check_bound` does. The
    caller does its own work in between (the outbox's INSERT), inside the transaction that a refusal
    rolls back; it calls `result()` (or `discard()`, when its work failed) before anything commits."""
    window = notification_setting("KICK_WINDOW_MILLISECONDS") if kick else 0
    now = int(timezone.now().timestamp())
    hour = now // 3600
    bounds = []
    if count > 0:
        per_organizer = notification_setting("MAX_PER_ORGANIZER_PER_HOUR")
        bounds.append((f"notifications:organizer:{organizer_id}:{hour}", per_organizer))
        credential = switches.current().credential
        if credential is not None:
            per_key = notification_setting("MAX_PER_API_KEY_PER_HOUR")
            bounds.append((f"notifications:credential:{credential}:{hour}", per_key))
        bounds = [(key, limit) for key, limit in bounds if limit]
    if not bounds and not window:
        return Bound(None, [], 0, now)
    store = caches[DEFAULT_CACHE_ALIAS]
    # The backend itself, not the `cache` proxy (which is no RedisCache): one round trip.
    return Bound(_count(store, [key for key, _ in bounds], count, window), [limit for _, limit in bounds], window, now)


class Bound:
    """The sending bound's round trip, sent (`start_bound`); `result()` reads it once."""

    __slots__ = ("_answer", "_limits", "_window", "_now")

    def __init__(self, answer, limits: list[int], window: int, now: int):
        # `answer`: the script's reply to come (`ScriptReply`), the cache's totals and claim (another
        # cache), an error from the cache, or None (nothing to count).
        self._answer, self._limits, self._window, self._now = answer, limits, window, now

    def result(self) -> bool | None:
        answer, self._answer = self._answer, None
        if answer is None:
            return None
        try:
            if isinstance(answer, Exception):
                raise answer
            if isinstance(answer, ScriptReply):
                answer = answer.result()
                totals, claimed = answer[: len(self._limits)], (bool(answer[-1]) if self._window else None)
            else:
                totals, claimed = answer
        except Exception:  # noqa: BLE001 - the cache is down: mails still go, unbounded
            logger.warning("Could not count booking mails; not bounded")
            return None
        for total, limit in zip(totals, self._limits, strict=True):
            if total > limit:
                if claimed:
                    release_kick()  # this change is refused: the next one schedules the pass
                wait = 3600 - self._now % 3600
                raise RateLimited(wait=wait)
        return claimed

    def discard(self) -> None:
        """The caller's work failed before it read the answer: the counters count it all the same
        (as when the bound was read first), the kick, if claimed, expires after its window."""
        answer, self._answer = self._answer, None
        if isinstance(answer, ScriptReply):
            answer.discard()


def release_kick() -> None:
    """The pass has started (or will not be scheduled): the next change schedules the next one."""
    try:
        caches[DEFAULT_CACHE_ALIAS].delete(KICK_KEY)
    except Exception:  # noqa: BLE001 - it expires after its window anyway
        logger.warning("Could not release the mail kick; it expires by itself")


# KEYS: the counters, then the kick. ARGV: the count to add, the counters' lifetime (seconds), the
# kick's window (ms; 0: no kick). Returns the counters' new totals, then (with a window) 1 if this
# call claimed the kick, 0 if it was taken.
BOUND_LUA = """
local counters = #KEYS - 1
local count, lifetime, window = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local answer = {}
for index = 1, counters do
  answer[index] = redis.call('INCRBY', KEYS[index], count)
  redis.call('EXPIRE', KEYS[index], lifetime)
end
if window > 0 then
  answer[counters + 1] = redis.call('SET', KEYS[#KEYS], 1, 'NX', 'PX', window) and 1 or 0
end
return answer
"""
COUNTER_LIFETIME_SECONDS = 3700  # an hour's counter outlives its hour a little


def _count(store, keys: list[str], count: int, window: int):
    """Add `count` to each counter (kept an hour past its window) and, with a `window` (ms), claim
    the kick. In Redis, one script (`BOUND_LUA`), sent now: its reply (`ScriptReply`), whose answer
    is the new totals, then (with a window) 1 if the kick was claimed. Another cache (`make run`'s
    files): the new totals and whether the kick was claimed (None without a window), or the error."""
    if isinstance(store, RedisCache):
        try:
            # `make_key`: these keys are ours and valid (the check warns of what memcached refuses,
            # character by character: a fifth of the call's CPU).
            names = [store.make_key(key) for key in keys]
            names.append(store.make_key(KICK_KEY))
            return sent_script(store, BOUND_LUA, keys=names, args=[count, COUNTER_LIFETIME_SECONDS, window])
        except Exception as error:  # noqa: BLE001 - read as the cache away (`Bound.result`)
            return error
    try:
        totals = []
        for key in keys:
            store.add(key, 0, timeout=COUNTER_LIFETIME_SECONDS)
            totals.append(store.incr(key, count))
        return totals, (store.add(KICK_KEY, 1, timeout=window / 1000) if window else None)
    except Exception as error:  # noqa: BLE001 - read as the cache away (`Bound.result`)
        return error
