"""Reads of webhooks and deliveries, with their visibility rule and their joins in one place, and
the reads that decide which webhooks hear about an event."""

import functools
from datetime import datetime

from django.db.models import Prefetch, Q, QuerySet

from accounts.selectors import managed_team_ids
from core.fastpath.compiled_queries import CompiledQuery, Parameter
from webhooks.models import (
    OPEN_DELIVERY_STATUSES,
    PING_TRIGGER,
    DeliveryAttempt,
    Webhook,
    WebhookDelivery,
    WebhookScheduledTrigger,
)


def webhook_list(*, user, user_ids: list[int] | None = None) -> QuerySet[Webhook]:
    """What the caller owns or administers: their own webhooks, their event types' webhooks, and the
    webhooks of teams (and team event types) where they are an accepted ADMIN/OWNER. System admins
    see every webhook, or those of `user_ids`."""
    queryset = Webhook.objects.select_related(
        "user", "team", "event_type", "platform_oauth_client", "app"
    ).prefetch_related(
        Prefetch("scheduled_triggers", queryset=WebhookScheduledTrigger.objects.order_by("start_after", "id"))
    )
    if user.is_system_admin:
        if user_ids:
            queryset = queryset.filter(Q(user_id__in=user_ids) | Q(event_type__owner_id__in=user_ids))
        return queryset
    administered = managed_team_ids(user=user)
    return queryset.filter(
        Q(user=user, team__isnull=True, event_type__isnull=True)
        | Q(event_type__owner=user)
        | Q(event_type__team_id__in=administered)
        | Q(team_id__in=administered)
    )


def webhook_get(*, user, webhook_id) -> Webhook | None:
    return webhook_list(user=user).filter(pk=webhook_id).first()


def delivery_list(
    *,
    webhook: Webhook,
    status: str | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
) -> QuerySet[WebhookDelivery]:
    """Newest first: a delivery log is read from the top. With each delivery's attempts in the
    order they were made, for the single-delivery answers (a list's rows do not read them).
    `since`/`until` bound the event's time (`createdAt`, until excluded); a keyset page
    (`?after=`, core.keyset) follows the order by id, so pages do not shift as new ones arrive."""
    queryset = (
        WebhookDelivery.objects.filter(webhook=webhook)
        .prefetch_related(Prefetch("attempt_log", queryset=DeliveryAttempt.objects.order_by("attempt_number")))
        .order_by("-id")
    )
    if status:
        queryset = queryset.filter(status=status)
    if since is not None:
        queryset = queryset.filter(event_created_at__gte=since)
    if until is not None:
        queryset = queryset.filter(event_created_at__lt=until)
    return queryset


def event_feed(
    *,
    user,
    horizon: int,
    since: datetime,
    after: tuple[int, int] | None = None,
    types: list[str] | None = None,
    webhook_id=None,
) -> QuerySet[WebhookDelivery]:
    """The outbox rows the caller may see (the deliveries of the webhooks `webhook_list` shows
    them), in commit order: by the writing transaction's id, then by row id.

    Only rows of transactions below `horizon` (`feed_horizon()`, read just before: every
    transaction below it had ended) are returned, so a row committed late can never appear behind
    a cursor already handed out: the feed waits for it instead (a long transaction holds the feed
    back for as long as it runs). `after` is the (transaction id, row id) of the last row already
    read. Test sends (PING) are not events."""
    visible = webhook_list(user=user).values("pk")
    queryset = WebhookDelivery.objects.filter(webhook_id__in=visible, event_created_at__gte=since).exclude(
        trigger_event=PING_TRIGGER
    )
    queryset = queryset.filter(transaction_id__lt=horizon)
    if after is not None:
        transaction_id, row_id = after
        queryset = queryset.filter(
            Q(transaction_id__gt=transaction_id) | Q(transaction_id=transaction_id, id__gt=row_id)
        )
    if types:
        queryset = queryset.filter(trigger_event__in=types)
    if webhook_id is not None:
        queryset = queryset.filter(webhook_id=webhook_id)
    return queryset.order_by("transaction_id", "id")


# Transaction ids are shared by every database of a PostgreSQL cluster, so the cluster's oldest
# running transaction (`pg_snapshot_xmin`) may belong to another database and hold the feed back
# for as long as it runs. Only this database's transactions can write its outbox: the horizon is
# the oldest running transaction of this database (pg_stat_activity's 32-bit `backend_xid`,
# matched to the snapshot's 64-bit ids), else the snapshot's `xmax` (every id below it has
# ended). Another role's sessions show their `backend_xid` only to a superuser or a member of
# pg_read_all_stats; without either, the cluster-wide xmin is used (always safe, maybe slower).
FEED_HORIZON_SQL = """
WITH snapshot AS (SELECT pg_current_snapshot() AS value),
this_database AS (
    SELECT backend_xid::text::bigint AS xid FROM pg_stat_activity
    WHERE datname = current_database() AND backend_xid IS NOT NULL
),
sees_all AS (
    SELECT rolsuper OR pg_has_role(current_user, 'pg_read_all_stats', 'MEMBER') AS value
    FROM pg_roles WHERE rolname = current_user
)
SELECT CASE WHEN (SELECT value FROM sees_all) THEN
    COALESCE(
        (SELECT min(running::text::bigint) FROM snapshot, pg_snapshot_xip(snapshot.value) AS running
         WHERE mod(running::text::bigint, 4294967296) IN (SELECT xid FROM this_database)),
        (SELECT pg_snapshot_xmax(value)::text::bigint FROM snapshot)
    )
ELSE (SELECT pg_snapshot_xmin(value)::text::bigint FROM snapshot) END
"""


