"""How the rest of the service emits webhook events (contract §5.2, §5.4).

`emit_event` is the outbox: call it inside the transaction that made the change; the delivery rows
commit (or roll back) with it, and the first attempt is enqueued only after commit.
"""

import logging
from datetime import timedelta

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from webhooks.conf import webhook_setting
from webhooks.models import (
    DeliveryStatus,
    Webhook,
    WebhookDelivery,
    WebhookScheduledTrigger,
    WebhookTrigger,
)
from webhooks.signing import new_message_id

logger = logging.getLogger(__name__)

MEETING_TRIGGERS = (WebhookTrigger.MEETING_STARTED, WebhookTrigger.MEETING_ENDED)


def enqueue_deliveries(delivery_ids: list[int], *, countdown: float | None = None) -> None:
    """Send one message per delivery to the broker, all in one round trip: kombu's producer batch
    writes them to Redis in one pipeline (a message each, as before, so that workers share them out).

    A broker that is down, or a pipeline that fails half-way, loses nothing: the rows stay leased
    for LEASE_SECONDS, then the sweeper enqueues them again (a second message for a delivery finds
    it claimed or done, as the sweeper's own do).
    """
    from webhooks.tasks import deliver_webhook

    try:
        with deliver_webhook.app.producer_or_acquire() as producer, producer.batch():
            for delivery_id in delivery_ids:
                deliver_webhook.apply_async((delivery_id,), countdown=countdown, producer=producer)
    except Exception:  # noqa: BLE001 - the broker is down; the sweeper will retry
        logger.warning("Could not enqueue webhook deliveries %s; the sweeper will pick them up", delivery_ids)


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
    # Filtered in Python: the JSON `contains` lookup does not exist on SQLite (the local default),
    # and an owner has a handful of webhooks.
    return [webhook for webhook in webhooks if trigger in webhook.event_triggers]


def subscribed_webhooks(*, trigger: str, user=None, team=None, event_type=None) -> list[Webhook]:
    candidates = Webhook.objects.filter(owner_filter(user=user, team=team, event_type=event_type), active=True)
    return subscribed_to(trigger, candidates.order_by("created_at", "id"))


def create_deliveries(*, webhooks, trigger: str, payload: dict) -> list[WebhookDelivery]:
    now = timezone.now()
    deliveries = WebhookDelivery.objects.bulk_create(
        [
            WebhookDelivery(
                webhook=webhook,
                trigger_event=trigger,
                payload=payload,
                event_created_at=now,
                message_id=new_message_id(),
                status=DeliveryStatus.PENDING,
                next_attempt_at=now,
                # Leased to the broker message enqueued after commit; the sweeper takes it back if lost.
                lease_expires_at=now + timedelta(seconds=webhook_setting("LEASE_SECONDS")),
            )
            for webhook in webhooks
        ]
    )
    delivery_ids = [delivery.pk for delivery in deliveries]
    if delivery_ids:
        transaction.on_commit(lambda: enqueue_deliveries(delivery_ids))
    return deliveries


def emit_event(*, trigger: str, payload: dict, user=None, team=None, event_type=None) -> list:
    """Call inside the transaction that made the change. Finds active webhooks subscribed to `trigger`
    owned by `user`, by `team`, or by `event_type` (and user-level webhooks of the event type's owner /
    team-level webhooks of the event type's team), writes one delivery row per webhook (outbox),
    enqueues the first attempt with transaction.on_commit. Returns the delivery rows."""
    webhooks = subscribed_webhooks(trigger=trigger, user=user, team=team, event_type=event_type)
    return create_deliveries(webhooks=webhooks, trigger=trigger, payload=payload)


def _meeting_trigger_time(booking, trigger: str):
    return booking.start_time if trigger == WebhookTrigger.MEETING_STARTED else booking.end_time


def _booking_owner_filter(booking) -> Q:
    return owner_filter(user=booking.organizer, event_type=booking.event_type)


def booking_webhooks(booking) -> list[Webhook]:
    """The active webhooks that hear about `booking` (its organizer's, its event type's, its team's),
    oldest first, as `emit_event` would find them: one query for every event and scheduled trigger
    of a booking step (pick a trigger's with `subscribed_to`)."""
    candidates = Webhook.objects.filter(_booking_owner_filter(booking), active=True)
    return list(candidates.order_by("created_at", "id"))


def _meeting_trigger_rows(booking, webhooks) -> list[WebhookScheduledTrigger]:
    """The MEETING_STARTED/ENDED rows an ACCEPTED booking should have: one per subscribed webhook
    and trigger whose time is still ahead."""
    now = timezone.now()
    rows = []
    for webhook in webhooks:
        for trigger in MEETING_TRIGGERS:
            when = _meeting_trigger_time(booking, trigger)
            if trigger in webhook.event_triggers and when > now:
                rows.append(
                    WebhookScheduledTrigger(webhook=webhook, booking=booking, trigger_event=trigger, start_after=when)
                )
    return rows


