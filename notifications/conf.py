"""One accessor for the app's knobs (`settings.NOTIFICATIONS`), read at call time so that tests can
override them with the `settings` fixture."""

import contextlib
from contextvars import ContextVar

from django.conf import settings

DEFAULTS = {
    # Off: nothing is written to the outbox (a deployment that leaves mail to its webhooks).
    "ENABLED": True,
    # Seconds after a failed attempt before the next one; the last step repeats until MAX_ATTEMPTS.
    "RETRY_SCHEDULE_SECONDS": [10, 60, 300, 900, 1800, 3600],
    "MAX_ATTEMPTS": 30,
    # A new message is sent by the task enqueued after commit; if that message is lost (broker down),
    # the sweeper sends it once it is this many seconds old.
    "FIRST_ATTEMPT_GRACE_SECONDS": 30,
    "SWEEP_INTERVAL_SECONDS": 10,
    # A booking's messages are not enqueued one broker message per booking: the first change in
    # this window schedules one pass (`notifications.send_pending`) that runs when the window closes
    # and sends every message not yet tried. 0: one broker message per change.
    "KICK_WINDOW_MILLISECONDS": 1000,
    "SWEEP_BATCH_SIZE": 200,
    "SMTP_TIMEOUT_SECONDS": 10.0,
    # After the server was found away, a worker process leaves new messages to the sweep this long.
    "PAUSE_AFTER_OUTAGE_SECONDS": 30,
    # Messages to attendees one organizer's bookings may queue per hour (and one API key's); past it,
    # the booking is a 429. 0 turns the bound off.
    "MAX_PER_ORGANIZER_PER_HOUR": 2000,
    "MAX_PER_API_KEY_PER_HOUR": 2000,
    # Sent and failed messages (with their attempts) and sent reminders are deleted this long after
    # they were written, PURGE_BATCH_SIZE per transaction, every PURGE_INTERVAL_SECONDS (beat).
    "RETENTION_SECONDS": 30 * 24 * 3600,
    "PURGE_BATCH_SIZE": 1000,
    "PURGE_INTERVAL_SECONDS": 600,
    # The host name in Message-IDs (invitation UIDs are the meeting's, core.ical); empty: the domain
    # of DEFAULT_FROM_EMAIL.
    "DOMAIN": "",
}


# Settings overridden for the code running in this context (`overridden`), over NOTIFICATIONS.
_overrides: ContextVar[dict | None] = ContextVar("notification_overrides", default=None)


def notification_setting(name: str):
    overrides = _overrides.get()
    if overrides and name in overrides:
        return overrides[name]
    configured = getattr(settings, "NOTIFICATIONS", None)
    if configured and name in configured:
        return configured[name]
    return DEFAULTS[name]


@contextlib.contextmanager
def overridden(**values):
    """NOTIFICATIONS' `values` (by name) for the code run inside, in this thread or task only (the
    benchmarks' booking with mail off: `ENABLED=False`)."""
    token = _overrides.set({**(_overrides.get() or {}), **values})
    try:
        yield
    finally:
        _overrides.reset(token)


def mail_domain() -> str:
    return notification_setting("DOMAIN") or settings.DEFAULT_FROM_EMAIL.rpartition("@")[2].strip("> ") or "localhost"
