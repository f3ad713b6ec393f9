"""`make smoke`: README's "Running in production", run as written, from requirements.txt alone.

Every step is described in docs/operations.md ("The production smoke run"). In short:

1. a virtualenv with requirements.txt and nothing else (cached by the lock's hash), which must pass
   `pip check`, hold exactly the locked packages and import every broker transport, cache backend
   and database backend the settings can select;
2. a fresh PostgreSQL database (`SMOKE_DATABASE_URL`) and an emptied Redis database
   (`SMOKE_REDIS_URL`), `migrate`;
3. README's processes: gunicorn with config/gunicorn.conf.py and 2 workers, a Celery worker (threads)
   and one beat, with DEBUG off, a generated SECRET_KEY and BEHIND_PROXY=1 (this client plays the
   TLS proxy: it sends `X-Forwarded-Proto: https`);
4. over HTTP only: /readyz, an OAuth client from `createoauthclient`, the authorization code flow
   with PKCE through the sign-in and consent pages, /v1/me with the token, a webhook, a booking
   created, moved and cancelled, each delivery received once and verified with `standardwebhooks`,
   the admin's sign-in;
5. the same with a second gunicorn and a second worker (each delivery still once), then with a
   second beat that waits for the beat lock (a subscriber that fails every first attempt, so the
   retries go through the first beat's sweeps), then with the first beat killed (SIGKILL): the
   second takes the lock and its sweeps send the retries; still nothing twice.

It stops every process it started. On a failure it names the step and prints the tail of every
process's log, and exits 1.
"""

import fcntl
import hashlib
import http.cookiejar
import json
import os
import platform
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from base64 import urlsafe_b64encode
from datetime import date, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlsplit

import psycopg
import redis
import requests
from packaging.requirements import Requirement
from standardwebhooks.webhooks import Webhook as StandardWebhook

from core import beat as beat_lock

ROOT = Path(__file__).resolve().parents[1]
LOCK = ROOT / "requirements.txt"

# README's "Running in production", word for word (tests/test_smoke_docs.py checks that README
# and docs/operations.md say exactly these). The smoke run replaces only the address of `--bind`.
WEB_COMMAND = "gunicorn -c config/gunicorn.conf.py config.wsgi --workers 2 --bind 127.0.0.1:8000"
WORKER_COMMAND = "celery -A config worker -l info --pool threads --concurrency 4"
BEAT_COMMAND = "celery -A config beat -l info"
# What the beats log (core.beat, Celery's scheduler).
BEAT_TAKEN = beat_lock.TAKEN
BEAT_WAITING = beat_lock.WAITING.split(" (")[0]
SWEEP_SENT = "Sending due task webhooks-sweep"
MIGRATE_COMMAND = "python manage.py migrate --noinput"
OPERATOR_COMMAND = "python manage.py createsuperuser --noinput --username USERNAME --email EMAIL"
CLIENT_COMMAND = 'python manage.py createoauthclient --name NAME --redirect-uri URI --scopes "SCOPES"'

SCOPES = "READ_PROFILE WRITE_SCHEDULE WRITE_EVENT_TYPE WRITE_BOOKING WRITE_WEBHOOK"
TRIGGERS = ["BOOKING_CREATED", "BOOKING_RESCHEDULED", "BOOKING_CANCELLED"]
WAIT_SECONDS = 120  # the most any one wait may take before the step fails (a bound, not a target)
LOG_TAIL_LINES = 40
STALE_VENV_SECONDS = 7 * 24 * 3600


class SmokeFailure(Exception):
    pass


def say(message: str) -> None:
    print(f"smoke: {message}", flush=True)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


# --- configuration --------------------------------------------------------------------------------


