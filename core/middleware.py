import re
import uuid

from django.conf import settings
from django.core.exceptions import RequestDataTooBig, TooManyFieldsSent

from core.exceptions import json_problem_response

_CLIENT_REQUEST_ID = re.compile(r"^[A-Za-z0-9._:\-]{1,128}$")


class RequestIdMiddleware:
    """Echo the client's X-Request-Id (when it is a sane token) or make one; put it on every response.

    It also writes the `RateLimit-*` headers when the rate limit (core.ratelimit) counted the
    request: that way they are on every response of an authenticated call, errors included.
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        supplied = request.headers.get("X-Request-Id", "")
        request.request_id = supplied if _CLIENT_REQUEST_ID.match(supplied) else uuid.uuid4().hex
        response = self.get_response(request)
        response["X-Request-Id"] = request.request_id
        rate_limit = getattr(request, "rate_limit", None)
        if rate_limit is not None:
            for name, value in rate_limit.headers().items():
                response[name] = value
        return response


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
                    return json_problem_response(
                        request, 400, "validation_error", f"Invalid input. {field}: {message}", {field: [message]}
                    )
        return self.get_response(request)
