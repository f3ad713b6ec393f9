"""`make bench-noisy-neighbour` (`python -m benchmarks.noisy_neighbour`): does a slow subscriber
delay anybody else's webhooks? Prints figures; asserts nothing.

One worker of the documented size (`celery -A config worker --pool threads --concurrency 4`, with
its embedded beat running the sweeper) on PostgreSQL and Redis, its own database (`test_<name>`,
created and dropped). Receivers on 127.0.0.1:

- 100 healthy subscribers (one keep-alive server that answers at once, a path each);
- slow subscribers, half of them never answering (they accept the connection and read the
  request), half answering after 30 s.

1. For 0, 2 (the operator's drill: one never answering, one answering after 30 s) and 10 slow
   subscribers: each slow subscriber is sent NOISY_RATE (10) events/s and the healthy ones
   HEALTHY_RATE (20) events/s in all, round robin, for NOISY_SECONDS (30; the drill is 120).
   SLOW_COUNTS (default 0,2,10) picks the rows.
   Figures: the healthy deliveries' lag from commit to arrival (p50, p99, max) and how many were
   late by more than 1 s. Beside them, FLAKY (10) subscribers at FLAKY_RATE (2)
   events/s in all answer each event's first attempt 503 with `Retry-After: 8`, which makes its
   retry due exactly 8 s after that answer: how late each retry starts after its due time.
2. 1,000 never-answering subscribers, two events each: the most attempts in flight at once in the
   worker (connections open at the silent receiver) and the worker's memory (RSS, all processes).
"""

import os
import resource
import selectors
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

from benchmarks.receivers import InstantReceiver

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings_test")

ROOT = Path(__file__).resolve().parent.parent
HEALTHY = 100
FLAKY = 10


class SlowReceiver(InstantReceiver):
    """Answers after `delay` seconds (one thread per connection; the worker's cap bounds them)."""

    def __init__(self, delay: float):
        super().__init__()
        self.delay = delay

    def answer(self, message: str) -> tuple[int, dict[str, str]]:
        time.sleep(self.delay)
        return super().answer(message)


class FlakyReceiver(InstantReceiver):
    """Answers the first attempt of each event 503 with `Retry-After: RETRY_AFTER` (the retry is
    then due exactly that long after the answer: the scheduled 5 s, at most doubled, is pushed out
    to it), and the retry 204. Records when the first answer went out and when the retry came."""

    RETRY_AFTER = 8

    def __init__(self):
        super().__init__()
        self.refused: dict[str, float] = {}

    def answer(self, message: str) -> tuple[int, dict[str, str]]:
        if message not in self.refused:
            self.refused[message] = time.time()
            return 503, {"Retry-After": str(self.RETRY_AFTER)}
        return super().answer(message)


class SilentReceiver:
    """Accepts connections and reads forever, never answering; counts connections open at once."""

    def __init__(self):
        self.listener = socket.create_server(("127.0.0.1", 0), backlog=4096)
        self.listener.setblocking(False)
        self.port = self.listener.getsockname()[1]
        self.selector = selectors.DefaultSelector()
        self.selector.register(self.listener, selectors.EVENT_READ)
        self.open = 0
        self.most_open = 0
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        while True:
            for key, _ in self.selector.select():
                if key.fileobj is self.listener:
                    try:
                        connection, _ = self.listener.accept()
                    except OSError:
                        continue
                    connection.setblocking(False)
                    self.selector.register(connection, selectors.EVENT_READ)
                    self.open += 1
                    self.most_open = max(self.most_open, self.open)
                else:
                    try:
                        data = key.fileobj.recv(65536)
                    except OSError:
                        data = b""
                    if not data:
                        self.selector.unregister(key.fileobj)
                        key.fileobj.close()
                        self.open -= 1


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]