def create_meeting_triggers(*, booking, webhooks: list[Webhook]) -> None:
    """MEETING_STARTED/ENDED rows for an ACCEPTED booking created in this transaction, in one
    INSERT. Such a booking has no rows yet (none can refer to a row other transactions do not
    see), so there is nothing to move or remove as `schedule_meeting_triggers` does.
    `webhooks`: as `booking_webhooks` returns them."""
    WebhookScheduledTrigger.objects.bulk_create(_meeting_trigger_rows(booking, webhooks))


@transaction.atomic(savepoint=False)
def schedule_meeting_triggers(*, booking, webhooks: list[Webhook] | None = None) -> None:
    """Create or move MEETING_STARTED/ENDED rows for an ACCEPTED booking, for webhooks of its
    organizer / event type / team subscribed to them. Any other status removes them.

    `webhooks`: as `booking_webhooks` returns them, when the caller has them. One upsert writes
    new and moved rows alike (a concurrent `schedule_meeting_triggers_for_webhook` may insert the
    same row: the upsert takes it over), one DELETE removes the rest.
    """
    from scheduling.models import BookingStatus

    if booking.status != BookingStatus.ACCEPTED:
        cancel_meeting_triggers(booking=booking)
        return
    if webhooks is None:
        webhooks = booking_webhooks(booking)
    kept = WebhookScheduledTrigger.objects.bulk_create(
        _meeting_trigger_rows(booking, webhooks),
        update_conflicts=True,
        unique_fields=["webhook", "booking", "trigger_event"],
        update_fields=["start_after"],
    )
    WebhookScheduledTrigger.objects.filter(booking=booking).exclude(pk__in=[row.pk for row in kept]).delete()


def cancel_meeting_triggers(*, booking) -> None:
    """Delete the booking's pending scheduled triggers."""
    WebhookScheduledTrigger.objects.filter(booking=booking).delete()


def schedule_meeting_triggers_for_webhook(*, webhook: Webhook) -> None:
    """After a webhook (re)subscribes to MEETING_*: rows for its owner's upcoming accepted bookings;
    rows for triggers it no longer subscribes to go."""
    from scheduling.models import Booking, BookingStatus

    WebhookScheduledTrigger.objects.filter(webhook=webhook).exclude(trigger_event__in=webhook.event_triggers).delete()
    triggers = [trigger for trigger in MEETING_TRIGGERS if trigger in webhook.event_triggers]
    if not triggers or not webhook.active:
        return
    if webhook.event_type_id is not None:
        bookings = Booking.objects.filter(event_type_id=webhook.event_type_id)
    elif webhook.team_id is not None:
        bookings = Booking.objects.filter(event_type__team_id=webhook.team_id)
    elif webhook.user_id is not None:
        bookings = Booking.objects.filter(organizer_id=webhook.user_id)
    else:
        return
    now = timezone.now()
    existing = set(WebhookScheduledTrigger.objects.filter(webhook=webhook).values_list("booking_id", "trigger_event"))
    rows = []
    for booking in bookings.filter(status=BookingStatus.ACCEPTED, end_time__gt=now).only(
        "id", "start_time", "end_time"
    ):
        for trigger in triggers:
            when = _meeting_trigger_time(booking, trigger)
            if when > now and (booking.pk, trigger) not in existing:
                rows.append(
                    WebhookScheduledTrigger(webhook=webhook, booking=booking, trigger_event=trigger, start_after=when)
                )
    WebhookScheduledTrigger.objects.bulk_create(rows)


def fire_due_scheduled_triggers(*, now=None) -> int:
    """Turn due MEETING_* rows into deliveries (same machinery, same retries). Rows are claimed with
    SKIP LOCKED so that concurrent sweepers never fire one twice."""
    from webhooks.samples import booking_payload

    now = now or timezone.now()
    fired = 0
    with transaction.atomic():
        due = list(
            WebhookScheduledTrigger.objects.select_for_update(skip_locked=True, of=("self",))
            .select_related(
                "webhook", "booking", "booking__organizer", "booking__event_type", "booking__rescheduled_from"
            )
            .prefetch_related("booking__attendees")
            .filter(start_after__lte=now)
            .order_by("start_after", "id")[: webhook_setting("SWEEP_BATCH_SIZE")]
        )
        for scheduled in due:
            webhook = scheduled.webhook
            if webhook.active and scheduled.trigger_event in webhook.event_triggers:
                create_deliveries(
                    webhooks=[webhook],
                    trigger=scheduled.trigger_event,
                    payload=booking_payload(scheduled.booking, scheduled.trigger_event),
                )
                fired += 1
        WebhookScheduledTrigger.objects.filter(pk__in=[scheduled.pk for scheduled in due]).delete()
    return fired
