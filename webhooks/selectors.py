"""Reads of webhooks and deliveries, with their visibility rule and their joins in one place."""

from django.db.models import Prefetch, Q, QuerySet

from accounts.models import Membership, MembershipRole
from webhooks.models import DeliveryAttempt, Webhook, WebhookDelivery, WebhookScheduledTrigger

ADMIN_ROLES = (MembershipRole.ADMIN, MembershipRole.OWNER)


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
    administered = Membership.objects.filter(user=user, accepted=True, role__in=ADMIN_ROLES).values("team_id")
    return queryset.filter(
        Q(user=user, team__isnull=True, event_type__isnull=True)
        | Q(event_type__owner=user)
        | Q(event_type__team_id__in=administered)
        | Q(team_id__in=administered)
    )


def webhook_get(*, user, webhook_id) -> Webhook | None:
    return webhook_list(user=user).filter(pk=webhook_id).first()


def delivery_list(*, webhook: Webhook, status: str | None = None) -> QuerySet[WebhookDelivery]:
    """Newest first: a delivery log is read from the top."""
    queryset = WebhookDelivery.objects.filter(webhook=webhook).order_by("-id")
    if status:
        queryset = queryset.filter(status=status)
    return queryset


def delivery_with_attempts(*, webhook: Webhook) -> QuerySet[WebhookDelivery]:
    return delivery_list(webhook=webhook).prefetch_related(
        Prefetch("attempt_log", queryset=DeliveryAttempt.objects.order_by("attempt_number"))
    )