def wait_for(predicate, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return False


def worker_rss_mb(pid: int) -> float:
    import psutil

    process = psutil.Process(pid)
    return sum(p.memory_info().rss for p in [process, *process.children(recursive=True)]) / 2**20


def main() -> None:
    import django

    django.setup()
    import redis
    from django.conf import settings
    from django.db import connection, transaction

    from accounts.tests.factories import UserFactory
    from config.celery import app
    from webhooks.models import Webhook, WebhookDelivery, WebhookTrigger
    from webhooks.outbox import create_deliveries

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 65536), hard))
    noisy_rate = float(os.environ.get("NOISY_RATE", 10))
    healthy_rate = float(os.environ.get("HEALTHY_RATE", 20))
    flaky_rate = float(os.environ.get("FLAKY_RATE", 2))
    slow_counts = [int(count) for count in os.environ.get("SLOW_COUNTS", "0,2,10").split(",")]
    seconds = float(os.environ.get("NOISY_SECONDS", 30))
    pool = os.environ.get("BENCH_POOL", "threads")
    concurrency = os.environ.get("BENCH_CONCURRENCY", "4")

    redis.Redis.from_url(settings.CELERY_BROKER_URL).flushdb()
    original_database = connection.settings_dict["NAME"]
    test_database = connection.creation.create_test_db(verbosity=0, autoclobber=True, keepdb=False)
    database = connection.settings_dict
    worker = None
    try:
        env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "config.settings_test",
            "DATABASE_URL": f"postgres://{database['USER']}@{database['HOST']}:{database['PORT']}/{test_database}",
            "CELERY_DB_REUSE_MAX": "1000",
        }
        worker = subprocess.Popen(
            [str(Path(sys.executable).parent / "celery"), "-A", "config", "worker", "-B",
             "-s", "/tmp/bench-noisy-neighbour-beat", "-c", concurrency, "-P", pool, "-l", "warning",
             "--without-gossip", "--without-mingle"],
            cwd=ROOT, env=env, start_new_session=True,
        )  # fmt: skip
        if not wait_for(lambda: app.control.ping(timeout=0.3), 60):
            raise SystemExit("The worker did not start.")

        owner = UserFactory()
        healthy_receiver = InstantReceiver()
        healthy = [
            Webhook.objects.create(
                user=owner,
                subscriber_url=f"http://127.0.0.1:{healthy_receiver.port}/healthy/{n}",
                event_triggers=[WebhookTrigger.BOOKING_CREATED],
                secret="whsec_" + "A" * 43,
            )
            for n in range(HEALTHY)
        ]
        flaky_receiver = FlakyReceiver()
        flaky = [
            Webhook.objects.create(
                user=owner,
                subscriber_url=f"http://127.0.0.1:{flaky_receiver.port}/flaky/{n}",
                event_triggers=[WebhookTrigger.BOOKING_CREATED],
                secret="whsec_" + "A" * 43,
            )
            for n in range(FLAKY)
        ]
        silent_receiver = SilentReceiver()
        late_receiver = SlowReceiver(30.0)

        def slow_webhooks(count: int, tag: str) -> list:
            return [
                Webhook.objects.create(
                    user=owner,
                    subscriber_url=(
                        f"http://127.0.0.1:{silent_receiver.port}/silent/{tag}/{n}"
                        if n % 2 == 0
                        else f"http://127.0.0.1:{late_receiver.port}/late/{tag}/{n}"
                    ),
                    event_triggers=[WebhookTrigger.BOOKING_CREATED],
                    secret="whsec_" + "A" * 43,
                )
                for n in range(count)
            ]

        def emit(webhooks) -> list[tuple[str, float]]:
            with transaction.atomic():
                deliveries = create_deliveries(
                    webhooks=webhooks, trigger=WebhookTrigger.BOOKING_CREATED, payload={"n": 1}
                )
            now = time.time()
            return [(delivery.message_id, now) for delivery in deliveries]

        # Warm-up: every healthy subscriber once.
        warm = emit(healthy)
        wait_for(lambda: all(m in healthy_receiver.received for m, _ in warm), 60)

        print(f"\nNoisy neighbour (1 worker, {pool} pool, concurrency {concurrency}, PostgreSQL + Redis)")
        print(f"  {HEALTHY} healthy subscribers at {healthy_rate:.0f} events/s in all; each slow one at "
              f"{noisy_rate:.0f} events/s; {seconds:.0f} s per row; half the slow ones never answer, "
              "half answer after 30 s")  # fmt: skip
        print(f"  {FLAKY} flaky subscribers at {flaky_rate:g} events/s in all: each event's retry is due 8 s after "
              "its first answer (503, Retry-After: 8); 'retry late' is when the retry started after that")  # fmt: skip
        print(
            "  slow subscribers | healthy lag p50 / p99 / max | over 1 s | delivered | retry late p50 / max"
            " | worker RSS"
        )
        for slow_count in slow_counts:
            slow = slow_webhooks(slow_count, f"run{slow_count}")
            committed: list[tuple[str, float]] = []
            tick = 1.0 / max(healthy_rate, noisy_rate)
            start = time.monotonic()
            next_healthy, next_noisy, next_flaky, index = 0.0, 0.0, 0.0, 0
            retried: list[str] = []
            while (elapsed := time.monotonic() - start) < seconds:
                if elapsed >= next_noisy and slow:
                    emit(slow)
                    next_noisy += 1.0 / noisy_rate
                if elapsed >= next_flaky:
                    retried += [m for m, _ in emit([flaky[index % FLAKY]])]
                    next_flaky += 1.0 / flaky_rate
                if elapsed >= next_healthy:
                    committed += emit([healthy[index % HEALTHY]])
                    index += 1
                    next_healthy += 1.0 / healthy_rate
                time.sleep(tick / 4)
            wait_for(lambda sent=tuple(committed): all(m in healthy_receiver.received for m, _ in sent), 60)
            lags = [healthy_receiver.received[m] - at for m, at in committed if m in healthy_receiver.received]
            late = sum(1 for lag in lags if lag > 1.0)
            wait_for(lambda sent=tuple(retried): all(m in flaky_receiver.received for m in sent), 60)
            retry_late = [
                flaky_receiver.received[m] - flaky_receiver.refused[m] - FlakyReceiver.RETRY_AFTER
                for m in retried
                if m in flaky_receiver.received
            ]
            print(
                f"  {slow_count:16d} | {statistics.median(lags) * 1000:7.0f} / {percentile(lags, 0.99) * 1000:.0f} / "
                f"{max(lags) * 1000:.0f} ms | {late:8d} | {len(lags)}/{len(committed)} | "
                f"{statistics.median(retry_late) * 1000:.0f} / {max(retry_late) * 1000:.0f} ms "
                f"({len(retry_late)}/{len(retried)}) | {worker_rss_mb(worker.pid):.0f} MB"
            )
            Webhook.objects.filter(pk__in=[webhook.pk for webhook in slow]).update(active=False)
            WebhookDelivery.objects.filter(webhook__in=slow, status="pending").update(status="cancelled")

        # 2. Attempts in flight with 1,000 never-answering subscribers.
        many = [
            Webhook.objects.create(
                user=owner,
                subscriber_url=f"http://127.0.0.1:{silent_receiver.port}/many/{n}",
                event_triggers=[WebhookTrigger.BOOKING_CREATED],
                secret="whsec_" + "A" * 43,
            )
            for n in range(1000)
        ]
        base_open = silent_receiver.open
        silent_receiver.most_open = base_open
        emit(many)
        emit(many)
        wait_for(lambda: silent_receiver.open - base_open >= 1000, 60)
        time.sleep(3)
        in_flight = silent_receiver.most_open - base_open
        print(
            f"  1,000 never-answering subscribers x 2 events: {in_flight} attempts in flight at once "
            f"(MAX_IN_FLIGHT_PER_WORKER {settings.WEBHOOKS['MAX_IN_FLIGHT_PER_WORKER']}), "
            f"worker RSS {worker_rss_mb(worker.pid):.0f} MB"
        )
    finally:
        if worker is not None and worker.poll() is None:
            os.killpg(worker.pid, signal.SIGKILL)
            worker.wait(15)
        connection.close()
        connection.creation.destroy_test_db(original_database, verbosity=0)


if __name__ == "__main__":
    main()
