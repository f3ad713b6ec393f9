"""The OAuth 2.0 provider's HTTP endpoints, at Cal.com's paths (docs/oauth.md).

The browser-facing pages (sign-in, consent, connected apps) are Django views with templates;
the machine endpoints answer RFC 6749 §5.2 error bodies, not problem+json, because OAuth client
libraries parse those. `/api/auth/oauth/me` is a resource endpoint and uses the core stack.
"""

import json
from functools import wraps
from urllib.parse import parse_qsl, urlsplit

from django.conf import settings
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.contrib.auth.views import redirect_to_login
from django.db import transaction
from django.http import Http404, HttpResponse, HttpResponseRedirect, JsonResponse
from django.shortcuts import render
from django.urls import Resolver404, resolve, reverse
from django.utils.decorators import method_decorator
from django.views import View
from django.views.decorators.cache import never_cache
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST
from drf_spectacular.utils import extend_schema
from oauth2_provider.exceptions import FatalClientError, OAuthToolkitError
from oauth2_provider.http import OAuth2ResponseRedirect
from oauth2_provider.oauth2_backends import get_oauthlib_core
from oauth2_provider.settings import oauth2_settings
from oauthlib.common import Request as OAuthlibRequest
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.oauth import selectors, services
from accounts.oauth.backends import MalformedBody, request_parameters
from accounts.oauth.forms import ConsentForm
from accounts.oauth.serializers import OAuthMeSerializer
from accounts.throttle import ThrottledAuthenticationForm
from core.authentication import bearer_token
from core.scopes import READ_PROFILE

ERROR_DESCRIPTIONS = {
    "invalid_request": "The request is missing a parameter or has an invalid one.",
    "invalid_client": "Client authentication failed.",
    "invalid_grant": "The authorization code or refresh token is invalid, expired, revoked or was already used.",
    "unauthorized_client": "This client may not use this grant type.",
    "unsupported_grant_type": "Only authorization_code and refresh_token grants are supported.",
    "invalid_scope": "The requested scope is invalid or beyond what this client may ask for.",
    "unsupported_token_type": "This token type cannot be revoked.",
    "access_denied": "The user denied the request.",
}
CLIENT_AUTH_CHALLENGE = 'Basic realm="oauth"'


def _no_framing(view):
    """The consent and sign-in pages must never render inside someone else's frame (clickjacking)."""

    @wraps(view)
    def wrapper(request, *args, **kwargs):
        response = view(request, *args, **kwargs)
        response["X-Frame-Options"] = "DENY"
        response["Content-Security-Policy"] = "frame-ancestors 'none'"
        return response

    return wrapper


# --- Step 1: authorization (browser) ---------------------------------------------------------------


def _error_page(request, error, status=400):
    description = getattr(error, "description", "") or "The authorization request is invalid."
    return render(
        request,
        "accounts/oauth/error.html",
        {"error": getattr(error, "error", "invalid_request"), "description": description},
        status=status,
    )


def _redirect_with_error(error, application=None):
    oauthlib_error = error.oauthlib_error
    allowed = application.get_allowed_schemes() if application else oauth2_settings.ALLOWED_REDIRECT_URI_SCHEMES
    return OAuth2ResponseRedirect(oauthlib_error.in_uri(oauthlib_error.redirect_uri), allowed)


@method_decorator([never_cache, _no_framing], name="dispatch")
class AuthorizeView(View):
    """`GET /auth/oauth2/authorize` shows the consent page; its form posts back to the same URL.

    The POST validates the query string again rather than trusting hidden fields, so nothing the
    browser sends can widen what was shown to the user. A client the user already allowed every
    requested scope (and still holds a live token of) gets its code without the page, as
    django-oauth-toolkit's `approval_prompt=auto`; `approval_prompt=force` shows it anyway.
    """

    def _validate(self, request):
        core = get_oauthlib_core()
        try:
            scopes, credentials = core.validate_authorization_request(request)
        except FatalClientError as error:
            return None, None, _error_page(request, error.oauthlib_error)
        except OAuthToolkitError as error:
            return None, None, _redirect_with_error(error)
        if not request.user.is_authenticated:
            return None, None, redirect_to_login(request.get_full_path(), settings.LOGIN_URL)
        return scopes, credentials, None

    def get(self, request):
        scopes, credentials, failure = self._validate(request)
        if failure is not None:
            return failure
        application = credentials["request"].client
        if request.GET.get("approval_prompt") != "force" and selectors.consent_on_record(
            user=request.user, application=application, scopes=scopes
        ):
            return self._answer(request, scopes, credentials, allow=True)
        profile = selectors.client_profile(application)
        context = {
            "application": application,
            "profile": profile,
            "redirect_host": urlsplit(credentials["redirect_uri"]).netloc,
            "scopes": [(scope, settings.SCOPES.get(scope, scope)) for scope in scopes],
            "form": ConsentForm(),
            "action": request.get_full_path(),
        }
        return render(request, "accounts/oauth/authorize.html", context)

    def post(self, request):
        scopes, credentials, failure = self._validate(request)
        if failure is not None:
            return failure
        form = ConsentForm(request.POST)
        allow = form.is_valid() and form.cleaned_data["decision"] == ConsentForm.ALLOW
        return self._answer(request, scopes, credentials, allow=allow)

    def _answer(self, request, scopes, credentials, *, allow: bool):
        """The redirect to the client with a code (`allow`) or `access_denied`."""
        application = credentials["request"].client
        # PKCE parameters are read again from the query string by oauthlib.
        credentials = {key: credentials[key] for key in ("client_id", "redirect_uri", "response_type", "state")}
        # Whether the client named redirect_uri decides if the token request must repeat it.
        credentials["redirect_uri_given"] = "redirect_uri" in request.GET
        try:
            uri, _headers, _body, _status = get_oauthlib_core().create_authorization_response(
                request=request, scopes=" ".join(scopes), credentials=credentials, allow=allow
            )
        except FatalClientError as error:
            return _error_page(request, error.oauthlib_error)
        except OAuthToolkitError as error:
            return _redirect_with_error(error, application)
        return OAuth2ResponseRedirect(uri, application.get_allowed_schemes())


