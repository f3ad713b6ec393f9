"""How a test presents a credential: the Django test client's `Authorization: Bearer` keyword."""

from accounts.tests.factories import AccessTokenFactory, ApiKeyFactory, UserFactory


def bearer(raw: str) -> dict:
    """`Authorization: Bearer <raw>` as keyword arguments of the test client's request methods."""
    return {"HTTP_AUTHORIZATION": f"Bearer {raw}"}


def auth(user=None, scope: str | None = None) -> dict:
    """A new credential of `user` (a new user when None): an API key, which carries every scope, or,
    with `scope`, an OAuth access token limited to it."""
    user = user or UserFactory()
    if scope:
        return bearer(AccessTokenFactory(user=user, scope=scope).raw_token)
    return bearer(ApiKeyFactory(user=user).raw_key)
