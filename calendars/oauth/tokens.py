"""OAuth 2.0 for Google Calendar and Microsoft 365: the provider's app from the environment, the
authorization URL (a signed state bound to the user, PKCE S256), the code exchanged for tokens, and
access tokens refreshed when they expire. Tokens are stored like CalDAV passwords (Fernet,
calendars.crypto): `{"access_token", "refresh_token", "expires_at", "account"}`.

A refresh the provider refuses with `invalid_grant` (the user revoked the app, the password
changed, the refresh token expired) marks the connection invalid and raises `GrantRevoked`: the
connection is shown unhealthy, keeps its last known busy time, and slots never notice."""

import base64
import hashlib
import hmac
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import urlencode

from django.conf import settings
from django.core import signing

from calendars import crypto
from calendars.conf import calendar_setting, provider_setting
from calendars.models import CalendarConnection, ConnectionKind
from calendars.oauth.http import Answer, TokenRejected, refuse, request
from calendars.providers import ProviderError
from core.exceptions import ApplicationError

STATE_SALT = "calendars.oauth.state"
# A token this close to its expiry is refreshed before use.
EXPIRY_MARGIN_SECONDS = 60


class GrantRevoked(ProviderError):
    """The provider no longer honours the refresh token: the user must connect again."""


@dataclass(frozen=True)
class Provider:
    kind: str
    title: str
    setting: str  # the CALENDARS key of its knobs
    env_prefix: str  # the environment variables that configure it
    authorize_url: str
    token_url: str
    api_url: str
    scopes: str
    extra_authorize: dict
    client_id: str
    client_secret: str


def provider(kind: str) -> Provider:
    """The provider's app as configured now (tests override the settings)."""
    if kind == ConnectionKind.GOOGLE:
        knobs = provider_setting("GOOGLE")
        return Provider(
            kind=kind,
            title="Google Calendar",
            setting="GOOGLE",
            env_prefix="CALENDAR_GOOGLE",
            authorize_url=knobs["AUTHORIZE_URL"],
            token_url=knobs["TOKEN_URL"],
            api_url=knobs["API_URL"].rstrip("/"),
            # Cal.com's two: read the calendar list and busy time, write events.
            scopes="https://www.googleapis.com/auth/calendar.readonly https://www.googleapis.com/auth/calendar.events",
            # A refresh token is only issued with offline access, and again only on consent.
            extra_authorize={"access_type": "offline", "prompt": "consent", "include_granted_scopes": "true"},
            client_id=knobs["CLIENT_ID"],
            client_secret=knobs["CLIENT_SECRET"],
        )
    knobs = provider_setting("MICROSOFT")
    login = f"{knobs['LOGIN_URL'].rstrip('/')}/{knobs['TENANT']}/oauth2/v2.0"
    return Provider(
        kind=kind,
        title="Microsoft 365",
        setting="MICROSOFT",
        env_prefix="CALENDAR_MICROSOFT",
        authorize_url=f"{login}/authorize",
        token_url=f"{login}/token",
        api_url=knobs["API_URL"].rstrip("/"),
        scopes="offline_access User.Read Calendars.ReadWrite",
        extra_authorize={"prompt": "select_account"},
        client_id=knobs["CLIENT_ID"],
        client_secret=knobs["CLIENT_SECRET"],
    )


def configured_provider(kind: str) -> Provider:
    """The provider, or a 400 naming the environment variables the operator has not set."""
    found = provider(kind)
    missing = [
        f"{found.env_prefix}_{name}"
        for name, value in (("CLIENT_ID", found.client_id), ("CLIENT_SECRET", found.client_secret))
        if not value
    ]
    if missing:
        raise ApplicationError(
            f"{found.title} is not configured on this server: the operator must set {' and '.join(missing)}."
        )
    return found


# --- the authorization request ----------------------------------------------------------------------