def _is_authorize_path(path: str) -> bool:
    try:
        match = resolve(path)
    except Resolver404:
        return False
    return getattr(match.func, "view_class", None) is AuthorizeView


# --- Steps 2 and 3: tokens (machines) ------------------------------------------------------------


def _oauth_json(body: dict, status: int, headers: dict | None = None) -> HttpResponse:
    if "error" in body and not body.get("error_description"):
        body["error_description"] = ERROR_DESCRIPTIONS.get(body["error"], "The request failed.")
    response = JsonResponse(body, status=status)
    for name, value in (headers or {}).items():
        if name.lower() not in ("content-type", "www-authenticate"):
            response[name] = value
    response["Cache-Control"] = "no-store"
    response["Pragma"] = "no-cache"
    if body.get("error") == "invalid_client":
        # RFC 6749 §5.2: 401 with a challenge for the scheme the client used (or may use).
        response.status_code = 401
        response["WWW-Authenticate"] = CLIENT_AUTH_CHALLENGE
    return response


def _error(error: str, description: str | None = None, status: int = 400) -> HttpResponse:
    body = {"error": error}
    if description:
        body["error_description"] = description
    return _oauth_json(body, status)


def _post_only(view):
    """The machine endpoints take POST only; any other method gets an RFC 6749-style JSON 405."""

    @wraps(view)
    def wrapper(request, *args, **kwargs):
        if request.method != "POST":
            response = _error("invalid_request", f"Use POST, not {request.method}.", status=405)
            response["Allow"] = "POST"
            return response
        return view(request, *args, **kwargs)

    return wrapper


def _issue_tokens(request) -> HttpResponse:
    try:
        parameters = request_parameters(request)
    except MalformedBody as error:
        return _error("invalid_request", str(error))
    grant_type = (getattr(request, "oauth_body_overrides", None) or {}).get("grant_type") or parameters.get(
        "grant_type"
    )
    if not grant_type:
        return _error("invalid_request", "Missing grant_type parameter.")
    if grant_type not in ("authorization_code", "refresh_token"):
        return _error("unsupported_grant_type")
    # One transaction: the code is locked while it is exchanged, so two concurrent exchanges of the
    # same code cannot both succeed, and a replay's revocation is kept even though it answers 400.
    with transaction.atomic():
        _uri, headers, body, status = get_oauthlib_core().create_token_response(request)
    return _oauth_json(json.loads(body or "{}"), status, headers)


@csrf_exempt
@_post_only
def token(request):
    """`POST /api/auth/oauth/token`: authorization_code and refresh_token grants (RFC 6749 §4.1.3, §6)."""
    return _issue_tokens(request)


@csrf_exempt
@_post_only
def refresh_token(request):
    """`POST /api/auth/oauth/refreshToken`: like the token endpoint's refresh grant, Cal.com style.

    The refresh token may come as `Authorization: Bearer <refresh_token>`; a `refresh_token` in
    the body wins. grant_type defaults to refresh_token and may be nothing else.
    """
    try:
        parameters = request_parameters(request)
    except MalformedBody as error:
        return _error("invalid_request", str(error))
    grant_type = parameters.get("grant_type") or "refresh_token"
    if grant_type != "refresh_token":
        return _error("unsupported_grant_type", "This endpoint only accepts grant_type=refresh_token.")
    overrides = {"grant_type": "refresh_token"}
    header_token = bearer_token(request)
    if header_token is not None:
        # The Authorization header carries the refresh token, so the client authenticates in the body.
        request.oauth_drop_authorization = True
        if not parameters.get("refresh_token"):
            overrides["refresh_token"] = header_token
    request.oauth_body_overrides = overrides
    return _issue_tokens(request)


