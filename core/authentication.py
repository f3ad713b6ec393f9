"""One authentication class for the whole resource API (contract §2).

`Authorization: Bearer <credential>` carries either an OAuth access token or an API key (told
apart by the API key prefix); `?apiKey=` carries API keys only. Either way the credential and its
user come back in one query. `request.auth` is a `Credential` with the granted scopes.
"""

import hashlib
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.utils import timezone
from oauth2_provider.models import AccessToken
from rest_framework.authentication import BaseAuthentication

from accounts.models import ApiKey
from core.exceptions import REALM, InvalidToken
from core.scopes import all_scopes, expand_scopes, parse_scopes

LAST_USED_RESOLUTION = timedelta(minutes=1)


@dataclass(frozen=True)
class Credential:
    kind: str  # "api_key" or "oauth"
    id: int
    scopes: frozenset[str]
    application_id: int | None = None

    @property
    def rate_limit_key(self) -> str:
        return f"{self.kind}:{self.id}"


def hash_api_key(raw_key: str) -> str:
    return hashlib.sha256(raw_key.encode()).hexdigest()


def bearer_token(request) -> str | None:
    header = request.META.get("HTTP_AUTHORIZATION", "")
    scheme, _, value = header.partition(" ")
    if scheme.lower() != "bearer":
        return None
    return value.strip() or None


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
        key = ApiKey.objects.select_related("user").filter(hashed_key=hash_api_key(raw_key)).first()
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
        token = (
            AccessToken.objects.select_related("user", "application", "application__profile")
            .filter(token_checksum=checksum)
            .first()
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
