"""Prometheus metrics (METRICS_ENABLED), served at `GET /metrics` from every web process and on
METRICS_WORKER_PORT from each Celery worker.

gunicorn runs several worker processes, each with its own counters: with METRICS_ENABLED,
config/gunicorn.conf.py gives them a shared folder (`PROMETHEUS_MULTIPROC_DIR`, emptied when the
master starts, a dead worker's files marked so), and `/metrics` answers for the whole instance,
whichever worker serves the scrape (prometheus-client's multiprocess mode).

What is measured (docs/operations.md, "Observability"):

- `scheduling_http_requests_total{method,route,status}` and
  `scheduling_http_request_duration_seconds{method,route}`: every request, by its URL pattern
  (`v1/bookings/<str:pk>`, never the raw path, so the label set stays small);
- `scheduling_db_query_duration_seconds` and `scheduling_redis_command_duration_seconds`: the time
  each database query and each Redis command took, in web and worker processes;
- `scheduling_rate_limit_refusals_total{route}`: answers 429 of the rate limits;
- `scheduling_webhook_attempts_total{outcome}` and `scheduling_webhook_lag_seconds`: each finished
  delivery attempt by outcome (`succeeded`, `failed`, `timeout`, ...), and how long after its event
  it started;
- `scheduling_webhook_outbox_depth` and `scheduling_webhook_oldest_due_seconds`: read from the
  database at each scrape, the deliveries not finished yet and how long the oldest due one has been
  waiting (the backlog the sweeper drains).
"""

import os
import time

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily

LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
QUERY_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0)
LAG_BUCKETS = (0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0, 3600.0)

REQUESTS = Counter("scheduling_http_requests_total", "HTTP requests answered", ["method", "route", "status"])
REQUEST_SECONDS = Histogram(
    "scheduling_http_request_duration_seconds", "Time to answer a request", ["method", "route"], buckets=LATENCY_BUCKETS
)
DB_SECONDS = Histogram("scheduling_db_query_duration_seconds", "Time of one database query", buckets=QUERY_BUCKETS)
REDIS_SECONDS = Histogram(
    "scheduling_redis_command_duration_seconds", "Time of one Redis command or pipeline", buckets=QUERY_BUCKETS
)
RATE_LIMIT_REFUSALS = Counter("scheduling_rate_limit_refusals_total", "Requests refused by a rate limit", ["route"])
WEBHOOK_ATTEMPTS = Counter("scheduling_webhook_attempts_total", "Finished webhook delivery attempts", ["outcome"])
WEBHOOK_LAG = Histogram(
    "scheduling_webhook_lag_seconds", "From an event to the start of its delivery attempt", buckets=LAG_BUCKETS
)

UNMATCHED = "<unmatched>"


def route_of(request) -> str:
    """The URL pattern that answered (regular-expression patterns without their anchors)."""
    match = getattr(request, "resolver_match", None)
    if match is None:
        return UNMATCHED
    route = match.route or match.view_name or UNMATCHED
    return route.replace("^", "").replace("$", "")


def time_query(execute, sql, params, many, context):
    started = time.perf_counter()
    try:
        return execute(sql, params, many, context)
    finally:
        DB_SECONDS.observe(time.perf_counter() - started)


def observe_request(request, response, seconds: float) -> None:
    route = route_of(request)
    REQUESTS.labels(request.method, route, str(response.status_code)).inc()
    REQUEST_SECONDS.labels(request.method, route).observe(seconds)
    if response.status_code == 429:
        RATE_LIMIT_REFUSALS.labels(route).inc()


def observe_attempt(*, outcome: str, lag_seconds: float | None) -> None:
    WEBHOOK_ATTEMPTS.labels(outcome).inc()
    if lag_seconds is not None:
        WEBHOOK_LAG.observe(max(0.0, lag_seconds))


class OutboxCollector:
    """The outbox, read at scrape time (one indexed query): what is not delivered yet, and for how
    long the oldest due delivery has waited."""

    def collect(self):
        from webhooks.selectors import outbox_backlog

        depth, oldest_due_seconds = outbox_backlog()
        yield GaugeMetricFamily(
            "scheduling_webhook_outbox_depth", "Webhook deliveries not finished (pending or delivering)", value=depth
        )
        yield GaugeMetricFamily(
            "scheduling_webhook_oldest_due_seconds",
            "How long the oldest due delivery has been waiting",
            value=oldest_due_seconds,
        )


def exposition() -> tuple[bytes, str]:
    """What one scrape reads: every process of this instance (multiprocess mode) or this process,
    then the outbox."""
    from prometheus_client import REGISTRY, multiprocess

    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        processes = CollectorRegistry()
        multiprocess.MultiProcessCollector(processes)
    else:
        processes = REGISTRY
    outbox = CollectorRegistry()
    outbox.register(OutboxCollector())
    return generate_latest(processes) + generate_latest(outbox), CONTENT_TYPE_LATEST


def _time_redis(wrapped):
    def timed(self, *args, **kwargs):
        started = time.perf_counter()
        try:
            return wrapped(self, *args, **kwargs)
        finally:
            REDIS_SECONDS.observe(time.perf_counter() - started)

    timed.__wrapped__ = wrapped
    return timed


_installed = False


def install() -> None:
    """Time Redis commands (redis-py has no hook of its own: its two entry points are wrapped) and
    count webhook attempts. Idempotent."""
    global _installed
    if _installed:
        return
    import redis.client

    redis.client.Redis.execute_command = _time_redis(redis.client.Redis.execute_command)
    redis.client.Pipeline.execute = _time_redis(redis.client.Pipeline.execute)

    from webhooks.signals import attempt_finished

    attempt_finished.connect(_on_attempt_finished, dispatch_uid="observability.metrics")
    _installed = True


def _on_attempt_finished(sender, *, outcome: str, lag_seconds: float | None, **kwargs) -> None:
    observe_attempt(outcome=outcome, lag_seconds=lag_seconds)
