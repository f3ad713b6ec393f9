"""`make run` as a person runs it: `rundev` with no DATABASE_URL / REDIS_URL starts its own
PostgreSQL (in a temporary var/ directory here), the filesystem broker, the web server, a Celery
worker and beat; webhooks then reach a receiver on this machine, and Ctrl-C leaves nothing behind.

These tests start real processes and talk to them over HTTP and the embedded server's socket only.
"""

import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from datetime import date, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import psutil
import psycopg
import pytest

from devserver import embedded_postgres, web
from scheduling.models import EventType
from webhooks.models import DeliveryAttempt, Webhook, WebhookDelivery

BASE_DIR = Path(__file__).resolve().parents[2]
API_KEY = "sk_live_demo_key_not_for_production"  # seed_demo's fixed, public demo key
START_SECONDS = 240  # the first start creates the cluster and runs every migration
BURST = 50


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def rundev_env(var_dir: Path) -> dict:
    env = {
        name: value
        for name, value in os.environ.items()
        if name not in ("DATABASE_URL", "REDIS_URL", "CELERY_BROKER_URL", "DJANGO_SETTINGS_MODULE")
    }
    return env | {
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DEBUG": "1",
        "VAR_DIR": str(var_dir),
        "WEBHOOK_ALLOWED_CIDRS": "127.0.0.0/8,::1/128",
    }


