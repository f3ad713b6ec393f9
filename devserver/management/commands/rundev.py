"""`make run`: PostgreSQL (unless DATABASE_URL is set), migrations and demo data, then the web
server, a Celery worker and Celery beat, supervised together.

In order: refuse at once if the address is taken; start the embedded PostgreSQL (devserver/embedded_postgres.py);
start the worker, and migrate and seed while it boots; start the web server and beat; print the demo credentials and the
URLs once /healthz answers and the worker and beat are up, so that they are the last thing on the
screen.

Each child runs in its own process group, so that stopping it also stops what it forked (the
runserver autoreloader's child, the worker's pool, PostgreSQL's backends). Ctrl-C, SIGTERM or
SIGHUP to this process, or any child dying, stops all of them, PostgreSQL last; on Linux the
children also get SIGTERM if this process is killed outright (PR_SET_PDEATHSIG), so nothing is
left behind.
"""

import ctypes
import errno
import io
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError
from django.db import connections

from devserver.embedded_postgres import EmbeddedPostgres

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
GRACE_SECONDS = 10
READY_SECONDS = 120
PR_SET_PDEATHSIG = 1


class Stopped(Exception):
    """Ctrl-C (or SIGTERM / SIGHUP) arrived while starting."""


def _start_child_session():
    os.setsid()
    if sys.platform.startswith("linux"):
        try:
            ctypes.CDLL("libc.so.6", use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
        except OSError:
            pass


def _signal_group(process: subprocess.Popen, signum: int) -> None:
    try:
        os.killpg(process.pid, signum)
    except (ProcessLookupError, PermissionError):
        pass


def split_address(addrport: str) -> tuple[str, int]:
    host, _, port = addrport.rpartition(":")
    if not port.isdigit():
        raise CommandError(f"{addrport!r} is not an address:port such as 127.0.0.1:8000.")
    return (host.strip("[]") or "127.0.0.1"), int(port)


def ensure_address_free(addrport: str) -> None:
    """Fail before anything starts when another process listens on the address."""
    host, port = split_address(addrport)
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as runserver binds
        try:
            probe.bind((host, port))
        except OSError as error:
            if error.errno == errno.EADDRINUSE:
                raise CommandError(
                    f"{addrport} is already in use (another `make run`?). Stop that process, or serve "
                    f"on another address: make run RUN_ADDRESS={host}:{port + 1}"
                ) from None
            raise CommandError(f"Cannot serve on {addrport}: {error.strerror}.") from None


class Command(BaseCommand):
    help = (
        "Start PostgreSQL (unless DATABASE_URL is set), migrate, load the demo data, serve the API with a "
        "Celery worker and beat; Ctrl-C stops everything it started."
    )

    def add_arguments(self, parser):
        parser.add_argument("addrport", nargs="?", default="127.0.0.1:8000")
        parser.add_argument("--noreload", action="store_true", help="Do not restart the web server on code changes.")

    def handle(self, *args, addrport: str, noreload: bool, **options):
        ensure_address_free(addrport)
        self.stopping: int | None = None
        for signum in STOP_SIGNALS:
            signal.signal(signum, self._request_stop)
        self._ensure_folders()
        database = None if "DATABASE_URL" in os.environ else EmbeddedPostgres(settings.VAR_DIR)
        children: dict[str, subprocess.Popen] = {}
        exit_code = 0
        try:
            if database is not None:
                self.stdout.write(f"Starting PostgreSQL in {database.data_dir}…")
                children["postgres"] = database.start(preexec_fn=_start_child_session)
                database.wait_until_ready()
            self._check_stop()
            ready_dir = self._ready_dir()
            environment = {**os.environ, "RUNDEV_READY_DIR": str(ready_dir)}
            commands = self._commands(addrport, noreload)
            # The worker is the slowest to start and needs no table for that: it boots while we
            # migrate. The web server (which would warn about unapplied migrations) and beat (whose
            # sweep reads the tables) start after.
            children["worker"] = self._spawn(commands.pop("worker"), environment)
            self.stdout.write("Migrating the database and loading the demo data…")
            call_command("migrate", interactive=False, verbosity=0)
            self._check_stop()
            demo = io.StringIO()
            call_command("seed_demo", base_url=f"http://{addrport}", stdout=demo)
            connections.close_all()
            self._check_stop()
            for name, command in commands.items():
                children[name] = self._spawn(command, environment)
            self._wait_until_up(addrport, children, ready_dir)
            self.stdout.write(demo.getvalue())
            self.stdout.write(self._banner(addrport, children, database))
            while self.stopping is None:
                dead = self._dead(children)
                if dead:
                    self.stderr.write(f"{', '.join(dead)} exited (code {children[dead[0]].returncode}); stopping.")
                    exit_code = 1
                    break
                time.sleep(0.3)
        except Stopped:
            pass
        except RuntimeError as error:
            self.stderr.write(str(error))
            exit_code = 1
        finally:
            connections.close_all()
            self._stop(children, database)
        if exit_code:
            sys.exit(exit_code)

    def _commands(self, addrport: str, noreload: bool) -> dict[str, list[str]]:
        bin_dir = Path(sys.executable).parent
        celery = str(bin_dir / "celery") if (bin_dir / "celery").exists() else "celery"
        manage = str(Path(settings.BASE_DIR) / "manage.py")
        return {
            "web": [sys.executable, manage, "runweb", addrport, *(["--noreload"] if noreload else [])],
            # devserver.worker: the config app, minus the INFO lines of the periodic sweep itself, and
            # telling us when it is up.
            "worker": [
                celery,
                "-A",
                "devserver.worker",
                "worker",
                "--loglevel=INFO",
                # As docs/webhooks.md recommends; one process also keeps the webhook gate whole
                # without Redis (webhooks.slots).
                "--pool=threads",
                "--concurrency=4",
                "--without-gossip",
            ],
            # Beat's only INFO line is "Sending due task" every few seconds: warnings and errors only.
            "beat": [
                celery,
                "-A",
                "devserver.worker",
                "beat",
                "--loglevel=WARNING",
                f"--schedule={Path(settings.VAR_DIR) / 'celerybeat-schedule'}",
                "--pidfile=",
            ],
        }

    @staticmethod
    def _spawn(command: list[str], environment: dict) -> subprocess.Popen:
        return subprocess.Popen(command, cwd=settings.BASE_DIR, env=environment, preexec_fn=_start_child_session)

    def _request_stop(self, signum, frame):
        self.stopping = signum

    def _check_stop(self) -> None:
        if self.stopping is not None:
            raise Stopped

    @staticmethod
    def _dead(children: dict[str, subprocess.Popen]) -> list[str]:
        return [name for name, child in children.items() if child.poll() is not None]

    @staticmethod
    def _ready_dir() -> Path:
        """Where the worker and beat report that they are up (devserver/worker.py); emptied first."""
        ready_dir = Path(settings.VAR_DIR) / "ready"
        ready_dir.mkdir(exist_ok=True)
        for marker in ready_dir.iterdir():
            marker.unlink()
        return ready_dir

    def _wait_until_up(self, addrport: str, children: dict[str, subprocess.Popen], ready_dir: Path) -> None:
        """Until /healthz answers and the worker and beat have reported in."""
        host, port = split_address(addrport)
        url = f"http://{'[' + host + ']' if ':' in host else host}:{port}/healthz"
        serving = False
        deadline = time.monotonic() + READY_SECONDS
        while True:
            self._check_stop()
            dead = self._dead(children)
            if dead:
                raise RuntimeError(f"{', '.join(dead)} exited while starting (code {children[dead[0]].returncode}).")
            if not serving:
                try:
                    with urllib.request.urlopen(url, timeout=2) as response:
                        serving = response.status == 200
                except OSError:
                    pass
            if serving and (ready_dir / "worker").exists() and (ready_dir / "beat").exists():
                return
            if time.monotonic() > deadline:
                raise RuntimeError(f"The web server, the worker and beat were not all up within {READY_SECONDS} s.")
            time.sleep(0.2)

    def _banner(self, addrport: str, children: dict[str, subprocess.Popen], database) -> str:
        base = f"http://{addrport}"
        store = (
            f"PostgreSQL in {database.data_dir} (log: {database.log_path})"
            if database is not None
            else "the database at DATABASE_URL"
        )
        broker = "Redis at REDIS_URL" if settings.CELERY_BROKER_URL.startswith("redis") else "a filesystem broker"
        pids = ", ".join(f"{name} {child.pid}" for name, child in children.items())
        return "\n".join(
            [
                f"Serving {base}/ (API reference {base}/v1/docs, v2 {base}/v2/docs, guides {base}/docs/, "
                f"admin {base}/admin/)",
                f"with {store}, {broker}, a Celery worker and beat (pids: {pids}).",
                "Ctrl-C stops all of them.",
            ]
        )

    def _ensure_folders(self) -> None:
        Path(settings.VAR_DIR).mkdir(parents=True, exist_ok=True)
        if settings.CELERY_BROKER_URL.startswith("filesystem://"):
            options = settings.CELERY_BROKER_TRANSPORT_OPTIONS
            for key in ("data_folder_in", "data_folder_out", "processed_folder"):
                if options.get(key):
                    Path(options[key]).mkdir(parents=True, exist_ok=True)

    def _stop(self, children: dict[str, subprocess.Popen], database: EmbeddedPostgres | None) -> None:
        """SIGTERM (a warm shutdown for Celery), then SIGKILL to each group for whatever is left;
        PostgreSQL last, once nothing uses it any more."""
        for signum in STOP_SIGNALS:
            signal.signal(signum, signal.SIG_IGN)  # a second Ctrl-C must not cut the clean-up short
        services = {name: child for name, child in children.items() if name != "postgres"}
        for name, child in services.items():
            if name == "web":
                _signal_group(child, signal.SIGTERM)  # the autoreloader and the server it runs
            elif child.poll() is None:
                child.send_signal(signal.SIGTERM)  # Celery stops its own pool, after running tasks finish
        deadline = time.monotonic() + GRACE_SECONDS
        for child in services.values():
            try:
                child.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                pass
        for child in services.values():
            _signal_group(child, signal.SIGKILL)  # also reaps grandchildren that outlived their leader
            child.wait()
        if database is not None:
            database.stop()
        stopped = ["the web server", "the worker", "beat"] if services else []
        stopped += ["PostgreSQL"] if database is not None else []
        if stopped:
            self.stdout.write(f"Stopped {', '.join(stopped[:-1])}{' and ' if len(stopped) > 1 else ''}{stopped[-1]}.")
