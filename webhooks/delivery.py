"""The delivery engine: claim a delivery, send one attempt, log it, decide what next (the rules are
in docs/webhooks.md, "Retries, failures and the delivery log").

A delivery row moves pending → delivering → succeeded | pending (retry) | failed, or to cancelled
when its webhook is deactivated. Whoever holds a row's lease (`lease_expires_at`) owns it: the
broker message enqueued after commit, or the worker sending it. The sweeper re-enqueues due rows
whose lease ran out, which is how a crash of the web process, a worker or Redis loses nothing.
Retries wait in the database (`next_attempt_at`); only retries due within a few seconds also get a
Celery countdown.
"""

import logging
import random
from dataclasses import asdict
from datetime import datetime, timedelta
from email.utils import parsedate_to_datetime

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Q
from django.utils import timezone

from core.compiled_queries import instances
from core.datetimes import iso_utc
from webhooks import sending
from webhooks.conf import webhook_setting
from webhooks.delivery_sql import ATTEMPT_INSERT_FIELDS, CLAIM_SQL, CLAIMED_ROW, RECORD_SUCCESS_SQL
from webhooks.dispatch import enqueue_deliveries
from webhooks.models import (
    OPEN_DELIVERY_STATUSES,
    PING_TRIGGER,
    DeliveryAttempt,
    DeliveryStatus,
    Webhook,
    WebhookDelivery,
)
from webhooks.outbox import webhook_deactivate
from webhooks.scheduled import fire_due_scheduled_triggers
from webhooks.signing import signature_headers
from webhooks.templating import render

logger = logging.getLogger(__name__)

# A message may arrive a little before `next_attempt_at` (clock skew between hosts, countdown rounding).
EARLY_TOLERANCE = timedelta(seconds=1)


def user_agent() -> str:
    return f"{settings.SERVICE_NAME}-Webhooks/{settings.SERVICE_VERSION}"


def signing_secrets(webhook: Webhook, now: datetime) -> list[str]:
    secrets_in_use = [webhook.secret] if webhook.secret else []
    if (
        webhook.previous_secret
        and webhook.previous_secret_expires_at is not None
        and webhook.previous_secret_expires_at > now
    ):
        secrets_in_use.append(webhook.previous_secret)
    return secrets_in_use


def build_request(delivery: WebhookDelivery, webhook: Webhook, now: datetime) -> tuple[bytes, dict[str, str]]:
    rendered = render(
        webhook.payload_template,
        trigger_event=delivery.trigger_event,
        created_at=iso_utc(delivery.event_created_at),
        payload=delivery.payload,
    )
    headers = {"Content-Type": rendered.content_type, "User-Agent": user_agent()}
    headers.update(
        signature_headers(
            secrets_in_use=signing_secrets(webhook, now),
            message_id=delivery.message_id,
            timestamp=int(now.timestamp()),
            body=rendered.body,
        )
    )
    return rendered.body, headers


def retry_after_seconds(headers: dict) -> float | None:
    value = next((v for k, v in headers.items() if k.lower() == "retry-after"), None)
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        return max((parsedate_to_datetime(value) - timezone.now()).total_seconds(), 0.0)
    except (TypeError, ValueError):
        return None


def retry_delay(retry_index: int, result: sending.SendResult) -> float | None:
    """Seconds until the next attempt after the `retry_index`-th failure (1-based), or None when
    the schedule is exhausted. Retry-After (429/503) may push it out to twice the scheduled delay."""
    schedule = webhook_setting("RETRY_SCHEDULE_SECONDS")
    if retry_index > len(schedule):
        return None
    jitter = webhook_setting("RETRY_JITTER")
    delay = float(schedule[retry_index - 1]) * random.uniform(1 - jitter, 1 + jitter)
    if result.response_status in (429, 503):
        asked = retry_after_seconds(result.response_headers)
        if asked is not None:
            delay = min(max(delay, asked), 2 * delay)
    return delay


def _claim(delivery_id: int, *, now: datetime, force: bool) -> WebhookDelivery | None:
    """Take the row for one attempt, or None if it is not ours to send (done, cancelled, not due,
    or being sent by someone else under a valid lease). The returned delivery carries its webhook."""
    lease = webhook_setting("LEASE_SECONDS")
    with connection.cursor() as cursor:
        cursor.execute(
            CLAIM_SQL,
            {
                "id": delivery_id,
                "force": force,
                "now": now,
                "due_by": now + EARLY_TOLERANCE,
                "lease_expires_at": now + timedelta(seconds=lease),
                "pending": DeliveryStatus.PENDING.value,
                "delivering": DeliveryStatus.DELIVERING.value,
                "cancelled": DeliveryStatus.CANCELLED.value,
            },
        )
        row = cursor.fetchone()
    if row is None:
        return None
    delivery, webhook = instances(row, *CLAIMED_ROW)
    if delivery.status == DeliveryStatus.CANCELLED:
        return None
    delivery.webhook = webhook
    return delivery


def attempt_delivery(*, delivery_id: int, force: bool = False, retry: bool = True) -> DeliveryAttempt | None:
    """Send one attempt of a delivery and log it. `force` sends even if not due or inactive (test
    sends); `retry=False` makes a failure final (PING)."""
    now = timezone.now()
    delivery = _claim(delivery_id, now=now, force=force)
    if delivery is None:
        return None
    webhook = delivery.webhook
    body, headers = build_request(delivery, webhook, now)
    result = sending.post(url=webhook.subscriber_url, body=body, headers=headers)
    if result.succeeded:
        return _record_success(delivery=delivery, now=now, result=result)
    return _record(delivery_id=delivery.pk, attempt_number=delivery.attempts, now=now, result=result, retry=retry)


