"""A real SMTP server on loopback (aiosmtpd, an ephemeral port) that keeps every message it
accepts, Django's SMTP backend pointed at it, and Celery tasks run in-process."""

import asyncio
import email
import email.policy
import threading
from dataclasses import dataclass

import pytest
from aiosmtpd.smtp import SMTP
from celery import current_app
from icalendar import Calendar

from notifications.limits import release_kick
from notifications.tests.calendar_rules import assert_clients_accept


@dataclass
class Received:
    mail_from: str
    rcpt_tos: list[str]
    message: email.message.EmailMessage

    def part(self, content_type: str):
        return next(part for part in self.message.walk() if part.get_content_type() == content_type)

    def text(self) -> str:
        return self.part("text/plain").get_content()

    def html(self) -> str:
        return self.part("text/html").get_content()

    def calendar(self) -> Calendar:
        """The invitation of the message, checked as calendar clients check it."""
        raw = self.part("text/calendar").get_payload(decode=True)
        assert self.part("text/calendar").get_param("method") == str(Calendar.from_ical(raw)["METHOD"])
        return assert_clients_accept(raw)

    def attachment(self) -> Calendar:
        return assert_clients_accept(self.part("application/ics").get_payload(decode=True))


class SmtpServer:
    """An SMTP server in a thread of its own; `stop()` and `start()` again on the same port make an
    outage; `refuse` makes it answer 451 (try later) to every message."""

    def __init__(self):
        self.received: list[Received] = []
        self.refuse = False
        self.port = 0
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.server = None
        self.lock = threading.Lock()

    async def handle_DATA(self, server, session, envelope):
        if self.refuse:
            return "451 4.3.0 Try again later"
        message = email.message_from_bytes(envelope.original_content, policy=email.policy.default)
        with self.lock:
            self.received.append(Received(envelope.mail_from, list(envelope.rcpt_tos), message))
        return "250 OK"

    def start(self):
        async def serve():
            return await self.loop.create_server(
                lambda: SMTP(self, hostname="localhost"), host="127.0.0.1", port=self.port, reuse_address=True
            )

        self.server = asyncio.run_coroutine_threadsafe(serve(), self.loop).result(10)
        self.port = self.server.sockets[0].getsockname()[1]

    def stop(self):
        async def close():
            self.server.close()
            await self.server.wait_closed()

        asyncio.run_coroutine_threadsafe(close(), self.loop).result(10)

    def close(self):
        if self.server is not None and self.server.is_serving():
            self.stop()
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)

    def to(self, address: str) -> list[Received]:
        return [each for each in self.received if address in each.rcpt_tos]


@pytest.fixture
def smtp_server(settings):
    server = SmtpServer()
    server.start()
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT = "127.0.0.1", server.port
    settings.EMAIL_USE_TLS = settings.EMAIL_USE_SSL = False
    settings.EMAIL_HOST_USER = settings.EMAIL_HOST_PASSWORD = ""
    settings.DEFAULT_FROM_EMAIL = "Scheduling <bookings@scheduling.test>"
    yield server
    server.close()


@pytest.fixture(autouse=True)
def _server_not_away(monkeypatch):
    """Each test starts with this process's SMTP outage pause over (notifications.sending)."""
    monkeypatch.setattr("notifications.sending._away_until", 0.0)


@pytest.fixture(autouse=True)
def _no_pass_scheduled():
    """Each test starts with no worker's pass scheduled (notifications.limits' kick, which a test
    before it may have claimed without running the pass)."""
    release_kick()


@pytest.fixture
def eager_tasks(monkeypatch):
    """The tasks enqueued after commit run in this process, as a worker would run them (inside the
    test's transaction, so without the worker's closing of connections between tasks)."""
    monkeypatch.setattr("notifications.tasks.close_old_connections", lambda: None)
    previous = current_app.conf.task_always_eager
    current_app.conf.task_always_eager = True
    yield
    current_app.conf.task_always_eager = previous
