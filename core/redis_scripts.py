"""Lua scripts run on the cache's Redis: each registered once per connection pool and kept for the
process. Django's cache builds a new client around its pool on every call, which cost about as
much as the round trip itself (39 against 157 µs of CPU a call, measured in one process); the pool
is what holds the connections, the client is stateless. redis-py loads a script on its first
`NOSCRIPT` answer (a restarted Redis), so a call is one `EVALSHA`.

`sent_script` splits a call in two: the `EVALSHA` is written at once and its answer read when the
caller asks for it (`ScriptReply.result`), so that the round trip overlaps what the caller does in
between (the outbox's INSERT waits on PostgreSQL while Redis answers the sending bound), on a
connection each thread keeps for it."""

import os
import threading

from django.core.cache.backends.redis import RedisCache
from redis.exceptions import ConnectionError, NoScriptError, RedisError, ResponseError

_SCRIPTS: dict = {}


def registered_script(backend: RedisCache, source: str):
    """The script `source` on `backend`'s write pool, callable as `script(keys=[…], args=[…])`."""
    pool = backend._cache._get_connection_pool(write=True)
    script = _SCRIPTS.get((pool, source))
    if script is None:
        client = backend._cache._client(connection_pool=pool)
        script = _SCRIPTS[(pool, source)] = client.register_script(source)
    return script


def sent_script(backend: RedisCache, source: str, *, keys: list, args: list) -> "ScriptReply":
    """`registered_script(backend, source)(keys=keys, args=args)`, sent now, answered by
    `result()`. Nothing is raised here: a Redis that cannot be reached raises from `result()`."""
    return ScriptReply(registered_script(backend, source), keys, args)


class _Kept(threading.local):
    """Each thread's connection (per pool) for scripts sent ahead: taken from the pool once and kept
    out of it, because checking a connection out and in costs more than the round trip's own work in
    a request (the pool's lock, its connection check and its bookkeeping: 100 µs of CPU of a cold
    booking request against 35 for the write, measured in one process)."""

    def __init__(self):
        self.connections: dict = {}  # pool -> the connection
        self.busy: set = set()  # pools whose connection has an answer not read yet


_kept = _Kept()


class ScriptReply:
    """One `EVALSHA` written now, its answer read by `result()`, which every caller must reach or
    else call `discard()`. Not shared between threads. It goes on the thread's kept connection of
    the pool (or, while that one has an answer unread, on a connection of the pool's as any call).

    The same call as the script's own: one attempt, except that a kept connection which turns out
    to be closed (Redis restarted, or Sentinel's previous primary refused the write) is replaced and
    the call made once more, as the pool would have replaced it before the write; a `NOSCRIPT`
    answer loads the script and runs it again; an error raises the same `RedisError`."""

    __slots__ = ("_script", "_keys", "_args", "_pool", "_connection", "_kept", "_reused", "_error")

    def __init__(self, script, keys: list, args: list):
        self._script, self._keys, self._args = script, keys, args
        self._pool = script.registered_client.connection_pool
        self._send()

    def _send(self) -> None:
        self._connection = self._error = None
        self._kept = self._reused = False
        pool = self._pool
        connection = None
        try:
            if pool not in _kept.busy:
                connection = _kept.connections.get(pool)
                if connection is not None and connection.pid != os.getpid():
                    del _kept.connections[pool]  # inherited over a fork: the child takes its own
                    connection = None
                self._reused = connection is not None
                if connection is None:
                    connection = _kept.connections[pool] = pool.get_connection()
                _kept.busy.add(pool)
                self._kept = True
            else:
                connection = pool.get_connection()
            script, keys = self._script, self._keys
            connection.send_command("EVALSHA", script.sha, len(keys), *keys, *self._args)
        except BaseException as error:  # a failed write has closed the connection
            if connection is not None:
                self._drop(connection)
            elif self._kept:
                _kept.busy.discard(pool)
            if self._reused and isinstance(error, ConnectionError):
                return self._send()  # a fresh connection, from the pool
            if not isinstance(error, RedisError):
                raise
            self._error = error
            return
        self._connection = connection

    def result(self):
        """The script's answer (raising its error, or the connection's)."""
        connection, self._connection = self._connection, None
        if connection is None:
            if self._error is None:
                raise RuntimeError("The answer of this script was read or discarded already.")
            error, self._error = self._error, None
            raise error
        try:
            answer = connection.read_response()  # a failed read has closed the connection
        except NoScriptError:
            self._give_back(connection)  # its answer was read: the connection is clean
            # Redis restarted (or was flushed) since the script was registered: load it, run it.
            client, script = self._script.registered_client, self._script
            script.sha = client.script_load(script.script)
            return client.evalsha(script.sha, len(self._keys), *self._keys, *self._args)
        except ResponseError:
            self._give_back(connection)  # the script's own error: its answer was read
            raise
        except BaseException as error:
            self._drop(connection)
            if self._reused and isinstance(error, ConnectionError):
                self._send()  # closed while kept: the call once more, on a fresh connection
                return self.result()
            raise
        self._give_back(connection)
        return answer

    def discard(self) -> None:
        """The answer will not be read: the connection is closed (it goes back to the pool)."""
        connection, self._connection = self._connection, None
        self._error = None
        if connection is not None:
            self._drop(connection)

    def _give_back(self, connection) -> None:
        if self._kept:
            _kept.busy.discard(self._pool)
        else:
            self._pool.release(connection)

    def _drop(self, connection) -> None:
        connection.disconnect()
        if self._kept:
            _kept.busy.discard(self._pool)
            if _kept.connections.get(self._pool) is connection:
                del _kept.connections[self._pool]
        self._pool.release(connection)


def scripts_in_one_trip(script, calls: list[tuple[list, list]]) -> list:
    """`script(keys=keys, args=args)` for each (keys, args) of `calls`, in order and in one round
    trip, answered in order. redis-py's pipeline asks `SCRIPT EXISTS` before every pipeline that
    holds a script (a round trip more each time); here each call is its `EVALSHA`, and the calls
    answered `NOSCRIPT` (Redis restarted or flushed since the script was registered) are run
    again, in order, after the script is loaded: those only, since the others ran. An error of
    the script's own raises, as the pipeline's would, after every call has been answered."""
    client = script.registered_client
    pipeline = client.pipeline(transaction=False)
    for keys, args in calls:
        pipeline.execute_command("EVALSHA", script.sha, len(keys), *keys, *args)
    answers = pipeline.execute(raise_on_error=False)
    missing = [index for index, answer in enumerate(answers) if isinstance(answer, NoScriptError)]
    if missing:
        script.sha = client.script_load(script.script)
        again = client.pipeline(transaction=False)
        for index in missing:
            keys, args = calls[index]
            again.execute_command("EVALSHA", script.sha, len(keys), *keys, *args)
        for index, answer in zip(missing, again.execute(raise_on_error=False), strict=True):
            answers[index] = answer
    for answer in answers:
        if isinstance(answer, Exception):
            raise answer
    return answers
