"""Benchmark settings (`make bench`): production settings plus the benchmark-only floor views.

Everything that matters for speed is what production runs: DEBUG off, PostgreSQL, Redis (cache,
rate-limit counters and broker), the same middleware, authentication and renderers. The only
differences: ROOT_URLCONF adds the floors of `benchmarks.urls` next to the production URLs, the rate
limit budget is too large to refuse anything (it is still counted in Redis on every request), and
the bound on queued
mails per organizer and per key is likewise too large to refuse anything (still counted), and
the log level is WARNING so that logging does not compete with the server for the two cores.
"""

import os

os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/sched_bench")
os.environ.setdefault("REDIS_URL", "redis://127.0.0.1:6379/7")
os.environ.setdefault("SECRET_KEY", "bench-only-secret-key-not-for-production")
os.environ.setdefault("LOG_LEVEL", "WARNING")

from config.settings import *  # noqa: E402,F403
from config.settings import DATABASES, NOTIFICATIONS  # noqa: E402

DEBUG = False
ROOT_URLCONF = "benchmarks.urls"
RATE_LIMIT_PER_MINUTE = 1_000_000_000
NOTIFICATIONS = {
    **NOTIFICATIONS,
    "MAX_PER_ORGANIZER_PER_HOUR": 1_000_000_000,
    "MAX_PER_API_KEY_PER_HOUR": 1_000_000_000,
}

# One persistent connection per gunicorn worker, as production runs (settings.py: CONN_MAX_AGE=60).
DATABASES["default"]["CONN_MAX_AGE"] = int(os.environ.get("BENCH_CONN_MAX_AGE", "600"))
