"""One authentication class for the whole resource API (docs/api.md, Conventions and Scopes).

`Authorization: Bearer <credential>` carries either an OAuth access token or an API key (told
apart by the API key prefix); `?apiKey=` carries API keys only. Either way the credential and its
user come back in one query (for an API key, an ORM queryset compiled once per process:
`_api_key_lookup`). `request.auth` is a `core.authentication.Credential` with the granted scopes.
It lives here, next to the tables it reads; settings' DEFAULT_AUTHENTICATION_CLASSES names it.
"""

import functools
import hashlib
from datetime import timedelta

from django.conf import settings
from django.utils import timezone
from oauth2_provider.models import AccessToken
from rest_framework.authentication import BaseAuthentication

from accounts.models import ApiKey
from core.authentication import Credential, bearer_token, checking_connection
from core.exceptions import REALM, Forbidden, InvalidToken
from core.fastpath.compiled_queries import CompiledQuery, Parameter
from core.scopes import all_scopes, expand_scopes, parse_scopes

LAST_USED_RESOLUTION = timedelta(minutes=1)


def hash_api_key(raw_key: str) -> str:
    return hashlib.sha256(raw_key.encode()).hexdigest()


@functools.cache
def _api_key_lookup() -> CompiledQuery:
    """`ApiKey.objects.select_related("user").filter(hashed_key=…)`, compiled by the ORM once per
    process (core/fastpath/compiled_queries.py): building the query on every request cost more CPU
    than the database took to answer it (docs/benchmarks.md, "Profiling and what changed")."""
    hashed_key = Parameter("hashed_key", ApiKey._meta.get_field("hashed_key"))
    # The key is unique: no ORDER BY (the model's ordering) for its one row, as `.get()` would do.
    return CompiledQuery(ApiKey.objects.select_related("user").filter(hashed_key=hashed_key).order_by()[:1])


def api_key_with_user(hashed_key: str) -> ApiKey | None:
    """The API key with this hash and its user (`key.user`), in one query; None if there is none."""
    lookup = _api_key_lookup()
    return checking_connection(lambda: lookup.first(hashed_key=hashed_key))


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
        if key is None or key.revoked_at is not None or (key.expires_at is not None and key.expires_at <= now):
            raise InvalidToken()
        if not key.user.is_active:
            # Cal.com v1's answer for a locked or blocked account: the key is genuine, the account
            # may not act (403, not a 401 that tells the client to get a new credential).
            raise Forbidden("User is locked or blocked.")
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
