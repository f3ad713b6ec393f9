"""Reads of webhooks and deliveries, with their visibility rule and their joins in one place, and
the reads that decide which webhooks hear about an event."""

from django.db.models import Prefetch, Q, QuerySet

from accounts.selectors import managed_team_ids
from webhooks.models import DeliveryAttempt, Webhook, WebhookDelivery, WebhookScheduledTrigger


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


def delivery_list(*, webhook: Webhook, status: str | None = None) -> QuerySet[WebhookDelivery]:
    """Newest first: a delivery log is read from the top. With each delivery's attempts in the
    order they were made, for the single-delivery answers (a list's rows do not read them)."""
    queryset = (
        WebhookDelivery.objects.filter(webhook=webhook)
        .prefetch_related(Prefetch("attempt_log", queryset=DeliveryAttempt.objects.order_by("attempt_number")))
        .order_by("-id")
    )
    if status:
        queryset = queryset.filter(status=status)
    return queryset


# --- who hears about an event -----------------------------------------------------------------


def owner_filter(*, user=None, team=None, event_type=None) -> Q:
    """Webhooks that hear about an event of `user`, `team` or `event_type`: the event type's own
    webhooks, its owner's user-level webhooks and its team's team-level webhooks."""
    user_level = Q(team__isnull=True, event_type__isnull=True)
    condition = Q(pk__in=[])
    if user is not None:
        condition |= user_level & Q(user=user)
    if team is not None:
        condition |= Q(team=team)
    if event_type is not None:
        condition |= Q(event_type=event_type)
        if event_type.owner_id is not None:
            condition |= user_level & Q(user_id=event_type.owner_id)
        if event_type.team_id is not None:
            condition |= Q(team_id=event_type.team_id)
    return condition


def subscribed_to(trigger: str, webhooks) -> list[Webhook]:
    # Filtered in Python: the candidates are already loaded, and an owner has a handful of webhooks.
    return [webhook for webhook in webhooks if trigger in webhook.event_triggers]


def subscribed_webhooks(*, trigger: str, user=None, team=None, event_type=None) -> list[Webhook]:
    candidates = Webhook.objects.filter(owner_filter(user=user, team=team, event_type=event_type), active=True)
    return subscribed_to(trigger, candidates.order_by("created_at", "id"))


def _booking_owner_filter(booking) -> Q:
    return owner_filter(user=booking.organizer, event_type=booking.event_type)


def booking_webhooks(booking) -> list[Webhook]:
    """The active webhooks that hear about `booking` (its organizer's, its event type's, its team's),
    oldest first, as `emit_event` would find them: one query for every event and scheduled trigger
    of a booking step (pick a trigger's with `subscribed_to`)."""
    candidates = Webhook.objects.filter(_booking_owner_filter(booking), active=True)
    return list(candidates.order_by("created_at", "id"))
