from django.apps import AppConfig


class NotificationsConfig(AppConfig):
    name = "notifications"

    def ready(self):
        # Registers the Celery tasks in every process: the outbox enqueues them by name after commit.
        from notifications import tasks  # noqa: F401
