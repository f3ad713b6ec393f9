"""Redis through Sentinel (REDIS_SENTINELS): the cache, the rate limiter and the webhook gate ask the
Sentinels which server is the primary (REDIS_SENTINEL_MASTER) instead of connecting to REDIS_URL's
host, and ask again whenever a connection fails, so a replica that Sentinel promotes is found
without a restart. REDIS_URL still gives the database number and the password. The Celery broker
uses kombu's own Sentinel transport (config/settings.py).

Without REDIS_SENTINELS, `client()` is `redis.Redis.from_url`."""

import redis
from django.conf import settings
from redis.connection import parse_url
from redis.sentinel import Sentinel, SentinelConnectionPool


def sentinel_addresses(sentinels) -> list[tuple[str, int]]:
    addresses = []
    for entry in sentinels:
        host, _, port = entry.strip().rpartition(":")
        addresses.append((host.strip("[]"), int(port)))
    return addresses


class SentinelPool(SentinelConnectionPool):
    """A connection pool to the current primary that Django's RedisCache can build from its
    LOCATION (`OPTIONS["pool_class"]`), as it builds its usual pool: `from_url(url, **options)`."""

    @classmethod
    def from_url(cls, url: str, **options):
        parsed = {key: value for key, value in parse_url(url).items() if key not in ("host", "port")}
        timeouts = {name: options[name] for name in ("socket_timeout", "socket_connect_timeout") if name in options}
        manager = Sentinel(sentinel_addresses(settings.REDIS_SENTINELS), sentinel_kwargs=timeouts, **timeouts)
        return cls(settings.REDIS_SENTINEL_MASTER, manager, **{**parsed, **options})


def client(url: str, *, timeout: float) -> redis.Redis:
    """A client of the primary: through the Sentinels when REDIS_SENTINELS is set."""
    options = {"socket_timeout": timeout, "socket_connect_timeout": timeout}
    if settings.REDIS_SENTINELS:
        return redis.Redis(connection_pool=SentinelPool.from_url(url, **options))
    return redis.Redis.from_url(url, **options)
