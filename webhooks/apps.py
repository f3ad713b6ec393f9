from django.apps import AppConfig


class WebhooksConfig(AppConfig):
    name = "webhooks"

    def ready(self):
        # Registers the Celery tasks in every process, not only in workers (which find them by
        # autodiscovery): `webhooks.dispatch` enqueues them by name, so that the delivery engine,
        # which the tasks run, never imports them back.
        from webhooks import tasks  # noqa: F401