def feed_horizon() -> int:
    """A transaction id below which every transaction that could write this database's outbox
    has ended, so its rows are visible to any later statement or never will be (`event_feed`)."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(FEED_HORIZON_SQL)
        return cursor.fetchone()[0]


# --- who hears about an event -----------------------------------------------------------------


def owner_filter(*, user=None, team=None, event_type=None) -> Q:
    """Webhooks that hear about an event of `user`, `team` or `event_type`: the event type's own
    webhooks, its owner's user-level webhooks and its team's team-level webhooks."""
    return _owner_condition(
        user_id=None if user is None else user.pk,
        team_id=None if team is None else team.pk,
        event_type=None if event_type is None else (event_type.pk, event_type.owner_id, event_type.team_id),
    )


def _owner_condition(*, user_id, team_id, event_type: tuple | None) -> Q:
    """`owner_filter` by ids (values, or the `Parameter`s of a compiled query); `event_type` is
    (its id, its owner's id, its team's id), each of the last two None where it has none."""
    user_level = Q(team__isnull=True, event_type__isnull=True)
    condition = Q(pk__in=[])
    if user_id is not None:
        condition |= user_level & Q(user_id=user_id)
    if team_id is not None:
        condition |= Q(team_id=team_id)
    if event_type is not None:
        event_type_id, owner_id, event_type_team_id = event_type
        condition |= Q(event_type_id=event_type_id)
        if owner_id is not None:
            condition |= user_level & Q(user_id=owner_id)
        if event_type_team_id is not None:
            condition |= Q(team_id=event_type_team_id)
    return condition


def subscribed_to(trigger: str, webhooks) -> list[Webhook]:
    # Filtered in Python: the candidates are already loaded, and an owner has a handful of webhooks.
    return [webhook for webhook in webhooks if trigger in webhook.event_triggers]


def subscribed_webhooks(*, trigger: str, user=None, team=None, event_type=None) -> list[Webhook]:
    candidates = Webhook.objects.filter(owner_filter(user=user, team=team, event_type=event_type), active=True)
    return subscribed_to(trigger, candidates.order_by("created_at", "id"))


def booking_webhooks(booking) -> list[Webhook]:
    """The active webhooks that hear about `booking` (its organizer's, its event type's, its team's),
    oldest first, as `emit_event` would find them: one query for every event and scheduled trigger
    of a booking step (pick a trigger's with `subscribed_to`)."""
    event_type_id, owner_id, team_id = booking.event_type_id, None, None
    if event_type_id is not None:
        owner_id, team_id = booking.event_type.owner_id, booking.event_type.team_id
    query = _booking_webhooks(
        with_user=booking.organizer_id is not None,
        with_event_type=event_type_id is not None,
        with_owner=owner_id is not None,
        with_team=team_id is not None,
    )
    return query.all(user_id=booking.organizer_id, event_type_id=event_type_id, owner_id=owner_id, team_id=team_id)


@functools.cache
def _booking_webhooks(*, with_user: bool, with_event_type: bool, with_owner: bool, with_team: bool) -> CompiledQuery:
    """`booking_webhooks`' query for one shape of booking, built and compiled by the ORM once per
    process from `owner_filter`'s rule with `Parameter`s for the ids: every booking write reads it,
    and building it per call cost more CPU than PostgreSQL took to answer it (docs/benchmarks.md)."""

    def key(name: str, relation: str) -> Parameter:  # an id of the model `relation` points to
        return Parameter(name, Webhook._meta.get_field(relation).target_field)

    user_id = key("user_id", "user")
    event_type = None
    if with_event_type:
        event_type = (
            key("event_type_id", "event_type"),
            key("owner_id", "user") if with_owner else None,
            key("team_id", "team") if with_team else None,
        )
    condition = _owner_condition(user_id=user_id if with_user else None, team_id=None, event_type=event_type)
    return CompiledQuery(Webhook.objects.filter(condition, active=True).order_by("created_at", "id"))


def outbox_backlog() -> tuple[int, float]:
    """(deliveries not finished, seconds the oldest due one has waited: 0 when none is due), in one
    query over the open deliveries' partial index (the metrics' scrape)."""
    from django.db.models import Count, Min
    from django.utils import timezone

    now = timezone.now()
    row = WebhookDelivery.objects.filter(status__in=OPEN_DELIVERY_STATUSES).aggregate(
        depth=Count("id"), oldest_due=Min("next_attempt_at", filter=Q(next_attempt_at__lte=now))
    )
    oldest_due = row["oldest_due"]
    return row["depth"], (now - oldest_due).total_seconds() if oldest_due is not None else 0.0
