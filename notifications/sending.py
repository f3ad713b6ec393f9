"""The worker's side of the outbox: send queued messages over SMTP, log each attempt, retry with
backoff, and the sweep that beat runs (reminders that are due, messages whose retry is due or whose
broker message was lost).

A message is sent inside a transaction that holds its row locked (`SKIP LOCKED`), so two workers
never send it at once, and is marked sent in that same transaction. A worker that dies between the
SMTP server's acceptance and the commit leaves it pending: it is sent again later with the same
Message-ID, which receiving systems use to drop the copy (SMTP gives no stronger promise).
"""

import logging
import smtplib
import time
from datetime import datetime, timedelta

from django.core.mail import BadHeaderError, get_connection
from django.db import transaction
from django.utils import timezone

from notifications.conf import notification_setting
from notifications.limits import release_kick
from notifications.models import EmailAttempt, EmailMessage, EmailStatus, Reminder
from notifications.outbox import queue_reminder
from notifications.rendering import build_email

logger = logging.getLogger(__name__)

ACCEPTED = "ACCEPTED"


class _ServerAway(Exception):
    """The SMTP server cannot be reached: the rest of the batch waits for the next sweep."""


# When this process last found the SMTP server away, first attempts wait (time.monotonic()) until
# this: the messages stay pending for the sweep, which tries once per pass, so that an outage (a
# server that times out rather than refuses) costs the worker's pool one timeout per pass instead
# of one per booking, and webhook deliveries on the same pool are not held up.
_away_until = 0.0


def _permanent(error: Exception) -> bool:
    """A refusal that retrying cannot change (5xx for the recipient or the message)."""
    if isinstance(error, BadHeaderError | ValueError):
        return True
    if isinstance(error, smtplib.SMTPRecipientsRefused):
        return all(code >= 500 for code, _ in error.recipients.values())
    if isinstance(error, smtplib.SMTPResponseException):
        return error.smtp_code >= 500 and not isinstance(error, smtplib.SMTPServerDisconnected)
    return False


def _retry_at(attempts: int, now: datetime) -> datetime:
    schedule = notification_setting("RETRY_SCHEDULE_SECONDS")
    return now + timedelta(seconds=schedule[min(attempts - 1, len(schedule) - 1)])


def _send_one(message_id: int, connection, *, first_only: bool, now: datetime | None) -> bool:
    """Send one message if it is still pending; False when it was not sent."""
    with transaction.atomic():
        message = (
            EmailMessage.objects.select_for_update(skip_locked=True)
            .filter(pk=message_id, status=EmailStatus.PENDING)
            .first()
        )
        if message is None or (first_only and message.attempts > 0):
            return False
        started = timezone.now()
        error = None
        try:
            build_email(message, connection).send()
        except Exception as exc:  # noqa: BLE001 - every failure is logged as the attempt's outcome
            error = exc
        finished = timezone.now()
        message.attempts += 1
        EmailAttempt.objects.create(
            message=message,
            started_at=started,
            finished_at=finished,
            succeeded=error is None,
            error="" if error is None else f"{type(error).__name__}: {error}"[:2000],
        )
        if error is None:
            message.status, message.sent_at, message.next_attempt_at, message.last_error = (
                EmailStatus.SENT,
                finished,
                None,
                "",
            )
        else:
            message.last_error = f"{type(error).__name__}: {error}"[:2000]
            if _permanent(error) or message.attempts >= notification_setting("MAX_ATTEMPTS"):
                message.status, message.next_attempt_at = EmailStatus.FAILED, None
            else:
                # From the sweep's clock when it is ahead of this one (tests drive it forward).
                message.next_attempt_at = _retry_at(message.attempts, max(finished, now or finished))
        message.save(update_fields=["status", "attempts", "sent_at", "next_attempt_at", "last_error"])
    if error is not None and not _permanent(error):
        connection.close()
        logger.warning("Could not send e-mail %s (attempt %s): %s", message_id, message.attempts, error)
        if isinstance(error, OSError | smtplib.SMTPServerDisconnected | smtplib.SMTPConnectError):
            raise _ServerAway from error
    return error is None


