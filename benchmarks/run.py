"""`make bench`: seed, serve with gunicorn, load with wrk, write docs/benchmarks.md and its chart.

    python -m benchmarks.run [--duration 5] [--runs 3] [--workers 2] [--only me,schedules]

Needs PostgreSQL (DATABASE_URL, default .../sched_bench) and Redis (REDIS_URL, default db 7). The
database is wiped and re-seeded: its name must contain "bench" (or set BENCH_FORCE=1).
"""

import argparse
import json
import math
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import asdict, dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

BASE_DIR = Path(__file__).resolve().parent.parent
WORK_DIR = BASE_DIR / "var" / "bench"
VENV_BIN = Path(sys.executable).parent
WRK_SCRIPT = Path(__file__).resolve().parent / "wrk.lua"
CONNECTIONS = 16
PACED_SHARE = 0.8
PAIR_RUNS = 7
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


@dataclass
class Target:
    key: str
    label: str
    path: str
    floor: str | None  # the F_db path, None for the floors themselves
    method: str = "GET"
    bodies: str = "-"  # a file with one body per line (POST)
    creates: bool = False  # rows to remove after each run
    pair: str | None = None  # an endpoint key whose closed-loop runs alternate with this one's
    keyed: bool = False  # every request carries a new Idempotency-Key


@dataclass
class Run:
    requests: int
    seconds: float
    rate: float
    errors: int
    p50_ms: float
    p99_ms: float
    app_cpu: float  # % of one core, gunicorn master + workers
    db_cpu: float  # % of one core, the workers' PostgreSQL backends
    # Time inside a worker (gunicorn's access log, %(D)s: request parsed to response written), so
    # without the wait in the listen queue that wrk's latency includes. Recorded for paced runs.
    server_p50_ms: float = float("nan")
    server_p99_ms: float = float("nan")


@dataclass
class Result:
    target: Target
    closed: list[Run] = field(default_factory=list)
    paced: list[Run] = field(default_factory=list)
    queries: int | None = None

    @property
    def max_rate(self) -> float:
        return statistics.median(run.rate for run in self.closed)

    def paced_median(self, name: str) -> float:
        return statistics.median(getattr(run, name) for run in self.paced) if self.paced else float("nan")

    def closed_median(self, name: str) -> float:
        return statistics.median(getattr(run, name) for run in self.closed)

    @property
    def errors(self) -> int:
        return sum(run.errors for run in self.closed + self.paced)


# --- environment --------------------------------------------------------------------------------


def prepare_environment() -> None:
    os.environ["DJANGO_SETTINGS_MODULE"] = "config.settings_bench"
    os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/sched_bench")
    os.environ.setdefault("REDIS_URL", "redis://127.0.0.1:6379/7")
    database = urlsplit(os.environ["DATABASE_URL"]).path.lstrip("/")
    if "bench" not in database and os.environ.get("BENCH_FORCE") != "1":
        sys.exit(f"Refusing to wipe database {database!r}: its name must contain 'bench' (or set BENCH_FORCE=1).")
    create_database_if_missing(os.environ["DATABASE_URL"], database)
    sys.path.insert(0, str(BASE_DIR))
    import django

    django.setup()


def create_database_if_missing(url: str, database: str) -> None:
    import psycopg

    parts = urlsplit(url)
    admin_url = parts._replace(path="/postgres").geturl()
    with psycopg.connect(admin_url, autocommit=True) as connection:
        exists = connection.execute("SELECT 1 FROM pg_database WHERE datname = %s", (database,)).fetchone()
        if not exists:
            connection.execute(f'CREATE DATABASE "{database}"')


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


# --- the server -----------------------------------------------------------------------------------


