"""The API's hot queries are served from an index at installation sizes (docs/benchmarks.md,
"Cost versus data size").

The database is seeded by PostgreSQL itself (`benchmarks.scale_seed`: tens of thousands of
bookings, payments and webhook deliveries around the callers, a caller with thousands of their
own) and analysed, so that the planner prefers an index wherever one serves the query. Then the
first page and a cursor page of bookings, payments and a webhook's deliveries (as an organizer and
as a system administrator), the slots of a 31-day window, the webhook sweeper's claim and the
retention purge run; every statement they send is `EXPLAIN`ed, and a sequential scan of bookings,
payments, deliveries or delivery attempts fails the test with the statement and its plan.
"""

from datetime import timedelta
from urllib.parse import urlencode

import pytest
from django.db import connection
from django.utils import timezone

from accounts.models import MembershipRole, UserRole
from accounts.tests.factories import ApiKeyFactory, MembershipFactory, TeamFactory, UserFactory
from benchmarks.scale_seed import give_bookings, give_rows, seed_scale
from payments.tests.factories import PaymentFactory
from scheduling.models import Booking
from scheduling.tests.factories import BookingFactory, EventTypeFactory, TeamEventTypeFactory
from tests.support.credentials import bearer
from tests.support.query_plans import (
    captured_reads,
    generic_rows_read,
    outline,
    plan_of,
    prefer_ssd_costs,
    queries_of,
    rows_read,
    sequential_scans,
)
from webhooks.delivery import sweep
from webhooks.retention import purge_old_deliveries
from webhooks.tests.factories import WebhookDeliveryFactory, WebhookFactory

pytestmark = pytest.mark.django_db

BOOKINGS = 60_000  # the installation (seeds in seconds)
# The organizer's own bookings (each with a payment) and their webhook's deliveries: a few pages, and
# as small a share of the tables as an organizer's is in an installation of millions (a share of
# several percent makes a scan the right plan for the test's table, and the test would prove nothing).
OWN_ROWS = 300
LARGE_TABLES = {
    "scheduling_booking",
    "payments_payment",
    "webhooks_webhookdelivery",
    "webhooks_deliveryattempt",
}


def bounded_count(sql: str) -> bool:
    """The COUNT of a list's `total` (core.pagination.counted): it stops after COUNT_EXACT_MAX + 1
    rows, so a scan that reads them in the table's order costs what an index would. The one read
    allowed to scan; docs/api.md, "Counting", names the rule. A visibility rule's COUNT counts its
    branches (core.fastpath.branches.count_up_to), each stopping at the same LIMIT."""
    if sql.startswith("WITH branch_first AS MATERIALIZED (") and " SELECT CASE WHEN " in sql:
        return True
    return sql.startswith("SELECT COUNT(*) FROM (SELECT ") and sql.endswith(") subquery") and " LIMIT " in sql


