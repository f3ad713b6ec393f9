"""Session-wide checks and fixtures shared by every app's tests.

The suite runs against real PostgreSQL and Redis. If either is down it stops at once with a message
naming the service, the URL tried and how to start it; nothing is skipped.
"""

import os
import re
import socket
from urllib.parse import urlsplit

import pytest

# Fixtures every app's tests may use by name, without importing them: the organizer, their API key
# and event type; a real HTTP receiver and a real Celery worker (`receiver`, `start_worker`, ...);
# the CalDAV and feed servers.
pytest_plugins = ["tests.support.people", "tests.support.live_services", "tests.support.calendar_servers"]

SERVICES = {
    "PostgreSQL": (
        "DATABASE_URL",
        "postgres://postgres@127.0.0.1:5432/scheduling",
        "pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start",
    ),
    "Redis": (
        "REDIS_URL",
        "redis://127.0.0.1:6379/0",
        'redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no',
    ),
}


def _unreachable(url: str) -> str | None:
    parts = urlsplit(url)
    try:
        with socket.create_connection((parts.hostname or "127.0.0.1", parts.port), timeout=3):
            return None
    except OSError as error:
        return str(error)


def pytest_configure(config):
    problems = []
    for service, (variable, default, start) in SERVICES.items():
        url = os.environ.get(variable, default)
        error = _unreachable(url)
        if error:
            problems.append(
                f"{service} is not reachable at {url} ({error}).\n  Start it with: {start}\n  or set {variable}."
            )
    if problems:
        raise pytest.UsageError("The test suite needs its services:\n" + "\n".join(problems))


# --- every answer checked against the OpenAPI document (tests/support/openapi_contract.py) -----------

_contracts = {}
_all_violations: list[str] = []  # every thread's, so a violation inside a thread is not lost


def contract():
    """The OpenAPI document that the URLconf in force serves, built once per session and URLconf
    (a test that mounts its own resource with the `urls` marker is checked against its document)."""
    from django.conf import settings

    urlconf = settings.ROOT_URLCONF
    if urlconf not in _contracts:
        import json

        from drf_spectacular.generators import SchemaGenerator
        from drf_spectacular.renderers import OpenApiJsonRenderer

        from tests.support.openapi_contract import DocumentContract

        document = SchemaGenerator(urlconf=urlconf).get_schema(request=None, public=True)
        _contracts[urlconf] = DocumentContract(json.loads(OpenApiJsonRenderer().render(document)))
    return _contracts[urlconf]


def _report(method, path, query, request_headers, status, content_type, headers, body):
    from tests.support.openapi_contract import ContractViolation, describe

    declared = headers.get("Content-Length")
    if declared is not None and method != "HEAD" and declared != str(len(body)):
        # A client reads `Content-Length` bytes: a body of another length arrives cut short or
        # runs into the next answer on the connection.
        message = f"{method} {path} -> {status}: Content-Length {declared}, body of {len(body)} bytes"
        _all_violations.append(message)
        raise ContractViolation(message)
    checker = contract()
    problem = checker.violations(
        method=method,
        path=path,
        query=query,
        request_headers=request_headers,
        status=status,
        content_type=content_type,
        headers=headers,
        body=body,
    )
    if problem is None:
        return
    message = describe(method, path, status, checker.canonical_path(path), problem, body)
    _all_violations.append(message)
    raise ContractViolation(message)


def _check_django_response(response):
    from werkzeug.datastructures import Headers

    request = getattr(response, "wsgi_request", None)
    if request is None or getattr(response, "streaming", False):
        return
    _report(
        request.method,
        request.path,
        request.META.get("QUERY_STRING", ""),
        dict(request.headers),
        response.status_code,
        response.headers.get("Content-Type", ""),
        Headers(list(response.headers.items())),
        response.content,
    )


