"""Cal.com v2's OAuth connect of Google Calendar (`google`) and Microsoft 365 (`office365`):

- `GET /v2/calendars/{calendar}/connect?redir=…&isDryRun=…` answers `{"authUrl": …}`, the
  provider's consent page (state signed and bound to the caller, PKCE);
- `GET /v2/calendars/{calendar}/save?code=…&state=…` is where the provider sends the browser back:
  no credential comes with it (the signed state names the user). It connects the account, then
  redirects to `redir` as Cal.com does (301), or answers the connection when no `redir` was given.
  A state that is missing, forged, altered, expired or for the other provider is a 400 and
  redirects nowhere; a refusal at the provider (`error=access_denied`) or a failed exchange
  redirects to `redir` with `error=` (or is a 400 without one)."""

from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from django.http import HttpResponsePermanentRedirect
from django.urls import path
from oauth2_provider.models import get_application_model
from rest_framework.permissions import AllowAny

from calendars.conf import calendar_setting
from calendars.models import ConnectionKind
from calendars.oauth.connect import connect_saved, connect_url
from calendars.oauth.tokens import read_state
from calv2.views.base import V2View
from calv2.views.calendars import credential_fields
from core.exceptions import ApplicationError
from core.query import Boolean, QueryParameters, Text
from core.scopes import WRITE_CALENDAR

OAUTH_CALENDARS = {"google": ConnectionKind.GOOGLE, "office365": ConnectionKind.OFFICE365}


def _kind(calendar: str) -> str:
    if calendar not in OAUTH_CALENDARS:
        raise ApplicationError(f"Invalid calendar type, available calendars are: {', '.join(OAUTH_CALENDARS)}")
    return OAUTH_CALENDARS[calendar]


class ConnectQuery(QueryParameters):
    redir = Text(description="Where the browser is sent after the calendar is connected (http or https).")
    is_dry_run = Boolean(default=False, description="Consent only: the callback stores nothing.")


class SaveQuery(QueryParameters):
    state = Text(description="The state of the authorization URL, as the provider sends it back.")
    code = Text(description="The provider's authorization code.")
    error = Text(description="The provider's error, when the user refused or the request was refused.")


def _callback(request, calendar: str) -> str:
    base = calendar_setting("OAUTH_REDIRECT_BASE_URL").rstrip("/")
    suffix = f"/v2/calendars/{calendar}/save"
    return f"{base}{suffix}" if base else request.build_absolute_uri(suffix)


def _allowed_hosts(request) -> set[str]:
    """Where the callback may send a browser: the operator's list, this service itself, and the
    hosts of the calling OAuth client's registered redirect URIs. Without the rule the callback
    would be an open redirect: anyone can get a state for their own account, with any `redir`."""
    hosts = {host.lower() for host in calendar_setting("OAUTH_REDIR_HOSTS")}
    hosts.add(request.get_host().rsplit(":", 1)[0].lower())
    base = calendar_setting("OAUTH_REDIRECT_BASE_URL")
    if base:
        hosts.add((urlsplit(base).hostname or "").lower())
    application_id = getattr(request.auth, "application_id", None)
    if application_id is not None:
        uris = get_application_model().objects.filter(pk=application_id).values_list("redirect_uris", flat=True)
        hosts.update((urlsplit(uri).hostname or "").lower() for uri in " ".join(uris).split())
    return hosts


def _checked_redir(request, redir: str) -> str:
    parts = urlsplit(redir)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ApplicationError("redir must be an http or https URL.", errors={"redir": ["Must be an absolute URL."]})
    if parts.hostname.lower() not in _allowed_hosts(request):
        message = (
            f"redir may not lead to {parts.hostname}: the operator lists the hosts it may lead to "
            "(CALENDAR_OAUTH_REDIR_HOSTS), or an OAuth client registers them as redirect URIs."
        )
        raise ApplicationError(message, errors={"redir": [message]})
    return redir


def _with_error(redir: str, error: str) -> str:
    parts = urlsplit(redir)
    query = urlencode([*parse_qsl(parts.query, keep_blank_values=True), ("error", error[:300])])
    return urlunsplit(parts._replace(query=query))


class CalendarConnectView(V2View):
    scopes = {"GET": WRITE_CALENDAR}

    def get(self, request, calendar):
        kind = _kind(calendar)
        query = ConnectQuery.parse(request)
        redir = _checked_redir(request, query["redir"]) if query["redir"] else ""
        url = connect_url(
            user=request.user,
            kind=kind,
            redirect_uri=_callback(request, calendar),
            redir=redir,
            dry_run=query["is_dry_run"],
        )
        return self.success({"authUrl": url})


class CalendarSaveView(V2View):
    """The provider's redirect back: public, the signed state is the credential. No rate limit of a
    credential applies (there is none); nothing is sent anywhere before the state checks out."""

    authentication_classes = ()
    permission_classes = (AllowAny,)
    throttle_classes = ()

    def get(self, request, calendar):
        kind = _kind(calendar)
        query = SaveQuery.parse(request)
        if not query["state"]:
            raise ApplicationError("The callback has no state parameter.", errors={"state": ["Required."]})
        state = read_state(query["state"], kind)  # refused before anything else is read
        if query["error"]:
            refusal = f"{query['error']}"
            if state.redir:
                return HttpResponsePermanentRedirect(_with_error(state.redir, refusal))
            raise ApplicationError(f"The provider did not authorize the calendar: {refusal}.")
        try:
            saved = connect_saved(kind=kind, state=query["state"], code=query["code"] or "")
        except ApplicationError as error:
            if state.redir:
                return HttpResponsePermanentRedirect(_with_error(state.redir, str(error.detail)))
            raise
        if state.redir:
            return HttpResponsePermanentRedirect(state.redir)
        connection = saved.connection
        return self.success(credential_fields(connection, connection.user_id) if connection is not None else None)


urlpatterns = [
    path("calendars/<str:calendar>/connect", CalendarConnectView.as_view(), name="v2-calendar-connect"),
    path("calendars/<str:calendar>/save", CalendarSaveView.as_view(), name="v2-calendar-save"),
]
