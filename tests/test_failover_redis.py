"""Redis failover by the engine's own means, no containers: a primary, a replica and three
Sentinels on local ports, the service configured with REDIS_SENTINELS (cache, rate limiter,
webhook gate through redis-py's Sentinel support, the broker through kombu's). Under a steady
stream of bookings the primary is killed: bookings keep answering 200 (Redis is not on their
path), Sentinel promotes the replica, the rate limit keeps its bound on the new primary, and the
webhooks resume through it, each booking's delivered (one delivery per booking). Figures in
docs/operations.md."""

import json
import shutil
import signal
import subprocess
import tempfile
import time as clock
from collections import Counter
from pathlib import Path

import pytest
import redis
import requests
from django.db import connection

from accounts.tests.factories import ApiKeyFactory, UserFactory
from scheduling.tests.factories import EventTypeFactory
from tests.support.failover import SteadyBookings, one_delivery_per_booking, receiving
from tests.support.live_services import wait_until
from tests.support.outages import CeleryWorker, Gunicorn, free_port, wait_for_port
from webhooks.models import WebhookTrigger
from webhooks.tests.factories import WebhookFactory

TIMEOUT = 10.0
MASTER = "drillmaster"
LIMIT = 300  # per minute, per key: above the booker's pace
FAST_SWEEPS = {"LEASE_SECONDS": 3, "SWEEP_INTERVAL_SECONDS": 0.5, "TIMEOUT_SECONDS": 5.0}


