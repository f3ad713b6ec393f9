"""What the API's authentication shares with the rest of the project (docs/api.md, Conventions
and Scopes): the `Credential` a request carries as `request.auth`, reading a Bearer token, and the
lookup-as-health-check. The authentication class itself, which looks API keys and OAuth tokens up
in the accounts app's tables, is `accounts.authentication.CredentialAuthentication`.
"""

from dataclasses import dataclass

from django.db import InterfaceError, OperationalError, connection


@dataclass(frozen=True)
class Credential:
    kind: str  # "api_key" or "oauth"
    id: int
    scopes: frozenset[str]
    application_id: int | None = None

    @property
    def rate_limit_key(self) -> str:
        return f"{self.kind}:{self.id}"


def bearer_token(request) -> str | None:
    header = request.META.get("HTTP_AUTHORIZATION", "")
    scheme, _, value = header.partition(" ")
    if scheme.lower() != "bearer":
        return None
    return value.strip() or None


def checking_connection(lookup):
    """Run `lookup` (a read that can run twice) as the request's connection health check.

    With CONN_HEALTH_CHECKS, Django sends `SELECT 1` before a request's first query on a
    persistent connection, and reconnects if that fails: a whole round trip to PostgreSQL, on
    every request, before the credential lookup that every API request starts with anyway. Here
    the lookup is the check: if it fails because the connection is dead (PostgreSQL restarted,
    a proxy dropped it), the connection is closed and the lookup runs once more on a new one,
    which is what Django's check would have done. Any other error is raised as it is."""
    if (
        connection.connection is None
        or not connection.health_check_enabled
        or connection.health_check_done
        or connection.in_atomic_block
    ):
        return lookup()
    connection.health_check_done = True
    try:
        return lookup()
    except (OperationalError, InterfaceError):
        if connection.is_usable():
            raise
        connection.close()
    return lookup()