def send_messages(message_ids: list[int], *, first_only: bool = False, now: datetime | None = None) -> int:
    """Send the messages over one SMTP connection; returns how many were sent. When the server is
    away the rest wait (their retry time, or the sweep)."""
    global _away_until
    if first_only and time.monotonic() < _away_until:
        return 0
    connection = get_connection(timeout=notification_setting("SMTP_TIMEOUT_SECONDS"))
    sent = 0
    try:
        connection.open()  # kept open for the whole batch
    except Exception:  # noqa: BLE001 - the first send tries again, and logs the failure as its attempt
        connection.close()
    try:
        for message_id in message_ids:
            sent += _send_one(message_id, connection, first_only=first_only, now=now)
        if sent:
            _away_until = 0.0  # the server is back: new messages go at once again
    except _ServerAway:
        _away_until = time.monotonic() + notification_setting("PAUSE_AFTER_OUTAGE_SECONDS")
    finally:
        connection.close()
    return sent


def send_pending() -> int:
    """The pass a booking's change schedules (notifications.outbox): the first attempt of every
    message not yet tried, oldest first, SWEEP_BATCH_SIZE at a time. The kick is released first, so
    that a change committed after this pass has read the outbox schedules the next one (one that
    claimed the kick just before and commits just after is the sweeper's, docs/notifications.md).
    Each message is claimed as in every send (row lock, still pending, not yet tried): a message the
    sweeper or another pass is sending is skipped, never sent twice."""
    release_kick()
    batch = notification_setting("SWEEP_BATCH_SIZE")
    after, sent = 0, 0
    while True:
        ids = list(
            EmailMessage.objects.filter(status=EmailStatus.PENDING, attempts=0, pk__gt=after)
            .order_by("pk")
            .values_list("pk", flat=True)[:batch]
        )
        if not ids:
            return sent
        sent += send_messages(ids, first_only=True)
        if len(ids) < batch or time.monotonic() < _away_until:
            return sent  # the server is away: the rest wait for the sweep
        after = ids[-1]


def queue_due_reminders(now: datetime) -> int:
    """Turn reminders that are due into messages; a booking no longer accepted or already started
    gets none."""
    batch = notification_setting("SWEEP_BATCH_SIZE")
    with transaction.atomic():
        due = list(
            Reminder.objects.select_for_update(of=("self",), skip_locked=True)
            .filter(sent_at__isnull=True, send_at__lte=now)
            .select_related("booking__organizer", "booking__event_type")
            .order_by("send_at")[:batch]
        )
        for reminder in due:
            booking = reminder.booking
            if booking.status == ACCEPTED and booking.start_time > now:
                queue_reminder(reminder, booking)
            reminder.sent_at = now
        Reminder.objects.bulk_update(due, ["sent_at"])
    return len(due)


def sweep(now: datetime | None = None) -> int:
    """Beat's pass: reminders due, then the messages whose (re)try is due. Returns messages sent."""
    now = now or timezone.now()
    reminders = queue_due_reminders(now)
    due = list(
        EmailMessage.objects.filter(status=EmailStatus.PENDING, next_attempt_at__lte=now)
        .order_by("next_attempt_at")
        .values_list("pk", flat=True)[: notification_setting("SWEEP_BATCH_SIZE")]
    )
    sent = send_messages(due, now=now) if due else 0
    if reminders or due:
        logger.info("E-mail sweep: %s reminders due, %s messages due, %s sent", reminders, len(due), sent)
    return sent


def purge_finished(now: datetime | None = None) -> int:
    """Delete sent and failed messages (their attempts with them) and sent reminders older than
    RETENTION_SECONDS, in short transactions of PURGE_BATCH_SIZE that skip rows in use. Pending
    messages are never deleted. Returns how many messages went."""
    now = now or timezone.now()
    cutoff = now - timedelta(seconds=notification_setting("RETENTION_SECONDS"))
    batch = notification_setting("PURGE_BATCH_SIZE")
    deleted = 0
    while True:
        with transaction.atomic():
            ids = list(
                EmailMessage.objects.select_for_update(skip_locked=True)
                .exclude(status=EmailStatus.PENDING)
                .filter(created_at__lt=cutoff)
                .order_by("created_at")
                .values_list("pk", flat=True)[:batch]
            )
            EmailAttempt.objects.filter(message_id__in=ids).delete()
            EmailMessage.objects.filter(pk__in=ids).delete()
        deleted += len(ids)
        if len(ids) < batch:
            break
    Reminder.objects.filter(sent_at__lt=cutoff).delete()
    return deleted
