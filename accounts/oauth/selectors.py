"""Reads for the OAuth provider: client facts, token introspection, connected apps."""

import hashlib
from dataclasses import dataclass, field
from datetime import datetime
from urllib.parse import urlsplit

from django.db.models import F, Max, Q
from django.utils import timezone
from oauth2_provider.models import AccessToken, Application, RefreshToken, refresh_token_expire_timedelta

from accounts.models import OAuthClientProfile, OAuthCodeRedemption, User
from core.scopes import expand_scopes, parse_scopes


def client_profile(application: Application) -> OAuthClientProfile | None:
    # Cached on the instance: oauthlib asks several questions about the same client per request.
    if not hasattr(application, "_service_profile"):
        application._service_profile = OAuthClientProfile.objects.filter(application=application).first()
    return application._service_profile


@dataclass
class AuthorizationAsker:
    """Who an authorization request comes from, as the sign-in page names it."""

    name: str
    redirect_host: str


def authorization_asker(query: dict[str, str]) -> AuthorizationAsker | None:
    """The application of an authorization request's query and the host it would redirect to: the
    `redirect_uri` when the application registered it, else its first registered one. None for an
    unknown client or a redirect_uri it did not register (the consent step refuses those anyway)."""
    application = Application.objects.filter(client_id=query.get("client_id") or "").first()
    if application is None:
        return None
    redirect_uri = query.get("redirect_uri") or application.default_redirect_uri
    if not redirect_uri or not application.redirect_uri_allowed(redirect_uri):
        return None
    return AuthorizationAsker(name=application.name, redirect_host=urlsplit(redirect_uri).netloc)


def client_is_suspended(application: Application) -> bool:
    profile = client_profile(application)
    return profile is not None and profile.suspended


def client_by_client_id(client_id: str) -> Application | None:
    """A registered client that may be shown to whoever names it (its public facts: name, logo,
    redirect URI); a suspended client is as good as unknown."""
    application = Application.objects.filter(client_id=client_id).first()
    if application is None or client_is_suspended(application):
        return None
    return application


def client_scope_ceiling(application: Application) -> list[str]:
    """The scopes the operator allows this client to ask for; none without a profile."""
    profile = client_profile(application)
    return list(profile.scope_ceiling or []) if profile is not None else []


def _checksum(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def token_introspect(*, token: str, token_type_hint: str | None, application: Application) -> dict:
    """RFC 7662 answer for `token` as seen by `application`.

    A client may only introspect its own tokens; any other token, like an unknown, expired or
    revoked one, is `{"active": false}` so that nothing about it leaks.
    """
    inactive = {"active": False}
    checksum = _checksum(token)
    lookups = [_introspect_access_token, _introspect_refresh_token]
    if token_type_hint == "refresh_token":
        lookups.reverse()
    for lookup in lookups:
        answer = lookup(checksum, application)
        if answer is not None:
            return answer
    return inactive


def _active_claims(*, token_type: str, user: User, application: Application, scope: str, issued, expires) -> dict:
    return {
        "active": True,
        "scope": " ".join(parse_scopes(scope)),
        "client_id": application.client_id,
        "username": user.username,
        "sub": str(user.pk),
        "token_type": token_type,
        "iat": int(issued.timestamp()),
        "exp": int(expires.timestamp()),
    }


def _usable(user: User, application: Application) -> bool:
    return user is not None and user.is_active and not client_is_suspended(application)


def _introspect_access_token(checksum: str, application: Application) -> dict | None:
    access_token = (
        AccessToken.objects.select_related("user").filter(token_checksum=checksum, application=application).first()
    )
    if access_token is None:
        return None
    if access_token.is_expired() or not _usable(access_token.user, application):
        return {"active": False}
    return _active_claims(
        token_type="Bearer",
        user=access_token.user,
        application=application,
        scope=access_token.scope,
        issued=access_token.created,
        expires=access_token.expires,
    )


def _introspect_refresh_token(checksum: str, application: Application) -> dict | None:
    refresh_token = (
        RefreshToken.objects.select_related("user", "access_token")
        .filter(token_checksum=checksum, application=application)
        .order_by(F("revoked").desc(nulls_first=True))
        .first()
    )
    if refresh_token is None:
        return None
    access_token = refresh_token.access_token
    if refresh_token.revoked is not None or access_token is None or not _usable(refresh_token.user, application):
        return {"active": False}
    idle = refresh_token_expire_timedelta()
    expires = access_token.expires + idle if idle else None
    if expires is not None and expires <= timezone.now():
        return {"active": False}
    claims = _active_claims(
        token_type="refresh_token",
        user=refresh_token.user,
        application=application,
        scope=access_token.scope,
        issued=refresh_token.created,
        expires=expires or access_token.expires,
    )
    if expires is None:
        claims.pop("exp")
    return claims


@dataclass
class ConnectedApp:
    application: Application
    profile: OAuthClientProfile | None
    scopes: list[str] = field(default_factory=list)
    authorized_at: datetime | None = None
    last_used_at: datetime | None = None


def _live_tokens(user: User):
    """`user`'s access tokens that still act or can be refreshed: the access token has not expired,
    or its refresh token can still mint a new one."""
    return AccessToken.objects.filter(user=user, application__isnull=False).filter(
        Q(expires__gt=timezone.now()) | Q(refresh_token__revoked__isnull=True, refresh_token__isnull=False)
    )


def consent_on_record(*, user: User, application: Application, scopes: list[str]) -> bool:
    """Whether `user` already allowed `application` all of `scopes` and has not taken it back: one
    of its live tokens for this user carries every one of them (as django-oauth-toolkit's
    `approval_prompt=auto` asks of a valid token)."""
    wanted = set(scopes)
    return any(
        wanted <= expand_scopes(parse_scopes(scope))
        for scope in _live_tokens(user).filter(application=application).values_list("scope", flat=True)
    )


def connected_apps_for_user(*, user: User) -> list[ConnectedApp]:
    """Every client holding a live token for `user` (`_live_tokens`), newest use first.

    "Last used" is the access token's `updated`, which the API's authentication touches at most
    once a minute (accounts.authentication).
    """
    live_tokens = _live_tokens(user).select_related("application", "application__profile").order_by("id")
    apps: dict[int, ConnectedApp] = {}
    for access_token in live_tokens:
        application = access_token.application
        entry = apps.get(application.pk)
        if entry is None:
            entry = apps[application.pk] = ConnectedApp(
                application=application, profile=getattr(application, "profile", None)
            )
        for scope in parse_scopes(access_token.scope):
            if scope not in entry.scopes:
                entry.scopes.append(scope)
        entry.authorized_at = min(filter(None, [entry.authorized_at, access_token.created]))
        entry.last_used_at = max(filter(None, [entry.last_used_at, access_token.updated]))
    consents = (
        OAuthCodeRedemption.objects.filter(user=user, application_id__in=apps)
        .values("application_id")
        .annotate(latest=Max("created_at"))
    )
    for consent in consents:
        apps[consent["application_id"]].authorized_at = consent["latest"]
    return sorted(apps.values(), key=lambda entry: entry.last_used_at, reverse=True)


def connected_app_get(*, user: User, application_id: int) -> Application | None:
    return Application.objects.filter(pk=application_id).first()