def _as_from_a_terminal() -> None:
    """Ctrl-C and Ctrl-\\ as a terminal's shell leaves them to a command it starts: handled by default.
    A suite started in the background by a shell (as `make test` runs one of its two processes)
    inherits both ignored, and so would `make run`: make would then wait out Ctrl-C and exit 0."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGQUIT, signal.SIG_DFL)


class Service:
    """One `rundev` (what `make run` execs), its output in a file, the pids it reported. With
    `through_make`, `make run` itself, as a person types it (the autoreloader included)."""

    def __init__(self, var_dir: Path, port: int, through_make: bool = False):
        self.var_dir, self.address = var_dir, f"127.0.0.1:{port}"
        self.base = f"http://{self.address}"
        self.log_path = var_dir.parent / f"rundev-{port}-{time.monotonic_ns()}.log"
        self.log = open(self.log_path, "wb")  # noqa: SIM115 - closed in stop()
        command = (
            ["make", "--no-print-directory", "run", f"RUN_ADDRESS={self.address}"]
            if through_make
            else [sys.executable, str(BASE_DIR / "manage.py"), "rundev", self.address, "--noreload"]
        )
        self.process = subprocess.Popen(
            command,
            cwd=BASE_DIR,
            env=rundev_env(var_dir),
            stdin=subprocess.DEVNULL,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=_as_from_a_terminal,
        )
        self.pids = self._wait_for_banner()

    def output(self) -> str:
        return self.log_path.read_text(errors="replace")

    def _wait_for_banner(self) -> dict[str, int]:
        deadline = time.monotonic() + START_SECONDS
        while "Ctrl-C stops all of them." not in self.output():
            assert self.process.poll() is None, f"rundev exited early:\n{self.output()}"
            assert time.monotonic() < deadline, f"rundev did not start:\n{self.output()}"
            time.sleep(0.2)
        line = next(line for line in self.output().splitlines() if "(pids: " in line)
        pairs = line.split("(pids: ", 1)[1].split(")", 1)[0].split(", ")
        return {name: int(pid) for name, pid in (pair.split() for pair in pairs)}

    def processes(self) -> set[int]:
        """Every process this service started and whatever those forked: the worker's pool and
        runserver's child stay in their leader's session; PostgreSQL's own processes start sessions
        of their own, so they are found as the server's descendants."""
        found = set()
        for process in psutil.process_iter():
            try:
                if os.getsid(process.pid) in self.pids.values():
                    found.add(process.pid)
            except (ProcessLookupError, PermissionError):
                pass
        for pid in self.pids.values():
            try:
                found |= {child.pid for child in psutil.Process(pid).children(recursive=True)}
            except psutil.NoSuchProcess:
                pass
        return found

    def interrupt(self) -> int:
        """Ctrl-C, as the terminal sends it to `make run` (its whole process group); returns the
        exit code of what was started."""
        os.killpg(self.process.pid, signal.SIGINT)
        try:
            return self.process.wait(timeout=60)
        finally:
            self.log.close()

    def request(self, method: str, path: str, body: dict | None = None) -> tuple[int, dict]:
        request = urllib.request.Request(
            self.base + path,
            data=None if body is None else json.dumps(body).encode(),
            method=method,
            headers={"Authorization": f"Bearer {API_KEY}", "Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return response.status, json.loads(response.read() or b"{}")
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read() or b"{}")

    def database(self) -> psycopg.Connection:
        return psycopg.connect(
            host=str(embedded_postgres.socket_dir(self.var_dir)),
            user=embedded_postgres.SUPERUSER,
            dbname=embedded_postgres.DATABASE_NAME,
            autocommit=True,
        )


def alive(pids) -> list[int]:
    left = []
    for pid in pids:
        try:
            if psutil.Process(pid).status() != psutil.STATUS_ZOMBIE:
                left.append(pid)
        except psutil.NoSuchProcess:
            pass
    return left


@pytest.fixture(scope="module")
def var_dir(tmp_path_factory):
    """One var/ for the module, as on a developer's machine: the first start creates it."""
    return tmp_path_factory.mktemp("make-run") / "var"


@pytest.fixture
def start(var_dir):
    started: list[Service] = []

    def start_service(through_make: bool = False) -> Service:
        started.append(Service(var_dir, free_port(), through_make=through_make))
        return started[-1]

    yield start_service
    for service in started:
        if service.process.poll() is None:
            os.killpg(service.process.pid, signal.SIGINT)
            service.process.wait(timeout=60)


def stop_and_check_nothing_is_left(service: Service, through_make: bool = False) -> None:
    started = service.processes()
    postmaster = int((embedded_postgres.data_dir(service.var_dir) / "postmaster.pid").read_text().split()[0])
    assert postmaster == service.pids["postgres"]
    assert {"postgres", "web", "worker", "beat"} <= set(service.pids)
    assert started > set(service.pids.values())  # PostgreSQL's checkpointer, writers, ...: forked ones too

    # make reports the interrupt as it always does (exit 2, or killed by SIGINT); rundev exits 0.
    assert service.interrupt() in ((2, -signal.SIGINT) if through_make else (0,))

    assert alive(started | {service.process.pid}) == []
    assert service.processes() == set()
    assert not (embedded_postgres.data_dir(service.var_dir) / "postmaster.pid").exists()  # a clean shutdown
    assert "Stopped the web server, the worker, beat and PostgreSQL." in service.output()


class Receiver(BaseHTTPRequestHandler):
    received: list[tuple[str, str]] = []  # (webhook-id, triggerEvent) per request
    lock = threading.Lock()

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        with self.lock:
            self.received.append((self.headers["webhook-id"], body["triggerEvent"]))
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


@pytest.fixture
def receiver():
    server = ThreadingHTTPServer(("127.0.0.1", 0), type("BurstReceiver", (Receiver,), {"received": []}))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def free_slots(service: Service, event_type_id: int, count: int) -> list[str]:
    """`count` offered start times, from the API, well after the demo's own bookings."""
    first = date.today() + timedelta(days=60)
    status, body = service.request(
        "GET",
        f"/v1/slots?eventTypeId={event_type_id}&startTime={first}&endTime={first + timedelta(days=20)}"
        "&timeZone=Europe/Berlin",
    )
    assert status == 200, body
    slots = [slot["time"] for day in sorted(body["slots"]) for slot in body["slots"][day]]
    assert len(slots) >= count
    return slots[:count]


def test_make_run_delivers_a_burst_of_bookings_webhooks_once_each(start, receiver):
    service = start()
    with service.database() as db:
        event_type_id = db.execute(
            f"SELECT id FROM {EventType._meta.db_table} WHERE slug = '30min' ORDER BY id LIMIT 1"
        ).fetchone()[0]
    status, body = service.request(
        "POST",
        "/v1/webhooks",
        {"subscriberUrl": f"http://127.0.0.1:{receiver.server_port}/hook", "eventTriggers": ["BOOKING_CREATED"]},
    )
    assert status == 200, body
    webhook_id = body["webhook"]["id"]
    slots = free_slots(service, event_type_id, BURST)

    def book(start_time: str) -> int:
        status, body = service.request(
            "POST",
            "/v1/bookings",
            {
                "eventTypeId": event_type_id,
                "start": start_time,
                "name": "Burst Guest",
                "email": "burst@example.org",
                "timeZone": "Europe/Berlin",
            },
        )
        assert status == 200, body
        return body["id"]  # v1 answers the booking itself

    with ThreadPoolExecutor(max_workers=8) as pool:
        booked = list(pool.map(book, slots))
    assert len(set(booked)) == BURST

    # Every delivery of the webhook reaches a final state, without a lease having to expire.
    deadline = time.monotonic() + 50  # one lease is 60 s: a stuck delivery fails this
    with service.database() as db:
        while True:
            states = db.execute(
                f"SELECT status, count(*) FROM {WebhookDelivery._meta.db_table} WHERE webhook_id = %s GROUP BY status",
                [webhook_id],
            ).fetchall()
            if dict(states) == {"succeeded": BURST}:
                break
            assert time.monotonic() < deadline, f"deliveries not done: {states}"
            time.sleep(0.2)
        attempts = db.execute(
            f"SELECT count(*) FROM {DeliveryAttempt._meta.db_table} AS attempt "
            f"JOIN {WebhookDelivery._meta.db_table} AS delivery ON delivery.id = attempt.delivery_id "
            "WHERE delivery.webhook_id = %s",
            [webhook_id],
        ).fetchone()[0]
        message_ids = {
            row[0]
            for row in db.execute(
                f"SELECT message_id FROM {WebhookDelivery._meta.db_table} WHERE webhook_id = %s", [webhook_id]
            )
        }

    received = list(receiver.RequestHandlerClass.received)
    assert [event for _, event in received] == ["BOOKING_CREATED"] * BURST
    assert {message_id for message_id, _ in received} == message_ids  # each webhook-id exactly once
    assert len(message_ids) == BURST
    assert attempts == len(received)
    # The credentials stay on screen: the banner comes after every process's start-up output, and the
    # periodic sweep (every few seconds, so several ran meanwhile) adds no line of its own.
    before, after = service.output().split("Ctrl-C stops all of them.", 1)
    assert "Demo API key:" in before and "celery@" in before and "celery beat" in before
    assert "celery@" not in after and "celery beat" not in after
    assert "webhooks.sweep" not in after and "Sending due task" not in after
    assert "No hostname was supplied" not in after
    stop_and_check_nothing_is_left(service)


def test_a_second_start_keeps_the_data_and_ctrl_c_stops_every_process(start):
    first = start()
    marker = {"subscriberUrl": f"http://127.0.0.1:9/kept-{time.monotonic_ns()}", "eventTriggers": ["BOOKING_PAID"]}
    status, body = first.request("POST", "/v1/webhooks", marker | {"active": False})
    assert status == 200, body
    kept_id = body["webhook"]["id"]
    stop_and_check_nothing_is_left(first)

    second = start()

    with second.database() as db:
        url = db.execute(f"SELECT subscriber_url FROM {Webhook._meta.db_table} WHERE id = %s", [kept_id]).fetchone()
    assert url == (marker["subscriberUrl"],)
    status, body = second.request("GET", f"/v1/webhooks/{kept_id}")
    assert (status, body["webhook"]["subscriberUrl"]) == (200, marker["subscriberUrl"])
    stop_and_check_nothing_is_left(second)


def test_a_taken_address_fails_at_once_and_starts_nothing(tmp_path):
    var_dir = tmp_path / "var"
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        address = f"127.0.0.1:{taken.getsockname()[1]}"

        result = subprocess.run(
            [sys.executable, str(BASE_DIR / "manage.py"), "rundev", address, "--noreload"],
            cwd=BASE_DIR,
            env=rundev_env(var_dir),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=60,
        )

    assert result.returncode != 0
    assert f"{address} is already in use" in result.stderr
    assert "RUN_ADDRESS=" in result.stderr
    # Nothing was started or migrated: no database cluster, no broker folders.
    assert not embedded_postgres.data_dir(var_dir).exists()
    assert not (var_dir / "broker").exists()


LOOP = 1000  # sequential requests: the thread-per-request server ran out of connections at about 90
BURST_CONNECTIONS = 200  # concurrent ones
# What may hold a connection to the demo database: the web server's request threads, the worker's
# (4 pool threads and 4 recorders, README "Running in production"), beat, this test.
CONNECTIONS_BOUND = web.THREADS + 8 + 2 + 1


def get_status(url: str, headers: dict | None = None) -> int:
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers or {}), timeout=60) as response:
            response.read()
            return response.status
    except urllib.error.HTTPError as error:
        return error.code


