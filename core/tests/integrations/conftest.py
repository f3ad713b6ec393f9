"""The integration replays reuse the webhook tests' real HTTP receiver on 127.0.0.1."""

from webhooks.tests.conftest import _fresh_kept_alive_connections, receiver  # noqa: F401 - fixtures
