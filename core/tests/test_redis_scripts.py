"""`core.redis_scripts.sent_script`: an EVALSHA written now and read later answers as the script's
own call does, leaves its connection clean for the next command whatever happens, loads the script
on a `NOSCRIPT` answer, replaces a kept connection that Redis closed, and reports a Redis that is
away from `result()`."""

import pytest
import redis
from django.core.cache.backends.redis import RedisCache

from core.redis_scripts import registered_script, sent_script
from tests.support.outages import PrivateRedis, free_port

ECHO = "return {redis.call('INCRBY', KEYS[1], ARGV[1]), ARGV[2]}"


@pytest.fixture
def server():
    with PrivateRedis() as private:
        yield private


def backend_of(url: str) -> RedisCache:
    return RedisCache(url, {"OPTIONS": {"socket_connect_timeout": 0.5, "socket_timeout": 0.5}})


def test_the_answer_is_the_scripts_and_the_connection_goes_back_clean(server):
    backend = backend_of(server.url)
    registered_script(backend, ECHO)(keys=["counter"], args=[0, "loaded"])  # loaded, as after a first call
    first = sent_script(backend, ECHO, keys=["counter"], args=[2, "one"])
    second = sent_script(backend, ECHO, keys=["counter"], args=[3, "two"])  # a connection of its own
    assert second.result() == [5, b"two"]
    assert first.result() == [2, b"one"]
    assert backend.get_many([]) == {}  # the pool's connections answer their own commands
    assert registered_script(backend, ECHO)(keys=["counter"], args=[1, "three"]) == [6, b"three"]
    with pytest.raises(RuntimeError):
        first.result()


def test_a_discarded_answer_is_never_read_by_the_next_command(server):
    backend = backend_of(server.url)
    pool = backend._cache._get_connection_pool(write=True)
    registered_script(backend, ECHO)(keys=["counter"], args=[0, "loaded"])
    for index in range(3):
        sent_script(backend, ECHO, keys=["counter"], args=[1, f"dropped {index}"]).discard()
    # Each call above took the one idle connection: the next command gets its own answer.
    assert registered_script(backend, ECHO)(keys=["counter"], args=[10, "kept"]) == [13, b"kept"]
    assert len(pool._available_connections) == 1


def test_a_script_that_redis_lost_is_loaded_and_run_once(server):
    backend = backend_of(server.url)
    registered_script(backend, ECHO)(keys=["counter"], args=[0, "loaded"])
    redis.Redis.from_url(server.url).script_flush()  # as a restarted Redis
    assert sent_script(backend, ECHO, keys=["counter"], args=[4, "again"]).result() == [4, b"again"]
    assert sent_script(backend, ECHO, keys=["counter"], args=[1, "loaded"]).result() == [5, b"loaded"]


def test_a_redis_that_is_away_raises_from_the_result_and_one_that_restarted_answers(server):
    away = backend_of(f"redis://127.0.0.1:{free_port()}/0")
    reply = sent_script(away, ECHO, keys=["counter"], args=[1, "x"])  # does not raise
    with pytest.raises(redis.exceptions.ConnectionError):
        reply.result()

    backend = backend_of(server.url)
    assert sent_script(backend, ECHO, keys=["counter"], args=[1, "before"]).result() == [1, b"before"]
    server.stop()
    with pytest.raises(redis.exceptions.ConnectionError):
        sent_script(backend, ECHO, keys=["counter"], args=[1, "stopped"]).result()
    server.start()  # empty, and the pool's connection to the old server is dead
    assert sent_script(backend, ECHO, keys=["counter"], args=[1, "after"]).result() == [1, b"after"]


def test_a_kept_connection_that_redis_closed_is_replaced_without_an_error(server):
    """Each thread keeps its connection for scripts sent ahead; a restart closes it while it waits
    in between calls: the next call is made on a new one, once, as the pool would have done."""
    backend = backend_of(server.url)
    assert sent_script(backend, ECHO, keys=["counter"], args=[2, "before"]).result() == [2, b"before"]
    server.stop()
    server.start()  # the script is gone too: NOSCRIPT, then loaded
    assert sent_script(backend, ECHO, keys=["counter"], args=[3, "after"]).result() == [3, b"after"]
    assert sent_script(backend, ECHO, keys=["counter"], args=[1, "kept"]).result() == [4, b"kept"]