class Server:
    """gunicorn as production runs it: sync workers, DEBUG off, persistent DB connections."""

    def __init__(
        self, workers: int, worker_class: str, threads: int, log_name: str = "gunicorn", ready_seconds: float = 30
    ):
        self.port = free_port()
        self.base_url = f"http://127.0.0.1:{self.port}"
        # In memory where there is /dev/shm, so that logging each request never waits for a disk.
        log_dir = Path("/dev/shm") if Path("/dev/shm").is_dir() else WORK_DIR
        self.access_log = log_dir / f"sched-bench-access-{self.port}.log"
        self.access_log.write_text("")
        command = [
            str(VENV_BIN / "gunicorn"),
            "--config",
            str(BASE_DIR / "config" / "gunicorn.conf.py"),
            "config.wsgi",
            "--bind",
            f"127.0.0.1:{self.port}",
            "--workers",
            str(workers),
            "--worker-class",
            worker_class,
            "--threads",
            str(threads),
            "--backlog",
            "2048",
            "--log-level",
            "warning",
            "--access-logfile",
            str(self.access_log),
            "--access-logformat",
            "%(D)s",
        ]
        self.log_path = WORK_DIR / f"{log_name}.log"
        self.log = open(self.log_path, "w")  # noqa: SIM115 - closed in stop()
        self.process = subprocess.Popen(command, cwd=BASE_DIR, stdout=self.log, stderr=subprocess.STDOUT)
        try:
            self.wait_ready(ready_seconds)
        except RuntimeError:
            self.stop()  # not left serving after the benchmark gave up on it
            raise

    def wait_ready(self, seconds: float = 30) -> None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(f"{self.base_url}/healthz", timeout=2) as response:
                    if response.status == 200:
                        return
            except OSError:
                time.sleep(0.2)
        raise RuntimeError(f"gunicorn did not answer on {self.base_url}; see {self.log_path}")

    def pids(self) -> list[int]:
        children = Path(f"/proc/{self.process.pid}/task/{self.process.pid}/children").read_text().split()
        return [self.process.pid, *map(int, children)]

    def wait_idle(self, *, quiet_seconds: float = 0.3, timeout: float = 120) -> None:
        """Requests still queued when wrk stops are served afterwards; wait until the workers are
        idle so that they neither write rows after the clean-up nor slow down the next run."""
        deadline = time.monotonic() + timeout
        previous = cpu_seconds(self.pids())
        while time.monotonic() < deadline:
            time.sleep(quiet_seconds)
            current = cpu_seconds(self.pids())
            if current - previous < 0.02:
                return
            previous = current

    def access_log_offset(self) -> int:
        return self.access_log.stat().st_size

    def service_times_ms(self, offset: int) -> list[float]:
        """Each request's time inside a worker, in ms, logged since `offset`."""
        with self.access_log.open("rb") as log:
            log.seek(offset)
            return [int(line) / 1000 for line in log.read().split() if line.isdigit()]

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
        self.log.close()
        self.access_log.unlink(missing_ok=True)


def cpu_seconds(pids: list[int]) -> float:
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])  # utime + stime
    return total / CLOCK_TICKS


def database_backend_pids() -> list[int]:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
        return [row[0] for row in cursor.fetchall()]


# --- load -----------------------------------------------------------------------------------------


def run_wrk(server: Server, target: Target, api_key: str, *, seconds: float, rate: float = 0) -> Run:
    app_pids, db_pids = server.pids(), database_backend_pids()
    app_before, db_before = cpu_seconds(app_pids), cpu_seconds(db_pids)
    command = [
        "wrk",
        "-t1",
        f"-c{CONNECTIONS}",
        f"-d{max(1, round(seconds))}s",
        "--timeout",
        "10s",
        "-H",
        f"Authorization: Bearer {api_key}",
        "-H",
        "Content-Type: application/json",
        "-s",
        str(WRK_SCRIPT),
        f"{server.base_url}{target.path}",
        "--",
        str(int(rate)),
        target.bodies,
        target.method,
        "keyed" if target.keyed else "-",
    ]
    output = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    # Backends that connected during the run started at zero CPU, so their whole use counts.
    app_after = cpu_seconds(server.pids())
    db_after = cpu_seconds(sorted(set(db_pids) | set(database_backend_pids())))
    match = re.search(r"^BENCHJSON (.*)$", output, re.MULTILINE)
    if match is None:
        raise RuntimeError(f"wrk printed no result for {target.path}:\n{output}")
    stats = json.loads(match.group(1))
    elapsed = stats["duration_us"] / 1e6
    errors = sum(stats[name] for name in ("connect_errors", "read_errors", "write_errors", "status_errors", "timeouts"))
    return Run(
        requests=stats["requests"],
        seconds=elapsed,
        rate=stats["requests"] / elapsed,
        errors=errors,
        p50_ms=stats["p50_us"] / 1000,
        p99_ms=stats["p99_us"] / 1000,
        app_cpu=100 * (app_after - app_before) / elapsed,
        db_cpu=100 * max(0.0, db_after - db_before) / elapsed,
    )


