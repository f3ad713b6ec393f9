import re
import uuid

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
