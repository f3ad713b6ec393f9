"""Rows in proportion to a number of bookings, for `make bench-scale` and the API's EXPLAIN test,
written by PostgreSQL itself (`benchmarks.admin_seed`: one template row per model, copied with
`INSERT … SELECT … FROM generate_series`).

`seed_scale(bookings)` writes the installation around the measured callers: for N bookings, N
attendees, N/2 payments, N webhook deliveries each with one logged attempt, N/10 users in teams
of up to 1,000 members, N/20 event types (every booking is of one; one in ten is a team's) and
N/100 webhooks. Half of the deliveries are past the 30-day retention (for the purge to find at
every size); one in a thousand is due and waiting for the sweeper (its lease ran out).

`give_rows(...)` adds rows to one caller: bookings they organise (each with a payment) and
deliveries of one of their webhooks, so that their lists have as many pages as a size asks.
"""

from django.db import connection
from django.utils import timezone

from benchmarks.admin_seed import clone_rows, seed
from payments.models import Payment
from scheduling.models import Attendee, Booking
from webhooks.models import DeliveryAttempt, Webhook, WebhookDelivery

MEMBERS_PER_TEAM = 1000


def sizes_for(bookings: int) -> dict[str, int]:
    users = max(bookings // 10, 100)
    teams = max(users // MEMBERS_PER_TEAM, 1)
    return {
        "users": users,
        "event_types": max(users // 2, 10),
        "teams": teams,
        "memberships": min(teams * MEMBERS_PER_TEAM, users),
        "bookings": bookings,
        "attendees": bookings,
        "payments": max(bookings // 2, 10),
        "webhooks": max(bookings // 100, 10),
        "deliveries": bookings,
        "api_keys": max(bookings // 100, 10),
        "oauth_clients": 10,
        "access_tokens": max(bookings // 10, 10),
        "refresh_tokens": max(bookings // 10, 10),
    }


def seed_scale(bookings: int) -> dict[str, int]:
    """The installation at `bookings` bookings (see the module docstring); returns the sizes."""
    sizes = sizes_for(bookings)
    seed(sizes, members_per_team=MEMBERS_PER_TEAM)
    quote = connection.ops.quote_name
    deliveries, attempts = quote(WebhookDelivery._meta.db_table), quote(DeliveryAttempt._meta.db_table)
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {attempts} (delivery_id, attempt_number, attempted_at, duration_ms, request_url, "
            "request_headers, response_status, response_headers, response_body, error_class, error_message) "
            f"SELECT id, 1, event_created_at, 40, 'https://hooks.example.org/cal', '{{}}', 200, '{{}}', 'ok', '', '' "
            f"FROM {deliveries} WHERE message_id <> 'msg_seed_0'"
        )
        cursor.execute(
            f"UPDATE {deliveries} SET event_created_at = now() - interval '40 days' - id * interval '1 second', "
            "created_at = now() - interval '40 days' - id * interval '1 second' WHERE id % 2 = 0"
        )
        cursor.execute(
            f"UPDATE {deliveries} SET status = 'pending', next_attempt_at = now() - interval '1 minute', "
            "lease_expires_at = now() - interval '1 minute' WHERE id % 1000 = 1"
        )
    analyze()
    return sizes


def give_rows(*, booking: Booking, payment: Payment, delivery: WebhookDelivery, bookings: int, deliveries: int):
    """`bookings` more bookings of `booking`'s organizer (copies of it, each with a copy of
    `payment`), a minute long and two minutes apart back from it, and `deliveries` more
    deliveries of `delivery`'s webhook (copies of it, succeeded, one every two minutes back from
    now)."""
    now = timezone.now().replace(microsecond=0)
    before = Booking.objects.order_by("-pk").values_list("pk", flat=True).first()
    with connection.cursor() as cursor:
        clone_rows(
            cursor,
            Booking,
            booking.pk,
            bookings,
            {
                "uid": f"md5('own{booking.pk}-' || g)",
                "title": "'Own meeting ' || g",
                "start_time": "t.start_time - g * interval '2 minutes'",
                "end_time": "t.start_time - g * interval '2 minutes' + interval '1 minute'",
                "created_at": "t.created_at - g * interval '2 minutes'",
            },
        )
        clone_rows(
            cursor,
            Payment,
            payment.pk,
            bookings,
            {
                "uid": f"'pay_own{payment.pk}_' || g",
                "external_id": f"'ch_own{payment.pk}_' || g",
                "booking_id": "owned[g]",
            },
            {"owned": f"SELECT id FROM {Booking._meta.db_table} WHERE id > {before}"},
        )
        clone_rows(
            cursor,
            WebhookDelivery,
            delivery.pk,
            deliveries,
            {
                "message_id": f"'msg_own{delivery.pk}_' || g",
                "status": "'succeeded'",
                "event_created_at": f"timestamptz '{now.isoformat()}' - g * interval '2 minutes'",
                "created_at": f"timestamptz '{now.isoformat()}' - g * interval '2 minutes'",
            },
        )
    analyze()


def give_bookings(*, organizer_id: int, bookings: int, guests: int) -> None:
    """`bookings` more bookings of one organizer (copies of their earliest, a minute long and two
    minutes apart back from it, so they overlap none of theirs), each with one attendee of
    `guests` addresses taken in turn (`own-guest-<n>@example.net`): a busy organizer's table, in
    which one guest's address matches `bookings / guests` of them."""
    template = Booking.objects.filter(organizer_id=organizer_id).order_by("start_time", "id").first()
    attendee = Attendee.objects.filter(booking=template).order_by("id").first()
    before = Booking.objects.order_by("-pk").values_list("pk", flat=True).first()
    with connection.cursor() as cursor:
        clone_rows(
            cursor,
            Booking,
            template.pk,
            bookings,
            {
                "uid": f"md5('big{organizer_id}-' || g)",
                "title": "'Busy meeting ' || g",
                "status": "(ARRAY['ACCEPTED', 'ACCEPTED', 'ACCEPTED', 'PENDING', 'CANCELLED'])[1 + g % 5]",
                "start_time": "t.start_time - g * interval '2 minutes'",
                "end_time": "t.start_time - g * interval '2 minutes' + interval '1 minute'",
                "created_at": "t.created_at - g * interval '2 minutes'",
                "recurring_event_id": "''",
                "rescheduled_from_id": "NULL",
            },
        )
        clone_rows(
            cursor,
            Attendee,
            attendee.pk,
            bookings,
            {
                "booking_id": "owned[g]",
                "name": "'Busy Guest ' || g",
                "email": f"'own-guest-' || g % {int(guests)} || '@example.net'",
            },
            {"owned": f"SELECT id FROM {Booking._meta.db_table} WHERE id > {before}"},
        )
    analyze()


def analyze() -> None:
    with connection.cursor() as cursor:
        for model in (Booking, Attendee, Payment, Webhook, WebhookDelivery, DeliveryAttempt):
            cursor.execute(f"ANALYZE {connection.ops.quote_name(model._meta.db_table)}")
