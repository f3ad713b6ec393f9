"""Lua scripts run on the cache's Redis: each registered once per connection pool and kept for the
process. Django's cache builds a new client around its pool on every call, which cost about as
much as the round trip itself (39 against 157 µs of CPU a call, measured in one process); the pool
is what holds the connections, the client is stateless. redis-py loads a script on its first
`NOSCRIPT` answer (a restarted Redis), so a call is one `EVALSHA`.

`sent_script` splits a call in two: the `EVALSHA` is written at once and its answer read when the
caller asks for it (`ScriptReply.result`), so that the round trip overlaps what the caller does in
between (the outbox's INSERT waits on PostgreSQL while Redis answers the sending bound)."""

from django.core.cache.backends.redis import RedisCache
from redis.exceptions import NoScriptError, RedisError

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


class ScriptReply:
    """One `EVALSHA` written on a connection taken from the pool, kept out of it until its answer
    is read: by `result()`, which every caller must reach or else call `discard()` (which closes the
    connection, its answer unread, so that no later command reads it). Not shared between threads.

    The same call as the script's own: one attempt (the pool's connections are not retried; a pooled
    connection that Redis closed is replaced by the pool before it is written to), a `NOSCRIPT`
    answer loads the script and runs it again, and an error raises the same `RedisError`."""

    __slots__ = ("_script", "_keys", "_args", "_pool", "_connection", "_error")

    def __init__(self, script, keys: list, args: list):
        self._script, self._keys, self._args = script, keys, args
        self._pool = script.registered_client.connection_pool
        self._connection = self._error = None
        try:
            connection = self._pool.get_connection()
        except RedisError as error:  # the pool released the connection it could not connect
            self._error = error
            return
        try:
            connection.send_packed_command(_packed(connection, "EVALSHA", script.sha, len(keys), *keys, *args))
        except BaseException as error:  # a failed write has closed the connection
            self._pool.release(connection)
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
            self._pool.release(connection)  # its answer was read: the connection is clean
            # Redis restarted (or was flushed) since the script was registered: load it, run it.
            client, script = self._script.registered_client, self._script
            script.sha = client.script_load(script.script)
            return client.evalsha(script.sha, len(self._keys), *self._keys, *self._args)
        except BaseException:
            self._pool.release(connection)
            raise
        self._pool.release(connection)
        return answer

    def discard(self) -> None:
        """The answer will not be read: the connection is closed, then goes back to the pool."""
        connection, self._connection = self._connection, None
        self._error = None
        if connection is not None:
            connection.disconnect()
            self._pool.release(connection)


def _packed(connection, *arguments) -> list[bytes]:
    """The command in Redis' protocol (RESP), as `connection.pack_command` writes it, for the
    arguments a script is given here (texts, whole numbers, bytes; UTF-8, redis-py's default) without
    redis-py's general packer (a sixth of the call's CPU); anything else goes to that packer."""
    if connection.encoder.encoding.lower() not in ("utf-8", "utf8"):
        return connection.pack_command(*arguments)
    parts = [b"*%d\r\n" % len(arguments)]
    for argument in arguments:
        if isinstance(argument, str):
            argument = argument.encode()
        elif isinstance(argument, int) and not isinstance(argument, bool):
            argument = b"%d" % argument
        elif not isinstance(argument, bytes):
            return connection.pack_command(*arguments)
        parts.append(b"$%d\r\n%s\r\n" % (len(argument), argument))
    return [b"".join(parts)]
