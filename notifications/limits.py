"""The bound on booking e-mails per organizer and per credential (docs/notifications.md, "Limits")."""

import logging

from django.core.cache import DEFAULT_CACHE_ALIAS, caches
from django.core.cache.backends.redis import RedisCache
from django.utils import timezone

from core.exceptions import RateLimited
from notifications import switches
from notifications.conf import notification_setting

logger = logging.getLogger(__name__)


def check_bound(organizer_id: int, count: int) -> None:
    """At most MAX_PER_ORGANIZER_PER_HOUR messages to attendees per organizer (and as many per API
    key or token) in a clock hour, so that the API cannot be used to mail arbitrary addresses in
    bulk. Counted in the cache (Redis: both counters in one round trip); when it is away the bound
    is not applied."""
    if count <= 0:
        return
    now = int(timezone.now().timestamp())
    hour = now // 3600
    bounds = [(f"notifications:organizer:{organizer_id}:{hour}", notification_setting("MAX_PER_ORGANIZER_PER_HOUR"))]
    credential = switches.current().credential
    if credential is not None:
        per_key = notification_setting("MAX_PER_API_KEY_PER_HOUR")
        bounds.append((f"notifications:credential:{credential}:{hour}", per_key))
    bounds = [(key, limit) for key, limit in bounds if limit]
    if not bounds:
        return
    try:
        # The backend itself, not the `cache` proxy (which is no RedisCache): one round trip.
        totals = _count(caches[DEFAULT_CACHE_ALIAS], [key for key, _ in bounds], count)
    except Exception:  # noqa: BLE001 - the cache is down: mails still go, unbounded
        logger.warning("Could not count booking mails; not bounded")
        return
    for total, (_, limit) in zip(totals, bounds, strict=True):
        if total > limit:
            wait = 3600 - now % 3600
            raise RateLimited(wait=wait)


def _count(store, keys: list[str], count: int) -> list[int]:
    """Add `count` to each counter (kept an hour past its window); the new totals."""
    if isinstance(store, RedisCache):
        names = [store.make_and_validate_key(key) for key in keys]
        pipeline = store._cache.get_client(names[0], write=True).pipeline(transaction=False)
        for name in names:
            pipeline.incrby(name, count)
            pipeline.expire(name, 3700)
        return pipeline.execute()[::2]
    totals = []
    for key in keys:
        store.add(key, 0, timeout=3700)
        totals.append(store.incr(key, count))
    return totals