def test_make_run_holds_a_loop_and_a_burst_on_a_bounded_number_of_connections(start):
    service = start(through_make=True)
    with service.database() as db:
        connections: list[int] = []
        sampling = threading.Event()

        def sample() -> None:
            while not sampling.is_set():
                connections.append(
                    db.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()").fetchone()[0]
                )
                time.sleep(0.05)

        sampler = threading.Thread(target=sample)
        sampler.start()
        try:
            # /readyz queries the database on every request; /v1/me authenticates the key there.
            loop = [get_status(f"{service.base}/readyz") for _ in range(LOOP)]
            me = [f"{service.base}/v1/me", {"Authorization": f"Bearer {API_KEY}"}]
            with ThreadPoolExecutor(max_workers=BURST_CONNECTIONS) as pool:
                burst = list(pool.map(lambda _: get_status(*me), range(BURST_CONNECTIONS)))
        finally:
            sampling.set()
            sampler.join()

    assert (loop.count(200), burst.count(200)) == (LOOP, BURST_CONNECTIONS)
    assert 0 < max(connections) <= CONNECTIONS_BOUND
    output = service.output()
    assert " 503 " not in output and "too many clients" not in output
    # What make run prints once, and nothing it should not.
    assert output.count("Watching for file changes") == 1
    assert "superuser privileges" not in output
    # Every address it prints opens (the token endpoint and the API answer a bare GET with 405 and 401).
    printed = set(re.findall(rf"{re.escape(service.base)}[^\s'\",)]*", output.split("Demo data is ready", 1)[1]))
    assert {f"{service.base}/v1/docs", f"{service.base}/v2/docs", f"{service.base}/docs/"} <= printed
    statuses = {url: get_status(url) for url in sorted(printed)}
    assert [url for url, status in statuses.items() if status == 404 or status >= 500] == [], statuses
    check_the_readme_walk_through(service)
    stop_and_check_nothing_is_left(service, through_make=True)


