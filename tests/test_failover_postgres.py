"""PostgreSQL failover by the engine's own means, no containers: a primary and a streaming standby
made with `pg_basebackup -R` (synchronous: a commit is acknowledged once the standby has it), the
service's DATABASE_URL naming both hosts with `target_session_attrs=read-write` (libpq then finds
whichever is the primary). Under a steady stream of bookings the primary is stopped and the
standby promoted: the API answers 503 (never 500) in between and then serves from the new primary
with no process restarted; no booking acknowledged with 200 is lost; each booking's webhook is
delivered (one delivery per booking; an attempt cut short by the failover may be sent again with
the same `webhook-id`, which receivers use to drop repeats). The figures go to docs/operations.md."""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time as clock
from collections import Counter
from pathlib import Path
from zoneinfo import ZoneInfo

import psycopg
import pytest

from tests.support.failover import SteadyBookings, one_delivery_per_booking, receiving
from tests.support.live_services import wait_until
from tests.support.outages import ROOT, CeleryWorker, Gunicorn, PrivateRedis, _postgres_bin, free_port, wait_for_port

BERLIN = ZoneInfo("Europe/Berlin")
TIMEOUT = 10.0
FAST_SWEEPS = {"LEASE_SECONDS": 3, "SWEEP_INTERVAL_SECONDS": 0.5, "TIMEOUT_SECONDS": 5.0}