def test_no_hot_query_of_the_api_scans_a_large_table(api_client):
    organizer = UserFactory(username="plans-organizer", email="plans-organizer@example.com")
    administrator = UserFactory(username="plans-admin", email="plans-admin@example.com", role=UserRole.ADMIN)
    event_type = EventTypeFactory(owner=organizer, length=30)
    window_start = (timezone.now() + timedelta(days=2)).date()
    booking = BookingFactory(
        organizer=organizer,
        event_type=event_type,
        start_time=timezone.now() + timedelta(days=12),
        end_time=timezone.now() + timedelta(days=12, minutes=30),
    )
    payment = PaymentFactory(booking=booking)
    webhook = WebhookFactory(user=organizer)
    delivery = WebhookDeliveryFactory(webhook=webhook)
    seed_scale(BOOKINGS)
    give_rows(booking=booking, payment=payment, delivery=delivery, bookings=OWN_ROWS, deliveries=OWN_ROWS)
    prefer_ssd_costs()

    callers = {"organizer": ApiKeyFactory(user=organizer).raw_key, "admin": ApiKeyFactory(user=administrator).raw_key}
    lists = [
        ("organizer", "/v1/bookings", "take=100"),
        ("admin", "/v1/bookings", "take=100"),
        ("organizer", "/v1/bookings", "take=100&status=upcoming"),
        ("organizer", "/v1/payments", "take=100"),
        ("admin", "/v1/payments", "take=100"),
        ("organizer", f"/v1/webhooks/{webhook.pk}/deliveries", "take=100"),
        ("organizer", f"/v1/webhooks/{webhook.pk}/deliveries", "take=100&status=failed"),
    ]
    reads = []
    for caller, path, query in lists:
        first = api_client.get(f"{path}?{query}", **bearer(callers[caller]))
        assert first.status_code == 200
        reads.append((f"{caller} {path}?{query}", queries_of(api_client, f"{path}?{query}", **bearer(callers[caller]))))
        cursor = first.json()["pagination"]["nextCursor"]
        if "status=" not in query:
            assert cursor, f"{path}?{query} has one page only: seed more rows"
        if cursor:
            deep = f"{path}?{query}&{urlencode({'after': cursor})}"
            reads.append((f"{caller} {deep}", queries_of(api_client, deep, **bearer(callers[caller]))))
    slots = (
        f"/v1/slots?eventTypeId={event_type.pk}&startTime={window_start}&endTime={window_start + timedelta(days=30)}"
    )
    reads.append((slots, queries_of(api_client, slots, **bearer(callers["organizer"]))))
    reads.append(("the sweeper", captured_reads(sweep)))
    reads.append(("the purge", captured_reads(lambda: purge_old_deliveries(batch_size=1000))))

    scans, checked = [], 0
    for label, statements in reads:
        assert statements, label
        for sql, params in statements:
            plan = plan_of(sql, params)
            checked += 1
            if (tables := sequential_scans(plan, LARGE_TABLES)) and not bounded_count(sql):
                scans.append(f"{label}\n{'; '.join(tables)}\n{sql}\n{outline(plan)}")
    assert checked > 30
    assert not scans, "\n\n".join(scans)

    # No statement of the organizer's bookings lists gathers the ids of every visible booking first.
    for label, statements in reads:
        if label.startswith("organizer /v1/bookings"):
            for sql, _ in statements:
                assert 'ARRAY(SELECT "scheduling_booking"' not in sql, f"{label}\n{sql}"


# The busy organizer: their own bookings, each with an attendee whose address is one of
# BUSY_ROWS / 50, beside the installation (a tenth as many bookings again). A few thousand rows is
# all a page may read: its rows in each branch, and for `status=upcoming` the upcoming rows of each
# branch, which PostgreSQL reads from the start-time indexes and sorts (about 2,200 of the busy
# organizer's clones lie in the coming three days, read once as organised and once as of their
# event type).
BUSY_ROWS = 40_000
# The event types the busy organizer runs (their bookings spread over them), and those of a team
# whose owner organises none of its TEAM_ROWS bookings.
MANY_EVENT_TYPES = 200
TEAM_ROWS = 20_000
PAGE_READ_MAX = 5_000
COUNT_BOUND = 2_000


