import re
import uuid
from http import HTTPStatus

from django.conf import settings
from django.core.exceptions import RequestDataTooBig, TooManyFieldsSent
from django.http import JsonResponse

from core.exceptions import PROBLEM_CONTENT_TYPE, json_problem_response

_CLIENT_REQUEST_ID = re.compile(r"^[A-Za-z0-9._:\-]{1,128}$")

# Codes for the bodiless errors Django's own views and decorators answer with (`require_POST`'s
# 405, a bare `HttpResponseBadRequest`, ...), so that they are problem+json like every other error.
_BODILESS_ERROR_CODES = {
    400: "malformed_request",
    403: "permission_denied",
    404: "not_found",
    405: "method_not_allowed",
    413: "payload_too_large",
}


class RequestIdMiddleware:
    """Echo the client's X-Request-Id (when it is a sane token) or make one; put it on every response,
    also as `Calcom-Response-ID` (Cal.com v1's header).

    It also writes the `RateLimit-*` headers when the rate limit (core.ratelimit) counted the
    request: that way they are on every response of an authenticated call, errors included (not
    when the limiter's Redis is unavailable: the request was not counted, see docs/api.md). And an
    error response without a body gets the problem+json body every other error has.
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        supplied = request.headers.get("X-Request-Id", "")
        request.request_id = supplied if _CLIENT_REQUEST_ID.match(supplied) else uuid.uuid4().hex
        response = self.get_response(request)
        if response.status_code >= 400 and _is_bodiless(response):
            response = _with_problem_body(request, response)
        response["X-Request-Id"] = request.request_id
        # Cal.com v1's name for its per-response id; the same value, so either header finds the logs.
        response["Calcom-Response-ID"] = request.request_id
        rate_limit = getattr(request, "rate_limit", None)
        if rate_limit is not None:
            for name, value in rate_limit.headers().items():
                response[name] = value
        return response


# The OAuth endpoints that answer RFC 6749 error bodies (docs/oauth.md).
OAUTH_MACHINE_PATHS = frozenset(
    {"/api/auth/oauth/token", "/api/auth/oauth/refreshToken", "/api/auth/oauth/revoke", "/api/auth/oauth/introspect"}
)


class QueryStringGuardMiddleware:
    """Refuse a NUL character in any name or value of the query string, or of a form-encoded body
    (the OAuth endpoints, the sign-in page), for every path, with a 400 problem naming it.

    PostgreSQL cannot store or compare text containing NUL: such a value reaching a lookup or a
    write would fail in the database (a 500) instead of being refused as the bad input it is.
    Checked once here so that no view has to remember it; JSON bodies are checked by their parser
    (core.parsers). docs/api.md, "Input rules".
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        try:
            sources = [request.GET]
            if request.content_type == "application/x-www-form-urlencoded":
                try:
                    sources.append(request.POST)
                except RequestDataTooBig:
                    pass  # refused by whoever reads the body (a 413 on the API)
        except TooManyFieldsSent:
            detail = f"More than {settings.DATA_UPLOAD_MAX_NUMBER_FIELDS} parameters (DATA_UPLOAD_MAX_NUMBER_FIELDS)."
            return json_problem_response(request, 400, "malformed_request", detail)
        for source in sources:
            for name, values in source.lists():
                if "\x00" in name or any("\x00" in value for value in values):
                    field = name.replace("\x00", "\\u0000")
                    message = "Must not contain NUL characters."
                    if request.path in OAUTH_MACHINE_PATHS:
                        # OAuth clients read RFC 6749 error bodies there, not problem+json.
                        body = {"error": "invalid_request", "error_description": f"{field}: {message}"}
                        return JsonResponse(body, status=400, headers={"Cache-Control": "no-store"})
                    return json_problem_response(
                        request, 400, "validation_error", f"Invalid input. {field}: {message}", {field: [message]}
                    )
        return self.get_response(request)


def _is_bodiless(response) -> bool:
    return not response.streaming and not response.content and response.get("Content-Type") != PROBLEM_CONTENT_TYPE


def _with_problem_body(request, response):
    status = response.status_code
    code = _BODILESS_ERROR_CODES.get(status, "server_error" if status >= 500 else "malformed_request")
    if status == 405:
        detail = f'Method "{request.method}" not allowed.'
    else:
        try:
            detail = HTTPStatus(status).phrase + "."
        except ValueError:  # a status Python has no name for
            detail = "The request failed."
    problem = json_problem_response(request, status, code, detail)
    for name, value in response.items():
        if name.lower() not in ("content-type", "content-length"):
            problem[name] = value
    problem.cookies = response.cookies
    return problem
