"""Production-sized rows for the back office, written by PostgreSQL itself.

One row of each model is made through the ORM (so that every column has a valid value); the rest are
copies of it made by `INSERT ... SELECT ... FROM generate_series(...)`, with the columns that must
differ (ids, names, e-mails, uids, charge ids, times, foreign keys) computed from the series number.
At `scale=1` that is the production size of the back office's benchmark; the EXPLAIN test uses a
small fraction. About a minute per million rows on a quiet 2-core machine.
"""

from datetime import timedelta

from django.db import connection
from django.utils import timezone
from oauth2_provider.models import AccessToken, Application, RefreshToken

from accounts.models import ApiKey, Membership, Team, User
from payments.models import Payment
from scheduling.models import Attendee, Booking, EventType
from webhooks.models import Webhook, WebhookDelivery

# Rows at scale 1: the sizes the back office is held to (2 x 10^4 teams, 2 x 10^5 memberships,
# 5 x 10^5 bookings, 10^6 payments), and the other admin lists in proportion.
SIZES = {
    "users": 50_000,
    "event_types": 25_000,
    "teams": 20_000,
    "memberships": 200_000,
    "bookings": 500_000,
    "attendees": 500_000,
    "payments": 1_000_000,
    "webhooks": 20_000,
    "deliveries": 1_000_000,
    "api_keys": 20_000,
    "oauth_clients": 200,
    "access_tokens": 1_000_000,
    "refresh_tokens": 1_000_000,
}

MEMBERS_PER_TEAM = 10
CURRENCIES = ("usd", "eur", "gbp", "jpy", "chf")


def sizes_at(scale: float) -> dict[str, int]:
    """`SIZES` times `scale`, at least 10 of each and enough users to fill a team."""
    sizes = {name: max(int(count * scale), 10) for name, count in SIZES.items()}
    sizes["memberships"] = min(sizes["memberships"], sizes["teams"] * MEMBERS_PER_TEAM)
    sizes["users"] = max(sizes["users"], MEMBERS_PER_TEAM)
    sizes["refresh_tokens"] = min(sizes["refresh_tokens"], sizes["access_tokens"])
    return sizes


def clone_rows(cursor, model, template_pk, count: int, overrides: dict[str, str], ids: dict[str, str] | None = None):
    """Insert `count` copies of row `template_pk` of `model`; `overrides` maps a column to an SQL
    expression of the series number `g` (1..count). `ids` names arrays of existing ids the
    expressions may index (`users[1 + g % array_length(users, 1)]`), as `name: "SELECT ..."`."""
    quote = connection.ops.quote_name
    table = quote(model._meta.db_table)
    pk_column = model._meta.pk.column
    columns = [f.column for f in model._meta.concrete_fields if f.column != pk_column or f.column in overrides]
    values = [overrides.get(column, f"t.{quote(column)}") for column in columns]
    arrays = "".join(
        f", (SELECT array_agg(id ORDER BY id) FROM ({sql}) AS s) AS {name}" for name, sql in (ids or {}).items()
    )
    # The expressions use `%` (modulo); the values are numbers made here, not input, so no placeholders.
    cursor.execute(
        f"INSERT INTO {table} ({', '.join(quote(column) for column in columns)}) "
        f"SELECT {', '.join(values)} FROM (SELECT *{arrays} FROM {table} WHERE {quote(pk_column)} = "
        f"'{template_pk}') AS t CROSS JOIN generate_series(1, {int(count)}) AS g"
    )


