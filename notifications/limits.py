"""The bound on booking e-mails per organizer and per credential (docs/notifications.md, "Limits"),
and the kick: which booking's change schedules the worker's pass over new messages (docs/notifications.md,
"How mail is sent: the outbox"). Both are one Redis round trip."""

import logging

from django.core.cache import DEFAULT_CACHE_ALIAS, caches
from django.core.cache.backends.redis import RedisCache
from django.utils import timezone

from core.exceptions import RateLimited
from core.redis_scripts import registered_script
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
        return None
    store = caches[DEFAULT_CACHE_ALIAS]
    try:
        # The backend itself, not the `cache` proxy (which is no RedisCache): one round trip.
        totals, claimed = _count(store, [key for key, _ in bounds], count, window)
    except Exception:  # noqa: BLE001 - the cache is down: mails still go, unbounded
        logger.warning("Could not count booking mails; not bounded")
        return None
    for total, (_, limit) in zip(totals, bounds, strict=True):
        if total > limit:
            if claimed:
                release_kick()  # this change is refused: the next one schedules the pass
            wait = 3600 - now % 3600
            raise RateLimited(wait=wait)
    return claimed


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


def _count(store, keys: list[str], count: int, window: int) -> tuple[list[int], bool | None]:
    """Add `count` to each counter (kept an hour past its window) and, with a `window` (ms), claim
    the kick: the new totals, and whether the kick was claimed (None without a window). In Redis,
    one script (`BOUND_LUA`): one round trip."""
    if isinstance(store, RedisCache):
        names = [store.make_and_validate_key(key) for key in keys]
        names.append(store.make_and_validate_key(KICK_KEY))
        answer = registered_script(store, BOUND_LUA)(keys=names, args=[count, COUNTER_LIFETIME_SECONDS, window])
        return answer[: len(keys)], (bool(answer[-1]) if window else None)
    totals = []
    for key in keys:
        store.add(key, 0, timeout=COUNTER_LIFETIME_SECONDS)
        totals.append(store.incr(key, count))
    return totals, (store.add(KICK_KEY, 1, timeout=window / 1000) if window else None)
