"""`core.redis_scripts.sent_script`: an EVALSHA written now and read later answers as the script's
own call does, leaves its connection clean for the next command whatever happens, loads the script
on a `NOSCRIPT` answer, replaces a kept connection that Redis closed, and reports a Redis that is
away from `result()`. `scripts_in_one_trip`: a pipeline of EVALSHAs without redis-py's `SCRIPT
EXISTS` before it, which runs again only the calls a flushed Redis answered `NOSCRIPT`."""

import pytest
import redis
from django.core.cache.backends.redis import RedisCache

from core.redis_scripts import registered_script, scripts_in_one_trip, sent_script
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


def commands_run(client) -> dict:
    return {name: stats["calls"] for name, stats in client.info("commandstats").items()}


def test_scripts_in_one_trip_answer_in_order_with_no_script_exists(server):
    client = redis.Redis.from_url(server.url)
    script = client.register_script(ECHO)
    script(keys=["counter"], args=[0, "loaded"])
    before = commands_run(client)
    answers = scripts_in_one_trip(script, [(["counter"], [1, "a"]), (["other"], [5, "b"]), (["counter"], [2, "c"])])
    after = commands_run(client)
    assert answers == [[1, b"a"], [5, b"b"], [3, b"c"]]
    assert after["cmdstat_evalsha"] - before["cmdstat_evalsha"] == 3
    assert after.get("cmdstat_script|exists", 0) == before.get("cmdstat_script|exists", 0)
    assert after.get("cmdstat_script|load", 0) == before.get("cmdstat_script|load", 0)


def test_scripts_in_one_trip_after_a_flush_load_the_script_and_run_each_call_once(server):
    client = redis.Redis.from_url(server.url)
    script = client.register_script(ECHO)
    script(keys=["counter"], args=[0, "loaded"])
    client.script_flush()
    answers = scripts_in_one_trip(script, [(["counter"], [1, "a"]), (["counter"], [2, "b"])])
    assert answers == [[1, b"a"], [3, b"b"]]
    assert int(client.get("counter")) == 3  # each ran once: none twice, none lost
    assert scripts_in_one_trip(script, [(["counter"], [4, "c"])]) == [[7, b"c"]]


def test_scripts_in_one_trip_raise_the_scripts_own_error_after_every_call_ran(server):
    client = redis.Redis.from_url(server.url)
    script = client.register_script(ECHO)
    client.set("text", "not a number")
    with pytest.raises(redis.ResponseError, match="not an integer"):
        scripts_in_one_trip(script, [(["counter"], [1, "a"]), (["text"], [1, "b"]), (["counter"], [2, "c"])])
    assert int(client.get("counter")) == 3
