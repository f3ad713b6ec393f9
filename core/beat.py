"""Celery beat that runs alone: a PostgreSQL session-level advisory lock, held on a connection of its
own, decides which beat sends the schedule (docs/operations.md, "Two beats").

Every beat runs this scheduler (the app's default, config/celery.py): `celery -A config beat` and a
worker's embedded beat (`-B`) alike. The one that takes the lock sends the schedule as Celery's
PersistentScheduler does; any other sends nothing and tries again every BEAT_LOCK_CHECK_SECONDS.
PostgreSQL releases a session's advisory locks when the session ends, so a beat that stops, is
killed or crashes hands over within one check interval: its connection closes with its process.
A host that vanishes without closing it (power, network) is noticed by PostgreSQL's TCP keepalives,
which the lock's session sets to about three check intervals.

The holder checks its connection with one round trip before each tick that may send, and at least
once per check interval: a beat whose connection failed (a failover, a restarted server, a cut
network) may have lost the lock to another, so it sends nothing more and goes back to waiting.

The lock is scoped to the database: every beat of one deployment competes for it, and deployments
on other databases do not. It needs a session of its own on PostgreSQL itself (or a session-mode
pooler): behind PgBouncer in transaction mode, point BEAT_LOCK_DATABASE_URL at PostgreSQL directly.
"""

import logging
import os
import socket
import zlib

import psycopg
from celery.beat import PersistentScheduler
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

logger = logging.getLogger(__name__)

# One key for the whole service; `pg_locks.objid` shows it (classid 0, objsubid 1).
LOCK_KEY = zlib.crc32(b"scheduling:celery-beat")
# How the lock's session shows in pg_stat_activity (PostgreSQL keeps the first 63 bytes).
APPLICATION_NAME = "scheduling beat lock"

TAKEN = "beat lock taken: this beat sends the schedule"
WAITING = "beat lock held by another beat (%s): sending nothing, checking every %s s"
LOST = "beat lock lost (its database connection failed: %s): sending nothing until it is taken again"
UNREACHABLE = "beat lock: the database cannot be reached (%s): sending nothing, checking every %s s"


def check_seconds() -> float:
    value = settings.BEAT_LOCK_CHECK_SECONDS
    if not isinstance(value, int | float) or not value > 0:
        raise ImproperlyConfigured(f"BEAT_LOCK_CHECK_SECONDS must be a number of seconds above 0, not {value!r}.")
    return float(value)


def connect(check: float) -> psycopg.Connection:
    """A connection of the lock's own, in autocommit, named in pg_stat_activity, with TCP keepalives
    on both ends so that a dead peer is noticed within about three check intervals."""
    interval = max(1, round(check))
    options = {
        "autocommit": True,
        "application_name": f"{APPLICATION_NAME} {socket.gethostname()}:{os.getpid()}"[:63],
        "keepalives": 1,
        "keepalives_idle": interval,
        "keepalives_interval": interval,
        "keepalives_count": 2,
        "tcp_user_timeout": 3 * interval * 1000,
    }
    if settings.BEAT_LOCK_DATABASE_URL:
        connection = psycopg.connect(settings.BEAT_LOCK_DATABASE_URL, connect_timeout=max(2, interval), **options)
    else:
        from django.db import connections

        params = connections["default"].get_connection_params()
        for python_only in ("cursor_factory", "context", "prepare_threshold"):
            params.pop(python_only, None)
        connection = psycopg.connect(**params, **options)
    # The server's side of the same keepalives (ignored on a Unix socket, where a dead peer is seen at once).
    for name, value in (
        ("tcp_keepalives_idle", interval),
        ("tcp_keepalives_interval", interval),
        ("tcp_keepalives_count", 2),
        ("tcp_user_timeout", 3 * interval * 1000),
    ):
        connection.execute(f"SET {name} = {int(value)}")
    return connection


def holder(connection: psycopg.Connection) -> str:
    """Who holds the lock, as pg_stat_activity names it (for the waiting beat's log line)."""
    row = connection.execute(
        "SELECT activity.application_name, activity.client_addr::text FROM pg_locks AS lock"
        " JOIN pg_stat_activity AS activity ON activity.pid = lock.pid"
        " WHERE lock.locktype = 'advisory' AND lock.granted AND lock.classid = 0"
        " AND lock.objid::bigint = %s::bigint AND lock.objsubid = 1"
        " AND lock.database = (SELECT oid FROM pg_database WHERE datname = current_database())",
        [LOCK_KEY],
    ).fetchone()
    if row is None:
        return "unknown"
    name, address = row
    return f"{name or 'unnamed'} from {address or 'a local socket'}"


class LockedScheduler(PersistentScheduler):
    """PersistentScheduler that sends only while it holds the beat lock."""

    def __init__(self, *args, **kwargs):
        self.check_seconds = check_seconds()
        self._connection: psycopg.Connection | None = None
        self._held = False
        self._reported = None
        super().__init__(*args, **kwargs)

    def tick(self, *args, **kwargs):
        if not self._lock_is_ours():
            return self.check_seconds
        return min(super().tick(*args, **kwargs), self.check_seconds)

    def close(self):
        try:
            super().close()
        finally:
            self._disconnect()

    def _lock_is_ours(self) -> bool:
        try:
            if self._connection is None:
                self._connection = connect(self.check_seconds)
            if self._held:
                self._connection.execute("SELECT 1")
                return True
            taken = self._connection.execute("SELECT pg_try_advisory_lock(%s::bigint)", [LOCK_KEY]).fetchone()[0]
        except psycopg.Error as error:
            if self._held:
                logger.error(LOST, error)
            elif self._reported != "unreachable":
                logger.warning(UNREACHABLE, error, self.check_seconds)
            self._reported = "unreachable"
            self._disconnect()
            return False
        if taken:
            self._held, self._reported = True, None
            logger.info(TAKEN)
            return True
        if self._reported != "waiting":  # once, not at every check
            logger.info(WAITING, self._holder(), self.check_seconds)
        self._reported = "waiting"
        return False

    def _holder(self) -> str:
        try:
            return holder(self._connection)
        except psycopg.Error:  # only the log line's detail
            return "unknown"

    def _disconnect(self) -> None:
        connection, self._connection, self._held = self._connection, None, False
        if connection is not None:
            try:
                connection.close()
            except psycopg.Error:
                pass