def check_httpx_response(response):
    """An httpx response hook (the generated client's traffic): the same check."""
    from werkzeug.datastructures import Headers

    response.read()
    request = response.request
    _report(
        request.method,
        request.url.path,
        request.url.query.decode(),
        dict(request.headers),
        response.status_code,
        response.headers.get("Content-Type", ""),
        Headers(list(response.headers.multi_items())),
        response.content,
    )


@pytest.fixture(scope="session", autouse=True)
def _answers_match_the_document():
    """Every answer of Django's test client (`client`, `api_client`, any `Client()`/`APIClient()`)
    is checked against the document; an undocumented one fails the call that got it."""
    from django.conf import settings
    from django.test.client import Client

    original = Client.request
    compare = not settings.FAST_PATHS

    def request(self, **kwargs):
        response = original(self, **kwargs)
        _check_django_response(response)
        if compare:
            _same_with_fast_paths(original, self, kwargs, response)
        return response

    Client.request = request
    yield
    Client.request = original


# --- FAST_PATHS=0: every API read answered again with the machinery on, byte for byte -------------
#
# `make test` runs the API suites a second time with the switch off (README, "Two commands"). There
# every GET and HEAD of `/v1/` and `/v2/` through Django's test client that answers JSON is answered
# twice: as the test sees it (plain Django and DRF), then with the speed machinery on
# (core/fastpath/), which must give the same status and the same bytes (each request's own
# `requestId` and a v2 error's `timestamp` aside). The second answer is not rate-limited, and its
# queries are taken out of the connection's log, so that the test counts only its own.

API_PREFIXES = ("/v1/", "/v2/")
# GETs not asked twice: a calendar connect answers a new signed state (and PKCE challenge) each
# time, and its callback exchanges a one-time code with the provider (it must not run twice); the
# event feed reads up to its horizon, the oldest transaction still open anywhere on the PostgreSQL
# server at that moment, so a second answer a moment later may rightly reach further while other
# databases' work commits.
_NOT_READS = re.compile(r"^(/v2/calendars/[^/]+/(connect|save)|/v1/events)$")
_REQUEST_ID = re.compile(rb'"requestId": ?"[0-9a-f]{32}"')  # each request's own (core.middleware)
_V2_ERROR_TIME = re.compile(rb'^\{"status":"error","timestamp":"[^"]*"')  # v2's error envelope: when it was sent


def _own_parts_aside(body: bytes) -> bytes:
    """An answer without what is each request's own: its id, and the time a v2 error was sent."""
    return _V2_ERROR_TIME.sub(b'{"status":"error"', _REQUEST_ID.sub(b"", body))


_fast_path_differences: list[str] = []


def _same_with_fast_paths(original, client, kwargs, response):
    from django.db import connections
    from django.test import override_settings

    from core.ratelimit import CredentialRateThrottle

    request = getattr(response, "wsgi_request", None)
    if request is None or request.method not in ("GET", "HEAD") or not request.path.startswith(API_PREFIXES):
        return
    if _NOT_READS.match(request.path):
        return
    if response.status_code == 429 or getattr(response, "streaming", False):
        return
    if "json" not in response.get("Content-Type", ""):  # the API's answers, not its HTML pages
        return
    logged = {database.alias: len(database.queries_log) for database in connections.all(initialized_only=True)}
    allow_request = CredentialRateThrottle.allow_request
    CredentialRateThrottle.allow_request = lambda throttle, request, view: True
    try:
        with override_settings(FAST_PATHS=True):
            again = original(client, **kwargs)  # (closed by the test client, as the first one)
    finally:
        CredentialRateThrottle.allow_request = allow_request
        for database in connections.all(initialized_only=True):
            while len(database.queries_log) > logged.get(database.alias, 0):
                database.queries_log.pop()
    if (again.status_code, _own_parts_aside(again.content)) != (
        response.status_code,
        _own_parts_aside(response.content),
    ):
        message = (
            f"{request.method} {request.get_full_path()}: with FAST_PATHS off {response.status_code} "
            f"{response.content[:2000]!r}\n  with it on {again.status_code} {again.content[:2000]!r}"
        )
        _fast_path_differences.append(message)
        raise AssertionError(f"The speed machinery changed an answer: {message}")


