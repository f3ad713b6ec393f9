"""One beat sends at a time (core.beat): two real `celery -A config beat` processes on the test
database; the second waits while the first holds the PostgreSQL advisory lock, and takes over once
the first is killed or loses its connection. The schedule here is a sweep every 0.2 s, and
BEAT_LOCK_CHECK_SECONDS is 0.5. What is asserted is order (who sent what, before or after what),
read from each beat's log lines and their times; how soon the takeover comes is a figure, not an
assertion (docs/operations.md, "Two beats")."""

import json
import os
import re
import signal
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import pytest
from django.db import connection

from core.beat import APPLICATION_NAME, LOCK_KEY, LOST, TAKEN
from tests.support.live_services import wait_until

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[1]
SENT = "Scheduler: Sending due task webhooks-sweep"
WAITING = "beat lock held by another beat"
LINE_TIME = re.compile(r"^\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}):")


class Beat:
    def __init__(self, name: str, directory: Path, env: dict):
        self.name = name
        self.log_path = directory / f"{name}.log"
        command = [
            str(Path(sys.executable).parent / "celery"),
            "-A",
            "config",
            "beat",
            "-l",
            "info",
            "--schedule",
            str(directory / f"{name}-schedule"),
        ]
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen(
                command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def lines(self, text: str) -> list[str]:
        return [line for line in self.log().splitlines() if text in line]

    def times(self, text: str) -> list[datetime]:
        return [datetime.strptime(LINE_TIME.match(line)[1], "%Y-%m-%d %H:%M:%S,%f") for line in self.lines(text)]

    def sent(self) -> int:
        return len(self.lines(SENT))

    def signal(self, number: int) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, number)
            self.process.wait(15)


@pytest.fixture
def beats(tmp_path, settings):
    import redis

    database = connection.settings_dict
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "webhooks.tests.worker_settings",
        "DATABASE_URL": f"postgres://{database['USER']}@{database['HOST']}:{database['PORT']}/{database['NAME']}",
        "WEBHOOKS_TEST_OVERRIDES": json.dumps({"SWEEP_INTERVAL_SECONDS": 0.2}),
        "BEAT_LOCK_CHECK_SECONDS": "0.5",
        "CONN_MAX_AGE": "0",
    }
    started: list[Beat] = []

    def start(name: str, **overrides) -> Beat:
        beat = Beat(name, tmp_path, env | overrides)
        started.append(beat)
        return beat

    yield start
    for beat in started:
        beat.signal(signal.SIGKILL)
    # What they sent is nobody's work: no worker of a later test should find it.
    redis.Redis.from_url(settings.CELERY_BROKER_URL).flushdb()


def lock_holder_pid() -> int | None:
    """The process id (as its application_name tells it) of the beat whose session holds the lock."""
    with connection.cursor() as cursor:
        # The test's transaction would otherwise keep reading its first view of pg_stat_activity.
        cursor.execute("SELECT pg_stat_clear_snapshot()")
        cursor.execute(
            "SELECT activity.application_name FROM pg_locks AS lock"
            " JOIN pg_stat_activity AS activity ON activity.pid = lock.pid"
            " WHERE lock.locktype = 'advisory' AND lock.granted AND lock.objid::bigint = %s::bigint"
            # Advisory locks belong to a database: beats of other test databases (`make test` runs
            # the API suites beside this one) hold the same key in theirs.
            " AND lock.database = (SELECT oid FROM pg_database WHERE datname = current_database())",
            [LOCK_KEY],
        )
        row = cursor.fetchone()
    return int(row[0].rsplit(":", 1)[1]) if row else None


def started_and_waiting(beats):
    first = beats("first")
    wait_until(lambda: first.lines(TAKEN), 60, "the first beat to take the lock")
    second = beats("second")
    wait_until(lambda: second.lines(WAITING), 60, "the second beat to wait for the lock")
    wait_until(lambda: first.sent() >= 3, 60, "three sweeps from the first beat")
    return first, second


def test_a_second_beat_sends_nothing_while_the_first_holds_the_lock_and_takes_over_once_it_is_killed(beats):
    first, second = started_and_waiting(beats)
    before = first.sent()
    wait_until(lambda: first.sent() >= before + 5, 60, "five more sweeps from the first beat")

    assert second.sent() == 0
    assert not second.lines(TAKEN)
    assert lock_holder_pid() == first.process.pid
    # The waiting beat names the holder as pg_stat_activity shows it, once, not at every check.
    assert [f"{APPLICATION_NAME} " in line for line in second.lines(WAITING)] == [True]

    killed_at = datetime.now().replace(microsecond=0)  # the log's times have milliseconds
    first.signal(signal.SIGKILL)
    wait_until(lambda: second.sent() >= 3, 60, "three sweeps from the second beat")

    assert lock_holder_pid() == second.process.pid
    [taken_at] = second.times(TAKEN)
    assert taken_at >= killed_at
    # One sender at a time: every sweep of the first came before the second took the lock.
    assert max(first.times(SENT)) <= taken_at <= min(second.times(SENT))


def test_a_beat_whose_connection_fails_waits_again_and_a_holder_stopped_by_sigterm_hands_back(beats):
    first, second = started_and_waiting(beats)

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name LIKE %s",
            [f"{APPLICATION_NAME} %:{first.process.pid}"],
        )
        assert cursor.fetchone() == (True,)
    wait_until(lambda: first.lines("beat lock lost"), 60, "the first beat to notice")
    wait_until(lambda: second.sent() >= 3, 60, "three sweeps from the second beat")
    wait_until(lambda: first.lines(WAITING), 60, "the first beat to wait for the lock again")

    assert lock_holder_pid() == second.process.pid
    [lost] = first.lines("beat lock lost")
    assert lost.split("] ", 1)[1].startswith(LOST.split(" (")[0])
    # Nothing sent by the first once it saw its connection fail.
    log = first.log()
    assert SENT not in log[log.index(lost) :]

    second.signal(signal.SIGTERM)  # a warm stop: its connection closes, the lock with it

    assert second.process.returncode == 0
    wait_until(lambda: len(first.times(TAKEN)) == 2, 60, "the first beat to take the lock again")
    wait_until(lambda: first.times(SENT)[-1] > first.times(TAKEN)[1], 60, "a sweep from the first beat again")
    assert lock_holder_pid() == first.process.pid
    assert max(second.times(SENT)) <= first.times(TAKEN)[1]


def test_a_check_interval_not_above_zero_stops_the_beat_before_it_sends(beats):
    beat = beats("refused", BEAT_LOCK_CHECK_SECONDS="0")

    beat.process.wait(60)

    assert beat.process.returncode != 0
    assert "BEAT_LOCK_CHECK_SECONDS must be a number of seconds above 0, not 0.0." in beat.log()
    assert beat.sent() == 0
    assert lock_holder_pid() is None


def test_check_interval_setting_must_be_a_positive_number(settings):
    from django.core.exceptions import ImproperlyConfigured

    from core.beat import check_seconds

    for refused in ("5", 0, -1.5):
        settings.BEAT_LOCK_CHECK_SECONDS = refused
        with pytest.raises(ImproperlyConfigured, match=f"above 0, not {refused!r}"):
            check_seconds()
    settings.BEAT_LOCK_CHECK_SECONDS = 0.25
    assert check_seconds() == 0.25


def test_the_app_schedules_with_the_locked_scheduler():
    from config.celery import app

    assert app.conf.beat_scheduler == "core.beat:LockedScheduler"
