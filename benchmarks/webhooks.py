"""`make bench-webhooks` (`python -m benchmarks.webhooks`): commit-to-first-attempt latency and
deliveries per second of one worker, next to a no-op Celery task on the same broker (the floor).
Prints figures; asserts nothing.

Needs PostgreSQL and Redis (DATABASE_URL / REDIS_URL). Creates and drops its own database
(`test_<name>`), starts one worker (`celery -A benchmarks.webhooks worker`, pool BENCH_POOL, default
prefork, concurrency BENCH_CONCURRENCY, default 8: the production recommendation of
docs/webhooks.md for two cores) and an instant keep-alive receiver on 127.0.0.1. BENCH_RATE (50
events/s), BENCH_SECONDS (10) and BENCH_BURST (1000) size the runs; BENCH_DB_REUSE_MAX, below.
"""

import os
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings_test")

from benchmarks.receivers import InstantReceiver  # noqa: E402
from config.celery import app  # noqa: E402  (the worker is started with -A benchmarks.webhooks)

ROOT = Path(__file__).resolve().parent.parent
NOOP_KEY = "bench:webhooks:noop"
# Celery's Django fixup closes the worker's database connections around every task unless
# CELERY_DB_REUSE_MAX is set; BENCH_DB_REUSE_MAX sets it in the benchmark's worker (this module is
# its app module) to measure the recommended setting before config/settings.py carries it.
if os.environ.get("BENCH_DB_REUSE_MAX"):
    app.conf["CELERY_DB_REUSE_MAX"] = int(os.environ["BENCH_DB_REUSE_MAX"])


@app.task(name="bench.noop", ignore_result=True)
def noop(sent_at: float) -> None:
    """The floor: a task that only records that it ran (wall clock, same host)."""
    import redis
    from django.conf import settings

    redis.Redis.from_url(settings.CELERY_BROKER_URL).rpush(NOOP_KEY, time.time() - sent_at)


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]


def wait_for(predicate, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.01)
    return False


def main() -> None:
    import django

    django.setup()
    import redis
    from django.conf import settings
    from django.db import connection, transaction

    from accounts.tests.factories import UserFactory
    from webhooks.models import WebhookTrigger
    from webhooks.outbox import emit_event
    from webhooks.tests.factories import WebhookFactory

    rate = float(os.environ.get("BENCH_RATE", 50))
    seconds = float(os.environ.get("BENCH_SECONDS", 10))
    burst = int(os.environ.get("BENCH_BURST", 1000))
    concurrency = os.environ.get("BENCH_CONCURRENCY", "8")
    pool = os.environ.get("BENCH_POOL", "prefork")

    broker = redis.Redis.from_url(settings.CELERY_BROKER_URL)
    broker.flushdb()
    original_database = connection.settings_dict["NAME"]
    test_database = connection.creation.create_test_db(verbosity=0, autoclobber=True, keepdb=False)
    database = connection.settings_dict
    worker = None
    try:
        receiver = InstantReceiver()
        webhook = WebhookFactory(user=UserFactory(), subscriber_url=receiver.url())
        env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "config.settings_test",
            "DATABASE_URL": f"postgres://{database['USER']}@{database['HOST']}:{database['PORT']}/{test_database}",
        }
        worker = subprocess.Popen(
            [str(Path(sys.executable).parent / "celery"), "-A", "benchmarks.webhooks", "worker", "-B",
             "-s", "/tmp/bench-webhooks-beat", "-c", concurrency, "-P", pool, "-l", "warning",
             "--without-gossip", "--without-mingle"],
            cwd=ROOT, env=env, start_new_session=True,
        )  # fmt: skip
        if not wait_for(lambda: app.control.ping(timeout=0.3), 60):
            raise SystemExit("The worker did not start.")

        def emit_one() -> tuple[str, float]:
            with transaction.atomic():
                [delivery] = emit_event(trigger=WebhookTrigger.BOOKING_CREATED, payload={"n": 1}, user=webhook.user)
            return delivery.message_id, time.time()

        # Warm-up: connections, imports.
        for _ in range(20):
            emit_one()
        wait_for(lambda: len(receiver.received) >= 20, 30)

        # 1. Latency at a steady rate.
        committed: dict[str, float] = {}
        interval = 1.0 / rate
        start = time.monotonic()
        for index in range(int(rate * seconds)):
            pause = start + index * interval - time.monotonic()
            if pause > 0:
                time.sleep(pause)
            message_id, at = emit_one()
            committed[message_id] = at
        wait_for(lambda: all(m in receiver.received for m in committed), 60)
        latencies = [(receiver.received[m] - at) * 1000 for m, at in committed.items() if m in receiver.received]

        # 2. Deliveries per second: a burst committed at once, drained by one worker.
        with transaction.atomic():
            burst_ids = [
                emit_event(trigger=WebhookTrigger.BOOKING_CREATED, payload={"n": n}, user=webhook.user)[0].message_id
                for n in range(burst)
            ]
        burst_start = time.time()
        wait_for(lambda: all(m in receiver.received for m in burst_ids), 300)
        burst_end = max(receiver.received.get(m, time.time()) for m in burst_ids)
        deliveries_per_second = burst / (burst_end - burst_start)

        # 3. The floor: no-op tasks on the same broker and worker.
        broker.delete(NOOP_KEY)
        noop_start = time.time()
        for _ in range(burst):
            noop.delay(time.time())
        wait_for(lambda: broker.llen(NOOP_KEY) >= burst, 300)
        noop_per_second = burst / (time.time() - noop_start)
        broker.delete(NOOP_KEY)
        for _ in range(int(rate * seconds)):
            noop.delay(time.time())
            time.sleep(interval)
        wait_for(lambda: broker.llen(NOOP_KEY) >= int(rate * seconds), 60)
        noop_latencies = [float(value) * 1000 for value in broker.lrange(NOOP_KEY, 0, -1)]

        delivered = len(latencies)
        print(f"\nWebhook delivery benchmark (1 worker, {pool} pool, concurrency {concurrency}, PostgreSQL + Redis)")
        print(f"  steady rate: {rate:.0f} events/s for {seconds:.0f} s, {delivered}/{len(committed)} delivered")
        print(
            f"  commit -> first attempt: p50 {statistics.median(latencies):.1f} ms, "
            f"p95 {percentile(latencies, 0.95):.1f} ms, p99 {percentile(latencies, 0.99):.1f} ms"
        )
        print(
            f"  no-op task round trip:   p50 {statistics.median(noop_latencies):.1f} ms, "
            f"p95 {percentile(noop_latencies, 0.95):.1f} ms, p99 {percentile(noop_latencies, 0.99):.1f} ms"
        )
        reuse = app.conf.get("CELERY_DB_REUSE_MAX")
        print(
            f"  worker database connections: reused for {reuse} tasks (CELERY_DB_REUSE_MAX)"
            if reuse
            else "  worker database connections: a new one per task (CELERY_DB_REUSE_MAX is not set)"
        )
        print(f"  burst of {burst}: {deliveries_per_second:.0f} deliveries/s vs {noop_per_second:.0f} no-op tasks/s "
              f"({deliveries_per_second / noop_per_second:.0%} of the floor)")  # fmt: skip
    finally:
        if worker is not None and worker.poll() is None:
            os.killpg(worker.pid, signal.SIGTERM)
            try:
                worker.wait(15)
            except subprocess.TimeoutExpired:
                os.killpg(worker.pid, signal.SIGKILL)
        connection.creation.destroy_test_db(original_database, verbosity=0)


if __name__ == "__main__":
    main()
