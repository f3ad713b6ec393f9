"""A request's objects go as soon as its response has been sent (core.fastpath.release.ReleasedWhenSentMixin),
through Django's WSGI handler as gunicorn calls it: the body read, then `close()`."""

import functools
import gc
import io

import pytest
from django.core.handlers.wsgi import WSGIHandler
from django.core.signals import request_finished, request_started
from django.db import close_old_connections

from accounts.tests.factories import ApiKeyFactory, UserFactory
from scheduling.tests.factories import ScheduleFactory

pytestmark = pytest.mark.django_db


@functools.cache
def _handler() -> WSGIHandler:
    return WSGIHandler()  # one per process, as a server loads it: building it leaves garbage of its own


def _served(method: str, path: str, key: str, body: bytes = b"") -> tuple[str, bytes]:
    """One request as a WSGI server serves it; the response is closed and dropped before returning."""
    path, _, query = path.partition("?")
    environ = {
        "REQUEST_METHOD": method,
        "PATH_INFO": path,
        "QUERY_STRING": query,
        "SERVER_NAME": "127.0.0.1",
        "SERVER_PORT": "80",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "HTTP_HOST": "127.0.0.1",
        "HTTP_AUTHORIZATION": f"Bearer {key}",
        "CONTENT_TYPE": "application/json",
        "CONTENT_LENGTH": str(len(body)),
        "wsgi.input": io.BytesIO(body),
        "wsgi.url_scheme": "http",
        "wsgi.errors": io.StringIO(),
    }
    started = []
    # As Django's test client does: the test's transaction keeps its connection past the request.
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        response = _handler()(environ, lambda status, headers, *_: started.append(status))
        try:
            content = b"".join(response)
        finally:
            response.close()
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)
    return started[0], content


def _left_for_the_collector(method: str, path: str, key: str, body: bytes = b"") -> int:
    """How many objects one request left that only Python's cyclic collector could free."""
    _served(method, path, key, body)  # warm: per-process caches are not the request's garbage
    gc.collect()
    gc.disable()
    try:
        status, _ = _served(method, path, key, body)
        assert status[:3] in {"200", "400"}, status
        return gc.collect()
    finally:
        gc.enable()


@pytest.fixture
def owner():
    owner = UserFactory()
    ScheduleFactory.create_batch(50, user=owner)
    return owner


@pytest.fixture
def key(owner):
    return ApiKeyFactory(user=owner).raw_key


def test_a_list_leaves_the_collector_nothing(key):
    # Before, the page's rows and output were left: 213 objects for 5 schedules, 662 for 50; then
    # Django's own request cycles (`request.auser`, the message storage) and a class made for each
    # list's relations: 71.
    assert _left_for_the_collector("GET", "/v1/schedules?take=5", key) == 0
    assert _left_for_the_collector("GET", "/v1/schedules?take=50", key) == 0


WEEK = b'{"days": [1, 2, 3], "startTime": "09:00", "endTime": "12:00"}'


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("GET", "/v1/me", b""),  # 44 before, then 85 before the DRF links were cut
        ("GET", "/v1/schedules/{id}", b""),  # 21 (the class made for the relations)
        # 86: the input serializer and its fields, which point at each other
        ("POST", "/v1/schedules", b'{"name": "Work", "timeZone": "Europe/Berlin", "isDefault": true}'),
        ("POST", "/v1/schedules", b'{"name": "Rows", "timeZone": "UTC", "availability": [' + WEEK + b"]}"),
    ],
)
def test_an_answer_leaves_the_collector_nothing(owner, key, method, path, body):
    path = path.format(id=owner.schedules.order_by("id").first().pk)
    assert _left_for_the_collector(method, path, key, body) == 0


@pytest.mark.parametrize(
    ("method", "path", "body", "at_most"),
    [
        # A 400 naming the id: 21 (60 before): the exception, its traceback and frames point at each other.
        ("GET", "/v1/schedules/0", b"", 40),
        # 54: the schedule found for the update is a model object with Django's prefetches, which
        # point back at it (a PATCH reads its answer back as rows, without them).
        ("PATCH", "/v1/schedules/{id}", b'{"name": "Renamed", "availability": [' + WEEK + b"]}", 70),
    ],
)
def test_an_error_or_an_update_leaves_the_collector_little(owner, key, method, path, body, at_most):
    path = path.format(id=owner.schedules.order_by("id").first().pk)
    assert _left_for_the_collector(method, path, key, body) <= at_most
