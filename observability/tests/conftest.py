"""The webhook tests' receiver (a real HTTP server on 127.0.0.1) for the observability tests."""

from webhooks.tests.conftest import receiver  # noqa: F401 - a fixture, used by name
