"""One accessor for the app's knobs (`settings.WEBHOOKS`), read at call time so that tests can
override them with the `settings` fixture, like DRF's `api_settings`."""

from datetime import timedelta

from django.conf import settings

DEFAULTS = {
    "ALLOWED_CIDRS": [],
    "ALLOW_HTTP": False,
    "TIMEOUT_SECONDS": 15.0,
    "CONNECT_TIMEOUT_SECONDS": 3.0,
    "RETRY_SCHEDULE_SECONDS": [5, 300, 1800, 7200, 18000, 36000, 50400, 72000, 86400],
    "RETRY_JITTER": 0.2,
    "AUTO_DISABLE_AFTER_SECONDS": int(timedelta(days=5).total_seconds()),
    "SECRET_ROTATION_GRACE_SECONDS": int(timedelta(hours=24).total_seconds()),
    "LEASE_SECONDS": 60,
    "SWEEP_INTERVAL_SECONDS": 5,
    "SWEEP_BATCH_SIZE": 500,
    # The sweeper claims batches while the broker's queue holds fewer messages than this (webhooks.delivery.sweep).
    "SWEEP_QUEUE_TARGET": 5000,
    "RESPONSE_BODY_LIMIT_BYTES": 8192,
    # A retry due within this many seconds is enqueued with a Celery countdown (and kept leased);
    # later ones wait in the database for the sweeper. Countdowns stay short on purpose: Redis
    # redelivers unacknowledged countdown tasks only after its visibility timeout.
    "SHORT_RETRY_MAX_SECONDS": 10,
    # A kept-alive connection to a subscriber is reused only if it was used this recently (below
    # the idle timeout of common servers), so a receiver closing it cannot race the next request.
    "KEEPALIVE_IDLE_SECONDS": 2.0,
    # How far back `POST /webhooks/{id}/recover` and the delivery log's `since` may reach, and how
    # long finished deliveries are kept (webhooks.retention).
    "DELIVERY_RETENTION_SECONDS": int(timedelta(days=30).total_seconds()),
    # The purge (webhooks.retention, run by beat) deletes finished deliveries older than the longer
    # of DELIVERY_RETENTION_SECONDS and EVENTS_RETENTION_SECONDS, this many per transaction.
    "PURGE_BATCH_SIZE": 1000,
    "PURGE_INTERVAL_SECONDS": 600,
    # One recover call per webhook in this many seconds (429 with Retry-After otherwise).
    "RECOVER_MIN_INTERVAL_SECONDS": 10,
    # At most this many deliveries queued again by one recover call; the answer says how many remain.
    "RECOVER_MAX_DELIVERIES": 10000,
    # How far back GET /v1/events reads the outbox.
    "EVENTS_RETENTION_SECONDS": int(timedelta(days=30).total_seconds()),
    # Isolation (docs/webhooks.md): attempts of one webhook in flight at once, across every worker;
    # attempts that time out or cannot connect in a row before its circuit opens; attempts one worker
    # process keeps in flight (its async sender) before it stops taking new messages; threads that
    # log finished attempts.
    "CONCURRENCY_PER_WEBHOOK": 4,
    "BREAKER_THRESHOLD": 3,
    "MAX_IN_FLIGHT_PER_WORKER": 1000,
    "RECORDER_THREADS": 4,
    # Dotted path of `resolve(host, port) -> list[str]`; tests point it at a fake resolver.
    "RESOLVER": "core.outbound.system_resolve",
}


def webhook_setting(name: str):
    return {**DEFAULTS, **getattr(settings, "WEBHOOKS", {})}[name]
