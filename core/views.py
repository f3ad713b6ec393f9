import sys
from functools import wraps

from celery import current_app
from django.core.exceptions import DisallowedHost, RequestDataTooBig
from django.db import connection
from django.http import JsonResponse
from django.views.decorators.csrf import csrf_exempt
from rest_framework.exceptions import APIException
from rest_framework.request import Request
from rest_framework.settings import api_settings

from core import ratelimit
from core.exceptions import DATABASE_UNAVAILABLE, database_unavailable_response, json_problem_response
from core.ratelimit import hit


def read_only_probe(view):
    """Probes answer GET and HEAD; anything else is a problem+json 405, not a CSRF page."""

    @csrf_exempt
    @wraps(view)
    def wrapper(request, *args, **kwargs):
        if request.method not in ("GET", "HEAD"):
            response = json_problem_response(
                request, 405, "method_not_allowed", f'Method "{request.method}" not allowed.'
            )
            response["Allow"] = "GET, HEAD"
            return response
        return view(request, *args, **kwargs)

    return wrapper


@read_only_probe
def healthz(request):
    """The process is up and answering."""
    return JsonResponse({"status": "ok"})


@read_only_probe
def readyz(request):
    """Whether this instance can serve: 200 while the database answers, 503 without it.

    The broker (Redis) is reported, not required: without it the API keeps serving (the rate limit
    fails open, deliveries wait in the database for the sweeper), so a Redis outage must not take
    every web instance out of a load balancer's rotation. `status` is `ok`, `degraded` (serving,
    a dependency is down: `checks` says which) or `unavailable` (503). `rateLimit` is this
    process's view of the rate limiter's Redis: `status`, how many `outages` it has seen and how
    many requests it let through uncounted (`uncountedRequests`) since it started."""
    checks = {}
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        checks["database"] = "ok"
    except Exception as error:  # noqa: BLE001 - any failure means not ready
        checks["database"] = f"unreachable: {error.__class__.__name__}"
    try:
        with current_app.connection_for_write() as broker:
            broker.ensure_connection(max_retries=1, interval_start=0, timeout=1)
        checks["broker"] = "ok"
    except Exception as error:  # noqa: BLE001 - reported, not fatal
        checks["broker"] = f"unreachable: {error.__class__.__name__}"
    limiter = ratelimit.health.report()
    if checks["database"] != "ok":
        status = "unavailable"
    elif checks["broker"] != "ok" or limiter["status"] != "ok":
        status = "degraded"
    else:
        status = "ok"
    body = {"status": status, "checks": checks, "rateLimit": limiter}
    return JsonResponse(body, status=503 if status == "unavailable" else 200)


def not_found(request, exception=None):
    """A path that matches nothing. A call that carries a valid credential still spends its
    rate-limit budget and gets the `RateLimit-*` headers (docs/api.md: every response), and is
    refused with a 429 once the budget is gone, as on the resource endpoints; a missing or bad
    credential changes nothing here, the answer is the 404."""
    allowed, state = _spend_rate_limit(request)
    if not allowed:
        response = json_problem_response(
            request, 429, "rate_limited", "Too many requests; retry after the time in Retry-After."
        )
        response["Retry-After"] = str(state.reset)
        return response
    return json_problem_response(request, 404, "not_found", "There is nothing at this path.")


@csrf_exempt
def api_not_found(request):
    """A path under /v1/ that matches no endpoint, routed here explicitly so that the answer is the
    JSON 404 whatever DEBUG is (with DEBUG on, Django would otherwise render its HTML debug page)."""
    return not_found(request)


def _authenticate(request):
    """The caller as the API's configured authentication (DEFAULT_AUTHENTICATION_CLASSES) sees it,
    or None; core names no authentication class of its own, the accounts app provides it."""
    drf_request = Request(request)
    for authentication_class in api_settings.DEFAULT_AUTHENTICATION_CLASSES:
        try:
            authenticated = authentication_class().authenticate(drf_request)
        except APIException:
            return None
        if authenticated is not None:
            return authenticated
    return None


def _spend_rate_limit(request):
    authenticated = _authenticate(request)
    if authenticated is None or getattr(authenticated[1], "rate_limit_key", None) is None:
        return True, None
    allowed, state = hit(authenticated[1].rate_limit_key)
    request.rate_limit = state  # written on the response by core.middleware.RequestIdMiddleware
    return allowed, state


def bad_request(request, exception=None):
    """Django's own 400s (raised before any view: a Host header not in ALLOWED_HOSTS, a body over
    DATA_UPLOAD_MAX_MEMORY_SIZE read by a middleware, too many form fields) as problem+json."""
    if isinstance(exception, RequestDataTooBig):
        return json_problem_response(request, 413, "payload_too_large", "The request body is too large.")
    if isinstance(exception, DisallowedHost):
        detail = "The Host header names a host this service does not answer for."
    else:
        detail = "The request could not be read."
    return json_problem_response(request, 400, "malformed_request", detail)


def permission_denied(request, exception=None):
    return json_problem_response(request, 403, "permission_denied", "You do not have permission to do this.")


def server_error(request):
    """Django's 500 handler. It runs while the exception is being handled: one that means the
    database cannot be reached is a 503 with Retry-After (the next request tries again)."""
    if isinstance(sys.exc_info()[1], DATABASE_UNAVAILABLE):
        return database_unavailable_response(request)
    return json_problem_response(request, 500, "server_error", "The server failed to handle this request.")
