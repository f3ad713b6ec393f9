"""One authentication class for the whole resource API (docs/api.md, Conventions and Scopes).

`Authorization: Bearer <credential>` carries either an OAuth access token or an API key (told
apart by the API key prefix); `?apiKey=` carries API keys only. Either way the credential and its
user come back in one query. `request.auth` is a `core.authentication.Credential` with the granted
scopes. It lives here, next to the tables it reads; settings' DEFAULT_AUTHENTICATION_CLASSES names it.
"""

import functools
import hashlib
from datetime import timedelta

from django.conf import settings
from django.db import connection
from django.utils import timezone
from oauth2_provider.models import AccessToken
from rest_framework.authentication import BaseAuthentication

from accounts.models import ApiKey, User
from core.authentication import Credential, bearer_token, checking_connection
from core.exceptions import REALM, InvalidToken
from core.rows import RowLayout, instances, row_layout
from core.scopes import all_scopes, expand_scopes, parse_scopes

LAST_USED_RESOLUTION = timedelta(minutes=1)


def hash_api_key(raw_key: str) -> str:
    return hashlib.sha256(raw_key.encode()).hexdigest()


@functools.cache
def _api_key_lookup() -> tuple[str, RowLayout, RowLayout]:
    """The SQL of `ApiKey.objects.select_related("user").filter(hashed_key=…)` and the row layouts,
    worked out once per process. Building that query with the ORM on every request cost more CPU
    than the database took to answer it; the statement and the row layout never change."""
    key_layout, user_layout = row_layout(ApiKey), row_layout(User)
    quote = connection.ops.quote_name
    key_table, user_table = quote(ApiKey._meta.db_table), quote(User._meta.db_table)
    sql = (
        f"SELECT {key_layout.columns(ApiKey._meta.db_table)}, {user_layout.columns(User._meta.db_table)}"
        f" FROM {key_table} INNER JOIN {user_table}"
        f" ON {key_table}.{quote(ApiKey._meta.get_field('user').column)} = {user_table}.{quote(User._meta.pk.column)}"
        f" WHERE {key_table}.{quote(ApiKey._meta.get_field('hashed_key').column)} = %s LIMIT 1"
    )
    return sql, key_layout, user_layout


def api_key_with_user(hashed_key: str) -> ApiKey | None:
    """The API key with this hash and its user (`key.user`), in one query; None if there is none."""
    sql, key_layout, user_layout = _api_key_lookup()

    def fetch():
        with connection.cursor() as cursor:
            cursor.execute(sql, [hashed_key])
            return cursor.fetchone()

    row = checking_connection(fetch)
    if row is None:
        return None
    key, user = instances(row, key_layout, user_layout)
    key.user = user
    return key


class CredentialAuthentication(BaseAuthentication):
    def authenticate(self, request):
        token = bearer_token(request)
        if token is None and request.META.get("HTTP_AUTHORIZATION"):
            raise InvalidToken("Use 'Authorization: Bearer <token>'.")
        if token is None:
            api_key = request.query_params.get("apiKey")
            if not api_key:
                return None
            return self._authenticate_api_key(api_key)
        if token.startswith(settings.API_KEY_PREFIX):
            return self._authenticate_api_key(token)
        return self._authenticate_access_token(token)

    def authenticate_header(self, request):
        return REALM

    def _authenticate_api_key(self, raw_key: str):
        now = timezone.now()
        key = api_key_with_user(hash_api_key(raw_key))
        if (
            key is None
            or key.revoked_at is not None
            or (key.expires_at is not None and key.expires_at <= now)
            or not key.user.is_active
        ):
            raise InvalidToken()
        if key.last_used_at is None or now - key.last_used_at >= LAST_USED_RESOLUTION:
            # At most one write a minute per key, not one per request.
            ApiKey.objects.filter(pk=key.pk).update(last_used_at=now)
        return key.user, Credential(kind="api_key", id=key.pk, scopes=all_scopes())

    def _authenticate_access_token(self, raw_token: str):
        checksum = hashlib.sha256(raw_token.encode()).hexdigest()
        token = checking_connection(
            AccessToken.objects.select_related("user", "application", "application__profile")
            .filter(token_checksum=checksum)
            .first
        )
        if token is None or token.user is None or token.is_expired() or not token.user.is_active:
            raise InvalidToken()
        profile = getattr(token.application, "profile", None) if token.application else None
        if profile is not None and profile.suspended:
            raise InvalidToken("The application this token was issued to is suspended.")
        now = timezone.now()
        if token.updated is None or now - token.updated >= LAST_USED_RESOLUTION:
            # `updated` doubles as "last used" for the connected-apps page; at most a write a minute.
            AccessToken.objects.filter(pk=token.pk).update(updated=now)
        return token.user, Credential(
            kind="oauth",
            id=token.pk,
            scopes=expand_scopes(parse_scopes(token.scope)),
            application_id=token.application_id,
        )
