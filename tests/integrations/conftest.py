"""The integration replays reuse the webhook tests' real HTTP receiver on 127.0.0.1 and their real
Celery worker."""

from webhooks.tests.conftest import _fresh_kept_alive_connections, receiver, start_worker  # noqa: F401 - fixtures
