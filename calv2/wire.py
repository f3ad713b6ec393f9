"""The v2 wire at the edge: every error under /v2/ in Cal.com's v2 envelope, and Cal.com's
rate-limit header names next to this service's.

Errors are not built twice. The one exception handler (`core.exceptions`) and the middleware and
URL-level handlers before it answer every failure as problem+json; for a /v2/ path this middleware
rewrites that body into Cal.com's shape, keeping the status and the headers (`WWW-Authenticate`,
`Retry-After`, `X-Request-Id`):

    {"status": "error", "timestamp": "…", "path": "/v2/bookings/x",
     "error": {"code": "NotFoundException", "message": "…", "details": {…}}}

`code` is the name of the NestJS exception Cal.com throws for that status; `details` carries what
the problem said (its `code`, and the field `errors` of a validation failure).
"""

from datetime import UTC, datetime

import orjson

from core.exceptions import PROBLEM_CONTENT_TYPE

PREFIX = "/v2/"

# The NestJS exception Cal.com's HttpExceptionFilter names for each status, and its reason phrase.
EXCEPTIONS = {
    400: ("BadRequestException", "Bad Request"),
    401: ("UnauthorizedException", "Unauthorized"),
    403: ("ForbiddenException", "Forbidden"),
    404: ("NotFoundException", "Not Found"),
    405: ("MethodNotAllowedException", "Method Not Allowed"),
    406: ("NotAcceptableException", "Not Acceptable"),
    409: ("ConflictException", "Conflict"),
    413: ("PayloadTooLargeException", "Payload Too Large"),
    414: ("UriTooLongException", "URI Too Long"),
    415: ("UnsupportedMediaTypeException", "Unsupported Media Type"),
    # Not one of Cal.com's answers: this service's Idempotency-Key reused for another request.
    422: ("UnprocessableEntityException", "Unprocessable Entity"),
    429: ("ThrottlerException", "Too Many Requests"),
    431: ("RequestHeaderFieldsTooLargeException", "Request Header Fields Too Large"),
    500: ("InternalServerErrorException", "Internal Server Error"),
    503: ("ServiceUnavailableException", "Service Unavailable"),
}

# Cal.com's throttler names its headers after the limit ("default"), first letter upper-cased.
RATE_LIMIT_HEADERS = {
    "RateLimit-Limit": "X-RateLimit-Limit-Default",
    "RateLimit-Remaining": "X-RateLimit-Remaining-Default",
    "RateLimit-Reset": "X-RateLimit-Reset-Default",
}


def timestamp() -> str:
    """JavaScript's `toISOString()`: UTC, milliseconds, `Z`."""
    now = datetime.now(UTC)
    return now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{now.microsecond // 1000:03d}Z"


def error_body(*, status: int, path: str, message: str, details: dict) -> dict:
    code, _ = EXCEPTIONS.get(status, (f"HttpException{status}", ""))
    return {
        "status": "error",
        "timestamp": timestamp(),
        "path": path,
        "error": {"code": code, "message": message, "details": details},
    }


def envelope_from_problem(problem: dict, *, status: int, path: str) -> dict:
    _, reason = EXCEPTIONS.get(status, ("", ""))
    message = problem.get("detail") or reason
    details = {"message": message, "error": reason, "statusCode": status, "code": problem.get("code")}
    if problem.get("errors"):
        details["errors"] = problem["errors"]
    return error_body(status=status, path=path, message=message, details=details)


class V2WireMiddleware:
    """Rewrites problem+json answers of /v2/ paths into the v2 error envelope and adds the
    `X-RateLimit-*-Default` headers. Listed first (outermost), so that it sees every answer the
    other middleware, the views and the URL-level handlers give, `RequestIdMiddleware`'s bodies
    for bodiless errors and its `RateLimit-*` headers included."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        if not request.path.startswith(PREFIX):
            return response
        for header, v2_header in RATE_LIMIT_HEADERS.items():
            if header in response:
                response[v2_header] = response[header]
        if response.get("Content-Type", "").startswith(PROBLEM_CONTENT_TYPE) and not response.streaming:
            if hasattr(response, "render") and not response.is_rendered:
                response.render()
            try:
                problem = orjson.loads(response.content)
            except orjson.JSONDecodeError:
                problem = {}
            body = envelope_from_problem(problem, status=response.status_code, path=request.get_full_path())
            response.content = orjson.dumps(body)
            response["Content-Type"] = "application/json"
            if response.has_header("Content-Length"):
                # CommonMiddleware, inside this one, measured the problem body: measure the new one.
                response["Content-Length"] = str(len(response.content))
        return response
