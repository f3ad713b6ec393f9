"""`python -m benchmarks.rate_limit`: the cost of counting one request, the sliding window's Lua
script (core.ratelimit, one EVALSHA) next to the fixed window it replaced (a pipeline of SET NX EX
and INCR, also one round trip), on the Redis of REDIS_URL (default db 7, as `make bench`). Prints
figures; asserts nothing. BENCH_CALLS (20000) sets the number of calls of each, spread over 200
credentials; BENCH_BUDGET (600) the budget, also how many members a full window's sorted set holds
(the last line: a credential at its budget, refused).
"""

import itertools
import os
import statistics
import time

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings_test")
os.environ.setdefault("REDIS_URL", "redis://127.0.0.1:6379/7")

import django  # noqa: E402

django.setup()

from django.core.cache import caches  # noqa: E402

from core import ratelimit  # noqa: E402

CALLS = int(os.environ.get("BENCH_CALLS", "20000"))
BUDGET = int(os.environ.get("BENCH_BUDGET", "600"))


def fixed_window(client, key: str) -> int:
    window = int(time.time() // 60)
    pipeline = client.pipeline(transaction=False)
    pipeline.set(f"{key}:{window}", 0, ex=65, nx=True)
    pipeline.incr(f"{key}:{window}")
    return pipeline.execute()[1]


def measure(name: str, call) -> None:
    for _ in range(500):
        call()
    samples = []
    for _ in range(CALLS):
        started = time.perf_counter()
        call()
        samples.append((time.perf_counter() - started) * 1e6)
    samples.sort()
    p50, p99 = samples[len(samples) // 2], samples[int(len(samples) * 0.99)]
    print(f"{name:<44} mean {statistics.fmean(samples):7.1f} µs   p50 {p50:7.1f} µs   p99 {p99:7.1f} µs")


def main() -> None:
    backend = caches["default"]
    client = backend._cache.get_client(write=True)
    credentials = itertools.cycle(range(200))
    print(f"{CALLS} calls each on {os.environ['REDIS_URL']}, budget {BUDGET}/min")
    measure("fixed window (pipeline SET NX + INCR)", lambda: fixed_window(client, f"bench:fixed:{next(credentials)}"))
    measure(
        "sliding window, counting (EVALSHA)",
        lambda: ratelimit.consume(f"bench:sliding:{next(credentials)}", BUDGET, window=60),
    )
    for _ in range(BUDGET):
        ratelimit.consume("bench:full", BUDGET, window=60)
    measure(f"sliding window, refusing ({BUDGET} members)", lambda: ratelimit.consume("bench:full", BUDGET, window=60))
    for pattern in ("bench:fixed:*", backend.make_key("bench:*")):
        for key in client.scan_iter(pattern):
            client.delete(key)


if __name__ == "__main__":
    main()
