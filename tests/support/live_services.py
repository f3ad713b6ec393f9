"""Fixtures of the webhook tests: a real HTTP receiver on 127.0.0.1 and a real Celery worker
(with its embedded beat running the sweeper) on the test database and this run's Redis."""

import json
import os
import queue
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@dataclass
class ReceivedRequest:
    method: str
    path: str
    headers: dict
    body: bytes
    received_at: float
    client_port: int = 0  # tells connections apart: one port per TCP connection

    def json(self):
        return json.loads(self.body)


@dataclass
class Reply:
    status: int = 200
    headers: dict | None = None
    body: bytes = b"ok"
    delay: float = 0.0


class Receiver:
    """Answers each POST with the next queued Reply (then `default`) and records every request.
    `keep_alive=True` speaks HTTP/1.1 and keeps connections open between requests."""

    def __init__(self, keep_alive: bool = False):
        self.requests: list[ReceivedRequest] = []
        self.replies: queue.Queue[Reply] = queue.Queue()
        self.default = Reply()
        self.lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1" if keep_alive else "HTTP/1.0"

            def log_message(self, *args):
                pass

            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length)
                with receiver.lock:
                    receiver.requests.append(
                        ReceivedRequest(
                            "POST",
                            self.path,
                            dict(self.headers.items()),
                            body,
                            time.monotonic(),
                            self.client_address[1],
                        )
                    )
                try:
                    reply = receiver.replies.get_nowait()
                except queue.Empty:
                    reply = receiver.default
                if reply.delay:
                    time.sleep(reply.delay)
                try:
                    self.send_response(reply.status)
                    for name, value in (reply.headers or {}).items():
                        self.send_header(name, value)
                    self.send_header("Content-Length", str(len(reply.body)))
                    self.end_headers()
                    self.wfile.write(reply.body)
                except OSError:
                    pass  # the sender gave up (timeout test)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def url(self, path: str = "/hook") -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def reply(self, *replies: Reply) -> None:
        for reply in replies:
            self.replies.put(reply)

    def wait_for(self, count: int, timeout: float = 20.0) -> list[ReceivedRequest]:
        wait_until(lambda: len(self.requests) >= count, timeout, f"{count} request(s) at the receiver")
        return list(self.requests)

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def wait_until(predicate, timeout: float = 20.0, what: str = "the condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"Gave up waiting for {what} after {timeout:.0f} s")


def wait_for_a_blocked_transaction(what: str) -> None:
    """Wait until some connection waits for a lock (a rival transaction holds what it needs)."""
    from django.db import connection

    with connection.cursor() as cursor:

        def someone_waits() -> bool:
            cursor.execute("SELECT count(*) FROM pg_locks WHERE NOT granted")
            return cursor.fetchone()[0] > 0

        wait_until(someone_waits, what=what)


@pytest.fixture
def receiver():
    server = Receiver()
    yield server
    server.close()


@pytest.fixture
def keep_alive_receiver():
    server = Receiver(keep_alive=True)
    yield server
    server.close()


@pytest.fixture(autouse=True)
def _fresh_kept_alive_connections():
    """No test reuses a connection that an earlier test (in this thread) kept alive."""
    from webhooks.sending import close_kept_alive_sessions

    close_kept_alive_sessions()
    yield
    close_kept_alive_sessions()


class Worker:
    """`.venv/bin/celery -A config worker -B` in its own process group, on the test database."""

    def __init__(self, database_url: str, overrides: dict, beat: bool = True):
        self.database_url = database_url
        self.overrides = overrides
        self.beat = beat
        self.process: subprocess.Popen | None = None
        self.directory = tempfile.mkdtemp(prefix="webhook-worker-")
        self.log_path = Path(self.directory) / "worker.log"

    def start(self) -> "Worker":
        from config.celery import app

        env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "webhooks.tests.worker_settings",
            "DATABASE_URL": self.database_url,
            "WEBHOOKS_TEST_OVERRIDES": json.dumps(self.overrides),
            "CONN_MAX_AGE": "0",
        }
        self.name = f"webhooks-test-{os.getpid()}-{time.monotonic_ns()}@127.0.0.1"
        command = [
            str(Path(sys.executable).parent / "celery"),
            "-A",
            "config",
            "worker",
            *(["-B", "-s", str(Path(self.directory) / "beat-schedule")] if self.beat else []),
            "--pool=threads",
            "--concurrency=4",
            "--without-gossip",
            "--without-mingle",
            "-n",
            self.name,
            "-l",
            "info",
        ]
        log = open(self.log_path, "ab")  # noqa: SIM115 - closed with the process
        self.process = subprocess.Popen(
            command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
        try:
            wait_until(
                lambda: self.process.poll() is not None or app.control.ping(destination=[self.name], timeout=1.0),
                90,  # generous: on a loaded machine a worker's start-up is slow
                "the Celery worker to start",
            )
        except AssertionError:
            # A worker left running would take the next tests' messages.
            self.kill()
            raise AssertionError("The Celery worker did not answer:\n" + self.log_path.read_text()[-3000:]) from None
        if self.process.poll() is not None:
            raise AssertionError("The Celery worker exited:\n" + self.log_path.read_text()[-3000:])
        return self

    def kill(self) -> None:
        """SIGKILL the whole process group: the worker, its pool and its beat, with no warning."""
        if self.process and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(10)

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.kill()

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")


@pytest.fixture
def start_worker(transactional_db, settings):
    """`start_worker()` runs a worker with this test's `settings.WEBHOOKS` (and its embedded beat,
    unless `beat=False`: the test then runs the sweeper itself); stopped at the end."""
    import redis
    from django.db import connection

    redis.Redis.from_url(settings.CELERY_BROKER_URL).flushdb()
    database = connection.settings_dict
    database_url = f"postgres://{database['USER']}@{database['HOST']}:{database['PORT']}/{database['NAME']}"
    workers: list[Worker] = []

    def start(beat: bool = True) -> Worker:
        worker = Worker(database_url, dict(settings.WEBHOOKS), beat=beat).start()
        workers.append(worker)
        return worker

    yield start
    for worker in workers:
        worker.stop()


@pytest.fixture
def fast_retries(settings):
    """A shrunken retry schedule for the tests that wait for retries."""
    settings.WEBHOOKS = {
        **settings.WEBHOOKS,
        "RETRY_SCHEDULE_SECONDS": [0.3, 0.3, 0.3],
        "RETRY_JITTER": 0.0,
        "LEASE_SECONDS": 3,
        "SWEEP_INTERVAL_SECONDS": 0.5,
        "TIMEOUT_SECONDS": 2.0,
        "CONNECT_TIMEOUT_SECONDS": 2.0,
    }
    return settings.WEBHOOKS


@pytest.fixture
def fake_dns(settings):
    """Route name resolution through `webhooks.tests.fake_dns.ADDRESSES` (in this process)."""
    from webhooks.tests import fake_dns as module

    settings.WEBHOOKS = {**settings.WEBHOOKS, "RESOLVER": "webhooks.tests.fake_dns.resolve"}
    module.ADDRESSES.clear()
    yield module.ADDRESSES
    module.ADDRESSES.clear()


@pytest.fixture
def no_allowed_cidrs(settings):
    """Production's rule: no range is allow-listed, so loopback is refused too."""
    settings.WEBHOOKS = {**settings.WEBHOOKS, "ALLOWED_CIDRS": []}
