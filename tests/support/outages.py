"""Private servers for the outage tests: a Redis and a PostgreSQL of their own on free ports, which
the tests stop, freeze and restart. The machine's shared servers are never touched."""

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from contextlib import closing
from glob import glob
from pathlib import Path


def free_port() -> int:
    with closing(socket.socket()) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_for_port(port: int, *, up: bool = True, timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                if up:
                    return
        except OSError:
            if not up:
                return
        time.sleep(0.05)
    raise RuntimeError(f"port {port} did not come {'up' if up else 'down'} in {timeout}s")


class PrivateRedis:
    """`redis-server` on a free port, no persistence: stop() loses everything, as an outage may."""

    def __init__(self):
        self.port = free_port()
        self.process = None
        self.directory = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        # A folder of its own as its working directory: whatever it might write stays out of the checkout.
        self.directory = self.directory or tempfile.mkdtemp(prefix="private-redis-")
        self.process = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
            + ["--dir", self.directory],
            cwd=self.directory,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        wait_for_port(self.port)

    def stop(self) -> None:
        if self.process is not None:
            self.thaw()
            self.process.terminate()
            self.process.wait(timeout=10)
            self.process = None
        wait_for_port(self.port, up=False)

    def freeze(self) -> None:
        """SIGSTOP: the port still accepts connections, nothing answers."""
        self.process.send_signal(signal.SIGSTOP)

    def thaw(self) -> None:
        if self.process is not None:
            self.process.send_signal(signal.SIGCONT)

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc_info):
        self.stop()
        if self.directory:
            shutil.rmtree(self.directory, ignore_errors=True)


def _postgres_bin(name: str) -> str:
    candidates = sorted(glob(f"/usr/lib/postgresql/*/bin/{name}"))
    if not candidates:
        raise RuntimeError(f"{name} not found under /usr/lib/postgresql/*/bin")
    return candidates[-1]


class PrivatePostgres:
    """A throwaway cluster (`initdb` + `pg_ctl`) on a free port, trusting local connections. Run as
    the `postgres` OS user when the tests run as root, which PostgreSQL refuses."""

    def __init__(self):
        self.port = free_port()
        self.directory = Path(tempfile.mkdtemp(prefix="outage-pg-"))
        self.data = self.directory / "data"

    @property
    def url(self) -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/postgres"

    def _run(self, *command: str) -> None:
        if os.geteuid() == 0:
            command = ("runuser", "-u", "postgres", "--", *command)
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60)

    def start(self) -> None:
        if not self.data.exists():
            if os.geteuid() == 0:
                shutil.chown(self.directory, "postgres", "postgres")
            self._run(_postgres_bin("initdb"), "-D", str(self.data), "-U", "postgres", "-A", "trust", "--no-sync")
        options = f"-p {self.port} -c listen_addresses=127.0.0.1 -k {self.directory} -c fsync=off"
        log = str(self.directory / "log")
        self._run(_postgres_bin("pg_ctl"), "-D", str(self.data), "-o", options, "-w", "-l", log, "start")
        wait_for_port(self.port)

    def stop(self) -> None:
        self._run(_postgres_bin("pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop")
        wait_for_port(self.port, up=False)

    def destroy(self) -> None:
        try:
            self.stop()
        except subprocess.CalledProcessError:
            pass
        shutil.rmtree(self.directory, ignore_errors=True)

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc_info):
        self.destroy()