def spread_over(organizer_id: int, event_type_ids: list[int]) -> None:
    """The organizer's bookings spread in turn over these event types (seven at a time, so that
    each has bookings of every status)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE scheduling_booking SET event_type_id = (%s::bigint[])[1 + id / 7 %% %s] WHERE organizer_id = %s",
            [event_type_ids, len(event_type_ids), organizer_id],
        )
        cursor.execute("ANALYZE scheduling_booking")


def test_a_busy_organizers_pages_read_only_their_rows(api_client, settings):
    settings.API_LIMITS = {**settings.API_LIMITS, "COUNT_EXACT_MAX": COUNT_BOUND}
    busy = UserFactory(username="plans-busy", email="plans-busy@example.com")
    small = UserFactory(username="plans-small", email="plans-small@example.com")
    administrator = UserFactory(username="plans-admin", email="plans-admin@example.com", role=UserRole.ADMIN)
    event_type = EventTypeFactory(owner=busy, length=30)
    busy_booking = BookingFactory(organizer=busy, event_type=event_type, start_time=timezone.now() + timedelta(days=3))
    small_booking = BookingFactory(organizer=small, start_time=timezone.now() + timedelta(days=3))
    payment = PaymentFactory(booking=small_booking)
    delivery = WebhookDeliveryFactory(webhook=WebhookFactory(user=small))
    # A caller who runs a team of many event types and organises none of its bookings: a host does.
    runner, host = UserFactory(username="plans-runner"), UserFactory(username="plans-host")
    team = TeamFactory()
    MembershipFactory(user=runner, team=team, role=MembershipRole.OWNER)
    team_types = TeamEventTypeFactory.create_batch(MANY_EVENT_TYPES, team=team)
    BookingFactory(organizer=host, event_type=team_types[0], start_time=timezone.now() + timedelta(days=4))
    seed_scale(BOOKINGS)
    give_rows(booking=small_booking, payment=payment, delivery=delivery, bookings=OWN_ROWS, deliveries=0)
    give_bookings(organizer_id=busy.pk, bookings=BUSY_ROWS, guests=BUSY_ROWS // 50)
    give_bookings(organizer_id=host.pk, bookings=TEAM_ROWS, guests=TEAM_ROWS // 50)
    # The busy organizer runs many event types too, their bookings spread over them.
    busy_types = [event_type, *EventTypeFactory.create_batch(MANY_EVENT_TYPES - 1, owner=busy)]
    spread_over(busy.pk, [kind.pk for kind in busy_types])
    spread_over(host.pk, [kind.pk for kind in team_types])
    # A few payments among the busy organizer's many bookings, beside everyone else's.
    for booking in Booking.objects.filter(organizer=busy).order_by("id")[:3]:
        PaymentFactory(booking=booking)
    PaymentFactory(booking=busy_booking)
    prefer_ssd_costs()

    keys = {name: ApiKeyFactory(user=user).raw_key for name, user in (("busy", busy), ("small", small))}
    keys["admin"] = ApiKeyFactory(user=administrator).raw_key
    keys["runner"] = ApiKeyFactory(user=runner).raw_key
    window = Booking.objects.filter(organizer=busy).order_by("start_time")[BUSY_ROWS // 2].start_time
    window_query = urlencode({"dateFrom": window.isoformat(), "dateTo": (window + timedelta(hours=6)).isoformat()})
    lists = [
        ("busy", "/v1/bookings?take=100"),
        ("busy", "/v1/bookings?take=100&attendeeEmail=own-guest-7@example.net"),
        ("busy", "/v1/bookings?take=100&status=cancelled"),
        ("busy", "/v1/bookings?take=100&status=upcoming"),
        ("busy", f"/v1/bookings?take=100&eventTypeId={event_type.pk}"),
        ("busy", f"/v1/bookings?take=100&{window_query}"),
        ("busy", "/v1/bookings?take=100&sortBy=createdAt"),
        ("busy", "/v1/bookings?take=100&sortBy=createdAt&order=desc"),
        ("busy", "/v1/bookings?take=100&sortBy=updatedAt&order=desc"),
        ("busy", "/v1/bookings?take=100&sortBy=updatedAt&status=cancelled"),
        ("busy", "/v1/payments?take=100"),
        ("runner", "/v1/bookings?take=100"),
        ("runner", "/v1/bookings?take=100&sortBy=createdAt&order=desc"),
        ("runner", "/v1/bookings?take=100&status=cancelled"),
        ("small", "/v1/bookings?take=100"),
        ("admin", f"/v1/bookings?take=100&userId={busy.pk}"),
    ]
    reads = []
    for caller, url in lists:
        first = api_client.get(url, **bearer(keys[caller]))
        assert first.status_code == 200, url
        reads.append((f"{caller} {url}", queries_of(api_client, url, **bearer(keys[caller]))))
        cursor = first.json()["pagination"]["nextCursor"]
        if cursor:
            deep = f"{url}&{urlencode({'after': cursor})}"
            reads.append((f"{caller} {deep}", queries_of(api_client, deep, **bearer(keys[caller]))))
    v2 = {"HTTP_CAL_API_VERSION": "2024-08-13", **bearer(keys["busy"])}
    reads.append(("busy /v2/bookings", queries_of(api_client, "/v2/bookings?take=100", **v2)))
    for sort in ("sortStart=desc", "sortEnd=asc", "sortEnd=desc", "sortCreated=desc"):
        reads.append((f"busy /v2/bookings?{sort}", queries_of(api_client, f"/v2/bookings?take=100&{sort}", **v2)))
    runner_v2 = {"HTTP_CAL_API_VERSION": "2024-08-13", **bearer(keys["runner"])}
    reads.append(("runner /v2/bookings", queries_of(api_client, "/v2/bookings?take=100", **runner_v2)))
    cursor_mode = {"HTTP_CAL_API_VERSION": "2026-05-01", **bearer(keys["busy"])}
    reads.append(("busy /v2/bookings (cursor)", queries_of(api_client, "/v2/bookings?limit=100", **cursor_mode)))

    too_many, checked, generic_checked = [], 0, 0
    for label, statements in reads:
        for sql, params in statements:
            if "scheduling_booking" not in sql:
                continue
            assert 'ARRAY(SELECT "scheduling_booking"' not in sql, f"{label}\n{sql}"
            # A page reads its rows (and what its filter skips near them). The COUNT of its total
            # stops after COUNT_EXACT_MAX + 1 rows of each of its branches (organised, of the
            # caller's event types, attended, hosted); the busy organizer's first branch holds that
            # many alone, and the others are not read (below).
            allowed = 4 * (COUNT_BOUND + 1) if bounded_count(sql) else PAGE_READ_MAX
            for table in ("scheduling_booking", "payments_payment"):
                read, plan = rows_read(sql, params, table)
                checked += 1
                if read > allowed:
                    too_many.append(f"{label}: {read:,} rows of {table} read\n{sql}\n{outline(plan)}")
            if "branch_" in sql and not bounded_count(sql):
                # A page of the visibility rule runs under its generic plan, planned once for every
                # caller (core.fastpath.compiled_queries.planned_once): it too reads a page's rows.
                read, plan = generic_rows_read(sql, params, "scheduling_booking")
                generic_checked += 1
                if read > PAGE_READ_MAX:
                    too_many.append(f"{label}, the generic plan: {read:,} bookings read\n{sql}\n{outline(plan)}")
    assert checked >= 60
    assert generic_checked >= 20
    assert not too_many, "\n\n".join(too_many)
    # The busy organizer's own bookings hold more than the bound: the COUNT reads that branch's
    # first COUNT_EXACT_MAX + 1 entries and stops, the other branches never read.
    (first_page,) = [statements for label, statements in reads if label == "busy /v1/bookings?take=100"]
    (count,) = [(sql, params) for sql, params in first_page if bounded_count(sql)]
    read, plan = rows_read(*count, "scheduling_booking")
    assert read == COUNT_BOUND + 1, outline(plan)

    # The event types a caller runs or sees (their bookings' branch; their event type list) are read
    # along the owner's and the team's indexes: their own rows, not every event type of the
    # installation (an OR of owner and team read them all).
    for caller in ("busy", "runner", "small"):
        reads.append((f"{caller} /v1/event-types", queries_of(api_client, "/v1/event-types", **bearer(keys[caller]))))
    event_type_reads = []
    for label, statements in reads:
        for sql, params in statements:
            if "scheduling_eventtype" in sql:
                read, plan = rows_read(sql, params, "scheduling_eventtype")
                event_type_reads.append(read)
                if read > 2 * MANY_EVENT_TYPES + 10:
                    too_many.append(f"{label}: {read:,} event types read\n{sql}\n{outline(plan)}")
    assert len(event_type_reads) >= 20
    assert not too_many, "\n\n".join(too_many)

    # A booking of the busy organizer, and the slots it is chosen from: each statement reads a few
    # of their bookings, under the plan made for its values and under the generic plan that a
    # prepared statement may run from its sixth execution on (`generic_rows_read`). The busy-time
    # statement compares the window with a booking's start and with its end: ordered by start, its
    # index would read every booking of theirs that starts before the window; by end, the few that
    # end after its start (the plan chosen today, with the values and without them).
    day = (timezone.now() + timedelta(days=5)).date()
    slots_url = f"/v1/slots?eventTypeId={event_type.pk}&startTime={day}&endTime={day + timedelta(days=7)}"
    offered = api_client.get(slots_url, **bearer(keys["busy"])).json()["slots"]
    start = next(iter(offered.values()))[0]["time"]
    body = {"eventTypeId": event_type.pk, "start": start, "name": "Ada", "email": "ada@example.org", "timeZone": "UTC"}
    answers = []
    writes = [("busy /v1/slots", queries_of(api_client, slots_url, **bearer(keys["busy"])))]
    booked = captured_reads(
        lambda: answers.append(api_client.post("/v1/bookings", body, format="json", **bearer(keys["busy"])))
    )
    assert answers[0].status_code == 200, answers[0].content
    writes.append(("busy POST /v1/bookings", booked))
    too_many, checked = [], 0
    for label, statements in writes:
        for sql, params in statements:
            if "scheduling_booking" not in sql:
                continue
            for planned, reading in (("its values' plan", rows_read), ("the generic plan", generic_rows_read)):
                read, plan = reading(sql, params, "scheduling_booking")
                checked += 1
                if read > PAGE_READ_MAX:
                    too_many.append(f"{label}, {planned}: {read:,} bookings read\n{sql}\n{outline(plan)}")
    assert checked >= 4  # the busy-time statement of each, in both plans
    assert not too_many, "\n\n".join(too_many)
