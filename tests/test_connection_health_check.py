"""The credential lookup doubles as the persistent connection's health check (CONN_HEALTH_CHECKS):
no `SELECT 1` before it, and a dead connection is replaced without failing the request."""

import time

import pytest
from django.db import OperationalError, connection

from accounts.tests.factories import AccessTokenFactory
from core.authentication import checking_connection
from tests.support.credentials import auth, bearer
from tests.support.database import another_session

pytestmark = pytest.mark.django_db(transaction=True)


def terminate_backend(pid: int) -> None:
    """What a PostgreSQL restart or a proxy dropping the connection does to a worker's connection."""
    with another_session(autocommit=True) as other:
        other.execute("SELECT pg_terminate_backend(%s)", [pid])
        deadline = time.monotonic() + 10
        while other.execute("SELECT 1 FROM pg_stat_activity WHERE pid = %s", [pid]).fetchone():
            assert time.monotonic() < deadline, "the backend did not exit"
            time.sleep(0.02)


def get_me(client, headers):
    """GET /v1/me as a server's worker sees it: at the start of each request Django's
    request_started handler marks a persistent connection as due for a health check (the test
    client leaves that handler out, so it is done here)."""
    if connection.connection is not None:
        connection.health_check_done = False
    return client.get("/v1/me", **headers)


@pytest.fixture
def count_health_checks(monkeypatch):
    calls = []
    is_usable = connection.is_usable

    def counting():
        calls.append(1)
        return is_usable()

    monkeypatch.setattr(connection, "is_usable", counting)
    return calls


@pytest.fixture
def bearer_headers():
    def headers(kind: str) -> dict:
        if kind == "api_key":
            return auth()
        token = AccessTokenFactory(scope="READ_PROFILE")
        return bearer(token.raw_token)

    return headers


@pytest.mark.parametrize("kind", ["api_key", "oauth"])
def test_a_request_on_a_healthy_connection_sends_no_separate_health_check(
    client, bearer_headers, count_health_checks, kind
):
    headers = bearer_headers(kind)
    assert get_me(client, headers).status_code == 200  # opens the persistent connection
    assert connection.connection is not None and connection.health_check_enabled
    count_health_checks.clear()

    for _ in range(3):
        assert get_me(client, headers).status_code == 200

    assert count_health_checks == []


@pytest.mark.parametrize("kind", ["api_key", "oauth"])
def test_a_dead_persistent_connection_is_replaced_without_failing_the_request(client, bearer_headers, kind):
    headers = bearer_headers(kind)
    assert get_me(client, headers).status_code == 200
    dead_pid = connection.connection.info.backend_pid
    terminate_backend(dead_pid)

    response = get_me(client, headers)

    assert response.status_code == 200
    assert response.json()["user"]["id"]
    assert connection.connection.info.backend_pid != dead_pid


def test_an_error_on_a_live_connection_is_raised_and_the_lookup_not_repeated():
    connection.ensure_connection()
    connection.health_check_done = False  # as at the start of a request
    calls = []

    def lookup():
        calls.append(1)
        raise OperationalError("canceling statement due to statement timeout")

    with pytest.raises(OperationalError):
        checking_connection(lookup)
    assert calls == [1]
    assert connection.connection is not None and not connection.connection.closed


def test_the_credential_lookup_is_a_prepared_statement_on_the_server(client, bearer_headers):
    headers = bearer_headers("api_key")
    for _ in range(3):
        assert get_me(client, headers).status_code == 200

    with connection.cursor() as cursor:
        cursor.execute("SELECT statement FROM pg_prepared_statements")
        prepared = [row[0] for row in cursor.fetchall()]
    assert any('FROM "accounts_apikey"' in statement for statement in prepared), prepared
