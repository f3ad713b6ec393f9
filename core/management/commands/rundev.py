"""`make run`'s process supervisor: the web server, a Celery worker and Celery beat, together.

Each child runs in its own process group, so that stopping it also stops what it forked (the
runserver autoreloader's child, the worker's pool). Ctrl-C, SIGTERM or SIGHUP to this process, or
any child dying, stops all of them; on Linux the children also get SIGTERM if this process is
killed outright (PR_SET_PDEATHSIG), so nothing is left behind.
"""

import ctypes
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
GRACE_SECONDS = 10
PR_SET_PDEATHSIG = 1


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


class Command(BaseCommand):
    help = "Serve the API with a Celery worker and beat; Ctrl-C stops everything it started."

    def add_arguments(self, parser):
        parser.add_argument("addrport", nargs="?", default="127.0.0.1:8000")
        parser.add_argument("--noreload", action="store_true", help="Do not restart the web server on code changes.")

    def handle(self, *args, addrport: str, noreload: bool, **options):
        self.stopping: int | None = None
        for signum in STOP_SIGNALS:
            signal.signal(signum, self._request_stop)
        self._ensure_folders()
        bin_dir = Path(sys.executable).parent
        celery = str(bin_dir / "celery") if (bin_dir / "celery").exists() else "celery"
        manage = str(Path(settings.BASE_DIR) / "manage.py")
        commands = {
            "web": [sys.executable, manage, "runserver", addrport, *(["--noreload"] if noreload else [])],
            "worker": [celery, "-A", "config", "worker", "--loglevel=INFO", "--concurrency=2", "--without-gossip"],
            "beat": [
                celery,
                "-A",
                "config",
                "beat",
                "--loglevel=INFO",
                f"--schedule={settings.VAR_DIR / 'celerybeat-schedule'}",
                "--pidfile=",
            ],
        }
        children: dict[str, subprocess.Popen] = {}
        exit_code = 0
        try:
            for name, command in commands.items():
                children[name] = subprocess.Popen(command, cwd=settings.BASE_DIR, preexec_fn=_start_child_session)
            self.stdout.write(
                f"Serving http://{addrport}/ (admin at /admin/) with a Celery worker and beat "
                f"(pids: {', '.join(f'{name} {child.pid}' for name, child in children.items())}). "
                "Ctrl-C stops all of them."
            )
            while self.stopping is None:
                dead = [name for name, child in children.items() if child.poll() is not None]
                if dead:
                    self.stderr.write(f"{', '.join(dead)} exited (code {children[dead[0]].returncode}); stopping.")
                    exit_code = 1
                    break
                time.sleep(0.3)
        finally:
            self._stop(children)
        if exit_code:
            sys.exit(exit_code)

    def _request_stop(self, signum, frame):
        self.stopping = signum

    def _ensure_folders(self) -> None:
        Path(settings.VAR_DIR).mkdir(parents=True, exist_ok=True)
        if settings.CELERY_BROKER_URL.startswith("filesystem://"):
            options = settings.CELERY_BROKER_TRANSPORT_OPTIONS
            for key in ("data_folder_in", "data_folder_out", "processed_folder"):
                if options.get(key):
                    Path(options[key]).mkdir(parents=True, exist_ok=True)

    def _stop(self, children: dict[str, subprocess.Popen]) -> None:
        """SIGTERM (a warm shutdown for Celery), then SIGKILL to each group for whatever is left."""
        for signum in STOP_SIGNALS:
            signal.signal(signum, signal.SIG_IGN)  # a second Ctrl-C must not cut the clean-up short
        for name, child in children.items():
            if name == "web":
                _signal_group(child, signal.SIGTERM)  # the autoreloader and the server it runs
            elif child.poll() is None:
                child.send_signal(signal.SIGTERM)  # Celery stops its own pool, after running tasks finish
        deadline = time.monotonic() + GRACE_SECONDS
        for child in children.values():
            try:
                child.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                pass
        for child in children.values():
            _signal_group(child, signal.SIGKILL)  # also reaps grandchildren that outlived their leader
            child.wait()
        self.stdout.write("Stopped the web server, the worker and beat.")
