from functools import wraps

from django.db import connection
from django.http import JsonResponse
from django.views.decorators.csrf import csrf_exempt
from rest_framework.exceptions import APIException
from rest_framework.request import Request

from core.authentication import CredentialAuthentication
from core.exceptions import json_problem_response
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
    """The database and the broker are reachable, so requests and deliveries can be served."""
    checks = {}
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        checks["database"] = "ok"
    except Exception as error:  # noqa: BLE001 - any failure means not ready
        checks["database"] = f"unreachable: {error.__class__.__name__}"
    try:
        from config.celery import app

        with app.connection_for_write() as broker:
            broker.ensure_connection(max_retries=1, timeout=2)
        checks["broker"] = "ok"
    except Exception as error:  # noqa: BLE001
        checks["broker"] = f"unreachable: {error.__class__.__name__}"
    ready = all(value == "ok" for value in checks.values())
    return JsonResponse({"status": "ok" if ready else "unavailable", "checks": checks}, status=200 if ready else 503)


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


def _spend_rate_limit(request):
    try:
        authenticated = CredentialAuthentication().authenticate(Request(request))
    except APIException:
        authenticated = None
    if authenticated is None:
        return True, None
    allowed, state = hit(authenticated[1].rate_limit_key)
    request.rate_limit = state  # written on the response by core.middleware.RequestIdMiddleware
    return allowed, state


def server_error(request):
    return json_problem_response(request, 500, "server_error", "The server failed to handle this request.")