class RedisSet:
    """`redis-server` as primary and replica, and three `redis-server --sentinel`, each in a folder
    of its own (Sentinel rewrites its configuration file)."""

    def __init__(self):
        self.directory = Path(tempfile.mkdtemp(prefix="failover-redis-"))
        self.primary_port, self.replica_port = free_port(), free_port()
        self.sentinel_ports = [free_port() for _ in range(3)]
        self.processes: dict[str, subprocess.Popen] = {}

    def _server(self, name: str, port: int, *extra: str) -> None:
        # No snapshots; and the replica's copy of the primary (a full sync writes it to disk) goes
        # into the server's own folder, never into the working directory (the checkout).
        folder = self.directory / name
        folder.mkdir()
        command = ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
        self.processes[name] = subprocess.Popen(
            [*command, "--dir", str(folder), *extra],
            cwd=folder,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        wait_for_port(port)

    def start(self) -> None:
        self._server("primary", self.primary_port)
        self._server("replica", self.replica_port, "--replicaof", "127.0.0.1", str(self.primary_port))
        for index, port in enumerate(self.sentinel_ports):
            config = self.directory / f"sentinel-{index}.conf"
            config.write_text(
                f"port {port}\nbind 127.0.0.1\ndir {self.directory}\n"
                f"sentinel monitor {MASTER} 127.0.0.1 {self.primary_port} 2\n"
                f"sentinel down-after-milliseconds {MASTER} 1000\n"
                f"sentinel failover-timeout {MASTER} 5000\n"
            )
            self.processes[f"sentinel-{index}"] = subprocess.Popen(
                ["redis-server", str(config), "--sentinel"],
                cwd=self.directory,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            wait_for_port(port)
        replica = redis.Redis(port=self.replica_port)
        wait_until(lambda: replica.info("replication").get("master_link_status") == "up", 30, "the replica to sync")

    def current_primary_port(self) -> int:
        answer = redis.Redis(port=self.sentinel_ports[0]).execute_command("SENTINEL", "GET-MASTER-ADDR-BY-NAME", MASTER)
        return int(answer[1])

    def kill_primary(self) -> None:
        self.processes["primary"].send_signal(signal.SIGKILL)
        self.processes["primary"].wait(10)

    def stop(self) -> None:
        for process in self.processes.values():
            if process.poll() is None:
                process.kill()
                process.wait(10)
        shutil.rmtree(self.directory, ignore_errors=True)


@pytest.fixture
def redis_set():
    servers = RedisSet()
    try:
        servers.start()
        yield servers
    finally:
        servers.stop()


@pytest.mark.django_db(transaction=True)
def test_primary_killed_under_bookings_sentinel_promotes_and_everything_resumes(redis_set, receiver):
    organizer = UserFactory()
    event_type = EventTypeFactory(owner=organizer, length=30)
    WebhookFactory(user=organizer, subscriber_url=receiver.url(), event_triggers=[WebhookTrigger.BOOKING_CREATED])
    booker_key, burst_key = ApiKeyFactory(user=organizer).raw_key, ApiKeyFactory().raw_key
    database = connection.settings_dict
    redis_url = f"redis://127.0.0.1:{redis_set.primary_port}/0"  # the host is not used: the Sentinels say
    env = {
        "DJANGO_SETTINGS_MODULE": "webhooks.tests.worker_settings",
        "WEBHOOKS_TEST_OVERRIDES": json.dumps(FAST_SWEEPS),
        "DATABASE_URL": f"postgres://{database['USER']}@{database['HOST']}:{database['PORT']}/{database['NAME']}",
        "REDIS_URL": redis_url,
        "REDIS_SENTINELS": ",".join(f"127.0.0.1:{port}" for port in redis_set.sentinel_ports),
        "REDIS_SENTINEL_MASTER": MASTER,
        "RATE_LIMIT_PER_MINUTE": str(LIMIT),
        "RATE_LIMIT_RETRY_SECONDS": "1",
    }
    server, worker = Gunicorn(env), CeleryWorker({**env, "CONN_MAX_AGE": "0"})
    bookings = None

    try:
        server.start()
        worker.start()
        bookings = SteadyBookings(server.url, booker_key, event_type.pk, pause=0.25, weeks_ahead=40).start()
        wait_until(lambda: len(receiver.requests) >= 5, 60, "5 webhooks through the first primary")
        old_primary = redis_set.primary_port
        killed_at = clock.monotonic()
        redis_set.kill_primary()
        wait_until(lambda: redis_set.current_primary_port() != old_primary, 30, "Sentinel to promote the replica")
        promoted_at = clock.monotonic()
        delivered_before = len(receiver.requests)
        try:
            wait_until(lambda: len(receiver.requests) >= delivered_before + 5, 60, "webhooks through the new primary")
        except AssertionError:
            raise AssertionError(worker.log()[-6000:] + "\n----\n" + server.log()[-3000:]) from None
        bookings.stop()

        statuses = Counter(status for _, status, _ in bookings.answers)
        assert set(statuses) == {200}, statuses  # bookings never waited for Redis
        booked = bookings.acknowledged()

        wait_until(lambda: set(one_delivery_per_booking(receiver)) >= booked, 60, "every booking's webhook")
        assert all(len(ids) == 1 for ids in one_delivery_per_booking(receiver).values())  # one delivery per booking

        # The rate limit counts on the new primary: a fresh key gets exactly its budget.
        limited = {"Authorization": f"Bearer {burst_key}"}
        wait_until(
            lambda: "RateLimit-Limit" in requests.get(f"{server.url}/v1/me", headers=limited, timeout=TIMEOUT).headers,
            30,
            "the limiter to count again",
        )
        session = requests.Session()
        burst = [session.get(f"{server.url}/v1/me", headers=limited, timeout=TIMEOUT) for _ in range(LIMIT - 1)]
        assert all(response.status_code == 200 for response in burst)  # one was spent above
        refused = requests.get(f"{server.url}/v1/me", headers=limited, timeout=TIMEOUT)
        assert refused.status_code == 429
        figures = {
            "bookings": len(booked),
            "seconds_kill_to_promotion": round(promoted_at - killed_at, 1),
            "webhook_requests": len(receiver.requests),
            "webhooks_repeated": len(receiver.requests) - len(one_delivery_per_booking(receiver)),
            "worker_restarts": worker.restarts,
        }
        print("REDIS_FAILOVER_FIGURES", json.dumps(figures))
    finally:
        if bookings is not None:
            bookings.stop()
        worker.stop()
        server.stop()


receiver = pytest.fixture(receiving)


def test_the_drills_servers_write_only_into_folders_of_their_own(redis_set):
    for name, port in (("primary", redis_set.primary_port), ("replica", redis_set.replica_port)):
        assert redis.Redis(port=port).config_get("dir")["dir"] == str(redis_set.directory / name)
    # The replica's full sync wrote the primary's copy there, not into the working directory.
    assert (redis_set.directory / "replica" / "dump.rdb").exists()
