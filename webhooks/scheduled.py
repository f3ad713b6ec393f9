"""Scheduled MEETING_STARTED / MEETING_ENDED triggers: one row per webhook, booking and trigger,
kept in step with the booking (created, moved or removed in the booking's own transaction), and
turned into ordinary deliveries by the sweeper once due. See docs/webhooks.md.
"""

from django.db import transaction
from django.utils import timezone

from webhooks.conf import webhook_setting
from webhooks.models import Webhook, WebhookScheduledTrigger, WebhookTrigger
from webhooks.outbox import create_deliveries
from webhooks.selectors import booking_webhooks
from webhooks.sources import bookings

MEETING_TRIGGERS = (WebhookTrigger.MEETING_STARTED, WebhookTrigger.MEETING_ENDED)


def _meeting_trigger_time(booking, trigger: str):
    return booking.start_time if trigger == WebhookTrigger.MEETING_STARTED else booking.end_time


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
    if not bookings().is_accepted(booking):
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
    WebhookScheduledTrigger.objects.filter(webhook=webhook).exclude(trigger_event__in=webhook.event_triggers).delete()
    triggers = [trigger for trigger in MEETING_TRIGGERS if trigger in webhook.event_triggers]
    if not triggers or not webhook.active:
        return
    now = timezone.now()
    existing = set(WebhookScheduledTrigger.objects.filter(webhook=webhook).values_list("booking_id", "trigger_event"))
    rows = []
    for booking in bookings().upcoming_bookings(webhook=webhook, now=now):
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
            .prefetch_related("booking__attendees", "booking__payments")
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
