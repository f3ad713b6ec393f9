"""How the rest of the service emits webhook events: the outbox of delivery rows.

`emit_event` is the entry point: call it inside the transaction that made the change; the delivery
rows commit (or roll back) with it, and the first attempt is enqueued only after commit
(`webhooks.dispatch`). Deactivating a webhook is the other end of the same rows: its open
deliveries are cancelled with it. It lives here rather than in `webhooks.services` because the
delivery engine deactivates webhooks (410 Gone, failing too long) while the services call the
engine (test sends); both import it from here, and neither imports the other back.
See docs/webhooks.md for the outbox, the lease and the sweeper.
"""

from datetime import timedelta

from django.db import transaction
from django.utils import timezone

from webhooks.conf import webhook_setting
from webhooks.dispatch import enqueue_new_deliveries
from webhooks.models import OPEN_DELIVERY_STATUSES, DeliveryStatus, Webhook, WebhookDelivery
from webhooks.selectors import subscribed_webhooks
from webhooks.signing import new_message_id


def _parked_until(webhook: Webhook, now):
    """When the webhook's circuit is open: the end of its backoff step (a new delivery waits for it in
    the database, unleased and unpublished, and the sweeper sends it then). Else None."""
    open_until = webhook.circuit_open_until
    return open_until if open_until is not None and open_until > now else None


def create_deliveries(*, webhooks, trigger: str, payload: dict) -> list[WebhookDelivery]:
    now = timezone.now()
    lease_expires_at = now + timedelta(seconds=webhook_setting("LEASE_SECONDS"))
    rows = []
    for webhook in webhooks:
        parked_until = _parked_until(webhook, now)
        rows.append(
            WebhookDelivery(
                webhook=webhook,
                trigger_event=trigger,
                payload=payload,
                event_created_at=now,
                message_id=new_message_id(),
                status=DeliveryStatus.PENDING,
                next_attempt_at=parked_until or now,
                # Leased to the broker message enqueued after commit; the sweeper takes it back if lost.
                lease_expires_at=None if parked_until else lease_expires_at,
            )
        )
    deliveries = WebhookDelivery.objects.bulk_create(rows)
    gated = [
        (delivery.pk, delivery.webhook_id, delivery.webhook.rate_limit)
        for delivery in deliveries
        if delivery.lease_expires_at is not None
    ]
    if gated:
        transaction.on_commit(lambda: enqueue_new_deliveries(gated))
    return deliveries


def emit_event(*, trigger: str, payload: dict, user=None, team=None, event_type=None) -> list:
    """Call inside the transaction that made the change. Finds active webhooks subscribed to `trigger`
    owned by `user`, by `team`, or by `event_type` (and user-level webhooks of the event type's owner /
    team-level webhooks of the event type's team), writes one delivery row per webhook (outbox),
    enqueues the first attempt with transaction.on_commit. Returns the delivery rows."""
    webhooks = subscribed_webhooks(trigger=trigger, user=user, team=team, event_type=event_type)
    return create_deliveries(webhooks=webhooks, trigger=trigger, payload=payload)


@transaction.atomic
def webhook_deactivate(*, webhook: Webhook, reason: str) -> Webhook:
    """`active: false` means nothing is sent: pending deliveries are cancelled with it."""
    Webhook.objects.filter(pk=webhook.pk).update(active=False, disabled_reason=reason[:500])
    WebhookDelivery.objects.filter(webhook_id=webhook.pk, status__in=OPEN_DELIVERY_STATUSES).update(
        status=DeliveryStatus.CANCELLED, next_attempt_at=None, lease_expires_at=None, in_sequence=False
    )
    webhook.active, webhook.disabled_reason = False, reason[:500]
    return webhook