def _pkce_verifier(nonce: str) -> str:
    """The PKCE code verifier of one connect, derived from its nonce with a server secret: never
    sent anywhere but the token endpoint, and nothing to store between connect and callback."""
    key = hashlib.sha256(b"calendars.oauth.pkce:" + settings.SECRET_KEY.encode()).digest()
    digest = hmac.new(key, nonce.encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def _pkce_challenge(verifier: str) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()


@dataclass(frozen=True)
class ConnectState:
    user_id: int
    kind: str
    redirect_uri: str
    redir: str
    dry_run: bool
    nonce: str


def authorization_url(*, user, kind: str, redirect_uri: str, redir: str = "", dry_run: bool = False) -> str:
    """Where the user's browser goes to consent. The state is signed with the server's key and
    names the user, the provider and the callback, so the callback connects the calendar to the user
    who asked, and a state forged, altered, for another provider or expired is refused."""
    found = configured_provider(kind)
    nonce = secrets.token_urlsafe(16)
    state = signing.dumps(
        {"u": user.pk, "k": kind, "c": redirect_uri, "r": redir, "d": dry_run, "n": nonce},
        salt=STATE_SALT,
        compress=True,
    )
    query = {
        "client_id": found.client_id,
        "redirect_uri": redirect_uri,
        "response_type": "code",
        "scope": found.scopes,
        "state": state,
        "code_challenge": _pkce_challenge(_pkce_verifier(nonce)),
        "code_challenge_method": "S256",
        **found.extra_authorize,
    }
    return f"{found.authorize_url}?{urlencode(query)}"


def read_state(state: str, kind: str) -> ConnectState:
    try:
        value = signing.loads(state, salt=STATE_SALT, max_age=calendar_setting("OAUTH_STATE_MAX_AGE_SECONDS"))
    except signing.SignatureExpired:
        raise ApplicationError("The authorization took too long: connect the calendar again.") from None
    except signing.BadSignature:
        raise ApplicationError("The state parameter is not one this server issued.") from None
    if not isinstance(value, dict) or value.get("k") != kind:
        raise ApplicationError("The state parameter was issued for another calendar.")
    return ConnectState(
        user_id=int(value["u"]),
        kind=kind,
        redirect_uri=str(value["c"]),
        redir=str(value.get("r") or ""),
        dry_run=bool(value.get("d")),
        nonce=str(value["n"]),
    )


# --- tokens -------------------------------------------------------------------------------------


def _token_request(found: Provider, form: dict, action: str) -> dict:
    answer = request(found.title, "POST", found.token_url, data=form)
    if answer.status == 400 and answer.data.get("error") == "invalid_grant":
        raise GrantRevoked(f"{found.title} no longer accepts this connection's grant: connect it again.")
    if answer.status != 200 or not answer.data.get("access_token"):
        raise refuse(found.title, answer, action)
    return answer.data


def _secret(data: dict, *, refresh_token: str = "", account: str = "") -> dict:
    return {
        "access_token": data["access_token"],
        # A refresh answer may leave the refresh token out (Google) or rotate it (Microsoft).
        "refresh_token": data.get("refresh_token") or refresh_token,
        "expires_at": time.time() + int(data.get("expires_in") or 3600),
        "account": account,
    }


def exchange_code(kind: str, *, code: str, state: ConnectState) -> dict:
    """The authorization code for tokens (with the PKCE verifier and the same redirect URI)."""
    found = configured_provider(kind)
    data = _token_request(
        found,
        {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": state.redirect_uri,
            "client_id": found.client_id,
            "client_secret": found.client_secret,
            "code_verifier": _pkce_verifier(state.nonce),
        },
        "exchanging the authorization code",
    )
    if not data.get("refresh_token"):
        raise ProviderError(
            f"{found.title} gave no refresh token: remove the app's access in the account and connect again."
        )
    return _secret(data)


class Session:
    """Calls to one account's API with a current access token: refreshed before it expires and
    once more when the API answers 401; a connection's refreshed tokens are stored (encrypted) at
    once. Without a connection (while connecting) the tokens are the ones just received."""

    def __init__(
        self,
        kind: str,
        secret: dict,
        *,
        connection: CalendarConnection | None = None,
        timeout: float | None = None,
    ):
        self.kind = kind
        self.connection = connection
        self.provider = provider(kind)
        self.timeout = timeout
        self.secret = secret

    @classmethod
    def of(cls, connection: CalendarConnection, *, timeout: float | None = None) -> "Session":
        # The tokens as stored now: another worker may have refreshed them since `connection` was read.
        stored = CalendarConnection.objects.filter(pk=connection.pk).values_list("credentials", "invalid").first()
        if stored is not None:
            connection.credentials, connection.invalid = stored
        return cls(connection.kind, crypto.decrypt(connection.credentials), connection=connection, timeout=timeout)

    def _refresh(self) -> None:
        found = configured_provider_or_error(self.kind)
        try:
            data = _token_request(
                found,
                {
                    "grant_type": "refresh_token",
                    "refresh_token": self.secret.get("refresh_token", ""),
                    "client_id": found.client_id,
                    "client_secret": found.client_secret,
                },
                "refreshing the access token",
            )
        except GrantRevoked as revoked:
            if self.connection is not None:
                CalendarConnection.objects.filter(pk=self.connection.pk).update(
                    invalid=True, last_error=str(revoked)[:500]
                )
                self.connection.invalid = True
            raise
        self.secret = _secret(
            data, refresh_token=self.secret.get("refresh_token", ""), account=self.secret.get("account", "")
        )
        if self.connection is not None:
            self.connection.credentials = crypto.encrypt(self.secret)
            CalendarConnection.objects.filter(pk=self.connection.pk).update(credentials=self.connection.credentials)

    def call(self, method: str, url: str, action: str, *, ok: Callable[[Answer], bool], **kwargs) -> Answer:
        """The answer when `ok(answer)`; otherwise the ProviderError for it."""
        if self.connection is not None and self.connection.invalid:
            raise GrantRevoked(f"{self.provider.title} no longer accepts this connection's grant: connect it again.")
        if float(self.secret.get("expires_at", 0)) - EXPIRY_MARGIN_SECONDS <= time.time():
            self._refresh()
        for attempt in range(2):
            answer = request(
                self.provider.title, method, url, token=self.secret["access_token"], timeout=self.timeout, **kwargs
            )
            if ok(answer):
                return answer
            error = refuse(self.provider.title, answer, action)
            if isinstance(error, TokenRejected) and attempt == 0:
                self._refresh()
                continue
            raise error
        raise AssertionError("unreachable")


def configured_provider_or_error(kind: str) -> Provider:
    """For the worker: a provider whose app is no longer configured is the connection's error."""
    try:
        return configured_provider(kind)
    except ApplicationError as error:
        raise ProviderError(str(error.detail)) from None