def _record_success(*, delivery: WebhookDelivery, now: datetime, result: sending.SendResult) -> DeliveryAttempt:
    """The hot path of `_record`: log the attempt, mark the delivery succeeded and end the webhook's
    failure run in one statement (one round trip, atomic on its own). Failures take `_record`."""
    attempt = DeliveryAttempt(
        delivery=delivery,
        attempt_number=delivery.attempts,
        attempted_at=now,
        request_url=delivery.webhook.subscriber_url,
        **asdict(result),
    )
    values = {
        f"attempt_{field.column}": field.get_db_prep_save(getattr(attempt, field.attname), connection)
        for field in ATTEMPT_INSERT_FIELDS
    }
    with connection.cursor() as cursor:
        cursor.execute(
            RECORD_SUCCESS_SQL,
            {
                **values,
                "delivery_id": delivery.pk,
                "webhook_id": delivery.webhook_id,
                "delivered_at": timezone.now(),
                "succeeded": DeliveryStatus.SUCCEEDED.value,
                "ends_failure_run": delivery.trigger_event != PING_TRIGGER,
            },
        )
        (attempt.pk,) = cursor.fetchone()
    attempt._state.adding = False
    return attempt


def _record(*, delivery_id: int, attempt_number: int, now: datetime, result: sending.SendResult, retry: bool):
    finished = timezone.now()
    with transaction.atomic():
        delivery = WebhookDelivery.objects.select_for_update(of=("self",)).select_related("webhook").get(pk=delivery_id)
        webhook = delivery.webhook
        attempt = DeliveryAttempt.objects.create(
            delivery=delivery,
            attempt_number=attempt_number,
            attempted_at=now,
            request_url=webhook.subscriber_url,
            **{key: value for key, value in asdict(result).items()},
        )
        is_ping = delivery.trigger_event == PING_TRIGGER
        delivery.lease_expires_at = None
        if result.succeeded:
            delivery.status = DeliveryStatus.SUCCEEDED
            delivery.delivered_at = finished
            delivery.next_attempt_at = None
            if webhook.failing_since is not None and not is_ping:
                Webhook.objects.filter(pk=webhook.pk).update(failing_since=None)
        elif result.response_status == 410:
            delivery.status = DeliveryStatus.FAILED
            delivery.next_attempt_at = None
            delivery.save()
            webhook_deactivate(webhook=webhook, reason="The subscriber answered 410 Gone.")
            return attempt
        else:
            delay = retry_delay(delivery.retry_index + 1, result) if retry else None
            delivery.retry_index += 1
            if delivery.status == DeliveryStatus.CANCELLED:
                delivery.next_attempt_at = None
            elif delay is None:
                delivery.status = DeliveryStatus.FAILED
                delivery.next_attempt_at = None
            else:
                delivery.status = DeliveryStatus.PENDING
                delivery.next_attempt_at = finished + timedelta(seconds=delay)
                if delay <= webhook_setting("SHORT_RETRY_MAX_SECONDS"):
                    delivery.lease_expires_at = delivery.next_attempt_at + timedelta(
                        seconds=webhook_setting("LEASE_SECONDS")
                    )
                    transaction.on_commit(lambda: enqueue_deliveries([delivery_id], countdown=delay))
        delivery.save()
        if not result.succeeded and not is_ping:
            _note_failure(webhook, finished)
    return attempt


def _note_failure(webhook: Webhook, now: datetime) -> None:
    """Auto-disable a webhook whose attempts have all failed for AUTO_DISABLE_AFTER_SECONDS."""
    if webhook.failing_since is None:
        Webhook.objects.filter(pk=webhook.pk, failing_since__isnull=True).update(failing_since=now)
        return
    window = webhook_setting("AUTO_DISABLE_AFTER_SECONDS")
    if webhook.active and now - webhook.failing_since >= timedelta(seconds=window):
        webhook_deactivate(
            webhook=webhook,
            reason=f"Every delivery failed since {iso_utc(webhook.failing_since)}; disabled automatically.",
        )


def sweep(*, now: datetime | None = None) -> int:
    """The beat task's body: fire due scheduled triggers, then re-enqueue due deliveries whose lease
    ran out (lost broker message, crashed worker, retry that waited in the database)."""
    fire_due_scheduled_triggers(now=now)
    now = timezone.now()
    lease = timedelta(seconds=webhook_setting("LEASE_SECONDS"))
    with transaction.atomic():
        due = list(
            WebhookDelivery.objects.select_for_update(skip_locked=True)
            .filter(status__in=OPEN_DELIVERY_STATUSES, next_attempt_at__lte=now)
            .filter(Q(lease_expires_at__isnull=True) | Q(lease_expires_at__lte=now))
            .order_by("next_attempt_at", "id")
            .values_list("pk", flat=True)[: webhook_setting("SWEEP_BATCH_SIZE")]
        )
        if due:
            WebhookDelivery.objects.filter(pk__in=due).update(
                status=DeliveryStatus.PENDING, lease_expires_at=now + lease
            )
            transaction.on_commit(lambda: enqueue_deliveries(due))
    if due:
        logger.info("Webhook sweeper enqueued %d due deliveries", len(due))
    return len(due)