def _authenticated_client(request, parameters: dict):
    """The client of a revoke/introspect request, authenticated by HTTP Basic or by body secret."""
    core = get_oauthlib_core()
    validator = core.server.request_validator
    oauth_request = OAuthlibRequest(
        request.build_absolute_uri(request.path),
        http_method="POST",
        body=list(parameters.items()),
        headers=core.extract_headers(request),
    )
    if not validator.authenticate_client(oauth_request):
        return None
    # DOT gives public clients a secret too; only a confidential client may introspect.
    if oauth_request.client.client_type != oauth_request.client.CLIENT_CONFIDENTIAL:
        return None
    return oauth_request.client


@csrf_exempt
@_post_only
def revoke(request):
    """`POST /api/auth/oauth/revoke` (RFC 7009). Public clients identify themselves by client_id."""
    try:
        request_parameters(request)
    except MalformedBody as error:
        return _error("invalid_request", str(error))
    with transaction.atomic():
        _uri, headers, body, status = get_oauthlib_core().create_revocation_response(request)
    if status == 200:
        response = HttpResponse(status=200)
        response["Cache-Control"] = "no-store"
        return response
    return _oauth_json(json.loads(body or "{}"), status, headers)


@csrf_exempt
@_post_only
def introspect(request):
    """`POST /api/auth/oauth/introspect` (RFC 7662) for confidential clients, about their own tokens."""
    try:
        parameters = request_parameters(request)
    except MalformedBody as error:
        return _error("invalid_request", str(error))
    application = _authenticated_client(request, parameters)
    if application is None:
        return _error("invalid_client", status=401)
    token_value = parameters.get("token")
    if not token_value:
        return _error("invalid_request", "Missing token parameter.")
    answer = selectors.token_introspect(
        token=token_value, token_type_hint=parameters.get("token_type_hint"), application=application
    )
    return _oauth_json(answer, 200)


def metadata(request):
    """`GET /.well-known/oauth-authorization-server` (RFC 8414): exactly what this server does."""
    issuer = request.build_absolute_uri("/").rstrip("/")
    body = {
        "issuer": issuer,
        "authorization_endpoint": issuer + reverse("oauth-authorize"),
        "token_endpoint": issuer + reverse("oauth-token"),
        "revocation_endpoint": issuer + reverse("oauth-revoke"),
        "introspection_endpoint": issuer + reverse("oauth-introspect"),
        "scopes_supported": list(settings.SCOPES),
        "response_types_supported": ["code"],
        "response_modes_supported": ["query"],
        "grant_types_supported": ["authorization_code", "refresh_token"],
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post", "none"],
        "revocation_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post", "none"],
        "introspection_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post"],
    }
    return JsonResponse(body)


# --- Resource: the token's user -----------------------------------------------------------------


class OAuthMeView(APIView):
    """`GET /api/auth/oauth/me`: who the access token acts for."""

    scopes = {"GET": READ_PROFILE}
    serializer_class = OAuthMeSerializer

    @extend_schema(operation_id="oauth_me", responses=OAuthMeSerializer, tags=["oauth"])
    def get(self, request):
        return Response(OAuthMeSerializer(request.user).data)


# --- Sign-in and connected apps (browser) ------------------------------------------------------------


class LoginView(auth_views.LoginView):
    """Django's sign-in with the sign-in throttle (accounts.throttle): a refused attempt is a 429
    with Retry-After and the page saying how long to wait."""

    template_name = "registration/login.html"
    redirect_authenticated_user = True
    authentication_form = ThrottledAuthenticationForm

    def get_context_data(self, **kwargs):
        """On the way to an authorization, the page names the application asking and where it
        will send the user (`selectors.authorization_asker`)."""
        context = super().get_context_data(**kwargs)
        next_url = urlsplit(self.get_redirect_url() or "")
        if _is_authorize_path(next_url.path):
            context["asker"] = selectors.authorization_asker(dict(parse_qsl(next_url.query)))
        return context

    def form_invalid(self, form):
        response = super().form_invalid(form)
        if form.throttled_for:
            response.status_code = 429
            response["Retry-After"] = str(form.throttled_for)
        return response


login = _no_framing(LoginView.as_view())
logout = auth_views.LogoutView.as_view(next_page=settings.LOGIN_URL)


@never_cache
@_no_framing
@login_required
def connected_apps(request):
    apps = selectors.connected_apps_for_user(user=request.user)
    rows = [
        {
            "app": app,
            "scopes": [(scope, settings.SCOPES.get(scope, scope)) for scope in app.scopes],
        }
        for app in apps
    ]
    return render(request, "accounts/connected_apps.html", {"rows": rows})


@require_POST
@login_required
def connected_app_revoke(request, application_id: int):
    application = selectors.connected_app_get(user=request.user, application_id=application_id)
    if application is None:
        raise Http404("No such application.")
    services.oauth_app_access_revoke(user=request.user, application=application)
    return HttpResponseRedirect(reverse("connected-apps"))