class Config:
    def __init__(self, environ):
        self.database_url = environ.get("SMOKE_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/sched_smoke")
        self.redis_url = environ.get("SMOKE_REDIS_URL", "redis://127.0.0.1:6379/8")
        cache_home = Path(environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
        self.cache_dir = Path(environ.get("SMOKE_CACHE_DIR") or cache_home / "scheduling-smoke")
        self.python = environ.get("SMOKE_PYTHON") or shutil.which("python3.11") or sys.executable
        self.keep_logs = environ.get("SMOKE_KEEP_LOGS", "") not in ("", "0")
        database = urlsplit(self.database_url).path.lstrip("/")
        if "smoke" not in database:
            raise SmokeFailure(
                f"SMOKE_DATABASE_URL names {database!r}: it is dropped and created, so its name must contain 'smoke'"
            )
        self.database_name = database


# --- the virtualenv from requirements.txt alone -----------------------------------------------------


def locked_packages(lock: Path) -> dict[str, str]:
    """name -> version of every pin in the lock whose environment marker applies here."""
    pins = {}
    for line in lock.read_text().splitlines():
        if not line or line[0] in "# -" or line.startswith(" "):
            continue
        requirement = Requirement(line.rstrip(" \\"))
        if requirement.marker is None or requirement.marker.evaluate():
            pins[canonical(requirement.name)] = str(requirement.specifier).removeprefix("==")
    return pins


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def runtime_venv(config: Config) -> Path:
    """requirements.txt installed into a virtualenv of its own, built once per lock and Python."""
    version = subprocess.run(
        [config.python, "-c", "import sys; print(sys.version)"], capture_output=True, text=True, check=True
    ).stdout.strip()
    key = hashlib.sha256(LOCK.read_bytes() + version.encode() + platform.machine().encode()).hexdigest()[:16]
    config.cache_dir.mkdir(parents=True, exist_ok=True)
    venv = config.cache_dir / f"venv-{key}"
    with open(config.cache_dir / f"venv-{key}.lock", "w") as guard:
        fcntl.flock(guard, fcntl.LOCK_EX)  # another smoke run building the same virtualenv
        if not (venv / ".complete").exists():
            say(f"building {venv} from requirements.txt (once per lock)")
            shutil.rmtree(venv, ignore_errors=True)
            # No pip inside (ensurepip alone takes half a minute on a loaded machine); uv installs the
            # lock's pinned files after checking every hash, as `pip install -r requirements.txt`
            # does, and `pip --python` checks it below.
            subprocess.run([config.python, "-m", "venv", "--without-pip", str(venv)], check=True)
            uv = Path(sys.executable).parent / "uv"
            subprocess.run(
                [str(uv), "pip", "install", "--no-config", "--quiet", "--require-hashes"]
                + ["--python", str(venv / "bin" / "python"), "-r", str(LOCK)],
                check=True,
            )
            (venv / ".complete").write_text(version + "\n")
        (venv / ".complete").touch()  # last used: virtualenvs of locks unused for a week go
        for other in config.cache_dir.glob("venv-*/.complete"):
            if time.time() - other.stat().st_mtime > STALE_VENV_SECONDS:
                shutil.rmtree(other.parent, ignore_errors=True)
    return venv


def check_venv(venv: Path) -> None:
    python = str(venv / "bin" / "python")
    check = subprocess.run([sys.executable, "-m", "pip", "--python", python, "check"], capture_output=True, text=True)
    if check.returncode:
        raise SmokeFailure(f"pip check failed in {venv}:\n{check.stdout}{check.stderr}")
    listed = subprocess.run(
        [
            python,
            "-c",
            "import importlib.metadata as m, json; "
            "print(json.dumps({d.metadata['Name']: d.version for d in m.distributions()}))",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    installed = {canonical(name): version for name, version in json.loads(listed.stdout).items()}
    locked = locked_packages(LOCK)
    if installed != locked:
        extra = sorted(set(installed.items()) - set(locked.items()))
        missing = sorted(set(locked.items()) - set(installed.items()))
        raise SmokeFailure(f"{venv} is not requirements.txt: not locked {extra}, not installed {missing}")


def import_check(venv: Path, config: Config, var_dir: Path) -> list[str]:
    """The command that imports what each configuration the settings can select needs: Redis
    (production; `rediss://` too) and none at all (`make run`: filesystem broker, file cache,
    embedded PostgreSQL)."""
    base = {"PATH": os.environ.get("PATH", ""), "DEBUG": "0", "SECRET_KEY": "import-check", "VAR_DIR": str(var_dir)}
    rediss = config.redis_url.replace("redis://", "rediss://", 1)
    configurations = {
        "redis": base | {"DATABASE_URL": config.database_url, "REDIS_URL": config.redis_url},
        "rediss": base | {"DATABASE_URL": config.database_url, "REDIS_URL": rediss},
        "make run": base,
    }
    return [str(venv / "bin" / "python"), "-m", "smoke.imports", json.dumps(configurations)]


# --- databases --------------------------------------------------------------------------------------


def fresh_database(config: Config) -> None:
    parts = urlsplit(config.database_url)
    maintenance = parts._replace(path="/postgres").geturl()
    with psycopg.connect(maintenance, autocommit=True, connect_timeout=5) as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{config.database_name}" WITH (FORCE)')
        connection.execute(f'CREATE DATABASE "{config.database_name}"')


def drop_database(config: Config) -> None:
    parts = urlsplit(config.database_url)
    with psycopg.connect(parts._replace(path="/postgres").geturl(), autocommit=True, connect_timeout=5) as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{config.database_name}" WITH (FORCE)')


def empty_redis(config: Config) -> None:
    client = redis.Redis.from_url(config.redis_url, socket_timeout=5)
    client.flushdb()
    client.close()


# --- processes --------------------------------------------------------------------------------------


def clean_environ() -> dict[str, str]:
    """This shell's environment without anything that would point the service elsewhere."""
    dropped = ("DJANGO_SETTINGS_MODULE", "DATABASE_URL", "REDIS_URL", "VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME")
    return {
        name: value
        for name, value in os.environ.items()
        if name not in dropped and not name.startswith(("CELERY_", "WEBHOOK_", "SMOKE_", "GUNICORN_"))
    }


class Process:
    def __init__(self, name: str, argv: list[str], env: dict, log_dir: Path, oneshot: bool = False):
        self.name, self.oneshot, self.killed = name, oneshot, False
        self.log_path = log_dir / f"{name}.log"
        self.log = open(self.log_path, "wb")  # noqa: SIM115 - closed in stop()
        self.process = subprocess.Popen(
            argv,
            cwd=ROOT,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def output(self) -> str:
        return self.log_path.read_text(errors="replace")

    def tail(self) -> str:
        return "\n".join(self.output().splitlines()[-LOG_TAIL_LINES:])

    def alive(self) -> bool:
        return self.process.poll() is None

    def signal(self, number: int) -> None:
        try:
            os.killpg(self.process.pid, number)
        except ProcessLookupError:
            pass

    def terminate(self) -> None:
        if self.alive():
            self.signal(signal.SIGTERM)  # gunicorn and Celery shut down gracefully on it

    def stop(self) -> None:
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.signal(signal.SIGKILL)
            self.process.wait(timeout=10)
        # Whatever the leader left in its process group (a prefork child, a gunicorn worker).
        self.signal(signal.SIGKILL)
        self.log.close()

    def kill(self) -> None:
        """SIGKILL its process group, as a lost machine would stop it; the run expects it gone."""
        self.signal(signal.SIGKILL)
        self.process.wait(timeout=10)
        self.killed = True

    def gone(self) -> bool:
        try:
            os.killpg(self.process.pid, 0)
        except ProcessLookupError:
            return True
        return False


class Receiver:
    """A webhook subscriber on this machine. `/steady/...` answers 200; `/flaky/...` answers 503 to
    the first attempt of each delivery (its `webhook-id`) and 200 to the next."""

    def __init__(self):
        self.lock = threading.Lock()
        self.hits: list[dict] = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                with receiver.lock:
                    seen = [
                        hit
                        for hit in receiver.hits
                        if hit["headers"].get("webhook-id") == self.headers.get("webhook-id")
                    ]
                    status = 503 if self.path.startswith("/flaky") and not seen else 200
                    receiver.hits.append(
                        {
                            "path": self.path,
                            "headers": {k.lower(): v for k, v in self.headers.items()},
                            "body": body,
                            "status": status,
                        }
                    )
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def at(self, path: str) -> list[dict]:
        with self.lock:
            return [hit for hit in self.hits if hit["path"] == path]

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


# --- HTTP, as a user behind the TLS proxy --------------------------------------------------------


class Client:
    """A user agent behind the documented TLS proxy: every request says `X-Forwarded-Proto: https`,
    the service's cookies (Secure, as it sets them with DEBUG off) are sent back although the hop to
    gunicorn is plain HTTP, and https:// redirects to this host are followed over http:// (what the
    proxy does)."""

    def __init__(self, base: str):
        self.base = base
        self.origin = "https://" + urlsplit(base).netloc
        self.session = requests.Session()
        # requests would never send a Secure cookie over http://: this client keeps them itself.
        self.session.cookies.set_policy(http.cookiejar.DefaultCookiePolicy(allowed_domains=[]))
        self.cookies: dict[str, str] = {}
        self.session.headers.update({"X-Forwarded-Proto": "https", "X-Forwarded-For": "127.0.0.1"})

    def url(self, path_or_url: str) -> str:
        if path_or_url.startswith(self.origin):
            return self.base + path_or_url.removeprefix(self.origin)
        return path_or_url if "://" in path_or_url else self.base + path_or_url

    def request(self, method: str, path: str, headers: dict | None = None, **kwargs) -> requests.Response:
        headers = dict(headers or {})
        if self.cookies:
            headers["Cookie"] = "; ".join(f"{name}={value}" for name, value in self.cookies.items())
        if method == "POST":
            headers = {"Origin": self.origin, "Referer": self.origin + "/"} | headers
        response = self.session.request(
            method, self.url(path), headers=headers, allow_redirects=False, timeout=30, **kwargs
        )
        for cookie in response.cookies:
            self.cookies[cookie.name] = cookie.value
        return response

    def get(self, path: str, **kwargs) -> requests.Response:
        return self.request("GET", path, **kwargs)

    def post(self, path: str, **kwargs) -> requests.Response:
        return self.request("POST", path, **kwargs)

    def delete(self, path: str, **kwargs) -> requests.Response:
        return self.request("DELETE", path, **kwargs)

    def close(self) -> None:
        self.session.close()


def expect(response: requests.Response, status: int, what: str) -> requests.Response:
    if response.status_code != status:
        raise SmokeFailure(
            f"{what}: {response.request.method} {response.url} answered {response.status_code}, not {status}: "
            + response.text[:800]
        )
    return response


CSRF_FIELD = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')


def csrf_token(html: str) -> str:
    match = CSRF_FIELD.search(html)
    if not match:
        raise SmokeFailure("a form without its CSRF token")
    return match.group(1)


# --- the run ---------------------------------------------------------------------------------------


class Smoke:
    def __init__(self, config: Config):
        self.config = config
        self.work = Path(tempfile.mkdtemp(prefix="smoke-"))
        self.processes: list[Process] = []
        self.receiver: Receiver | None = None
        self.clients: list[Client] = []
        self.step = "start"
        self.started = time.monotonic()

    # steps, waits and failures

    def begin(self, step: str) -> None:
        self.step = step
        say(f"[{time.monotonic() - self.started:5.1f}s] {step}")

    def wait_for(self, condition, what: str, seconds: float = WAIT_SECONDS):
        deadline = time.monotonic() + seconds
        while True:
            for process in self.processes:
                if not process.oneshot and not process.killed and not process.alive():
                    raise SmokeFailure(f"{process.name} exited ({process.process.returncode}) while waiting for {what}")
            value = condition()
            if value:
                return value
            if time.monotonic() > deadline:
                raise SmokeFailure(f"gave up after {seconds:.0f}s waiting for {what}")
            time.sleep(0.1)

    # the processes

    def environ(self, venv: Path, var_dir: Path) -> dict:
        return clean_environ() | {
            "PATH": f"{venv / 'bin'}:{os.environ.get('PATH', '')}",
            "DEBUG": "0",
            "SECRET_KEY": self.secret_key,
            "DATABASE_URL": self.config.database_url,
            "REDIS_URL": self.config.redis_url,
            "BEHIND_PROXY": "1",
            "ALLOWED_HOSTS": "127.0.0.1",
            "VAR_DIR": str(var_dir),
            # The receiver runs on this machine, over plain http; production allows public
            # addresses and https only.
            "WEBHOOK_ALLOWED_CIDRS": "127.0.0.0/8",
            "WEBHOOK_ALLOW_HTTP": "1",
            # Retries wait for the beat's sweeper instead of a countdown in the worker, so that the
            # two-beat step has the sweeps send something.
            "WEBHOOK_SHORT_RETRY_MAX_SECONDS": "0",
        }

    def command(self, venv: Path, line: str, **replacements) -> list[str]:
        argv = [replacements.get(word, word) for word in _split(line)]
        program = venv / "bin" / argv[0]
        return [str(program)] + argv[1:]

    def launch(self, name: str, argv: list[str], env: dict, oneshot: bool = False) -> Process:
        process = Process(name, argv, env, self.work, oneshot=oneshot)
        self.processes.append(process)
        return process

    def finished(self, process: Process, what: str) -> None:
        self.wait_for(lambda: not process.alive(), what)
        if process.process.returncode:
            raise SmokeFailure(f"{what}: {process.name} exited {process.process.returncode}:\n{process.tail()}")

    def launch_web(self, venv: Path, env: dict, name: str):
        port = free_port()
        process = self.launch(name, self.command(venv, WEB_COMMAND, **{"127.0.0.1:8000": f"127.0.0.1:{port}"}), env)
        client = Client(f"http://127.0.0.1:{port}")
        self.clients.append(client)
        return client, lambda: process.output().count("Booting worker") >= 2 and _answers(client, "/healthz")

    def launch_worker(self, venv: Path, env: dict, name: str, node: str | None = None):
        argv = self.command(venv, WORKER_COMMAND)
        if node:  # two workers on one machine need two node names (on two machines they have them)
            argv += ["-n", f"{node}@%h"]
        process = self.launch(name, argv, env)
        return process, lambda: re.search(r"\S+@\S+ ready\.", process.output())

    def launch_beat(self, venv: Path, env: dict, name: str):
        # Each beat's schedule file in a folder of its own, as on a machine of its own (by default it
        # is `celerybeat-schedule*` in the working directory, here the checkout).
        schedule = self.work / name / "celerybeat-schedule"
        schedule.parent.mkdir()
        process = self.launch(name, self.command(venv, BEAT_COMMAND) + ["--schedule", str(schedule)], env)
        return process, lambda: "beat: Starting..." in process.output()

    # what users do

    def register_client(self, venv: Path, env: dict) -> Process:
        argv = self.command(venv, CLIENT_COMMAND, NAME="Smoke test app", URI=self.redirect_uri, SCOPES=SCOPES)
        argv[0] = str(venv / "bin" / "python")
        return self.launch("createoauthclient", argv, env, oneshot=True)

    def create_operator(self, venv: Path, env: dict) -> Process:
        self.username, self.password = "operator", secrets.token_urlsafe(16)
        argv = self.command(venv, OPERATOR_COMMAND, USERNAME=self.username, EMAIL="operator@example.org")
        argv[0] = str(venv / "bin" / "python")
        return self.launch("createsuperuser", argv, env | {"DJANGO_SUPERUSER_PASSWORD": self.password}, oneshot=True)

    def oauth_token(self, client: Client, registration: Process) -> str:
        output = registration.output()
        client_id = re.search(r"^client_id: +(\S+)$", output, re.M).group(1)
        client_secret = re.search(r"^client_secret: +(\S+)$", output, re.M).group(1)
        redirect_uri = self.redirect_uri

        self.begin("the authorization code flow with PKCE through the sign-in and consent pages")
        metadata = expect(client.get("/.well-known/oauth-authorization-server"), 200, "OAuth metadata").json()
        verifier = secrets.token_urlsafe(48)
        challenge = urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
        state = secrets.token_urlsafe(16)
        authorize = (
            metadata["authorization_endpoint"]
            + "?"
            + urlencode(
                {
                    "response_type": "code",
                    "client_id": client_id,
                    "redirect_uri": redirect_uri,
                    "scope": SCOPES,
                    "state": state,
                    "code_challenge": challenge,
                    "code_challenge_method": "S256",
                }
            )
        )
        to_sign_in = expect(client.get(authorize), 302, "authorize without a session")
        sign_in_url = to_sign_in.headers["Location"]
        sign_in_page = expect(client.get(sign_in_url), 200, "sign-in page")
        next_url = parse_qs(urlsplit(sign_in_url).query).get("next", [""])[0]
        signed_in = expect(
            client.post(
                sign_in_url,
                data={
                    "csrfmiddlewaretoken": csrf_token(sign_in_page.text),
                    "username": self.username,
                    "password": self.password,
                    "next": next_url,
                },
            ),
            302,
            "signing in",
        )
        consent_page = expect(client.get(signed_in.headers["Location"]), 200, "consent page")
        action = re.search(r'<form method="post" action="([^"]+)"', consent_page.text).group(1).replace("&amp;", "&")
        allowed = expect(
            client.post(action, data={"csrfmiddlewaretoken": csrf_token(consent_page.text), "decision": "allow"}),
            302,
            "consent",
        )
        callback = urlsplit(allowed.headers["Location"])
        query = parse_qs(callback.query)
        if not allowed.headers["Location"].startswith(redirect_uri) or query.get("state") != [state]:
            raise SmokeFailure(f"consent sent the browser to {allowed.headers['Location']}")
        token = expect(
            client.post(
                metadata["token_endpoint"],
                data={
                    "grant_type": "authorization_code",
                    "code": query["code"][0],
                    "redirect_uri": redirect_uri,
                    "code_verifier": verifier,
                },
                auth=(client_id, client_secret),
            ),
            200,
            "token exchange",
        ).json()
        if token.get("scope") != SCOPES or token.get("token_type") != "Bearer":
            raise SmokeFailure(f"unexpected token answer {token}")
        return token["access_token"]

    def book_move_cancel(self, clients: list[Client], slots: list[str], event_type: int) -> set[str]:
        """Book the first slot through clients[0], move it to the second through clients[1], cancel
        through clients[2]; returns the uids of the two bookings."""
        body = {
            "eventTypeId": event_type,
            "start": slots[0],
            "timeZone": "Europe/London",
            "language": "en",
            "metadata": {},
            "responses": {"name": "Ada Lovelace", "email": "ada@example.org"},
        }
        booked = expect(clients[0].post("/v1/bookings", json=body, headers=self.auth), 200, "booking").json()
        moved = expect(
            clients[1].post(
                "/v1/bookings", json=body | {"start": slots[1], "rescheduleUid": booked["uid"]}, headers=self.auth
            ),
            200,
            "moving the booking",
        ).json()
        expect(
            clients[2].delete(f"/v1/bookings/{moved['id']}?cancellationReason=Smoke", headers=self.auth),
            200,
            "cancelling",
        )
        return {booked["uid"], moved["uid"]}

    def subscribe(self, client: Client, path: str) -> dict:
        answer = expect(
            client.post(
                "/v1/webhooks",
                json={"subscriberUrl": self.receiver.url + path, "eventTriggers": TRIGGERS},
                headers=self.auth,
            ),
            200,
            "subscribing a webhook",
        ).json()["webhook"]
        if not (answer.get("secret") or "").startswith("whsec_"):
            raise SmokeFailure(f"the new webhook has no signing secret: {answer}")
        return answer

    def deliveries_arrived(self, path: str, secret: str, uids: set[str], attempts_each: int) -> None:
        """Each trigger once per booking pair (its successful attempt once), every body verified."""

        def succeeded():
            return [hit for hit in self.receiver.at(path) if hit["status"] == 200]

        self.wait_for(lambda: len(succeeded()) >= len(TRIGGERS), f"{len(TRIGGERS)} deliveries at {path}")
        verifier = StandardWebhook(secret)
        triggers = []
        for hit in succeeded():
            payload = verifier.verify(hit["body"], hit["headers"])
            triggers.append(payload["triggerEvent"])
            if payload["payload"].get("uid") not in uids:
                raise SmokeFailure(f"a delivery at {path} is about booking {payload['payload'].get('uid')}, not {uids}")
        if sorted(triggers) != sorted(TRIGGERS):
            raise SmokeFailure(f"{path} received {triggers}, not each of {TRIGGERS} once")
        self.check_each_once(path, attempts_each)

    def check_each_once(self, path: str, attempts_each: int) -> None:
        by_id: dict[str, list[int]] = {}
        for hit in self.receiver.at(path):
            by_id.setdefault(hit["headers"]["webhook-id"], []).append(hit["status"])
        expected = [503, 200] if attempts_each == 2 else [200]
        wrong = {delivery: statuses for delivery, statuses in by_id.items() if statuses != expected}
        if wrong or len(by_id) != len(TRIGGERS):
            raise SmokeFailure(f"{path}: each delivery should arrive as {expected}; got {by_id}")

    def run(self) -> None:
        config = self.config
        self.begin("a virtualenv from requirements.txt alone")
        venv = runtime_venv(config)
        check_venv(venv)
        say(f"{venv}: pip check passes, exactly the {len(locked_packages(LOCK))} locked packages")

        self.begin(f"a fresh database {config.database_name}, Redis {config.redis_url} emptied")
        fresh_database(config)
        empty_redis(config)
        self.secret_key = secrets.token_urlsafe(50)
        env = self.environ(venv, self.work / "var")
        self.receiver = Receiver()

        # Side by side (they do not need each other to start): the import check, `migrate`, and
        # README's processes, gunicorn (2 workers) and a Celery worker (threads); then one beat.
        self.begin("the import check, migrate, gunicorn (2 workers), a worker, then one beat")
        imports = self.launch(
            "import-check", import_check(venv, config, self.work / "var-import-check"), env, oneshot=True
        )
        migrate = self.command(venv, MIGRATE_COMMAND)
        migrate[0] = str(venv / "bin" / "python")
        migrating = self.launch("migrate", migrate, env, oneshot=True)
        web, web_ready = self.launch_web(venv, env, "web-1")
        # The second gunicorn of step 9 starts now too (nothing reaches it before then).
        web_2, web_2_ready = self.launch_web(venv, env, "web-2")
        _worker, worker_ready = self.launch_worker(venv, env, "worker-1")
        self.finished(imports, "importing every selectable transport and backend")
        for line in imports.output().splitlines():
            say(f"imports {line}")
        self.finished(migrating, "migrate")
        # The beat's first sweep reads the database: it starts once the tables are there, beside
        # the operator's two commands.
        beat, beat_ready = self.launch_beat(venv, env, "beat-1")
        self.redirect_uri = f"{self.receiver.url}/callback"
        operator = self.create_operator(venv, env)
        registration = self.register_client(venv, env)
        self.wait_for(web_ready, "web-1 to serve")
        self.wait_for(worker_ready, "worker-1 to be ready")
        self.wait_for(beat_ready, "beat-1 to start")

        self.begin("/readyz answers 200")
        ready = expect(web.get("/readyz"), 200, "readiness").json()
        if ready["checks"] != {"database": "ok", "broker": "ok"}:
            raise SmokeFailure(f"/readyz: {ready}")

        self.begin("an operator account (createsuperuser) and an OAuth client (createoauthclient)")
        self.finished(operator, "createsuperuser")
        self.finished(registration, "createoauthclient")

        access_token = self.oauth_token(web, registration)
        self.auth = {"Authorization": f"Bearer {access_token}"}

        self.begin("the token reads /v1/me")
        me = expect(web.get("/v1/me", headers=self.auth), 200, "/v1/me").json()
        if me["user"]["username"] != self.username:
            raise SmokeFailure(f"/v1/me answered {me}")

        self.begin("a schedule and an event type, then a webhook")
        schedule = expect(
            web.post(
                "/v1/schedules",
                json={
                    "name": "Every day",
                    "timeZone": "UTC",
                    "availability": [{"days": [0, 1, 2, 3, 4, 5, 6], "startTime": "09:00", "endTime": "17:00"}],
                },
                headers=self.auth,
            ),
            200,
            "a schedule",
        ).json()["schedule"]
        event_type = expect(
            web.post(
                "/v1/event-types",
                json={"title": "Smoke", "slug": "smoke", "length": 30, "scheduleId": schedule["id"]},
                headers=self.auth,
            ),
            200,
            "an event type",
        ).json()["event_type"]["id"]
        steady = self.subscribe(web, "/steady")

        self.begin("a slot is booked, moved and cancelled")
        start, end = date.today() + timedelta(days=2), date.today() + timedelta(days=9)
        slots_by_day = expect(
            web.get(
                f"/v1/slots?eventTypeId={event_type}&startTime={start}&endTime={end}&timeZone=UTC", headers=self.auth
            ),
            200,
            "free slots",
        ).json()["slots"]
        slots = [slot["time"] for day in sorted(slots_by_day) for slot in slots_by_day[day]]
        if len(slots) < 8:
            raise SmokeFailure(f"too few free slots: {slots}")
        uids = self.book_move_cancel([web, web, web], slots[0:2], event_type)

        self.begin("the three deliveries reach the receiver once each, verified with standardwebhooks")
        self.deliveries_arrived("/steady", steady["secret"], uids, attempts_each=1)

        # The second worker of step 9 starts while the admin is tried.
        _worker_2, worker_2_ready = self.launch_worker(venv, env, "worker-2", node="worker-2")

        self.begin("the admin's sign-in page answers, and the operator signs in")
        admin = Client(web.base)
        self.clients.append(admin)
        page = expect(admin.get("/admin/login/?next=/admin/"), 200, "admin sign-in page")
        signed_in = expect(
            admin.post(
                "/admin/login/?next=/admin/",
                data={
                    "csrfmiddlewaretoken": csrf_token(page.text),
                    "username": self.username,
                    "password": self.password,
                    "next": "/admin/",
                },
            ),
            302,
            "admin sign-in",
        )
        expect(admin.get(signed_in.headers["Location"]), 200, "admin index")

        self.begin("two gunicorn instances and two workers on one database and one Redis")
        self.wait_for(web_2_ready, "web-2 to serve")
        self.wait_for(worker_2_ready, "worker-2 to be ready")
        self.receiver.hits.clear()
        uids = self.book_move_cancel([web_2, web, web_2], slots[2:4], event_type)
        self.deliveries_arrived("/steady", steady["secret"], uids, attempts_each=1)

        self.begin("a second beat waits for the beat lock; retries go through the first beat's sweeps")
        beat_2, beat_2_ready = self.launch_beat(venv, env, "beat-2")
        self.wait_for(lambda: beat_2_ready() and BEAT_WAITING in beat_2.output(), "beat-2 to wait for the beat lock")
        flaky = self.subscribe(web, "/flaky")
        self.receiver.hits.clear()
        uids = self.book_move_cancel([web, web_2, web], slots[4:6], event_type)
        self.deliveries_arrived("/steady", steady["secret"], uids, attempts_each=1)
        self.deliveries_arrived("/flaky", flaky["secret"], uids, attempts_each=2)
        self.check_each_once("/steady", 1)
        self.check_each_once("/flaky", 2)
        if SWEEP_SENT in beat_2.output():
            raise SmokeFailure(f"beat-2 sent a sweep while beat-1 held the beat lock:\n{beat_2.tail()}")

        self.begin("beat-1 killed (SIGKILL): beat-2 takes the lock, and its sweeps send the retries")
        beat.kill()
        self.wait_for(
            lambda: BEAT_TAKEN in beat_2.output() and SWEEP_SENT in beat_2.output(),
            "beat-2 to take the beat lock and send a sweep",
        )
        self.receiver.hits.clear()
        uids = self.book_move_cancel([web_2, web, web_2], slots[6:8], event_type)
        self.deliveries_arrived("/steady", steady["secret"], uids, attempts_each=1)
        self.deliveries_arrived("/flaky", flaky["secret"], uids, attempts_each=2)

        self.begin("the workers ran every sweep sent, and nothing arrived twice")
        total_sent = sum(b.output().count(SWEEP_SENT) for b in (beat, beat_2))
        workers = [p for p in self.processes if p.name.startswith("worker")]
        # Beat logs a sweep before it publishes it: the kill may have fallen between the two for
        # beat-1's last one.
        self.wait_for(
            lambda: (
                sum(len(re.findall(r"Task webhooks\.sweep\[\S+\] succeeded", w.output())) for w in workers)
                >= total_sent - 1
            ),
            "the workers to run every sweep sent",
        )
        self.check_each_once("/steady", 1)
        self.check_each_once("/flaky", 2)
        enqueued = sum(
            int(n) for w in workers for n in re.findall(r"Webhook sweeper enqueued (\d+) due deliveries", w.output())
        )
        # At least the 6 retries; more only if a publish after a commit failed (a loaded Redis
        # answering slower than REDIS_SOCKET_TIMEOUT_SECONDS), which the sweeper then sends: what
        # must not happen, a second send, is what the receiver and the delivery log show.
        retries = 2 * len(TRIGGERS)
        if enqueued < retries:
            raise SmokeFailure(f"the sweeps enqueued {enqueued} deliveries, fewer than the {retries} retries")
        listed = expect(
            web.get(f"/v1/webhooks/{flaky['id']}/deliveries", headers=self.auth), 200, "delivery log"
        ).json()["deliveries"]
        if sorted((d["status"], d["attemptCount"]) for d in listed) != [("succeeded", 2)] * retries:
            raise SmokeFailure(f"the delivery log says {[(d['status'], d['attemptCount']) for d in listed]}")
        say(
            f"{total_sent} sweeps sent by one beat after the other ({beat.output().count(SWEEP_SENT)} by beat-1, "
            f"{beat_2.output().count(SWEEP_SENT)} by beat-2 after beat-1 was killed), "
            f"{enqueued} deliveries enqueued by them, nothing sent twice"
        )

    def stop(self) -> list[str]:
        """Stops everything it started; returns the names of processes still there afterwards."""
        for client in self.clients:
            client.close()
        for process in self.processes:
            process.terminate()
        for process in self.processes:
            process.stop()
        if self.receiver:
            self.receiver.stop()
        deadline = time.monotonic() + 10  # for the system to reap what was killed
        while time.monotonic() < deadline and not all(process.gone() for process in self.processes):
            time.sleep(0.1)
        return [process.name for process in self.processes if not process.gone()]

    def report_failure(self, error: BaseException) -> None:
        print(f"\nsmoke: FAILED at step: {self.step}\n{error}", file=sys.stderr, flush=True)
        if not isinstance(error, SmokeFailure):
            traceback.print_exception(error, file=sys.stderr)
        for process in self.processes:
            print(
                f"\n--- last {LOG_TAIL_LINES} lines of {process.name} ({process.log_path}) ---\n{process.tail()}",
                file=sys.stderr,
            )


def _split(line: str) -> list[str]:
    import shlex

    return shlex.split(line)


def _answers(client: Client, path: str) -> bool:
    try:
        return client.session.get(client.url(path), timeout=5).status_code == 200
    except (requests.ConnectionError, requests.Timeout):
        return False


def main() -> int:
    try:
        config = Config(os.environ)
    except SmokeFailure as error:
        print(f"smoke: {error}", file=sys.stderr)
        return 2
    smoke = Smoke(config)
    failed = False
    try:
        smoke.run()
    except BaseException as error:  # noqa: BLE001 - every failure, Ctrl-C included, stops the processes
        failed = True
        smoke.report_failure(error)
    finally:
        left = smoke.stop()
    if left:
        failed = True
        print(f"smoke: FAILED: still running after the stop: {', '.join(left)}", file=sys.stderr)
    if not failed:
        drop_database(config)
    if failed or config.keep_logs:
        say(f"logs kept in {smoke.work}")
    else:
        shutil.rmtree(smoke.work, ignore_errors=True)
    say(f"{'FAILED' if failed else 'passed'} in {time.monotonic() - smoke.started:.1f}s")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
