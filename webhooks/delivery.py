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
import time
from dataclasses import dataclass
from datetime import datetime, timedelta
from email.utils import parsedate_to_datetime

from django.conf import settings
from django.db import connection, transaction
from django.db.models import F, Q, Value
from django.db.models.functions import Coalesce, Greatest
from django.utils import timezone

from core.datetimes import iso_utc
from core.fastpath.compiled_queries import instances
from webhooks import sending, slots
from webhooks.app_bodies import render_for_app
from webhooks.conf import webhook_setting
from webhooks.delivery_sql import ATTEMPT_RESULT_FIELDS, CLAIM_SQL, CLAIMED_ROW, RECORD_SUCCESS_SQL
from webhooks.dispatch import broker_backlog, enqueue_deliveries
from webhooks.models import (
    OPEN_DELIVERY_STATUSES,
    PING_TRIGGER,
    DeliveryAttempt,
    DeliveryStatus,
    ErrorClass,
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
    event = {
        "trigger_event": delivery.trigger_event,
        "created_at": iso_utc(delivery.event_created_at),
        "payload": delivery.payload,
    }
    rendered = render_for_app(webhook.app_id, **event) or render(webhook.payload_template, **event)
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


@dataclass
class StartedAttempt:
    """An attempt that has been claimed, signed and logged as open, and holds its webhook's slot."""

    delivery: WebhookDelivery
    attempt: DeliveryAttempt
    body: bytes
    headers: dict[str, str]
    gated: bool


def _wait_for_circuit(delivery_id: int, *, now: datetime, open_until: datetime) -> None:
    """A delivery of a webhook whose circuit is open waits for the end of its backoff step, in the
    database, like a retry: the sweeper sends it then (oldest first)."""
    WebhookDelivery.objects.filter(pk=delivery_id, status__in=OPEN_DELIVERY_STATUSES).filter(
        Q(status=DeliveryStatus.PENDING) | Q(lease_expires_at__isnull=True) | Q(lease_expires_at__lte=now)
    ).update(
        status=DeliveryStatus.PENDING,
        next_attempt_at=Greatest(Coalesce(F("next_attempt_at"), Value(open_until)), Value(open_until)),
        lease_expires_at=None,
    )


def _admit(delivery_id: int, now: datetime):
    """The webhook's gate: its circuit, then a slot under its concurrency cap and rate limit.
    Returns the webhook id when admitted, else None (the delivery waits; see webhooks.slots)."""
    row = (
        WebhookDelivery.objects.filter(pk=delivery_id, status__in=OPEN_DELIVERY_STATUSES)
        .values_list("webhook_id", "webhook__circuit_open_until", "webhook__rate_limit")
        .first()
    )
    if row is None:
        return None
    webhook_id, open_until, rate_limit = row
    if open_until is not None and open_until > now:
        _wait_for_circuit(delivery_id, now=now, open_until=open_until)
        # The publisher may have taken a slot for it before the circuit opened: give it back now
        # rather than hold it for LEASE_SECONDS (it would keep the webhook's first attempts waiting).
        release_slot(webhook_id=webhook_id, delivery_id=delivery_id)
        return None
    admission = slots.gate().acquire(
        webhook_id=webhook_id,
        delivery_id=delivery_id,
        cap=webhook_setting("CONCURRENCY_PER_WEBHOOK"),
        hold_seconds=webhook_setting("LEASE_SECONDS"),
        rate=rate_limit,
    )
    if not admission.admitted:
        if admission.retry_in is not None:
            enqueue_deliveries([delivery_id], countdown=admission.retry_in)
        return None
    return webhook_id


def release_slot(*, webhook_id, delivery_id: int) -> None:
    """Give the webhook's slot back and send its oldest waiting delivery."""
    next_delivery = slots.gate().release(webhook_id=webhook_id, delivery_id=delivery_id)
    if next_delivery is not None:
        enqueue_deliveries([next_delivery])


def start_attempt(*, delivery_id: int, force: bool = False) -> StartedAttempt | None:
    """Claim a delivery, sign it and log its attempt as open (so that an attempt cut short by a
    worker that stopped is still in the log). None if it is not ours to send now: done, not due,
    sent by someone else, its circuit open or every slot of its webhook taken (it then waits its
    turn). `force` (test sends) skips the gate, the due time and the inactive rule."""
    now = timezone.now()
    webhook_id = None
    if not force:
        webhook_id = _admit(delivery_id, now)
        if webhook_id is None:
            return None
    delivery = _claim(delivery_id, now=now, force=force)
    if delivery is None:
        if webhook_id is not None:
            release_slot(webhook_id=webhook_id, delivery_id=delivery_id)
        return None
    webhook = delivery.webhook
    body, headers = build_request(delivery, webhook, now)
    attempt = DeliveryAttempt.objects.create(
        delivery=delivery,
        attempt_number=delivery.attempts,
        attempted_at=now,
        request_url=webhook.subscriber_url,
        request_headers=headers,
    )
    return StartedAttempt(delivery=delivery, attempt=attempt, body=body, headers=headers, gated=not force)


def finish_attempt(started: StartedAttempt, result: sending.SendResult, *, retry: bool = True) -> DeliveryAttempt:
    """Log the attempt's result, decide what next, give the webhook's slot back."""
    delivery = started.delivery
    try:
        if result.succeeded:
            return _record_success(started=started, result=result)
        return _record(started=started, result=result, retry=retry)
    finally:
        if started.gated:
            release_slot(webhook_id=delivery.webhook_id, delivery_id=delivery.pk)


def attempt_delivery(*, delivery_id: int, force: bool = False, retry: bool = True) -> DeliveryAttempt | None:
    """Send one attempt of a delivery, wait for it and log it. `force` sends even if not due or
    inactive (test sends); `retry=False` makes a failure final (PING)."""
    started = start_attempt(delivery_id=delivery_id, force=force)
    if started is None:
        return None
    try:
        result = sending.post(url=started.delivery.webhook.subscriber_url, body=started.body, headers=started.headers)
    except BaseException:
        if started.gated:
            release_slot(webhook_id=started.delivery.webhook_id, delivery_id=delivery_id)
        raise
    return finish_attempt(started, result, retry=retry)


def _result_values(result: sending.SendResult) -> dict:
    return {
        "duration_ms": result.duration_ms,
        "request_headers": result.request_headers,
        "response_status": result.response_status,
        "response_headers": result.response_headers,
        "response_body": result.response_body,
        "error_class": result.error_class,
        "error_message": result.error_message,
    }


def _record_success(*, started: StartedAttempt, result: sending.SendResult) -> DeliveryAttempt:
    """The hot path of `_record`: the attempt's result, the delivery succeeded, the webhook's failure
    run and circuit reset, in one statement (one round trip, atomic on its own). A delivery of a
    re-enabled webhook's sequence also releases the next one, in the same transaction."""
    if started.delivery.in_sequence:
        with transaction.atomic():
            attempt = _write_success(started=started, result=result)
            _continue_sequence(webhook_id=started.delivery.webhook_id, delivery_id=started.delivery.pk)
        return attempt
    return _write_success(started=started, result=result)


def _write_success(*, started: StartedAttempt, result: sending.SendResult) -> DeliveryAttempt:
    delivery, attempt = started.delivery, started.attempt
    for name, value in _result_values(result).items():
        setattr(attempt, name, value)
    values = {
        f"attempt_{field.column}": field.get_db_prep_save(getattr(attempt, field.attname), connection)
        for field in ATTEMPT_RESULT_FIELDS
    }
    with connection.cursor() as cursor:
        cursor.execute(
            RECORD_SUCCESS_SQL,
            {
                **values,
                "attempt_id": attempt.pk,
                "delivery_id": delivery.pk,
                "webhook_id": delivery.webhook_id,
                "delivered_at": timezone.now(),
                "succeeded": DeliveryStatus.SUCCEEDED.value,
                "ends_failure_run": delivery.trigger_event != PING_TRIGGER,
            },
        )
        cursor.fetchone()
    return attempt


def _record(*, started: StartedAttempt, result: sending.SendResult, retry: bool) -> DeliveryAttempt:
    finished = timezone.now()
    attempt = started.attempt
    with transaction.atomic():
        delivery = (
            WebhookDelivery.objects.select_for_update(of=("self",))
            .select_related("webhook")
            .get(pk=attempt.delivery_id)
        )
        webhook = delivery.webhook
        for name, value in _result_values(result).items():
            setattr(attempt, name, value)
        attempt.save(update_fields=list(_result_values(result)))
        is_ping = delivery.trigger_event == PING_TRIGGER
        delivery.lease_expires_at = None
        if result.succeeded:
            delivery.status = DeliveryStatus.SUCCEEDED
            delivery.delivered_at = finished
            delivery.next_attempt_at = None
            Webhook.objects.filter(pk=webhook.pk).update(
                consecutive_failures=0,
                circuit_open_until=None,
                **({} if is_ping else {"failing_since": None}),
            )
        elif result.response_status == 410:
            delivery.status = DeliveryStatus.FAILED
            delivery.next_attempt_at = None
            delivery.save()
            webhook_deactivate(webhook=webhook, reason="The subscriber answered 410 Gone.")
            return attempt
        else:
            delay = retry_delay(delivery.retry_index + 1, result) if retry else None
            delivery.retry_index += 1
            open_until = _note_unreachable(webhook, result, finished) if not is_ping else None
            if open_until is not None and delay is not None:
                delay = max(delay, (open_until - finished).total_seconds())
            if delivery.status == DeliveryStatus.CANCELLED:
                delivery.next_attempt_at = None
            elif delay is None:
                delivery.status = DeliveryStatus.FAILED
                delivery.next_attempt_at = None
            elif not webhook.active:
                # Disabled while this attempt was out: it waits with the webhook's other deliveries.
                delivery.status, delivery.next_attempt_at = DeliveryStatus.PENDING, None
            else:
                delivery.status = DeliveryStatus.PENDING
                delivery.next_attempt_at = finished + timedelta(seconds=delay)
                if delay <= webhook_setting("SHORT_RETRY_MAX_SECONDS"):
                    delivery.lease_expires_at = delivery.next_attempt_at + timedelta(
                        seconds=webhook_setting("LEASE_SECONDS")
                    )
                    delivery_id = delivery.pk
                    transaction.on_commit(lambda: enqueue_deliveries([delivery_id], countdown=delay))
        delivery.save()
        if not result.succeeded and not is_ping:
            _note_failure(webhook, finished)
        if delivery.in_sequence:
            _continue_sequence(webhook_id=webhook.pk, delivery_id=delivery.pk)
    return attempt


def _note_unreachable(webhook: Webhook, result: sending.SendResult, now: datetime) -> datetime | None:
    """The circuit breaker: BREAKER_THRESHOLD attempts in a row that timed out or could not connect
    open the circuit until the webhook's next backoff step (the retry schedule, one step further
    each time it trips again); an answer, even an error, resets the count. Returns when the
    circuit closes, if it is open."""
    if not result.unreachable:
        if webhook.consecutive_failures or webhook.circuit_open_until:
            Webhook.objects.filter(pk=webhook.pk).update(consecutive_failures=0, circuit_open_until=None)
        return None
    # Counted in the database, so that attempts finishing on several workers add up; the row stays
    # locked by this UPDATE until the transaction ends, so the read below sees this attempt's count.
    Webhook.objects.filter(pk=webhook.pk).update(consecutive_failures=F("consecutive_failures") + 1)
    failures = Webhook.objects.filter(pk=webhook.pk).values_list("consecutive_failures", flat=True).first() or 0
    threshold = webhook_setting("BREAKER_THRESHOLD")
    if failures < threshold:
        return None
    schedule = webhook_setting("RETRY_SCHEDULE_SECONDS")
    step = float(schedule[min(failures - threshold, len(schedule) - 1)])
    open_until = now + timedelta(seconds=step)
    Webhook.objects.filter(pk=webhook.pk).update(circuit_open_until=open_until)
    return open_until


def _note_failure(webhook: Webhook, now: datetime) -> None:
    """Auto-disable a webhook whose attempts have all failed for AUTO_DISABLE_AFTER_SECONDS."""
    if webhook.failing_since is None:
        Webhook.objects.filter(pk=webhook.pk, failing_since__isnull=True).update(failing_since=now)
        return
    window = webhook_setting("AUTO_DISABLE_AFTER_SECONDS")
    if webhook.active and now - webhook.failing_since >= timedelta(seconds=window):
        webhook_auto_disable(
            webhook=webhook,
            reason=f"Every delivery failed since {iso_utc(webhook.failing_since)}; disabled automatically.",
        )


@transaction.atomic
def webhook_auto_disable(*, webhook: Webhook, reason: str) -> None:
    """Disable a webhook that kept failing, keeping what it has not received: its open deliveries
    stay pending with no due time (the sweeper leaves them) until it is re-enabled."""
    Webhook.objects.filter(pk=webhook.pk).update(active=False, disabled_reason=reason[:500])
    WebhookDelivery.objects.filter(webhook_id=webhook.pk, status=DeliveryStatus.PENDING).update(
        next_attempt_at=None, lease_expires_at=None
    )
    webhook.active, webhook.disabled_reason = False, reason[:500]


def resume_deliveries(*, webhook: Webhook) -> int:
    """After a webhook is re-enabled: its waiting deliveries (kept by auto-disable) are sent again
    from the start of the retry schedule, oldest first, one after the other. Call inside the
    transaction that re-enables it (which holds the webhook's row).

    The order is kept in the database, not by timing: the deliveries join the webhook's sequence
    (`in_sequence`) and stay without a due time, so neither a worker nor the sweeper can send them;
    only the oldest is released (due now, leased, enqueued). The end of its attempt, whatever the
    outcome, releases the next one in the transaction that logs it (`_continue_sequence`). A
    released delivery is an ordinary one for the lease and the sweeper: lost with a worker or
    with Redis, it is sent again when its lease runs out, and the sequence goes on from there."""
    paused = WebhookDelivery.objects.filter(
        webhook_id=webhook.pk, status=DeliveryStatus.PENDING, next_attempt_at__isnull=True
    )
    resumed = paused.update(retry_index=0, lease_expires_at=None, in_sequence=True)
    if resumed:
        _release_next_in_sequence(webhook_id=webhook.pk)
    return resumed


def _paused():
    return Q(status=DeliveryStatus.PENDING, next_attempt_at__isnull=True)


def _release_next_in_sequence(*, webhook_id) -> int | None:
    """Make the oldest waiting delivery of the webhook's sequence due and enqueue it after commit,
    unless one of the sequence is out already (released, being sent, or sent early by a
    redeliver): its end releases the next. The caller holds the webhook's row, so that a re-enable
    and the end of an attempt never both release one."""
    sequence = WebhookDelivery.objects.filter(webhook_id=webhook_id, in_sequence=True)
    if sequence.filter(status__in=OPEN_DELIVERY_STATUSES).exclude(_paused()).exists():
        return None
    next_id = sequence.filter(_paused()).order_by("id").values_list("pk", flat=True).first()
    if next_id is None:
        return None
    now = timezone.now()
    WebhookDelivery.objects.filter(pk=next_id).update(
        next_attempt_at=now, lease_expires_at=now + timedelta(seconds=webhook_setting("LEASE_SECONDS"))
    )
    transaction.on_commit(lambda: enqueue_deliveries([next_id]))
    return next_id


def _continue_sequence(*, webhook_id, delivery_id: int) -> None:
    """An attempt of a delivery in its webhook's sequence ended (inside the transaction that logs
    it): the delivery leaves the sequence (a retry of it is due on its own schedule) and the next
    one is released. If the webhook was disabled while it was out, the delivery is waiting again
    and keeps its place: re-enabling starts from it."""
    webhook = Webhook.objects.select_for_update(no_key=True).filter(pk=webhook_id).values_list("active", flat=True)
    active = webhook.first()
    WebhookDelivery.objects.filter(pk=delivery_id, in_sequence=True).exclude(_paused()).update(in_sequence=False)
    if active:
        _release_next_in_sequence(webhook_id=webhook_id)


def close_interrupted_attempts(*, now: datetime) -> int:
    """Attempts left open by a worker that stopped mid-send (their delivery's lease ran out, or it
    is no longer being sent) are logged as `interrupted`: the receiver may have got the request."""
    open_attempts = DeliveryAttempt.objects.filter(error_class="", response_status__isnull=True).exclude(
        delivery__status=DeliveryStatus.DELIVERING, delivery__lease_expires_at__gt=now
    )
    return open_attempts.update(
        error_class=ErrorClass.INTERRUPTED,
        error_message="The attempt was cut short (the worker sending it stopped) before an answer was logged.",
    )


def sweep(*, now: datetime | None = None) -> int:
    """The beat task's body: fire due scheduled triggers, then re-enqueue due deliveries whose lease
    ran out (lost broker message, crashed worker, retry that waited in the database).

    A backlog (after a Redis outage, a subscriber back from a long failure) drains at the workers'
    rate, not at a fixed batch per run: the sweeper keeps claiming batches of SWEEP_BATCH_SIZE while
    the broker's queue holds fewer than SWEEP_QUEUE_TARGET messages, waiting for the workers to
    take some when it is full, for up to SWEEP_INTERVAL_SECONDS (the next run carries on). Only
    what the workers can reach well within LEASE_SECONDS is leased, so a deep backlog is not leased,
    expired and enqueued again in circles. Without a readable queue length it claims one batch."""
    fire_due_scheduled_triggers(now=now)
    close_interrupted_attempts(now=timezone.now())
    batch = webhook_setting("SWEEP_BATCH_SIZE")
    target = webhook_setting("SWEEP_QUEUE_TARGET")
    deadline = time.monotonic() + webhook_setting("SWEEP_INTERVAL_SECONDS")
    total = 0
    while True:
        backlog = broker_backlog()
        room = batch if backlog is None else min(batch, target - backlog)
        if room <= 0:
            if time.monotonic() >= deadline:
                break
            time.sleep(min(0.2, max(0.0, deadline - time.monotonic())))
            continue
        enqueued = _sweep_batch(room)
        total += enqueued
        if enqueued < room or backlog is None or time.monotonic() >= deadline:
            break
    total += _wake_waiting()
    if total:
        logger.info("Webhook sweeper enqueued %d due deliveries", total)
    return total


def _wake_waiting() -> int:
    """Deliveries waiting for a slot of their webhook whose holder died (a worker killed between
    logging an attempt and giving its slot back): the hold runs out after LEASE_SECONDS, and this
    sweep sends the waiting ones then, instead of when their own lease runs out (which a sweep may
    have just renewed: up to twice as late)."""
    webhook_ids = list(
        WebhookDelivery.objects.filter(status=DeliveryStatus.PENDING, next_attempt_at__isnull=False)
        .order_by()
        .values_list("webhook_id", flat=True)
        .distinct()[: webhook_setting("SWEEP_BATCH_SIZE")]
    )
    if not webhook_ids:
        return 0
    try:
        woken = slots.gate().reap_many(webhook_ids, cap=webhook_setting("CONCURRENCY_PER_WEBHOOK"))
    except Exception:  # noqa: BLE001 - Redis is down: their leases bring them back
        logger.warning("Could not look for deliveries waiting behind expired slots; their leases will")
        return 0
    if woken:
        enqueue_deliveries(woken)
    return len(woken)


def _sweep_batch(limit: int) -> int:
    now = timezone.now()
    lease = timedelta(seconds=webhook_setting("LEASE_SECONDS"))
    with transaction.atomic():
        due = list(
            WebhookDelivery.objects.select_for_update(skip_locked=True)
            .filter(status__in=OPEN_DELIVERY_STATUSES, next_attempt_at__lte=now)
            .filter(Q(lease_expires_at__isnull=True) | Q(lease_expires_at__lte=now))
            .order_by("next_attempt_at", "id")
            .values_list("pk", flat=True)[:limit]
        )
        if due:
            WebhookDelivery.objects.filter(pk__in=due).update(
                status=DeliveryStatus.PENDING, lease_expires_at=now + lease
            )
            transaction.on_commit(lambda: enqueue_deliveries(due))
    return len(due)
