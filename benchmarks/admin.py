"""`make bench-admin` (`python -m benchmarks.admin`): the back office's pages on an empty database and
on a production-sized one, side by side in one run.

Three databases are (re)created and migrated: `<name>` is seeded by `benchmarks.admin_seed` at
`--scale` (1 = 10^6 payments, 5 x 10^5 bookings, 2 x 10^4 teams, 2 x 10^5 memberships, ...),
`<name>_small` with a thousandth of that (1,000 payments: every list has full pages), both vacuumed
and analysed as autovacuum leaves a table; `<name>_empty` stays empty. Each page is then requested
as a signed-in superuser through Django's test client (in-process: the figure is the application's
and the database's time, without a network or a server's queue), on each database in turn, one
warm-up and `--runs` timed requests each; the table shows the medians, the large database's time
over the empty one's and over the small one's (same page, same number of rows shown), the size of
the large database's page, and the time its SQL queries took (one more request, with the queries
timed).

BENCH_ADMIN_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/sched_bench_admin) names the
large database; its name must contain "bench" (both databases are dropped and re-created unless
`--reuse`). REDIS_URL as for the tests. Prints a Markdown table; docs/benchmarks.md records one.
"""

import argparse
import os
import sys
import time

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings_test")
DATABASE_URL = os.environ.get("BENCH_ADMIN_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/sched_bench_admin")
os.environ["DATABASE_URL"] = DATABASE_URL

import django  # noqa: E402

django.setup()

from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402
from django.test import Client  # noqa: E402
from django.test.utils import CaptureQueriesContext, setup_test_environment  # noqa: E402

from accounts.models import Membership, User  # noqa: E402
from benchmarks.admin_seed import seed, sizes_at  # noqa: E402
from benchmarks.databases import exists, recreate, timed, use_database  # noqa: E402
from payments.models import Payment  # noqa: E402

AUTOCOMPLETE = "/admin/autocomplete/"
TEAM_FIELD = "app_label=accounts&model_name=membership&field_name=team"


def pages(payment, membership) -> list[tuple[str, str]]:
    """(label, path) of each page measured: the lists first measured before this work, then the others."""
    payments = "/admin/payments/payment/"
    pages = [
        ("payments", payments),
        ("payments, search a charge id prefix (ch_4242)", f"{payments}?q=ch_4242"),
        ("payments, page 1,000", f"{payments}?p=1000"),
        ("memberships", "/admin/accounts/membership/"),
        ("teams", "/admin/accounts/team/"),
        ("bookings", "/admin/scheduling/booking/"),
        ("users", "/admin/accounts/user/"),
        ("payments, search a payment uid", f"{payments}?q=pay_4242"),
        ("payments, search a booking uid", f"{payments}?q=4242"),
        ("payments, search an organizer e-mail", f"{payments}?q=person4242@example71.org"),
        ("payments, filter not paid", f"{payments}?success__exact=0"),
        ("payments, filter an organizer", f"{payments}?booking__organizer__id__exact=4242"),
        ("payments, a year of the date hierarchy", f"{payments}?created_at__year=2026"),
        ("memberships, filter a team", "/admin/accounts/membership/?team__id__exact=4242"),
        ("memberships, search a team name", "/admin/accounts/membership/?q=team 4242"),
        ("bookings, search an attendee e-mail", "/admin/scheduling/booking/?q=guest4242@example.net"),
        ("webhooks", "/admin/webhooks/webhook/"),
        ("webhook deliveries", "/admin/webhooks/webhookdelivery/"),
        ("webhook deliveries, failed", "/admin/webhooks/webhookdelivery/?status__exact=failed"),
        ("OAuth clients", "/admin/oauth2_provider/application/"),
        ("API keys", "/admin/accounts/apikey/"),
        ("OAuth access tokens", "/admin/oauth2_provider/accesstoken/"),
        ("OAuth access tokens, search a user's e-mail", "/admin/oauth2_provider/accesstoken/?q=person4242@example71"),
        ("OAuth refresh tokens, page 1,000", "/admin/oauth2_provider/refreshtoken/?p=1000"),
        ("team autocomplete (filter)", f"{AUTOCOMPLETE}?{TEAM_FIELD}&term=team 42"),
    ]
    if payment is not None:
        pages.append(("a payment's page", f"{payments}{payment.pk}/change/"))
    if membership is not None:
        pages.append(("a membership's page", f"/admin/accounts/membership/{membership.pk}/change/"))
    return pages


def operator_client() -> Client:
    operator, _ = User.objects.get_or_create(
        username="bench-operator",
        defaults={"email": "bench-operator@example.org", "is_staff": True, "is_superuser": True},
    )
    client = Client()
    client.force_login(operator)
    return client


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=float(os.environ.get("BENCH_ADMIN_SCALE", "1")))
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--reuse", action="store_true", help="keep the databases of the last run (make missing ones)")
    arguments = parser.parse_args()

    large = connection.settings_dict["NAME"]
    empty, small = f"{large}_empty", f"{large}_small"
    if "bench" not in large:
        sys.exit(f"The database name must contain 'bench' (it is dropped and re-created): {large}")
    setup_test_environment()
    missing = (
        [large, small, empty] if not arguments.reuse else [name for name in (small,) if not exists(DATABASE_URL, name)]
    )
    if missing:
        recreate(DATABASE_URL, missing)
        for name in missing:
            use_database(name)
            call_command("migrate", verbosity=0)
            if name == empty:
                continue
            started = time.monotonic()
            sizes = seed(sizes_at(arguments.scale if name == large else 0.001))
            with connection.cursor() as cursor:
                cursor.execute("VACUUM ANALYZE")
            print(f"{name}: seeded {sizes} in {time.monotonic() - started:.0f} s", file=sys.stderr)

    clients = {}
    for name in (empty, small, large):
        use_database(name)
        clients[name] = operator_client()
    use_database(large)
    payment = Payment.objects.order_by("-pk").first()
    membership = Membership.objects.order_by("-pk").first()
    counts = {"payments": Payment.objects.order_by().count(), "memberships": Membership.objects.order_by().count()}

    print(f"Sizes: {counts['payments']:,} payments, {counts['memberships']:,} memberships (scale {arguments.scale}).")
    print(f"Median of {arguments.runs} requests after a warm-up, in ms.\n")
    print("| page | empty | 1,000 payments | production-sized | × empty | × 1,000 | HTML | SQL (queries) |")
    print("|---|--:|--:|--:|--:|--:|--:|--:|")
    for label, path in pages(payment, membership):
        figures = {}
        for name in (empty, small, large):
            use_database(name)
            figures[name] = timed(clients[name], path, arguments.runs)
        with CaptureQueriesContext(connection) as queries:
            clients[large].get(path)
        sql_ms = sum(float(query["time"]) for query in queries.captured_queries) * 1000
        (empty_ms, empty_status, _), (small_ms, _, _) = figures[empty], figures[small]
        large_ms, large_status, size = figures[large]
        statuses = "" if empty_status == large_status == 200 else f" ({empty_status}/{large_status})"
        print(
            f"| `{path}`{statuses} ({label}) | {empty_ms:.0f} | {small_ms:.0f} | {large_ms:.0f} "
            f"| {large_ms / empty_ms:.1f} | {large_ms / small_ms:.1f} | {size / 1024:.0f} KB "
            f"| {sql_ms:.0f} ms ({len(queries.captured_queries)}) |",
            flush=True,
        )


if __name__ == "__main__":
    main()
