"""Celery tasks: another interface to the delivery engine (load by id, call the service).

`webhooks.deliver` does not wait for the subscriber. It claims the delivery, signs it and logs the
attempt as open (a few milliseconds of database work), hands the request to this process's async
sender (`webhooks.sending`) and returns, so the pool slot is free for the next message at once.
When the answer (or the timeout) comes, one of a few recorder threads logs it and frees the
webhook's slot. A worker process keeps at most MAX_IN_FLIGHT_PER_WORKER attempts in flight; past
that the task waits for one to finish before taking more (back-pressure on the broker, not memory).

A worker that stops mid-send loses nothing: the broker message was acknowledged, but the delivery
row is still leased; once the lease runs out the sweeper sends it again and logs the cut-short
attempt as `interrupted`. A warm shutdown (SIGTERM) waits for attempts in flight, up to the
answer timeout.
"""

import logging
import threading
from concurrent.futures import Future, ThreadPoolExecutor

from celery import shared_task
from celery.signals import worker_process_shutdown, worker_shutdown
from django.db import close_old_connections

from webhooks import sending
from webhooks.conf import webhook_setting
from webhooks.delivery import StartedAttempt, finish_attempt, release_slot, start_attempt, sweep
from webhooks.retention import purge_old_deliveries
from webhooks.signals import attempt_finished, attempt_outcome

logger = logging.getLogger(__name__)


class InFlight:
    """This process's attempts in flight: a bound, a recorder pool, and a way to wait for them."""

    def __init__(self):
        self.limit = threading.BoundedSemaphore(webhook_setting("MAX_IN_FLIGHT_PER_WORKER"))
        self.recorder = ThreadPoolExecutor(
            max_workers=webhook_setting("RECORDER_THREADS"), thread_name_prefix="webhook-recorder"
        )
        self.lock = threading.Condition()
        self.count = 0

    def started(self) -> None:
        with self.lock:
            self.count += 1

    def finished(self) -> None:
        with self.lock:
            self.count -= 1
            self.lock.notify_all()
        self.limit.release()

    def wait_until_idle(self, timeout: float) -> bool:
        with self.lock:
            return self.lock.wait_for(lambda: self.count == 0, timeout)


_in_flight: dict = {}
_in_flight_lock = threading.Lock()


def in_flight() -> InFlight:
    import os

    with _in_flight_lock:
        if os.getpid() not in _in_flight:
            _in_flight.clear()
            _in_flight[os.getpid()] = InFlight()
        return _in_flight[os.getpid()]


def _record(started: StartedAttempt, future: Future) -> None:
    close_old_connections()
    try:
        result = future.result()
    except Exception as error:  # noqa: BLE001 - a bug in the sender must still be logged as the attempt's end
        logger.exception("Webhook sender failed on delivery %s", started.delivery.pk)
        result = sending.SendResult(
            request_headers=started.headers, error_class="connect", error_message=f"Sender error: {error}"
        )
    try:
        finish_attempt(started, result)
        attempt_finished.send(
            sender=None,
            outcome=attempt_outcome(result),
            lag_seconds=(started.attempt.attempted_at - started.delivery.event_created_at).total_seconds(),
        )
    except Exception:  # noqa: BLE001 - the lease and the sweeper take the delivery back
        logger.exception("Could not log the attempt of delivery %s; the sweeper will retry it", started.delivery.pk)
        if started.gated:
            release_slot(webhook_id=started.delivery.webhook_id, delivery_id=started.delivery.pk)
    finally:
        close_old_connections()
        in_flight().finished()


@shared_task(name="webhooks.deliver", ignore_result=True)
def deliver_webhook(delivery_id: int) -> None:
    # What Django does around a request: drop a connection that broke or outlived CONN_MAX_AGE.
    # It matters when the worker keeps connections between tasks (CELERY_DB_REUSE_MAX), which is
    # what makes a delivery cheap: opening a PostgreSQL connection costs more than the delivery.
    close_old_connections()
    tracker = in_flight()
    tracker.limit.acquire()
    try:
        started = start_attempt(delivery_id=delivery_id)
    except BaseException:
        tracker.limit.release()
        raise
    if started is None:
        tracker.limit.release()
        return
    tracker.started()
    try:
        future = sending.sender().submit(
            url=started.delivery.webhook.subscriber_url, body=started.body, headers=started.headers
        )
    except BaseException:
        release_slot(webhook_id=started.delivery.webhook_id, delivery_id=delivery_id)
        tracker.finished()
        raise
    future.add_done_callback(lambda done: tracker.recorder.submit(_record, started, done))


@shared_task(name="webhooks.sweep", ignore_result=True)
def sweep_webhook_deliveries() -> None:
    close_old_connections()
    sweep()


@shared_task(name="webhooks.purge_deliveries", ignore_result=True)
def purge_deliveries() -> int:
    """Delete finished deliveries past the retention, in batches (webhooks.retention)."""
    return purge_old_deliveries()


def _drain(**kwargs) -> None:
    """Warm shutdown: let the attempts in flight finish and be logged (at most the answer timeout)."""
    import os

    tracker = _in_flight.get(os.getpid())
    if tracker is None:
        return
    timeout = webhook_setting("CONNECT_TIMEOUT_SECONDS") + webhook_setting("TIMEOUT_SECONDS") + 5
    if not tracker.wait_until_idle(timeout):
        logger.warning("Stopping with webhook attempts in flight; the sweeper will send them again")
    tracker.recorder.shutdown(wait=True)


worker_process_shutdown.connect(_drain, weak=False)
worker_shutdown.connect(_drain, weak=False)
