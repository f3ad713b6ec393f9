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
from django.utils import timezone

from accounts.models import UserRole
from accounts.tests.factories import ApiKeyFactory, UserFactory
from benchmarks.scale_seed import give_rows, seed_scale
from payments.tests.factories import PaymentFactory
from scheduling.tests.factories import BookingFactory, EventTypeFactory
from tests.support.credentials import bearer
from tests.support.query_plans import (
    captured_reads,
    index_conditions,
    outline,
    plan_of,
    prefer_ssd_costs,
    queries_of,
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


def counts_every_row(sql: str) -> bool:
    """The exact `total` of a system administrator's unfiltered list: a count of every row of the
    table, which costs in proportion to the table however it is read (a sequential scan, or an
    index-only scan of the same size). The one read allowed to scan; docs/benchmarks.md names it."""
    return sql.startswith('SELECT COUNT(*) AS "__count" FROM ') and " WHERE " not in sql and " JOIN " not in sql


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
            if (tables := sequential_scans(plan, LARGE_TABLES)) and not counts_every_row(sql):
                scans.append(f"{label}\n{'; '.join(tables)}\n{sql}\n{outline(plan)}")
    assert checked > 30
    assert not scans, "\n\n".join(scans)

    # The organizer's bookings (the page and its count) are read by primary key from the ids the
    # visibility union gathers first, so no estimate of that union can turn the plan into a join
    # of every booking (docs/benchmarks.md, "Cost versus data size").
    visible = [
        (sql, params)
        for label, statements in reads
        if label.startswith("organizer /v1/bookings")
        for sql, params in statements
        if 'FROM "scheduling_booking"' in sql and '"scheduling_attendee"."email"' in sql
    ]
    assert len(visible) >= 3
    for sql, params in visible:
        plan = plan_of(sql, params)
        conditions = [
            condition for condition in index_conditions(plan, "scheduling_booking") if "= ANY ($" in condition
        ]
        assert conditions, f"{sql}\n{outline(plan)}"
