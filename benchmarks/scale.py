"""`make bench-scale` (`python -m benchmarks.scale`): what the API's hot requests cost as the data
grows, from 10^3 bookings to 10^5 (and 10^7 on demand: `BENCH_SCALE_MAX=7`); and the busy organizers,
who own 10^5 bookings (each with an attendee) of a database of 200,000 (`<name>_mid`) and 10^6 of a
database of two million (`<name>_big`), beside the lone organizer of the 10^3 database, call by
call (`BENCH_SCALE_BIG=0` leaves them out: the big database takes about a quarter of an hour to seed).

For each size one database `<name>_<exponent>` is (re)created and migrated, given the benchmark
caller of `make bench` (`benchmarks.seed`: 2,000 bookings, 500 of them in a 31-day window, 20
webhooks) and then the installation around it (`benchmarks.scale_seed`: N bookings and attendees,
N/2 payments, N deliveries with their attempts, N/10 users in teams of up to 1,000, written by
PostgreSQL with generate_series), plus N/2 deliveries of one of the caller's webhooks. A system
administrator's API key reads the bookings and payments lists (they see all N rows); the caller's
key reads their webhook's delivery log, their own bookings and slots.

Each line is timed in-process through Django's test client (`benchmarks.databases.timed`: the
application's and the database's time, without a network or a server's queue): one warm-up, then
the median of `--runs`. Deep pages are page min(1,000, last full page) of 100 rows, by `page=` and
by the cursor (`after=`) that leads to the same rows. The sweeper runs (claiming up to 500 due
deliveries) and the retention purge (every finished delivery past 30 days, in batches of 1,000;
shown per batch) are timed inside a transaction that is then rolled back, so every run sees the
same data.

BENCH_SCALE_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/sched_bench_scale) names the
databases; the name must contain "bench" (they are dropped and re-created unless `--reuse`).
The line "the primary's CPU per booking" is the CPU time of the PostgreSQL backend serving the
requests (from /proc: the server must run on this machine) and the WAL written, per booking, over
200 POSTs: what one booking costs the primary, whose capacity it gives (docs/operations.md).
`--reuse` measures the databases an earlier run left (seeding only the missing sizes), after
removing the bookings that run's POSTs made.

REDIS_URL as for the tests. Prints a Markdown table (docs/benchmarks.md records them) and, with
`--chart PATH`, draws the curve (milliseconds against bookings, both logarithmic) if matplotlib is
installed (`make bench` installs it).
"""

import argparse
import os
import statistics
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import urlencode

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings_test")
os.environ.setdefault("RATE_LIMIT_PER_MINUTE", str(10**9))  # timed, not refused
DATABASE_URL = os.environ.get("BENCH_SCALE_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/sched_bench_scale")
os.environ["DATABASE_URL"] = DATABASE_URL

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402

# Timed, not refused: the bound on queued mails per organizer and key (counted in Redis, where
# `make bench`'s thousands of bookings by the same seeded caller may still be counted).
settings.NOTIFICATIONS = {
    **getattr(settings, "NOTIFICATIONS", {}),
    "MAX_PER_ORGANIZER_PER_HOUR": 10**9,
    "MAX_PER_API_KEY_PER_HOUR": 10**9,
}

from django.core.management import call_command  # noqa: E402
from django.db import connection, transaction  # noqa: E402
from django.test import Client  # noqa: E402
from django.test.utils import setup_test_environment  # noqa: E402

from accounts.models import User, UserRole  # noqa: E402
from accounts.services import api_key_create  # noqa: E402
from benchmarks.databases import exists, median_ms, recreate, timed, use_database  # noqa: E402
from benchmarks.scale_seed import give_bookings, give_rows, seed_scale  # noqa: E402
from benchmarks.seed import POST_WINDOW_DAYS, purge_broker, seeded_caller  # noqa: E402
from benchmarks.seed import seed as seed_caller  # noqa: E402
from payments.models import Payment  # noqa: E402
from payments.selectors import payment_list  # noqa: E402
from scheduling.models import Attendee, Booking  # noqa: E402
from scheduling.selectors.bookings import booking_list  # noqa: E402
from webhooks.delivery import sweep  # noqa: E402
from webhooks.models import Webhook, WebhookDelivery  # noqa: E402
from webhooks.retention import purge_old_deliveries  # noqa: E402
from webhooks.selectors import delivery_list  # noqa: E402

