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
  each database query (web) and each Redis command (web and worker) took;
- `scheduling_rate_limit_refusals_total{route}`: answers 429 of the rate limits;
- `scheduling_webhook_attempts_total{outcome}` and `scheduling_webhook_lag_seconds`: each finished
  delivery attempt by outcome (`succeeded`, `failed`, `timeout`, ...), and how long after its event
  it started;
- `scheduling_webhook_outbox_depth` and `scheduling_webhook_oldest_due_seconds`: read from the
  database at each scrape, the deliveries not finished yet and how long the oldest due one has been
  waiting (the backlog the sweeper drains).

What it costs per request is what matters (docs/benchmarks.md, "What the observability costs"). In
multiprocess mode every `inc` and `observe` takes a lock, asks the kernel for the process id and
writes the mmap'd file, so a request's queries and Redis commands are counted in memory
(`RequestTimings`) and added to their histograms once, as the request ends: the same buckets,
sum and count as one `observe` per query, a handful of writes instead of two per query. The
labelled children of the request metrics are kept by (method, route, status) instead of being
looked up by `.labels()` on every request.
"""

import os
import time
from bisect import bisect_left
from contextvars import ContextVar

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


class Tally:
    """One histogram's observations during one request, counted in memory: `add` costs a bisect;
    `flush` adds them to the histogram (its sum, and each bucket that got any) and starts over.
    The histogram's buckets and sum are prometheus-client's own `_sum` and `_buckets` values,
    the ones its `observe` increments (observability/tests/test_switches.py checks that a flush
    reads the same as one `observe` per value)."""

    __slots__ = ("histogram", "bounds", "counts", "total", "observed")

    def __init__(self, histogram: Histogram):
        self.histogram = histogram
        self.bounds = histogram._upper_bounds
        self.counts = [0] * len(self.bounds)
        self.total = 0.0
        self.observed = False

    def add(self, seconds: float) -> None:
        self.counts[bisect_left(self.bounds, seconds)] += 1
        self.total += seconds
        self.observed = True

    def flush(self) -> None:
        if not self.observed:
            return
        histogram, counts = self.histogram, self.counts
        histogram._sum.inc(self.total)
        for index, count in enumerate(counts):
            if count:
                histogram._buckets[index].inc(count)
                counts[index] = 0
        self.total, self.observed = 0.0, False


class RequestTimings:
    """The database and Redis time of the request being served (`current`), added to the
    histograms as it ends."""

    __slots__ = ("db", "redis")

    def __init__(self):
        self.db, self.redis = Tally(DB_SECONDS), Tally(REDIS_SECONDS)

    def time_query(self, execute, sql, params, many, context):
        """A database execute wrapper (`connection.execute_wrappers`)."""
        started = time.perf_counter()
        try:
            return execute(sql, params, many, context)
        finally:
            self.db.add(time.perf_counter() - started)

    def flush(self) -> None:
        self.db.flush()
        self.redis.flush()


current: ContextVar[RequestTimings | None] = ContextVar("observability_request_timings", default=None)


def route_of(request) -> str:
    """The URL pattern that answered (regular-expression patterns without their anchors)."""
    match = getattr(request, "resolver_match", None)
    if match is None:
        return UNMATCHED
    route = match.route or match.view_name or UNMATCHED
    return route.replace("^", "").replace("$", "")


# (method, route, status) -> the request's labelled children: its counter, its histogram and, for a
# 429, its refusal counter. As bounded as the label sets themselves.
_children: dict[tuple[str, str, int], tuple] = {}


def _children_of(method: str, route: str, status: int) -> tuple:
    children = _children.get((method, route, status))
    if children is None:
        children = (
            REQUESTS.labels(method, route, str(status)),
            REQUEST_SECONDS.labels(method, route),
            RATE_LIMIT_REFUSALS.labels(route) if status == 429 else None,
        )
        _children[(method, route, status)] = children
    return children


def observe_request(request, response, seconds: float) -> None:
    requests, request_seconds, refusals = _children_of(request.method, route_of(request), response.status_code)
    requests.inc()
    request_seconds.observe(seconds)
    if refusals is not None:
        refusals.inc()


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
            seconds = time.perf_counter() - started
            timings = current.get()
            if timings is None:  # outside a request: a worker's, beat's, a scrape's
                REDIS_SECONDS.observe(seconds)
            else:
                timings.redis.add(seconds)

    timed.__wrapped__ = wrapped
    return timed


_installed = False


def install() -> None:
    """Time Redis commands (redis-py has no hook of its own: its two entry points are wrapped, and
    the answer of a script sent ahead) and count webhook attempts. Idempotent."""
    global _installed
    if _installed:
        return
    import redis.client

    redis.client.Redis.execute_command = _time_redis(redis.client.Redis.execute_command)
    redis.client.Pipeline.execute = _time_redis(redis.client.Pipeline.execute)
    # A script sent ahead and read later (the mail bound, core.redis_scripts.sent_script): the time
    # its reader waited for the answer.
    from core.redis_scripts import ScriptReply

    ScriptReply.result = _time_redis(ScriptReply.result)

    from webhooks.signals import attempt_finished

    attempt_finished.connect(_on_attempt_finished, dispatch_uid="observability.metrics")
    _installed = True


def _on_attempt_finished(sender, *, outcome: str, lag_seconds: float | None, **kwargs) -> None:
    observe_attempt(outcome=outcome, lag_seconds=lag_seconds)