def pytest_collection_modifyitems(config, items):
    """With the switch off, tests of the machinery itself (`fastpath` marker: query counts,
    statements compiled once) are left out: they describe what it does, not what the API answers.
    So are the drills of other processes (a real Celery worker: deliveries, retries, killed
    workers) and the pages a browser clicks: they ask nothing of the read path that the comparison
    checks, and they are most of the pass's time."""
    from django.conf import settings

    if settings.FAST_PATHS:
        return
    kept, left_out = [], []
    for item in items:
        fixtures = set(item.fixturenames)
        counts = {"django_assert_num_queries", "django_assert_max_num_queries"} & fixtures
        elsewhere = {"start_worker", "chromium"} & fixtures or item.path.name.endswith("_browser.py")
        (left_out if counts or elsewhere or item.get_closest_marker("fastpath") else kept).append(item)
    if left_out:
        config.hook.pytest_deselected(items=left_out)
        items[:] = kept


@pytest.fixture(autouse=True)
def _live_answers_match_the_document(request, monkeypatch):
    """In a live-server test, every `requests` call to that server is checked the same way."""
    _all_violations.clear()
    _fast_path_differences.clear()
    if "live_server" not in request.fixturenames:
        yield
        return
    import requests
    from werkzeug.datastructures import Headers

    from tests.support.openapi_contract import split_url

    base = request.getfixturevalue("live_server").url
    original = requests.Session.send

    def send(self, prepared, **kwargs):
        response = original(self, prepared, **kwargs)
        if prepared.url.startswith(base + "/"):
            path, query = split_url(prepared.url)
            _report(
                prepared.method,
                path,
                query,
                dict(prepared.headers),
                response.status_code,
                response.headers.get("Content-Type", ""),
                Headers(list(response.headers.items())),
                response.content,
            )
        return response

    monkeypatch.setattr(requests.Session, "send", send)
    yield


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    """A test that passed although one of its answers broke the document (the violation was
    raised in a thread, or caught by the test) fails with that violation."""
    report = yield
    if call.when == "call" and report.passed and _all_violations:
        report.outcome = "failed"
        report.longrepr = "Answers the OpenAPI document does not describe:\n\n" + "\n\n".join(_all_violations)
    if call.when == "call" and report.passed and _fast_path_differences:
        report.outcome = "failed"
        report.longrepr = "Answers the speed machinery changed:\n\n" + "\n\n".join(_fast_path_differences)
    return report


@pytest.fixture
def api_client():
    from rest_framework.test import APIClient

    return APIClient()


@pytest.fixture
def operator_client(client):
    """A test client signed in to the admin as a superuser."""
    from accounts.tests.factories import PASSWORD, UserFactory

    operator = UserFactory(username="operator", is_staff=True, is_superuser=True)
    assert client.login(username=operator.username, password=PASSWORD)
    return client


@pytest.fixture
def chromium():
    from tests.support.browser import headless_chromium

    with headless_chromium() as driver:
        yield driver


@pytest.fixture
def private_redis(settings, monkeypatch):
    """The test's own redis-server as the cache (the rate limit's store), with short timeouts as
    in production, and a fresh limiter health; stop it to test an outage."""
    from core import ratelimit
    from tests.support.outages import PrivateRedis

    monkeypatch.setattr(ratelimit, "health", ratelimit.LimiterHealth())
    with PrivateRedis() as server:
        settings.CACHES = {
            "default": {
                "BACKEND": "django.core.cache.backends.redis.RedisCache",
                "LOCATION": server.url,
                "OPTIONS": {"socket_connect_timeout": 0.25, "socket_timeout": 0.25},
            }
        }
        yield server
