import os

from celery import Celery
from celery.signals import setup_logging, worker_init, worker_ready

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("scheduling")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.conf.update(
    task_serializer="json",
    result_serializer="json",
    accept_content=["json"],
    task_acks_late=True,
    task_reject_on_worker_lost=True,
    worker_prefetch_multiplier=1,
    task_soft_time_limit=60,
    task_time_limit=90,
    task_ignore_result=True,
    broker_connection_retry_on_startup=True,
    # Every beat (`celery -A config beat`, a worker's `-B`) sends only while it holds the beat lock.
    beat_scheduler="core.beat:LockedScheduler",
)
app.autodiscover_tasks()


@worker_init.connect
def _worker_broker_timeouts(**kwargs):
    """Web processes publish with short Redis socket timeouts and one reconnect at most, so that a
    frozen Redis cannot hold a request (config/settings.py). A worker only waits on the broker: a
    short timeout there would turn a slow moment of Redis into a reconnect, so it gets
    WORKER_REDIS_SOCKET_TIMEOUT_SECONDS and kombu's own reconnection pace."""
    from django.conf import settings

    options = dict(app.conf.broker_transport_options or {})
    if "socket_timeout" in options:
        for name in settings.CELERY_TASK_PUBLISH_RETRY_POLICY:
            options.pop(name, None)
        timeout = settings.WORKER_REDIS_SOCKET_TIMEOUT_SECONDS
        app.conf.broker_transport_options = {**options, "socket_timeout": timeout, "socket_connect_timeout": timeout}


@worker_ready.connect
def _serve_worker_metrics(**kwargs):
    """With METRICS_ENABLED, each worker serves its own metrics (webhook attempts, their lag, the
    database and Redis time) on METRICS_WORKER_PORT for Prometheus to scrape."""
    import logging

    from django.conf import settings

    if not settings.METRICS_ENABLED:
        return
    from prometheus_client import start_http_server

    try:
        start_http_server(settings.METRICS_WORKER_PORT)
    except OSError as error:  # a second worker on the host: the port is the first one's
        logging.getLogger(__name__).warning(
            "Worker metrics not served on port %s: %s", settings.METRICS_WORKER_PORT, error
        )


if os.environ.get("LOG_FORMAT", "").strip().lower() == "json":

    @setup_logging.connect
    def _service_logging(**kwargs):
        """With LOG_FORMAT=json, workers and beat log through the service's LOGGING (JSON lines),
        not Celery's text format: connecting here is how Celery is told to leave logging alone."""
        import logging.config

        from django.conf import settings

        logging.config.dictConfig(settings.LOGGING)
