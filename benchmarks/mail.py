"""What the booking's e-mails cost `POST /v1/bookings`, measured in one process (Django's test
client through the whole middleware stack, no HTTP server, no wrk): the bench's own request with
mail on (`POST /v1/bookings`) and off (`POST /bench/nomail/bookings`), alternately on the bench's
data set (`benchmarks.seed`: its organizer, four webhooks subscribed to BOOKING_CREATED, two
connected calendars), so that a noisy machine slows both alike. Prints medians, the ratio and the
SQL statements of each; `--profile N` also profiles N mail-on requests (cProfile, cumulative);
`--kick-window 0` publishes one broker message per booking (as before the kick, docs/notifications.md).

    createdb -h 127.0.0.1 -U postgres bench_mail
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/bench_mail REDIS_URL=redis://127.0.0.1:6379/7 \\
        DJANGO_SETTINGS_MODULE=config.settings_bench .venv/bin/python -m benchmarks.mail [--rounds 200]

It seeds (wipes) that database unless `--reuse`, whose name must contain "bench" or "_w"; it
deletes the bookings it made and purges the broker's queue at the end.
"""

import argparse
import cProfile
import json
import os
import pstats
import statistics
import time

import django

ON, OFF = "/v1/bookings", "/bench/nomail/bookings"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--reuse", action="store_true", help="the database is seeded already")
    parser.add_argument("--profile", type=int, default=0, help="profile this many mail-on requests")
    parser.add_argument("--stats", default="", help="also write the profile's statistics to this file")
    parser.add_argument(
        "--kick-window",
        type=int,
        default=None,
        help="NOTIFICATIONS' KICK_WINDOW_MILLISECONDS for the requests (0: one broker message per booking)",
    )
    args = parser.parse_args()
    name = os.environ.get("DATABASE_URL", "").rsplit("/", 1)[-1]
    if "bench" not in name and "_w" not in name:
        raise SystemExit(f"Refusing to seed {name!r}: its name must contain 'bench'.")
    django.setup()
    from django.conf import settings
    from django.core.management import call_command
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    from benchmarks.seed import purge_broker, reset_created_rows, seed, seeded_caller

    if args.kick_window is not None:
        settings.NOTIFICATIONS = {**settings.NOTIFICATIONS, "KICK_WINDOW_MILLISECONDS": args.kick_window}

    call_command("migrate", verbosity=0)
    seeded = seeded_caller() if args.reuse else seed()
    reset_created_rows(seeded)
    seeded = seeded_caller()
    client = Client(HTTP_HOST="127.0.0.1", HTTP_AUTHORIZATION=f"Bearer {seeded['api_key']}")
    slots = iter(seeded["post_slots"])

    def body() -> str:
        start = next(slots)
        return json.dumps(
            {
                "eventTypeId": seeded["post_event_type_id"],
                "start": start,
                "name": f"Guest {start}",
                "email": "guest@example.com",
                "timeZone": "Europe/Berlin",
            }
        )

    cpu = {ON: [], OFF: []}

    def post(path: str) -> float:
        data = body()
        began, began_cpu = time.perf_counter(), time.process_time()
        response = client.post(path, data=data, content_type="application/json")
        elapsed, used = time.perf_counter() - began, time.process_time() - began_cpu
        assert response.status_code == 200, response.content[:500]
        cpu[path].append(used * 1000)
        return elapsed * 1000

    def statements(path: str) -> list[str]:
        with CaptureQueriesContext(connection) as captured:
            post(path)
        return [q["sql"] for q in captured.captured_queries if not q["sql"].startswith(("SAVEPOINT", "RELEASE"))]

    try:
        client.get("/v1/me")  # the key's lastUsedAt write, outside what is measured
        for _ in range(10):  # warm up: connections, prepared statements, per-process caches
            post(ON)
            post(OFF)
        counted = {path: statements(path) for path in (ON, OFF)}
        times = {ON: [], OFF: []}
        cpu[ON].clear()
        cpu[OFF].clear()
        for index in range(args.rounds):
            order = (ON, OFF) if index % 2 == 0 else (OFF, ON)
            for path in order:
                times[path].append(post(path))
        on, off = statistics.median(times[ON]), statistics.median(times[OFF])
        ratios = statistics.median(a / b for a, b in zip(times[ON], times[OFF], strict=True))
        print(f"POST /v1/bookings, mail on vs off, {args.rounds} interleaved rounds in one process")
        print(f"  mail on : median {on:6.2f} ms  {len(counted[ON])} statements")
        print(f"  mail off: median {off:6.2f} ms  {len(counted[OFF])} statements")
        print(f"  ratio of medians {on / off:.3f}; median of per-round ratios {ratios:.3f}")
        cpu_on, cpu_off = statistics.median(cpu[ON]), statistics.median(cpu[OFF])
        print(f"  this process's CPU: median {cpu_on:.2f} vs {cpu_off:.2f} ms, ratio {cpu_on / cpu_off:.3f}")
        heads_off = {sql.split("(")[0] for sql in counted[OFF]}
        extra = [sql for sql in counted[ON] if sql.split("(")[0] not in heads_off]
        for sql in extra:
            print(f"  only with mail: {sql[:160]}")
        if args.profile:
            profiler = cProfile.Profile(time.process_time)
            profiler.enable()
            for _ in range(args.profile):
                post(ON)
            profiler.disable()
            if args.stats:
                profiler.dump_stats(args.stats)
            pstats.Stats(profiler).sort_stats("cumulative").print_stats(45)
    finally:
        reset_created_rows(seeded)
        purge_broker()


if __name__ == "__main__":
    main()