def check_the_readme_walk_through(service: Service) -> None:
    """README's walk-through, as written but for its two ports: it prints what README says it
    prints, the moved booking keeps its location, and its webhook receiver is gone at the end."""
    readme = (BASE_DIR / "README.md").read_text(encoding="utf-8")
    script = readme.split("### A walk-through with the demo data", 1)[1].split("```sh\n", 1)[1].split("```", 1)[0]
    receiver_port = free_port()
    script = script.replace("127.0.0.1:8000", service.address).replace("9000", str(receiver_port))

    result = subprocess.run(["bash", "-e", "-c", script], capture_output=True, text=True, timeout=120)

    assert result.returncode == 0, result.stderr
    booked, moved = [json.loads(line) for line in result.stdout.splitlines() if line.startswith('{"id":')]
    assert (booked["location"], moved["location"]) == ("Video call", "Video call")
    deliveries = [line.split()[:3] for line in result.stdout.splitlines()[-3:]]
    assert deliveries == [  # "newest first: BOOKING_CANCELLED, BOOKING_RESCHEDULED, then BOOKING_CREATED"
        ["BOOKING_CANCELLED", "succeeded", "1"],
        ["BOOKING_RESCHEDULED", "succeeded", "1"],
        ["BOOKING_CREATED", "succeeded", "1"],
    ]
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # past its closed connections' TIME_WAIT
        probe.bind(("127.0.0.1", receiver_port))  # nothing listens any more: the receiver was stopped
