"""Session-wide checks and fixtures shared by every app's tests.

The suite runs against real PostgreSQL and Redis. If either is down it stops at once with a message
naming the service, the URL tried and how to start it; nothing is skipped.
"""

import os
import socket
from urllib.parse import urlsplit

import pytest

SERVICES = {
    "PostgreSQL": (
        "DATABASE_URL",
        "postgres://postgres@127.0.0.1:5432/scheduling",
        "pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start",
    ),
    "Redis": (
        "REDIS_URL",
        "redis://127.0.0.1:6379/0",
        'redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no',
    ),
}


def _unreachable(url: str) -> str | None:
    parts = urlsplit(url)
    try:
        with socket.create_connection((parts.hostname or "127.0.0.1", parts.port), timeout=3):
            return None
    except OSError as error:
        return str(error)


def pytest_configure(config):
    problems = []
    for service, (variable, default, start) in SERVICES.items():
        url = os.environ.get(variable, default)
        error = _unreachable(url)
        if error:
            problems.append(
                f"{service} is not reachable at {url} ({error}).\n  Start it with: {start}\n  or set {variable}."
            )
    if problems:
        raise pytest.UsageError("The test suite needs its services:\n" + "\n".join(problems))


@pytest.fixture
def api_client():
    from rest_framework.test import APIClient

    return APIClient()


@pytest.fixture
def operator_client(client):
    """A test client signed in to the admin as a superuser."""
    from accounts.tests.factories import PASSWORD, UserFactory

    operator = UserFactory(username="operator", is_staff=True, is_superuser=True)
    assert client.login(username=operator.username, password=PASSWORD)
    return client


@pytest.fixture
def chromium():
    from core.tests.browser import headless_chromium

    with headless_chromium() as driver:
        yield driver


@pytest.fixture
def private_redis(settings, monkeypatch):
    """The test's own redis-server as the cache (the rate limit's store), with short timeouts as
    in production, and a fresh limiter health; stop it to test an outage."""
    from core import ratelimit
    from core.tests.outages import PrivateRedis

    monkeypatch.setattr(ratelimit, "health", ratelimit.LimiterHealth())
    with PrivateRedis() as server:
        settings.CACHES = {
            "default": {
                "BACKEND": "django.core.cache.backends.redis.RedisCache",
                "LOCATION": server.url,
                "OPTIONS": {"socket_connect_timeout": 0.25, "socket_timeout": 0.25},
            }
        }
        yield server