def smoke_check(server: Server, target: Target, api_key: str) -> None:
    """One request first: a floor or endpoint that does not answer 2xx stops the benchmark."""
    body = None
    if target.bodies != "-":
        body = Path(target.bodies).read_text().splitlines()[0].encode()
    request = urllib.request.Request(
        f"{server.base_url}{target.path}",
        data=body,
        method=target.method,
        headers={"Authorization": f"Bearer {api_key}", "Content-Type": "application/json", **key_header(target)},
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            status = response.status
    except urllib.error.HTTPError as error:
        raise RuntimeError(f"{target.method} {target.path} answered {error.code}: {error.read()[:500]!r}") from None
    if not 200 <= status < 300:
        raise RuntimeError(f"{target.method} {target.path} answered {status}")


def key_header(target: Target) -> dict:
    """A new Idempotency-Key for a keyed target's one-off request (smoke check, query count)."""
    return {"Idempotency-Key": f"bench-check-{time.time_ns()}"} if target.keyed else {}


def count_queries(target: Target, api_key: str) -> int:
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    client = Client(HTTP_HOST="127.0.0.1", HTTP_AUTHORIZATION=f"Bearer {api_key}")
    # The key's once-a-minute `lastUsedAt` write happens here if it is due, not in the request counted.
    client.get("/v1/me")
    if target.method == "GET":
        client.get(target.path)  # per-process caches filled, as in a warm worker
    with CaptureQueriesContext(connection) as captured:
        if target.method == "GET":
            client.get(target.path)
        else:
            body = Path(target.bodies).read_text().splitlines()[0]
            client.post(target.path, data=body, content_type="application/json", headers=key_header(target))
    return sum(1 for query in captured.captured_queries if not query["sql"].startswith(("SAVEPOINT", "RELEASE")))


# --- the plan -------------------------------------------------------------------------------------


def targets(seeded: dict) -> tuple[Target, list[Target], list[Target]]:
    """F_static, the endpoints (each with its F_db), and the extra lines (busy slots, auth cost)."""
    WORK_DIR.mkdir(parents=True, exist_ok=True)
    schedule_bodies = WORK_DIR / "schedule_bodies.jsonl"
    schedule_bodies.write_text(json.dumps({"name": "Bench schedule", "timeZone": "Europe/Berlin"}) + "\n")
    booking_bodies = WORK_DIR / "booking_bodies.jsonl"
    booking_bodies.write_text(
        "".join(
            json.dumps(
                {
                    "eventTypeId": seeded["post_event_type_id"],
                    "start": slot,
                    "name": f"Guest {index}",
                    "email": f"guest{index}@example.com",
                    "timeZone": "Europe/Berlin",
                }
            )
            + "\n"
            for index, slot in enumerate(seeded["post_slots"])
        )
    )
    schedule_id, team_id = seeded["schedule_id"], seeded["team_id"]
    free, busy = seeded["free_window"], seeded["busy_window"]
    slots_query = f"eventTypeId={seeded['slots_event_type_id']}&startTime={free[0]}&endTime={free[1]}"
    busy_query = f"eventTypeId={seeded['slots_event_type_id']}&startTime={busy[0]}&endTime={busy[1]}"
    calendars = seeded["calendars_window"]
    calendars_query = f"eventTypeId={seeded['slots_event_type_id']}&startTime={calendars[0]}&endTime={calendars[1]}"
    static = Target("static", "F_static (constant JSON)", "/bench/static", None)
    endpoints = [
        Target("me", "GET /v1/me", "/v1/me", "/bench/db/me"),
        Target("schedules", "GET /v1/schedules?take=50", "/v1/schedules?take=50", "/bench/db/schedules?take=50"),
        Target(
            "schedule", "GET /v1/schedules/{id}", f"/v1/schedules/{schedule_id}", f"/bench/db/schedules/{schedule_id}"
        ),
        Target("bookings", "GET /v1/bookings?take=100", "/v1/bookings?take=100", "/bench/db/bookings?take=100"),
        Target(
            "memberships",
            "GET /v1/memberships?teamId=…",
            f"/v1/memberships?teamId={team_id}",
            f"/bench/db/memberships?teamId={team_id}",
        ),
        Target("payments", "GET /v1/payments?take=100", "/v1/payments?take=100", "/bench/db/payments?take=100"),
        Target("slots", "GET /v1/slots (31 days)", f"/v1/slots?{slots_query}", f"/bench/db/slots?{slots_query}"),
        Target(
            "schedule_create",
            "POST /v1/schedules",
            "/v1/schedules",
            "/bench/db/schedules-create",
            method="POST",
            bodies=str(schedule_bodies),
            creates=True,
        ),
        Target(
            "booking_create",
            "POST /v1/bookings",
            "/v1/bookings",
            "/bench/db/bookings-create",
            method="POST",
            bodies=str(booking_bodies),
            creates=True,
        ),
    ]
    extras = [
        Target("slots_busy", "GET /v1/slots (31 days, 500 bookings)", f"/v1/slots?{busy_query}", None),
        Target(
            "slots_calendars",
            "GET /v1/slots (31 days, CalDAV + ICS feed connected: 400 cached busy periods)",
            f"/v1/slots?{calendars_query}",
            None,
            pair="slots",
        ),
        Target(
            "booking_create_keyed",
            "POST /v1/bookings with an Idempotency-Key",
            "/v1/bookings",
            None,
            method="POST",
            bodies=str(booking_bodies),
            creates=True,
            pair="booking_create",
            keyed=True,
        ),
        Target(
            "booking_create_nomail",
            "POST /v1/bookings with mail off",
            "/bench/nomail/bookings",
            None,
            method="POST",
            bodies=str(booking_bodies),
            creates=True,
            pair="booking_create",
        ),
        Target(
            "schedule_noauth",
            "GET /v1/schedules/{id} without authentication",
            f"/bench/noauth/schedules/{schedule_id}",
            None,
            pair="schedule",
        ),
    ]
    return static, endpoints, extras


def floor_target(endpoint: Target) -> Target:
    return Target(
        f"{endpoint.key}_floor",
        f"F_db of {endpoint.label}",
        endpoint.floor,
        None,
        method=endpoint.method,
        bodies=endpoint.bodies,
        creates=endpoint.creates,
    )


class Bench:
    def __init__(self, server: Server, seeded: dict, *, seconds: float, runs: int):
        self.server, self.seeded, self.seconds, self.runs = server, seeded, seconds, runs
        self.api_key = seeded["api_key"]

    def after(self, target: Target) -> None:
        if target.creates:
            from benchmarks.seed import reset_created_rows

            reset_created_rows(self.seeded)

    def once(self, target: Target, *, rate: float = 0, seconds: float | None = None) -> Run:
        offset = self.server.access_log_offset()
        run = run_wrk(self.server, target, self.api_key, seconds=seconds or self.seconds, rate=rate)
        self.server.wait_idle()
        if rate:
            times = sorted(self.server.service_times_ms(offset))
            if times:
                run.server_p50_ms, run.server_p99_ms = percentile(times, 50), percentile(times, 99)
        self.after(target)
        return run

    def warm(self, *targets_to_warm: Target) -> None:
        for target in targets_to_warm:
            smoke_check(self.server, target, self.api_key)
            self.after(target)
            self.once(target, seconds=1)

    def measure(self, target: Target, floor: Target | None = None) -> tuple[Result, Result | None]:
        """Closed-loop runs (interleaved with the floor's, so both see the same machine), then
        paced runs at 80 % of the median maximum. A floor (`F_db`) is paced too, at 80 % of its own
        maximum and interleaved in the same way: its tail inside the workers is what the machine
        gives a bare view with the same queries, the reference for the endpoint's."""
        self.warm(*(item for item in (target, floor) if item is not None))
        result, floor_result = Result(target), Result(floor) if floor is not None else None
        # A pair compares two variants of one endpoint (the price of authentication): small
        # differences need more alternating runs than a ratio to a floor does.
        runs = max(self.runs, PAIR_RUNS) if target.pair else self.runs
        for _ in range(runs):
            if floor_result is not None:
                floor_result.closed.append(self.once(floor))
            result.closed.append(self.once(target))
        paced_rate = PACED_SHARE * result.max_rate
        for _ in range(self.runs):
            result.paced.append(self.once(target, rate=paced_rate))
            if floor_result is not None and target.floor is not None:
                floor_result.paced.append(self.once(floor, rate=PACED_SHARE * floor_result.max_rate))
        if target.floor is not None or target.pair or target.key == "slots_busy":
            result.queries = count_queries(target, self.api_key)
            self.after(target)
        if floor_result is not None:
            floor_result.queries = count_queries(floor, self.api_key)
            self.after(floor)
        log_result(result)
        if floor_result is not None:
            log_result(floor_result)
        return result, floor_result


def percentile(ordered: list[float], share: float) -> float:
    """Nearest-rank percentile of an ascending list, as wrk reports its own."""
    return ordered[min(len(ordered) - 1, max(0, math.ceil(share / 100 * len(ordered)) - 1))]


def log_result(result: Result) -> None:
    rates = ", ".join(f"{run.rate:.0f}" for run in result.closed)
    paced = (
        f" | p50 {result.paced_median('p50_ms'):.1f} ms p99 {result.paced_median('p99_ms'):.1f} ms"
        f" (in a worker: {result.paced_median('server_p50_ms'):.1f} / {result.paced_median('server_p99_ms'):.1f})"
    )
    print(
        f"  {result.target.label:<48} {result.max_rate:7.0f} req/s ({rates})"
        f"{paced if result.paced else ''} | errors {result.errors}",
        flush=True,
    )


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--duration", type=float, default=5, help="seconds per run (default 5)")
    parser.add_argument("--runs", type=int, default=3, help="runs per figure; the median is reported")
    parser.add_argument("--workers", type=int, default=int(os.environ.get("BENCH_WORKERS", "2")))
    parser.add_argument("--worker-class", default=os.environ.get("BENCH_WORKER_CLASS", "sync"))
    parser.add_argument("--threads", type=int, default=int(os.environ.get("BENCH_THREADS", "1")))
    parser.add_argument("--only", default="", help="comma-separated endpoint keys (me, schedules, …)")
    parser.add_argument("--no-docs", action="store_true", help="print only; do not rewrite docs/benchmarks.md")
    args = parser.parse_args(argv)
    if shutil.which("wrk") is None:
        sys.exit("wrk is not installed (Debian: apt-get install wrk); `make bench` installs it.")

    # `kill <pid>` stops the run cleanly: gunicorn is stopped and the broker purged in `finally`.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    started = time.monotonic()
    prepare_environment()
    from django.core.management import call_command

    from benchmarks.seed import purge_broker, seed

    print("Migrating and seeding the benchmark database…", flush=True)
    call_command("migrate", interactive=False, verbosity=0)
    seeded = seed()
    purge_broker()
    static, endpoints, extras = targets(seeded)
    by_key = {endpoint.key: endpoint for endpoint in endpoints}
    only = {key for key in args.only.split(",") if key}
    if only:
        endpoints = [endpoint for endpoint in endpoints if endpoint.key in only]
        extras = [extra for extra in extras if extra.key in only]

    server = Server(args.workers, args.worker_class, args.threads)
    print(
        f"gunicorn on {server.base_url}: {args.workers} {args.worker_class} workers × {args.threads} threads; "
        f"wrk -t1 -c{CONNECTIONS}, {args.duration:g} s per run, median of {args.runs}",
        flush=True,
    )
    bench = Bench(server, seeded, seconds=args.duration, runs=args.runs)
    results: dict[str, Result] = {}
    try:
        static_result, _ = bench.measure(static)
        results["static"] = static_result
        for endpoint in endpoints:
            result, floor_result = bench.measure(endpoint, floor_target(endpoint))
            results[endpoint.key], results[f"{endpoint.key}_floor"] = result, floor_result
        for extra in extras:
            pair = by_key[extra.pair] if extra.pair else None
            results[extra.key], pair_result = bench.measure(extra, pair)
            if pair_result is not None:
                results[f"{extra.key}_pair"] = pair_result
    finally:
        server.stop()
        purge_broker()

    meta = {
        "workers": args.workers,
        "worker_class": args.worker_class,
        "threads": args.threads,
        "duration": args.duration,
        "runs": args.runs,
        "connections": CONNECTIONS,
        "cpus": os.cpu_count(),
        "elapsed": time.monotonic() - started,
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
    }
    (WORK_DIR / "results.json").write_text(
        json.dumps({"meta": meta, "results": {key: asdict(value) for key, value in results.items()}}, indent=1)
    )
    from benchmarks.report import write_report

    if not args.no_docs:
        write_report(results, meta, BASE_DIR / "docs")
    print(f"Done in {meta['elapsed'] / 60:.1f} min; results in {WORK_DIR / 'results.json'}", flush=True)


if __name__ == "__main__":
    main()