class Cluster:
    """One PostgreSQL server of the pair, run as the `postgres` OS user when the tests run as root."""

    def __init__(self, directory: Path, name: str):
        self.port = free_port()
        self.directory = directory
        self.data = directory / name
        self.log = directory / f"{name}.log"

    def run(self, *command: str) -> None:
        if os.geteuid() == 0:
            command = ("runuser", "-u", "postgres", "--", *command)
        subprocess.run(command, check=True, capture_output=True, timeout=120)

    def start(self, *options: str) -> None:
        settings = " ".join([f"-p {self.port}", "-c listen_addresses=127.0.0.1", f"-k {self.directory}", *options])
        self.run(_postgres_bin("pg_ctl"), "-D", str(self.data), "-o", settings, "-w", "-l", str(self.log), "start")
        wait_for_port(self.port)

    def stop(self) -> None:
        self.run(_postgres_bin("pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop")

    def url(self, database: str = "postgres") -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/{database}"


@pytest.fixture
def pair():
    directory = Path(tempfile.mkdtemp(prefix="failover-pg-"))
    if os.geteuid() == 0:
        shutil.chown(directory, "postgres", "postgres")
    primary, standby = Cluster(directory, "primary"), Cluster(directory, "standby")
    primary.run(_postgres_bin("initdb"), "-D", str(primary.data), "-U", "postgres", "-A", "trust", "--no-sync")
    # Synchronous replication: a commit returns once the standby has flushed it, so what the API
    # acknowledged survives the primary's loss. Only the primary is started with it.
    primary.start("-c fsync=off", "-c synchronous_standby_names='*'", "-c wal_level=replica")
    primary.run(
        _postgres_bin("pg_basebackup"),
        *("-D", str(standby.data), "-R", "-X", "stream", "-h", "127.0.0.1", "-p", str(primary.port), "-U", "postgres"),
    )
    standby.start("-c fsync=off", "-c hot_standby=on")
    try:
        yield primary, standby
    finally:
        for cluster in (primary, standby):
            try:
                cluster.stop()
            except subprocess.CalledProcessError:
                pass
        shutil.rmtree(directory, ignore_errors=True)


def manage(env: dict, *arguments: str) -> str:
    run = subprocess.run(
        [sys.executable, *arguments], cwd=ROOT, env={**os.environ, **env}, capture_output=True, text=True, timeout=180
    )
    assert run.returncode == 0, run.stderr[-3000:]
    return run.stdout


SEED = """
import django, json
django.setup()
from accounts.services import api_key_create
from accounts.tests.factories import UserFactory
from scheduling.tests.factories import EventTypeFactory
from webhooks.models import WebhookTrigger
from webhooks.tests.factories import WebhookFactory
organizer = UserFactory()
event_type = EventTypeFactory(owner=organizer, length=30)
WebhookFactory(user=organizer, subscriber_url=URL, event_triggers=[WebhookTrigger.BOOKING_CREATED])
print(json.dumps({"key": api_key_create(user=organizer)[1], "eventType": event_type.pk}))
"""


def test_primary_lost_under_bookings_standby_promoted_no_acknowledged_booking_lost(pair, receiver):
    primary, standby = pair
    subprocess.run(["psql", primary.url(), "-qc", "CREATE DATABASE scheduling"], check=True, capture_output=True)
    hosts = f"127.0.0.1:{primary.port},127.0.0.1:{standby.port}"
    database_url = f"postgres://postgres@{hosts}/scheduling?target_session_attrs=read-write"
    base = {"DJANGO_SETTINGS_MODULE": "config.settings_test", "DATABASE_URL": database_url}
    manage(base, "manage.py", "migrate", "--noinput")
    seeded = json.loads(manage(base, "-c", SEED.replace("URL", repr(receiver.url()))).strip().splitlines()[-1])

    with PrivateRedis() as redis_server:
        env = {
            **base,
            "DJANGO_SETTINGS_MODULE": "webhooks.tests.worker_settings",
            "WEBHOOKS_TEST_OVERRIDES": json.dumps(FAST_SWEEPS),
            "REDIS_URL": redis_server.url,
            "CELERY_BROKER_URL": redis_server.url,
            "DB_CONNECT_TIMEOUT_SECONDS": "2",
        }
        server, worker = Gunicorn(env), CeleryWorker({**env, "CONN_MAX_AGE": "0"})
        bookings = None
        try:
            server.start()
            worker.start()
            bookings = SteadyBookings(server.url, seeded["key"], seeded["eventType"], pause=0.05).start()
            answers = bookings.answers
            wait_until(lambda: len(bookings.acknowledged()) >= 20, 60, "20 bookings")
            stopped_at = clock.monotonic()
            primary.stop()
            clock.sleep(1.0)  # the seconds an operator's (or a failover manager's) decision takes
            standby.run(_postgres_bin("pg_ctl"), "-D", str(standby.data), "-w", "promote")
            promoted_at = clock.monotonic()
            wait_until(lambda: len(bookings.acknowledged(promoted_at)) >= 20, 60, "20 bookings on the new primary")
            bookings.stop()

            statuses = Counter(status for _, status, _ in answers)
            assert set(statuses) <= {200, 503}, statuses  # never a 500, never a dropped connection
            acknowledged = bookings.acknowledged()
            with psycopg.connect(standby.url("scheduling")) as connection:
                stored = {row[0] for row in connection.execute("SELECT uid FROM scheduling_booking")}
            assert acknowledged <= stored  # nothing acknowledged was lost

            wait_until(lambda: set(one_delivery_per_booking(receiver)) >= acknowledged, 60, "each booking's webhook")
            by_message = one_delivery_per_booking(receiver)
            assert all(len(ids) == 1 for ids in by_message.values())  # one delivery per booking
            unavailable = [at for at, status, _ in answers if status == 503]
            figures = {
                "bookings_acknowledged": len(acknowledged),
                "answers_503": statuses[503],
                "seconds_of_503": round(max(unavailable) - min(unavailable), 1) if unavailable else 0.0,
                "seconds_primary_stop_to_first_200_after": round(
                    min(at for at, status, _ in answers if status == 200 and at > promoted_at) - stopped_at, 1
                ),
                "webhook_requests": len(receiver.requests),
                "webhooks_repeated": len(receiver.requests) - len(by_message),
            }
            figures["worker_restarts"] = worker.restarts
            print("FAILOVER_FIGURES", json.dumps(figures))
        finally:
            if bookings is not None:
                bookings.stop()
            worker.stop()
            server.stop()


receiver = pytest.fixture(receiving)