def seed(sizes: dict[str, int], *, members_per_team: int = MEMBERS_PER_TEAM) -> dict[str, int]:
    """Adds `sizes` rows (see `SIZES`, `sizes_at`) plus one template row per model to the database."""
    now = timezone.now().replace(microsecond=0)
    user = User.objects.create(username="seed-0", email="seed-0@example.org", name="Seed Person 0", password="!")
    team = Team.objects.create(name="Seed Team 0", slug="seed-team-0")
    event_type = EventType.objects.create(owner=user, title="Seed event 0", slug="seed-event-0", length=1)
    membership = Membership.objects.create(user=user, team=team, role="OWNER", accepted=True)
    # Bookings lie 2 minutes apart across about two years ending now (so the date hierarchy has
    # years, months and days); an organizer's own bookings are `users` x 2 minutes apart, so they
    # never overlap (the no-double-booking constraint).
    first_start = now - timedelta(minutes=2 * sizes["bookings"])
    booking = Booking.objects.create(
        organizer=user,
        event_type=event_type,
        title="Seed meeting 0",
        start_time=first_start,
        end_time=first_start + timedelta(minutes=1),
    )
    attendee = Attendee.objects.create(
        booking=booking, name="Seed Guest 0", email="guest-0@example.net", time_zone="UTC"
    )
    payment = Payment.objects.create(
        booking=booking, organizer=user, uid="pay_seed_0", external_id="ch_seed_0", amount=5000, currency="usd"
    )
    webhook = Webhook.objects.create(user=user, subscriber_url="https://hooks.example.org/seed/0", event_triggers=[])
    delivery = WebhookDelivery.objects.create(
        webhook=webhook, trigger_event="BOOKING_CREATED", payload={}, event_created_at=now, message_id="msg_seed_0"
    )
    api_key = ApiKey.objects.create(user=user, prefix="sk_seed0", hashed_key="0" * 64, note="seed key 0")
    client = Application.objects.create(
        name="Seed client 0",
        client_id="seed-client-0",
        client_type=Application.CLIENT_CONFIDENTIAL,
        authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
        redirect_uris="https://app.example.org/callback",
    )
    access_token = AccessToken.objects.create(
        user=user, application=client, token="at_seed_0", expires=now + timedelta(hours=1), scope="READ_PROFILE"
    )
    refresh_token = RefreshToken.objects.create(
        user=user, application=client, token="rt_seed_0", access_token=access_token
    )

    users = {"users": f"SELECT id FROM accounts_user WHERE id > {user.pk}"}
    with connection.cursor() as cursor:
        clone_rows(
            cursor,
            User,
            user.pk,
            sizes["users"],
            {
                "username": "'user' || g",
                "email": "'person' || g || '@example' || (g % 97) || '.org'",
                "name": "'Person ' || g || ' ' || substr(md5(g::text), 1, 6)",
            },
        )
        clone_rows(
            cursor,
            Team,
            team.pk,
            sizes["teams"],
            {"name": "'Team ' || g || ' ' || md5('t' || g)", "slug": "'team-' || g"},
        )
        # Member k of team t is user (t * members_per_team + k) mod users: distinct within a team.
        clone_rows(
            cursor,
            Membership,
            membership.pk,
            sizes["memberships"],
            {
                "team_id": f"teams[1 + (g - 1) / {members_per_team}]",
                "user_id": "users[1 + (g - 1) % array_length(users, 1)]",
                "role": f"CASE WHEN (g - 1) % {members_per_team} = 0 THEN 'OWNER' ELSE 'MEMBER' END",
            },
            {**users, "teams": f"SELECT id FROM accounts_team WHERE id > {team.pk}"},
        )
        # Event type k belongs to user k, or (one in ten) to team k instead; as on a real
        # installation, every booking is of an event type, and bookings spread over many owners.
        event_types = sizes.get("event_types", max(sizes["users"] // 2, 10))
        clone_rows(
            cursor,
            EventType,
            event_type.pk,
            event_types,
            {
                "title": "'Event ' || g",
                "slug": "'event-' || g",
                "owner_id": "CASE WHEN g % 10 = 0 THEN NULL ELSE users[1 + (g - 1) % array_length(users, 1)] END",
                "team_id": "CASE WHEN g % 10 = 0 THEN teams[1 + (g - 1) % array_length(teams, 1)] END",
            },
            {**users, "teams": f"SELECT id FROM accounts_team WHERE id > {team.pk}"},
        )
        # Booking g is of event type k = 1 + (g - 1) % event_types and organised by user k (the
        # event type's owner where a user owns it).
        clone_rows(
            cursor,
            Booking,
            booking.pk,
            sizes["bookings"],
            {
                "uid": "md5('b' || g)",
                "title": "'Meeting ' || g",
                "event_type_id": "event_types[1 + (g - 1) % array_length(event_types, 1)]",
                "organizer_id": "users[1 + ((g - 1) % array_length(event_types, 1)) % array_length(users, 1)]",
                "start_time": "t.start_time + g * interval '2 minutes'",
                "end_time": "t.end_time + g * interval '2 minutes'",
                "created_at": "t.start_time + g * interval '2 minutes'",
            },
            {**users, "event_types": f"SELECT id FROM scheduling_eventtype WHERE id > {event_type.pk}"},
        )
        bookings = {"bookings": f"SELECT id FROM scheduling_booking WHERE id > {booking.pk}"}
        clone_rows(
            cursor,
            Attendee,
            attendee.pk,
            sizes["attendees"],
            {
                "booking_id": "bookings[1 + (g - 1) % array_length(bookings, 1)]",
                "email": "'guest' || g || '@example.net'",
                "name": "'Guest ' || g",
            },
            bookings,
        )
        # success: 9 in 10; refunded: 1 in 50 (all of them successful, as the constraint requires).
        currencies = "ARRAY[" + ", ".join(f"'{code}'" for code in CURRENCIES) + "]"
        clone_rows(
            cursor,
            Payment,
            payment.pk,
            sizes["payments"],
            {
                "uid": "'pay_' || md5('p' || g)",
                "external_id": "'ch_' || md5('c' || g)",
                "booking_id": "bookings[1 + (g - 1) % array_length(bookings, 1)]",
                "organizer_id": (
                    f"(SELECT organizer_id FROM {connection.ops.quote_name(Booking._meta.db_table)} "
                    "WHERE id = bookings[1 + (g - 1) % array_length(bookings, 1)])"
                ),
                "amount": "100 + g % 100000",
                "fee": "g % 300",
                "currency": f"({currencies})[1 + g % {len(CURRENCIES)}]",
                "success": "g % 10 <> 3",
                "refunded": "g % 50 = 1",
                "payment_option": "CASE WHEN g % 7 = 0 THEN 'HOLD' ELSE 'ON_BOOKING' END",
                "created_at": f"timestamptz '{first_start.isoformat()}' + g * interval '1 minute'",
            },
            bookings,
        )
        clone_rows(
            cursor,
            Webhook,
            webhook.pk,
            sizes["webhooks"],
            {
                "id": "gen_random_uuid()",
                "user_id": "users[1 + (g - 1) % array_length(users, 1)]",
                "subscriber_url": "'https://hooks' || g % 1000 || '.example.org/cal/' || md5('w' || g)",
                "created_at": f"timestamptz '{first_start.isoformat()}' + g * interval '1 hour'",
            },
            users,
        )
        clone_rows(
            cursor,
            WebhookDelivery,
            delivery.pk,
            sizes["deliveries"],
            {
                "webhook_id": "webhooks[1 + (g - 1) % array_length(webhooks, 1)]",
                "message_id": "'msg_' || md5('m' || g)",
                "status": "CASE WHEN g % 20 = 0 THEN 'failed' ELSE 'succeeded' END",
                "attempts": "1 + (g % 20 = 0)::int * 9",
                "created_at": f"timestamptz '{first_start.isoformat()}' + g * interval '1 minute'",
                "event_created_at": f"timestamptz '{first_start.isoformat()}' + g * interval '1 minute'",
            },
            {"webhooks": f"SELECT id FROM webhooks_webhook WHERE id <> '{webhook.pk}'"},
        )
        clone_rows(
            cursor,
            Application,
            client.pk,
            sizes["oauth_clients"],
            {
                "client_id": "'client-' || g || '-' || md5('o' || g)",
                "name": "'Client ' || g",
            },
        )
        clients = {"clients": f"SELECT id FROM oauth2_provider_application WHERE id > {client.pk}"}
        # Tokens as the provider stores them: the token in clear and its SHA-256 checksum (unique).
        clone_rows(
            cursor,
            AccessToken,
            access_token.pk,
            sizes["access_tokens"],
            {
                "token": "'at_' || md5('a' || g)",
                "token_checksum": "encode(sha256(convert_to('at_' || md5('a' || g), 'UTF8')), 'hex')",
                "user_id": "users[1 + (g - 1) % array_length(users, 1)]",
                "application_id": "clients[1 + (g - 1) % array_length(clients, 1)]",
                "expires": "t.expires + g * interval '1 second'",
            },
            {**users, **clients},
        )
        clone_rows(
            cursor,
            RefreshToken,
            refresh_token.pk,
            sizes["refresh_tokens"],
            {
                "token": "'rt_' || md5('r' || g)",
                "token_checksum": "encode(sha256(convert_to('rt_' || md5('r' || g), 'UTF8')), 'hex')",
                "user_id": "users[1 + (g - 1) % array_length(users, 1)]",
                "application_id": "clients[1 + (g - 1) % array_length(clients, 1)]",
                "access_token_id": "access_tokens[g]",
            },
            {
                **users,
                **clients,
                "access_tokens": f"SELECT id FROM oauth2_provider_accesstoken WHERE id > {access_token.pk}",
            },
        )
        clone_rows(
            cursor,
            ApiKey,
            api_key.pk,
            sizes["api_keys"],
            {
                "user_id": "users[1 + (g - 1) % array_length(users, 1)]",
                "prefix": "'sk_' || substr(md5('k' || g), 1, 8)",
                "hashed_key": "md5('h' || g) || md5('i' || g)",
                "note": "'key ' || g || ' for ' || substr(md5('n' || g), 1, 10)",
            },
            users,
        )
        # GIN indexes collect new entries in a pending list that autovacuum merges later; merge it now,
        # and take the planner's statistics, as autovacuum would leave them.
        cursor.execute(
            "SELECT gin_clean_pending_list(index.indexrelid) FROM pg_index AS index "
            "JOIN pg_class AS relation ON relation.oid = index.indexrelid "
            "JOIN pg_am AS method ON method.oid = relation.relam WHERE method.amname = 'gin'"
        )
        analysed = (User, Team, Membership, EventType, Booking, Attendee, Payment, Webhook, WebhookDelivery, ApiKey)
        for model in (*analysed, Application, AccessToken, RefreshToken):
            cursor.execute(f"ANALYZE {connection.ops.quote_name(model._meta.db_table)}")
    return sizes