class PrivatePgBouncer:
    """Debian's `pgbouncer` on a free port in transaction pooling mode, in front of the PostgreSQL at
    `upstream_port`, with `pool_size` server connections per database for all its clients: each
    transaction of a client may run on another server connection, and clients take turns on one.
    Run as the `postgres` OS user when the tests run as root, which pgbouncer refuses."""

    def __init__(self, upstream_port: int, *, pool_size: int = 1):
        self.port = free_port()
        self.directory = Path(tempfile.mkdtemp(prefix="pooler-"))
        self.upstream_port, self.pool_size = upstream_port, pool_size
        self.process = None

    def url(self, database: str) -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/{database}"

    def start(self) -> None:
        config = self.directory / "pgbouncer.ini"
        config.write_text(
            "[databases]\n"
            f"* = host=127.0.0.1 port={self.upstream_port} user=postgres\n"
            "[pgbouncer]\n"
            f"listen_addr = 127.0.0.1\nlisten_port = {self.port}\nunix_socket_dir =\n"
            "auth_type = any\npool_mode = transaction\n"
            f"default_pool_size = {self.pool_size}\nmax_client_conn = 200\n"
            f"logfile = {self.directory / 'pgbouncer.log'}\n"
        )
        command = [shutil.which("pgbouncer") or "/usr/sbin/pgbouncer", str(config)]
        if os.geteuid() == 0:
            shutil.chown(self.directory, "postgres", "postgres")
            shutil.chown(config, "postgres", "postgres")
            command = ["runuser", "-u", "postgres", "--", *command]
        self.process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_for_port(self.port)

    def log(self) -> str:
        path = self.directory / "pgbouncer.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(10)
        shutil.rmtree(self.directory, ignore_errors=True)

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc_info):
        self.stop()


ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


class ServiceProcess:
    """A process of the service (gunicorn, a Celery worker) in its own process group, its output in
    a log file that a failing test can show."""

    def __init__(self, command: list[str], env: dict[str, str]):
        self.command = command
        self.env = {**os.environ, **env}
        self.directory = Path(tempfile.mkdtemp(prefix="outage-proc-"))
        self.log_path = self.directory / "output.log"
        self.process = None

    def start(self) -> None:
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen(
                self.command, cwd=ROOT, env=self.env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(10)
        shutil.rmtree(self.directory, ignore_errors=True)

    def wait_for(self, predicate, what: str, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise AssertionError(f"{self.command[0]} exited:\n{self.log()[-3000:]}")
            if predicate():
                return
            time.sleep(0.1)
        raise AssertionError(f"Gave up waiting for {what}:\n{self.log()[-3000:]}")


class Gunicorn(ServiceProcess):
    """The production server: gunicorn with config/gunicorn.conf.py and two sync workers."""

    def __init__(self, env: dict[str, str], workers: int = 2):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        command = [str(BIN / "gunicorn"), "-c", "config/gunicorn.conf.py", "config.wsgi"]
        command += ["-b", f"127.0.0.1:{self.port}", "-w", str(workers), "--timeout", "30"]
        super().__init__(command, env)

    def start(self) -> None:
        super().start()
        self.wait_for(self._answers, "gunicorn to answer /healthz")

    def _answers(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.url}/healthz", timeout=1) as response:
                return response.status == 200
        except OSError:
            return False


class CeleryWorker(ServiceProcess):
    """`celery -A config worker -B`: deliveries and, in the embedded beat, the sweeper. Supervised
    as production runs it (systemd `Restart=always`, a container restart policy): a worker that
    exits is started again. kombu can make a worker exit when Redis goes away while a task runs
    (docs/operations.md, "Failure modes"); `restarts` counts those."""

    def __init__(self, env: dict[str, str]):
        command = [str(BIN / "celery"), "-A", "config", "worker", "-B"]
        command += ["--pool=threads", "--concurrency=4", "--without-gossip", "--without-mingle", "-l", "info"]
        command += ["-n", f"outages-{os.getpid()}-{time.monotonic_ns()}@127.0.0.1"]
        super().__init__(command, env)
        self.command += ["-s", str(self.directory / "beat-schedule")]
        self.restarts = 0
        self._stopping = threading.Event()
        self._supervisor = threading.Thread(target=self._supervise, daemon=True)

    def start(self) -> None:
        super().start()
        self.wait_for(lambda: " ready." in self.log(), "the Celery worker to be ready")
        self._supervisor.start()

    def _supervise(self) -> None:
        while not self._stopping.wait(0.2):
            if self.process.poll() is not None:
                self.restarts += 1
                ServiceProcess.start(self)

    def stop(self) -> None:
        self._stopping.set()
        if self._supervisor.is_alive():
            self._supervisor.join(5)
        super().stop()