TAKE = 100
DEEP_PAGE = 1000
PURGE_BATCHES = 20  # the purge is timed over this many batches (or fewer, at the small sizes)
# The busy organizer's database: the caller owns BIG_OWN of its bookings (each with an attendee, whose
# address is one of BIG_OWN / BIG_GUEST_BOOKINGS), in an installation of BIG_INSTALLATION more.
BIG_INSTALLATION = 10**6
BIG_OWN = 10**6
# And the organizer of a tenth as many: BIG_OWN / 10 of their own in an installation of as many more
# (`<name>_mid`).
MID_OWN = MID_INSTALLATION = 10**5
BIG_GUEST_BOOKINGS = 50
BIG_DEEP_PAGE = 2000  # of 500 rows: a million rows in, where the busy organizer's list still goes on
DATABASE_COST_BOOKINGS = 200  # POSTs over which the primary's CPU (10-ms ticks) and WAL are read


def prepare(name: str, bookings: int) -> dict:
    """(Re)create database `name` at `bookings` bookings; returns what `benchmarks.seed` returns."""
    recreate(DATABASE_URL, [name])
    use_database(name)
    started = time.monotonic()
    call_command("migrate", verbosity=0)
    caller = seed_caller(stdout=sys.stderr)
    seed_scale(bookings)
    user = User.objects.get(pk=caller["user_id"])
    webhook = Webhook.objects.filter(user=user).order_by("created_at", "id").first()
    delivery = WebhookDelivery.objects.create(
        webhook=webhook,
        trigger_event="BOOKING_CREATED",
        payload={},
        event_created_at=webhook.created_at,
        message_id="msg_scale_0",
        status="succeeded",
    )
    booking = Booking.objects.filter(organizer=user).order_by("id").first()
    payment = Payment.objects.filter(booking__organizer=user).order_by("id").first()
    give_rows(booking=booking, payment=payment, delivery=delivery, bookings=0, deliveries=bookings // 2)
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE")
        cursor.execute("CHECKPOINT")  # as in `prepare_big`
    print(f"{name}: seeded {bookings:,} bookings in {time.monotonic() - started:.0f} s", file=sys.stderr)
    return caller


def prepare_big(name: str, installation: int = BIG_INSTALLATION, own: int = BIG_OWN) -> dict:
    """(Re)create database `name` for the busy organizer: the installation at `installation`
    bookings around `benchmarks.seed`'s caller, who is then given `own` more bookings of their
    own, each with an attendee (`give_bookings`)."""
    caller = prepare(name, installation)
    started = time.monotonic()
    give_bookings(organizer_id=caller["user_id"], bookings=own, guests=own // BIG_GUEST_BOOKINGS)
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE")
        # The seed's gigabytes of writes flushed now, not by a checkpoint during the timed calls:
        # a write's commit waits on the disk, and POST /bookings measured 13x in the minutes after
        # seeding (1.0x on the same databases once they had rested).
        cursor.execute("CHECKPOINT")
    print(f"{name}: gave the caller {own:,} bookings in {time.monotonic() - started:.0f} s", file=sys.stderr)
    return caller


def reuse(name: str) -> dict | None:
    """The caller of database `name` as an earlier run seeded it, with the bookings that run's POSTs
    made (and their deliveries) removed; None when there is no such database."""
    if not exists(DATABASE_URL, name):
        return None
    use_database(name)
    call_command("migrate", interactive=False, verbosity=0)  # seeded by an earlier version, perhaps
    caller = seeded_caller()
    # What POSTs made: bookings of the POST event type from the start of its window (the seeded
    # ones are all in the past), and the outbox rows written from the first of them on.
    window = datetime.fromisoformat(caller["busy_window"][0]).replace(tzinfo=UTC) + timedelta(days=POST_WINDOW_DAYS)
    made = Booking.objects.filter(event_type_id=caller["post_event_type_id"], start_time__gte=window)
    first = made.order_by("created_at").values_list("created_at", flat=True).first()
    if first is not None:
        WebhookDelivery.objects.filter(webhook__user_id=caller["user_id"], created_at__gte=first).delete()
        made.delete()
    return seeded_caller()  # the POST slots those bookings held are free again


def backend_cpu_ms() -> float:
    """CPU time (user + system) that this connection's PostgreSQL backend has used, read from
    /proc: the benchmark's server runs on this machine."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        (pid,) = cursor.fetchone()
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")  # utime, stime


def wal_position() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_current_wal_lsn() - '0/0'")
        return int(cursor.fetchone()[0])


def api_client(user) -> Client:
    _, raw_key = api_key_create(user=user, note="bench-scale")
    return Client(headers={"authorization": f"Bearer {raw_key}"})


def deep_urls(client: Client, path: str, query: dict) -> tuple[str, str, int]:
    """The deep page by `page=` and by `after=` (the same rows), and its number."""
    first = client.get(f"{path}?{urlencode(query)}").json()["pagination"]
    page = min(DEEP_PAGE, max(1, first["total"] // TAKE))  # a full page: the same rows as the first
    by_page = f"{path}?{urlencode({**query, 'page': page})}"
    if page == 1:
        return by_page, f"{path}?{urlencode(query)}", page
    before = client.get(f"{path}?{urlencode({**query, 'page': page - 1})}").json()["pagination"]
    return by_page, f"{path}?{urlencode({**query, 'after': before['nextCursor']})}", page


def rolled_back(run, repeats: int) -> tuple[float, int]:
    """Median milliseconds of `run()` inside a transaction that is rolled back, and its result."""
    durations, result = [], 0
    for _ in range(repeats):
        with transaction.atomic():
            started = time.perf_counter()
            result = run()
            durations.append((time.perf_counter() - started) * 1000)
            transaction.set_rollback(True)
    return statistics.median(durations), result


def post_bookings(client: Client, caller: dict, runs: int) -> tuple[float, float, int]:
    """The median milliseconds of one POST /v1/bookings (of `runs` after a warm-up) and, over
    DATABASE_COST_BOOKINGS more, what each cost the PostgreSQL primary: its backend's CPU
    milliseconds and the bytes of WAL written."""
    slots = iter(caller["post_slots"])

    def post(index: int) -> None:
        body = {
            "eventTypeId": caller["post_event_type_id"],
            "start": next(slots),
            "name": f"Guest {index}",
            "email": f"guest{index}@example.com",
            "timeZone": "Europe/Berlin",
        }
        response = client.post("/v1/bookings", body, content_type="application/json")
        assert response.status_code == 200, response.content

    post(0)
    durations = []
    for index in range(1, runs + 1):
        started = time.perf_counter()
        post(index)
        durations.append((time.perf_counter() - started) * 1000)
    cpu, wal = backend_cpu_ms(), wal_position()
    for index in range(runs + 1, runs + 1 + DATABASE_COST_BOOKINGS):
        post(index)
    cpu, wal = backend_cpu_ms() - cpu, wal_position() - wal
    return statistics.median(durations), cpu / DATABASE_COST_BOOKINGS, wal // DATABASE_COST_BOOKINGS


def measure(caller: dict, runs: int) -> dict[str, tuple[float, str]]:
    """Each line's median milliseconds and a note, on the current database."""
    user = User.objects.get(pk=caller["user_id"])
    administrator, _ = User.objects.get_or_create(
        username="bench-admin", defaults={"email": "bench-admin@example.com", "role": UserRole.ADMIN}
    )
    admin, organizer = api_client(administrator), api_client(user)
    webhook_id = WebhookDelivery.objects.get(message_id="msg_scale_0").webhook_id
    lines: dict[str, tuple[float, str]] = {}
    lists = [
        ("bookings", admin, "/v1/bookings"),
        ("payments", admin, "/v1/payments"),
        ("deliveries", organizer, f"/v1/webhooks/{webhook_id}/deliveries"),
    ]
    webhook = Webhook.objects.get(pk=webhook_id)
    counted = {  # what each list's `pagination.total` counts: the physical part of its first page
        "bookings": booking_list(user=administrator),
        "payments": payment_list(user=administrator),
        "deliveries": delivery_list(webhook=webhook),
    }
    for label, client, path in lists:
        query = {"take": TAKE}
        first_ms, status, _ = timed(client, f"{path}?{urlencode(query)}", runs)
        assert status == 200, (path, status)
        by_page, by_cursor, page = deep_urls(client, path, query)
        lines[f"{label}: first page"] = (first_ms, "")
        lines[f"{label}: the COUNT of its total alone"] = (median_ms(counted[label].count, runs), "")
        lines[f"{label}: deep page, page="] = (timed(client, by_page, runs)[0], f"page {page:,}")
        lines[f"{label}: deep page, after="] = (timed(client, by_cursor, runs)[0], f"page {page:,}")
    lines["bookings: an organizer's first page (2,000 own)"] = (timed(organizer, "/v1/bookings?take=100", runs)[0], "")
    busy = caller["busy_window"]
    slots = f"/v1/slots?eventTypeId={caller['slots_event_type_id']}&startTime={busy[0]}&endTime={busy[1]}"
    lines["slots: 31 days, 500 bookings"] = (timed(organizer, slots, runs)[0], "")
    post_ms, database_ms, wal_bytes = post_bookings(organizer, caller, runs)
    lines["POST /v1/bookings"] = (post_ms, "")
    lines["POST /v1/bookings: the primary's CPU per booking"] = (database_ms, f"{wal_bytes:,} B of WAL")
    sweep_ms, claimed = rolled_back(sweep, runs)
    lines["sweeper: one run"] = (sweep_ms, f"{claimed} claimed")
    purge_ms, purged = rolled_back(lambda: purge_old_deliveries(batch_size=1000, max_batches=PURGE_BATCHES), 1)
    batches = max(-(-purged // 1000), 1)
    lines["purge: one batch of 1,000"] = (purge_ms / batches, f"{purged:,} purged in {batches} batches")
    purge_broker()
    return lines


def organizer_lines(caller: dict, runs: int) -> dict[str, tuple[float, str]]:
    """The lines of one organizer's own calls (`BIG_LINES`), on the current database: their lists
    as they read them, /v1/me, 31 days of slots and POST /v1/bookings."""
    user = User.objects.get(pk=caller["user_id"])
    client = api_client(user)
    guest = Attendee.objects.filter(booking__organizer=user).order_by("-booking_id").values_list("email", flat=True)
    total = Booking.objects.filter(organizer=user).count()
    deep = min(BIG_DEEP_PAGE, total // 500)  # a full page of 500
    before = client.get(f"/v1/bookings?take=500&page={deep - 1}").json()["pagination"] if deep > 1 else None
    busy = caller["busy_window"]
    paths = {
        "GET /v1/bookings?take=50 (first page)": "/v1/bookings?take=50",
        "GET /v1/bookings?take=50&attendeeEmail=…": f"/v1/bookings?take=50&{urlencode({'attendeeEmail': guest[0]})}",
        "GET /v1/bookings?take=500": "/v1/bookings?take=500",
        "GET /v1/bookings?take=500&page=N": f"/v1/bookings?take=500&page={deep}",
        "GET /v1/bookings?take=500&after= (page N)": f"/v1/bookings?take=500&after={before['nextCursor']}"
        if before
        else "/v1/bookings?take=500",
        "GET /v1/bookings?take=50&status=cancelled": "/v1/bookings?take=50&status=cancelled",
        "GET /v1/bookings?status=upcoming": "/v1/bookings?status=upcoming",
        "GET /v2/bookings?take=50": "/v2/bookings?take=50",
        "GET /v1/me": "/v1/me",
        "GET /v1/slots (31 days)": f"/v1/slots?eventTypeId={caller['slots_event_type_id']}&startTime={busy[0]}"
        f"&endTime={busy[1]}",
    }
    lines = {}
    for line, path in paths.items():
        milliseconds, status, _ = timed(client, path, runs)
        assert status == 200, (path, status)
        lines[line] = (milliseconds, f"page {deep:,}" if "page=N" in line or "page N" in line else "")
    lines["POST /v1/bookings"] = (post_bookings(client, caller, runs)[0], "")
    purge_broker()
    return lines


def big_organizer_table(base: str, runs: int, reuse_databases: bool) -> None:
    """The busy organizers (MID_OWN and BIG_OWN bookings of their own) beside the lone one of the
    10^3 database (2,000 bookings of their own), line by line, with the ratios."""
    small_name, mid_name, big_name = f"{base}_3", f"{base}_mid", f"{base}_big"
    small = (reuse(small_name) if reuse_databases else None) or prepare(small_name, 10**3)
    alone = organizer_lines(small, runs)
    mid = (reuse(mid_name) if reuse_databases else None) or prepare_big(mid_name, MID_INSTALLATION, MID_OWN)
    middle = organizer_lines(mid, runs)
    big = (reuse(big_name) if reuse_databases else None) or prepare_big(big_name)
    busy = organizer_lines(big, runs)
    print(
        f"\nThe busy organizers ({MID_OWN:,} bookings of their own among {MID_INSTALLATION:,} more, and "
        f"{BIG_OWN:,} among {BIG_INSTALLATION:,} more; each with an attendee) beside the lone organizer of "
        "the 10^3 database (2,000 of their own).\n"
    )
    print("| call | lone organizer (10^3) | 10^5 own | 10^6 own | 10^5 ÷ lone | 10^6 ÷ lone |")
    print("|---|--:|--:|--:|--:|--:|")
    for line, (milliseconds, note) in alone.items():
        cells = [f"{milliseconds:.1f}" + (f" ({note})" if note else "")]
        for other in (middle, busy):
            other_ms, other_note = other[line]
            cells.append(f"{other_ms:.1f}" + (f" ({other_note})" if other_note else ""))
        ratios = [f"{other[line][0] / milliseconds:.1f}" for other in (middle, busy)]
        print(f"| {line} | {' | '.join([*cells, *ratios])} |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max", type=int, default=int(os.environ.get("BENCH_SCALE_MAX", "5")), choices=(3, 5, 7))
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--chart", help="draw the curve into this PNG file")
    parser.add_argument(
        "--reuse", action="store_true", help="measure the databases an earlier run seeded (seed only missing ones)"
    )
    parser.add_argument(
        "--big",
        action=argparse.BooleanOptionalAction,
        default=os.environ.get("BENCH_SCALE_BIG", "1") != "0",
        help="also measure the busy organizer (a database of 2 million bookings: about 15 minutes of seeding)",
    )
    arguments = parser.parse_args()
    base = connection.settings_dict["NAME"]
    if "bench" not in base:
        sys.exit(f"The database name must contain 'bench' (it is dropped and re-created): {base}")
    setup_test_environment()
    exponents = [exponent for exponent in (3, 5, 7) if exponent <= arguments.max]
    results = {}
    for exponent in exponents:
        name = f"{base}_{exponent}"
        caller = (reuse(name) if arguments.reuse else None) or prepare(name, 10**exponent)
        results[exponent] = measure(caller, arguments.runs)
    smallest = exponents[0]
    headers = [f"10^{exponent} bookings" for exponent in exponents]
    print(f"Median of {arguments.runs} after a warm-up, in ms (in-process: no network, no server queue).\n")
    print(f"| line | {' | '.join(headers)} | largest ÷ 10^{smallest} |")
    print("|---|" + "--:|" * (len(exponents) + 1))
    for line in results[smallest]:
        cells = []
        for exponent in exponents:
            milliseconds, note = results[exponent][line]
            cells.append(f"{milliseconds:.1f}" + (f" ({note})" if note else ""))
        ratio = results[exponents[-1]][line][0] / results[smallest][line][0]
        print(f"| {line} | {' | '.join(cells)} | {ratio:.1f} |", flush=True)
    if arguments.chart:
        chart(results, arguments.chart)
    if arguments.big:
        big_organizer_table(base, arguments.runs, arguments.reuse)


def chart(results: dict, path: str) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no chart", file=sys.stderr)
        return
    exponents = sorted(results)
    sizes = [10**exponent for exponent in exponents]
    figure, axes = plt.subplots(figsize=(10, 6))
    axes.set_prop_cycle(color=plt.get_cmap("tab20").colors)
    for line in results[exponents[0]]:
        style = "--" if "page=" in line else "-"
        axes.plot(sizes, [results[exponent][line][0] for exponent in exponents], style, marker="o", label=line)
    axes.set_xscale("log")
    axes.set_yscale("log")
    axes.set_xticks(sizes, [f"10^{exponent}" for exponent in exponents])
    axes.set_xlabel("bookings in the database (deliveries and payments in proportion)")
    axes.set_ylabel("ms, median (in-process)")
    axes.set_title("Cost of each hot request as the data grows (dashed: deep page by page=)")
    axes.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1))
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)


if __name__ == "__main__":
    main()
